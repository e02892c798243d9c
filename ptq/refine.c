/* refine.c: coordinate descent over a calibration table's thresholds, scored by the INT8
 * model's output cosine (refine.h). Each candidate is one lowering; a candidate whose
 * lowering (text and constant data) equals the best one is not run. */
#include "ptq/refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"
#include "ir/text.h"
#include "reference/interp.h"

/* Pool body: runs the candidate on samples [lo, hi); sums[i · n_out + k] = the cosine sums
 * of output k's float values and dequantized INT8 values on sample i. */
static void score_samples(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  ct_ptq_refine *r = arg;
  for (int64_t i = lo; i < hi; i++) {
    ct_tensor_list outs;
    ct_tensor_list_init(&outs);
    const ct_tensor_list *ref = &r->sm->ref_out[i];
    ct_status st = ct_ref_run(r->run, &(ct_ref_options){.threads = 1}, &r->sm->inputs[i], &outs, &r->diag[i]);
    if (!st && (outs.n != r->n_out || ref->n != r->n_out))
      st = ct_diag_set(&r->diag[i], CT_ERR_INPUT, "%d outputs, the float module has %d", outs.n, ref->n);
    for (int k = 0; !st && k < outs.n; k++) {
      r->sums[i * r->n_out + k] = (ct_cos_sums){0};
      st = ct_ptq_cos_add(&r->sums[i * r->n_out + k], ref->items[k], outs.items[k], &r->diag[i]);
    }
    r->st[i] = st;
    ct_tensor_list_free(&outs);
  }
}

/* The score of the sums: per module output the cosine of all samples taken together, the
 * smallest over the outputs. */
static double score_of(const ct_ptq_refine *r) {
  double worst = 1;
  for (int k = 0; k < r->n_out; k++) {
    ct_cos_sums a = {0};
    for (int64_t i = 0; i < r->sm->n; i++) ct_cos_merge(&a, &r->sums[i * r->n_out + k]);
    worst = fmin(worst, ct_cos_of(&a));
  }
  return worst;
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

/* Runs candidate t on every sample; *out its score. */
static ct_status run_candidate(ct_ptq_refine *r, const ct_graph *t, double *out, ct_diag *d) {
  r->run = t, r->evals++;
  ct_workpool_for(r->pool, r->sm->n, r->sm->n, score_samples, r);
  for (int64_t i = 0; i < r->sm->n; i++)
    if (r->st[i]) {
      *d = r->diag[i];
      ct_diag_prefix(d, "sample %lld: ", (long long)i);
      return r->st[i];
    }
  *out = score_of(r);
  return CT_OK;
}

/* Scores the current table. *same is set (and nothing run) when its lowering equals the best
 * one: the row's threshold does not reach the module. On a better score the lowering becomes
 * the best. */
static ct_status score(ct_ptq_refine *r, double *out, bool *same, ct_diag *d) {
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = r->table, .qtable = r->qtable, .lut16 = r->lut16};
  ct_graph *t = NULL;
  char *text = NULL;
  size_t len = 0;
  ct_status st = ct_ptq_lower(&r->src, &o, &t, d);
  if (!st) st = ct_ir_print_string(t, &text, &len, d);
  *same = !st && r->best_text && !strcmp(text, r->best_text) && same_data(t, r->best);
  *out = r->score;
  if (!st && !*same) st = run_candidate(r, t, out, d);
  if (*same) r->skipped++;
  if (!st && !*same && (!r->best || *out > r->score)) {
    ct_graph_free(r->best), free(r->best_text);
    r->best = t, r->best_text = text, r->score = *out;
    t = NULL, text = NULL;
  }
  ct_graph_free(t), free(text);
  return st;
}

ct_status ct_ptq_refine_start(ct_ptq_refine *r, ct_diag *d) {
  int64_t n = r->sm->n;
  int threads = r->threads < 1 ? 1 : r->threads;
  r->n_out = r->sm->n > 0 ? r->sm->ref_out[0].n : 0;
  if (!(r->pool = ct_workpool_new(threads))) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!(r->sums = calloc((size_t)(n * r->n_out + 1), sizeof *r->sums)) || !(r->st = calloc((size_t)n + 1, sizeof *r->st)) ||
      !(r->diag = calloc((size_t)n + 1, sizeof *r->diag)))
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  bool same;
  ct_status st = score(r, &r->start, &same, d);
  if (!st) r->score = r->start;
  return st;
}

/* Row i's threshold and per-channel thresholds (if any) := saved ones (th, ch) times f. */
static void set_row(ct_ptq_refine *r, int64_t i, double th, const double *ch, double f) {
  r->table->rows[i].threshold = th * f;
  const ct_calib_wrow *c = ct_calib_table_find_channel(r->table, r->table->rows[i].name);
  for (int64_t k = 0; c && k < c->n; k++) c->scale[k] = ch[k] * f;
}

/* Saves row i: *th its threshold, *ch (malloc'd, NULL without channel row) its per-channel
 * thresholds. */
static ct_status save_row(const ct_ptq_refine *r, int64_t i, double *th, double **ch, ct_diag *d) {
  const ct_calib_wrow *c = ct_calib_table_find_channel(r->table, r->table->rows[i].name);
  *th = r->table->rows[i].threshold, *ch = NULL;
  if (!c) return CT_OK;
  if (!(*ch = malloc((size_t)c->n * sizeof **ch))) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  memcpy(*ch, c->scale, (size_t)c->n * sizeof **ch);
  return CT_OK;
}

ct_status ct_ptq_refine_pass(ct_ptq_refine *r, int p, int *changed, ct_diag *d) {
  double step = CT_PTQ_REFINE_STEP / (1 << p);
  const double f[4] = {1 / ((1 + step) * (1 + step)), 1 / (1 + step), 1 + step, (1 + step) * (1 + step)};
  *changed = 0;
  ct_status st = CT_OK;
  for (int64_t i = 0; !st && i < r->table->n; i++) {
    double th, *ch = NULL, bf = 1;
    st = save_row(r, i, &th, &ch, d);
    for (int k = 0; !st && k < 4; k++) {
      double c, before = r->score;
      bool same;
      set_row(r, i, th, ch, f[k]);
      st = score(r, &c, &same, d);
      if (same) break;
      if (!st && c > before) bf = f[k];
    }
    if (!st) set_row(r, i, th, ch, bf);
    *changed += bf != 1;
    free(ch);
    if (r->on_row) r->on_row(r->user, p, i, r->table->n, r->score, *changed);
  }
  return st;
}

void ct_ptq_refine_free(ct_ptq_refine *r) {
  ct_workpool_free(r->pool);
  free(r->sums), free(r->st), free(r->diag), free(r->best_text);
  ct_graph_free(r->best);
  r->pool = NULL, r->sums = NULL, r->st = NULL, r->diag = NULL, r->best_text = NULL, r->best = NULL;
}
