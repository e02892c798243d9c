/* test_onnx_models.c: every real model under ../shared/models imports and propagates, and
 * its input/output shapes equal those of the onnxruntime test data (test_data_set_0 .pb files,
 * an independent reference) . Label models; skipped without ../shared. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "compiler/propagate.h"
#include "tests/testutil.h"

/* Checks values[i] against the tensors <dir>/test_data_set_0/<prefix>_<i>.pb. */
static void check_io(const char *dir, const char *prefix, ct_value *const *values, int n) {
  for (int i = 0; i < n; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, prefix, i);
    ct_tensor *t = NULL;
    ct_diag d;
    ck_assert_msg(ct_onnx_read_tensor_pb(path, &t, &d) == CT_OK, "%s", d.msg);
    char a[128], b[128];
    ct_shape_str(values[i]->ndim, values[i]->shape, a, sizeof a);
    ct_shape_str(t->ndim, t->shape, b, sizeof b);
    ck_assert_msg(!strcmp(a, b), "%s %s: graph says %s, reference %s", path, values[i]->name, a, b);
    ck_assert_msg(values[i]->dtype == t->dtype, "%s: dtype %s vs %s", path, ct_dtype_name(values[i]->dtype),
                  ct_dtype_name(t->dtype));
    ct_tensor_free(t);
  }
  char path[1200];
  snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, prefix, n);
  ck_assert_msg(!ct_test_file_exists(path), "%s exists: the graph has only %d %ss", path, n, prefix);
}

static void check_model(const char *dir, const char *file) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(ct_onnx_import(path, NULL, &g, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_top_propagate(g, &d) == CT_OK, "%s: %s", path, d.msg);
  ct_value *in[16];
  int n_in = ct_graph_inputs(g, in, 16);
  ck_assert_int_ge(n_in, 1);
  check_io(dir, "input", in, n_in);
  check_io(dir, "output", g->outputs, g->n_outputs);
  for (int i = 0; i < g->n_values; i++)
    ck_assert_msg(g->values[i]->ndim >= 0, "%s: value %s has no shape", path, g->values[i]->name);
  ct_graph_free(g);
}

#define MAX_MODELS 32

/* The i-th (dir, file) pair, in sorted folder order, of models/<folder>/model.onnx and model_unfused_bn.onnx;
 * false when there are fewer. */
static bool nth_model(int i, char *dir, size_t n, const char **file) {
  const char *root = ct_test_shared_path("models");
  struct dirent **ents;
  int k = scandir(root, &ents, NULL, alphasort);
  ck_assert_int_ge(k, 0);
  int seen = 0;
  bool found = false;
  for (int j = 0; j < k; j++) {
    const char *files[] = {"model.onnx", "model_unfused_bn.onnx"};
    for (int f = 0; f < 2 && !found && ents[j]->d_name[0] != '.'; f++) {
      char probe[1200];
      snprintf(probe, sizeof probe, "%s/%s/%s", root, ents[j]->d_name, files[f]);
      if (!ct_test_file_exists(probe)) continue;
      if (seen++ == i) {
        snprintf(dir, n, "%s/%s", root, ents[j]->d_name);
        *file = files[f];
        found = true;
      }
    }
    free(ents[j]);
  }
  free(ents);
  return found;
}

START_TEST(test_shared_model_imports_and_propagates) {
  char dir[1024];
  const char *file;
  if (!nth_model(_i, dir, sizeof dir, &file)) return;
  fprintf(stderr, "  %s/%s\n", dir, file);
  check_model(dir, file);
}
END_TEST

START_TEST(test_all_shared_models_found) {
  char dir[1024];
  const char *file;
  ck_assert(nth_model(7, dir, sizeof dir, &file)); /* 7 folders + the unfused fmnist model */
  ck_assert(!nth_model(MAX_MODELS, dir, sizeof dir, &file));
}
END_TEST

int main(void) {
  ct_test_require_shared("test_onnx_models");
  Suite *s = suite_create("onnx_models");
  TCase *tc = tcase_create("models");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_all_shared_models_found);
  tcase_add_loop_test(tc, test_shared_model_imports_and_propagates, 0, MAX_MODELS);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
