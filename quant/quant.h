/* quant.h: the integer arithmetic of ctpu, defined once (docs/architecture.md §4.1, docs/quant.md):
 * rounding shifts, requantization, saturation, multiplier/shift search (TPU-MLIR
 * get_scale_and_shift), float<->int quantization, symmetric scales, LUTs, bf16/f16. */
#ifndef CT_QUANT_H
#define CT_QUANT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/tensor.h"

/* Fused activation in the quantized domain (same numbering as isa.def's ACT kind). */
typedef enum ct_quant_act { CT_QUANT_ACT_NONE, CT_QUANT_ACT_RELU, CT_QUANT_ACT_CLAMP } ct_quant_act;

/* Elementwise binary operations (same numbering as isa.def's ELT kind; DIV: float only). */
typedef enum ct_quant_elt_op {
  CT_QUANT_ELT_ADD, CT_QUANT_ELT_SUB, CT_QUANT_ELT_MUL, CT_QUANT_ELT_MAX, CT_QUANT_ELT_MIN, CT_QUANT_ELT_DIV
} ct_quant_elt_op;

/* Arithmetic right shift with rounding, ties toward +inf (TPU-MLIR ROUNDING_HALF_UP):
 * s = 0 returns x; s in 1..63 returns (x + 2^(s-1)) >> s computed without overflow (as if
 * in unbounded integers, then floor division by 2^s). s outside 0..63 is clamped into it. */
static inline int64_t ct_quant_rshift_round(int64_t x, int s) {
  if (s <= 0) return x;
  if (s > 63) s = 63;
  /* floor((x + 2^(s-1)) / 2^s) without overflowing x + 2^(s-1): split x = q·2^s + r. */
  int64_t q = x >> s;                                  /* arithmetic: floor(x / 2^s) */
  uint64_t r = (uint64_t)x & ((UINT64_C(1) << s) - 1); /* 0 <= r < 2^s */
  return q + (r >= (UINT64_C(1) << (s - 1)) ? 1 : 0);
}

/* Smallest and largest value of an integer storage type (i8, u8, i16, u16, i32, u32 as
 * int64; other types give the i32 range). */
static inline int64_t ct_quant_min(ct_dtype dt) {
  switch (dt) {
    case CT_I8: return INT8_MIN;
    case CT_I16: return INT16_MIN;
    case CT_U8: case CT_U16: case CT_U32: case CT_BOOL: return 0;
    default: return INT32_MIN;
  }
}

static inline int64_t ct_quant_max(ct_dtype dt) {
  switch (dt) {
    case CT_I8: return INT8_MAX;
    case CT_U8: return UINT8_MAX;
    case CT_I16: return INT16_MAX;
    case CT_U16: return UINT16_MAX;
    case CT_U32: return UINT32_MAX;
    case CT_BOOL: return 1;
    default: return INT32_MAX;
  }
}

/* Clamps x to the range of dt (saturation). */
static inline int64_t ct_quant_saturate(int64_t x, ct_dtype dt) {
  int64_t lo = ct_quant_min(dt), hi = ct_quant_max(dt);
  return x < lo ? lo : x > hi ? hi : x;
}

/* Requantization: y = sat_dt(rshift_round(acc * m, s) + zp) with the product in int64
 * (exact for int32 acc and m). s in 0..63. */
int32_t ct_quant_requant(int32_t acc, int32_t m, int s, int32_t zp, ct_dtype out);

/* Requantization of a wider value with a fused activation, the one routine every
 * integer opcode ends with: v = rshift_round(x * m, s) + zp; RELU: v = max(v, zp); CLAMP:
 * v = min(max(v, zp), hi); then saturate to dt (docs/architecture.md §4.1: clamp before
 * saturation). Callers guarantee |x * m| < 2^63 (isa.def widths do). */
static inline int32_t ct_quant_requant_act(int64_t x, int32_t m, int s, int32_t zp, ct_quant_act act, int32_t hi,
                                           ct_dtype out) {
  int64_t v = ct_quant_rshift_round(x * (int64_t)m, s) + zp;
  if (act == CT_QUANT_ACT_RELU || act == CT_QUANT_ACT_CLAMP) v = v < zp ? zp : v;
  if (act == CT_QUANT_ACT_CLAMP) v = v > hi ? hi : v;
  return (int32_t)ct_quant_saturate(v, out);
}

/* ct_quant_requant_act over a row: y[i] = ct_quant_requant_act(x[i], m, s, zp, act, hi,
 * out) for i < n, stored as out's C type (int8_t, uint8_t, int16_t, uint16_t, int32_t for
 * i8, u8, i16, u16, i32) at y. The same function element by element, with the type switch
 * once per row instead of once per element (the MAC kernels' epilogue). Returns false
 * (nothing written) for any other out. _i32 takes an int32 row (the same values widened). */
bool ct_quant_requant_act_row(const int64_t *x, int64_t n, int32_t m, int s, int32_t zp, ct_quant_act act, int32_t hi,
                              ct_dtype out, void *y);
bool ct_quant_requant_act_row_i32(const int32_t *x, int64_t n, int32_t m, int s, int32_t zp, ct_quant_act act,
                                  int32_t hi, ct_dtype out, void *y);

/* Real multiplier M → (m, s) minimizing |m·2^-s − M| with |m| < 2^31 and s in 0..63
 * (TPU-MLIR get_scale_and_shift: the largest s that keeps m in range, m = round half away
 * from zero of M·2^s). M = 0 gives (0, 0); 0 < |M| < 2^-64 gives m = 0, s = 63 (below the
 * resolution). Returns false (m = s = 0) if M is not finite or |M| ≥ 2^31 - 0.5 (not
 * representable with s ≥ 0). */
bool ct_quant_multiplier_shift(double M, int32_t *m, int *s);
/* The same search with |m| ≤ 2^(bits-1) − 1 (bits 2..32): bits 8 gives the 8-bit
 * multipliers of elementwise/pool ops (|m| ≤ 127), bits 16 the 16-bit ones of isa.def's
 * ELTWISE/POOL/REDUCE fields. */
bool ct_quant_multiplier_shift_bits(double M, int bits, int32_t *m, int *s);

/* The two float → integer roundings of ctpu, by name (docs/quant.md "Two roundings"):
 * round half away from zero (2.5 → 3, −2.5 → −3, 0.5 → 1): ctpu's own float → int (inputs,
 * weights, bias, LUT entries, the CAST instruction; C round()); round half to even (2.5 → 2,
 * −2.5 → −2, 1.5 → 2): ONNX QuantizeLinear's ("rounding to nearest ties to even", ONNX
 * operator spec), independent of the floating-point environment's rounding mode (unlike
 * rint/nearbyint). Both return NaN and ±inf unchanged. */
static inline double ct_quant_round_half_away(double x) { return round(x); /* C99: halfway cases away from zero */ }
double ct_quant_round_half_even(double x);

/* Round half away from zero (2.5 → 3, -2.5 → -3), then saturate to dt. NaN gives 0. */
int64_t ct_quant_round_sat(double x, ct_dtype dt);
/* Quantizes a real value: sat_dt(round_half_away(x / scale) + zp), the division in double.
 * scale must be > 0. */
int32_t ct_quant_quantize(double x, double scale, int32_t zp, ct_dtype dt);
/* ct_quant_quantize over a row of n float32 values: y[i] = ct_quant_quantize(x[i], scale, zp,
 * dt) for i < n (the same function, called where the compiler can inline it). */
void ct_quant_quantize_row(const float *x, int64_t n, double scale, int32_t zp, ct_dtype dt, int32_t *y);
/* Fake quantization of a row (symmetric, zero point 0): y[i] = (float)ct_quant_dequantize(
 * ct_quant_quantize(x[i], scale, 0, dt), scale, 0) for i < n. */
void ct_quant_qdq_row(const float *x, int64_t n, double scale, ct_dtype dt, float *y);
/* Dequantizes: (q − zp) · scale in double. */
double ct_quant_dequantize(int32_t q, double scale, int32_t zp);
/* sat_dt(round_half_even(x) + zp), the ONNX QLinear* / DynamicQuantizeLinear output
 * rounding ("rounding to nearest ties to even", then saturate). NaN gives sat(zp). */
int64_t ct_quant_round_even_sat(double x, int64_t zp, ct_dtype dt);
/* ONNX QuantizeLinear (ONNX operator spec, QuantizeLinear: "rounding to nearest ties to
 * even", saturate): sat_dt(round_half_even(x / scale) + zp) with the division in float32,
 * as onnxruntime computes it for float32 x and scale. NaN gives zp (as ct_quant_quantize).
 * scale must be > 0. Only for executing ONNX QDQ nodes literally; a lowered model uses
 * ct_quant_quantize (docs/quant.md). */
int32_t ct_quant_quantize_onnx(float x, float scale, int32_t zp, ct_dtype dt);
/* ct_quant_quantize_onnx over a row of n float32 values into y (int8_t[n] for i8, uint8_t[n]
 * for u8), written so that compilers vectorize it (clamp to the type range minus zp, then
 * the 1.5·2^23 add/subtract, which is round-half-to-even in the default floating-point
 * rounding mode for |v| < 2^22): equal element by element to ct_quant_quantize_onnx.
 * Returns false (nothing written) if dt is not i8 or u8. */
bool ct_quant_quantize_onnx_row(const float *x, int64_t n, float scale, int32_t zp, ct_dtype dt, void *y);

/* Symmetric activation scale: threshold / 127 for i8, threshold / 255 for u8 (threshold of
 * a calibration table); other types: threshold / max(dt). A threshold that is not > 0 and
 * finite (an all-zero tensor has threshold 0) gives scale 1: every value quantizes to the
 * zero point and dequantizes to 0 exactly, and nothing divides by zero. */
double ct_quant_scale_sym(double threshold, ct_dtype dt);
/* Per-output-channel weight scales over the `per_oc` elements of channel o (OIHW:
 * per_oc = I*H*W): scale[o] = max|w[o, :]| / n with the largest n in 127..1 for which every
 * w / scale is within 1e-4 of an integer (weights already on an 8-bit grid, e.g. a per-tensor
 * QDQ model's, are then stored exactly), else max / 127; a channel of zeros gets scale 1. */
void ct_quant_weight_scales(const float *w, int64_t oc, int64_t per_oc, double *scale);
/* Bias quantization: sat_i32(round_half_away(b / (s_w · s_in))). */
int32_t ct_quant_bias(double b, double s_w, double s_in);

/* LUT index of an 8-bit input value v of type in (i8 or u8): v − min(in), 0..255. */
int ct_quant_lut_index(int32_t v, ct_dtype in);
/* Builds a 256-entry table T[i] = quantize(f(dequantize(min(in) + i)))
 * (docs/architecture.md §4.1): in, out are i8 or u8; entries are stored as bytes (two's complement for i8).
 * f gets ctx. Returns false if in/out are not 8-bit types or scales are not > 0. */
bool ct_quant_lut_build(double (*f)(double x, void *ctx), void *ctx, double s_in, int32_t zp_in,
                        ct_dtype in, double s_out, int32_t zp_out, ct_dtype out, uint8_t table[256]);

/* 16-bit LUT (the LUT instruction with dt_in = i16; the interpolated 16-bit tables of
 * TFLite's int16 activations and Arm Ethos-U, here with 257 entries): the i16 input range in
 * 256 segments of 256 codes, T[j] = sat_i16(round_half_away(128·clamp_out(f(x_j)/s_out +
 * zp_out))) at x_j = (256·j − 32768)·s_in, j = 0..256 (7 fraction bits of an output step). */
#define CT_QUANT_LUT16_ENTRIES 257
/* Entries of one LUT table for an input of type in: 257 (int16) for i16, 256 (bytes) else. */
static inline int ct_quant_lut_entries(ct_dtype in) { return in == CT_I16 ? CT_QUANT_LUT16_ENTRIES : 256; }
/* Builds the 257-entry table above for an i16 input (zero point 0) of step s_in and an 8-bit
 * output (i8 or u8; f's NaN gives zp_out). False for other output types or scales not > 0. */
bool ct_quant_lut16_build(double (*f)(double x, void *ctx), void *ctx, double s_in, double s_out, int32_t zp_out,
                          ct_dtype out, int16_t table[CT_QUANT_LUT16_ENTRIES]);
/* The lookup every 16-bit LUT computes: u = x + 32768 (x saturated to i16), i = u >> 8,
 * f = u & 255, v = T[i]·256 + (T[i+1] − T[i])·f, out = sat_out(rshift_round(v, 15)) — linear
 * interpolation between the two entries around x, rounded once. */
int32_t ct_quant_lut16_lookup(const int16_t *table, int32_t x, ct_dtype out);
/* The lookup's two steps: the segment i (0..255) and fraction f (0..255) of input x, and
 * the interpolation between entries t0 = T[i] and t1 = T[i+1]. */
void ct_quant_lut16_index(int32_t x, int *i, int *f);
int32_t ct_quant_lut16_interp(int32_t t0, int32_t t1, int f, ct_dtype out);

/* Elementwise binary with per-operand requantization (isa.def ELTWISE; integer types):
 * a' = sat_i32(rshift_round((a − zp_a)·m_a, s_a)), b' likewise, r = a' op b' in int64,
 * out = requant_act(r, 1, s_out, zp_out, act, act_hi, out). */
typedef struct ct_quant_elt {
  ct_quant_elt_op op;
  int32_t m_a, zp_a, m_b, zp_b, zp_out, act_hi;
  int s_a, s_b, s_out;
  ct_quant_act act;
  ct_dtype out;
} ct_quant_elt;

/* The combined value r = a' op b' of one ELTWISE element (below), before its requant. */
static inline int64_t ct_quant_eltwise_acc(const ct_quant_elt *p, int32_t a, int32_t b) {
  int64_t x = ct_quant_saturate(ct_quant_rshift_round(((int64_t)a - p->zp_a) * p->m_a, p->s_a), CT_I32);
  int64_t y = ct_quant_saturate(ct_quant_rshift_round(((int64_t)b - p->zp_b) * p->m_b, p->s_b), CT_I32);
  switch (p->op) {
    case CT_QUANT_ELT_ADD: return x + y;
    case CT_QUANT_ELT_SUB: return x - y;
    case CT_QUANT_ELT_MUL: return x * y;
    case CT_QUANT_ELT_MAX: return x > y ? x : y;
    default: return x < y ? x : y;
  }
}

/* One ELTWISE output element from stored operands a, b (int32 holding the storage values):
 * the formula above, every rounding rshift_round (half toward +inf), saturated to p->out.
 * Inline: the cmodel calls it once per element. */
static inline int32_t ct_quant_eltwise(const ct_quant_elt *p, int32_t a, int32_t b) {
  return ct_quant_requant_act(ct_quant_eltwise_acc(p, a, b), 1, p->s_out, p->zp_out, p->act, p->act_hi, p->out);
}

/* ct_quant_eltwise over a row: y[i] = ct_quant_eltwise(p, a[i], b[i]) for i < n, stored as
 * p->out's C type (as ct_quant_requant_act_row); the combined value r of every element first
 * (ct_quant_eltwise_acc, one loop per operation), then the requant of the row. False
 * (nothing written) for an out type ct_quant_requant_act_row does not store. */
bool ct_quant_eltwise_row(const ct_quant_elt *p, const int32_t *a, const int32_t *b, int64_t n, void *y);

/* IEEE half and bfloat16, round to nearest even: thin wrappers of common/tensor.h (one
 * definition). ct_quant_round_float rounds x to the precision of dt (bf16, f16; f32: x). */
uint16_t ct_quant_f32_to_bf16(float x);
float ct_quant_bf16_to_f32(uint16_t b);
uint16_t ct_quant_f32_to_f16(float x);
float ct_quant_f16_to_f32(uint16_t h);
float ct_quant_round_float(float x, ct_dtype dt);

/* The upper clamp bound of a float CONV / DWCONV / MATMUL / ELTWISE result (act = clamp; the
 * lower bound is 0): the f32 whose bits are act_hi (high 16) and zp_out (low 16) — fields a
 * float result has no other use for (docs/isa.md). */
float ct_quant_float_act_hi(int64_t act_hi, int64_t zp_out);
/* The act_hi / zp_out fields for bound hi on a dt_out result: hi rounded to dt_out (bf16 / f16,
 * nearest even; f32: hi) — rounding is monotone, so clamping at the rounded bound and rounding
 * the result gives what clamping at hi and rounding gives, for every value (and a bf16 bound
 * leaves zp_out 0). False (nothing written) when hi is not finite. */
bool ct_quant_float_act_hi_bits(float hi, ct_dtype dt_out, int64_t *act_hi, int64_t *zp_out);

/* ---- Quantization parameters of the Tpu ops (quant_params.c; docs/quant.md "Per op") ---- */

/* The quantization of one tensor: real = (q − zp) · scale, q stored as dt. */
typedef struct ct_quant_param {
  double scale;
  int32_t zp;
  ct_dtype dt;
} ct_quant_param;

/* Storage type of a symmetric 8-bit tensor: u8 when allow_unsigned and the calibrated min is
 * ≥ 0 (a non-negative tensor: ReLU outputs, sigmoid), else i8 (TPU-MLIR import-calibration's
 * getMinMax: min = 0 for non-negative tensors). */
ct_dtype ct_quant_sym_type(double min, bool allow_unsigned);
/* Symmetric parameters from a calibration threshold: scale = ct_quant_scale_sym(threshold,
 * dt) (1 for a zero threshold), zp = 0. dt is i8, u8 or i16; returns false (p untouched)
 * for other types or a negative / non-finite threshold. */
bool ct_quant_param_sym(double threshold, ct_dtype dt, ct_quant_param *p);
/* Asymmetric parameters from a range [min, max] (TPU-MLIR getScaleAndZeroPoint): the range
 * is widened to contain 0 (real 0 must be exact: zero padding), scale = (hi − lo) /
 * (qmax − qmin), zp = qmin − round_half_away(lo / scale), clamped to [qmin, qmax]. A zero
 * range (min = max = 0) gives scale 1, zp 0. dt is i8 or u8; false (p untouched) for other
 * types, min > max or a non-finite bound. */
bool ct_quant_param_asym(double min, double max, ct_dtype dt, ct_quant_param *p);

/* Parameters of an activation from its calibration table row (threshold, min, max), TPU-MLIR
 * import-calibration's rule: symmetric (asymmetric false): ct_quant_sym_type(min,
 * allow_unsigned) then ct_quant_param_sym(threshold); asymmetric: ct_quant_param_asym over
 * [min, max] clipped to [−threshold, threshold] (TPU-MLIR takes min and max as they are; the
 * clip keeps what a histogram method's threshold cut off: YOLOX-Nano, 20 samples, mse, per
 * tensor: output cosine 0.864 → 0.892; a minmax table's threshold clips nothing), in u8 if
 * allow_unsigned, else i8. False (p untouched) if the row is invalid (negative or non-finite
 * threshold, min > max, non-finite bound). */
bool ct_quant_param_calib(double threshold, double min, double max, bool asymmetric, bool allow_unsigned,
                          ct_quant_param *p);

/* Quantizes OIHW weights per output channel with scales from ct_quant_weight_scales:
 * q[o·per_oc + i] = sat_i8(round_half_away(w / scale[o])). Shapes: w, q [oc · per_oc]. */
void ct_quant_weight_quantize(const float *w, int64_t oc, int64_t per_oc, const double *scale,
                              int8_t *q);
/* Per-channel bias of CONV / DWCONV / MATMUL: bq[o] = ct_quant_bias(b[o], s_w[o], s_in). */
void ct_quant_bias_channels(const float *b, int64_t oc, const double *s_w, double s_in, int32_t *bq);
/* Requant table of CONV / DWCONV / MATMUL (isa.def field rq: (i32 multiplier, i32 shift)
 * pairs): rq[2o], rq[2o+1] = ct_quant_multiplier_shift(s_in · s_w[o] / s_out), o < oc
 * (oc = 1 with one s_w for rq_mode=tensor). Returns false if a scale is not > 0 or a
 * multiplier is not representable (≥ 2^31); rq is then partly written. */
bool ct_quant_mac_requant(double s_in, const double *s_w, int64_t oc, double s_out, int32_t *rq);
/* ct_quant_mac_requant with per-channel activations (docs/quant.md "Per-channel
 * activations"): s_in has n_in entries and s_out n_out, each 1 (per tensor) or oc (one per
 * output channel: a depthwise CONV's input channel o is its output channel o). rq as above. */
bool ct_quant_mac_requant_pc(const double *s_in, int64_t n_in, const double *s_w, int64_t oc, const double *s_out,
                             int64_t n_out, int32_t *rq);
/* int32 biases bq[o] = ct_quant_bias(b[o], s_w[o], s_in[n_in == 1 ? 0 : o]), o < oc. */
void ct_quant_bias_channels_pc(const float *b, int64_t oc, const double *s_w, const double *s_in, int64_t n_in,
                               int32_t *bq);
/* Scales of a per-channel symmetric activation of storage dt (i8 / u8; zero point 0) from its
 * channel thresholds th[c] and the tensor's threshold th_tensor: scale[c] =
 * ct_quant_scale_sym(max(th[c], th_tensor / CT_QUANT_CHANNEL_FLOOR), dt), so no channel's
 * range is below 1/256 of the tensor's (a dead channel keeps a usable scale). */
#define CT_QUANT_CHANNEL_FLOOR 256.0
void ct_quant_channel_scales(const double *th, int64_t n, double th_tensor, ct_dtype dt, double *scale);

/* Rescaling of an 8/16-bit tensor to another scale by REQUANT (rq_mode=tensor, 32-bit
 * multiplier): out = sat(rshift_round((in − zp_in) · m, s) + zp_out), (m, s) =
 * ct_quant_multiplier_shift(s_in / s_out). Used by Concat (each input to the output's
 * scale), Requant and re-typing casts. *identity is set when s_in == s_out and zp_in ==
 * zp_out (then a plain copy, MOVE, is exact). False if a scale is not > 0 or the ratio is
 * ≥ 2^31. */
bool ct_quant_rescale(double s_in, int32_t zp_in, double s_out, int32_t zp_out, int32_t *m, int *s,
                      bool *identity);

/* POOL / REDUCE parameters (16-bit multiplier field m, 6-bit shift s): the integer
 * instruction computes out = sat(rshift_round(r · m, s) + zp_out) with r = Σ (x − zp_in) over
 * the window (avg) or max(x) − zp_in (max). (m, s) = ct_quant_multiplier_shift_bits(s_in /
 * (s_out · count), 16): count = kh·kw for AvgPool (padding counted: count_include_pad = 1,
 * or no padding), H·W for GlobalAvgPool, 1 for MaxPool and ReduceMax, the axis length for
 * ReduceMean, 1 for ReduceSum. False if a scale is not > 0, count < 1, or the factor is
 * ≥ 32767.5. */
bool ct_quant_pool_params(double s_in, double s_out, int64_t count, int32_t *m, int *s);

/* ELTWISE parameters (isa.def: 16-bit m_a, m_b; 6-bit s_a, s_b, s_out) for out = A op B
 * with A = (a − zp_a)·s_a real, B likewise, out quantized (s_o, zp_o, out):
 *  - ADD, SUB, MAX, MIN: both operands are brought to a common fixed-point scale,
 *    a' = rshift_round((a − zp_a)·m_a, sh_a) ≈ A / s_o · 2^s_out, b' likewise, then
 *    out = rshift_round(a' op b', s_out) + zp_o. (m_x, t_x) = multiplier_shift_bits(s_x /
 *    s_o, 16), s_out = the smaller t_x, sh_x = t_x − s_out (a' keeps s_out fraction bits;
 *    |a − zp_a|·|m_a| ≤ 65535·32767 < 2^31, so a' never saturates).
 *  - MUL: a' = (a − zp_a)·m, b' = b − zp_b, out = rshift_round(a'·b', s_out) + zp_o with
 *    (m, s_out) = multiplier_shift_bits(s_a·s_b / s_o, 16): one rounding.
 * p->act = NONE (callers set act / act_hi for a fused ReLU). Returns false if a scale is not
 * > 0, op is unknown, a type is not i8 / u8 / i16 (ELTWISE's integer types), or a ratio is
 * ≥ 32767.5 (not representable in 16 bits). */
bool ct_quant_eltwise_params(ct_quant_elt_op op, ct_quant_param a, ct_quant_param b, ct_quant_param o,
                             ct_quant_elt *p);

/* Activation functions tabulated into int8/uint8 LUTs (ONNX operator definitions; alpha and
 * beta as the ONNX attributes, defaults in docs/quant.md). */
typedef enum ct_quant_lut_fn {
  CT_QUANT_LUT_SIGMOID,     /* 1 / (1 + e^-x) */
  CT_QUANT_LUT_TANH,        /* tanh x */
  CT_QUANT_LUT_SILU,        /* x · sigmoid(x) */
  CT_QUANT_LUT_HARDSIGMOID, /* max(0, min(1, alpha·x + beta)) (ONNX 0.2, 0.5) */
  CT_QUANT_LUT_HARDSWISH,   /* x · max(0, min(1, x/6 + 1/2)) */
  CT_QUANT_LUT_GELU,        /* x/2 · (1 + erf(x/√2)) */
  CT_QUANT_LUT_GELU_TANH,   /* x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))) (approximate="tanh") */
  CT_QUANT_LUT_EXP,         /* e^x */
  CT_QUANT_LUT_LOG,         /* ln x (x ≤ 0: −inf, saturates) */
  CT_QUANT_LUT_SQRT,        /* √x (x < 0: NaN, gives zp_out) */
  CT_QUANT_LUT_RECIPROCAL,  /* 1 / x (0: +inf, saturates) */
  CT_QUANT_LUT_LEAKYRELU,   /* x ≥ 0 ? x : alpha·x (ONNX 0.01) */
  CT_QUANT_LUT_ELU,         /* x ≥ 0 ? x : alpha·(e^x − 1) (ONNX 1) */
  CT_QUANT_LUT_SOFTPLUS,    /* ln(1 + e^x) */
  CT_QUANT_LUT_MISH,        /* x · tanh(softplus(x)) */
  CT_QUANT_LUT_ABS,         /* |x| */
  CT_QUANT_LUT_GREATER,     /* x > alpha ? 1 : 0 (a mask: Greater with a constant, cast to float) */
  CT_QUANT_LUT_GREATEREQ,   /* x ≥ alpha ? 1 : 0 */
  CT_QUANT_LUT_LESS,        /* x < alpha ? 1 : 0 */
  CT_QUANT_LUT_LESSEQ,      /* x ≤ alpha ? 1 : 0 */
  CT_QUANT_LUT_COUNT
} ct_quant_lut_fn;

/* One tabulated function with its ONNX attributes, followed by a scalar affine map the
 * lowering folded in: the table holds f(x)·post_mul + post_add. */
typedef struct ct_quant_lut_spec {
  ct_quant_lut_fn fn;
  double alpha, beta;
  double post_mul, post_add;
} ct_quant_lut_spec;

/* The spec with ONNX's default attributes for fn (HardSigmoid 0.2 / 0.5, LeakyRelu 0.01,
 * Elu 1; others 0) and no affine map (post_mul 1, post_add 0). */
ct_quant_lut_spec ct_quant_lut_default(ct_quant_lut_fn fn);
/* Evaluates the function of spec (a const ct_quant_lut_spec *, passed as void * so that it
 * fits ct_quant_lut_build's callback) at x, in double: f(x)·post_mul + post_add. */
double ct_quant_lut_eval(double x, void *spec);
/* Name of fn ("sigmoid", "hardswish", ...), NULL if out of range. */
const char *ct_quant_lut_name(ct_quant_lut_fn fn);
/* The LUT instruction's 256-byte table of spec for input (in) and output (out) parameters:
 * ct_quant_lut_build(ct_quant_lut_eval, spec, ...). False as ct_quant_lut_build, or for an
 * unknown function. */
bool ct_quant_lut_make(const ct_quant_lut_spec *spec, ct_quant_param in, ct_quant_param out,
                       uint8_t table[256]);

/* The 16-bit LUT table (CT_QUANT_LUT16_ENTRIES int16) of spec from an i16 input (in: dt i16,
 * zp 0) to an 8-bit output: ct_quant_lut16_build(ct_quant_lut_eval, spec, ...). False as it,
 * for an unknown function, or an input that is not i16 with zero point 0. */
bool ct_quant_lut16_make(const ct_quant_lut_spec *spec, ct_quant_param in, ct_quant_param out,
                         int16_t table[CT_QUANT_LUT16_ENTRIES]);

/* Float view of a stored tensor (quant_tensor.c): a new f32 tensor of t's shape and name with
 * (q − zp)·scale for an integer tensor with quant params (per channel along quant_axis),
 * the values themselves for any other dtype (bf16/f16 widened exactly). NULL when out of
 * memory. */
ct_tensor *ct_quant_dequant_tensor(const ct_tensor *t);

#endif
