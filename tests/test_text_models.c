/* test_text_models.c: the text IR on the real models of ../shared/models: each model.onnx is
 * imported (onnx/onnx.h) and propagated, printed, parsed and printed again (identical
 * text), verified, and saved/loaded with its weights (identical text and weight bytes). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnx/onnx.h"
#include "compiler/propagate.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tests/testutil.h"

static const char *const models[] = {
    "fmnist-rescnn",  "mobilenetv2-fp32-dequant-from-qdq", "mobilenetv2-torchvision-qdq-int8", "yolox-nano",
    "ultraface-rfb-320", "ppocrv4-det", "ppocrv4-rec",
};

static double ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void check_weights_equal(const ct_graph *a, const ct_graph *b) {
  for (int i = 0; i < a->n_ops; i++) {
    const ct_op *op = a->ops[i];
    if (op->dead || op->kind != CT_OP_WEIGHT) continue;
    const ct_value *v = op->out[0], *w = ct_graph_find_value(b, v->name);
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(w->data);
    ck_assert_uint_eq(v->data->nbytes, w->data->nbytes);
    ck_assert_msg(memcmp(v->data->data, w->data->data, v->data->nbytes) == 0, "weight %s differs", v->name);
  }
}

START_TEST(test_model_roundtrip) {
  const char *name = models[_i];
  const char *path = ct_test_shared_path("models/%s/model.onnx", name);
  ct_graph *g, *h, *k;
  ct_diag d;
  ck_assert_msg(ct_onnx_import(path, NULL, &g, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_top_propagate(g, &d) == CT_OK, "%s", d.msg);
  char *t1, *t2, *t3;
  size_t len;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ck_assert_int_eq(ct_ir_print_string(g, &t1, &len, &d), CT_OK);
  double pm = ms_since(&t0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ck_assert_msg(ct_ir_parse(t1, len, name, &h, &d) == CT_OK, "%s", d.msg);
  double qm = ms_since(&t0);
  ck_assert_int_eq(ct_ir_print_string(h, &t2, NULL, &d), CT_OK);
  ck_assert_msg(strcmp(t1, t2) == 0, "%s: print → parse → print differs", name);
  printf("%s: %d ops, %zu bytes: print %.1f ms, parse %.1f ms\n", name, g->n_ops, len, pm, qm);
  ck_assert_msg(ct_ir_verify(g, &d) == CT_OK, "%s: %s", name, d.msg);
  char file[256];
  snprintf(file, sizeof file, "%s.top", name);
  ck_assert_msg(ct_ir_save(g, ct_test_tmp_path(file), &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_ir_load(ct_test_tmp_path(file), &k, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(ct_ir_print_string(k, &t3, NULL, &d), CT_OK);
  free(t1);
  ck_assert_int_eq(ct_ir_print_string(g, &t1, NULL, &d), CT_OK); /* now with weights = "X.top.h5" */
  ck_assert_str_eq(t1, t3);
  check_weights_equal(g, k);
  ck_assert_msg(ct_ir_verify(k, &d) == CT_OK, "%s (loaded): %s", name, d.msg);
  free(t1);
  free(t2);
  free(t3);
  ct_graph_free(g);
  ct_graph_free(h);
  ct_graph_free(k);
}
END_TEST

int main(void) {
  ct_test_require_shared("test_text_models");
  Suite *s = suite_create("text_models");
  TCase *tc = tcase_create("models");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_model_roundtrip, 0, (int)(sizeof models / sizeof models[0]));
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
