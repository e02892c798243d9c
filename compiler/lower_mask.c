/* lower_mask.c: the INT8 form of masks and Casts (docs/tpu.md "Borders"): a comparison with
 * a constant scalar whose result is only cast to float becomes a Lut to u8 0 / 1 at scale 1,
 * and a Cast to float of quantized storage keeps that storage (same real values). */
#include <math.h>
#include <stdlib.h>

#include "compiler/lower_int.h"

/* The LUT function of a comparison (Greater, GreaterOrEqual, Less, LessOrEqual) of an
 * activation with a constant scalar k, mirrored when k comes first (k > x is x < k);
 * *xi the activation's operand. False for other ops. */
static bool compare_spec(const ct_op *op, int *xi, ct_quant_lut_spec *sp) {
  ct_quant_lut_fn f, mirror;
  switch (op->kind) {
  case CT_OP_GREATER: f = CT_QUANT_LUT_GREATER, mirror = CT_QUANT_LUT_LESS; break;
  case CT_OP_GREATEROREQUAL: f = CT_QUANT_LUT_GREATEREQ, mirror = CT_QUANT_LUT_LESSEQ; break;
  case CT_OP_LESS: f = CT_QUANT_LUT_LESS, mirror = CT_QUANT_LUT_GREATER; break;
  case CT_OP_LESSOREQUAL: f = CT_QUANT_LUT_LESSEQ, mirror = CT_QUANT_LUT_GREATEREQ; break;
  default: return false;
  }
  if (op->n_in != 2 || !op->in[0] || !op->in[1] || ct_value_is_const(op->in[0]) == ct_value_is_const(op->in[1])) return false;
  *xi = ct_value_is_const(op->in[0]) ? 1 : 0;
  int64_t n = 0;
  float *k = ct_lower_const_f32(op->in[1 - *xi], &n);
  bool ok = k && n == 1 && !isnan(k[0]);
  if (ok) *sp = ct_quant_lut_default(*xi == 0 ? f : mirror), sp->alpha = k[0];
  free(k);
  return ok && op->out[0]->ndim == op->in[*xi]->ndim;
}

bool ct_lower_read_as_float(const ct_graph *g, const ct_value *v) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return false;
  int n = 0;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *u = g->ops[i];
    for (int k = 0; !u->dead && k < u->n_in; k++) {
      if (u->in[k] != v) continue;
      ct_dtype dt;
      if (u->kind != CT_OP_CAST || !ct_dtype_from_onnx((int)ct_attr_cast_to(u), &dt) || !ct_dtype_is_float(dt)) return false;
      n++;
    }
  }
  return n > 0;
}

/* A comparison with a constant scalar whose result is only cast to float (a mask:
 * Cast(Greater(x, k)) · x): a LUT from x's storage to u8 0 / 1 at scale 1, the Casts
 * keeping that storage (ct_lower_cast_int8). Left float when x has no parameters. */
ct_status ct_lower_compare_int8(ct_lower_ctx *c, ct_op *op, bool *done) {
  int xi;
  ct_quant_lut_spec sp;
  if (!compare_spec(op, &xi, &sp) || !ct_lower_read_as_float(c->g, op->out[0])) return CT_OK;
  ct_value *x = op->in[xi], *xq;
  bool params = ct_lower_is_q(x) || (x->id < c->n0 && c->has_forced[x->id]) ||
                (c->o->calib && ct_calib_table_find(c->o->calib, x->name));
  if (!params) return CT_OK;
  ct_status st = ct_lower_ensure_int(c, x, &xq);
  if (st || xq->n_scale != 1 || (xq->dtype != CT_I8 && xq->dtype != CT_U8)) return st;
  ct_quant_param px = {xq->scale[0], xq->zero_point[0], xq->dtype}, py = {1.0, 0, CT_U8};
  uint8_t tb[256];
  int64_t t[256];
  if (!ct_quant_lut_make(&sp, px, py, tb)) return CT_OK;
  for (int i = 0; i < 256; i++) t[i] = tb[i];
  op->kind = CT_OP_LUT, op->in[0] = xq, op->n_in = 1;
  while (op->n_attr > 0) ct_op_del_attr(op, op->attrs[0].name);
  if (!ct_attr_set_lut_table(c->g, op, 256, t) || !ct_attr_set_lut_fn(c->g, op, ct_quant_lut_name(sp.fn))) return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory");
  st = ct_lower_set_q(c, op->out[0], py);
  *done = !st;
  return st;
}

/* A Cast to a float type of quantized storage (per tensor): the real values are the
 * storage's, so its readers read the storage (the Cast dies; a module output keeps its
 * name). */
ct_status ct_lower_cast_int8(ct_lower_ctx *c, ct_op *op, bool *done) {
  ct_value *x = op->in[0], *y = op->out[0];
  ct_dtype dt;
  if (!ct_lower_is_q(x) || x->n_scale != 1 || !ct_dtype_from_onnx((int)ct_attr_cast_to(op), &dt) || !ct_dtype_is_float(dt))
    return CT_OK;
  for (int k = 0; k < c->g->n_outputs; k++)
    if (c->g->outputs[k] == y) {
      const char *nm = x->name;
      x->name = y->name, y->name = nm;
    }
  ct_graph_replace_uses(c->g, y, x);
  ct_graph_erase_op(c->g, op);
  *done = true;
  return CT_OK;
}
