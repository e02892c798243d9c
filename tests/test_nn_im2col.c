/* test_nn_im2col.c: the AVX-512 / AVX2 im2col of the Top Conv kernel (ops/nn_im2col.c)
 * against the definition. A geometry the kernel declines on this CPU (W stride 2 without
 * AVX-512, anything without AVX2) is skipped. */
#include <stdio.h>
#include <stdlib.h>

#include "ops/nn_im2col.h"
#include "tests/testutil.h"

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* ct_nn_im2col_s1 against the definition, element by element: chunks that start and end
 * inside output rows, pads wider than the kernel's reach, H and W strides 1 and 2, 1x1 and
 * 5x3 kernels, rows longer than 64 (the unmasked blocks). */
START_TEST(test_im2col_s1) {
  static const int64_t geo[][9] = {/* C H W KH KW sh sw pt pl */
                                   {3, 7, 9, 3, 3, 1, 1, 1, 1},  {2, 6, 5, 3, 3, 2, 1, 0, 1}, {2, 5, 20, 5, 3, 1, 1, 2, 4},
                                   {4, 4, 33, 1, 1, 1, 1, 0, 0}, {1, 3, 3, 3, 3, 1, 1, 3, 3}, {2, 9, 30, 3, 3, 2, 2, 1, 1},
                                   {2, 4, 11, 3, 3, 1, 2, 0, 2}, {1, 3, 150, 3, 3, 1, 2, 1, 1}, {1, 2, 140, 3, 3, 1, 1, 1, 1}};
  unsigned seed = 7;
  int checked = 0;
  for (size_t g = 0; g < sizeof geo / sizeof *geo; g++) {
    int64_t C = geo[g][0], H = geo[g][1], W = geo[g][2], KH = geo[g][3], KW = geo[g][4], sh = geo[g][5];
    int64_t sw = geo[g][6], pt = geo[g][7], pl = geo[g][8], OH = (H + 2 * pt - KH) / sh + 1;
    int64_t OW = (W + 2 * pl - KW) / sw + 1, L = OH * OW, K = C * KH * KW;
    float *x = malloc(sizeof *x * (size_t)(C * H * W)), *col = malloc(sizeof *col * (size_t)(K * L));
    ck_assert(x && col);
    for (int64_t i = 0; i < C * H * W; i++) x[i] = frand(&seed);
    if (!ct_nn_im2col_s1(x, C, H, W, KH, KW, sh, sw, pt, pl, OW, col, 0, L)) {
      free(x), free(col);
      printf("test_nn_im2col: geometry %zu (W stride %lld): the kernel declines on this CPU\n", g, (long long)sw);
      continue;
    }
    checked++;
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
  if (__builtin_cpu_supports("avx2")) ck_assert_int_ge(checked, 6); /* every W stride 1 geometry */
}
END_TEST

int main(void) {
  Suite *s = suite_create("nn_im2col");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_im2col_s1);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
