/* test_nn_sgemm.c: the AVX-512 float GEMM of the Top Conv kernel (ops/nn_sgemm.c) against a
 * scalar loop written here from its contract: per output, acc = 0, then acc = fmaf(W[m][k],
 * B[k][n], acc) for k = 0, 1, … (C99's fmaf: one rounding per product-add), then acc + bias,
 * then the clamp to [lo, hi] (none, ReLU-like, ReLU6-like; a NaN in B stays NaN) — bit for
 * bit, on shapes that reach every micro-kernel (1 to 12 rows, one or two column halves,
 * masked right edges), several K blocks (K > 256), K = 0, and strides wider than the
 * matrices; that slicing the call by rows and columns (as the thread split does) gives the
 * same bits; and its im2col (ct_nn_im2col_s1) against the definition. Skipped where the CPU
 * lacks AVX-512 (the kernels then decline). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn_sgemm.h"
#include "tests/testutil.h"

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The contract's loop. */
static void ref_gemm(int64_t M, int64_t N, int64_t K, const float *W, int64_t ldw, const float *B, int64_t ldb,
                     const float *bias, float lo, float hi, float *Y, int64_t ldy) {
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; k++) acc = fmaf(W[m * ldw + k], B[k * ldb + n], acc);
      acc = bias ? acc + bias[m] : acc;
      acc = acc < lo ? lo : acc;
      Y[m * ldy + n] = acc > hi ? hi : acc;
    }
}

/* One shape: whole call vs the loop, then the same call in row x column slices. */
static void sgemm_case(int64_t M, int64_t N, int64_t K, bool with_bias, float lo, float hi, unsigned seed) {
  int64_t ldw = K + 3, ldb = N + 5, ldy = N + 2;
  float *W = malloc(sizeof *W * (size_t)(M * ldw + 1)), *B = malloc(sizeof *B * (size_t)(K * ldb + 1));
  float *bias = malloc(sizeof *bias * (size_t)M), *got = malloc(sizeof *got * (size_t)(M * ldy));
  float *want = malloc(sizeof *want * (size_t)(M * ldy)), *part = malloc(sizeof *part * (size_t)(M * ldy));
  ck_assert(W && B && bias && got && want && part);
  for (int64_t i = 0; i < M * ldw; i++) W[i] = frand(&seed);
  for (int64_t i = 0; i < K * ldb; i++) B[i] = frand(&seed);
  if (K > 0 && N > 3) B[(K - 1) * ldb + 3] = NAN; /* column 3 sums to NaN */
  for (int64_t i = 0; i < M; i++) bias[i] = 4 * frand(&seed);
  for (int64_t i = 0; i < M * ldy; i++) got[i] = want[i] = part[i] = -7.0f; /* gaps must stay */
  const float *bp = with_bias ? bias : NULL;
  ck_assert(ct_nn_sgemm(M, N, K, W, ldw, B, ldb, bp, lo, hi, got, ldy));
  ref_gemm(M, N, K, W, ldw, B, ldb, bp, lo, hi, want, ldy);
  ck_assert_msg(memcmp(got, want, sizeof *got * (size_t)(M * ldy)) == 0, "M %lld N %lld K %lld differs from the loop",
                (long long)M, (long long)N, (long long)K);
  int64_t mh = M / 3 + 1, nh = N / 2 + 1; /* slices as a thread split makes them */
  for (int64_t m0 = 0; m0 < M; m0 += mh)
    for (int64_t n0 = 0; n0 < N; n0 += nh)
      ck_assert(ct_nn_sgemm(M - m0 < mh ? M - m0 : mh, N - n0 < nh ? N - n0 : nh, K, W + m0 * ldw, ldw, B + n0, ldb,
                            bp ? bp + m0 : NULL, lo, hi, part + m0 * ldy + n0, ldy));
  ck_assert_msg(memcmp(part, want, sizeof *got * (size_t)(M * ldy)) == 0, "M %lld N %lld K %lld: slices differ",
                (long long)M, (long long)N, (long long)K);
  free(W), free(B), free(bias), free(got), free(want), free(part);
}

START_TEST(test_sgemm_bits) {
  if (!ct_nn_sgemm_ok()) {
    printf("test_nn_sgemm: no AVX-512 here, the kernel declines (checked)\n");
    ck_assert(!ct_nn_sgemm(1, 1, 1, (float[]){1}, 1, (float[]){1}, 1, NULL, -INFINITY, INFINITY, (float[]){0}, 1));
    return;
  }
  static const int64_t Ms[] = {1, 5, 12, 13, 16, 25, 40}, Ns[] = {1, 15, 16, 17, 31, 32, 33, 70};
  static const int64_t Ks[] = {0, 1, 7, 256, 257, 600};
  unsigned seed = 1;
  for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
    for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
      for (size_t c = 0; c < sizeof Ks / sizeof *Ks; c++) {
        static const float lo[3] = {-INFINITY, 0.0f, 0.0f}, hi[3] = {INFINITY, INFINITY, 0.75f};
        size_t act = (a + 2 * b + c) % 3;
        sgemm_case(Ms[a], Ns[b], Ks[c], (a + b + c) % 3 != 0, lo[act], hi[act], seed++);
      }
}
END_TEST

/* ct_nn_im2col_s1 against the definition, element by element: chunks that start and end
 * inside output rows, pads wider than the kernel's reach, H and W strides 1 and 2, 1x1 and
 * 5x3 kernels, rows longer than 64 (the unmasked blocks). */
START_TEST(test_im2col_s1) {
  static const int64_t geo[][9] = {/* C H W KH KW sh sw pt pl */
                                   {3, 7, 9, 3, 3, 1, 1, 1, 1},  {2, 6, 5, 3, 3, 2, 1, 0, 1}, {2, 5, 20, 5, 3, 1, 1, 2, 4},
                                   {4, 4, 33, 1, 1, 1, 1, 0, 0}, {1, 3, 3, 3, 3, 1, 1, 3, 3}, {2, 9, 30, 3, 3, 2, 2, 1, 1},
                                   {2, 4, 11, 3, 3, 1, 2, 0, 2}, {1, 3, 150, 3, 3, 1, 2, 1, 1}, {1, 2, 140, 3, 3, 1, 1, 1, 1}};
  unsigned seed = 7;
  for (size_t g = 0; g < sizeof geo / sizeof *geo; g++) {
    int64_t C = geo[g][0], H = geo[g][1], W = geo[g][2], KH = geo[g][3], KW = geo[g][4], sh = geo[g][5];
    int64_t sw = geo[g][6], pt = geo[g][7], pl = geo[g][8], OH = (H + 2 * pt - KH) / sh + 1;
    int64_t OW = (W + 2 * pl - KW) / sw + 1, L = OH * OW, K = C * KH * KW;
    float *x = malloc(sizeof *x * (size_t)(C * H * W)), *col = malloc(sizeof *col * (size_t)(K * L));
    ck_assert(x && col);
    for (int64_t i = 0; i < C * H * W; i++) x[i] = frand(&seed);
    if (!ct_nn_im2col_s1(x, C, H, W, KH, KW, sh, sw, pt, pl, OW, col, 0, L)) {
      free(x), free(col);
      return; /* declines without AVX-512 (test_sgemm_bits says so) */
    }
    for (int64_t c0 = 0; c0 < L; c0 += L / 3 + 1) {
      int64_t nb = L - c0 < L / 3 + 1 ? L - c0 : L / 3 + 1;
      for (int64_t i = 0; i < K * nb; i++) col[i] = -9.0f;
      ck_assert(ct_nn_im2col_s1(x, C, H, W, KH, KW, sh, sw, pt, pl, OW, col, c0, nb));
      for (int64_t r = 0; r < K; r++)
        for (int64_t p = c0; p < c0 + nb; p++) {
          int64_t c = r / (KH * KW), kh = r / KW % KH, kw = r % KW, ih = p / OW * sh - pt + kh;
          int64_t iw = p % OW * sw - pl + kw;
          float want = ih >= 0 && ih < H && iw >= 0 && iw < W ? x[(c * H + ih) * W + iw] : 0.0f;
          ck_assert_msg(col[r * nb + p - c0] == want, "geometry %zu row %lld column %lld", g, (long long)r,
                        (long long)p);
        }
    }
    free(x), free(col);
  }
}
END_TEST

/* ct_nn_sgemm_enable(false) makes it decline (callers then use OpenBLAS); true restores it. */
START_TEST(test_sgemm_disable) {
  bool ok = ct_nn_sgemm_ok();
  float y = 0;
  ct_nn_sgemm_enable(false);
  ck_assert(!ct_nn_sgemm_ok());
  ck_assert(!ct_nn_sgemm(1, 1, 1, (float[]){2}, 1, (float[]){3}, 1, NULL, -INFINITY, INFINITY, &y, 1));
  ck_assert(y == 0);
  ct_nn_sgemm_enable(true);
  ck_assert(ct_nn_sgemm_ok() == ok);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nn_sgemm");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_sgemm_bits);
  tcase_add_test(tc, test_im2col_s1);
  tcase_add_test(tc, test_sgemm_disable);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
