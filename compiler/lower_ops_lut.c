/* lower_ops_lut.c: the INT8 form of the LUT activations (docs/tpu.md "Lowering rules"): one
 * 256-entry table (257 int16 entries for a 16-bit input) per tensor or per channel, absorbing a
 * chain of scalar affine ops that follows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"
#include "compiler/lower_policy.h"
#include "compiler/lower_ops.h"
#include "ops/tpu_util.h"

/* Folds u = v ∘ k (Mul, Div, Add, Sub with a finite constant scalar k ≠ 0 for Mul / Div,
 * v's shape kept) into sp's affine map; false when u is not such an op. */
static bool absorb_one(ct_lower_ctx *c, const ct_op *u, const ct_value *v, ct_quant_lut_spec *sp) {
  bool mul = u->kind == CT_OP_MUL, div = u->kind == CT_OP_DIV, add = u->kind == CT_OP_ADD, sub = u->kind == CT_OP_SUB;
  if (!(mul || div || add || sub) || u->n_in != 2 || u->n_out != 1 || ct_lower_op_mode(c, u) != CT_QMODE_INT8 ||
      u->out[0]->ndim != v->ndim || memcmp(u->out[0]->shape, v->shape, sizeof *v->shape * (size_t)(v->ndim > 0 ? v->ndim : 0)))
    return false;
  int kv = u->in[0] == v ? 0 : 1;
  int64_t n = 0;
  float *kf = u->in[1 - kv] != v ? ct_lower_const_f32(u->in[1 - kv], &n) : NULL;
  double k = kf && n == 1 ? kf[0] : NAN;
  free(kf);
  if (!isfinite(k) || ((mul || div) && k == 0) || (div && kv == 1)) return false;
  if (mul || div) sp->post_mul *= mul ? k : 1 / k, sp->post_add *= mul ? k : 1 / k;
  else if (add || kv == 0) sp->post_add += add ? k : -k; /* v + k, v − k */
  else sp->post_mul = -sp->post_mul, sp->post_add = k - sp->post_add; /* k − v */
  return true;
}

#define LUT_CHAIN_MAX 8

/* The chain op → u_1 → … → u_n (n ≤ LUT_CHAIN_MAX) of scalar affine ops that the LUT of op
 * can absorb, each the previous result's only use: u written to chain, sp updated; returns
 * n (0: none). One table instead of a requant per op: PP-LCNet's hardswish · w + b. */
static int absorb_affine(ct_lower_ctx *c, ct_op *op, ct_quant_lut_spec *sp, ct_op **chain) {
  int n = 0;
  ct_op *last = op, *u;
  while (n < LUT_CHAIN_MAX && (u = sole_reader(c->g, last->out[0])) && absorb_one(c, u, last->out[0], sp))
    chain[n++] = last = u;
  return n;
}

/* The absorbed ops (chain, n > 0) die; the uses of the last one's result read op's result,
 * which takes its name (dumps and module outputs keep the names the Top module has). */
static void take_result(ct_lower_ctx *c, ct_op *op, ct_op *const *chain, int n) {
  ct_value *y0 = op->out[0], *yl = chain[n - 1]->out[0];
  for (int i = 0; i < n; i++) ct_graph_erase_op(c->g, chain[i]);
  ct_graph_replace_uses(c->g, yl, y0);
  const char *nm = y0->name;
  y0->name = yl->name, yl->name = nm;
}

/* The LUT entries of sp from x (xq: per tensor, or per channel along axis 1) to y (py, or
 * per-channel scales sy with zero point 0): 256 bytes per table for an 8-bit input, 257
 * int16 (the 16-bit LUT) for an i16 one; one table, or one per channel (t holds C tables)
 * when either side is per channel. Returns the entry count, 0 when a table cannot be built
 * (ct_quant_lut_build's limits). */
static int64_t lut_tables(const ct_quant_lut_spec *sp, const ct_value *xq, ct_quant_param py, const double *sy,
                          int64_t *t) {
  bool pcx = xq->n_scale > 1, w16 = xq->dtype == CT_I16;
  int64_t C = pcx || sy ? xq->shape[1] : 1, E = ct_quant_lut_entries(xq->dtype);
  uint8_t b[256];
  int16_t h[CT_QUANT_LUT16_ENTRIES];
  for (int64_t ch = 0; ch < C; ch++) {
    ct_quant_param px = {xq->scale[pcx ? ch : 0], xq->zero_point[pcx ? ch : 0], xq->dtype};
    ct_quant_param pyc = sy ? (ct_quant_param){sy[ch], 0, py.dt} : py;
    if (w16 ? !ct_quant_lut16_make(sp, px, pyc, h) : !ct_quant_lut_make(sp, px, pyc, b)) return 0;
    for (int64_t j = 0; j < E; j++) t[ch * E + j] = w16 ? h[j] : b[j];
  }
  return E * C;
}

/* An activation as a LUT between the input's and the output's parameters (the 16-bit LUT
 * for an i16 input), with the scalar affine ops after it folded in (absorb_affine); one
 * table per channel when its input or its result is a per-channel activation. */
ct_status lower_lut(ct_lower_ctx *c, ct_op *op, const ct_quant_lut_spec *sp0, bool *done) {
  ct_quant_param py;
  ct_value *xq;
  ct_quant_lut_spec spec = *sp0, *sp = &spec;
  ct_op *chain[LUT_CHAIN_MAX];
  int n = absorb_affine(c, op, sp, chain);
  ct_value *y = n ? chain[n - 1]->out[0] : op->out[0];
  ct_status st = ct_lower_ensure_int(c, op->in[0], &xq);
  if (!st) st = ct_lower_param_of(c, y, &py);
  if (st) return st;
  int64_t C = xq->ndim == 4 ? xq->shape[1] : 1, nt = 0;
  double *sy = n == 0 && xq->ndim == 4 ? channel_scales(c, y, C, &py) : NULL;
  int64_t *t = malloc(sizeof *t * (size_t)(CT_QUANT_LUT16_ENTRIES * C));
  if (!t) st = oom(c);
  if (!st && !(nt = lut_tables(sp, xq, py, sy, t)) && sy) free(sy), sy = NULL, nt = lut_tables(sp, xq, py, NULL, t);
  if (!st && !nt && xq->n_scale > 1)
    st = ct_diag_set(c->d, CT_ERR_INTERNAL, "lower: no LUT for \"%s\" from its per-channel input", op->loc ? op->loc : "?");
  if (!st && nt) {
    if (n) take_result(c, op, chain, n);
    op->in[0] = xq;
    while (op->n_attr > 0) ct_op_del_attr(op, op->attrs[0].name);
    op->kind = CT_OP_LUT;
    if (!ct_attr_set_lut_table(c->g, op, (int)nt, t) || !ct_attr_set_lut_fn(c->g, op, ct_quant_lut_name(sp->fn))) st = oom(c);
    if (!st) st = set_out_q(c, op->out[0], sy, C, py);
    *done = !st;
  }
  free(sy), free(t);
  return st;
}
