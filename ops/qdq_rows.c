/* qdq_rows.c: QuantizeLinear / DequantizeLinear rows in 16 AVX-512 lanes (qdq_rows.h): the
 * division, the max / min clamp (value second: NaN passes, then is replaced), the rounding
 * by 1.5·2^23, the exact conversions and the 8-bit narrowing (in range after the clamp) are
 * each the scalar row's operation, lane by lane. */
#include "ops/qdq_rows.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Has the CPU AVX-512 F, BW and VL? */
static bool have_avx512(void) {
  static int known = -1; /* a benign race: every thread stores the same value */
  if (known < 0)
    known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return known == 1;
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) static void q_row(const float *x, uint8_t *y, int64_t n, float s, int32_t zp,
                                                     float lo, float hi) {
  const __m512 sv = _mm512_set1_ps(s), lv = _mm512_set1_ps(lo), hv = _mm512_set1_ps(hi), z0 = _mm512_set1_ps((float)-zp);
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512i zv = _mm512_set1_epi32(zp);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
    __m512 r = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), sv);
    __m512 v = _mm512_min_ps(hv, _mm512_max_ps(lv, r));
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), v, z0);
    v = _mm512_sub_ps(_mm512_add_ps(v, magic), magic);
    __m512i q = _mm512_add_epi32(_mm512_cvttps_epi32(v), zv);
    _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(q));
  }
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) static void dq_row(const uint8_t *x, bool is_u8, float *y, int64_t n, float s,
                                                      int32_t zp) {
  const __m512 sv = _mm512_set1_ps(s);
  const __m512i zv = _mm512_set1_epi32(zp);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
    __m128i b = _mm_maskz_loadu_epi8(m, x + i);
    __m512i v = is_u8 ? _mm512_cvtepu8_epi32(b) : _mm512_cvtepi8_epi32(b);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, zv)), sv));
  }
}

bool ct_qdq_q_row512(const float *x, void *y, bool is_u8, int64_t n, float s, int32_t zp, float lo, float hi) {
  (void)is_u8; /* the narrowing keeps the low byte: the same for u8 and i8 values in range */
  if (!have_avx512()) return false;
  q_row(x, y, n, s, zp, lo, hi);
  return true;
}

bool ct_qdq_dq_row512(const void *x, bool is_u8, float *y, int64_t n, float s, int32_t zp) {
  if (!have_avx512()) return false;
  dq_row(x, is_u8, y, n, s, zp);
  return true;
}
#else
bool ct_qdq_q_row512(const float *x, void *y, bool is_u8, int64_t n, float s, int32_t zp, float lo, float hi) {
  (void)x, (void)y, (void)is_u8, (void)n, (void)s, (void)zp, (void)lo, (void)hi;
  return false;
}

bool ct_qdq_dq_row512(const void *x, bool is_u8, float *y, int64_t n, float s, int32_t zp) {
  (void)x, (void)is_u8, (void)y, (void)n, (void)s, (void)zp;
  return false;
}
#endif
