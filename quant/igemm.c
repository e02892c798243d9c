/* igemm.c: C = bias + A·B on int16 operands with int32 sums (igemm.h), the GEMM of the
 * integer MAC kernels of the Tpu reference and the cmodel. Blocked as BLIS / GotoBLAS do: K in blocks of
 * KC_PAIRS pairs; per block A packed in panels of MR rows (each k pair of a row one int32)
 * and B in panels of NR columns (each k pair of a column two adjacent int16), then an MR×NR
 * micro-kernel adds the block's products into C. On x86-64 with AVX2 the micro-kernel is
 * pmaddwd (_mm256_madd_epi16: two int16 products added into an int32 lane, XNNPACK's and
 * oneDNN's int16 form), with AVX-512 VNNI vpdpwssd (the same product pairs and the add in one
 * instruction); the plain C one computes the same integers. Every sum is an integer
 * below 2^31 in magnitude (the caller's ct_quant_igemm_exact bound), so any order of addition
 * gives the exact sum and both paths agree bit for bit with a scalar int64 dot loop. */
#include <stdlib.h>
#include <string.h>

#include "quant/igemm.h"
#include "common/clones.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define IGEMM_X86 1
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define IGEMM_LE 1
#else
#define IGEMM_LE 0
#endif

#define MR 4         /* rows of A per micro-kernel */
#define NR 16        /* columns of B per micro-kernel (two AVX2 registers of 8 int32) */
#define KC_PAIRS 256 /* k pairs per block: a B panel is 16 KiB (L1), an A block MR·1 KiB per panel */

static int simd_cap = 2; /* the highest micro-kernel allowed: 0 plain C, 1 AVX2, 2 AVX-512 VNNI */

void ct_quant_igemm_simd(int level) { simd_cap = level; }

/* Packs rows [0, M) of A, k in [k0, k0 + 2·kp), as panels of MR rows: pa[panel][pair][r] =
 * A[r][k] | A[r][k + 1] << 16 (zeros past M and K). */
static void pack_a(int64_t M, int64_t K, const int16_t *A, int64_t lda, int64_t k0, int64_t kp, int32_t *pa) {
  int64_t whole = k0 + 2 * kp <= K ? kp : (K - k0) / 2; /* pairs with both k inside K */
  for (int64_t m0 = 0; m0 < M; m0 += MR) {
    int64_t p = 0;
    if (m0 + MR <= M && IGEMM_LE) /* a pair of little-endian int16s is the int32 lo | hi << 16 itself */
      for (; p < whole; p++, pa += MR)
        for (int64_t r = 0; r < MR; r++) memcpy(pa + r, A + (m0 + r) * lda + k0 + 2 * p, sizeof *pa);
    for (; p < kp; p++)
      for (int64_t r = 0; r < MR; r++, pa++) {
        int64_t k = k0 + 2 * p, m = m0 + r;
        uint16_t lo = m < M && k < K ? (uint16_t)A[m * lda + k] : 0, hi = m < M && k + 1 < K ? (uint16_t)A[m * lda + k + 1] : 0;
        *pa = (int32_t)((uint32_t)lo | (uint32_t)hi << 16);
      }
  }
}

/* Packs columns [n0, n0 + NR) of B, k in [k0, k0 + 2·kp): pb[pair][c][0..1] = B[k][n0 + c],
 * B[k + 1][n0 + c] (zeros past N and K). */
CT_CLONES_V3 static void pack_b(int64_t N, int64_t K, const int16_t *B, int64_t ldb, int64_t k0, int64_t kp, int64_t n0,
                                int16_t *pb) {
  int64_t nc = N - n0 < NR ? N - n0 : NR;
  if (ldb < 0) { /* B paired ([K/2][-ldb][2], ct_quant_igemm_paired): the panel's pairs, zeros past N */
    for (int64_t p = 0; p < kp; p++, pb += 2 * NR) {
      const int16_t *src = B + ((k0 / 2 + p) * -ldb + n0) * 2;
      for (int64_t c = 0; c < 2 * NR; c++) pb[c] = c < 2 * nc ? src[c] : 0;
    }
    return;
  }
  for (int64_t p = 0; p < kp; p++, pb += 2 * NR) {
    int64_t k = k0 + 2 * p;
    const int16_t *b0 = B + k * ldb + n0, *b1 = b0 + ldb;
    if (nc == NR && k + 1 < K) { /* a whole panel row pair: a plain interleave */
      for (int c = 0; c < NR; c++) pb[2 * c] = b0[c], pb[2 * c + 1] = b1[c];
      continue;
    }
    bool has0 = k < K, has1 = k + 1 < K;
    for (int64_t c = 0; c < nc; c++) pb[2 * c] = has0 ? b0[c] : 0, pb[2 * c + 1] = has1 ? b1[c] : 0;
    for (int64_t c = nc; c < NR; c++) pb[2 * c] = pb[2 * c + 1] = 0;
  }
}

/* The micro-kernel in plain C: t[r][c] = Σ_p pairs of pa's row r times pb's column c. */
static void kern_c(int64_t kp, const int32_t *pa, const int16_t *pb, int64_t bs, int32_t t[MR][NR]) {
  memset(t, 0, sizeof(int32_t) * MR * NR);
  for (int64_t p = 0; p < kp; p++, pa += MR, pb += bs)
    for (int r = 0; r < MR; r++) {
      int32_t a0 = (int16_t)(uint16_t)((uint32_t)pa[r] & 0xffff), a1 = (int16_t)(uint16_t)((uint32_t)pa[r] >> 16);
      for (int c = 0; c < NR; c++) t[r][c] += a0 * pb[2 * c] + a1 * pb[2 * c + 1];
    }
}

#ifdef IGEMM_X86
/* The micro-kernel on AVX2: per pair, one broadcast of a row's pair and two pmaddwd. */
__attribute__((target("avx2"))) static void kern_avx2(int64_t kp, const int32_t *pa, const int16_t *pb, int64_t bs,
                                                           int32_t t[MR][NR]) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  for (int64_t p = 0; p < kp; p++, pa += MR, pb += bs) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)pb), b1 = _mm256_loadu_si256((const __m256i *)(pb + 16));
    __m256i a = _mm256_set1_epi32(pa[0]);
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(a, b0)), c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(pa[1]);
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(a, b0)), c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(pa[2]);
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(a, b0)), c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(pa[3]);
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(a, b0)), c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(a, b1));
  }
  _mm256_storeu_si256((__m256i *)t[0], c00), _mm256_storeu_si256((__m256i *)(t[0] + 8), c01);
  _mm256_storeu_si256((__m256i *)t[1], c10), _mm256_storeu_si256((__m256i *)(t[1] + 8), c11);
  _mm256_storeu_si256((__m256i *)t[2], c20), _mm256_storeu_si256((__m256i *)(t[2] + 8), c21);
  _mm256_storeu_si256((__m256i *)t[3], c30), _mm256_storeu_si256((__m256i *)(t[3] + 8), c31);
}

/* kern_avx2 for a whole tile (MR rows, NR columns inside C): the sums added straight into C,
 * or stored over C with the rows' bias when first (add_tile's two cases without the tile
 * in between). The same per-lane sums as kern_avx2. */
__attribute__((target("avx2"))) static void kern_avx2_c(int64_t kp, const int32_t *pa, const int16_t *pb, int64_t bs,
                                                        int32_t *C, int64_t ldc, bool first, const int32_t *bias) {
  __m256i c[MR][2];
  for (int r = 0; r < MR; r++) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (int64_t p = 0; p < kp; p++, pa += MR, pb += bs) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)pb), b1 = _mm256_loadu_si256((const __m256i *)(pb + 16));
    for (int r = 0; r < MR; r++) {
      __m256i a = _mm256_set1_epi32(pa[r]);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(a, b0));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(a, b1));
    }
  }
  for (int r = 0; r < MR; r++) {
    int32_t *row = C + r * ldc;
    for (int h = 0; h < 2; h++) {
      __m256i base = first ? _mm256_set1_epi32(bias ? bias[r] : 0) : _mm256_loadu_si256((const __m256i *)(row + 8 * h));
      _mm256_storeu_si256((__m256i *)(row + 8 * h), _mm256_add_epi32(base, c[r][h]));
    }
  }
}

/* The micro-kernel on AVX-512 VNNI: per pair, one 512-bit load of the panel's 16 column
 * pairs, and per row one broadcast and one vpdpwssd (pmaddwd and the add in one, wrapping as
 * they do: the same int32 sums). */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void kern_vnni(int64_t kp, const int32_t *pa, const int16_t *pb,
                                                                          int64_t bs, int32_t t[MR][NR]) {
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
  for (int64_t p = 0; p < kp; p++, pa += MR, pb += bs) {
    __m512i b = _mm512_loadu_si512((const void *)pb);
    c0 = _mm512_dpwssd_epi32(c0, _mm512_set1_epi32(pa[0]), b);
    c1 = _mm512_dpwssd_epi32(c1, _mm512_set1_epi32(pa[1]), b);
    c2 = _mm512_dpwssd_epi32(c2, _mm512_set1_epi32(pa[2]), b);
    c3 = _mm512_dpwssd_epi32(c3, _mm512_set1_epi32(pa[3]), b);
  }
  _mm512_storeu_si512((void *)t[0], c0), _mm512_storeu_si512((void *)t[1], c1);
  _mm512_storeu_si512((void *)t[2], c2), _mm512_storeu_si512((void *)t[3], c3);
}

/* The wide AVX-512 VNNI micro-kernel for whole tiles of MR rows and 2·NR columns of a paired
 * B read in place: eight accumulators (two column halves per row, enough independent
 * vpdpwssd chains to hide their latency), added straight into C (or stored over C with the
 * rows' bias when first). The same per-lane sums, in the same order, as two kern_vnni calls. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void kern_vnni_wide(int64_t kp, const int32_t *pa,
                                                                               const int16_t *pb, int64_t bs, int32_t *C,
                                                                               int64_t ldc, bool first,
                                                                               const int32_t *bias) {
  __m512i c[MR][2];
  for (int r = 0; r < MR; r++) c[r][0] = c[r][1] = _mm512_setzero_si512();
  for (int64_t p = 0; p < kp; p++, pa += MR, pb += bs) {
    __m512i b0 = _mm512_loadu_si512((const void *)pb), b1 = _mm512_loadu_si512((const void *)(pb + 2 * NR));
    for (int r = 0; r < MR; r++) {
      __m512i a = _mm512_set1_epi32(pa[r]);
      c[r][0] = _mm512_dpwssd_epi32(c[r][0], a, b0);
      c[r][1] = _mm512_dpwssd_epi32(c[r][1], a, b1);
    }
  }
  for (int r = 0; r < MR; r++) {
    int32_t *row = C + r * ldc;
    for (int h = 0; h < 2; h++) {
      __m512i base = first ? _mm512_set1_epi32(bias ? bias[r] : 0) : _mm512_loadu_si512((const void *)(row + h * NR));
      _mm512_storeu_si512((void *)(row + h * NR), _mm512_add_epi32(base, c[r][h]));
    }
  }
}

/* The best micro-kernel level the CPU has (2 AVX-512 VNNI, 1 AVX2, 0 none). */
static int cpu_level(void) {
  static int known = -1; /* a benign race: every thread stores the same value */
  if (known < 0)
    known = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  return known;
}

/* The micro-kernel level in use: the CPU's, at most simd_cap. */
static int kernel_level(void) { return cpu_level() < simd_cap ? cpu_level() : simd_cap; }
#endif

/* One micro-kernel's products added into C rows [m0, m0 + MR) ∩ [0, M), columns [n0, n0 +
 * NR) ∩ [0, N); with first, stored over C with the bias added instead (bias[m], or 0). */
static void add_tile(int64_t M, int64_t N, int64_t m0, int64_t n0, int64_t kp, const int32_t *pa, const int16_t *pb,
                     int64_t bs, int32_t *C, int64_t ldc, bool first, const int32_t *bias) {
  int32_t t[MR][NR];
#ifdef IGEMM_X86
  int level = kernel_level();
  if (level == 1 && M - m0 >= MR && N - n0 >= NR) { /* a whole tile: straight into C */
    kern_avx2_c(kp, pa, pb, bs, C + m0 * ldc + n0, ldc, first, bias ? bias + m0 : NULL);
    return;
  }
  if (level == 2) kern_vnni(kp, pa, pb, bs, t);
  else if (level == 1) kern_avx2(kp, pa, pb, bs, t);
  else kern_c(kp, pa, pb, bs, t);
#else
  kern_c(kp, pa, pb, bs, t);
#endif
  int64_t rows = M - m0 < MR ? M - m0 : MR, cols = N - n0 < NR ? N - n0 : NR;
  for (int64_t r = 0; r < rows; r++) {
    int32_t *c = C + (m0 + r) * ldc + n0, b = bias ? bias[m0 + r] : 0;
    if (first)
      for (int64_t j = 0; j < cols; j++) c[j] = b + t[r][j];
    else
      for (int64_t j = 0; j < cols; j++) c[j] += t[r][j];
  }
}

/* ct_quant_igemm with B row-major (ldb > 0) or paired (ldb < 0: [⌈K/2⌉][−ldb][2], whole
 * panels then read in place, pb_stride 2·(−ldb)). */
static bool igemm(int64_t M, int64_t N, int64_t K, const int16_t *A, int64_t lda, const int16_t *B, int64_t ldb,
                  const int32_t *bias, int32_t *C, int64_t ldc) {
  int64_t kpairs = (K + 1) / 2, kc = kpairs < KC_PAIRS ? kpairs : KC_PAIRS, mp = (M + MR - 1) / MR;
  int32_t *pa = malloc(sizeof *pa * (size_t)(mp * MR * kc + 1));
  int16_t *pb = malloc(sizeof *pb * (size_t)(2 * NR * kc + 1));
  if (!pa || !pb) {
    free(pa), free(pb);
    return false;
  }
  for (int64_t m = 0; kpairs == 0 && m < M; m++) /* no products: the bias alone */
    for (int64_t n = 0; n < N; n++) C[m * ldc + n] = bias ? bias[m] : 0;
  for (int64_t p0 = 0; p0 < kpairs; p0 += kc) {
    int64_t kp = kpairs - p0 < kc ? kpairs - p0 : kc;
    pack_a(M, K, A, lda, 2 * p0, kp, pa);
    for (int64_t n0 = 0; n0 < N; n0 += NR) {
#ifdef IGEMM_X86
      if (ldb < 0 && n0 + 2 * NR <= N && M % MR == 0 && kernel_level() == 2) { /* two panels at once */
        for (int64_t i = 0; i < mp; i++)
          kern_vnni_wide(kp, pa + i * MR * kp, B + (p0 * -ldb + n0) * 2, -2 * ldb, C + i * MR * ldc + n0, ldc, p0 == 0,
                         bias ? bias + i * MR : NULL);
        n0 += NR;
        continue;
      }
#endif
      bool inplace = ldb < 0 && n0 + NR <= N;
      const int16_t *b = inplace ? B + (p0 * -ldb + n0) * 2 : pb;
      if (!inplace) pack_b(N, K, B, ldb, 2 * p0, kp, n0, pb);
      for (int64_t i = 0; i < mp; i++)
        add_tile(M, N, i * MR, n0, kp, pa + i * MR * kp, b, inplace ? -2 * ldb : 2 * NR, C, ldc, p0 == 0, bias);
    }
  }
  free(pa), free(pb);
  return true;
}

bool ct_quant_igemm(int64_t M, int64_t N, int64_t K, const int16_t *A, int64_t lda, const int16_t *B, int64_t ldb,
                    const int32_t *bias, int32_t *C, int64_t ldc) {
  return igemm(M, N, K, A, lda, B, ldb, bias, C, ldc);
}

bool ct_quant_igemm_paired(int64_t M, int64_t N, int64_t K, const int16_t *A, int64_t lda, const int16_t *Bp,
                           int64_t ldb, const int32_t *bias, int32_t *C, int64_t ldc) {
  return igemm(M, N, K, A, lda, Bp, -ldb, bias, C, ldc);
}

CT_CLONES_V3 static void pair_rows_clones(const int16_t *B, int64_t K, int64_t N, int16_t *Bp) {
  for (int64_t p = 0; p < (K + 1) / 2; p++) {
    const int16_t *b0 = B + 2 * p * N, *b1 = b0 + N;
    int16_t *d = Bp + 2 * p * N;
    if (2 * p + 1 < K)
      for (int64_t n = 0; n < N; n++) d[2 * n] = b0[n], d[2 * n + 1] = b1[n];
    else
      for (int64_t n = 0; n < N; n++) d[2 * n] = b0[n], d[2 * n + 1] = 0;
  }
}

void ct_quant_igemm_pair_rows(const int16_t *B, int64_t K, int64_t N, int16_t *Bp) { pair_rows_clones(B, K, N, Bp); }

CT_CLONES_V3 static int32_t i16_absmax_clones(const int16_t *v, int64_t n) {
  int32_t mx = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t a = v[i] < 0 ? -(int32_t)v[i] : v[i];
    mx = a > mx ? a : mx;
  }
  return mx;
}

int32_t ct_quant_i16_absmax(const int16_t *v, int64_t n) { return i16_absmax_clones(v, n); }
