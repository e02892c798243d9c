/* test_workpool.c: the kernels' worker pool (common/workpool.h) and the kernels split over
 * it: every index runs exactly once on a valid slot; Conv, MaxPool/AveragePool and SiLU give
 * bit-identical results with 1, 2 and 3 threads; separable max pools equal a naive loop. */
#include <check.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/workpool.h"
#include "tests/kern_nn_harness.h"
#include "tests/testutil.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

typedef struct cover {
  atomic_int *hits;
  int threads;
  atomic_int bad_slot;
} cover;

static void mark(void *arg, int64_t lo, int64_t hi, int slot) {
  cover *c = arg;
  if (slot < 0 || slot >= c->threads) atomic_fetch_add(&c->bad_slot, 1);
  for (int64_t i = lo; i < hi; i++) atomic_fetch_add(&c->hits[i], 1);
}

START_TEST(test_for_covers_each_index_once) {
  enum { N = 1000 };
  static atomic_int hits[N];
  ct_workpool *p = ct_workpool_new(3);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_ge(ct_workpool_threads(p), 1);
  cover c = {hits, ct_workpool_threads(p), 0};
  for (int loop = 0; loop < 2000; loop++) { /* back-to-back loops: spinning and sleeping workers */
    int64_t n = loop % 7 == 0 ? 1 : 1 + loop % N, chunks = loop % 5 == 0 ? n + 9 : 1 + loop % 13;
    for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
    ct_workpool_for(p, n, chunks, mark, &c);
    for (int64_t i = 0; i < N; i++) ck_assert_int_eq(atomic_load(&hits[i]), i < n ? 1 : 0);
  }
  ck_assert_int_eq(atomic_load(&c.bad_slot), 0);
  ct_workpool_for(p, 0, 4, mark, &c); /* empty range: no call */
  ct_workpool_free(p);
  c.threads = 1;
  for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
  ct_workpool_for(NULL, 10, 4, mark, &c); /* no pool: inline */
  for (int64_t i = 0; i < 10; i++) ck_assert_int_eq(atomic_load(&hits[i]), 1);
  ck_assert_int_eq(atomic_load(&c.bad_slot), 0);
  ct_workpool_free(NULL);
}
END_TEST

/* Runs op kind on x (and optional w, b) with `threads`; returns a copy of output 0. */
static ct_tensor *run_op(ct_op_kind kind, ct_tensor *const *ins, int n_in, int threads, const int64_t *k, int64_t s,
                         int64_t pad) {
  knh *h = knh_new(kind, n_in, ins, 1);
  h->threads = threads;
  if (kind != CT_OP_SILU) {
    if (kind != CT_OP_CONV) knh_ints(h, "kernel_shape", 2, (long long)k[0], (long long)k[1]);
    knh_ints(h, "strides", 2, (long long)s, (long long)s);
    knh_ints(h, "pads", 4, (long long)pad, (long long)pad, (long long)pad, (long long)pad);
  }
  ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
  ct_tensor *y = ct_tensor_clone(h->out[0]);
  knh_free(h);
  return y;
}

static void expect_same(const ct_tensor *a, const ct_tensor *b) {
  ck_assert_int_eq(a->nbytes, b->nbytes);
  ck_assert_msg(memcmp(a->data, b->data, a->nbytes) == 0, "results differ between thread counts");
}

START_TEST(test_conv_bit_identical_across_threads) {
  static const int64_t cfgs[][6] = {/* c, hw, oc, k, stride, pad */
                                    {16, 56, 96, 1, 1, 0},  /* direct GEMM, column chunks */
                                    {320, 7, 1280, 1, 1, 0}, /* few columns: row blocks */
                                    {24, 40, 48, 3, 1, 1},  /* im2col chunks */
                                    {32, 30, 32, 3, 2, 1}};
  for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
    const int64_t *f = cfgs[i];
    uint32_t seed = 99u + (uint32_t)i;
    ct_tensor *ins[3] = {knh_rand(4, SH(1, f[0], f[1], f[1]), &seed), knh_rand(4, SH(f[2], f[0], f[3], f[3]), &seed),
                         knh_rand(1, SH(f[2]), &seed)};
    ct_tensor *y1 = run_op(CT_OP_CONV, ins, 3, 1, NULL, f[4], f[5]);
    for (int t = 2; t <= 3; t++) {
      ct_tensor *yt = run_op(CT_OP_CONV, ins, 3, t, NULL, f[4], f[5]);
      expect_same(y1, yt);
      ct_tensor_free(yt);
    }
    ct_tensor_free(y1);
    for (int k = 0; k < 3; k++) ct_tensor_free(ins[k]);
  }
}
END_TEST

/* Naive max / average (in-bounds taps, double sum in kh, kw order) of a square pool. */
static float naive_pool(const float *x, int64_t H, int64_t k, int64_t s, int64_t pad, int64_t oh, int64_t ow,
                        bool is_max) {
  double acc = 0;
  float best = -INFINITY;
  int cnt = 0;
  for (int64_t kh = 0; kh < k; kh++)
    for (int64_t kw = 0; kw < k; kw++) {
      int64_t ih = oh * s - pad + kh, iw = ow * s - pad + kw;
      if (ih < 0 || ih >= H || iw < 0 || iw >= H) continue;
      acc += x[ih * H + iw], cnt++;
      if (x[ih * H + iw] > best) best = x[ih * H + iw];
    }
  return is_max ? best : (float)(acc / cnt);
}

START_TEST(test_pools_spp_exact_and_thread_independent) {
  static const int64_t cfgs[][3] = {{5, 1, 2}, {9, 1, 4}, {13, 1, 6}, {3, 2, 1}, {2, 2, 0}}; /* k, stride, pad */
  const int64_t C = 24, H = 20;
  for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++)
    for (int is_max = 0; is_max < 2; is_max++) {
      const int64_t k = cfgs[i][0], s = cfgs[i][1], pad = cfgs[i][2], O = (H + 2 * pad - k) / s + 1;
      uint32_t seed = 7u + (uint32_t)i;
      ct_tensor *ins[1] = {knh_rand(4, SH(1, C, H, H), &seed)};
      ct_op_kind kind = is_max ? CT_OP_MAXPOOL : CT_OP_AVERAGEPOOL;
      ct_tensor *y1 = run_op(kind, ins, 1, 1, SH(k, k), s, pad), *y2 = run_op(kind, ins, 1, 2, SH(k, k), s, pad);
      expect_same(y1, y2);
      const float *x = ins[0]->data, *y = y1->data;
      for (int64_t c = 0; c < C; c++)
        for (int64_t oh = 0; oh < O; oh++)
          for (int64_t ow = 0; ow < O; ow++)
            ck_assert_float_eq(y[(c * O + oh) * O + ow], naive_pool(x + c * H * H, H, k, s, pad, oh, ow, is_max));
      ct_tensor_free(y1), ct_tensor_free(y2), ct_tensor_free(ins[0]);
    }
}
END_TEST

START_TEST(test_silu_split_matches_one_thread) {
  uint32_t seed = 5u;
  ct_tensor *ins[1] = {knh_rand(4, SH(1, 7, 101, 103), &seed)};
  ct_tensor *y1 = run_op(CT_OP_SILU, ins, 1, 1, NULL, 1, 0), *y2 = run_op(CT_OP_SILU, ins, 1, 2, NULL, 1, 0);
  expect_same(y1, y2);
  const float *x = ins[0]->data, *y = y1->data;
  for (int64_t i = 0; i < 7 * 101 * 103; i += 97)
    ck_assert_double_eq_tol(y[i], x[i] / (1.0 + exp(-(double)x[i])), 1e-6);
  ct_tensor_free(y1), ct_tensor_free(y2), ct_tensor_free(ins[0]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("workpool");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_for_covers_each_index_once);
  tcase_add_test(tc, test_conv_bit_identical_across_threads);
  tcase_add_test(tc, test_pools_spp_exact_and_thread_independent);
  tcase_add_test(tc, test_silu_split_matches_one_thread);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
