/* quant.h: the integer arithmetic of ctpu, defined once (ARCHITECTURE.md §4.1, docs/quant.md):
 * rounding shifts, requantization, saturation, multiplier/shift search (TPU-MLIR
 * get_scale_and_shift), float<->int quantization, symmetric scales, LUTs, bf16/f16. */
#ifndef CT_QUANT_H
#define CT_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/tensor.h"

/* Fused activation in the quantized domain (same numbering as isa.def's ACT kind). */
typedef enum ct_quant_act { CT_QUANT_ACT_NONE, CT_QUANT_ACT_RELU, CT_QUANT_ACT_CLAMP } ct_quant_act;

/* Elementwise binary operations (same numbering as isa.def's ELT kind). */
typedef enum ct_quant_elt_op {
  CT_QUANT_ELT_ADD, CT_QUANT_ELT_SUB, CT_QUANT_ELT_MUL, CT_QUANT_ELT_MAX, CT_QUANT_ELT_MIN
} ct_quant_elt_op;

/* Arithmetic right shift with rounding, ties toward +inf (TPU-MLIR ROUNDING_HALF_UP):
 * s = 0 returns x; s in 1..63 returns (x + 2^(s-1)) >> s computed without overflow (as if
 * in unbounded integers, then floor division by 2^s). s outside 0..63 is clamped into it. */
int64_t ct_quant_rshift_round(int64_t x, int s);

/* Smallest and largest value of an integer storage type (i8, u8, i16, u16, i32, u32 as
 * int64; other types give the i32 range). */
int64_t ct_quant_min(ct_dtype dt);
int64_t ct_quant_max(ct_dtype dt);
/* Clamps x to the range of dt (saturation). */
int64_t ct_quant_saturate(int64_t x, ct_dtype dt);

/* Requantization: y = sat_dt(rshift_round(acc * m, s) + zp) with the product in int64
 * (exact for int32 acc and m). s in 0..63. */
int32_t ct_quant_requant(int32_t acc, int32_t m, int s, int32_t zp, ct_dtype out);

/* Requantization of a wider value with a fused activation, the one routine every
 * integer opcode ends with: v = rshift_round(x * m, s) + zp; RELU: v = max(v, zp); CLAMP:
 * v = min(max(v, zp), hi); then saturate to dt (ARCHITECTURE.md §4.1: clamp before
 * saturation). Callers guarantee |x * m| < 2^63 (isa.def widths do). */
int32_t ct_quant_requant_act(int64_t x, int32_t m, int s, int32_t zp, ct_quant_act act, int32_t hi,
                             ct_dtype out);

/* Real multiplier M → (m, s) minimizing |m·2^-s − M| with |m| < 2^31 and s in 0..63
 * (TPU-MLIR get_scale_and_shift: the largest s that keeps m in range, m = round half away
 * from zero of M·2^s). M = 0 gives (0, 0). Returns false (m = s = 0) if M is not finite or
 * |M| ≥ 2^31 - 0.5 (not representable with s ≥ 0). */
bool ct_quant_multiplier_shift(double M, int32_t *m, int *s);
/* The same search with |m| ≤ 2^(bits-1) − 1 (bits 2..32): bits 8 gives the 8-bit
 * multipliers of elementwise/pool ops (|m| ≤ 127), bits 16 the 16-bit ones of isa.def's
 * ELTWISE/POOL/REDUCE fields. */
bool ct_quant_multiplier_shift_bits(double M, int bits, int32_t *m, int *s);

/* Round half away from zero (2.5 → 3, -2.5 → -3), then saturate to dt. NaN gives 0. */
int64_t ct_quant_round_sat(double x, ct_dtype dt);
/* Quantizes a real value: sat_dt(round_half_away(x / scale) + zp), the division in double.
 * scale must be > 0. */
int32_t ct_quant_quantize(double x, double scale, int32_t zp, ct_dtype dt);
/* Dequantizes: (q − zp) · scale in double. */
double ct_quant_dequantize(int32_t q, double scale, int32_t zp);

/* Symmetric activation scale: threshold / 127 for i8, threshold / 255 for u8 (threshold of
 * a calibration table, > 0); other types: threshold / max(dt). */
double ct_quant_scale_sym(double threshold, ct_dtype dt);
/* Per-output-channel weight scales: scale[o] = max|w[o, :]| / 127 over the `per_oc`
 * elements of channel o (OIHW: per_oc = I*H*W); a channel of zeros gets scale 1. */
void ct_quant_weight_scales(const float *w, int64_t oc, int64_t per_oc, double *scale);
/* Bias quantization: sat_i32(round_half_away(b / (s_w · s_in))). */
int32_t ct_quant_bias(double b, double s_w, double s_in);

/* LUT index of an 8-bit input value v of type in (i8 or u8): v − min(in), 0..255. */
int ct_quant_lut_index(int32_t v, ct_dtype in);
/* Builds a 256-entry table T[i] = quantize(f(dequantize(min(in) + i))) (ARCHITECTURE.md
 * §4.1): in, out are i8 or u8; entries are stored as bytes (two's complement for i8).
 * f gets ctx. Returns false if in/out are not 8-bit types or scales are not > 0. */
bool ct_quant_lut_build(double (*f)(double x, void *ctx), void *ctx, double s_in, int32_t zp_in,
                        ct_dtype in, double s_out, int32_t zp_out, ct_dtype out, uint8_t table[256]);

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

/* One ELTWISE output element from stored operands a, b (int32 holding the storage values):
 * the formula above, every rounding rshift_round (half toward +inf), saturated to p->out. */
int32_t ct_quant_eltwise(const ct_quant_elt *p, int32_t a, int32_t b);

/* IEEE half and bfloat16, round to nearest even: thin wrappers of common/tensor.h (one
 * definition). ct_quant_round_float rounds x to the precision of dt (bf16, f16; f32: x). */
uint16_t ct_quant_f32_to_bf16(float x);
float ct_quant_bf16_to_f32(uint16_t b);
uint16_t ct_quant_f32_to_f16(float x);
float ct_quant_f16_to_f32(uint16_t h);
float ct_quant_round_float(float x, ct_dtype dt);

#endif
