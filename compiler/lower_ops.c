/* lower_ops.c: the INT8 form of each Top op (docs/tpu.md "Lowering rules"): MAC ops with
 * per-channel i8 weights, int32 bias and per-channel requant; Add/Sub/Mul (and Div by a
 * constant) with per-operand rescale; Concat to the output's scale; average pools; LUT
 * activations; data movement on quantized storage with the input's parameters. All
 * parameters come from quant/ (quant_params.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"
#include "compiler/lower_policy.h"
#include "ops/tpu_util.h"

static ct_status oom(ct_lower_ctx *c) { return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory"); }

/* Adds a constant of dtype dt and shape (ndim, shape) taking data (copied), quant params
 * (n scales along axis; n 0 = none). */
static ct_value *add_const(ct_lower_ctx *c, const char *base, const char *suffix, ct_dtype dt, int ndim,
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

/* Fused activation of a Conv/Gemm in the output's integer domain: none, relu, or clip
 * [0, act_max] (relu6). False when the activation has no integer form (leaky, clip with a
 * lower bound ≠ 0). A per-channel output (per_channel) clips at the storage maximum: its
 * channel thresholds are at most the tensor's, which is at most act_max. */
static bool mac_act(ct_lower_ctx *c, ct_op *op, ct_quant_param py, bool apply, bool per_channel) {
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

static bool set_rq(ct_lower_ctx *c, ct_op *op, int64_t n, const int32_t *m, const int *s) {
  int64_t *mv = malloc((size_t)n * sizeof *mv), *sv = malloc((size_t)n * sizeof *sv);
  bool ok = mv && sv;
  for (int64_t i = 0; ok && i < n; i++) mv[i] = m[i], sv[i] = s[i];
  ok = ok && ct_attr_set_rq_multiplier(c->g, op, (int)n, mv) && ct_attr_set_rq_rshift(c->g, op, (int)n, sv);
  free(mv), free(sv);
  return ok;
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

/* Can op (a Conv or Gemm) take the INT8 form: canonical Gemm, constant (or QDQ) weights and
 * bias, an activation with an integer form? */
static bool mac_int8_ok(ct_lower_ctx *c, ct_op *op) {
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
static double *channel_scales(ct_lower_ctx *c, ct_value *y, int64_t oc, ct_quant_param py) {
  const ct_calib_wrow *r = c->o->calib ? ct_calib_table_find_channel(c->o->calib, y->name) : NULL;
  if (!r || r->n != oc || c->o->asymmetric || py.zp != 0 || (py.dt != CT_I8 && py.dt != CT_U8 && py.dt != CT_I16) ||
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
  return sy;
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

/* Retypes y as quantized storage: per channel along axis 1 (sy, oc scales, zero points 0)
 * or per tensor. */
static ct_status set_out_q(ct_lower_ctx *c, ct_value *y, const double *sy, int64_t oc, ct_quant_param py) {
  if (!sy) return ct_lower_set_q(c, y, py);
  int32_t *zp = calloc((size_t)oc, sizeof *zp);
  ct_value_set_type(y, py.dt, y->ndim, y->shape);
  bool ok = zp && ct_value_set_quant(c->g, y, (int)oc, sy, zp, 1);
  free(zp);
  return ok ? CT_OK : oom(c);
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

/* The op reading v, when v's only use is one input of one live op (not a module output). */
static ct_op *sole_reader(const ct_graph *g, const ct_value *v) {
  if (ct_graph_count_uses(g, v) != 1) return NULL;
  for (int i = 0; i < g->n_ops; i++)
    for (int k = 0; !g->ops[i]->dead && k < g->ops[i]->n_in; k++)
      if (g->ops[i]->in[k] == v) return g->ops[i];
  return NULL;
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
static ct_status lower_mac(ct_lower_ctx *c, ct_op *op, bool *done) {
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
  double *sw = malloc((size_t)oc * sizeof *sw), *sy = gemm ? NULL : channel_scales(c, y, oc, py);
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
static ct_status lower_convt(ct_lower_ctx *c, ct_op *op, bool *done) {
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

/* An operand of an elementwise op as quantized storage: activations by ensure_int; a
 * constant is quantized symmetric i8 per tensor (scale max|c| / 127). */
static ct_status elt_operand(ct_lower_ctx *c, ct_value *v, bool reciprocal, ct_value **out, ct_quant_param *p) {
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

/* Add / Sub / Mul, and Div by a constant as Mul by its reciprocal: ELTWISE parameters. */
static ct_status lower_eltwise(ct_lower_ctx *c, ct_op *op, bool *done) {
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
static ct_status lower_concat(ct_lower_ctx *c, ct_op *op, bool *done) {
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
static ct_status lower_avgpool(ct_lower_ctx *c, ct_op *op, bool *done) {
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
static ct_status lower_reducemean(ct_lower_ctx *c, ct_op *op, bool *done) {
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
static ct_status lower_clip(ct_lower_ctx *c, ct_op *op, bool *done) {
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

/* MatMul: activation × activation, or × a constant quantized per tensor; one requant. */
static ct_status lower_matmul(ct_lower_ctx *c, ct_op *op, bool *done) {
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
static ct_status lower_lut(ct_lower_ctx *c, ct_op *op, const ct_quant_lut_spec *sp0, bool *done) {
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
  double *sy = n == 0 && xq->ndim == 4 ? channel_scales(c, y, C, py) : NULL;
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
static ct_status lower_move(ct_lower_ctx *c, ct_op *op, bool *done) {
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
