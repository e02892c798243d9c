/* test_passes_models.c: canonicalize on every real model of ../shared/models — the
 * optimized graph verifies, infers the same outputs as the unoptimized graph and as
 * onnxruntime (test_data_set_0/output_N.pb), and the patterns canonicalize removes are gone. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "onnx/onnx.h"
#include "compiler/pass.h"
#include "compiler/propagate.h"
#include "ops/verify.h"
#include "io/compare.h"
#include "reference/interp.h"
#include "tests/testutil.h"

typedef struct model_case {
  const char *dir, *file;
  const char *absent[8]; /* op names that must not survive canonicalize (besides the common ones) */
} model_case;

static const model_case models[] = {
    {"fmnist-rescnn", "model.onnx", {NULL}},
    {"fmnist-rescnn", "model_unfused_bn.onnx", {NULL}},
    {"mobilenetv2-fp32-dequant-from-qdq", "model.onnx", {NULL}},
    {"mobilenetv2-torchvision-qdq-int8", "model.onnx", {NULL}},
    {"yolox-nano", "model.onnx", {"Mul", NULL}},
    {"ultraface-rfb-320", "model.onnx", {"Gather", "Unsqueeze", NULL}},
    {"ppocrv4-det", "model.onnx", {NULL}},
    {"ppocrv4-rec", "model.onnx", {"ReduceMean", "Pow", "Sqrt", "Cast", NULL}},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

/* Ops that canonicalize removes from every model. */
static const char *const always_absent[] = {"BatchNormalization", "Shape", "Identity", "Dropout"};

static ct_graph *import(const char *path) {
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(ct_onnx_import(path, NULL, &g, &d) == CT_OK, "%s: import: %s", path, d.msg);
  ck_assert_msg(ct_top_propagate(g, &d) == CT_OK, "%s: propagate: %s", path, d.msg);
  return g;
}

static int count_kind(const ct_graph *g, const char *name) {
  ct_op_kind k;
  ck_assert_msg(ct_op_lookup(name, &k), "unknown op %s", name);
  int n = 0;
  for (int i = 0; i < g->n_ops; i++) n += !g->ops[i]->dead && g->ops[i]->kind == k;
  return n;
}

static void read_pbs(const char *dir, const char *prefix, ct_tensor_list *l) {
  for (int i = 0;; i++) {
    const char *p = ct_test_shared_path("models/%s/test_data_set_0/%s_%d.pb", dir, prefix, i);
    struct stat st;
    if (stat(p, &st) != 0) break;
    ct_tensor *t = NULL;
    ct_diag d;
    ck_assert_msg(ct_onnx_read_tensor_pb(p, &t, &d) == CT_OK, "%s", d.msg);
    ck_assert(ct_tensor_list_push(l, t));
  }
  ck_assert_int_gt(l->n, 0);
}

/* True if got matches ref: cosine ≥ 0.99999 and max |got − ref| ≤ 1e-4 · max |ref|. */
static bool same(const ct_tensor *ref, const ct_tensor *got, ct_compare_metrics *m) {
  ck_assert(ct_compare_tensor(ref, got, m) == CT_OK);
  double mx = 0;
  for (int64_t i = 0; i < ct_tensor_numel(ref); i++) mx = fmax(mx, fabs(ct_tensor_get_f64(ref, i)));
  return m->cosine >= 0.99999 && m->max_abs <= 1e-4 * mx;
}

/* Output i: canonicalized vs unoptimized must match; canonicalized vs onnxruntime must match
 * whenever the unoptimized graph does (if the reference kernels alone already disagree with
 * onnxruntime, that is not this pass's doing: then the optimized graph must be no further
 * from onnxruntime than the unoptimized one, and the test says so). */
static void check_output(const char *model, int i, const ct_tensor *ort, const ct_tensor *raw, const ct_tensor *opt) {
  ct_compare_metrics m, mr, mo;
  ck_assert_msg(same(raw, opt, &m), "%s output %d vs unoptimized: cosine %.7f, max abs %g", model, i, m.cosine,
                m.max_abs);
  if (same(ort, opt, &mo)) return;
  ck_assert_msg(!same(ort, raw, &mr), "%s output %d vs onnxruntime: cosine %.7f, max abs %g (unoptimized passes)",
                model, i, mo.cosine, mo.max_abs);
  printf("%s output %d: the unoptimized graph already differs from onnxruntime (cosine %.7f, max abs %g): "
         "reference kernels, not passes\n", model, i, mr.cosine, mr.max_abs);
  ck_assert_msg(mo.cosine >= mr.cosine - 1e-6, "%s output %d: optimized further from onnxruntime (%.7f < %.7f)", model,
                i, mo.cosine, mr.cosine);
}

START_TEST(test_canonicalize_model) {
  const model_case *mc = &models[_i];
  const char *path = ct_test_shared_path("models/%s/%s", mc->dir, mc->file);
  ct_graph *raw = import(path), *opt = import(path);
  ct_diag d;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ck_assert_msg(ct_pass_run_pipeline(opt, "canonicalize", NULL, &d) == CT_OK, "%s: %s", path, d.msg);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("%s/%s: canonicalize %.1f ms, %d -> %d ops\n", mc->dir, mc->file, ms, raw->n_ops, opt->n_ops);
  ck_assert_msg(ct_ir_verify(opt, &d) == CT_OK, "%s: verify after canonicalize: %s", path, d.msg);
  for (size_t k = 0; k < sizeof always_absent / sizeof always_absent[0]; k++)
    ck_assert_msg(count_kind(opt, always_absent[k]) == 0, "%s: %s left", path, always_absent[k]);
  for (int k = 0; mc->absent[k]; k++)
    ck_assert_msg(count_kind(opt, mc->absent[k]) == 0, "%s: %s left", path, mc->absent[k]);
  ct_tensor_list in, ort, o_raw, o_opt;
  ct_tensor_list_init(&in), ct_tensor_list_init(&ort), ct_tensor_list_init(&o_raw), ct_tensor_list_init(&o_opt);
  read_pbs(mc->dir, "input", &in);
  read_pbs(mc->dir, "output", &ort);
  ct_ref_options ro = {0};
  ro.threads = 1;
  ck_assert_msg(ct_ref_run(raw, &ro, &in, &o_raw, &d) == CT_OK, "%s: run raw: %s", path, d.msg);
  ck_assert_msg(ct_ref_run(opt, &ro, &in, &o_opt, &d) == CT_OK, "%s: run canonicalized: %s", path, d.msg);
  ck_assert_int_eq(o_opt.n, ort.n);
  for (int i = 0; i < ort.n; i++) check_output(mc->dir, i, ort.items[i], o_raw.items[i], o_opt.items[i]);
  ct_tensor_list_free(&in), ct_tensor_list_free(&ort), ct_tensor_list_free(&o_raw), ct_tensor_list_free(&o_opt);
  ct_graph_free(raw);
  ct_graph_free(opt);
}
END_TEST

int main(void) {
  ct_test_require_shared("test_passes_models");
  Suite *s = suite_create("passes_models");
  TCase *tc = tcase_create("models");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_canonicalize_model, 0, N_MODELS);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
