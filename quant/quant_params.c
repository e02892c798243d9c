/* quant_params.c: quantization parameters of the Tpu ops, derived for exactly what the
 * cmodel instructions compute (isa.def CONV/MATMUL/DWCONV rq tables, ELTWISE, POOL, REDUCE,
 * REQUANT field widths); scales from TPU-MLIR's symmetric / asymmetric rules (docs/quant.md). */
#include <math.h>

#include "quant/quant.h"

ct_dtype ct_quant_sym_type(double min, bool allow_unsigned) {
  return allow_unsigned && min >= 0 ? CT_U8 : CT_I8;
}

bool ct_quant_param_sym(double threshold, ct_dtype dt, ct_quant_param *p) {
  if (dt != CT_I8 && dt != CT_U8 && dt != CT_I16) return false;
  if (!isfinite(threshold) || threshold < 0) return false;
  *p = (ct_quant_param){ct_quant_scale_sym(threshold, dt), 0, dt};
  return true;
}

bool ct_quant_param_asym(double min, double max, ct_dtype dt, ct_quant_param *p) {
  if (dt != CT_I8 && dt != CT_U8) return false;
  if (!isfinite(min) || !isfinite(max) || min > max) return false;
  double lo = min < 0 ? min : 0, hi = max > 0 ? max : 0;
  double qmin = (double)ct_quant_min(dt), qmax = (double)ct_quant_max(dt);
  if (hi - lo == 0) {
    *p = (ct_quant_param){1.0, 0, dt};
    return true;
  }
  double scale = (hi - lo) / (qmax - qmin);
  double zp = qmin - ct_quant_round_half_away(lo / scale);
  zp = zp < qmin ? qmin : zp > qmax ? qmax : zp;
  *p = (ct_quant_param){scale, (int32_t)zp, dt};
  return true;
}

bool ct_quant_param_calib(double threshold, double min, double max, bool asymmetric, bool allow_unsigned,
                          ct_quant_param *p) {
  if (!isfinite(min) || !isfinite(max) || min > max) return false;
  if (asymmetric) {
    if (!(threshold >= 0) || !isfinite(threshold)) return false;
    double lo = fmax(min, -threshold), hi = fmin(max, threshold);
    return ct_quant_param_asym(fmin(lo, hi), hi, allow_unsigned ? CT_U8 : CT_I8, p);
  }
  return ct_quant_param_sym(threshold, ct_quant_sym_type(min, allow_unsigned), p);
}

void ct_quant_weight_quantize(const float *w, int64_t oc, int64_t per_oc, const double *scale,
                              int8_t *q) {
  for (int64_t o = 0; o < oc; o++)
    for (int64_t i = 0; i < per_oc; i++)
      q[o * per_oc + i] = (int8_t)ct_quant_quantize(w[o * per_oc + i], scale[o], 0, CT_I8);
}

void ct_quant_bias_channels(const float *b, int64_t oc, const double *s_w, double s_in, int32_t *bq) {
  for (int64_t o = 0; o < oc; o++) bq[o] = ct_quant_bias(b[o], s_w[o], s_in);
}

bool ct_quant_mac_requant_pc(const double *s_in, int64_t n_in, const double *s_w, int64_t oc, const double *s_out,
                             int64_t n_out, int32_t *rq) {
  for (int64_t o = 0; o < oc; o++) {
    double si = s_in[n_in == 1 ? 0 : o], so = s_out[n_out == 1 ? 0 : o];
    if (!ct_quant_mac_requant(si, &s_w[o], 1, so, &rq[2 * o])) return false;
  }
  return true;
}

void ct_quant_bias_channels_pc(const float *b, int64_t oc, const double *s_w, const double *s_in, int64_t n_in,
                               int32_t *bq) {
  for (int64_t o = 0; o < oc; o++) bq[o] = ct_quant_bias(b[o], s_w[o], s_in[n_in == 1 ? 0 : o]);
}

void ct_quant_channel_scales(const double *th, int64_t n, double th_tensor, ct_dtype dt, double *scale) {
  for (int64_t c = 0; c < n; c++) scale[c] = ct_quant_scale_sym(fmax(th[c], th_tensor / CT_QUANT_CHANNEL_FLOOR), dt);
}

bool ct_quant_mac_requant(double s_in, const double *s_w, int64_t oc, double s_out, int32_t *rq) {
  if (!(s_in > 0) || !(s_out > 0)) return false;
  for (int64_t o = 0; o < oc; o++) {
    int32_t m;
    int s;
    if (!(s_w[o] > 0) || !ct_quant_multiplier_shift(s_in * s_w[o] / s_out, &m, &s)) return false;
    rq[2 * o] = m;
    rq[2 * o + 1] = s;
  }
  return true;
}

bool ct_quant_rescale(double s_in, int32_t zp_in, double s_out, int32_t zp_out, int32_t *m, int *s,
                      bool *identity) {
  *identity = false;
  if (!(s_in > 0) || !(s_out > 0) || !ct_quant_multiplier_shift(s_in / s_out, m, s)) return false;
  *identity = s_in == s_out && zp_in == zp_out;
  return true;
}

bool ct_quant_pool_params(double s_in, double s_out, int64_t count, int32_t *m, int *s) {
  *m = 0;
  *s = 0;
  if (!(s_in > 0) || !(s_out > 0) || count < 1) return false;
  return ct_quant_multiplier_shift_bits(s_in / (s_out * (double)count), 16, m, s);
}

/* ELTWISE operands are 8- or 16-bit: then |x − zp| ≤ 65535 and |m| ≤ 32767 keep every
 * (x − zp)·m below 2^31, so no operand saturates in int32. */
static bool elt_type(ct_dtype dt) { return dt == CT_I8 || dt == CT_U8 || dt == CT_I16; }

/* ADD / SUB / MAX / MIN: both operands on a common fixed-point scale 2^-s_out of s_o. */
static bool elt_common(ct_quant_param a, ct_quant_param b, ct_quant_param o, ct_quant_elt *p) {
  double ra = a.scale / o.scale, rb = b.scale / o.scale;
  int32_t ma, mb;
  int ta, tb;
  if (!ct_quant_multiplier_shift_bits(ra, 16, &ma, &ta) || !ct_quant_multiplier_shift_bits(rb, 16, &mb, &tb))
    return false;
  int so = ta < tb ? ta : tb;
  p->m_a = ma;
  p->s_a = ta - so;
  p->m_b = mb;
  p->s_b = tb - so;
  p->s_out = so;
  return true;
}

bool ct_quant_eltwise_params(ct_quant_elt_op op, ct_quant_param a, ct_quant_param b, ct_quant_param o,
                             ct_quant_elt *p) {
  if (!(a.scale > 0) || !(b.scale > 0) || !(o.scale > 0) || op < CT_QUANT_ELT_ADD || op > CT_QUANT_ELT_MIN)
    return false;
  if (!elt_type(a.dt) || !elt_type(b.dt) || !elt_type(o.dt)) return false;
  *p = (ct_quant_elt){op, 0, a.zp, 0, b.zp, o.zp, 0, 0, 0, 0, CT_QUANT_ACT_NONE, o.dt};
  if (op != CT_QUANT_ELT_MUL) return elt_common(a, b, o, p);
  int32_t m;
  int s;
  if (!ct_quant_multiplier_shift_bits(a.scale * b.scale / o.scale, 16, &m, &s)) return false;
  p->m_a = m;
  p->m_b = 1;
  p->s_out = s;
  return true;
}
