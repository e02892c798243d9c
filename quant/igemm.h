/* igemm.h: the integer matrix product of the MAC kernels — the Tpu reference's (ops/tpu_mac.c,
 * ops/tpu_convt.c) and the cmodel's functional CONV / MATMUL (cmodel/exec_kern.c): int16
 * operands, int32 sums, packed and blocked, with AVX-512 VNNI and AVX2 paths picked at run
 * time on x86-64 and a plain C path elsewhere. */
#ifndef CT_QUANT_IGEMM_H
#define CT_QUANT_IGEMM_H

#include <stdbool.h>
#include <stdint.h>

/* C[m][n] = bias[m] (0 when bias is NULL) + Σ_{k<K} A[m][k]·B[k][n] for m < M, n < N, with
 * A row-major [M][lda], B row-major [K][ldb] and C row-major [M][ldc] (int32). The sums are
 * integers added in int32 in an unspecified order, so C equals the exact (int64) sum whenever
 * every partial sum fits int32 — callers prove it with ct_quant_igemm_exact. False (C
 * untouched) when out of memory. */
bool ct_quant_igemm(int64_t M, int64_t N, int64_t K, const int16_t *A, int64_t lda, const int16_t *B, int64_t ldb,
                    const int32_t *bias, int32_t *C, int64_t ldc);

/* ct_quant_igemm with B given paired: Bp[p][n][j] = B[2p + j][n] (⌈K/2⌉ × ldb × 2 int16,
 * row 2p + 1 zero when K is odd; ct_quant_igemm_pair_rows), so that whole panels of 16 columns
 * are read in place instead of packed per call. Column n of C reads column n of Bp. */
bool ct_quant_igemm_paired(int64_t M, int64_t N, int64_t K, const int16_t *A, int64_t lda, const int16_t *Bp,
                           int64_t ldb, const int32_t *bias, int32_t *C, int64_t ldc);
/* Bp := B [K][N] (row-major, ldb N) paired as ct_quant_igemm_paired reads it (⌈K/2⌉·N·2 int16). */
void ct_quant_igemm_pair_rows(const int16_t *B, int64_t K, int64_t N, int16_t *Bp);

/* Does ct_quant_igemm compute the exact sums for operands bounded by |A| ≤ amax, |B| ≤ bmax
 * and |bias| ≤ cmax over K products: cmax + K·amax·bmax ≤ INT32_MAX (a bound on every
 * partial sum, in any order, and on any two products added at once)? */
static inline bool ct_quant_igemm_exact(int64_t K, int64_t amax, int64_t bmax, int64_t cmax) {
  if (amax < 0 || bmax < 0 || cmax < 0 || amax > 32768 || bmax > 32768 || cmax > INT32_MAX) return false;
  return K <= 0 || amax * bmax == 0 || (INT32_MAX - cmax) / (amax * bmax) >= K;
}

/* max |v[i]| over i < n (0 for n = 0), as int32 (|−32768| is 32768). */
int32_t ct_quant_i16_absmax(const int16_t *v, int64_t n);

/* The highest micro-kernel ct_quant_igemm may use: 0 plain C, 1 AVX2, 2 AVX-512 VNNI (the
 * default; a level the CPU lacks falls to the next it has). For tests that compare them;
 * not thread-safe (set it while no GEMM runs). */
void ct_quant_igemm_simd(int level);

#endif
