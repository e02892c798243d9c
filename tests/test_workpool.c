/* test_workpool.c: the kernels' worker pool (common/workpool.h) and the kernels split over
 * it: every index runs exactly once on a valid slot, with 2 to 4 threads, back-to-back loops
 * and workers that slow down; a loop a worker held up is followed by loops on the caller
 * alone; Conv, MaxPool/AveragePool and SiLU give bit-identical results with 1, 2 and 3
 * threads, and so do whole real models (ct_ref_run, every output); separable max pools equal
 * a naive loop. */
#include <check.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/workpool.h"
#include "io/inputs.h"
#include "ir/text.h"
#include "reference/interp.h"
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

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, us % 1000000 * 1000};
  nanosleep(&ts, NULL);
}

/* Chunks on a worker's slot sleep (every third, by its start): the caller finishes the others
 * and must still get every index exactly once, whoever is late. */
static void mark_slow_workers(void *arg, int64_t lo, int64_t hi, int slot) {
  if (slot != 0 && lo % 3 == 0) sleep_us(300);
  mark(arg, lo, hi, slot);
}

START_TEST(test_for_covers_with_slow_workers) {
  enum { N = 600 };
  static atomic_int hits[N];
  for (int t = 2; t <= 4; t++) {
    ct_workpool *p = ct_workpool_new(t);
    ck_assert_ptr_nonnull(p);
    cover c = {hits, ct_workpool_threads(p), 0};
    for (int loop = 0; loop < 300; loop++) {
      int64_t n = 1 + (loop * 7919) % N, chunks = 1 + loop % 17;
      for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
      ct_workpool_for(p, n, chunks, loop % 2 ? mark_slow_workers : mark, &c);
      for (int64_t i = 0; i < N; i++) ck_assert_int_eq(atomic_load(&hits[i]), i < n ? 1 : 0);
      if (loop % 50 == 49) sleep_us(1000); /* idle workers park: the next loop wakes them */
    }
    ck_assert_int_eq(atomic_load(&c.bad_slot), 0);
    ct_workpool_free(p);
  }
}
END_TEST

/* Which slots ran a loop's chunks (each sleeps 20 µs, so that workers have time to join); a
 * worker's first chunk sleeps 20 ms when `stall`. */
typedef struct slots_seen {
  atomic_int by_caller, by_workers;
  atomic_bool stall;
} slots_seen;

static void note_slot(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)lo, (void)hi;
  slots_seen *s = arg;
  sleep_us(slot != 0 && atomic_exchange(&s->stall, false) ? 20000 : 20);
  atomic_fetch_add(slot == 0 ? &s->by_caller : &s->by_workers, 1);
}

/* A loop where the caller ran 63 chunks and then waited ~20 ms for the worker's one, which
 * saved a chunk's time, cost more than it saved: the next loops (SERIAL_MIN = 4 in
 * workpool.c) run on the caller alone, as one call. Retried until the worker takes part in
 * the stalled loop with that one chunk (on a loaded machine it may not), at most 50 times;
 * when it never does (a starved machine), there is nothing to judge. */
START_TEST(test_stalled_worker_sends_loops_to_caller) {
  ct_workpool *p = ct_workpool_new(2);
  ck_assert_ptr_nonnull(p);
  if (ct_workpool_threads(p) < 2) {
    ct_workpool_free(p);
    return;
  }
  bool seen = false;
  for (int attempt = 0; attempt < 50 && !seen; attempt++) {
    slots_seen s = {0, 0, true};
    ct_workpool_for(p, 64, 64, note_slot, &s);
    if (atomic_load(&s.by_workers) != 1) { /* only its stalled chunk: the caller surely lost time */
      for (int i = 0; i < 64; i++) ct_workpool_for(p, 2, 2, note_slot, &(slots_seen){0, 0, false}); /* drain a spell */
      continue;
    }
    seen = true;
    for (int k = 0; k < 4; k++) {
      slots_seen after = {0, 0, false};
      ct_workpool_for(p, 64, 64, note_slot, &after);
      ck_assert_msg(atomic_load(&after.by_workers) == 0, "loop %d after the stall (attempt %d): %d chunks on workers", k, attempt, atomic_load(&after.by_workers));
      ck_assert_int_eq(atomic_load(&after.by_caller), 1); /* one call over the whole range */
    }
  }
  ct_workpool_free(p);
  if (!seen) fprintf(stderr, "test_stalled_worker_sends_loops_to_caller: no worker took part in 50 loops (a starved machine); nothing to judge\n");
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

/* Every output of a real model (../shared/models/NAME, its test input) is bit-identical with
 * 1, 2 and 3 threads of ct_ref_run. */
static void model_threads_identical(const char *name) {
  char out[4096];
  const char *top = ct_test_tmp_path(name);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'",
                                 ct_test_shared_path("models/%s/model.onnx", name), top) == 0, "%s", out);
  ct_diag d;
  ct_diag_clear(&d);
  ct_graph *g = NULL;
  ck_assert_msg(ct_ir_load(top, &g, &d) == CT_OK, "%s", d.msg);
  const char *files[1] = {ct_test_shared_path("models/%s/test_data_set_0/input_0.pb", name)};
  ct_tensor_list in, ref;
  ct_tensor_list_init(&in), ct_tensor_list_init(&ref);
  ck_assert_msg(ct_inputs_load(g, files, 1, &in, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_ref_run(g, &(ct_ref_options){.threads = 1}, &in, &ref, &d) == CT_OK, "%s", d.msg);
  for (int t = 2; t <= 3; t++) {
    ct_tensor_list got;
    ct_tensor_list_init(&got);
    ck_assert_msg(ct_ref_run(g, &(ct_ref_options){.threads = t}, &in, &got, &d) == CT_OK, "%s", d.msg);
    ck_assert_int_eq(got.n, ref.n);
    for (int i = 0; i < ref.n; i++) expect_same(ref.items[i], got.items[i]);
    ct_tensor_list_free(&got);
  }
  ct_tensor_list_free(&ref), ct_tensor_list_free(&in);
  ct_graph_free(g);
}

START_TEST(test_models_bit_identical_across_threads) {
  if (!ct_test_shared()) return;
  model_threads_identical("yolox-nano");
  model_threads_identical("mobilenetv2-fp32-dequant-from-qdq");
}
END_TEST

int main(void) {
  Suite *s = suite_create("workpool");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_for_covers_each_index_once);
  tcase_add_test(tc, test_for_covers_with_slow_workers);
  tcase_add_test(tc, test_stalled_worker_sends_loops_to_caller);
  tcase_add_test(tc, test_models_bit_identical_across_threads);
  tcase_add_test(tc, test_conv_bit_identical_across_threads);
  tcase_add_test(tc, test_pools_spp_exact_and_thread_independent);
  tcase_add_test(tc, test_silu_split_matches_one_thread);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
