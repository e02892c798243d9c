/* quant_onnx.c: ONNX QuantizeLinear over rows of float32 (ONNX operator spec: round half to
 * even, saturate), in a form compilers vectorize: clamp, then round with the 1.5·2^23
 * add/subtract (IEEE round-to-nearest-even of a sum whose ulp is 1). */
#include <math.h>

#include "quant/quant.h"

#define RNE_MAGIC 12582912.0f /* 1.5 · 2^23 */

/* One element: r = x / s clamped to [lo, hi] (NaN → 0), rounded half to even, plus zp. */
#define Q_ONE(T, i)                                                \
  do {                                                             \
    float r = x[i] / s, v = r < lo ? lo : r;                       \
    v = v > hi ? hi : v;                                           \
    v = r != r ? 0.0f : v;                                         \
    y[i] = (T)((int32_t)((v + RNE_MAGIC) - RNE_MAGIC) + zp);       \
  } while (0)

/* Blocks of 8 so that GCC's -O2 cost model vectorizes the loop. */
#define Q_ROW(T, name)                                                                         \
  static void name(const float *restrict x, T *restrict y, int64_t n, float s, int32_t zp, float lo, \
                   float hi) {                                                                 \
    int64_t m = n - n % 8, i;                                                                  \
    for (i = 0; i < m; i += 8)                                                                 \
      for (int k = 0; k < 8; k++) Q_ONE(T, i + k);                                             \
    for (i = m; i < n; i++) Q_ONE(T, i);                                                       \
  }
Q_ROW(int8_t, row_i8)
Q_ROW(uint8_t, row_u8)
#undef Q_ROW
#undef Q_ONE

bool ct_quant_quantize_onnx_row(const float *x, int64_t n, float scale, int32_t zp, ct_dtype dt, void *y) {
  if (dt != CT_I8 && dt != CT_U8) return false;
  /* Clamping to the integer bounds minus zp before rounding equals saturating after. */
  float lo = (float)(ct_quant_min(dt) - zp), hi = (float)(ct_quant_max(dt) - zp);
  if (dt == CT_I8) row_i8(x, y, n, scale, zp, lo, hi);
  else row_u8(x, y, n, scale, zp, lo, hi);
  return true;
}
