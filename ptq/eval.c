/* eval.c: top-1 / top-5 and agreement (see eval.h). Samples run in a worker pool; each
 * sample's classes are stored by index, then counted, so the result is the same for any
 * thread count. */
#include "ptq/eval.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/dequant.h"
#include "common/workpool.h"
#include "reference/interp.h"

int64_t ct_eval_argmax(const ct_tensor *t) {
  int64_t n = ct_tensor_numel(t), best = -1;
  double bv = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = ct_tensor_get_f64(t, i);
    if (!isnan(v) && (best < 0 || v > bv)) best = i, bv = v;
  }
  return best;
}

bool ct_eval_in_topk(const ct_tensor *t, int64_t label, int k) {
  int64_t n = ct_tensor_numel(t), larger = 0;
  if (label < 0 || label >= n) return false;
  double v = ct_tensor_get_f64(t, label);
  if (isnan(v)) return false;
  for (int64_t i = 0; i < n; i++) larger += ct_tensor_get_f64(t, i) > v;
  return larger < k;
}

typedef struct eval_run {
  const ct_graph *g[2];
  ct_ref_sample_fn sample;
  void *user;
  const int64_t *labels;
  const ct_eval_options *o;
  int64_t total;
  atomic_int_fast64_t done;
  atomic_bool failed;
  int8_t *hit1, *hit5, *same; /* by sample */
  double *cos;                /* by sample: output cosine between the two models */
  ct_status *st;              /* by pool slot */
  int64_t *err_at;
  ct_diag *diag;
} eval_run;

/* Runs model g on inputs; *cls = top-1 class of the first output's real (dequantized) values,
 * and the hits against label (if ≥ 0); with real, *real = those values (f32; the caller
 * frees it). */
static ct_status classify(const ct_graph *g, const ct_tensor_list *in, int64_t label, int64_t *cls, int8_t *h1,
                          int8_t *h5, ct_tensor **real, ct_diag *d) {
  ct_tensor_list out;
  ct_tensor_list_init(&out);
  ct_ref_options opt = {.threads = 1};
  ct_status st = ct_ref_run(g, &opt, in, &out, d);
  if (st == CT_OK && out.n < 1) st = ct_diag_set(d, CT_ERR_INPUT, "module \"%s\" has no output", g->name ? g->name : "");
  ct_tensor *r = NULL; /* ranked by real values: a per-channel output's integers are not comparable */
  if (st == CT_OK) st = ct_dequant(out.items[0], &r, d);
  if (st == CT_OK) {
    *cls = ct_eval_argmax(r);
    if (label >= 0) *h1 = *cls == label, *h5 = ct_eval_in_topk(r, label, 5);
  }
  if (real) *real = r;
  else ct_tensor_free(r);
  ct_tensor_list_free(&out);
  return st;
}

double ct_eval_cosine(const ct_tensor *a, const ct_tensor *b) {
  ct_cos_sums s = {0};
  return ct_eval_cos_add(&s, a, b) ? ct_cos_of(&s) : NAN;
}

bool ct_eval_cos_add(ct_cos_sums *s, const ct_tensor *x, const ct_tensor *y) {
  int64_t n = ct_tensor_numel(x);
  if (n != ct_tensor_numel(y)) return false;
  for (int64_t i = 0; i < n; i++) ct_cos_add(s, ct_tensor_get_f64(x, i), ct_tensor_get_f64(y, i));
  return true;
}

static void eval_sample(void *arg, int64_t lo, int64_t hi, int slot) {
  eval_run *e = arg;
  for (int64_t i = lo; i < hi && !atomic_load(&e->failed); i++) {
    ct_tensor_list in;
    ct_tensor_list_init(&in);
    ct_diag d;
    int64_t c0 = -1, c1 = -1, label = e->labels ? e->labels[i] : -1;
    int8_t x1, x5;
    ct_status st = e->sample(e->user, i, &in, &d);
    ct_tensor *r0 = NULL, *r1 = NULL;
    if (st == CT_OK) st = classify(e->g[0], &in, label, &c0, &e->hit1[i], &e->hit5[i], e->g[1] ? &r0 : NULL, &d);
    if (st == CT_OK && e->g[1]) st = classify(e->g[1], &in, -1, &c1, &x1, &x5, &r1, &d);
    e->same[i] = c0 >= 0 && c0 == c1;
    e->cos[i] = r0 && r1 ? ct_eval_cosine(r0, r1) : 0;
    ct_tensor_free(r0), ct_tensor_free(r1);
    ct_tensor_list_free(&in);
    if (st && (e->st[slot] == CT_OK || i < e->err_at[slot])) {
      e->st[slot] = st, e->err_at[slot] = i;
      ct_diag_set(&e->diag[slot], st, "sample %lld: %s", (long long)i, d.msg);
      atomic_store(&e->failed, true);
    }
    int64_t done = atomic_fetch_add(&e->done, 1) + 1;
    if (slot == 0 && e->o->progress) e->o->progress(e->o->progress_user, done, e->total);
  }
}

static void count(const eval_run *e, ct_eval_result *r) {
  r->n = e->total;
  double cs = 0;
  for (int64_t i = 0; i < e->total; i++) {
    r->top1 += e->hit1[i], r->top5 += e->hit5[i], r->agree += e->same[i];
    cs += e->cos[i], r->min_cos = i == 0 || e->cos[i] < r->min_cos ? e->cos[i] : r->min_cos;
  }
  r->mean_cos = cs / (double)e->total;
}

ct_status ct_eval(const ct_graph *g, const ct_graph *other, int64_t n, ct_ref_sample_fn sample, void *sample_user,
                  const int64_t *labels, const ct_eval_options *o, ct_eval_result *r, ct_diag *d) {
  *r = (ct_eval_result){0};
  if (n < 1) return ct_diag_set(d, CT_ERR_USAGE, "no sample to evaluate");
  for (int64_t i = 0; labels && i < n; i++)
    if (labels[i] < 0) return ct_diag_set(d, CT_ERR_USAGE, "sample %lld has no label", (long long)i);
  int nt = o && o->threads > 1 ? (o->threads > CT_WORKPOOL_MAX ? CT_WORKPOOL_MAX : o->threads) : 1;
  ct_eval_options none = {0};
  eval_run e = {.g = {g, other}, .sample = sample, .user = sample_user, .labels = labels, .o = o ? o : &none, .total = n};
  atomic_init(&e.done, 0);
  atomic_init(&e.failed, false);
  e.hit1 = calloc((size_t)n, 1), e.hit5 = calloc((size_t)n, 1), e.same = calloc((size_t)n, 1);
  e.cos = calloc((size_t)n, sizeof *e.cos);
  e.st = calloc((size_t)nt, sizeof *e.st), e.err_at = calloc((size_t)nt, sizeof *e.err_at);
  e.diag = calloc((size_t)nt, sizeof *e.diag);
  ct_workpool *pool = nt > 1 ? ct_workpool_new(nt) : NULL;
  ct_status st = CT_OK;
  if (!e.hit1 || !e.hit5 || !e.same || !e.cos || !e.st || !e.err_at || !e.diag || (nt > 1 && !pool))
    st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK) ct_workpool_for(pool, n, n, eval_sample, &e);
  int worst = -1;
  for (int i = 0; st == CT_OK && i < nt; i++)
    if (e.st[i] && (worst < 0 || e.err_at[i] < e.err_at[worst])) worst = i;
  if (worst >= 0) *d = e.diag[worst], st = e.st[worst];
  if (st == CT_OK) count(&e, r);
  ct_workpool_free(pool);
  free(e.hit1), free(e.hit5), free(e.same), free(e.cos), free(e.st), free(e.err_at), free(e.diag);
  return st;
}
