/* cmd_refine.c: `ctpu refine MODEL.top --calibration-table T --dataset D -o T2`: refines the
 * thresholds of a calibration table by the error of the whole INT8 model (docs/calibration.md
 * "ctpu refine"). Calibration methods choose each tensor's threshold by that tensor's own
 * error; refine scores a table by what the user measures, the module outputs of the lowered
 * INT8 model against float on the samples, and searches the thresholds jointly by coordinate
 * descent — loss-aware post-training quantization (Nahshan et al., "Loss Aware Post-training
 * Quantization", 2019, who minimise the task loss over the clipping values with Powell's
 * method; here a fixed set of factors per tensor and pass, the loss the output cosine). */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "common/workpool.h"
#include "compiler/lower.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "reference/interp.h"
#include "tools/samples.h"
#include "tools/tools.h"

#define CMD "refine"

typedef struct rf_args {
  const char *model, *calib, *dataset, *out, *qtable;
  long long input_num, passes, threads;
  bool lut16;
} rf_args;

/* The search: samples, the table being refined, the lowering of its best state. */
typedef struct rf_state {
  const rf_args *a;
  ct_graph *g; /* Top */
  ct_calib_table t;
  ct_qtable q;
  ct_tool_samples sm;
  ct_workpool *pool;
  int n_out;          /* module outputs */
  ct_cos_sums *sums;  /* by sample and output: the candidate's output vs float */
  ct_status *st;      /* by sample */
  ct_diag *diag;      /* by sample */
  const ct_graph *run; /* the candidate being scored (pool workers read it) */
  ct_graph *best;     /* lowering of the best table so far */
  char *best_text;    /* its text */
  double best_score;
  long long evals, skipped;
} rf_state;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu refine MODEL.top --calibration-table T --dataset D -o T2 [options]\n"
          "  refines the thresholds of T by the INT8 model's output cosine vs float on the samples\n"
          "  (coordinate descent over every tensor's threshold; loss-aware PTQ)\n"
          "  --input-num N            samples of the data set used (default 8)\n"
          "  --passes P               passes over the table, each with finer factors (default 1)\n"
          "  --threads N              samples run in parallel (default 1)\n"
          "  --lut-input 8|16         lower as `ctpu lower --lut-input` will (default 8)\n"
          "  --quantize-table Q       lower as `ctpu lower --quantize-table Q` will\n");
}

static int parse_args(int argc, char **argv, rf_args *a) {
  *a = (rf_args){.input_num = 8, .passes = 1, .threads = 1};
  for (int i = 1; i < argc; i++) {
    const char *s, *v;
    int rc = ct_tool_arg(CMD, argc, argv, &i, usage, &a->model, &s, &v);
    if (rc) return rc;
    if (!s) continue;
    if (!strcmp(s, "--calibration-table")) a->calib = v;
    else if (!strcmp(s, "--dataset")) a->dataset = v;
    else if (!strcmp(s, "-o")) a->out = v;
    else if (!strcmp(s, "--quantize-table")) a->qtable = v;
    else if (!strcmp(s, "--input-num")) rc = ct_tool_int_opt(CMD, s, v, 1, LLONG_MAX, &a->input_num);
    else if (!strcmp(s, "--passes")) rc = ct_tool_int_opt(CMD, s, v, 1, 8, &a->passes);
    else if (!strcmp(s, "--threads")) rc = ct_tool_int_opt(CMD, s, v, 1, CT_WORKPOOL_MAX, &a->threads);
    else if (!strcmp(s, "--lut-input")) {
      if (strcmp(v, "8") && strcmp(v, "16")) return ct_tool_usage(CMD, "--lut-input %s: 8 or 16", v);
      a->lut16 = !strcmp(v, "16");
    } else return ct_tool_usage(CMD, "unknown option \"%s\"", s);
    if (rc) return rc;
  }
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  if (!a->calib) return ct_tool_usage(CMD, "no calibration table given (--calibration-table T)");
  if (!a->dataset) return ct_tool_usage(CMD, "no data set given (--dataset D)");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o T2)");
  return 0;
}

/* Pool body: runs the candidate on samples [lo, hi); sums[i · n_out + k] = the cosine sums
 * of output k's float values and dequantized INT8 values on sample i. */
static void score_samples(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  rf_state *s = arg;
  for (int64_t i = lo; i < hi; i++) {
    ct_tensor_list outs;
    ct_tensor_list_init(&outs);
    const ct_tensor_list *ref = &s->sm.ref_out[i];
    ct_status st = ct_ref_run(s->run, &(ct_ref_options){.threads = 1}, &s->sm.inputs[i], &outs, &s->diag[i]);
    if (!st && (outs.n != s->n_out || ref->n != s->n_out))
      st = ct_diag_set(&s->diag[i], CT_ERR_INPUT, "%d outputs, the float module has %d", outs.n, ref->n);
    for (int k = 0; !st && k < outs.n; k++) {
      s->sums[i * s->n_out + k] = (ct_cos_sums){0};
      st = ct_tool_cos_add(&s->sums[i * s->n_out + k], ref->items[k], outs.items[k], &s->diag[i]);
    }
    s->st[i] = st;
    ct_tensor_list_free(&outs);
  }
}

/* The score of the sums: per module output the cosine of all samples taken together (Σ over
 * samples in order, so any thread count gives the same bits), the smallest over the outputs —
 * the "int8 cosine" of `ctpu qtable` on the same samples. */
static double score_of(const rf_state *s) {
  double worst = 1;
  for (int k = 0; k < s->n_out; k++) {
    ct_cos_sums a = {0};
    for (int64_t i = 0; i < s->sm.n; i++) ct_cos_merge(&a, &s->sums[i * s->n_out + k]);
    worst = fmin(worst, ct_cos_of(&a));
  }
  return worst;
}

/* Lowers the Top module to INT8 with the current table. */
static ct_status lower_now(const rf_state *s, ct_graph **out, ct_diag *d) {
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = &s->t, .qtable = s->a->qtable ? &s->q : NULL, .lut16 = s->a->lut16};
  return ct_tool_load_lowered(s->a->model, &o, out, d);
}

/* True if a and b (lowerings of one Top module, so with the same values) hold the same
 * constant data: the text comparison covers everything else a threshold can change. */
static bool same_data(const ct_graph *a, const ct_graph *b) {
  if (a->n_values != b->n_values) return false;
  for (int i = 0; i < a->n_values; i++) {
    const ct_tensor *x = a->values[i]->data, *y = b->values[i]->data;
    if (!x != !y) return false;
    if (x && (x->dtype != y->dtype || x->nbytes != y->nbytes || memcmp(x->data, y->data, x->nbytes))) return false;
  }
  return true;
}

/* Scores the current table (score_of). *same is
 * set (and nothing run) when its lowering equals the best one: the tensor's threshold does
 * not reach the module. On a better score the lowering becomes the best. */
static ct_status score(rf_state *s, double *out, bool *same, ct_diag *d) {
  ct_graph *t = NULL;
  char *text = NULL;
  size_t len = 0;
  ct_status st = lower_now(s, &t, d);
  if (!st) st = ct_ir_print_string(t, &text, &len, d);
  *same = !st && s->best_text && !strcmp(text, s->best_text) && same_data(t, s->best);
  *out = s->best_score;
  if (!st && !*same) {
    s->run = t, s->evals++;
    ct_workpool_for(s->pool, s->sm.n, s->sm.n, score_samples, s);
    for (int64_t i = 0; !st && i < s->sm.n; i++)
      if (s->st[i]) st = s->st[i], *d = s->diag[i], ct_diag_prefix(d, "sample %lld: ", (long long)i);
    if (!st) *out = score_of(s);
  }
  if (*same) s->skipped++;
  if (!st && !*same && (!s->best || *out > s->best_score)) {
    ct_graph_free(s->best), free(s->best_text);
    s->best = t, s->best_text = text, s->best_score = *out;
    t = NULL, text = NULL;
  }
  ct_graph_free(t), free(text);
  return st;
}

/* Row r's threshold and per-channel thresholds (if any) := saved ones (th, ch) times f. */
static void set_row(rf_state *s, int64_t r, double th, const double *ch, double f) {
  s->t.rows[r].threshold = th * f;
  const ct_calib_wrow *c = ct_calib_table_find_channel(&s->t, s->t.rows[r].name);
  for (int64_t k = 0; c && k < c->n; k++) c->scale[k] = ch[k] * f;
}

/* Saves row r: *th its threshold, *ch (malloc'd, NULL without channel row) its per-channel
 * thresholds. */
static ct_status save_row(const rf_state *s, int64_t r, double *th, double **ch, ct_diag *d) {
  const ct_calib_wrow *c = ct_calib_table_find_channel(&s->t, s->t.rows[r].name);
  *th = s->t.rows[r].threshold, *ch = NULL;
  if (!c) return CT_OK;
  if (!(*ch = malloc((size_t)c->n * sizeof **ch))) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  memcpy(*ch, c->scale, (size_t)c->n * sizeof **ch);
  return CT_OK;
}

/* One pass: for every row, its thresholds times (1 + step)^±1 and (1 + step)^±2 are scored
 * and the best kept if it beats the table's score; a row whose threshold does not reach the
 * lowered module is left after its first factor. *changed: the rows changed. */
static ct_status pass(rf_state *s, int p, double step, int *changed, ct_diag *d) {
  const double f[4] = {1 / ((1 + step) * (1 + step)), 1 / (1 + step), 1 + step, (1 + step) * (1 + step)};
  *changed = 0;
  ct_status st = CT_OK;
  for (int64_t r = 0; !st && r < s->t.n; r++) {
    double th, *ch = NULL, bf = 1;
    st = save_row(s, r, &th, &ch, d);
    for (int k = 0; !st && k < 4; k++) {
      double c, before = s->best_score;
      bool same;
      set_row(s, r, th, ch, f[k]);
      st = score(s, &c, &same, d);
      if (same) break;
      if (!st && c > before) bf = f[k];
    }
    if (!st) set_row(s, r, th, ch, bf);
    *changed += bf != 1;
    free(ch);
    if (ct_tool_isatty())
      fprintf(stderr, "\rctpu refine: pass %d/%lld, tensor %lld/%lld, output cosine %.6f, %d changed   ", p + 1,
              s->a->passes, (long long)r + 1, (long long)s->t.n, s->best_score, *changed);
  }
  if (ct_tool_isatty()) fputc('\n', stderr);
  return st;
}

/* Reads the inputs, scores the table, runs the passes (factor step 0.15, halved each pass)
 * and writes the refined table with comment lines saying what was done. */
static ct_status run(rf_state *s, ct_diag *d) {
  const rf_args *a = s->a;
  ct_outset os;
  ct_outset_init(&os, CMD);
  const char *tmp = NULL;
  ct_status st = ct_outset_input(&os, a->model, d);
  if (!st) st = ct_outset_add(&os, a->out, &tmp, d);
  if (!st) st = ct_calib_table_read(a->calib, &s->t, d);
  if (!st && a->qtable) st = ct_qtable_read(a->qtable, &s->q, d);
  if (!st) st = ct_ir_load_verified(a->model, &s->g, d);
  if (!st && ct_graph_dialect(s->g) != CT_DIALECT_TOP)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: not a Top module (refine lowers a float model)", a->model);
  if (!st) st = ct_tool_samples_load(a->dataset, s->g, a->input_num, &s->sm, d);
  int64_t n = s->sm.n;
  if (!st && !(s->pool = ct_workpool_new((int)a->threads))) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  s->n_out = s->g ? s->g->n_outputs : 0;
  if (!st && (!(s->sums = calloc((size_t)(n * s->n_out + 1), sizeof *s->sums)) || !(s->st = calloc((size_t)n, sizeof *s->st)) ||
              !(s->diag = calloc((size_t)n, sizeof *s->diag))))
    st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  double c0 = 0;
  bool same;
  if (!st) st = score(s, &c0, &same, d);
  if (!st) printf("samples %lld, tensors %lld\nstart: output cosine %.6f\n", (long long)n, (long long)s->t.n, c0);
  int total = 0;
  for (int p = 0; !st && p < a->passes; p++) {
    int changed = 0;
    st = pass(s, p, 0.15 / (1 << p), &changed, d);
    total += changed;
    if (!st) printf("pass %d: output cosine %.6f, %d thresholds changed\n", p + 1, s->best_score, changed);
    fflush(stdout);
  }
  char line[2][200];
  snprintf(line[0], sizeof line[0], "refined by ctpu refine from %s: output cosine %.6f -> %.6f on %lld samples",
           a->calib, c0, s->best_score, (long long)n);
  snprintf(line[1], sizeof line[1], "%lld passes, %d thresholds changed, %lld lowerings run, %lld%s", a->passes, total,
           s->evals, s->skipped, a->lut16 ? " without effect, --lut-input 16" : " without effect");
  const char *lines[2] = {line[0], line[1]};
  if (!st) st = ct_calib_table_write(tmp, &s->t, lines, 2, d);
  if (!st) printf("%s: output cosine %.6f -> %.6f (%d thresholds changed)\n", a->out, c0, s->best_score, total);
  if (st) ct_outset_abort(&os);
  else st = ct_outset_commit(&os, d);
  return st;
}

int ct_cmd_refine(int argc, char **argv) {
  rf_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  rf_state s = {.a = &a};
  ct_calib_table_init(&s.t);
  ct_qtable_init(&s.q);
  ct_tool_keep_heap();
  ct_status st = run(&s, &d);
  ct_tool_samples_free(&s.sm);
  ct_workpool_free(s.pool);
  free(s.sums), free(s.st), free(s.diag), free(s.best_text);
  ct_graph_free(s.best);
  ct_calib_table_free(&s.t);
  ct_qtable_free(&s.q);
  ct_graph_free(s.g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
