/* test_eval.c: ptq/eval — argmax and top-k by hand (ties, NaN), and `ctpu eval` on
 * fmnist-rescnn over the first 1000 Fashion-MNIST test images: top-1 equals the count this
 * test gets by running the interpreter itself on (pixel − 72.93)·0.0111092595, and is close
 * to the published 0.9256 of the full set; --agreement of a model with itself is 1; an
 * unlabeled data set without --agreement is an error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "ir/text.h"
#include "ptq/eval.h"
#include "reference/interp.h"
#include "tests/testutil.h"

static ct_tensor *scores(int n, const float *v) {
  int64_t s[2] = {1, n};
  ct_tensor *t = ct_tensor_new(CT_F32, 2, s, "s");
  memcpy(t->data, v, sizeof *v * (size_t)n);
  return t;
}

START_TEST(test_argmax_topk) {
  const float v[7] = {0.5f, 3, NAN, 3, 1, 2, -1};
  ct_tensor *t = scores(7, v);
  ck_assert_int_eq(ct_eval_argmax(t), 1); /* first of the tied maxima; NaN never wins */
  ck_assert(ct_eval_in_topk(t, 3, 1));    /* tie with the top counts as top-1 */
  ck_assert(ct_eval_in_topk(t, 0, 5));    /* larger: 3, 3, 1, 2 → 4 < 5 */
  ck_assert(!ct_eval_in_topk(t, 6, 5));   /* larger: 5 */
  ck_assert(!ct_eval_in_topk(t, 2, 5));   /* NaN */
  ck_assert(!ct_eval_in_topk(t, 7, 5));   /* out of range */
  ct_tensor_free(t);
  const float nan1[1] = {NAN};
  t = scores(1, nan1);
  ck_assert_int_eq(ct_eval_argmax(t), -1);
  ct_tensor_free(t);
}
END_TEST

START_TEST(test_cosine) {
  const float a[3] = {1, 2, 2}, b[3] = {2, 0, 0}, z[3] = {0, 0, 0}, c[2] = {1, 1};
  ct_tensor *ta = scores(3, a), *tb = scores(3, b), *tz = scores(3, z), *tc = scores(2, c);
  ck_assert(fabs(ct_eval_cosine(ta, tb) - 1.0 / 3.0) < 1e-12); /* 2 / (3 · 2) */
  ck_assert(fabs(ct_eval_cosine(ta, ta) - 1.0) < 1e-12);
  ck_assert(ct_eval_cosine(ta, tz) == 0);
  ck_assert(ct_eval_cosine(tz, tz) == 1);
  ck_assert(isnan(ct_eval_cosine(ta, tc)));
  ct_tensor_free(ta), ct_tensor_free(tb), ct_tensor_free(tz), ct_tensor_free(tc);
}
END_TEST

/* Sums over several tensors: {1, 2, NaN}·{3, 4, NaN} then {2}·{1}: the NaN pair agrees and
 * is left out, xy = 3 + 8 + 2 = 13, xx = 1 + 4 + 4 = 9, yy = 9 + 16 + 1 = 26; a NaN against
 * a number (common/cosine.h) then makes the cosine NaN. */
START_TEST(test_cos_sums) {
  const float x1[3] = {1, 2, NAN}, y1[3] = {3, 4, NAN}, x2[1] = {2}, y2[1] = {1};
  ct_tensor *a = scores(3, x1), *b = scores(3, y1), *c = scores(1, x2), *e = scores(1, y2);
  ct_cos_sums s = {0};
  ck_assert(ct_eval_cos_add(&s, a, b));
  ck_assert(ct_eval_cos_add(&s, c, e));
  ck_assert(!ct_eval_cos_add(&s, a, e)); /* counts differ: nothing added */
  ck_assert(s.xy == 13 && s.xx == 9 && s.yy == 26);
  ck_assert(fabs(ct_cos_of(&s) - 13 / sqrt(9.0 * 26.0)) < 1e-15);
  ck_assert(ct_cos_of(&(ct_cos_sums){0}) == 1);
  ck_assert(ct_cos_of(&(ct_cos_sums){0, 4, 0, 0}) == 0);
  const float y3[3] = {3, 4, 5};
  ct_tensor *f = scores(3, y3);
  ck_assert(ct_eval_cos_add(&s, a, f));
  ck_assert(s.nonfinite == 1 && isnan(ct_cos_of(&s)));
  ct_tensor_free(f);
  ct_tensor_free(a), ct_tensor_free(b), ct_tensor_free(c), ct_tensor_free(e);
}
END_TEST

#define N_EVAL 1000

/* Top-1 hits of the first N_EVAL images computed here, without io/dataset or ptq/eval. */
static int64_t count_directly(const char *top) {
  ct_graph *g;
  ct_diag d;
  ck_assert_msg(ct_ir_load(top, &g, &d) == CT_OK, "%s", d.msg);
  ct_tensor *im, *lab;
  const char *h5 = ct_test_shared_path("datasets/fashion-mnist-test.h5");
  ck_assert_int_eq(ct_h5_read_one(h5, "images", &im, &d), CT_OK);
  ck_assert_int_eq(ct_h5_read_one(h5, "labels", &lab, &d), CT_OK);
  int64_t hits = 0, shape[4] = {1, 1, 28, 28};
  for (int64_t i = 0; i < N_EVAL; i++) {
    ct_tensor_list in, out;
    ct_tensor_list_init(&in);
    ct_tensor_list_init(&out);
    ct_tensor *x = ct_tensor_new(CT_F32, 4, shape, "input");
    const uint8_t *px = (const uint8_t *)im->data + i * 784;
    for (int k = 0; k < 784; k++) ((float *)x->data)[k] = (float)(((double)px[k] - 72.93) * 0.0111092595);
    ck_assert(ct_tensor_list_push(&in, x));
    ck_assert_int_eq(ct_ref_run(g, NULL, &in, &out, &d), CT_OK);
    const float *y = out.items[0]->data;
    int best = 0;
    for (int c = 1; c < 10; c++)
      if (y[c] > y[best]) best = c;
    hits += best == ((const uint8_t *)lab->data)[i];
    ct_tensor_list_free(&in);
    ct_tensor_list_free(&out);
  }
  ct_tensor_free(im);
  ct_tensor_free(lab);
  ct_graph_free(g);
  return hits;
}

START_TEST(test_fmnist_top1) {
  const char *top = ct_test_tmp_path("fm.top");
  char out[4096];
  int rc = ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s' --mean 72.93 --scale 0.0111092595",
                            ct_test_shared_path("models/fmnist-rescnn/model.onnx"), top);
  ck_assert_msg(rc == 0, "transform: %s", out);
  const char *h5 = ct_test_shared_path("datasets/fashion-mnist-test.h5");
  rc = ct_test_run_ctpu(out, sizeof out, "eval '%s' --dataset '%s' --input-num %d --threads 2", top, h5, N_EVAL);
  ck_assert_msg(rc == 0, "eval: %s", out);
  double acc;
  long long hits;
  const char *p = strstr(out, "top1 ");
  ck_assert_msg(p && sscanf(p, "top1 %lf (%lld)", &acc, &hits) == 2, "%s", out);
  ck_assert_msg(strstr(out, "samples 1000\n"), "%s", out);
  ck_assert_int_eq(hits, count_directly(top));
  ck_assert_msg(fabs(acc - 0.9256) < 0.02, "top-1 %g far from the published 0.9256", acc);
  rc = ct_test_run_ctpu(out, sizeof out, "eval '%s' --dataset '%s' --input-num 100 --agreement '%s'", top, h5, top);
  ck_assert_msg(rc == 0 && strstr(out, "agreement 1.0000 (100)") && strstr(out, "cosine mean 1.000000 min 1.000000"), "%s", out);
  /* a single unlabeled sample: only agreement works */
  const char *pb = ct_test_shared_path("models/fmnist-rescnn/test_data_set_0/input_0.pb");
  rc = ct_test_run_ctpu(out, sizeof out, "eval '%s' --dataset '%s'", top, pb);
  ck_assert_msg(rc == 3 && strstr(out, "has no labels"), "%d %s", rc, out);
  rc = ct_test_run_ctpu(out, sizeof out, "eval '%s' --dataset '%s' --agreement '%s'", top, pb, top);
  ck_assert_msg(rc == 0 && strstr(out, "agreement 1.0000 (1)"), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "eval '%s'", top), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "eval '%s' --dataset '%s' --threads 0", top, h5), 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("eval");
  TCase *tc = tcase_create("unit");
  tcase_add_test(tc, test_argmax_topk);
  tcase_add_test(tc, test_cosine);
  tcase_add_test(tc, test_cos_sums);
  suite_add_tcase(s, tc);
  if (ct_test_shared()) {
    TCase *m = tcase_create("models");
    tcase_set_timeout(m, 900);
    tcase_add_test(m, test_fmnist_top1);
    suite_add_tcase(s, m);
  } else {
    fprintf(stderr, "test_eval: ../shared absent, model cases skipped\n");
  }
  return ct_test_run_suite(s);
}
