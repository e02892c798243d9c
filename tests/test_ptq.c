/* test_ptq.c: the quantization flow library (ptq/) called directly on small ONNX models built
 * here (tests/onnx_build.c): the mixed precision search against a brute force over every
 * subset of float layers, the per-channel chains of a quantize table worked by hand, refine
 * against the output cosine this test computes itself, the samples / cosine helpers and the
 * sample-count defaults of calibration. The cosines this test expects are computed here:
 * ct_lower + ct_ref_run per candidate, outputs dequantized by hand, Σxy / √(Σx²·Σy²). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"
#include "compiler/propagate.h"
#include "onnx/onnx.h"
#include "ptq/calibrate.h"
#include "ptq/qtable_search.h"
#include "ptq/refine.h"
#include "ptq/samples.h"
#include "reference/interp.h"
#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define N_SAMPLES 12
#define FEAT 8

/* ---- models ---- */

/* MLP x [1, 8] → Gemm "A" → Relu → Gemm "B" → Relu → Gemm "C" [1, 4] → y (transB = 1,
 * weights uniform in [-0.5, 0.5)). Row 0 of A's weights is 0 and its bias −1, so h1[0] is
 * always 0. With bad, B's weight column 0 (which only ever meets that 0) is 100: B's per-row
 * INT8 weight step is then 100/127 and its other weights round to 0 or ±0.79 — B quantizes
 * badly, the other layers well. */
static void write_mlp(const char *path, bool bad) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 7;
  int64_t xd[2] = {1, FEAT}, wd[2] = {FEAT, FEAT}, cd[2] = {4, FEAT}, bd[1] = {FEAT};
  ob_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, xd);
  float wa[FEAT * FEAT], wb[FEAT * FEAT], ba[FEAT];
  for (int i = 0; i < FEAT * FEAT; i++) wa[i] = i < FEAT ? 0 : ob_lcg_unit(&seed) * 0.5f;
  for (int i = 0; i < FEAT * FEAT; i++) wb[i] = bad && i % FEAT == 0 ? 100.0f : ob_lcg_unit(&seed) * 0.5f;
  for (int i = 0; i < FEAT; i++) ba[i] = i == 0 ? -1.0f : 0.1f;
  ob_init_f32(&b, "wa", 2, wd, wa);
  ob_init_f32(&b, "ba", 1, bd, ba);
  ob_init_f32(&b, "wb", 2, wd, wb);
  ob_init_rand(&b, "wc", 2, cd, &seed);
  const char *names[3] = {"A", "B", "C"}, *w[3] = {"wa", "wb", "wc"}, *in[3] = {"x", "r1", "r2"};
  const char *out[3] = {"h1", "h2", "y"}, *relu[2] = {"R1", "R2"};
  for (int k = 0; k < 3; k++) {
    Onnx__NodeProto *n = ob_node(&b, "Gemm", names[k], (const char *[]){in[k], w[k], k == 0 ? "ba" : "", NULL},
                                 (const char *[]){out[k], NULL});
    ob_attr_i(&b, n, "transB", 1);
    if (k < 2) ob_node(&b, "Relu", relu[k], (const char *[]){out[k], NULL}, (const char *[]){in[k + 1], NULL});
  }
  ob_output(&b, "y");
  ck_assert(ob_write(&b, path));
  ob_free(&b);
}

/* x [1, 2, 16, 16] → Conv "c1" (1×1, 4 filters) → a → Sigmoid "sig" → s → depthwise Conv "c2"
 * (3×3, group 4, pad 1) → y → Conv "c3" (1×1, 2 filters) → z. a, s and y may be quantized per
 * channel (a Conv result read by a LUT; a LUT result read by a depthwise Conv; a depthwise
 * result read by an ordinary Conv, which folds the channel scales). */
static void write_chain(const char *path) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 3;
  int64_t xd[4] = {1, 2, 16, 16}, w1[4] = {4, 2, 1, 1}, w2[4] = {4, 1, 3, 3}, w3[4] = {2, 4, 1, 1};
  ob_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 4, xd);
  ob_init_rand(&b, "w1", 4, w1, &seed);
  ob_init_rand(&b, "w2", 4, w2, &seed);
  ob_init_rand(&b, "w3", 4, w3, &seed);
  ob_node(&b, "Conv", "c1", (const char *[]){"x", "w1", NULL}, (const char *[]){"a", NULL});
  ob_node(&b, "Sigmoid", "sig", (const char *[]){"a", NULL}, (const char *[]){"s", NULL});
  Onnx__NodeProto *n = ob_node(&b, "Conv", "c2", (const char *[]){"s", "w2", NULL}, (const char *[]){"y", NULL});
  ob_attr_i(&b, n, "group", 4);
  ob_attr_ints(&b, n, "pads", 4, (const int64_t[]){1, 1, 1, 1});
  ob_node(&b, "Conv", "c3", (const char *[]){"y", "w3", NULL}, (const char *[]){"z", NULL});
  ob_output(&b, "z");
  ck_assert(ob_write(&b, path));
  ob_free(&b);
}

/* ct_ptq_source loader: the ONNX model at user, imported and shape-propagated. */
static ct_status load_onnx(void *user, ct_graph **out, ct_diag *d) {
  ct_onnx_options o;
  memset(&o, 0, sizeof o);
  ct_status st = ct_onnx_import(user, &o, out, d);
  if (!st) st = ct_top_propagate(*out, d);
  if (st) ct_graph_free(*out), *out = NULL;
  return st;
}

static ct_graph *load(const char *path) {
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(load_onnx((void *)path, &g, &d) == CT_OK, "%s", d.msg);
  return g;
}

/* Sample i of the MLP: x uniform in [-1, 1) from an LCG seeded by i. */
static ct_status mlp_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  (void)user, (void)d;
  uint32_t seed = 1000u + (uint32_t)i;
  ct_tensor *x = ct_tensor_new(CT_F32, 2, (const int64_t[]){1, FEAT}, "x");
  for (int k = 0; k < FEAT; k++) ((float *)x->data)[k] = ob_lcg_unit(&seed);
  ck_assert(x && ct_tensor_list_push(in, x));
  return CT_OK;
}

/* A min/max calibration table of g on the MLP samples. */
static void calibrate_mlp(const ct_graph *g, ct_calib_table *t) {
  ct_calibrate_options o = CT_CALIBRATE_DEFAULTS;
  o.method = CT_CALIB_MAX;
  ct_diag d;
  ct_calib_table_init(t);
  ck_assert_msg(ct_calibrate(g, N_SAMPLES, mlp_sample, NULL, &o, t, &d) == CT_OK, "%s", d.msg);
}

/* ---- the independent measure ---- */

/* Element i of t as a real value: (q − zp)·scale rounded to f32 (as `ctpu compare` and the
 * search see it) for a quantized integer tensor (per tensor, or per channel along
 * quant_axis), else its value. */
static double real_value(const ct_tensor *t, int64_t i) {
  double v = ct_tensor_get_f64(t, i);
  if (t->n_scale < 1 || t->dtype == CT_F32 || t->dtype == CT_F16 || t->dtype == CT_BF16) return v;
  int64_t c = 0;
  if (t->n_scale > 1) {
    int64_t inner = 1;
    for (int k = t->quant_axis + 1; k < t->ndim; k++) inner *= t->shape[k];
    c = i / inner % t->shape[t->quant_axis];
  }
  return (float)((v - t->zero_point[c]) * t->scale[c]);
}

/* The output cosine of the model at path lowered to INT8 with table t and quantize table q
 * (NULL: none) against the float outputs on the samples: Σxy / √(Σx²·Σy²) over every element
 * of every sample, the smallest over the outputs. */
static double indep_cos(const char *path, const ct_calib_table *t, const ct_qtable *q) {
  ct_graph *top = load(path), *low = load(path);
  ct_diag d;
  ct_lower_options lo = {.mode = CT_QMODE_INT8, .calib = t, .qtable = q};
  ck_assert_msg(ct_lower(low, &lo, &d) == CT_OK, "%s", d.msg);
  double xy[4] = {0}, xx[4] = {0}, yy[4] = {0};
  ck_assert_int_le(top->n_outputs, 4);
  for (int64_t s = 0; s < N_SAMPLES; s++) {
    ct_tensor_list in, fo, qo;
    ct_tensor_list_init(&in), ct_tensor_list_init(&fo), ct_tensor_list_init(&qo);
    mlp_sample(NULL, s, &in, &d);
    ck_assert(ct_ref_run(top, &(ct_ref_options){0}, &in, &fo, &d) == CT_OK);
    ck_assert_msg(ct_ref_run(low, &(ct_ref_options){0}, &in, &qo, &d) == CT_OK, "%s", d.msg);
    for (int k = 0; k < fo.n; k++)
      for (int64_t i = 0; i < ct_tensor_numel(fo.items[k]); i++) {
        double a = ct_tensor_get_f64(fo.items[k], i), b = real_value(qo.items[k], i);
        xy[k] += a * b, xx[k] += a * a, yy[k] += b * b;
      }
    ct_tensor_list_free(&in), ct_tensor_list_free(&fo), ct_tensor_list_free(&qo);
  }
  double worst = 1;
  for (int k = 0; k < top->n_outputs; k++) worst = fmin(worst, xy[k] / sqrt(xx[k] * yy[k]));
  ct_graph_free(top), ct_graph_free(low);
  return worst;
}

/* ---- the mixed precision search ---- */

typedef struct qt_fixture {
  char path[512];
  ct_graph *top;
  ct_calib_table calib;
  ct_ptq_samples sm;
  ct_ptq_qtable_ctx c;
  int tries;
} qt_fixture;

static void count_try(void *user, int k, int64_t rows, double cos) {
  (void)k, (void)rows, (void)cos;
  ((qt_fixture *)user)->tries++;
}

static void qt_setup(qt_fixture *f, const char *name, bool bad) {
  memset(f, 0, sizeof *f);
  snprintf(f->path, sizeof f->path, "%s", ct_test_tmp_path(name));
  write_mlp(f->path, bad);
  f->top = load(f->path);
  calibrate_mlp(f->top, &f->calib);
  ct_diag d;
  ck_assert_msg(ct_ptq_samples_run(f->top, N_SAMPLES, mlp_sample, NULL, &f->sm, &d) == CT_OK, "%s", d.msg);
  f->c = (ct_ptq_qtable_ctx){.top = f->top, .src = {load_onnx, f->path}, .calib = &f->calib, .sm = &f->sm,
                             .float_mode = CT_QMODE_BF16, .expected_cos = 0.99, .on_try = count_try, .user = f};
}

static void qt_teardown(qt_fixture *f) {
  ct_ptq_samples_free(&f->sm);
  ct_calib_table_free(&f->calib);
  ct_graph_free(f->top);
}

/* The candidate ops of the MLP in graph order (every op but Input / Weight), and their first
 * results' names. */
static int mlp_layers(const ct_graph *g, const char **names) {
  int n = 0;
  for (int i = 0; i < g->n_ops; i++)
    if (!g->ops[i]->dead && g->ops[i]->kind != CT_OP_INPUT && g->ops[i]->kind != CT_OP_WEIGHT)
      names[n++] = g->ops[i]->out[0]->name;
  return n;
}

/* The quantize table of the layers in mask (bit i: names[i]) in BF16. */
static void table_of(const char **names, int n, unsigned mask, ct_qtable *q) {
  ct_diag d;
  ct_qtable_init(q);
  for (int i = 0; i < n; i++)
    if (mask >> i & 1) ck_assert(ct_qtable_add(q, names[i], CT_QMODE_BF16, 0, &d) == CT_OK);
}

/* The MLP whose layer B quantizes badly: the brute force over all 2^5 sets of float layers
 * finds one layer, B, whose set alone reaches a target above every other single layer's
 * cosine and the plain INT8 one; the search returns exactly that table, with the cosine
 * measured here; its plain INT8 cosine and the probed cosines equal those measured here. */
START_TEST(test_qtable_fewest_layers) {
  qt_fixture f;
  qt_setup(&f, "bad.onnx", true);
  const char *names[16];
  int n = mlp_layers(f.top, names);
  ck_assert_int_eq(n, 5); /* A, R1, B, R2, C */
  double cos[32];
  for (unsigned m = 0; m < 1u << n; m++) {
    ct_qtable q;
    table_of(names, n, m, &q);
    cos[m] = indep_cos(f.path, &f.calib, &q);
    ct_qtable_free(&q);
  }
  int ib = 2; /* B */
  ck_assert_str_eq(names[ib], "h2");
  double other = cos[0];
  for (int i = 0; i < n; i++)
    if (i != ib) other = fmax(other, cos[1u << i]);
  ck_assert_msg(cos[1u << ib] > other + 1e-3, "B alone %.6f, best other single layer / none %.6f", cos[1u << ib], other);
  f.c.expected_cos = (cos[1u << ib] + other) / 2;
  /* brute force: the fewest float layers reaching the target is 1, and only {B} does */
  int fewest = n + 1, with_fewest = 0;
  for (unsigned m = 0; m < 1u << n; m++) {
    int k = __builtin_popcount(m);
    if (cos[m] < f.c.expected_cos) continue;
    if (k < fewest) fewest = k, with_fewest = 0;
    if (k == fewest) with_fewest++;
  }
  ck_assert_int_eq(fewest, 1);
  ck_assert_int_eq(with_fewest, 1);

  ct_diag d;
  ct_ptq_ranking r;
  ck_assert_msg(ct_ptq_qtable_rank(&f.c, &r, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(r.n, n);
  ck_assert_double_eq_tol(r.cos0, cos[0], 1e-9);
  int best = -1;
  double best_cos = 0;
  ck_assert_msg(ct_ptq_qtable_search(&f.c, &r, -1, &best, &best_cos, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(best, 1);
  ck_assert_double_eq_tol(best_cos, cos[1u << ib], 1e-9);
  ct_qtable rows;
  ct_qtable_init(&rows);
  ck_assert(ct_ptq_qtable_rows(&f.c, &r, best, &rows, &d) == CT_OK);
  ck_assert_int_eq(rows.n, 1);
  ck_assert_str_eq(rows.rows[0].name, "h2");
  ck_assert_int_eq(rows.rows[0].mode, CT_QMODE_BF16);
  double c1 = 0;
  ck_assert(ct_ptq_qtable_cosine(&f.c, &rows, &c1, &d) == CT_OK);
  ck_assert_double_eq_tol(c1, cos[1u << ib], 1e-9);
  /* probing the three worst: each one's cosine alone in float, highest first */
  ck_assert(ct_ptq_qtable_probe(&f.c, &r, 3, &d) == CT_OK);
  ck_assert_int_eq(r.probed, 3);
  for (int i = 0; i < 3; i++) {
    int j = 0;
    while (strcmp(names[j], r.layers[i].op->out[0]->name)) j++;
    ck_assert_double_eq_tol(r.layers[i].cos, cos[1u << j], 1e-9);
    if (i > 0) ck_assert_double_le(r.layers[i].cos, r.layers[i - 1].cos);
  }
  ck_assert_str_eq(r.layers[0].op->out[0]->name, "h2");
  ct_qtable_free(&rows);
  ct_ptq_ranking_free(&r);
  qt_teardown(&f);
}
END_TEST

/* Limits: no float layer allowed leaves the plain INT8 table and cosine (nothing run); a
 * target the plain INT8 model reaches needs no search and no probe. */
START_TEST(test_qtable_limits) {
  qt_fixture f;
  qt_setup(&f, "bad2.onnx", true);
  ct_diag d;
  ct_ptq_ranking r;
  ck_assert(ct_ptq_qtable_rank(&f.c, &r, &d) == CT_OK);
  f.c.expected_cos = 1;
  int best = -1;
  double best_cos = 0;
  ck_assert(ct_ptq_qtable_search(&f.c, &r, 0, &best, &best_cos, &d) == CT_OK);
  ck_assert_int_eq(best, 0);
  ck_assert_double_eq(best_cos, r.cos0);
  ck_assert_int_eq(f.tries, 0);
  f.c.expected_cos = r.cos0;
  ck_assert(ct_ptq_qtable_probe(&f.c, &r, 5, &d) == CT_OK);
  ck_assert_int_eq(r.probed, 0);
  ck_assert(ct_ptq_qtable_search(&f.c, &r, -1, &best, &best_cos, &d) == CT_OK);
  ck_assert_int_eq(best, 0);
  ck_assert_int_eq(f.tries, 0);
  ct_ptq_ranking_free(&r);
  qt_teardown(&f);
}
END_TEST

/* Per-channel chains (worked from the rules of compiler/lower_policy.h): the Sigmoid brings
 * its producer c1 and its depthwise reader c2 along — a, s, y are channel activations — but
 * not c3, whose ordinary Conv folds y's channel scales; c3 alone stays alone. */
START_TEST(test_qtable_rows_chains) {
  const char *path = ct_test_tmp_path("chain.onnx");
  write_chain(path);
  ct_graph *g = load(path);
  ct_ptq_qtable_ctx c = {.top = g, .float_mode = CT_QMODE_F16};
  const ct_op *sig = NULL, *c3 = NULL;
  for (int i = 0; i < g->n_ops; i++) {
    if (g->ops[i]->kind == CT_OP_SIGMOID) sig = g->ops[i];
    if (g->ops[i]->out[0] && !strcmp(g->ops[i]->out[0]->name, "z")) c3 = g->ops[i];
  }
  ck_assert(sig && c3);
  ct_ptq_layer l[1] = {{sig, 0, 0}};
  ct_ptq_ranking r = {l, 1, 0, 0};
  ct_qtable rows;
  ct_qtable_init(&rows);
  ct_diag d;
  ck_assert(ct_ptq_qtable_rows(&c, &r, 1, &rows, &d) == CT_OK);
  ck_assert_int_eq(rows.n, 3);
  ck_assert_str_eq(rows.rows[0].name, "a");
  ck_assert_str_eq(rows.rows[1].name, "s");
  ck_assert_str_eq(rows.rows[2].name, "y");
  ck_assert_int_eq(rows.rows[2].mode, CT_QMODE_F16);
  l[0].op = c3;
  ck_assert(ct_ptq_qtable_rows(&c, &r, 1, &rows, &d) == CT_OK);
  ck_assert_int_eq(rows.n, 1);
  ck_assert_str_eq(rows.rows[0].name, "z");
  ck_assert(ct_ptq_qtable_rows(&c, &r, 0, &rows, &d) == CT_OK);
  ck_assert_int_eq(rows.n, 0);
  ct_qtable_free(&rows);
  ct_graph_free(g);
}
END_TEST

/* ---- refine ---- */

typedef struct row_log {
  double last;   /* score before the row */
  int changed;   /* rows changed so far in the pass */
  int rose;      /* rows whose change came with a higher score */
  int rows;
} row_log;

static void log_row(void *user, int pass, int64_t r, int64_t rows, double score, int changed) {
  (void)pass, (void)rows;
  row_log *l = user;
  if (r == 0) l->changed = 0;
  ck_assert_double_ge(score, l->last);
  if (changed > l->changed) {
    ck_assert_msg(score > l->last, "row %lld changed without a higher score", (long long)r);
    l->rose++;
  }
  l->changed = changed, l->last = score, l->rows++;
}

/* Refine on the well-quantizing MLP from a table whose hidden thresholds are 3× too wide:
 * the start and every reported score equal the output cosine measured here for the table
 * as it then is; the score never falls (after any row); a threshold changes only in a row
 * that raised it, by one of the pass's factors; two threads give the same table. */
START_TEST(test_refine) {
  const char *path = ct_test_tmp_path("mlp.onnx");
  write_mlp(path, false);
  ct_graph *g = load(path);
  ct_calib_table t, t0, t2;
  calibrate_mlp(g, &t);
  for (int64_t i = 0; i < t.n; i++)
    if (!strcmp(t.rows[i].name, "h1") || !strcmp(t.rows[i].name, "r1")) t.rows[i].threshold *= 3;
  calibrate_mlp(g, &t0), calibrate_mlp(g, &t2);
  for (int64_t i = 0; i < t.n; i++) t0.rows[i].threshold = t2.rows[i].threshold = t.rows[i].threshold;
  ct_ptq_samples sm = {0};
  ct_diag d;
  ck_assert(ct_ptq_samples_run(g, N_SAMPLES, mlp_sample, NULL, &sm, &d) == CT_OK);
  row_log log = {0};
  ct_ptq_refine r = {.src = {load_onnx, (void *)path}, .table = &t, .sm = &sm, .threads = 1, .on_row = log_row, .user = &log};
  ck_assert_msg(ct_ptq_refine_start(&r, &d) == CT_OK, "%s", d.msg);
  double c0 = indep_cos(path, &t0, NULL);
  ck_assert_double_eq_tol(r.start, c0, 1e-12);
  log.last = r.start;
  int total = 0;
  for (int p = 0; p < 2; p++) {
    double before = r.score;
    int changed = 0;
    ck_assert(ct_ptq_refine_pass(&r, p, &changed, &d) == CT_OK);
    ck_assert_double_ge(r.score, before);
    if (changed == 0) ck_assert_double_eq(r.score, before);
    total += changed;
  }
  ck_assert_int_eq(log.rows, 2 * t.n);
  ck_assert_int_eq(log.rose, total);
  ck_assert_int_gt(total, 0);
  ck_assert_double_gt(r.score, r.start);
  ck_assert_double_eq_tol(r.score, indep_cos(path, &t, NULL), 1e-12);
  /* each threshold moved by a product of at most one factor per pass */
  const double s0 = CT_PTQ_REFINE_STEP, s1 = CT_PTQ_REFINE_STEP / 2;
  int differ = 0;
  for (int64_t i = 0; i < t.n; i++) {
    double q = t.rows[i].threshold / t0.rows[i].threshold;
    bool ok = false;
    for (int a = -2; a <= 2; a++)
      for (int b = -2; b <= 2; b++) ok = ok || fabs(q - pow(1 + s0, a) * pow(1 + s1, b)) < 1e-12;
    ck_assert_msg(ok, "%s: threshold × %.9f is no product of the passes' factors", t.rows[i].name, q);
    differ += t.rows[i].threshold != t0.rows[i].threshold;
  }
  ck_assert_int_ge(total, differ);
  ck_assert_int_gt(differ, 0);
  /* two threads: the same table, bit for bit */
  ct_ptq_refine r2 = {.src = {load_onnx, (void *)path}, .table = &t2, .sm = &sm, .threads = 2};
  ck_assert(ct_ptq_refine_start(&r2, &d) == CT_OK);
  int ch;
  for (int p = 0; p < 2; p++) ck_assert(ct_ptq_refine_pass(&r2, p, &ch, &d) == CT_OK);
  ck_assert_double_eq(r2.score, r.score);
  for (int64_t i = 0; i < t.n; i++) ck_assert_double_eq(t2.rows[i].threshold, t.rows[i].threshold);
  ct_ptq_refine_free(&r), ct_ptq_refine_free(&r2);
  ct_ptq_samples_free(&sm);
  ct_calib_table_free(&t), ct_calib_table_free(&t0), ct_calib_table_free(&t2);
  ct_graph_free(g);
}
END_TEST

/* A table missing a tensor: refine fails at the start with the lowering's message. */
START_TEST(test_refine_missing_tensor) {
  const char *path = ct_test_tmp_path("mlp2.onnx");
  write_mlp(path, false);
  ct_graph *g = load(path);
  ct_calib_table t, part;
  calibrate_mlp(g, &t);
  ct_calib_table_init(&part);
  ct_diag d;
  for (int64_t i = 1; i < t.n; i++)
    ck_assert(ct_calib_table_add(&part, t.rows[i].name, t.rows[i].threshold, t.rows[i].min, t.rows[i].max, 0, &d) == CT_OK);
  ct_ptq_samples sm = {0};
  ck_assert(ct_ptq_samples_run(g, 2, mlp_sample, NULL, &sm, &d) == CT_OK);
  ct_ptq_refine r = {.src = {load_onnx, (void *)path}, .table = &part, .sm = &sm};
  ck_assert_int_eq(ct_ptq_refine_start(&r, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "not in the calibration table"), "%s", d.msg);
  ct_ptq_refine_free(&r);
  ct_ptq_samples_free(&sm);
  ct_calib_table_free(&t), ct_calib_table_free(&part);
  ct_graph_free(g);
}
END_TEST

/* ---- helpers ---- */

static ct_status failing_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  if (i == 2) return ct_diag_set(d, CT_ERR_INPUT, "boom");
  return mlp_sample(user, i, in, d);
}

/* Samples: each holds its inputs and the float outputs (a Gemm chain worked through by the
 * interpreter, checked against its own run); an error names the sample and keeps what was
 * taken for ct_ptq_samples_free. */
START_TEST(test_samples) {
  const char *path = ct_test_tmp_path("mlp3.onnx");
  write_mlp(path, false);
  ct_graph *g = load(path);
  ct_ptq_samples s = {0};
  ct_diag d;
  ck_assert(ct_ptq_samples_run(g, 3, mlp_sample, NULL, &s, &d) == CT_OK);
  ck_assert_int_eq(s.n, 3);
  ck_assert_int_eq(s.ref_out[2].n, 1);
  ck_assert_str_eq(s.inputs[1].items[0]->name, "x");
  ck_assert_int_eq(ct_tensor_numel(s.ref_out[1].items[0]), 4);
  ct_ptq_samples_free(&s);
  ck_assert_int_eq(ct_ptq_samples_run(g, 4, failing_sample, NULL, &s, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "sample 2: boom");
  ck_assert_int_eq(s.n, 3);
  ct_ptq_samples_free(&s);
  ck_assert_ptr_null(s.inputs);
  ct_graph_free(g);
}
END_TEST

/* ct_ptq_cos_add dequantizes: i8 q = (10, −20, 30) at scale 0.5, zp 2 is (4, −11, 14); against
 * ref (4, −11, 14) the sums are Σx² = 16 + 121 + 196 = 333 each; a tensor of another element
 * count adds nothing. */
START_TEST(test_cos_add) {
  ct_tensor *ref = ct_tensor_new(CT_F32, 1, (const int64_t[]){3}, "v");
  ct_tensor *q = ct_tensor_new(CT_I8, 1, (const int64_t[]){3}, "v");
  ct_tensor *e = ct_tensor_new(CT_F32, 1, (const int64_t[]){2}, "v");
  const float rv[3] = {4, -11, 14};
  const int8_t qv[3] = {10, -20, 30};
  memcpy(ref->data, rv, sizeof rv), memcpy(q->data, qv, sizeof qv);
  ck_assert(ct_tensor_set_quant(q, 1, 0, (const double[]){0.5}, (const int32_t[]){2}));
  ct_cos_sums s = {0};
  ct_diag d;
  ck_assert(ct_ptq_cos_add(&s, ref, q, &d) == CT_OK);
  ck_assert_double_eq(s.xy, 333);
  ck_assert_double_eq(s.xx, 333);
  ck_assert_double_eq(s.yy, 333);
  ck_assert(ct_ptq_cos_add(&s, ref, e, &d) == CT_OK);
  ck_assert_double_eq(s.xx, 333);
  ct_tensor_free(ref), ct_tensor_free(q), ct_tensor_free(e);
}
END_TEST

/* Calibration's sample-count defaults: fewer than 10 samples drop the channel thresholds
 * (unless forced or already off) and warn of histogram methods; minmax is not warned of. */
START_TEST(test_calibrate_for_samples) {
  ct_calibrate_options o = CT_CALIBRATE_DEFAULTS;
  o.method = CT_CALIB_MSE;
  ck_assert_uint_eq(ct_calibrate_for_samples(&o, 3, false), CT_CALIBRATE_WARN_FEW | CT_CALIBRATE_WARN_NO_CHANNEL);
  ck_assert(o.no_channel);
  ck_assert_uint_eq(ct_calibrate_for_samples(&o, 3, false), CT_CALIBRATE_WARN_FEW); /* already off */
  o = CT_CALIBRATE_DEFAULTS, o.method = CT_CALIB_MAX;
  ck_assert_uint_eq(ct_calibrate_for_samples(&o, 3, true), 0);
  ck_assert(!o.no_channel);
  ck_assert_uint_eq(ct_calibrate_for_samples(&o, 10, false), 0);
  o.tune = true;
  ck_assert_uint_eq(ct_calibrate_for_samples(&o, 9, false), CT_CALIBRATE_WARN_FEW | CT_CALIBRATE_WARN_NO_CHANNEL);
  ck_assert_str_eq(ct_calibrate_method_name(&o), "tune");
  o.tune = false;
  ck_assert_str_eq(ct_calibrate_method_name(&o), "minmax");
  o.method = CT_CALIB_KLD;
  ck_assert_str_eq(ct_calibrate_method_name(&o), "kld");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ptq");
  TCase *tc = tcase_create("ptq");
  tcase_add_test(tc, test_qtable_fewest_layers);
  tcase_add_test(tc, test_qtable_limits);
  tcase_add_test(tc, test_qtable_rows_chains);
  tcase_add_test(tc, test_refine);
  tcase_add_test(tc, test_refine_missing_tensor);
  tcase_add_test(tc, test_samples);
  tcase_add_test(tc, test_cos_add);
  tcase_add_test(tc, test_calibrate_for_samples);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
