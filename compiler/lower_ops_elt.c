/* lower_ops_elt.c: the INT8 form of the elementwise and data-movement ops (docs/tpu.md
 * "Lowering rules"): Add/Sub/Mul (and Div by a constant)/Max/Min with per-operand rescale,
 * Concat to the output's scale, average pools and ReduceMean, Clip, and data movement on
 * quantized storage with the input's parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"
#include "compiler/lower_policy.h"
#include "compiler/lower_ops.h"
#include "ops/tpu_util.h"

/* An operand of an elementwise op as quantized storage: activations by ensure_int; a
 * constant is quantized symmetric i8 per tensor (scale max|c| / 127). */
ct_status elt_operand(ct_lower_ctx *c, ct_value *v, bool reciprocal, ct_value **out, ct_quant_param *p) {
  int64_t n = 0;
  float *f = ct_value_is_const(v) || (v->def && v->def->kind == CT_OP_DEQUANTIZELINEAR) ? ct_lower_const_f32(v, &n) : NULL;
  if (!f) {
    ct_status st = ct_lower_ensure_int(c, v, out);
    if (!st) st = ct_lower_param_of(c, *out, p);
    return st;
  }
  double amax = 0;
  for (int64_t i = 0; i < n; i++) {
    if (reciprocal) f[i] = 1.0f / f[i];
    amax = fmax(amax, fabs(f[i]));
  }
  *p = (ct_quant_param){amax > 0 && isfinite(amax) ? amax / 127 : 1, 0, CT_I8};
  int8_t *q = malloc((size_t)(n > 0 ? n : 1));
  if (q)
    for (int64_t i = 0; i < n; i++) q[i] = (int8_t)ct_quant_quantize(f[i], p->scale, 0, CT_I8);
  *out = q ? add_const(c, v->name, "q", CT_I8, v->ndim, v->shape, q, 1, &p->scale, &p->zp) : NULL;
  free(f), free(q);
  return *out ? CT_OK : oom(c);
}

/* The refusal of a cancelling Add / Sub (see lower_eltwise) whose operand v is an INT8 tensor
 * (v != NULL), or whose float fallback is BF16 (v == NULL): CT_ERR_INPUT naming the op, the
 * operand, the two steps and the remedy. */
static ct_status cancel_refused(ct_lower_ctx *c, const ct_op *op, const ct_value *v, double step, ct_quant_param py) {
  const char *loc = op->loc ? op->loc : "?";
  if (!v)
    return ct_diag_set(c->d, CT_ERR_INPUT,
                       "node \"%s\" (%s): its result (range %.3g) lies within one INT8 step (%.3g) of an operand, and "
                       "the BF16 float fallback cannot hold it either: lower with --float-fallback-f32 (or keep it and "
                       "its producers F32 with --quantize-table)",
                       loc, ct_op_name(op->kind), py.scale * 127, step);
  return ct_diag_set(c->d, CT_ERR_INPUT,
                     "node \"%s\" (%s): its result (range %.3g) lies within one INT8 step (%.3g) of its operand "
                     "\"%s\", an INT8 tensor: INT8 cannot hold what it computes; keep the ops producing its operands "
                     "in float (--quantize-table) or lower in BF16 / F16 / F32",
                     loc, ct_op_name(op->kind), py.scale * 127, step, v->name);
}

/* Add / Sub / Mul, and Div by a constant as Mul by its reciprocal: ELTWISE parameters. */
ct_status lower_eltwise(ct_lower_ctx *c, ct_op *op, bool *done) {
  bool div = op->kind == CT_OP_DIV;
  if (div && !ct_value_is_const(op->in[1])) return CT_OK;
  if (ct_value_is_const(op->in[0]) && ct_value_is_const(op->in[1])) return CT_OK;
  ct_quant_param pa, pb, py;
  ct_status st = ct_lower_param_of(c, op->out[0], &py);
  if (st) return st;
  ct_quant_elt_op eo = op->kind == CT_OP_ADD   ? CT_QUANT_ELT_ADD
                     : op->kind == CT_OP_SUB ? CT_QUANT_ELT_SUB
                     : op->kind == CT_OP_MAX ? CT_QUANT_ELT_MAX
                     : op->kind == CT_OP_MIN ? CT_QUANT_ELT_MIN
                                             : CT_QUANT_ELT_MUL;
  if (op->n_in != 2) return CT_OK;
  /* parameters first (nothing changes when they are not representable) */
  ct_value *a = op->in[0], *b = op->in[1], *aq, *bq;
  if ((st = elt_operand(c, a, false, &aq, &pa)) || (st = elt_operand(c, b, div, &bq, &pb))) return st;
  /* an Add / Sub whose whole result range is below one step of an operand (x − f32(f16(x)):
   * rounding errors) cancels what INT8 operands cannot hold: it stays float — unless an
   * operand is already INT8 (its producer lowered so), when float can only give 0 too */
  if ((eo == CT_QUANT_ELT_ADD || eo == CT_QUANT_ELT_SUB) && fmax(pa.scale, pb.scale) > CT_LOWER_ELT_CANCEL * py.scale) {
    double step = fmax(pa.scale, pb.scale);
    if (ct_lower_is_q(a) || ct_lower_is_q(b)) return cancel_refused(c, op, ct_lower_is_q(a) ? a : b, step, py);
    return c->ftype == CT_F32 ? CT_OK : cancel_refused(c, op, NULL, step, py);
  }
  ct_quant_elt p;
  if (!ct_quant_eltwise_params(eo, pa, pb, py, &p)) return CT_OK; /* stays float; the casts made die unused */
  int32_t m[2] = {p.m_a, p.m_b};
  int64_t mv[2] = {p.m_a, p.m_b}, sv[3] = {p.s_a, p.s_b, p.s_out};
  (void)m;
  if (div) op->kind = CT_OP_MUL;
  op->in[0] = aq, op->in[1] = bq;
  if (!ct_attr_set_rq_multiplier(c->g, op, 2, mv) || !ct_attr_set_rq_rshift(c->g, op, 3, sv)) return oom(c);
  st = ct_lower_set_q(c, op->out[0], py);
  *done = !st;
  return st;
}

/* True when Concat op should stay float: an input already lowered to float (a float branch
 * would be re-quantized at the output's scale), or inputs whose scales differ by more than
 * CT_LOWER_CONCAT_SPREAD (one int8 scale for, e.g., box regressions of ±8 and probabilities
 * of 0..1 leaves the probabilities a few steps: yolox-nano's head). */
static ct_status concat_float(ct_lower_ctx *c, const ct_op *op, bool *keep) {
  double lo = INFINITY, hi = 0;
  *keep = false;
  for (int i = 0; i < op->n_in; i++) {
    const ct_value *v = op->in[i];
    if (!v || ct_value_is_const(v)) continue;
    if (!ct_lower_is_q(v) && v->def && v->def->kind != CT_OP_INPUT) return *keep = true, CT_OK;
    ct_quant_param p;
    ct_status st = ct_lower_param_of(c, v, &p);
    if (st) return st;
    lo = fmin(lo, p.scale), hi = fmax(hi, p.scale);
  }
  *keep = hi > CT_LOWER_CONCAT_SPREAD * lo;
  return CT_OK;
}

/* Concat: every input rescaled to the output's parameters (REQUANT per input), unless it
 * stays float (concat_float). */
ct_status lower_concat(ct_lower_ctx *c, ct_op *op, bool *done) {
  ct_quant_param py, px;
  bool keep;
  ct_status st = concat_float(c, op, &keep);
  if (st || keep) return st;
  st = ct_lower_param_of(c, op->out[0], &py);
  int n = op->n_in;
  int32_t *m = malloc((size_t)n * sizeof *m);
  int *s = malloc((size_t)n * sizeof *s);
  ct_value **xs = calloc((size_t)n, sizeof *xs);
  if (!m || !s || !xs) st = st ? st : oom(c);
  bool ok = true;
  for (int i = 0; !st && ok && i < n; i++) {
    bool ident;
    if (ct_value_is_const(op->in[i])) ok = false;
    else if (!(st = ct_lower_ensure_int(c, op->in[i], &xs[i])) && !(st = ct_lower_param_of(c, xs[i], &px)))
      ok = ct_quant_rescale(px.scale, px.zp, py.scale, py.zp, &m[i], &s[i], &ident);
  }
  for (int i = 0; !st && ok && i < n; i++) op->in[i] = xs[i];
  if (!st && ok && !set_rq(c, op, n, m, s)) st = oom(c);
  if (!st && ok) st = ct_lower_set_q(c, op->out[0], py), *done = !st;
  free(m), free(s), free(xs);
  return st;
}

/* The integer form of an averaging op (pools, ReduceMean) over count elements per output:
 * input made integer, the pool multiplier/shift of s_x / (count·s_y) (quant/) as its requant
 * attributes, the output's parameters from the table. *done stays false when the parameters
 * are not representable (the op stays float). */
static ct_status lower_averaging(ct_lower_ctx *c, ct_op *op, int64_t count, bool *done) {
  ct_value *x = op->in[0], *y = op->out[0];
  ct_quant_param px, py;
  ct_value *xq;
  ct_status st = ct_lower_ensure_int(c, x, &xq);
  if (!st) st = ct_lower_param_of(c, xq, &px);
  if (!st) st = ct_lower_param_of(c, y, &py);
  int32_t m;
  int s;
  if (st || !ct_quant_pool_params(px.scale, py.scale, count, &m, &s)) return st;
  op->in[0] = xq;
  if (!set_rq(c, op, 1, &m, &s)) return oom(c);
  st = ct_lower_set_q(c, y, py);
  *done = !st;
  return st;
}

/* AveragePool (count fixed: no pads or pads counted, no ceil mode) and GlobalAveragePool. */
ct_status lower_avgpool(ct_lower_ctx *c, ct_op *op, bool *done) {
  const ct_value *x = op->in[0];
  if (x->ndim != 4) return CT_OK;
  int64_t count = x->shape[2] * x->shape[3];
  if (op->kind == CT_OP_AVERAGEPOOL) {
    int nk = 0, np = 0;
    int64_t k[CT_ATTR_LIST_MAX], pads[CT_ATTR_LIST_MAX];
    if (!ct_attr_window_kernel_shape_n(op, k, &nk) || !ct_attr_window_pads_n(op, pads, &np)) return CT_OK;
    bool padded = false;
    for (int i = 0; i < np; i++) padded = padded || pads[i];
    if (nk != 2 || ct_attr_pool_ceil_mode(op) || (padded && !ct_attr_pool_count_include_pad(op))) return CT_OK;
    count = k[0] * k[1];
  }
  return lower_averaging(c, op, count, done);
}

/* ReduceMean over contiguous constant axes: POOL/REDUCE parameters with count = the
 * reduced element count. */
ct_status lower_reducemean(ct_lower_ctx *c, ct_op *op, bool *done) {
  const ct_value *x = op->in[0];
  int64_t na = 0;
  float *ax = op->n_in > 1 && op->in[1] ? ct_lower_const_f32(op->in[1], &na) : NULL;
  if ((op->n_in > 1 && op->in[1] && !ax) || (!ax && ct_attr_reduce_noop_with_empty_axes(op))) return free(ax), CT_OK;
  bool red[CT_MAX_DIMS] = {false};
  for (int64_t i = 0; i < na; i++) {
    int64_t a = (int64_t)ax[i] < 0 ? (int64_t)ax[i] + x->ndim : (int64_t)ax[i];
    if (a >= 0 && a < x->ndim) red[a] = true;
  }
  free(ax);
  int64_t count = 1;
  int first = -1, last = -1;
  for (int k = 0; k < x->ndim; k++)
    if (red[k] || na == 0) count *= x->shape[k], last = k, first = first < 0 ? k : first;
  for (int k = first; k >= 0 && k <= last; k++)
    if (!red[k] && na) return CT_OK; /* several REDUCEs would round each time: stays float */
  return lower_averaging(c, op, count, done);
}

/* Clip(x, 0, hi) and Relu6 on a quantized input: REQUANT to the same parameters (m = 2^30,
 * s = 30) with the clamp act; other lower bounds stay float. */
ct_status lower_clip(ct_lower_ctx *c, ct_op *op, bool *done) {
  ct_value *x = op->in[0];
  int64_t n = 0;
  float *lo = op->n_in > 1 && op->in[1] ? ct_lower_const_f32(op->in[1], &n) : NULL;
  bool lo0 = lo && n == 1 && lo[0] == 0;
  free(lo);
  float *hi = op->n_in > 2 && op->in[2] ? ct_lower_const_f32(op->in[2], &n) : NULL;
  bool ok = hi && n == 1 && lo0 && ct_lower_is_q(x);
  double h = ok ? hi[0] : 0;
  free(hi);
  if (!ok) return CT_OK;
  ct_quant_param p = {x->scale[0], x->zero_point[0], x->dtype};
  int32_t m = 1 << 30;
  int s = 30;
  op->kind = CT_OP_REQUANT;
  op->n_in = 1;
  if (!set_rq(c, op, 1, &m, &s) || !ct_attr_set_rq_act(c->g, op, "clip") ||
      !ct_attr_set_rq_qact_hi(c->g, op, ct_quant_quantize(h, p.scale, p.zp, p.dt)))
    return oom(c);
  ct_status st = ct_lower_set_q(c, op->out[0], p);
  *done = !st;
  return st;
}

/* Is v the float module input with quantization parameters (a QDQ pair's or a calibration
 * row)? Quantizing it is the program input's border Cast: it costs nothing. */
static bool quantizable_input(const ct_lower_ctx *c, const ct_value *v) {
  if (ct_lower_is_q(v) || !ct_dtype_is_float(v->dtype) || !v->def || v->def->kind != CT_OP_INPUT) return false;
  return (v->id < c->n0 && c->has_forced[v->id]) || (c->o->calib && ct_calib_table_find(c->o->calib, v->name));
}

/* Data movement on quantized storage (input 0 already quantized, or the float module input,
 * quantized first: moved as float, its f32 words would need a conversion the back end's
 * moves and GMEM views do not make): results keep its parameters; a constant Pad pads with
 * the zero point. */
ct_status lower_move(ct_lower_ctx *c, ct_op *op, bool *done) {
  ct_value *x = op->in[0];
  if (quantizable_input(c, x)) {
    ct_status st = ct_lower_ensure_int(c, x, &x);
    if (st) return st;
  }
  if (!ct_lower_is_q(x)) return CT_OK;
  ct_tpu_lin lin;
  if (op->kind == CT_OP_RESIZE && strcmp(ct_attr_resize_mode(op), "nearest") &&
      !(ct_tpu_resize_lin(op, &lin) && x->n_scale == 1 && (x->dtype == CT_I8 || x->dtype == CT_U8)))
    return CT_OK; /* linear Resize on the zero point and scale of its 8-bit input (RESIZE) */
  if (op->kind == CT_OP_MAXPOOL && op->n_out > 1 && op->out[1]) return CT_OK;
  ct_quant_param p = {x->scale[0], x->zero_point[0], x->dtype};
  if (op->kind == CT_OP_PAD) {
    int64_t n = 0;
    float *cv = op->n_in > 2 && op->in[2] ? ct_lower_const_f32(op->in[2], &n) : NULL;
    bool zero = !cv || (n == 1 && cv[0] == 0);
    free(cv);
    if (strcmp(ct_attr_pad_mode(op), "constant") || !zero || (op->n_in > 2 && op->in[2] && !n)) return CT_OK;
    /* the real 0 is the zero point: given as the pad value (an absent value would pad with the
     * integer 0); an op without the value slot keeps the float form when zp != 0 */
    bool has_cv = op->n_in > 2 && op->in[2], need = has_cv || (p.zp != 0 && op->n_in > 2);
    if (!need && p.zp != 0) return CT_OK;
    uint8_t byte = (uint8_t)p.zp;
    ct_value *pv = need ? add_const(c, x->name, "pad_value", p.dt, 0, NULL, &byte, 0, NULL, NULL) : NULL;
    if (need && !pv) return oom(c);
    if (need) op->in[2] = pv;
  }
  op->in[0] = x;
  for (int k = 0; k < op->n_out; k++) {
    ct_status st = op->out[k] ? ct_lower_set_q(c, op->out[k], p) : CT_OK;
    if (st) return st;
  }
  *done = true;
  return CT_OK;
}
