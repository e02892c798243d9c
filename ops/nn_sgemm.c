/* nn_sgemm.c: Y = bias + W·B in f32 with AVX-512 (nn_sgemm.h), the GEMM of the Top Conv
 * kernel. Blocked as BLIS / GotoBLAS do, without their packing: K in blocks of KC; per block
 * and per panel of NR = 32 columns of B (two 16-lane registers, masked at the right edge),
 * micro-kernels of up to MR = 12 rows of W each keep a 12 × 32 tile of Y in 24 registers
 * and add, per k, a broadcast weight times the panel's row (MLAS's and oneDNN's AVX-512
 * SGEMM form). The panel (KC rows of 128 bytes) stays in L1/L2 across the row blocks; W and B
 * are read where they lie (a Conv's weights OIHW are W, its input or im2col columns are B),
 * so a call copies nothing. Each output's sum adds k = 0, 1, … in turn (a K block resumes
 * from the stored partial sum, exact in f32), then its bias and a clamp (a fused ReLU / ReLU6
 * / Clip) in the last block's registers, whatever the tiling. */
#include "ops/nn_sgemm.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SGEMM_X86 1
#endif

#define MR 12  /* rows of W per micro-kernel */
#define NR 32  /* columns of B per panel: two zmm */
#define KC 256 /* k per block: a panel is 32 KiB */

static bool enabled = true;

void ct_nn_sgemm_enable(bool on) { enabled = on; }

#ifdef SGEMM_X86
bool ct_nn_sgemm_ok(void) {
  static int known = -1; /* a benign race: every thread stores the same value */
  if (known < 0) known = __builtin_cpu_supports("avx512f") ? 1 : 0;
  return enabled && known == 1;
}

/* One tile: rows [0, mr) of y (row stride ldy), columns [0, 16·halves) masked by m0/m1,
 * = (first) or += Σ_{k<kc} a[r][k]·b[k][·]; in the last K block then + bias[r] (when not
 * NULL) and clamped to [lo, hi] as ct_nn_act_apply clamps (v < lo ? lo : v, then v > hi ? hi
 * : v: maxps / minps with the value second, so NaN stays). mr and halves are constants at
 * every call (tile_fn); the accumulators are named variables (GCC keeps an array of vectors
 * in memory), those of rows >= mr dead code. */
#define ACC_INIT(r)                                                                            \
  __m512 c0_##r = _mm512_setzero_ps(), c1_##r = c0_##r;                                        \
  if (mr > r && !first) {                                                                      \
    c0_##r = _mm512_maskz_loadu_ps(m0, y + r * ldy);                                           \
    if (halves == 2) c1_##r = _mm512_maskz_loadu_ps(m1, y + r * ldy + 16);                     \
  }
#define ACC_FMA(r)                                                                             \
  if (mr > r) {                                                                                \
    __m512 w = _mm512_set1_ps(a[r * lda + k]);                                                 \
    c0_##r = _mm512_fmadd_ps(w, b0, c0_##r);                                                   \
    if (halves == 2) c1_##r = _mm512_fmadd_ps(w, b1, c1_##r);                                  \
  }
#define ACC_STORE(r)                                                                           \
  if (mr > r) {                                                                                \
    if (bias) {                                                                                \
      __m512 bv = _mm512_set1_ps(bias[r]);                                                     \
      c0_##r = _mm512_add_ps(c0_##r, bv), c1_##r = _mm512_add_ps(c1_##r, bv);                  \
    }                                                                                          \
    if (last) {                                                                                \
      c0_##r = _mm512_min_ps(hv, _mm512_max_ps(lv, c0_##r));                                   \
      c1_##r = _mm512_min_ps(hv, _mm512_max_ps(lv, c1_##r));                                   \
    }                                                                                          \
    _mm512_mask_storeu_ps(y + r * ldy, m0, c0_##r);                                            \
    if (halves == 2) _mm512_mask_storeu_ps(y + r * ldy + 16, m1, c1_##r);                      \
  }
#define ACC_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx512f"), always_inline)) static inline void tile(const int mr, const int halves, int64_t kc,
                                                                         const float *a, int64_t lda, const float *b,
                                                                         int64_t ldb, __mmask16 m0, __mmask16 m1,
                                                                         float *y, int64_t ldy, bool first,
                                                                         bool last, const float *bias, float lo,
                                                                         float hi) {
  const __m512 lv = _mm512_set1_ps(lo), hv = _mm512_set1_ps(hi);
  ACC_ALL(ACC_INIT)
  for (int64_t k = 0; k < kc; k++, b += ldb) {
    __m512 b0 = _mm512_maskz_loadu_ps(m0, b), b1 = halves == 2 ? _mm512_maskz_loadu_ps(m1, b + 16) : b0;
    ACC_ALL(ACC_FMA)
  }
  ACC_ALL(ACC_STORE)
}
#undef ACC_ALL
#undef ACC_STORE
#undef ACC_FMA
#undef ACC_INIT

typedef void (*tile_fn)(int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, __mmask16 m0,
                        __mmask16 m1, float *y, int64_t ldy, bool first, bool last, const float *bias, float lo,
                        float hi);
#define TILE(R, H)                                                                                                   \
  __attribute__((target("avx512f"))) static void tile_##R##_##H(int64_t kc, const float *a, int64_t lda,          \
                                                                const float *b, int64_t ldb, __mmask16 m0,        \
                                                                __mmask16 m1, float *y, int64_t ldy, bool first,  \
                                                                bool last, const float *bias, float lo, float hi) { \
    tile(R, H, kc, a, lda, b, ldb, m0, m1, y, ldy, first, last, bias, lo, hi);                                       \
  }
#define TILES(R) TILE(R, 1) TILE(R, 2)
TILES(1) TILES(2) TILES(3) TILES(4) TILES(5) TILES(6) TILES(7) TILES(8) TILES(9) TILES(10) TILES(11) TILES(12)
#undef TILES
#undef TILE
#define TILES(R) {tile_##R##_1, tile_##R##_2}
static const tile_fn tiles[MR][2] = {TILES(1), TILES(2), TILES(3), TILES(4),  TILES(5),  TILES(6),
                                     TILES(7), TILES(8), TILES(9), TILES(10), TILES(11), TILES(12)};
#undef TILES

/* Rows [0, M) of one panel (columns [n0, n0 + nr), nr <= NR) for k in [k0, k0 + kc). */
static void panel(int64_t M, int64_t n0, int64_t nr, int64_t k0, int64_t kc, bool last, const float *W,
                  int64_t ldw, const float *B, int64_t ldb, const float *bias, float lo, float hi, float *Y,
                  int64_t ldy) {
  __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
  __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffff : nr > 16 ? (1u << (nr - 16)) - 1 : 0);
  int h = nr > 16 ? 2 : 1;
  /* equal row blocks of at most MR (e.g. 16 = 8 + 8, not 12 + 4) */
  int64_t nblk = (M + MR - 1) / MR, base = M / nblk, extra = M % nblk, m = 0;
  for (int64_t i = 0; i < nblk; i++) {
    int64_t mr = base + (i < extra);
    tiles[mr - 1][h - 1](kc, W + m * ldw + k0, ldw, B + k0 * ldb + n0, ldb, m0, m1, Y + m * ldy + n0, ldy, k0 == 0,
                         last, bias && last ? bias + m : NULL, lo, hi);
    m += mr;
  }
}

bool ct_nn_sgemm(int64_t M, int64_t N, int64_t K, const float *W, int64_t ldw, const float *B, int64_t ldb,
                 const float *bias, float lo, float hi, float *Y, int64_t ldy) {
  if (!ct_nn_sgemm_ok()) return false;
  if (M <= 0 || N <= 0) return true;
  if (K <= 0) {
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        float v = bias ? bias[m] : 0.0f;
        v = v < lo ? lo : v;
        Y[m * ldy + n] = v > hi ? hi : v;
      }
    return true;
  }
  for (int64_t k0 = 0; k0 < K; k0 += KC) {
    int64_t kc = K - k0 < KC ? K - k0 : KC;
    for (int64_t n0 = 0; n0 < N; n0 += NR)
      panel(M, n0, N - n0 < NR ? N - n0 : NR, k0, kc, k0 + kc == K, W, ldw, B, ldb, bias, lo, hi, Y, ldy);
  }
  return true;
}
/* Lanes l < 16 with lo <= l < hi. */
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

/* ct_nn_im2col_s1's loops (sw 1 or 2, a constant at each call). */
__attribute__((target("avx512f"), always_inline)) static inline void im2col_rows(
    const int sw, const float *x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t pt,
    int64_t pl, int64_t OW, float *col, int64_t c0, int64_t nb) {
  for (int64_t r = 0; r < C * KH * KW; r++) { /* each row of col written in turn */
    int64_t c = r / (KH * KW), kh = r / KW % KH, kw = r % KW, off = kw - pl; /* iw = ow·sw + off */
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw, hi0 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
    for (int64_t p = c0, oh = c0 / OW, a = c0 % OW; p < c0 + nb; oh++, a = 0) { /* output row oh's run [a, e) */
      int64_t e = OW - a < c0 + nb - p ? OW : a + (c0 + nb - p), ih = oh * sh - pt + kh;
      bool in = ih >= 0 && ih < H;
      run16(sw, col + r * nb + (p - c0) - a, x + (c * H + (in ? ih : 0)) * W + off, a, e, lo, in ? hi0 : lo);
      p += e - a;
    }
  }
}

__attribute__((target("avx512f"))) static void im2col_sw1(const float *x, int64_t C, int64_t H, int64_t W,
                                                          int64_t KH, int64_t KW, int64_t sh, int64_t pt, int64_t pl,
                                                          int64_t OW, float *col, int64_t c0, int64_t nb) {
  im2col_rows(1, x, C, H, W, KH, KW, sh, pt, pl, OW, col, c0, nb);
}

__attribute__((target("avx512f"))) static void im2col_sw2(const float *x, int64_t C, int64_t H, int64_t W,
                                                          int64_t KH, int64_t KW, int64_t sh, int64_t pt, int64_t pl,
                                                          int64_t OW, float *col, int64_t c0, int64_t nb) {
  im2col_rows(2, x, C, H, W, KH, KW, sh, pt, pl, OW, col, c0, nb);
}

bool ct_nn_im2col_s1(const float *x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t pt, int64_t pl, int64_t OW, float *col, int64_t c0, int64_t nb) {
  if (!ct_nn_sgemm_ok() || (sw != 1 && sw != 2)) return false;
  (sw == 1 ? im2col_sw1 : im2col_sw2)(x, C, H, W, KH, KW, sh, pt, pl, OW, col, c0, nb);
  return true;
}
#else
bool ct_nn_sgemm_ok(void) { return false; }

bool ct_nn_im2col_s1(const float *x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t pt, int64_t pl, int64_t OW, float *col, int64_t c0, int64_t nb) {
  (void)x, (void)C, (void)H, (void)W, (void)KH, (void)KW, (void)sh, (void)sw, (void)pt, (void)pl, (void)OW, (void)col,
      (void)c0, (void)nb;
  return false;
}

bool ct_nn_sgemm(int64_t M, int64_t N, int64_t K, const float *W, int64_t ldw, const float *B, int64_t ldb,
                 const float *bias, float lo, float hi, float *Y, int64_t ldy) {
  (void)M, (void)N, (void)K, (void)W, (void)ldw, (void)B, (void)ldb, (void)bias, (void)lo, (void)hi, (void)Y,
      (void)ldy;
  return false;
}
#endif
