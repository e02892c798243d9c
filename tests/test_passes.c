/* test_passes.c: the graph-optimization passes (compiler/pass.h) on hand-written text IR in
 * tests/data/passes/NAME.top — each case (cases split by "// -----") names its passes in
 * "// RUN:", the output is checked with CHECK lines (tests/filecheck.h), and "// EVAL" cases
 * also run the reference interpreter before and after (the independent oracle). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/pass.h"
#include "ir/text.h"
#include "reference/interp.h"
#include "tests/filecheck.h"
#include "tests/testutil.h"

/* Deterministic data for test weights and inputs (LCG, Numerical Recipes constants). */
static double lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / (double)(1u << 24);
}

/* Fills every Weight from its `value` attribute (a list of numbers of numel entries, one
 * number repeated, or "rand" in [-1, 1) / "randpos" in [0.5, 1.5)), then drops the attribute. */
static void fill_weights(ct_graph *g) {
  for (int i = 0; i < g->n_ops; i++) {
    ct_op *op = g->ops[i];
    if (op->kind != CT_OP_WEIGHT) continue;
    ct_value *v = op->out[0];
    const ct_attr *a = ct_op_attr(op, "value");
    ck_assert_msg(a != NULL, "weight %s has no value attribute", v->name);
    ct_tensor *t = ct_tensor_new(v->dtype, v->ndim, v->shape, v->name);
    ck_assert_ptr_nonnull(t);
    int64_t n = ct_tensor_numel(t);
    uint32_t seed = 12345u + 977u * (uint32_t)v->id;
    for (int64_t k = 0; k < n; k++) {
      double x = 0;
      if (a->kind == CT_ATTR_STRING) x = !strcmp(a->s, "randpos") ? 0.5 + lcg(&seed) : 2 * lcg(&seed) - 1;
      else if (a->kind == CT_ATTR_INT) x = (double)a->i;
      else if (a->kind == CT_ATTR_FLOAT) x = a->f;
      else if (a->kind == CT_ATTR_INTS) { ck_assert_int_eq(a->n, n); x = (double)a->ints[k]; }
      else if (a->kind == CT_ATTR_FLOATS) { ck_assert_int_eq(a->n, n); x = a->floats[k]; }
      if (ct_dtype_is_float(t->dtype)) ct_tensor_set_f64(t, k, x);
      else if (t->dtype == CT_I64) ((int64_t *)t->data)[k] = (int64_t)x;
      else ct_tensor_set_f64(t, k, x);
    }
    v->data = t;
    ct_op_del_attr(op, "value");
  }
}

static ct_graph *parse_case(const char *text, const char *name) {
  ct_graph *g = NULL;
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = ct_ir_parse(text, strlen(text), name, &g, &d);
  ck_assert_msg(st == CT_OK, "%s: parse: %s", name, d.msg);
  fill_weights(g);
  return g;
}

/* Runs both graphs on the same random inputs; outputs must agree to 1e-5 relative. */
static void eval_compare(const ct_graph *ref, const ct_graph *opt, const char *name) {
  ct_tensor_list in, o1, o2;
  ct_tensor_list_init(&in), ct_tensor_list_init(&o1), ct_tensor_list_init(&o2);
  uint32_t seed = 777;
  for (int i = 0; i < ref->n_ops; i++) {
    const ct_op *op = ref->ops[i];
    if (op->kind != CT_OP_INPUT) continue;
    const ct_value *v = op->out[0];
    ct_tensor *t = ct_tensor_new(v->dtype, v->ndim, v->shape, v->name);
    for (int64_t k = 0; k < ct_tensor_numel(t); k++) ct_tensor_set_f64(t, k, 4 * lcg(&seed) - 2);
    ck_assert(ct_tensor_list_push(&in, t));
  }
  ct_ref_options ro = {0};
  ct_diag d;
  ck_assert_msg(ct_ref_run(ref, &ro, &in, &o1, &d) == CT_OK, "%s: run before: %s", name, d.msg);
  ck_assert_msg(ct_ref_run(opt, &ro, &in, &o2, &d) == CT_OK, "%s: run after: %s", name, d.msg);
  ck_assert_int_eq(o1.n, o2.n);
  for (int i = 0; i < o1.n; i++) {
    const ct_tensor *a = o1.items[i], *b = o2.items[i];
    ck_assert_int_eq(ct_tensor_numel(a), ct_tensor_numel(b));
    double mx = 0, err = 0;
    for (int64_t k = 0; k < ct_tensor_numel(a); k++) {
      double x = ct_tensor_get_f64(a, k), y = ct_tensor_get_f64(b, k);
      mx = fmax(mx, fabs(x));
      err = fmax(err, fabs(x - y));
    }
    ck_assert_msg(err <= 1e-5 * (1 + mx), "%s: output %d differs by %g (max |ref| %g)", name, i, err, mx);
  }
  ct_tensor_list_free(&in), ct_tensor_list_free(&o1), ct_tensor_list_free(&o2);
}

/* One case: the text of one "// -----" section. */
static void run_case(const char *file, int first_line, const char *text) {
  char name[1200], passes[512] = "", *nl;
  snprintf(name, sizeof name, "%s (case at line %d)", file, first_line);
  const char *r = strstr(text, "// RUN:");
  ck_assert_msg(r != NULL, "%s: no // RUN: line", name);
  snprintf(passes, sizeof passes, "%s", r + 7);
  if ((nl = strchr(passes, '\n'))) *nl = '\0';
  ct_graph *g = parse_case(text, name);
  ct_pass_options o;
  ct_pass_options_init(&o);
  o.verify_each = true;
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = ct_pass_run_pipeline(g, passes, &o, &d);
  ck_assert_msg(st == CT_OK, "%s: passes \"%s\": %s", name, passes, d.msg);
  char *out = NULL;
  size_t len = 0;
  ck_assert(ct_ir_print_string(g, &out, &len, &d) == CT_OK);
  char err[1024];
  ck_assert_msg(ct_filecheck(text, out, "CHECK", err, sizeof err), "%s: %s\n--- output ---\n%s", name, err, out);
  if (strstr(text, "// EVAL")) {
    ct_graph *ref = parse_case(text, name);
    eval_compare(ref, g, name);
    ct_graph_free(ref);
  }
  free(out);
  ct_graph_free(g);
}

static const char *const case_files[] = {
    "dce", "cse", "remove_identity", "fold_constants", "fold_pad", "fold_bn", "bn_to_conv", "gather_to_slice", "fold_affine",
    "matmul_to_gemm", "canonical_gemm", "merge_chains", "collapse_reshape", "fold_transpose", "fuse_patterns", "fuse_act", "canonicalize",
};
#define N_CASE_FILES ((int)(sizeof case_files / sizeof case_files[0]))

START_TEST(test_pass_cases) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/passes/%s.top", CT_SOURCE_DIR, case_files[_i]);
  char *text = ct_test_read_file(path, NULL);
  ck_assert_msg(text != NULL, "cannot read %s", path);
  int line = 1, cases = 0;
  for (char *p = text; p && *p;) {
    char *sep = strstr(p, "\n// -----");
    if (sep) *sep = '\0';
    run_case(path, line, p);
    cases++;
    for (char *q = p; *q; q++) line += *q == '\n';
    line += 1;
    p = sep ? strchr(sep + 1, '\n') : NULL;
    if (p) { p++; line++; }
  }
  ck_assert_int_gt(cases, 0);
  free(text);
}
END_TEST

/* ---- the matcher itself must be able to fail ---- */

START_TEST(test_filecheck_semantics) {
  const char *out = "a = conv(x)\nb = relu(a)\nc = add(b, x)\nreturn c\n";
  char err[512];
  ck_assert(ct_filecheck("CHECK: conv\nCHECK-NEXT: relu\nCHECK-SAME: (a)\nCHECK-NOT: mul\nCHECK: return", out, "CHECK", err, sizeof err));
  ck_assert(ct_filecheck("CHECK: [[V:[a-z]]] = relu\nCHECK: add([[V]], x)", out, "CHECK", err, sizeof err));
  ck_assert(ct_filecheck("CHECK: {{^}}c = add({{.*}})", out, "CHECK", err, sizeof err));
  ck_assert(!ct_filecheck("CHECK: relu\nCHECK: conv", out, "CHECK", err, sizeof err)); /* order */
  ck_assert(strstr(err, "line 2") != NULL);
  ck_assert(!ct_filecheck("CHECK: conv\nCHECK-NEXT: add", out, "CHECK", err, sizeof err));
  ck_assert(!ct_filecheck("CHECK: relu\nCHECK-SAME: conv", out, "CHECK", err, sizeof err));
  ck_assert(!ct_filecheck("CHECK: conv\nCHECK-NOT: relu\nCHECK: return", out, "CHECK", err, sizeof err));
  ck_assert(strstr(err, "CHECK-NOT") != NULL);
  ck_assert(!ct_filecheck("CHECK: relu\nCHECK-NOT: x", out, "CHECK", err, sizeof err)); /* trailing NOT */
  ck_assert(!ct_filecheck("CHECK: [[V:[a-z]]] = relu\nCHECK: mul([[V]]", out, "CHECK", err, sizeof err));
  ck_assert(!ct_filecheck("CHECK: add([[W]]", out, "CHECK", err, sizeof err)); /* undefined var */
  ck_assert(!ct_filecheck("no directives here", out, "CHECK", err, sizeof err));
  ck_assert(ct_filecheck("// CHECK:   b   =  relu", out, "CHECK", err, sizeof err)); /* blanks */
}
END_TEST

/* ---- the pass manager ---- */

static const char *small_ir =
    "module @m attributes {chip = \"\", weights = \"\"} {\n"
    "  %0 = top.Input() : tensor<1x4xf32> loc(\"x\")\n"
    "  %1 = top.Identity(%0) : tensor<1x4xf32> loc(\"id\")\n"
    "  %2 = top.Relu(%1) : tensor<1x4xf32> loc(\"relu\")\n"
    "  %3 = top.Sigmoid(%0) : tensor<1x4xf32> loc(\"unused\")\n"
    "  return %2 : tensor<1x4xf32>\n"
    "}\n";

static void count_dump(const ct_graph *g, const char *pass, void *user) {
  (void)g;
  ck_assert_str_eq(pass, "dce");
  (*(int *)user)++;
}

START_TEST(test_manager_names_dump_and_errors) {
  ct_graph *g = parse_case(small_ir, "small");
  ct_diag d;
  ck_assert_int_eq(ct_pass_run_pipeline(g, "dce,no-such-pass", NULL, &d), CT_ERR_USAGE);
  ck_assert(strstr(d.msg, "no-such-pass") != NULL);
  ck_assert_int_eq(g->n_ops, 4); /* nothing ran: names are checked first */
  ct_pass_options o;
  ct_pass_options_init(&o);
  int dumps = 0;
  o.dump = count_dump, o.dump_user = &dumps, o.dump_after = "dce";
  ck_assert_int_eq(ct_pass_run_pipeline(g, "remove-identity, dce", &o, &d), CT_OK);
  ck_assert_int_eq(dumps, 1);
  ck_assert_int_eq(g->n_ops, 2);
  ck_assert_str_eq(g->outputs[0]->name, "relu"); /* module output names survive */
  bool found = false;
  for (int i = 0; i < ct_pipeline_count(); i++) found |= !strcmp(ct_pipeline_name(i), "canonicalize");
  ck_assert(found);
  for (int i = 0; i < ct_pass_count(); i++) ck_assert(strlen(ct_pass_summary(i)) > 10);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_identity_feeding_output_keeps_name) {
  const char *ir =
      "module @m attributes {chip = \"\", weights = \"\"} {\n"
      "  %0 = top.Input() : tensor<2xf32> loc(\"x\")\n"
      "  %1 = top.Relu(%0) : tensor<2xf32> loc(\"r\" -> \"inner\")\n"
      "  %2 = top.Identity(%1) : tensor<2xf32> loc(\"id\" -> \"out\")\n"
      "  %3 = top.Identity(%0) : tensor<2xf32> loc(\"id2\" -> \"out2\")\n"
      "  return %2, %3 : tensor<2xf32>, tensor<2xf32>\n"
      "}\n";
  ct_graph *g = parse_case(ir, "outname");
  ct_diag d;
  ck_assert_int_eq(ct_pass_run_pipeline(g, "remove-identity,dce", NULL, &d), CT_OK);
  ck_assert_str_eq(g->outputs[0]->name, "out");
  ck_assert_int_eq(g->outputs[0]->def->kind, CT_OP_RELU);
  /* an Identity between an Input and an output must stay, else the output would be renamed */
  ck_assert_str_eq(g->outputs[1]->name, "out2");
  ck_assert_int_eq(g->outputs[1]->def->kind, CT_OP_IDENTITY);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_structural_check_catches_bad_order) {
  ct_graph *g = parse_case(small_ir, "small");
  ct_diag d;
  ck_assert_int_eq(ct_pass_check_graph(g, &d), CT_OK);
  ct_op *t = g->ops[1]; /* swap the Identity and the Relu that uses it */
  g->ops[1] = g->ops[2];
  g->ops[2] = t;
  ck_assert_int_eq(ct_pass_check_graph(g, &d), CT_ERR_INTERNAL);
  ck_assert(strstr(d.msg, "relu") != NULL);
  ct_graph_free(g);
}
END_TEST


/* ---- robustness: damaged graphs must give a status, never a crash ---- */

/* Damages g deterministically: mode 0 drops operand j of op i, 1 forgets a result shape,
 * 2 changes a result dtype, 3 drops a weight's data. */
static void damage(ct_graph *g, int mode, int i, int j) {
  ct_op *op = g->ops[i % g->n_ops];
  if (mode == 0 && op->n_in > 0) op->in[j % op->n_in] = NULL;
  if (mode == 1 && op->n_out > 0 && op->out[0]) op->out[0]->ndim = -1;
  if (mode == 2 && op->n_out > 0 && op->out[0]) op->out[0]->dtype = CT_I64;
  if (mode == 3 && op->kind == CT_OP_WEIGHT) {
    ct_tensor_free(op->out[0]->data);
    op->out[0]->data = NULL;
  }
}

START_TEST(test_damaged_graphs_do_not_crash) {
  int runs = 0;
  for (int f = 0; f < N_CASE_FILES; f++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/passes/%s.top", CT_SOURCE_DIR, case_files[f]);
    char *text = ct_test_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    char *sep = strstr(text, "\n// -----");
    if (sep) *sep = '\0'; /* the first case of each file */
    for (int mode = 0; mode < 4; mode++)
      for (int i = 0; i < 24; i += 1 + mode) {
        ct_graph *g = parse_case(text, path);
        damage(g, mode, i, i / 3);
        ct_diag d;
        ct_status st = ct_pass_run_pipeline(g, "canonicalize", NULL, &d);
        ck_assert_msg(st == CT_OK || d.msg[0], "%s: error status without a message", path);
        runs++;
        ct_graph_free(g);
      }
    free(text);
  }
  ck_assert_int_gt(runs, 100);
}
END_TEST

/* ---- the command line ---- */

START_TEST(test_cli_opt) {
  ct_graph *g = parse_case(small_ir, "small");
  const char *in = ct_test_tmp_path("small.top"), *out = ct_test_tmp_path("small.opt.top");
  ct_diag d;
  ck_assert_msg(ct_ir_save(g, in, &d) == CT_OK, "%s", d.msg);
  ct_graph_free(g);
  char buf[8192];
  int rc = ct_test_run_ctpu(buf, sizeof buf, "opt %s --stats -o %s", in, out);
  ck_assert_msg(rc == 0, "rc %d: %s", rc, buf);
  char err[512];
  ck_assert_msg(ct_filecheck("CHECK: op Input 1 1\nCHECK: op Identity 1 0\nCHECK: op Relu 1 1\n"
                             "CHECK: op Sigmoid 1 0",
                             buf, "CHECK", err, sizeof err),
                "%s\n%s", err, buf);
  ct_graph *o = NULL;
  ck_assert_msg(ct_ir_load(out, &o, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(o->n_ops, 2);
  ct_graph_free(o);
  rc = ct_test_run_ctpu(buf, sizeof buf, "opt %s --passes dce --dump-after dce -o %s", in, out);
  ck_assert_int_eq(rc, 0);
  ck_assert(strstr(buf, "IR Dump After dce") != NULL);
  ck_assert_int_eq(ct_test_run_ctpu(buf, sizeof buf, "opt %s --passes bogus -o %s", in, out), 2);
  ck_assert(strstr(buf, "bogus") != NULL);
  ck_assert_int_eq(ct_test_run_ctpu(buf, sizeof buf, "opt"), 2);
  ck_assert_int_eq(ct_test_run_ctpu(buf, sizeof buf, "opt --help"), 0);
  ck_assert(strstr(buf, "fold-bn") != NULL);
  const char *bad = ct_test_tmp_path("bad.top");
  ck_assert(ct_test_write_file(bad, "module @x {\n  %0 = top.Nope() loc(\"a\")\n}\n", 42));
  ck_assert_int_eq(ct_test_run_ctpu(buf, sizeof buf, "opt %s -o %s", bad, out), 3);
  ck_assert(strstr(buf, "bad.top") != NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("passes");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_pass_cases, 0, N_CASE_FILES);
  tcase_add_test(tc, test_filecheck_semantics);
  tcase_add_test(tc, test_manager_names_dump_and_errors);
  tcase_add_test(tc, test_identity_feeding_output_keeps_name);
  tcase_add_test(tc, test_structural_check_catches_bad_order);
  tcase_add_test(tc, test_cli_opt);
  tcase_add_test(tc, test_damaged_graphs_do_not_crash);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
