/* test_kern_pool.c: shape functions + float reference kernels of the pools (MaxPool,
 * AveragePool with and without counted pads, ceil mode, dilations, LpPool, the global pools).
 * Expected values are hand-derived (ONNX spec examples worked by hand) or come from the naive
 * loops written below, independent of ops/nn_pool.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kern_nn_harness.h"
#include "tests/testutil.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

typedef struct pcfg {
  int h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, ceil, incl;
} pcfg;

static int pool_out(int in, int k, int s, int d, int p0, int p1, int ceil) {
  int span = in + p0 + p1 - d * (k - 1) - 1;
  int o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= in + p0) o--;
  return o;
}

/* Naive 2-D max/avg pool of one plane: walk the window, skip taps outside the input; the
 * count_include_pad divisor counts taps inside [-p0, in + p1) in both dims. */
static void naive_pool(const pcfg *p, const float *x, bool is_max, float *y, int oh_n, int ow_n) {
  for (int oh = 0; oh < oh_n; oh++)
    for (int ow = 0; ow < ow_n; ow++) {
      double s = 0, best = -INFINITY;
      int cnt = 0, cpad_h = 0, cpad_w = 0;
      for (int kh = 0; kh < p->kh; kh++) cpad_h += oh * p->sh - p->pt + kh * p->dh < p->h + p->pb;
      for (int kw = 0; kw < p->kw; kw++) cpad_w += ow * p->sw - p->pl + kw * p->dw < p->w + p->pr;
      for (int kh = 0; kh < p->kh; kh++)
        for (int kw = 0; kw < p->kw; kw++) {
          int ih = oh * p->sh - p->pt + kh * p->dh, iw = ow * p->sw - p->pl + kw * p->dw;
          if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
          double v = x[ih * p->w + iw];
          s += v, cnt++;
          if (v > best) best = v;
        }
      y[oh * ow_n + ow] = (float)(is_max ? best : s / (p->incl ? cpad_h * cpad_w : cnt));
    }
}

START_TEST(test_pools_random_vs_naive) {
  static const pcfg cases[] = {
      {7, 7, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0}, {8, 6, 2, 3, 2, 1, 1, 1, 1, 1, 0, 1, 0, 1},
      {9, 9, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1}, {5, 5, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0, 1},
      {6, 7, 3, 2, 3, 2, 1, 1, 1, 0, 1, 1, 1, 0}, {10, 10, 2, 2, 3, 3, 2, 1, 0, 0, 0, 0, 1, 1},
      {150, 150, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}, /* big enough for 2 threads */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int is_max = 0; is_max < 2; is_max++) {
      const pcfg *p = &cases[c];
      uint32_t seed = 77u + (uint32_t)c;
      ct_tensor *x = knh_rand(4, SH(2, 3, p->h, p->w), &seed);
      ct_tensor *ins[1] = {x};
      knh *h = knh_new(is_max ? CT_OP_MAXPOOL : CT_OP_AVERAGEPOOL, 1, ins, 1);
      h->threads = 2;
      knh_ints(h, "kernel_shape", 2, (long long)p->kh, (long long)p->kw);
      knh_ints(h, "strides", 2, (long long)p->sh, (long long)p->sw);
      knh_ints(h, "dilations", 2, (long long)p->dh, (long long)p->dw);
      knh_ints(h, "pads", 4, (long long)p->pt, (long long)p->pl, (long long)p->pb, (long long)p->pr);
      knh_int(h, "ceil_mode", p->ceil), knh_int(h, "count_include_pad", p->incl);
      ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
      int oh = pool_out(p->h, p->kh, p->sh, p->dh, p->pt, p->pb, p->ceil);
      int ow = pool_out(p->w, p->kw, p->sw, p->dw, p->pl, p->pr, p->ceil);
      knh_expect_shape(h->out[0], 4, SH(2, 3, oh, ow));
      float *want = malloc(sizeof *want * (size_t)(6 * oh * ow));
      for (int pl = 0; pl < 6; pl++)
        naive_pool(p, (const float *)x->data + pl * p->h * p->w, is_max, want + pl * oh * ow, oh, ow);
      knh_expect_close(h->out[0], want, 6 * oh * ow, 1e-6, 1e-5);
      free(want);
      knh_free(h);
      ct_tensor_free(x);
    }
}
END_TEST

/* ONNX spec examples worked by hand: 4x4 = 1..16, k3 s2 ceil; 5x5 = 1..25 precomputed pads. */
START_TEST(test_pools_hand) {
  float v[25];
  for (int i = 0; i < 25; i++) v[i] = (float)(i + 1);
  ct_tensor *x4 = knh_vals(4, SH(1, 1, 4, 4), v), *x5 = knh_vals(4, SH(1, 1, 5, 5), v);
  ct_tensor *ins[1] = {x4};
  for (int is_max = 0; is_max < 2; is_max++) {
    knh *h = knh_new(is_max ? CT_OP_MAXPOOL : CT_OP_AVERAGEPOOL, 1, ins, 1);
    knh_ints(h, "kernel_shape", 2, 3LL, 3LL), knh_ints(h, "strides", 2, 2LL, 2LL), knh_int(h, "ceil_mode", 1);
    ck_assert_int_eq(knh_run(h), CT_OK);
    /* windows rows {0..2},{2,3} x cols {0..2},{2,3} */
    static const float mx[4] = {11, 12, 15, 16}, av[4] = {6, 7.5f, 12, 13.5f};
    knh_expect_close(h->out[0], is_max ? mx : av, 4, 1e-6, 0);
    knh_free(h);
  }
  ins[0] = x5;
  knh *h = knh_new(CT_OP_AVERAGEPOOL, 1, ins, 1);
  knh_ints(h, "kernel_shape", 2, 5LL, 5LL), knh_ints(h, "pads", 4, 2LL, 2LL, 2LL, 2LL), knh_int(h, "count_include_pad", 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  /* (1+2+3+6+7+8+11+12+13)/25 = 2.52; centre = 325/25 = 13 */
  ck_assert_float_eq_tol(((float *)h->out[0]->data)[0], 2.52f, 1e-6f);
  ck_assert_float_eq_tol(((float *)h->out[0]->data)[12], 13.0f, 1e-6f);
  knh_free(h);
  /* MaxPool k2 s2 with Indices; storage_order 0 (row-major) and 1 (column-major) */
  for (int so = 0; so < 2; so++) {
    h = knh_new(CT_OP_MAXPOOL, 1, ins, 2);
    knh_ints(h, "kernel_shape", 2, 2LL, 2LL), knh_ints(h, "strides", 2, 2LL, 2LL), knh_int(h, "storage_order", so);
    ck_assert_int_eq(knh_run(h), CT_OK);
    knh_expect_close(h->out[0], (const float[]){7, 9, 17, 19}, 4, 0, 0);
    ck_assert_int_eq(h->out[1]->dtype, CT_I64);
    static const int64_t want_idx[2][4] = {{6, 8, 16, 18}, {6, 16, 8, 18}};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(((int64_t *)h->out[1]->data)[i], want_idx[so][i]);
    knh_free(h);
  }
  /* LpPool p = 2 over [3, 4, 0]: sqrt(9+16) = 5, sqrt(16) = 4; global pools of 1..25 */
  ct_tensor *x3 = knh_vals(3, SH(1, 1, 3), (const float[]){3, 4, 0});
  ins[0] = x3;
  h = knh_new(CT_OP_LPPOOL, 1, ins, 1);
  knh_ints(h, "kernel_shape", 1, 2LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){5, 4}, 2, 1e-6, 0);
  knh_free(h);
  ins[0] = x5;
  h = knh_new(CT_OP_GLOBALAVERAGEPOOL, 1, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 1, 1));
  knh_expect_close(h->out[0], (const float[]){13}, 1, 1e-6, 0);
  knh_free(h);
  h = knh_new(CT_OP_GLOBALMAXPOOL, 1, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){25}, 1, 0, 0);
  knh_free(h);
  ct_tensor_free(x3), ct_tensor_free(x4), ct_tensor_free(x5);
}
END_TEST

/* MaxPool on uint8 goes through f32 and back exactly; missing kernel_shape is an error. */
START_TEST(test_maxpool_uint8_and_errors) {
  int64_t s[4] = {1, 1, 2, 3};
  ct_tensor *x = ct_tensor_new(CT_U8, 4, s, NULL);
  uint8_t vals[6] = {1, 200, 3, 255, 5, 6};
  memcpy(x->data, vals, 6);
  ct_tensor *ins[1] = {x};
  knh *h = knh_new(CT_OP_MAXPOOL, 1, ins, 1);
  knh_ints(h, "kernel_shape", 2, 2LL, 2LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  ck_assert_int_eq(h->out[0]->dtype, CT_U8);
  ck_assert_int_eq(((uint8_t *)h->out[0]->data)[0], 255);
  ck_assert_int_eq(((uint8_t *)h->out[0]->data)[1], 200);
  knh_free(h);
  h = knh_new(CT_OP_MAXPOOL, 1, ins, 1);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "kernel_shape"));
  knh_free(h);
  ct_tensor_free(x);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kern_pool");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_pools_random_vs_naive);
  tcase_add_test(tc, test_pools_hand);
  tcase_add_test(tc, test_maxpool_uint8_and_errors);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
