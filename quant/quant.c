/* quant.c: the integer arithmetic of ctpu (see quant.h, docs/quant.md). Rounding shift and
 * requantization follow TPU-MLIR's ROUNDING_HALF_UP right shift; the multiplier search
 * follows TPU-MLIR get_scale_and_shift (largest shift that keeps the multiplier in range). */
#include "quant/quant.h"
#include "common/clones.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

int32_t ct_quant_requant(int32_t acc, int32_t m, int s, int32_t zp, ct_dtype out) {
  return ct_quant_requant_act(acc, m, s, zp, CT_QUANT_ACT_NONE, 0, out);
}

/* One loop per output type, so that the saturation bounds and the store are constants; each
 * element is ct_quant_requant_act itself (the one definition), s and act loop-invariant.
 * CT_CLONES_V4: AVX2 has the lanes GCC needs to vectorize their int64 arithmetic, AVX-512 its
 * shifts, minima and maxima. */
#define RQ_ROW(T, DT)                                                                          \
  do {                                                                                         \
    for (int64_t i = 0; i < n; i++) ((T *)y)[i] = (T)ct_quant_requant_act(x[i], m, s, zp, act, hi, DT); \
    return true;                                                                               \
  } while (0)
#define RQ_ROW_TYPES                        \
  switch (out) {                            \
  case CT_I8: RQ_ROW(int8_t, CT_I8);        \
  case CT_U8: RQ_ROW(uint8_t, CT_U8);       \
  case CT_I16: RQ_ROW(int16_t, CT_I16);     \
  case CT_U16: RQ_ROW(uint16_t, CT_U16);    \
  case CT_I32: RQ_ROW(int32_t, CT_I32);     \
  default: return false;                    \
  }

CT_CLONES_V4 static bool ct_quant_requant_act_row_clones(const int64_t *x, int64_t n, int32_t m, int s, int32_t zp, ct_quant_act act,
                                                      int32_t hi, ct_dtype out, void *y) {
  RQ_ROW_TYPES
}

bool ct_quant_requant_act_row(const int64_t *x, int64_t n, int32_t m, int s, int32_t zp, ct_quant_act act,
                              int32_t hi, ct_dtype out, void *y) {
  return ct_quant_requant_act_row_clones(x, n, m, s, zp, act, hi, out, y);
}

/* The bounds ct_quant_requant_act clamps to for (zp, act, hi, out): its tail applied to the
 * most negative and the most positive shifted value (multiplier 1, shift 0), a monotone map
 * that is the identity between the two. */
static void requant_limits(int32_t zp, ct_quant_act act, int32_t hi, ct_dtype out, int64_t *lo, int64_t *up) {
  *lo = ct_quant_requant_act(INT64_MIN / 2, 1, 0, zp, act, hi, out);
  *up = ct_quant_requant_act(INT64_MAX / 2, 1, 0, zp, act, hi, out);
}

/* The int32 row in a shorter form: for an int32 x and m the product p is at most 2^62 in
 * magnitude, so rshift_round(p, s) = (p + 2^(s−1)) >> s without overflow for
 * s ≤ 62 (s ≥ 63 takes the generic form); and the activation with the saturation is one clamp
 * to [lim_lo, lim_hi] (requant_limits). Equal element by element to ct_quant_requant_act
 * (test_quant). */
#define RQ32_ROW(T)                                                                             \
  do {                                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                           \
      int64_t v = (((int64_t)x[i] * m + rnd) >> s) + zp;                                       \
      v = v < lim_lo ? lim_lo : v;                                                              \
      ((T *)y)[i] = (T)(v > lim_hi ? lim_hi : v);                                               \
    }                                                                                           \
    return true;                                                                                \
  } while (0)

CT_CLONES_V4 static bool ct_quant_requant_act_row_i32_clones(const int32_t *x, int64_t n, int32_t m, int s, int32_t zp,
                                                          ct_quant_act act, int32_t hi, ct_dtype out, void *y) {
  if (s >= 63) RQ_ROW_TYPES /* p + 2^62 may reach 2^63: the generic form */
  if (s < 0) s = 0;
  const int64_t rnd = s > 0 ? INT64_C(1) << (s - 1) : 0;
  int64_t lim_lo, lim_hi;
  requant_limits(zp, act, hi, out, &lim_lo, &lim_hi);
  switch (out) {
  case CT_I8: RQ32_ROW(int8_t);
  case CT_U8: RQ32_ROW(uint8_t);
  case CT_I16: RQ32_ROW(int16_t);
  case CT_U16: RQ32_ROW(uint16_t);
  case CT_I32: RQ32_ROW(int32_t);
  default: return false;
  }
}
#undef RQ32_ROW

#if CT_X86_SIMD
#include <immintrin.h>

/* Is out a type the AVX2 rows store (rq32_store)? */
static bool rq32_typed(ct_dtype out) {
  return out == CT_I8 || out == CT_U8 || out == CT_I16 || out == CT_U16 || out == CT_I32;
}

/* Do the AVX2 rows below run: AVX2 without AVX-512, where the v4 clones run instead? */
static bool avx2_only(void) { return ct_cpu_avx2() && !ct_cpu_avx512(); }

/* Stores 8 int32 lanes v, each within out's range, as out's C type at element i of y: the
 * low bytes of each lane. */
__attribute__((target("avx2"))) static inline void rq32_store(__m256i v, ct_dtype out, void *y, int64_t i) {
  /* bytes 0 (and 1) of every dword of a 128-bit lane to its low 4 (8) bytes */
  const __m256i b8 = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i b16 = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,
                                       0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
  if (out == CT_I32) {
    _mm256_storeu_si256((__m256i *)((int32_t *)y + i), v);
  } else if (out == CT_I8 || out == CT_U8) {
    __m256i b = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, b8), _mm256_setr_epi32(0, 4, 1, 2, 3, 5, 6, 7));
    _mm_storel_epi64((__m128i *)((uint8_t *)y + i), _mm256_castsi256_si128(b));
  } else {
    __m256i b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, b16), 0x08);
    _mm_storeu_si128((__m128i *)((uint16_t *)y + i), _mm256_castsi256_si128(b));
  }
}

/* RQ32_ROW on 8 lanes with AVX2 alone (CPUs without AVX-512, where the v3 clone runs the
 * int64 lanes one by one: AVX2 has no 64-bit arithmetic shift, min or max). Per 4 lanes of
 * int64 products (_mm256_mul_epi32 of the even and the odd int32s): p + rnd, the arithmetic
 * shift as a logical one of p + 2^63 (p ^ sign bit) minus 2^(63−s), which is exact because
 * 2^s divides 2^63; + zp; the clamp to [lim_lo, lim_hi] by 64-bit compares; then the low
 * bytes of each lane, which hold the value since it is in out's range. The same integers as
 * RQ32_ROW element by element (test_quant); s in 0..62. Returns the elements done (a
 * multiple of 8); the caller finishes the tail.
 * With s ≥ 33 the lanes stay 32-bit: writing p = h·2^32 + l (h = p >> 32, 0 ≤ l < 2^32),
 * (p + 2^(s−1)) >> s = (h + 2^(s−33)) >> (s − 32) exactly, as l / 2^32 < 1 never carries
 * past an integer that the division by 2^(s−32) floors; |h| ≤ 2^30, so no lane overflows,
 * and zp and the clamp follow in int32 (the limits are out's values). */
__attribute__((target("avx2"))) static int64_t rq32_avx2(const int32_t *x, int64_t n, int32_t m, int s, int32_t zp,
                                                         int64_t lim_lo, int64_t lim_hi, ct_dtype out, void *y) {
  const int64_t add = (int64_t)((uint64_t)(int64_t)zp - ((UINT64_C(1) << 63) >> s)); /* zp − 2^(63−s), mod 2^64 */
  const __m256i mv = _mm256_set1_epi64x(m), sign = _mm256_set1_epi64x(INT64_MIN), addv = _mm256_set1_epi64x(add);
  const __m256i lo = _mm256_set1_epi64x(lim_lo), hi = _mm256_set1_epi64x(lim_hi);
  const __m256i rnd = _mm256_set1_epi64x(s > 0 ? INT64_C(1) << (s - 1) : 0);
  const __m128i sh = _mm_cvtsi32_si128(s);
  int64_t i = 0;
  if (s >= 33) { /* 32-bit lanes (above) */
    const __m256i r32 = _mm256_set1_epi32(1 << (s - 33)), zpv = _mm256_set1_epi32(zp);
    const __m256i lo32 = _mm256_set1_epi32((int32_t)lim_lo), hi32 = _mm256_set1_epi32((int32_t)lim_hi);
    const __m128i sh32 = _mm_cvtsi32_si128(s - 32);
    for (; i + 8 <= n; i += 8) {
      __m256i xv = _mm256_loadu_si256((const __m256i *)(x + i));
      __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(_mm256_mul_epi32(xv, mv), 32),
                                     _mm256_mul_epi32(_mm256_srli_epi64(xv, 32), mv), 0xaa); /* (x·m) >> 32 */
      __m256i v = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(h, r32), sh32), zpv);
      rq32_store(_mm256_min_epi32(_mm256_max_epi32(v, lo32), hi32), out, y, i);
    }
    return i;
  }
  for (; i + 8 <= n; i += 8) {
    __m256i xv = _mm256_loadu_si256((const __m256i *)(x + i)), r[2];
    __m256i p[2] = {_mm256_mul_epi32(xv, mv), _mm256_mul_epi32(_mm256_srli_epi64(xv, 32), mv)};
    for (int h = 0; h < 2; h++) {
      __m256i v = _mm256_xor_si256(_mm256_add_epi64(p[h], rnd), sign);
      v = _mm256_add_epi64(_mm256_srl_epi64(v, sh), addv);
      v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
      r[h] = _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
    }
    rq32_store(_mm256_blend_epi32(r[0], _mm256_slli_epi64(r[1], 32), 0xaa), out, y, i); /* lanes 0..7 as int32 */
  }
  return i;
}

#endif

bool ct_quant_requant_act_row_i32(const int32_t *x, int64_t n, int32_t m, int s, int32_t zp,
                                  ct_quant_act act, int32_t hi, ct_dtype out, void *y) {
#if CT_X86_SIMD
  if (n >= 8 && s < 63 && rq32_typed(out) && avx2_only()) {
    int sh = s < 0 ? 0 : s;
    int64_t lim_lo, lim_hi;
    requant_limits(zp, act, hi, out, &lim_lo, &lim_hi);
    int64_t done = rq32_avx2(x, n, m, sh, zp, lim_lo, lim_hi, out, y);
    return ct_quant_requant_act_row_i32_clones(x + done, n - done, m, s, zp, act, hi, out,
                                               (char *)y + (size_t)done * (size_t)ct_dtype_size(out));
  }
#endif
  return ct_quant_requant_act_row_i32_clones(x, n, m, s, zp, act, hi, out, y);
}
#undef RQ_ROW_TYPES
#undef RQ_ROW

/* r[i] = ct_quant_eltwise_acc of element i, one loop per operation (the parameters in a
 * local no store through r aliases, so each loop knows its operation and vectorizes). */
CT_CLONES_V4 static void eltwise_acc_row(const ct_quant_elt *p, const int32_t *a, const int32_t *b, int64_t n, int64_t *r) {
  ct_quant_elt q = *p;
  switch (q.op) {
  case CT_QUANT_ELT_ADD: for (int64_t i = 0; i < n; i++) r[i] = ct_quant_eltwise_acc(&q, a[i], b[i]); break;
  case CT_QUANT_ELT_SUB: for (int64_t i = 0; i < n; i++) r[i] = ct_quant_eltwise_acc(&q, a[i], b[i]); break;
  case CT_QUANT_ELT_MUL: for (int64_t i = 0; i < n; i++) r[i] = ct_quant_eltwise_acc(&q, a[i], b[i]); break;
  case CT_QUANT_ELT_MAX: for (int64_t i = 0; i < n; i++) r[i] = ct_quant_eltwise_acc(&q, a[i], b[i]); break;
  default: for (int64_t i = 0; i < n; i++) r[i] = ct_quant_eltwise_acc(&q, a[i], b[i]); break;
  }
}

#define ELT_CHUNK 512

#if CT_X86_SIMD
/* v clamped to the int32 range. */
static int32_t i32_clamp(int64_t v) { return (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v); }

/* The largest |v − zp| whose v' = rshift_round((v − zp)·m, s) stays below 2^29 in magnitude,
 * −1 when none does or s is outside 0..28: then every int32 step of eltwise_avx2 is exact. */
static int64_t elt_lane_limit(int32_t m, int s) {
  if (s < 0 || s > 28) return -1;
  int64_t room = (INT64_C(1) << 29) - (s ? INT64_C(1) << (s - 1) : 0), am = m < 0 ? -(int64_t)m : m;
  return am ? room / am - 1 : INT64_C(1) << 30;
}

/* ct_quant_eltwise over 8 lanes at a time with AVX2 alone, for ADD, SUB, MAX and MIN while
 * every |a − zp_a| and |b − zp_b| is within elt_lane_limit (checked per vector: the first
 * vector outside stops it) and s_out ≤ 28: a' and b' are then below 2^29, so the int32
 * product, rounding shift, saturation (none happens) and a' op b' (below 2^30) are the int64
 * values of ct_quant_eltwise_acc, and the requant with multiplier 1 is RQ32_ROW's (+ 2^(s−1),
 * >> s, + zp, the clamp to the limits). Returns the elements done (a multiple of 8). */
__attribute__((target("avx2"))) static int64_t eltwise_avx2(const ct_quant_elt *p, const int32_t *a, const int32_t *b,
                                                            int64_t n, int64_t la, int64_t lb, void *y) {
  int64_t lim_lo, lim_hi;
  requant_limits(p->zp_out, p->act, p->act_hi, p->out, &lim_lo, &lim_hi);
  const __m256i zpa = _mm256_set1_epi32(p->zp_a), zpb = _mm256_set1_epi32(p->zp_b), ma = _mm256_set1_epi32(p->m_a);
  const __m256i mb = _mm256_set1_epi32(p->m_b);
  /* a in [zp_a − la, zp_a + la] (within int32), likewise b: checked on a and b themselves */
  const __m256i alo = _mm256_set1_epi32(i32_clamp((int64_t)p->zp_a - la));
  const __m256i ahi = _mm256_set1_epi32(i32_clamp((int64_t)p->zp_a + la));
  const __m256i blo = _mm256_set1_epi32(i32_clamp((int64_t)p->zp_b - lb));
  const __m256i bhi = _mm256_set1_epi32(i32_clamp((int64_t)p->zp_b + lb));
  const __m256i ra = _mm256_set1_epi32(p->s_a ? 1 << (p->s_a - 1) : 0);
  const __m256i rb = _mm256_set1_epi32(p->s_b ? 1 << (p->s_b - 1) : 0);
  const __m256i ro = _mm256_set1_epi32(p->s_out ? 1 << (p->s_out - 1) : 0), zo = _mm256_set1_epi32(p->zp_out);
  const __m256i lo = _mm256_set1_epi32((int32_t)lim_lo), hi = _mm256_set1_epi32((int32_t)lim_hi);
  const __m128i sa = _mm_cvtsi32_si128(p->s_a), sb = _mm_cvtsi32_si128(p->s_b), so = _mm_cvtsi32_si128(p->s_out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i av = _mm256_loadu_si256((const __m256i *)(a + i)), bv = _mm256_loadu_si256((const __m256i *)(b + i));
    __m256i out = _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi32(av, ahi), _mm256_cmpgt_epi32(alo, av)),
                                  _mm256_or_si256(_mm256_cmpgt_epi32(bv, bhi), _mm256_cmpgt_epi32(blo, bv)));
    if (!_mm256_testz_si256(out, out)) break; /* a lane outside the limits: the int64 form takes over */
    __m256i da = _mm256_sub_epi32(av, zpa), db = _mm256_sub_epi32(bv, zpb);
    __m256i x = _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(da, ma), ra), sa);
    __m256i z = _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(db, mb), rb), sb), r;
    switch (p->op) {
    case CT_QUANT_ELT_ADD: r = _mm256_add_epi32(x, z); break;
    case CT_QUANT_ELT_SUB: r = _mm256_sub_epi32(x, z); break;
    case CT_QUANT_ELT_MAX: r = _mm256_max_epi32(x, z); break;
    default: r = _mm256_min_epi32(x, z); break;
    }
    r = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(r, ro), so), zo);
    rq32_store(_mm256_min_epi32(_mm256_max_epi32(r, lo), hi), p->out, y, i);
  }
  return i;
}

/* The elements of a row eltwise_avx2 does before the int64 form (0 where it does not apply). */
static int64_t eltwise_fast(const ct_quant_elt *p, const int32_t *a, const int32_t *b, int64_t n, void *y) {
  int64_t la = elt_lane_limit(p->m_a, p->s_a), lb = elt_lane_limit(p->m_b, p->s_b);
  if (n < 8 || !rq32_typed(p->out) || p->op == CT_QUANT_ELT_MUL || la < 0 || lb < 0 || p->s_out < 0 || p->s_out > 28 ||
      !avx2_only())
    return 0;
  return eltwise_avx2(p, a, b, n, la, lb, y);
}
#endif

bool ct_quant_eltwise_row(const ct_quant_elt *p, const int32_t *a, const int32_t *b, int64_t n, void *y) {
  int64_t r[ELT_CHUNK];
  size_t es = (size_t)ct_dtype_size(p->out);
#if CT_X86_SIMD
  int64_t done = eltwise_fast(p, a, b, n, y);
  a += done, b += done, n -= done, y = (char *)y + (size_t)done * es;
#endif
  for (int64_t i = 0; i < n; i += ELT_CHUNK) {
    int64_t c = n - i < ELT_CHUNK ? n - i : ELT_CHUNK;
    eltwise_acc_row(p, a + i, b + i, c, r);
    if (!ct_quant_requant_act_row(r, c, 1, p->s_out, p->zp_out, p->act, p->act_hi, p->out, (char *)y + (size_t)i * es)) return false;
  }
  return true;
}
#undef ELT_CHUNK

bool ct_quant_multiplier_shift_bits(double M, int bits, int32_t *m, int *s) {
  *m = 0;
  *s = 0;
  if (bits < 2 || bits > 32 || !isfinite(M)) return false;
  if (M == 0) return true;
  double lim = ldexp(1.0, bits - 1) - 1; /* largest |m| */
  double a = fabs(M);
  if (round(a) > lim) return false;
  /* largest s in 0..63 with round(|M|·2^s) ≤ lim: more shift = more precision. */
  int best = 0;
  for (int k = 63; k >= 0; k--)
    if (round(ldexp(a, k)) <= lim) { best = k; break; }
  double q = round(ldexp(a, best)); /* round() is half away from zero */
  *m = (int32_t)(M < 0 ? -q : q);
  *s = best;
  return true;
}

bool ct_quant_multiplier_shift(double M, int32_t *m, int *s) {
  return ct_quant_multiplier_shift_bits(M, 32, m, s);
}


double ct_quant_round_half_even(double x) {
  if (!isfinite(x) || fabs(x) >= 0x1p52) return x; /* already an integer (or NaN / inf) */
  double f = floor(x), d = x - f;                  /* exact: f and x share the exponent range */
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return fmod(f, 2.0) == 0 ? f : f + 1; /* tie: the even neighbour */
}

int64_t ct_quant_round_sat(double x, ct_dtype dt) {
  if (isnan(x)) return 0;
  double r = ct_quant_round_half_away(x);
  double lo = (double)ct_quant_min(dt), hi = (double)ct_quant_max(dt);
  if (r <= lo) return ct_quant_min(dt);
  if (r >= hi) return ct_quant_max(dt);
  return (int64_t)r;
}

int32_t ct_quant_quantize(double x, double scale, int32_t zp, ct_dtype dt) {
  double v = ct_quant_round_half_away(x / scale);
  if (isnan(v)) v = 0;
  double lo = (double)ct_quant_min(dt) - zp, hi = (double)ct_quant_max(dt) - zp;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return (int32_t)ct_quant_saturate((int64_t)v + zp, dt);
}

/* ct_quant_quantize of one element in a form compilers vectorize (no libm call, no branch):
 * the quotient clamped to [lo, hi] = the type's range minus zp first (the same result as
 * clamping after the rounding, since lo and hi are integers), NaN as 0, then round half away
 * from zero as trunc(v + copysign(0.5 − 2^-54, v)), exact for |v| < 2^52 (the largest double
 * below 0.5 keeps v + 0.5 from rounding up when frac(v) is just under 0.5). */
static inline int32_t quantize_lane(float x, double scale, double lo, double hi, int32_t zp) {
  double v = (double)x / scale;
  v = v == v ? v : 0.0;
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return (int32_t)((int64_t)trunc(v + copysign(0x1.fffffffffffffp-2, v)) + zp);
}

/* The rows' clones: x86-64-v4 converts double lanes to int64 (vcvttpd2qq), which the
 * int64 cast needs to vectorize. Equal element by element to ct_quant_quantize (test_quant). */
CT_CLONES_V4 static void quantize_row_clones(const float *x, int64_t n, double scale, int32_t zp, ct_dtype dt, int32_t *y) {
  double lo = (double)ct_quant_min(dt) - zp, hi = (double)ct_quant_max(dt) - zp;
  for (int64_t i = 0; i < n; i++) y[i] = quantize_lane(x[i], scale, lo, hi, zp);
}

#if CT_X86_SIMD
/* quantize_lane on 4 double lanes with AVX2 alone (the v3 clone has no double → int64
 * conversion and runs lane by lane): the same division, NaN to 0, clamp, and add of
 * copysign(0.5 − 2^-54, v); the truncation to int32 (cvttpd2dq) is the int64 one, since the
 * clamped v ± 0.5 is within int32 for the 8- and 16-bit types the caller allows. Returns the
 * elements done (a multiple of 4). */
__attribute__((target("avx2"))) static int64_t quantize_avx2(const float *x, int64_t n, double scale, double lo, double hi,
                                                             int32_t zp, int32_t *y) {
  const __m256d sv = _mm256_set1_pd(scale), lov = _mm256_set1_pd(lo), hiv = _mm256_set1_pd(hi);
  const __m256d half = _mm256_set1_pd(0x1.fffffffffffffp-2), sign = _mm256_set1_pd(-0.0);
  const __m128i zpv = _mm_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d v = _mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), sv);
    v = _mm256_andnot_pd(_mm256_cmp_pd(v, v, _CMP_UNORD_Q), v); /* NaN → 0 */
    v = _mm256_min_pd(_mm256_max_pd(v, lov), hiv);
    v = _mm256_add_pd(v, _mm256_or_pd(_mm256_and_pd(v, sign), half));
    _mm_storeu_si128((__m128i *)(y + i), _mm_add_epi32(_mm256_cvttpd_epi32(v), zpv));
  }
  return i;
}
#endif

void ct_quant_quantize_row(const float *x, int64_t n, double scale, int32_t zp, ct_dtype dt, int32_t *y) {
#if CT_X86_SIMD
  bool narrow = dt == CT_I8 || dt == CT_U8 || dt == CT_I16 || dt == CT_U16;
  if (narrow && zp >= -65536 && zp <= 65536 && avx2_only()) {
    int64_t done = quantize_avx2(x, n, scale, (double)ct_quant_min(dt) - zp, (double)ct_quant_max(dt) - zp, zp, y);
    x += done, n -= done, y += done;
  }
#endif
  quantize_row_clones(x, n, scale, zp, dt, y);
}

CT_CLONES_V4 static void qdq_row_clones(const float *x, int64_t n, double scale, ct_dtype dt, float *y) {
  for (int64_t i = 0; i < n; i++) y[i] = (float)ct_quant_dequantize(ct_quant_quantize(x[i], scale, 0, dt), scale, 0);
}

void ct_quant_qdq_row(const float *x, int64_t n, double scale, ct_dtype dt, float *y) { qdq_row_clones(x, n, scale, dt, y); }

double ct_quant_dequantize(int32_t q, double scale, int32_t zp) { return ((double)q - zp) * scale; }

int64_t ct_quant_round_even_sat(double x, int64_t zp, ct_dtype dt) {
  if (isnan(x)) return ct_quant_saturate(zp, dt);
  double v = ct_quant_round_half_even(x) + (double)zp;
  double lo = (double)ct_quant_min(dt), hi = (double)ct_quant_max(dt);
  return v <= lo ? ct_quant_min(dt) : v >= hi ? ct_quant_max(dt) : (int64_t)v;
}

int32_t ct_quant_quantize_onnx(float x, float scale, int32_t zp, ct_dtype dt) {
  float r = x / scale; /* float32 division, as onnxruntime */
  return (int32_t)ct_quant_round_even_sat((double)r, zp, dt);
}

double ct_quant_scale_sym(double threshold, ct_dtype dt) {
  if (!(threshold > 0) || !isfinite(threshold)) return 1.0; /* all-zero tensor: any scale is exact */
  if (dt == CT_I8) return threshold / 127.0;
  if (dt == CT_U8) return threshold / 255.0;
  return threshold / (double)ct_quant_max(dt);
}

/* True if every w[i] / step is within 1e-4 of an integer (the values lie on the grid). */
static bool on_grid(const float *w, int64_t n, double step) {
  for (int64_t i = 0; i < n; i++) {
    double q = (double)w[i] / step;
    if (fabs(q - nearbyint(q)) > 1e-4) return false;
  }
  return true;
}

void ct_quant_weight_scales(const float *w, int64_t oc, int64_t per_oc, double *scale) {
  for (int64_t o = 0; o < oc; o++) {
    const float *c = w + o * per_oc;
    double mx = 0;
    for (int64_t i = 0; i < per_oc; i++) {
      double a = fabs((double)c[i]);
      if (a > mx) mx = a;
    }
    scale[o] = mx > 0 ? mx / 127.0 : 1.0;
    for (int n = 127; mx > 0 && n >= 1; n--)
      if (on_grid(c, per_oc, mx / n)) {
        scale[o] = mx / n;
        break;
      }
  }
}

int32_t ct_quant_bias(double b, double s_w, double s_in) {
  return (int32_t)ct_quant_round_sat(b / (s_w * s_in), CT_I32);
}

int ct_quant_lut_index(int32_t v, ct_dtype in) {
  return (int)(ct_quant_saturate(v, in) - ct_quant_min(in));
}

bool ct_quant_lut_build(double (*f)(double x, void *ctx), void *ctx, double s_in, int32_t zp_in,
                        ct_dtype in, double s_out, int32_t zp_out, ct_dtype out, uint8_t table[256]) {
  bool in8 = in == CT_I8 || in == CT_U8, out8 = out == CT_I8 || out == CT_U8;
  if (!in8 || !out8 || !(s_in > 0) || !(s_out > 0)) return false;
  for (int i = 0; i < 256; i++) {
    int32_t q = (int32_t)ct_quant_min(in) + i;
    int32_t y = ct_quant_quantize(f(ct_quant_dequantize(q, s_in, zp_in), ctx), s_out, zp_out, out);
    table[i] = (uint8_t)(y & 0xff);
  }
  return true;
}

bool ct_quant_lut16_build(double (*f)(double x, void *ctx), void *ctx, double s_in, double s_out, int32_t zp_out,
                          ct_dtype out, int16_t table[CT_QUANT_LUT16_ENTRIES]) {
  if ((out != CT_I8 && out != CT_U8) || !(s_in > 0) || !(s_out > 0)) return false;
  double lo = (double)ct_quant_min(out), hi = (double)ct_quant_max(out);
  for (int j = 0; j < CT_QUANT_LUT16_ENTRIES; j++) {
    double y = f((double)(256 * j - 32768) * s_in, ctx) / s_out + zp_out;
    y = isnan(y) ? zp_out : y < lo ? lo : y > hi ? hi : y;
    table[j] = (int16_t)ct_quant_round_sat(y * 128.0, CT_I16);
  }
  return true;
}

void ct_quant_lut16_index(int32_t x, int *i, int *f) {
  int32_t u = (int32_t)ct_quant_saturate(x, CT_I16) + 32768;
  *i = u >> 8, *f = u & 255;
}

int32_t ct_quant_lut16_interp(int32_t t0, int32_t t1, int f, ct_dtype out) {
  int64_t v = (int64_t)t0 * 256 + ((int64_t)t1 - t0) * f;
  return (int32_t)ct_quant_saturate(ct_quant_rshift_round(v, 15), out);
}

int32_t ct_quant_lut16_lookup(const int16_t *table, int32_t x, ct_dtype out) {
  int i, f;
  ct_quant_lut16_index(x, &i, &f);
  return ct_quant_lut16_interp(table[i], table[i + 1], f, out);
}

uint16_t ct_quant_f32_to_bf16(float x) { return ct_f32_to_bf16(x); }
float ct_quant_bf16_to_f32(uint16_t b) { return ct_bf16_to_f32(b); }
uint16_t ct_quant_f32_to_f16(float x) { return ct_f32_to_f16(x); }
float ct_quant_f16_to_f32(uint16_t h) { return ct_f16_to_f32(h); }

float ct_quant_float_act_hi(int64_t act_hi, int64_t zp_out) {
  uint32_t x = (uint32_t)(act_hi & 0xffff) << 16 | (uint32_t)(zp_out & 0xffff);
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

bool ct_quant_float_act_hi_bits(float hi, ct_dtype dt_out, int64_t *act_hi, int64_t *zp_out) {
  if (!isfinite(hi)) return false;
  float r = ct_quant_round_float(hi, dt_out);
  uint32_t x;
  memcpy(&x, &r, sizeof x);
  *act_hi = (int16_t)(x >> 16), *zp_out = (int16_t)(x & 0xffff);
  return true;
}

float ct_quant_round_float(float x, ct_dtype dt) {
  if (dt == CT_BF16) return ct_bf16_to_f32(ct_f32_to_bf16(x));
  if (dt == CT_F16) return ct_f16_to_f32(ct_f32_to_f16(x));
  return x;
}
