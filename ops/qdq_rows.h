/* qdq_rows.h: the f32 <-> u8 / i8 rows of QuantizeLinear and DequantizeLinear
 * (ops/tensor_generator.c) in 16 AVX-512 lanes (qdq_rows.c): the same IEEE operations as the
 * scalar rows, so the same results. Private to ops/. */
#ifndef CT_OPS_QDQ_ROWS_H
#define CT_OPS_QDQ_ROWS_H

#include <stdbool.h>
#include <stdint.h>

/* Quantize: y[i] = (int32_t)rne(clamp(x[i] / s, lo, hi)) + zp, rne by adding and subtracting
 * 1.5·2^23, the clamp v < lo ? lo : v then v > hi ? hi : v, a NaN quotient giving -zp (so
 * y = 0); y is u8 (is_u8) or i8, and lo, hi keep every result in the type's range. False, y
 * untouched, without AVX-512 (F, BW, VL). */
bool ct_qdq_q_row512(const float *x, void *y, bool is_u8, int64_t n, float s, int32_t zp, float lo, float hi);
/* Dequantize: y[i] = (float)((int32_t)x[i] − zp) · s, x u8 (is_u8) or i8. False, y
 * untouched, without AVX-512 (F, BW, VL). */
bool ct_qdq_dq_row512(const void *x, bool is_u8, float *y, int64_t n, float s, int32_t zp);

#endif
