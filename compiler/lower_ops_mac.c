/* lower_ops_mac.c: the INT8 form of the MAC ops (docs/tpu.md "Lowering rules"): Conv and Gemm
 * with per-channel i8 weights, int32 bias and per-channel requant, ConvTranspose, MatMul of two
 * activations. Parameters from quant/ (quant_params.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"
#include "compiler/lower_policy.h"
#include "compiler/lower_ops.h"
#include "ops/tpu_util.h"

/* Per-channel i8 weights of a MAC op along axis 0 of w (oc channels of per_oc elements): the
 * QDQ model's own integers when w is DequantizeLinear(int constant), else quantized from the
 * floats. scale gets oc entries. NULL on failure (not a constant). */
static ct_value *mac_weight(ct_lower_ctx *c, ct_value *w, int64_t oc, double *scale, ct_value *b, const double *s_in,
                            int64_t n_in, const ct_calib_wrow *wrow, const double *fold) {
  const ct_op *dq = w->def;
  int64_t per_oc = ct_value_numel(w) / oc, n = 0;
  if (!fold && !w->data && dq && dq->kind == CT_OP_DEQUANTIZELINEAR && ct_value_is_const(dq->in[0]) && ct_value_is_const(dq->in[1]) &&
      (dq->in[0]->dtype == CT_I8 || dq->in[0]->dtype == CT_U8)) {
    const ct_tensor *s = dq->in[1]->data, *z = dq->n_in > 2 && dq->in[2] ? dq->in[2]->data : NULL;
    int64_t ns = ct_tensor_numel(s);
    int32_t *zp = malloc((size_t)oc * sizeof *zp);
    if (!zp || (ns != 1 && ns != oc) || (ns == oc && ct_attr_qdq_axis(dq) != 0)) return free(zp), NULL;
    /* CONV/MATMUL have no weight zero point: q − zp is stored as i8 when it fits (exact;
     * torch's u8 weights with zp 128 do), else the floats are re-quantized below */
    const ct_tensor *qt = dq->in[0]->data;
    int8_t *qi = malloc((size_t)(per_oc * oc > 0 ? per_oc * oc : 1));
    bool fits = qi != NULL;
    for (int64_t o = 0; o < oc; o++) {
      scale[o] = ct_tensor_get_f64(s, ns == 1 ? 0 : o);
      zp[o] = z ? (int32_t)ct_tensor_get_f64(z, ns == 1 ? 0 : o) : 0;
      fits = fits && scale[o] > 0;
      for (int64_t i = 0; fits && i < per_oc; i++) {
        int64_t v = (int64_t)ct_tensor_get_f64(qt, o * per_oc + i) - zp[o];
        fits = v >= -128 && v <= 127;
        if (fits) qi[o * per_oc + i] = (int8_t)v;
      }
    }
    ct_value *v = NULL;
    if (fits) memset(zp, 0, (size_t)oc * sizeof *zp);
    bool ok = qi && scale[0] > 0;
    for (int64_t o = 0; o < oc; o++) ok = ok && scale[o] > 0;
    /* otherwise, with keep_weight_zp, the integers and zero points as they are (the Tpu
     * kernels subtract zp_w; docs/tpu.md: an ISA gap, so such a module does not deploy);
     * by default the exact values s·(q − zp) are re-quantized per channel below */
    ok = ok && (fits || c->o->keep_weight_zp);
    if (ok) v = fits ? add_const(c, w->name, "q", CT_I8, w->ndim, w->shape, qi, (int)oc, scale, zp)
                     : add_const(c, w->name, "q", qt->dtype, w->ndim, w->shape, qt->data, (int)oc, scale, zp);
    free(zp), free(qi);
    if (ok) return v;
  }
  float *f = ct_lower_const_f32(w, &n);
  int8_t *q = f ? malloc((size_t)(n > 0 ? n : 1)) : NULL;
  int32_t *zp = q ? calloc((size_t)oc, sizeof *zp) : NULL;
  ct_value *v = NULL;
  int64_t nb = 0;
  float *bf = zp && b ? ct_lower_const_f32(b, &nb) : NULL;
  if (zp && fold) { /* w [OC, C, kh, kw]: input channel ch's scale folded in (ct_lower_channel_act) */
    int64_t k = w->shape[2] * w->shape[3];
    for (int64_t i = 0; i < n; i++) f[i] = (float)((double)f[i] * fold[(i % per_oc) / k]);
    wrow = NULL;
  }
  if (zp) {
    if (wrow) memcpy(scale, wrow->scale, sizeof *scale * (size_t)oc); /* the table's #weight_scale row */
    else ct_quant_weight_scales(f, oc, per_oc, scale);
    /* a channel of tiny weights with a large bias: the int32 bias b / (s_in·s_w) must stay
     * below 2^30 (headroom for the products), so s_w gets that floor */
    for (int64_t o = 0; bf && nb == oc && o < oc; o++)
      scale[o] = fmax(scale[o], fabs(bf[o]) / (s_in[n_in == 1 ? 0 : o] * 1073741823.0));
    ct_quant_weight_quantize(f, oc, per_oc, scale, q);
    v = add_const(c, w->name, "q", CT_I8, w->ndim, w->shape, q, (int)oc, scale, zp);
  }
  free(f), free(q), free(zp), free(bf);
  return v;
}

/* int32 bias [oc] at s_in·s_w[o] from a constant float bias (NULL b: zeros); s_in per tensor
 * (n_in 1) or per channel (n_in oc). */
static ct_value *mac_bias(ct_lower_ctx *c, const char *base, ct_value *b, int64_t oc, const double *s_w,
                          const double *s_in, int64_t n_in) {
  int64_t n = 0;
  float *f = b ? ct_lower_const_f32(b, &n) : calloc((size_t)oc, sizeof *f);
  int32_t *bq = f && (!b || n == oc) ? malloc((size_t)oc * sizeof *bq) : NULL;
  ct_value *v = NULL;
  if (bq) {
    ct_quant_bias_channels_pc(f, oc, s_w, s_in, n_in, bq);
    v = add_const(c, base, "bias_q", CT_I32, 1, &oc, bq, 0, NULL, NULL);
  }
  free(f), free(bq);
  return v;
}

/* The calibration table's #weight_scale row of op ("<op name>_weight"), NULL when absent;
 * CT_ERR_INPUT when it does not fit: a channel count other than oc, or a zero point ≠ 0
 * (CONV / MATMUL have no weight zero point). */
static ct_status weight_row(ct_lower_ctx *c, const ct_op *op, int64_t oc, const ct_calib_wrow **out) {
  *out = NULL;
  if (!c->o->calib || !op->loc) return CT_OK;
  char name[1024];
  snprintf(name, sizeof name, "%s_weight", op->loc);
  const ct_calib_wrow *r = ct_calib_table_find_weight(c->o->calib, name);
  if (!r) return CT_OK;
  if (r->n != oc)
    return ct_diag_set(c->d, CT_ERR_INPUT, "calibration table: line %d: weight row \"%s\" has %lld scales, the op has %lld output channels",
                       r->line, name, (long long)r->n, (long long)oc);
  for (int64_t i = 0; r->zp && i < r->n; i++)
    if (r->zp[i])
      return ct_diag_set(c->d, CT_ERR_INPUT, "calibration table: line %d: weight row \"%s\": zero point %d (weights are symmetric)",
                         r->line, name, (int)r->zp[i]);
  *out = r;
  return CT_OK;
}

/* Input scales of a MAC op: x's one scale, or its per-channel scales when op is the
 * depthwise reader of a channel activation (n_in = C), or 1 with the channel scales in
 * *fold when op is an ordinary Conv reading one (the weights take them: W[o, c]·s_c).
 * CT_ERR_INTERNAL for a per-channel x that another kind of op reads (ct_lower_channel_act
 * rules that out). */
static ct_status mac_in_scales(ct_lower_ctx *c, const ct_op *op, const ct_value *xq, const double **s_in,
                               int64_t *n_in, const double **fold) {
  static const double one = 1.0;
  *s_in = xq->scale, *n_in = 1, *fold = NULL;
  if (xq->n_scale <= 1) return CT_OK;
  if (xq->quant_axis == 1 && xq->n_scale == xq->shape[1] && ct_lower_folds_channels(op, op->in[0])) {
    *s_in = &one, *fold = xq->scale;
    return CT_OK;
  }
  if (op->kind != CT_OP_CONV || xq->quant_axis != 1 || ct_attr_conv_group(op) != xq->n_scale ||
      op->out[0]->shape[1] != xq->n_scale)
    return ct_diag_set(c->d, CT_ERR_INTERNAL, "lower: op \"%s\" reads the per-channel activation \"%s\" but is not its depthwise Conv",
                       op->loc ? op->loc : "?", xq->name);
  *n_in = xq->n_scale;
  return CT_OK;
}

/* Requant pairs of a MAC op into m, s: per channel of y (sy, oc scales) when sy is given,
 * else per tensor (py). False when a multiplier is out of range. */
static bool mac_requant(const double *s_in, int64_t n_in, const double *sw, int64_t oc, const double *sy,
                        ct_quant_param py, int32_t *rq, int32_t *m, int *s) {
  if (!ct_quant_mac_requant_pc(s_in, n_in, sw, oc, sy ? sy : &py.scale, sy ? oc : 1, rq)) return false;
  for (int64_t o = 0; o < oc; o++) m[o] = rq[2 * o], s[o] = rq[2 * o + 1];
  return true;
}

/* A Gemm whose result only leaves the module, without a fused activation and not a QDQ
 * model's tensor, keeps its int32 accumulator: y i32 at scale s_in·s_w[o] per column, no
 * requant (MATMUL rq_mode none) — logits without an 8-bit rounding (ties decide top-1). */
static ct_status gemm_raw_out(ct_lower_ctx *c, ct_op *op, ct_value *y, double s_in, const double *sw, int64_t oc,
                              bool *raw) {
  *raw = false;
  if (op->kind != CT_OP_GEMM || y->ndim != 2 || strcmp(ct_attr_act_act(op), "none") ||
      (y->id < c->n0 && c->has_forced[y->id]) || !ct_lower_only_output(c->g, y))
    return CT_OK;
  double *sy = malloc(sizeof *sy * (size_t)oc);
  int32_t *zp = calloc((size_t)oc, sizeof *zp);
  for (int64_t o = 0; sy && o < oc; o++) sy[o] = s_in * sw[o];
  ct_value_set_type(y, CT_I32, y->ndim, y->shape);
  bool ok = sy && zp && ct_value_set_quant(c->g, y, (int)oc, sy, zp, 1);
  free(sy), free(zp);
  *raw = ok;
  return ok ? CT_OK : oom(c);
}

/* Is v read only by a LUT activation (its input 0) that lowers to INT8? Such a Conv result
 * may be i16 for the 16-bit LUT (ct_lower_lut16_param). */
static bool lut_input(ct_lower_ctx *c, const ct_value *v) {
  const ct_op *u = sole_reader(c->g, v);
  ct_quant_lut_spec sp;
  return u && u->n_in == 1 && u->in[0] == v && ct_lower_op_mode(c, u) == CT_QMODE_INT8 && ct_lower_lut_spec(u, &sp);
}

/* The error when op, the Conv reading the per-channel activation x, has no INT8 form: the
 * multipliers its calibrated scales give are out of range (a channel scale is at least the
 * tensor's threshold / CT_QUANT_CHANNEL_FLOOR, so an extreme per-tensor threshold of x does
 * it), and x cannot be read by a float op either. The calibration table's row is to blame. */
static ct_status channel_reader_fails(ct_lower_ctx *c, const ct_op *op, const ct_value *x) {
  const ct_calib_row *r = c->o->calib ? ct_calib_table_find(c->o->calib, x->name) : NULL;
  const ct_calib_wrow *ch = c->o->calib ? ct_calib_table_find_channel(c->o->calib, x->name) : NULL;
  if (!r || !ch)
    return ct_diag_set(c->d, CT_ERR_INTERNAL, "lower: Conv \"%s\" of a per-channel activation has no INT8 form",
                       op->loc ? op->loc : "?");
  return ct_diag_set(c->d, CT_ERR_INPUT,
                     "calibration table line %d: tensor \"%s\": threshold %g with the channel thresholds of line %d gives "
                     "Conv \"%s\", which reads its per-channel form, no representable INT8 requant",
                     r->line, x->name, r->threshold, ch->line, op->loc ? op->loc : "?");
}

/* Conv and Gemm: x quantized, per-channel weights, int32 bias, requant per channel; the
 * result per channel when channel_scales allows it, the raw accumulator for a Gemm result
 * that only leaves the module (gemm_raw_out). */
ct_status lower_mac(ct_lower_ctx *c, ct_op *op, bool *done) {
  ct_value *x = op->in[0], *w = op->in[1], *b = op->n_in > 2 ? op->in[2] : NULL, *y = op->out[0];
  bool gemm = op->kind == CT_OP_GEMM;
  if (!mac_int8_ok(c, op)) return CT_OK;
  ct_quant_param py;
  ct_value *xq = NULL, *bq = NULL;
  const double *s_in = NULL, *fold = NULL;
  int64_t n_in = 1;
  ct_status st0 = ct_lower_ensure_int(c, x, &xq); /* an unused Cast dies when the op stays float */
  if (!st0) st0 = mac_in_scales(c, op, xq, &s_in, &n_in, &fold);
  bool y16 = !gemm && lut_input(c, y) && ct_lower_lut16_param(c, y, &py);
  if (!st0 && !y16) st0 = ct_lower_param_of(c, y, &py);
  if (st0) return st0;
  int64_t oc = w->shape[0]; /* Conv [OC, C/g, kh, kw]; Gemm B [N, K] (transB) */
  const ct_calib_wrow *wrow;
  if ((st0 = weight_row(c, op, oc, &wrow))) return st0;
  double *sw = malloc((size_t)oc * sizeof *sw), *sy = gemm ? NULL : channel_scales(c, y, oc, &py);
  int32_t *rq = malloc((size_t)oc * 2 * sizeof *rq), *m = malloc((size_t)oc * sizeof *m);
  int *s = malloc((size_t)oc * sizeof *s);
  ct_status st = sw && rq && m && s ? CT_OK : oom(c);
  ct_value *wq = st ? NULL : mac_weight(c, w, oc, sw, b, s_in, n_in, wrow, fold);
  bool ok = wq && mac_requant(s_in, n_in, sw, oc, sy, py, rq, m, s);
  if (wq && !ok && sy) free(sy), sy = NULL, ok = mac_requant(s_in, n_in, sw, oc, NULL, py, rq, m, s);
  bool raw = false;
  if (!st && ok) {
    bq = b ? mac_bias(c, wq->name, b, oc, sw, s_in, n_in) : NULL;
    if (b && !bq) st = oom(c);
    if (!st && n_in == 1) st = gemm_raw_out(c, op, y, s_in[0], sw, oc, &raw);
    if (!st && !raw && !set_rq(c, op, oc, m, s)) st = oom(c);
    if (!st) {
      mac_act(c, op, py, true, sy != NULL);
      op->in[0] = xq, op->in[1] = wq;
      if (op->n_in > 2) op->in[2] = bq;
      if (!raw) st = set_out_q(c, y, sy, oc, py);
      *done = !st;
    }
  }
  if (!st && !*done && (n_in > 1 || fold)) st = channel_reader_fails(c, op, x);
  free(sw), free(sy), free(rq), free(m), free(s);
  return st;
}

/* ConvTranspose (2-D, constant weights): i8 weights per tensor (max|w| / 127: the channel
 * is axis 1 of [C, OC/group, kh, kw]), i32 bias per output channel, one requant. */
ct_status lower_convt(ct_lower_ctx *c, ct_op *op, bool *done) {
  ct_value *x = op->in[0], *w = op->in[1], *b = op->n_in > 2 ? op->in[2] : NULL, *y = op->out[0], *xq;
  if (w->ndim != 4 || y->ndim != 4 || !ct_value_is_const(w) || (b && !ct_value_is_const(b))) return CT_OK;
  ct_quant_param px, py;
  ct_status st = ct_lower_ensure_int(c, x, &xq);
  if (!st) st = ct_lower_param_of(c, xq, &px);
  if (!st) st = ct_lower_param_of(c, y, &py);
  if (st) return st;
  int64_t n = 0, oc = y->shape[1];
  float *f = ct_lower_const_f32(w, &n);
  int8_t *q = f ? malloc((size_t)n) : NULL;
  double *sw = q ? malloc((size_t)oc * sizeof *sw) : NULL;
  int32_t rq[2], zp0 = 0;
  if (!sw) st = oom(c);
  if (!st) {
    ct_quant_weight_scales(f, 1, n, sw);
    ct_quant_weight_quantize(f, 1, n, sw, q);
    for (int64_t o = 1; o < oc; o++) sw[o] = sw[0];
  }
  if (!st && ct_quant_mac_requant(px.scale, sw, 1, py.scale, rq)) {
    ct_value *wq = add_const(c, w->name, "q", CT_I8, w->ndim, w->shape, q, 1, sw, &zp0);
    ct_value *bq = b ? mac_bias(c, w->name, b, oc, sw, &px.scale, 1) : NULL;
    int sh = rq[1];
    if (!wq || (b && !bq) || !set_rq(c, op, 1, &rq[0], &sh)) st = oom(c);
    if (!st) {
      op->in[0] = xq, op->in[1] = wq;
      if (b) op->in[2] = bq;
      st = ct_lower_set_q(c, y, py);
      *done = !st;
    }
  }
  free(f), free(q), free(sw);
  return st;
}

/* MatMul: activation × activation, or × a constant quantized per tensor; one requant. */
ct_status lower_matmul(ct_lower_ctx *c, ct_op *op, bool *done) {
  ct_value *a = op->in[0], *b = op->in[1], *y = op->out[0], *aq, *bq;
  if (a->ndim < 2 || b->ndim < 2 || ct_value_is_const(a)) return CT_OK;
  ct_quant_param pa, pb, py;
  ct_status st = ct_lower_param_of(c, y, &py);
  if (!st) st = elt_operand(c, a, false, &aq, &pa);
  if (!st) st = elt_operand(c, b, false, &bq, &pb);
  if (st) return st;
  int32_t rq[2];
  /* the ISA's MATMUL reads its second operand as i8 weights: no zp_b field, no u8 (a u8 B, e.g.
   * a SiLU of a non-negative tensor, stays float) */
  if (pb.zp != 0 || pb.dt != CT_I8 || !ct_quant_mac_requant(pa.scale, &pb.scale, 1, py.scale, rq)) return CT_OK;
  int s = rq[1];
  op->in[0] = aq, op->in[1] = bq;
  if (!set_rq(c, op, 1, &rq[0], &s)) return oom(c);
  st = ct_lower_set_q(c, y, py);
  *done = !st;
  return st;
}
