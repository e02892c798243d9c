/* math_act.c: Sigmoid, SiLU and HardSwish rows in AVX-512 (math_act.h). GCC vectorizes the
 * scalar formulas of quant/float_fn.h only 8 wide (HardSwish's double 4 wide, with shuffles
 * around each conversion), spilling their constants and blending by vector selects; written
 * here with intrinsics they keep every constant in a register and select by masks. Each step is the scalar formula's own IEEE operation (no FMA: the build
 * has -ffp-contract=off and no fmadd is written), so the bits are the scalar ones. */
#include "ops/math_act.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* ct_quant_fn_exp_nonpos(t), then sigmoid / silu of v (t = -|v|), 16 lanes. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 sigm16(__m512 v, bool silu) {
  const __m512 lo = _mm512_set1_ps(-104.0f), shift = _mm512_set1_ps(12582912.0f), one = _mm512_set1_ps(1.0f);
  __m512 t = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN))); /* -|v| */
  __mmask16 under = _mm512_cmp_ps_mask(t, lo, _CMP_LT_OQ);
  __m512 tc = _mm512_mask_blend_ps(under, t, lo);
  __m512 kb = _mm512_add_ps(_mm512_mul_ps(tc, _mm512_set1_ps(1.44269504f)), shift), k = _mm512_sub_ps(kb, shift);
  __m512 r = _mm512_add_ps(_mm512_sub_ps(tc, _mm512_mul_ps(k, _mm512_set1_ps(0.693359375f))),
                           _mm512_mul_ps(k, _mm512_set1_ps(2.12194440e-4f)));
  __m512 q = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(1.0f / 5040), r), _mm512_set1_ps(1.0f / 720));
  q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(1.0f / 120));
  q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(1.0f / 24));
  q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(1.0f / 6));
  q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(0.5f));
  __m512 p = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(q, r), r), r), one);
  __m512i e2 = _mm512_slli_epi32(_mm512_add_epi32(_mm512_castps_si512(kb), _mm512_set1_epi32(25)), 23);
  p = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(p), e2));
  __m512 e = _mm512_maskz_mov_ps((__mmask16)~under, _mm512_mul_ps(p, _mm512_set1_ps(0x1p-25f)));
  __m512 num = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ), e, one);
  __m512 y = _mm512_div_ps(num, _mm512_add_ps(one, e));
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_EQ_OQ), v, y); /* NaN stays NaN */
  return silu ? _mm512_mul_ps(v, y) : y;
}

__attribute__((target("avx512f"))) static void sigm_row(const float *x, float *y, int64_t n, bool silu) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, sigm16(_mm512_loadu_ps(x + i), silu));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, sigm16(_mm512_maskz_loadu_ps(m, x + i), silu));
  }
}

/* ct_quant_fn_hswish of 8 floats, in double: v · clamp((v + 3) · (1/6), 0, 1). */
__attribute__((target("avx512f"), always_inline)) static inline __m256 hswish8(__m256 x) {
  __m512d v = _mm512_cvtps_pd(x), zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0);
  __m512d t = _mm512_mul_pd(_mm512_add_pd(v, _mm512_set1_pd(3.0)), _mm512_set1_pd(1.0 / 6));
  t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(t, zero, _CMP_LT_OQ), t, zero);
  t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(t, one, _CMP_GT_OQ), t, one);
  return _mm512_cvtpd_ps(_mm512_mul_pd(v, t));
}

__attribute__((target("avx512f"))) static void hswish_row(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 a = hswish8(_mm256_loadu_ps(x + i)), b = hswish8(_mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(y + i, a), _mm256_storeu_ps(y + i + 8, b);
  }
  for (; i < n; i += 8) {
    __mmask8 m = n - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - i)) - 1);
    __m256 v = _mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, x + i));
    _mm512_mask_storeu_ps(y + i, m, _mm512_castps256_ps512(hswish8(v)));
  }
}

/* Has the CPU AVX-512F? */
static bool have_avx512(void) {
  static int known = -1; /* a benign race: every thread stores the same value */
  if (known < 0) known = __builtin_cpu_supports("avx512f") ? 1 : 0;
  return known == 1;
}

bool ct_unary_sigm_row(const float *x, float *y, int64_t n, bool silu) {
  if (!have_avx512()) return false;
  sigm_row(x, y, n, silu);
  return true;
}

bool ct_unary_hswish_row(const float *x, float *y, int64_t n) {
  if (!have_avx512()) return false;
  hswish_row(x, y, n);
  return true;
}
#else
bool ct_unary_sigm_row(const float *x, float *y, int64_t n, bool silu) {
  (void)x, (void)y, (void)n, (void)silu;
  return false;
}

bool ct_unary_hswish_row(const float *x, float *y, int64_t n) {
  (void)x, (void)y, (void)n;
  return false;
}
#endif
