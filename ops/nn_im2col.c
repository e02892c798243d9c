/* nn_im2col.c: the im2col of the Top Conv kernel in AVX-512, or AVX2 for W stride 1
 * (nn_im2col.h): each row of the column matrix written by masked 16-lane (8-lane) loads and
 * stores, the padding by the load masks. */
#include "ops/nn_im2col.h"
#include "common/clones.h"

#if CT_X86
#include <immintrin.h>

static inline __mmask16 lanes(int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo, hi = hi > 16 ? 16 : hi;
  return hi <= lo ? 0 : (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
}

/* d[ow] = lo <= ow < hi ? sr[ow · sw] : 0 for ow in [a, e), sw 1 or 2 (a constant at each
 * call): masked loads (lanes outside [lo, hi) read nothing, wherever sr points; stride 2 as
 * two 16-element loads and an even-lane permute) and masked stores; whole blocks inside long
 * runs unmasked. */
__attribute__((target("avx512f"), always_inline)) static inline void run16(const int sw, float *d, const float *sr,
                                                                          int64_t a, int64_t e, int64_t lo,
                                                                          int64_t hi) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  int64_t ow = a, full = e - a < 64 ? a : hi < e ? hi : e; /* [lo, full): no mask (long runs only) */
  for (; ow < e; ow += 16) {
    __m512 v;
    if (ow >= lo && ow + 16 + (sw - 1) <= full) { /* stride 2 reads 2 ow + 31: lane 16 must be inside */
      v = sw == 1 ? _mm512_loadu_ps(sr + ow)
                  : _mm512_permutex2var_ps(_mm512_loadu_ps(sr + 2 * ow), even, _mm512_loadu_ps(sr + 2 * ow + 16));
      _mm512_storeu_ps(d + ow, v);
      continue;
    }
    if (sw == 1) {
      v = _mm512_maskz_loadu_ps(lanes(lo - ow, hi - ow), sr + ow);
    } else { /* source element j of the 32 from 2·ow is lane j / 2's when j is even */
      int64_t l2 = 2 * (lo - ow), h2 = 2 * (hi - ow) - 1;
      v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lanes(l2, h2), sr + 2 * ow), even,
                                 _mm512_maskz_loadu_ps(lanes(l2 - 16, h2 - 16), sr + 2 * ow + 16));
    }
    _mm512_mask_storeu_ps(d + ow, lanes(0, e - ow), v);
  }
}

/* ct_nn_im2col_s1's loops (sw 1 or 2, a constant at each use) around RUN(sw, d, sr, a, e,
 * lo, hi), the run of one output row: d[ow] = lo <= ow < hi ? sr[ow · sw] : 0 for ow in [a, e).
 * One body for the AVX-512 and the AVX2 functions (a macro: an always_inline function of one
 * target cannot be inlined into a function of another). */
#define IM2COL_ROWS(sw, RUN)                                                                                     \
  for (int64_t r = 0; r < C * KH * KW; r++) { /* each row of col written in turn */                            \
    int64_t c = r / (KH * KW), kh = r / KW % KH, kw = r % KW, off = kw - pl; /* iw = ow·sw + off */            \
    int64_t lo = off >= 0 ? 0 : (-off + (sw) - 1) / (sw), hi0 = W - off <= 0 ? 0 : (W - off + (sw) - 1) / (sw); \
    for (int64_t p = c0, oh = c0 / OW, a = c0 % OW; p < c0 + nb; oh++, a = 0) { /* output row oh's run [a, e) */ \
      int64_t e = OW - a < c0 + nb - p ? OW : a + (c0 + nb - p), ih = oh * sh - pt + kh;                       \
      bool in = ih >= 0 && ih < H;                                                                             \
      RUN(sw, col + r * nb + (p - c0) - a, x + (c * H + (in ? ih : 0)) * W + off, a, e, lo, in ? hi0 : lo);     \
      p += e - a;                                                                                              \
    }                                                                                                          \
  }

__attribute__((target("avx512f"))) static void im2col_sw1(const float *x, int64_t C, int64_t H, int64_t W,
                                                          int64_t KH, int64_t KW, int64_t sh, int64_t pt, int64_t pl,
                                                          int64_t OW, float *col, int64_t c0, int64_t nb) {
  IM2COL_ROWS(1, run16)
}

__attribute__((target("avx512f"))) static void im2col_sw2(const float *x, int64_t C, int64_t H, int64_t W,
                                                          int64_t KH, int64_t KW, int64_t sh, int64_t pt, int64_t pl,
                                                          int64_t OW, float *col, int64_t c0, int64_t nb) {
  IM2COL_ROWS(2, run16)
}

/* The AVX2 lanes j of 8 with lo <= j < hi, as a maskload / maskstore mask. */
__attribute__((target("avx2"), always_inline)) static inline __m256i lanes8(int64_t lo, int64_t hi) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  lo = lo < 0 ? 0 : lo > 8 ? 8 : lo, hi = hi < 0 ? 0 : hi > 8 ? 8 : hi;
  return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)lo), idx),
                             _mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), idx));
}

/* run16 for W stride 1 on AVX2: 8 lanes, vmaskmovps loads (masked lanes read nothing) and
 * stores. */
__attribute__((target("avx2"), always_inline)) static inline void run8(const int sw, float *d, const float *sr, int64_t a,
                                                                     int64_t e, int64_t lo, int64_t hi) {
  (void)sw; /* 1 */
  int64_t full = hi < e ? hi : e;
  for (int64_t ow = a; ow < e; ow += 8) {
    if (ow >= lo && ow + 8 <= full) {
      _mm256_storeu_ps(d + ow, _mm256_loadu_ps(sr + ow));
      continue;
    }
    __m256 v = _mm256_maskload_ps(sr + ow, lanes8(lo - ow, hi - ow));
    _mm256_maskstore_ps(d + ow, lanes8(0, e - ow), v);
  }
}

/* IM2COL_ROWS for W stride 1 on AVX2. */
__attribute__((target("avx2"))) static void im2col_sw1_avx2(const float *x, int64_t C, int64_t H, int64_t W, int64_t KH,
                                                            int64_t KW, int64_t sh, int64_t pt, int64_t pl, int64_t OW,
                                                            float *col, int64_t c0, int64_t nb) {
  IM2COL_ROWS(1, run8)
}

bool ct_nn_im2col_s1(const float *x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t pt, int64_t pl, int64_t OW, float *col, int64_t c0, int64_t nb) {
  if (!ct_cpu_avx512()) {
    if (sw != 1 || !ct_cpu_avx2()) return false;
    im2col_sw1_avx2(x, C, H, W, KH, KW, sh, pt, pl, OW, col, c0, nb);
    return true;
  }
  if (sw != 1 && sw != 2) return false;
  (sw == 1 ? im2col_sw1 : im2col_sw2)(x, C, H, W, KH, KW, sh, pt, pl, OW, col, c0, nb);
  return true;
}
#else
bool ct_nn_im2col_s1(const float *x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t pt, int64_t pl, int64_t OW, float *col, int64_t c0, int64_t nb) {
  (void)x, (void)C, (void)H, (void)W, (void)KH, (void)KW, (void)sh, (void)sw, (void)pt, (void)pl, (void)OW, (void)col,
      (void)c0, (void)nb;
  return false;
}
#endif
