/* test_deploy_gemm.c: Gemm and MatMul semantics end to end, on models built here
 * (tests/onnx_build.c). ONNX Gemm-13 (Y = alpha·op(A)·op(B) + beta·C, C of shape scalar,
 * [1], [N], [1, N], [M, 1] or [M, N]) with alpha, beta, transA and transB: the Top result
 * (the raw kernel and after canonicalize) against a plain double loop; then transformed,
 * lowered to INT8 / BF16 / F32 and deployed with --compare-all on the default chip and sweep
 * chips: every stored tensor bit-exact against the Tpu reference, no alpha or beta left
 * for the back end (a square transB B, cut into N tiles, reads the slices of its dim 0). A
 * MatMul (+ Add of a [1, N] bias) with N not a multiple of the MXU width and a large K, cut
 * into several N tiles, deploys bit-exact too. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "compiler/pass.h"
#include "onnx/onnx.h"
#include "reference/interp.h"
#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

enum { C_NONE, C_SCALAR, C_ONE, C_N, C_1N, C_M1, C_MN, C_INPUT_N, C_INPUT_MN };

typedef struct gcase {
  const char *name;
  int64_t M, K, N;
  float alpha, beta;
  int ta, tb, c;
  bool relu;  /* a Relu after the Gemm (fused by canonicalize, unfused by a split) */
  bool b_in;  /* B is a second graph input (not a constant) */
  bool a_sum; /* A = x + x: transA's Transpose reads a computed value, not the module input */
} gcase;

static const gcase cases[] = {
    {"alpha2_cN", 3, 20, 12, 2.0f, 1.0f, 0, 1, C_N, false, false, false},
    {"alpha03_cN_tb0", 3, 20, 12, 0.3f, 1.0f, 0, 0, C_N, false, false, false},
    {"beta05_c1N", 3, 20, 12, 1.0f, 0.5f, 0, 1, C_1N, true, false, false},
    {"scalar_beta", 4, 16, 10, 1.0f, -1.5f, 0, 0, C_SCALAR, false, false, false},
    {"one_alpha_beta", 4, 16, 10, -0.25f, 2.0f, 0, 1, C_ONE, false, false, false},
    {"M1_transA", 5, 24, 9, 1.0f, 0.75f, 1, 0, C_M1, false, false, true},
    {"MN_all", 3, 20, 12, 1.5f, -1.0f, 1, 1, C_MN, true, false, true},
    {"none_alpha05", 2, 30, 7, 0.5f, 3.0f, 0, 0, C_NONE, false, false, false},
    {"MN_big_K", 2, 300, 70, 0.3f, 0.5f, 0, 1, C_MN, false, false, false},
    {"beta0_cMN", 3, 12, 8, 1.0f, 0.0f, 0, 1, C_MN, false, false, false},
    {"c_input_N", 3, 20, 12, 1.0f, 0.5f, 0, 1, C_INPUT_N, false, false, false},
    {"c_input_MN", 3, 20, 12, 2.0f, -1.0f, 0, 1, C_INPUT_MN, false, false, false},
    {"b_input_alpha", 3, 20, 12, 0.3f, 1.0f, 0, 0, C_N, false, true, false},
    {"square_tb_N_tiles", 2, 256, 256, 1.0f, 1.0f, 0, 1, C_N, false, false, false}, /* B [N, K], K = N: cut along N */
};

static float lcgf(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / (float)(1u << 24) * 2.0f - 1.0f; /* [-1, 1) */
}

static float *rand_vec(int64_t n, uint32_t *seed, float amp) {
  float *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  ck_assert_ptr_nonnull(v);
  for (int64_t i = 0; i < n; i++) v[i] = amp * lcgf(seed);
  return v;
}

/* Shape of C (ndim into *nd). */
static void c_shape(const gcase *g, int *nd, int64_t s[2]) {
  switch (g->c) {
  case C_SCALAR: *nd = 0; break;
  case C_ONE: *nd = 1, s[0] = 1; break;
  case C_N: case C_INPUT_N: *nd = 1, s[0] = g->N; break;
  case C_1N: *nd = 2, s[0] = 1, s[1] = g->N; break;
  case C_M1: *nd = 2, s[0] = g->M, s[1] = 1; break;
  default: *nd = 2, s[0] = g->M, s[1] = g->N; break;
  }
}

static int64_t numel(int nd, const int64_t *s) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= s[i];
  return n;
}

/* The operands of a case: x (op(A) stored [K, M] when transA), b, c (NULL when absent). */
typedef struct gdata {
  int64_t xs[2], bs[2], cs[2];
  int cnd;
  float *x, *b, *c;
} gdata;

static void make_data(const gcase *g, gdata *d) {
  uint32_t seed = 1000u + (uint32_t)g->K * 7u + (uint32_t)g->N;
  d->xs[0] = g->ta ? g->K : g->M, d->xs[1] = g->ta ? g->M : g->K;
  d->bs[0] = g->tb ? g->N : g->K, d->bs[1] = g->tb ? g->K : g->N;
  d->x = rand_vec(g->M * g->K, &seed, 2), d->b = rand_vec(g->K * g->N, &seed, 0.5f);
  c_shape(g, &d->cnd, d->cs);
  d->c = g->c == C_NONE ? NULL : rand_vec(numel(d->cnd, d->cs), &seed, 1);
}

static void free_data(gdata *d) { free(d->x), free(d->b), free(d->c); }

/* y = alpha·op(A)·op(B) + beta·C (C broadcast) in double: ONNX Gemm-13 written out. */
static double hand(const gcase *g, const gdata *d, int64_t i, int64_t j) {
  double acc = 0;
  for (int64_t k = 0; k < g->K; k++) {
    double a = g->ta ? d->x[k * g->M + i] : d->x[i * g->K + k];
    if (g->a_sum) a += a;
    double b = g->tb ? d->b[j * g->K + k] : d->b[k * g->N + j];
    acc += a * b;
  }
  double y = g->alpha * acc;
  if (d->c && g->beta != 0) {
    int64_t ci = d->cnd == 0 || (d->cnd == 1 && d->cs[0] == 1) ? 0 : d->cnd == 1 ? j
                 : (d->cs[0] == 1 ? 0 : i) * d->cs[1] + (d->cs[1] == 1 ? 0 : j);
    y += g->beta * d->c[ci];
  }
  return g->relu && y < 0 ? 0 : y;
}

/* Writes the case's model to path and its inputs to x.pb (and c.pb / b.pb). */
static void write_model(const gcase *g, const gdata *d, const char *path, char inputs[3][700]) {
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 2, d->xs);
  bool c_in = g->c == C_INPUT_N || g->c == C_INPUT_MN;
  if (g->b_in) ob_input(&b, "b", T_FLOAT, 2, d->bs);
  else ob_init_f32(&b, "b", 2, d->bs, d->b);
  if (c_in) ob_input(&b, "c", T_FLOAT, d->cnd, d->cs);
  else if (d->c) ob_init_f32(&b, "c", d->cnd, d->cs, d->c);
  if (g->a_sum) ob_node(&b, "Add", "sum_a", (const char *[]){"x", "x", NULL}, (const char *[]){"a", NULL});
  Onnx__NodeProto *n = ob_node(&b, "Gemm", "gemm", (const char *[]){g->a_sum ? "a" : "x", "b", d->c ? "c" : NULL, NULL},
                               (const char *[]){g->relu ? "g" : "y", NULL});
  ob_attr_f(&b, n, "alpha", g->alpha), ob_attr_f(&b, n, "beta", g->beta);
  ob_attr_i(&b, n, "transA", g->ta), ob_attr_i(&b, n, "transB", g->tb);
  if (g->relu) ob_node(&b, "Relu", "relu", (const char *[]){"g", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ck_assert(ob_write(&b, path));
  const char *names[3] = {"x", g->b_in ? "b" : NULL, c_in ? "c" : NULL};
  const float *data[3] = {d->x, d->b, d->c};
  const int64_t *shapes[3] = {d->xs, d->bs, d->cs};
  int nds[3] = {2, 2, d->cnd};
  for (int k = 0; k < 3; k++) {
    inputs[k][0] = 0;
    if (!names[k]) continue;
    char file[200];
    snprintf(file, sizeof file, "%s_%s.pb", g->name, names[k]);
    snprintf(inputs[k], 700, "%s", ct_test_tmp_path(file));
    Onnx__TensorProto *t = ob_tensor(&b, names[k], T_FLOAT, nds[k], shapes[k]);
    ob_raw(&b, t, data[k], sizeof(float) * (size_t)numel(nds[k], shapes[k]));
    ck_assert(ob_write_tensor(t, inputs[k]));
  }
  ob_free(&b);
}

/* Runs the Top module of path (canonicalized or not) and checks y against the hand loop. */
static void check_top(const gcase *g, const gdata *d, const char *path, bool canon) {
  ct_onnx_options o = {0};
  ct_graph *gr = NULL;
  ct_diag dg = {0};
  ck_assert_msg(ct_onnx_import(path, &o, &gr, &dg) == CT_OK, "%s: import: %s", g->name, dg.msg);
  ck_assert_msg(ct_pass_run_pipeline(gr, canon ? "canonicalize" : "infer-shapes", NULL, &dg) == CT_OK, "%s: %s", g->name, dg.msg);
  ct_tensor_list in, out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&out);
  const char *names[3] = {"x", "b", "c"};
  const float *data[3] = {d->x, d->b, d->c};
  const int64_t *shapes[3] = {d->xs, d->bs, d->cs};
  int nds[3] = {2, 2, d->cnd};
  bool use[3] = {true, g->b_in, g->c == C_INPUT_N || g->c == C_INPUT_MN};
  for (int k = 0; k < 3; k++) {
    if (!use[k]) continue;
    ct_tensor *t = ct_tensor_new(CT_F32, nds[k], shapes[k], names[k]);
    ck_assert_ptr_nonnull(t);
    memcpy(t->data, data[k], t->nbytes);
    ck_assert(ct_tensor_list_push(&in, t));
  }
  ck_assert_msg(ct_ref_run(gr, NULL, &in, &out, &dg) == CT_OK, "%s: run: %s", g->name, dg.msg);
  ck_assert_int_eq(out.n, 1);
  const ct_tensor *y = out.items[0];
  ck_assert(y->dtype == CT_F32 && y->ndim == 2 && y->shape[0] == g->M && y->shape[1] == g->N);
  for (int64_t i = 0; i < g->M; i++)
    for (int64_t j = 0; j < g->N; j++) {
      double want = hand(g, d, i, j), got = ((const float *)y->data)[i * g->N + j];
      ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)) * sqrt((double)g->K), "%s (%s): y[%lld][%lld] = %.9g, ONNX %.9g",
                    g->name, canon ? "canonicalized" : "raw", (long long)i, (long long)j, got, want);
    }
  ct_tensor_list_free(&in), ct_tensor_list_free(&out);
  ct_graph_free(gr);
}

/* Deploys tpu with --compare-all on the default chip and sweep chips 0, chip_step, … < 32
 * (MXUs from 8 × 8, small LMEMs: several N tiles): every stored tensor bit-exact, race-free. */
static void deploy_chips(const char *tpu, const char *inputs, const char *tag, int chip_step) {
  char out[8192];
  for (int k = -1; k < 32; k += k < 0 ? 1 : chip_step) {
    char chip[700] = "", prog[200];
    if (k >= 0) snprintf(chip, sizeof chip, "--chip '%s'", ct_test_sweep_chip(k, "gemm"));
    snprintf(prog, sizeof prog, "%s_%d.ctpu", tag, k);
    int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s -o '%s' --test-input %s --compare-all", tpu, chip,
                              ct_test_tmp_path(prog), inputs);
    int compared = -1, differ = -1;
    const char *m = strstr(out, "--compare-all: ");
    ck_assert_msg(rc == 0 && m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2,
                  "%s chip %d: deploy exited %d: %s", tag, k, rc, out);
    ck_assert_msg(compared >= 1 && differ == 0, "%s chip %d: %s", tag, k, out);
  }
}

/* Lowers top in mode (INT8 with calib) and deploys it; the Tpu module holds no alpha / beta. */
static void lower_deploy(const char *top, const char *calib, const char *mode, const char *inputs, const char *tag,
                         int chip_step) {
  char tpu[760], out[8192];
  snprintf(tpu, sizeof tpu, "%s.%s.tpu", top, mode);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s%s%s%s -o '%s'", top, mode,
                                 calib ? " --calibration-table '" : "", calib ? calib : "", calib ? "'" : "", tpu) == 0,
                "%s lower: %s", tag, out);
  char *text = ct_test_read_file(tpu, NULL);
  ck_assert_ptr_nonnull(text);
  for (const char *p = text; (p = strstr(p, "alpha = ")); p++) ck_assert_msg(!strncmp(p, "alpha = 1.0,", 12), "%s: %s", tag, text);
  for (const char *p = text; (p = strstr(p, "beta = ")); p++) ck_assert_msg(!strncmp(p, "beta = 1.0,", 11), "%s: %s", tag, text);
  ck_assert_msg(!strstr(text, "transA = 1"), "%s: %s", tag, text);
  free(text);
  deploy_chips(tpu, inputs, tag, chip_step);
}

START_TEST(test_gemm_semantics) {
  const gcase *g = &cases[_i];
  gdata d;
  make_data(g, &d);
  char model[700], top[700], calib[700], inputs[3][700], ins[2200], name[200], tag[300], out[8192];
  snprintf(name, sizeof name, "%s.onnx", g->name), snprintf(model, sizeof model, "%s", ct_test_tmp_path(name));
  snprintf(name, sizeof name, "%s.top", g->name), snprintf(top, sizeof top, "%s", ct_test_tmp_path(name));
  snprintf(name, sizeof name, "%s.cali", g->name), snprintf(calib, sizeof calib, "%s", ct_test_tmp_path(name));
  write_model(g, &d, model, inputs);
  check_top(g, &d, model, false);
  check_top(g, &d, model, true);
  ins[0] = 0;
  for (int k = 0; k < 3; k++)
    if (inputs[k][0]) strcat(strcat(strcat(ins, " '"), inputs[k]), "'");
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  static const char *modes[] = {"F32", "BF16", "INT8"};
  bool one_input = !inputs[1][0] && !inputs[2][0];
  for (int m = 0; m < 3; m++) {
    if (m == 2 && !one_input) break; /* the calibration data set is one tensor per sample */
    if (m == 2)
      ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, inputs[0], calib) == 0,
                    "calibrate: %s", out);
    snprintf(tag, sizeof tag, "%s_%s", g->name, modes[m]);
    lower_deploy(top, m == 2 ? calib : NULL, modes[m], ins, tag, 32);
  }
  free_data(&d);
}
END_TEST

/* x[M, K] · W[K, N] (+ B[1, N]) for N not a multiple of any MXU width and K up to 1024 (on
 * an 8 × 8 MXU: many N and K passes): several N tiles, each reading its own slice of W and B,
 * bit-exact in INT8, BF16, F32 on the default chip and sweep chips 0 and 16. */
START_TEST(test_matmul_n_tiles) {
  static const int64_t dims[][4] = {{1, 1024, 40, 1}, {3, 700, 58, 1}, {2, 64, 130, 0}, {4, 520, 23, 0}};
  const int64_t *dm = dims[_i];
  bool bias = dm[3] != 0;
  int64_t M = dm[0], K = dm[1], N = dm[2], xs[2] = {M, K}, ws[2] = {K, N}, bs[2] = {1, N};
  uint32_t seed = 99u + (uint32_t)_i;
  float *x = rand_vec(M * K, &seed, 1), *w = rand_vec(K * N, &seed, 0.1f), *bv = rand_vec(N, &seed, 1);
  char model[700], input[700], top[700], calib[700], name[260], ins[800], tag[200], out[8192];
  snprintf(tag, sizeof tag, "mm_%lld_%lld_%lld_%d", (long long)M, (long long)K, (long long)N, (int)bias);
  snprintf(name, sizeof name, "%s.onnx", tag), snprintf(model, sizeof model, "%s", ct_test_tmp_path(name));
  snprintf(name, sizeof name, "%s_x.pb", tag), snprintf(input, sizeof input, "%s", ct_test_tmp_path(name));
  snprintf(name, sizeof name, "%s.top", tag), snprintf(top, sizeof top, "%s", ct_test_tmp_path(name));
  snprintf(name, sizeof name, "%s.cali", tag), snprintf(calib, sizeof calib, "%s", ct_test_tmp_path(name));
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 2, xs);
  ob_init_f32(&b, "w", 2, ws, w);
  ob_init_f32(&b, "bias", 2, bs, bv);
  ob_node(&b, "MatMul", "mm", (const char *[]){"x", "w", NULL}, (const char *[]){bias ? "m" : "y", NULL});
  if (bias) ob_node(&b, "Add", "add", (const char *[]){"m", "bias", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ck_assert(ob_write(&b, model));
  Onnx__TensorProto *t = ob_tensor(&b, "x", T_FLOAT, 2, xs);
  ob_raw(&b, t, x, sizeof *x * (size_t)(M * K));
  ck_assert(ob_write_tensor(t, input));
  ob_free(&b);
  free(x), free(w), free(bv);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0,
                "calibrate: %s", out);
  snprintf(ins, sizeof ins, "'%s'", input);
  static const char *modes[] = {"F32", "BF16", "INT8"};
  for (int m = 0; m < 3; m++) {
    char t2[300];
    snprintf(t2, sizeof t2, "%s_%s", tag, modes[m]);
    lower_deploy(top, m == 2 ? calib : NULL, modes[m], ins, t2, 16);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy_gemm");
  TCase *tc = tcase_create("gemm");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_gemm_semantics, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_loop_test(tc, test_matmul_n_tiles, 0, 4);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
