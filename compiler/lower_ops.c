/* lower_ops.c: the INT8 form of each Top op (docs/tpu.md "Lowering rules"), dispatched by op
 * kind to the family files — lower_ops_mac.c (Conv, Gemm, MatMul, ConvTranspose: per-channel
 * i8 weights, int32 bias, per-channel requant), lower_ops_elt.c (Add/Sub/Mul/Div by a
 * constant/Max/Min with per-operand rescale, Concat to the output's scale, average pools,
 * ReduceMean, Clip, data movement on quantized storage), lower_ops_lut.c (LUT activations) —
 * and the helpers they share. All parameters come from quant/ (quant_params.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"
#include "compiler/lower_policy.h"
#include "compiler/lower_ops.h"
#include "ops/tpu_util.h"

ct_status oom(ct_lower_ctx *c) { return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory"); }

/* Adds a constant of dtype dt and shape (ndim, shape) taking data (copied), quant params
 * (n scales along axis; n 0 = none). */
ct_value *add_const(ct_lower_ctx *c, const char *base, const char *suffix, ct_dtype dt, int ndim,
                    const int64_t *shape, const void *data, int n, const double *scale, const int32_t *zp) {
  char name[512];
  snprintf(name, sizeof name, "%s_%s", base, suffix);
  if (ct_graph_find_value(c->g, name)) /* a constant shared by several ops: one copy each */
    snprintf(name + strlen(name), sizeof name - strlen(name), "_%d", c->g->n_values);
  ct_tensor *t = ct_tensor_new(dt, ndim, shape, name);
  if (!t) return NULL;
  memcpy(t->data, data, t->nbytes);
  if (n > 0 && !ct_tensor_set_quant(t, n, 0, scale, zp)) return ct_tensor_free(t), NULL;
  ct_value *v = ct_graph_add_weight(c->g, name, t);
  if (v && n > 0 && !ct_value_set_quant(c->g, v, n, scale, zp, 0)) return NULL;
  return v;
}

/* Fused activation of a Conv/Gemm in the output's integer domain: none, relu, or clip
 * [0, act_max] (relu6). False when the activation has no integer form (leaky, clip with a
 * lower bound ≠ 0). A per-channel output (per_channel) clips at the storage maximum: its
 * channel thresholds are at most the tensor's, which is at most act_max. */
bool mac_act(ct_lower_ctx *c, ct_op *op, ct_quant_param py, bool apply, bool per_channel) {
  const char *a = ct_attr_act_act(op);
  double lo = ct_attr_act_act_min(op), hi = !strcmp(a, "relu6") ? 6.0 : ct_attr_act_act_max(op);
  bool clip = !strcmp(a, "relu6") || !strcmp(a, "clip");
  if (strcmp(a, "none") && strcmp(a, "relu") && !(clip && lo == 0)) return false;
  if (apply && clip) {
    ct_attr_set_act_act(c->g, op, "clip");
    ct_attr_set_act_qact_hi(c->g, op, per_channel ? ct_quant_max(py.dt) : ct_quant_quantize(hi, py.scale, py.zp, py.dt));
  }
  return true;
}

bool set_rq(ct_lower_ctx *c, ct_op *op, int64_t n, const int32_t *m, const int *s) {
  int64_t *mv = malloc((size_t)n * sizeof *mv), *sv = malloc((size_t)n * sizeof *sv);
  bool ok = mv && sv;
  for (int64_t i = 0; ok && i < n; i++) mv[i] = m[i], sv[i] = s[i];
  ok = ok && ct_attr_set_rq_multiplier(c->g, op, (int)n, mv) && ct_attr_set_rq_rshift(c->g, op, (int)n, sv);
  free(mv), free(sv);
  return ok;
}

/* Can op (a Conv or Gemm) take the INT8 form: canonical Gemm, constant (or QDQ) weights and
 * bias, an activation with an integer form? */
bool mac_int8_ok(ct_lower_ctx *c, ct_op *op) {
  ct_value *w = op->in[1], *b = op->n_in > 2 ? op->in[2] : NULL;
  if (op->kind == CT_OP_GEMM && (ct_attr_gemm_transA(op) || ct_attr_gemm_alpha(op) != 1 || ct_attr_gemm_beta(op) != 1 ||
                                 w->ndim != 2 || !ct_attr_gemm_transB(op)))
    return false;
  if (!ct_value_is_const(w) && !(w->def && w->def->kind == CT_OP_DEQUANTIZELINEAR)) return false;
  if (b && !ct_value_is_const(b) && !(b->def && b->def->kind == CT_OP_DEQUANTIZELINEAR)) return false;
  return mac_act(c, op, (ct_quant_param){1, 0, CT_I8}, false, false);
}

/* Per-channel scales of y, op's result of oc channels (docs/quant.md "Per-channel
 * activations"), or NULL for per-tensor py: y is a channel activation (ct_lower_channel_act), the
 * table has its #channel_threshold row, activations are symmetric and every reader is lowered
 * to INT8 in a form that takes it per channel (a depthwise Conv, a LUT). Each channel
 * threshold is capped by py's. */
double *channel_scales(ct_lower_ctx *c, ct_value *y, int64_t oc, ct_quant_param *pyp) {
  const ct_calib_wrow *r = c->o->calib ? ct_calib_table_find_channel(c->o->calib, y->name) : NULL;
  ct_quant_param py = *pyp;
  if (r && c->o->asymmetric && py.zp != 0 && !(y->id < c->n0 && c->has_forced[y->id]) && ct_lower_param_sym(c, y, &py))
    return NULL;
  if (!r || r->n != oc || py.zp != 0 || (py.dt != CT_I8 && py.dt != CT_U8 && py.dt != CT_I16) ||
      (y->id < c->n0 && c->has_forced[y->id]) || !ct_lower_channel_act(c->g, y))
    return NULL;
  ct_quant_lut_spec sp;
  for (int i = 0; i < c->g->n_ops; i++) {
    ct_op *u = c->g->ops[i];
    for (int k = 0; !u->dead && k < u->n_in; k++)
      if (u->in[k] == y && (ct_lower_op_mode(c, u) != CT_QMODE_INT8 || (u->kind == CT_OP_CONV ? !mac_int8_ok(c, u) : !ct_lower_lut_spec(u, &sp))))
        return NULL;
  }
  double th = py.scale * ct_quant_max(py.dt), *th_c = malloc(sizeof *th_c * (size_t)oc),
         *sy = malloc(sizeof *sy * (size_t)oc);
  for (int64_t o = 0; th_c && sy && o < oc; o++) th_c[o] = fmin(r->scale[o], th);
  if (th_c && sy) ct_quant_channel_scales(th_c, oc, th, py.dt, sy);
  free(th_c);
  if (!th_c) free(sy), sy = NULL;
  if (sy) *pyp = py;
  return sy;
}

/* Retypes y as quantized storage: per channel along axis 1 (sy, oc scales, zero points 0)
 * or per tensor. */
ct_status set_out_q(ct_lower_ctx *c, ct_value *y, const double *sy, int64_t oc, ct_quant_param py) {
  if (!sy) return ct_lower_set_q(c, y, py);
  int32_t *zp = calloc((size_t)oc, sizeof *zp);
  ct_value_set_type(y, py.dt, y->ndim, y->shape);
  bool ok = zp && ct_value_set_quant(c->g, y, (int)oc, sy, zp, 1);
  free(zp);
  return ok ? CT_OK : oom(c);
}

/* The op reading v, when v's only use is one input of one live op (not a module output). */
ct_op *sole_reader(const ct_graph *g, const ct_value *v) {
  if (ct_graph_count_uses(g, v) != 1) return NULL;
  for (int i = 0; i < g->n_ops; i++)
    for (int k = 0; !g->ops[i]->dead && k < g->ops[i]->n_in; k++)
      if (g->ops[i]->in[k] == v) return g->ops[i];
  return NULL;
}

ct_status ct_lower_op_int8(ct_lower_ctx *c, ct_op *op, bool *done) {
  *done = false;
  ct_quant_lut_spec sp;
  switch (op->kind) {
  case CT_OP_CONV:
  case CT_OP_GEMM: return lower_mac(c, op, done);
  case CT_OP_MATMUL: return lower_matmul(c, op, done);
  case CT_OP_CONVTRANSPOSE: return lower_convt(c, op, done);
  case CT_OP_CLIP: return lower_clip(c, op, done);
  case CT_OP_ADD:
  case CT_OP_SUB:
  case CT_OP_MUL:
  case CT_OP_DIV:
  case CT_OP_MAX:
  case CT_OP_MIN: return lower_eltwise(c, op, done);
  case CT_OP_REDUCEMEAN: return lower_reducemean(c, op, done);
  case CT_OP_CONCAT: return lower_concat(c, op, done);
  case CT_OP_AVERAGEPOOL:
  case CT_OP_GLOBALAVERAGEPOOL: return lower_avgpool(c, op, done);
  case CT_OP_RESHAPE: case CT_OP_FLATTEN: case CT_OP_SQUEEZE: case CT_OP_UNSQUEEZE: case CT_OP_TRANSPOSE:
  case CT_OP_SLICE: case CT_OP_SPLIT: case CT_OP_PAD: case CT_OP_MAXPOOL: case CT_OP_GLOBALMAXPOOL:
  case CT_OP_RESIZE: case CT_OP_DEPTHTOSPACE: case CT_OP_SPACETODEPTH: return lower_move(c, op, done);
  case CT_OP_GREATER: case CT_OP_GREATEROREQUAL: case CT_OP_LESS: case CT_OP_LESSOREQUAL: return ct_lower_compare_int8(c, op, done);
  case CT_OP_CAST: return ct_lower_cast_int8(c, op, done);
  default: return ct_lower_lut_spec(op, &sp) ? lower_lut(c, op, &sp, done) : CT_OK;
  }
}
