/* calibrate.c: the calibration driver (see calibrate.h). Each pass runs the float
 * interpreter over the samples, one sample per thread of a worker pool, with an on_op hook
 * accumulating into per-thread statistics that are merged afterwards (min/max and integer
 * bin counts merge exactly, so the result does not depend on the thread count). */
#include "ptq/calibrate.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/clones.h"
#include "common/workpool.h"
#include "compiler/lower_policy.h"
#include "ptq/calibrate_int.h"
#include "quant/quant.h"
#include "reference/interp.h"

static const char *const phase_names[] = {"", "min/max", "histograms", "tune", "channel scales"};

/* ---- slots: the calibrated values ---- */

static ct_status make_slots(cal_state *c, ct_diag *d) {
  const ct_graph *g = c->g;
  c->slot_of = malloc(sizeof *c->slot_of * ((size_t)g->n_values + 1));
  c->vals = calloc((size_t)g->n_values + 1, sizeof *c->vals);
  c->readers = calloc((size_t)g->n_values + 1, sizeof *c->readers);
  if (!c->slot_of || !c->vals || !c->readers) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int i = 0; i < g->n_values; i++) c->slot_of[i] = -1;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead || op->kind == CT_OP_WEIGHT) continue;
    for (int k = 0; k < op->n_out; k++) {
      const ct_value *v = op->out[k];
      if (v->dtype != CT_F32 || ct_value_is_const(v) || c->slot_of[v->id] >= 0) continue;
      c->vals[c->nslots] = v;
      c->slot_of[v->id] = c->nslots++;
    }
  }
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    for (int k = 0; !op->dead && k < op->n_in; k++)
      if (op->in[k] && !ct_value_is_const(op->in[k]) && c->slot_of[op->in[k]->id] >= 0) c->readers[c->slot_of[op->in[k]->id]]++;
  }
  if (c->nslots == 0) return ct_diag_set(d, CT_ERR_INPUT, "module \"%s\" has no f32 tensor to calibrate", g->name ? g->name : "");
  c->nch = calloc((size_t)c->nslots, sizeof *c->nch);
  if (!c->nch) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int s = 0; s < c->nslots && !c->o->no_channel; s++) c->nch[s] = ct_lower_channel_act(g, c->vals[s]) ? c->vals[s]->shape[1] : 0;
  return CT_OK;
}

/* Per-channel arrays (nch[s] doubles, zeroed) for every per-channel slot. */
static double **alloc_chmax(const cal_state *c) {
  double **m = calloc((size_t)c->nslots + 1, sizeof *m);
  for (int s = 0; m && s < c->nslots; s++)
    if (c->nch[s] && !(m[s] = calloc((size_t)c->nch[s], sizeof **m))) {
      while (s-- > 0) free(m[s]);
      free(m);
      return NULL;
    }
  return m;
}

static void free_chmax(double **m, int nslots) {
  for (int s = 0; m && s < nslots; s++) free(m[s]);
  free(m);
}

/* ---- the hook ---- */

static int64_t count_zeros(const float *x, int64_t n) {
  int64_t z = 0;
  for (int64_t i = 0; i < n; i++) z += x[i] == 0.0f;
  return z;
}

/* max(0, max |x[i]|) over i < n in float, NaN left out (as fmax leaves it out). */
CT_CLONES_AVX2 static float row_absmax(const float *x, int64_t n) {
  float m = 0;
  for (int64_t i = 0; i < n; i++) {
    float a = fabsf(x[i]);
    m = a > m ? a : m;
  }
  return m;
}

/* mx[c] = max(mx[c], |x|) over channel c of an NCHW tensor of shape sh (|x| in float is
 * |x| in double: the same maximum). */
static void channel_absmax(const float *x, const int64_t *sh, double *mx) {
  int64_t inner = sh[2] * sh[3];
  for (int64_t n = 0; n < sh[0]; n++)
    for (int64_t ch = 0; ch < sh[1]; ch++, x += inner) mx[ch] = fmax(mx[ch], (double)row_absmax(x, inner));
}

static ct_status on_op(void *user, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out, ct_diag *d) {
  cal_worker *w = user;
  cal_state *c = w->c;
  if (w->phase == 3) return ct_cal_tune_op(w, op, in, out, d);
  if (w->phase == 4) return ct_cal_alpha_op(w, op, in, out, d);
  for (int k = 0; k < op->n_out; k++) {
    int s = c->slot_of[op->out[k]->id];
    if (s < 0 || !out[k]) continue;
    const float *x = out[k]->data;
    int64_t n = ct_tensor_numel(out[k]);
    if (w->phase == 1) {
      ct_calib_stats_add(&w->stats[s], x, n);
      if (c->nch[s] && out[k]->ndim == 4 && out[k]->shape[1] == c->nch[s]) channel_absmax(x, out[k]->shape, w->chmax[s]);
    } else {
      ct_calib_hist_add(&w->hist[s], x, n);
      w->zeros[s] += count_zeros(x, n);
    }
  }
  return CT_OK;
}

/* ---- one pass over the samples ---- */

typedef struct pass {
  cal_state *c;
  cal_worker *w;            /* per pool slot */
  ct_ref_sample_fn sample;
  void *sample_user;
  atomic_int_fast64_t done;
  atomic_bool failed;
  int64_t total;
  ct_status *st;            /* per pool slot: first error of that slot */
  int64_t *err_at;          /* its sample */
  ct_diag *diag;
} pass;

static void run_sample(void *arg, int64_t lo, int64_t hi, int slot) {
  pass *p = arg;
  for (int64_t i = lo; i < hi && !atomic_load(&p->failed); i++) {
    ct_tensor_list in, out;
    ct_tensor_list_init(&in);
    ct_tensor_list_init(&out);
    ct_diag d;
    cal_state *c = p->c;
    if (p->w[slot].phase == 3) p->w[slot].err = c->tune_err + (size_t)i * (size_t)c->nslots * (size_t)(c->o->tune_steps + 1);
    if (p->w[slot].phase == 4) p->w[slot].err = c->alpha_err + (size_t)i * (size_t)c->nslots * CAL_N_ALPHA;
    ct_status st = p->sample(p->sample_user, i, &in, &d);
    ct_ref_options opt = {.threads = 1, .on_op = on_op, .on_op_user = &p->w[slot], .consts = p->w[slot].consts};
    if (st == CT_OK) st = ct_ref_run(p->c->g, &opt, &in, &out, &d);
    ct_tensor_list_free(&in);
    ct_tensor_list_free(&out);
    if (st && (p->st[slot] == CT_OK || i < p->err_at[slot])) {
      p->st[slot] = st;
      p->err_at[slot] = i;
      ct_diag_set(&p->diag[slot], st, "sample %lld: %s", (long long)i, d.msg);
      atomic_store(&p->failed, true);
    }
    int64_t done = atomic_fetch_add(&p->done, 1) + 1;
    const ct_calibrate_options *o = p->c->o;
    if (slot == 0 && o->progress) o->progress(o->progress_user, phase_names[p->w[0].phase], done, p->total);
  }
}

/* Runs samples 0..n-1 through the hook with the workers in phase `phase`. */
static ct_status run_pass(cal_state *c, ct_workpool *pool, cal_worker *w, int nw, int phase, int64_t n,
                          ct_ref_sample_fn sample, void *user, ct_diag *d) {
  pass p = {.c = c, .w = w, .sample = sample, .sample_user = user, .total = n};
  atomic_init(&p.done, 0);
  atomic_init(&p.failed, false);
  p.st = calloc((size_t)nw, sizeof *p.st);
  p.err_at = calloc((size_t)nw, sizeof *p.err_at);
  p.diag = calloc((size_t)nw, sizeof *p.diag);
  if (!p.st || !p.err_at || !p.diag) {
    free(p.st), free(p.err_at), free(p.diag);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  for (int i = 0; i < nw; i++) w[i].phase = phase;
  ct_workpool_for(pool, n, n, run_sample, &p);
  int worst = -1;
  for (int i = 0; i < nw; i++)
    if (p.st[i] && (worst < 0 || p.err_at[i] < p.err_at[worst])) worst = i;
  ct_status st = CT_OK;
  if (worst >= 0) *d = p.diag[worst], st = p.st[worst];
  else if (c->o->progress) c->o->progress(c->o->progress_user, phase_names[phase], n, n);
  free(p.st), free(p.err_at), free(p.diag);
  return st;
}

/* ---- workers' accumulators ---- */

static void free_workers(cal_worker *w, int nw, int nslots) {
  for (int i = 0; w && i < nw; i++) {
    for (int s = 0; w[i].hist && s < nslots; s++) ct_calib_hist_free(&w[i].hist[s]);
    free(w[i].stats), free(w[i].hist), free(w[i].zeros), ct_ref_consts_free(w[i].consts);
    free_chmax(w[i].chmax, nslots);
  }
  free(w);
}

static ct_status alloc_workers(cal_state *c, cal_worker *w, int nw, ct_diag *d) {
  size_t ns = (size_t)c->nslots;
  for (int i = 0; i < nw; i++) {
    w[i].c = c;
    w[i].stats = malloc(sizeof *w[i].stats * ns);
    w[i].hist = calloc(ns, sizeof *w[i].hist);
    w[i].zeros = calloc(ns, sizeof *w[i].zeros);
    w[i].chmax = alloc_chmax(c);
    w[i].consts = ct_ref_consts_new();
    if (!w[i].stats || !w[i].hist || !w[i].zeros || !w[i].chmax || !w[i].consts)
      return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    for (size_t s = 0; s < ns; s++) w[i].stats[s] = ct_calib_stats_init();
  }
  return CT_OK;
}

/* Histograms over [0, absmax] of every slot in every worker and in c. */
static ct_status init_hists(cal_state *c, cal_worker *w, int nw, ct_diag *d) {
  for (int s = 0; s < c->nslots; s++) {
    double range = ct_calib_stats_absmax(&c->stats[s]);
    if (!isfinite(range)) range = 0;
    ct_status st = ct_calib_hist_init(&c->hist[s], c->o->bins, range, d);
    for (int i = 0; st == CT_OK && i < nw; i++) st = ct_calib_hist_init(&w[i].hist[s], c->o->bins, range, d);
    if (st) return st;
  }
  return CT_OK;
}

/* ---- thresholds ---- */

/* Prefixes d's message with the tensor name; returns st. */
static ct_status prefix(ct_diag *d, ct_status st, const char *name) {
  if (!d) return st;
  char msg[sizeof d->msg];
  memcpy(msg, d->msg, sizeof msg);
  return ct_diag_set(d, st, "tensor \"%s\": %s", name, msg);
}

/* The method's threshold of slot s, at most absmax. KLD leaves out the exact zeros of a
 * non-negative tensor (bin 0 minus the zeros). */
static ct_status threshold_of(cal_state *c, int s, ct_calib_method m, double *th, ct_diag *d) {
  const ct_calib_stats *st = &c->stats[s];
  double mx = ct_calib_stats_absmax(st);
  ct_calib_hist h = c->hist[s];
  int64_t zeros = m == CT_CALIB_KLD && st->min >= 0 ? c->zeros[s] : 0;
  if (zeros > 0 && h.counts) {
    h.counts[0] -= zeros;
    h.total -= zeros;
  }
  ct_status r = CT_OK;
  if (m == CT_CALIB_MAX || mx == 0 || h.total == 0) *th = mx;
  else r = ct_calib_threshold(m, st, &h, c->o->percentile, th, d);
  if (zeros > 0 && h.counts) h.counts[0] += zeros;
  if (r) return prefix(d, r, c->vals[s]->name);
  if (*th > mx) *th = mx;
  return CT_OK;
}

/* Thresholds of slots [lo, hi) (a ct_workpool_fn over the slots: each independent). */
typedef struct th_job {
  cal_state *c;
  ct_calib_method m;
  ct_status *st;
  ct_diag *diag;
} th_job;

static void thresholds_of(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  th_job *j = arg;
  for (int64_t s = lo; s < hi; s++) j->st[s] = threshold_of(j->c, (int)s, j->m, &j->c->th[s], &j->diag[s]);
}

/* Every slot's threshold, the slots spread over the pool; the first failing slot's error. */
static ct_status thresholds(cal_state *c, ct_workpool *pool, ct_calib_method m, ct_diag *d) {
  th_job j = {.c = c, .m = m, .st = calloc((size_t)c->nslots, sizeof *j.st), .diag = calloc((size_t)c->nslots, sizeof *j.diag)};
  ct_status st = j.st && j.diag ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK) ct_workpool_for(pool, c->nslots, c->nslots, thresholds_of, &j);
  for (int s = 0; st == CT_OK && s < c->nslots; s++)
    if (j.st[s]) *d = j.diag[s], st = j.st[s];
  free(j.st), free(j.diag);
  return st;
}

static double tune_lookup(double threshold, void *ctx) {
  const double *args = ctx; /* th_kld, th_max, steps, then the scores */
  int j = (int)lround((threshold - args[0]) / (args[1] - args[0]) * args[2]);
  return j >= 0 && j <= (int)args[2] ? args[3 + j] : NAN;
}

/* The tuned threshold of slot s from the scores summed over the tune samples in order. */
static ct_status tuned(cal_state *c, int64_t n, int s, double *th, ct_diag *d) {
  int steps = c->o->tune_steps;
  double *args = calloc((size_t)steps + 4, sizeof *args);
  if (!args) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  args[0] = ct_cal_tune_low(c, s), args[1] = ct_calib_stats_absmax(&c->stats[s]), args[2] = steps;
  size_t row = (size_t)(steps + 1), per_sample = (size_t)c->nslots * row;
  for (int64_t i = 0; i < n; i++)
    for (int j = 0; j <= steps; j++) args[3 + j] += c->tune_err[(size_t)i * per_sample + (size_t)s * row + (size_t)j];
  ct_status st = ct_calib_tune(args[0], args[1], steps, tune_lookup, args, th, d);
  free(args);
  return st;
}

/* ---- the driver ---- */

static ct_status check_options(const ct_calibrate_options *o, int64_t n, ct_diag *d) {
  bool kld = o->method == CT_CALIB_KLD || o->tune;
  if (n < 1) return ct_diag_set(d, CT_ERR_USAGE, "no sample to calibrate on");
  if (o->bins < 1 || (kld && o->bins < 128))
    return ct_diag_set(d, CT_ERR_USAGE, "%d histogram bins: need at least %d", o->bins, kld ? 128 : 1);
  if (!(o->percentile > 0 && o->percentile <= 1)) return ct_diag_set(d, CT_ERR_USAGE, "percentile %g is not in (0, 1]", o->percentile);
  if (o->threads < 1 || o->threads > CT_WORKPOOL_MAX) return ct_diag_set(d, CT_ERR_USAGE, "threads %d is not in 1..%d", o->threads, CT_WORKPOOL_MAX);
  if (o->tune && (o->tune_num < 1 || o->tune_steps < 1)) return ct_diag_set(d, CT_ERR_USAGE, "tune needs tune_num and tune_steps >= 1");
  if ((unsigned)o->method >= CT_CALIB_METHOD_COUNT) return ct_diag_set(d, CT_ERR_USAGE, "unknown calibration method %d", (int)o->method);
  return CT_OK;
}

/* Phase 4: the migration strength of every folded per-channel slot (ct_cal_folded), scored
 * on the first tune_num samples. */
static ct_status channel_strengths(cal_state *c, ct_workpool *pool, cal_worker *w, int nw, int64_t n,
                                   ct_ref_sample_fn sample, void *user, ct_diag *d) {
  bool any = false;
  for (int s = 0; s < c->nslots; s++) any = (c->fold[s] = ct_cal_folded(c, s)) || any;
  if (!any) return CT_OK;
  int64_t nt = n < c->o->tune_num ? n : c->o->tune_num > 0 ? c->o->tune_num : 1;
  c->alpha_err = calloc((size_t)nt * (size_t)c->nslots * CAL_N_ALPHA, sizeof *c->alpha_err);
  if (!c->alpha_err) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for the channel scores");
  ct_status st = c->o->channel_score_output ? ct_cal_alpha_outputs(c, pool, nt, sample, user, d)
                                            : run_pass(c, pool, w, nw, 4, nt, sample, user, d);
  for (int s = 0; st == CT_OK && s < c->nslots; s++) c->alpha[s] = c->fold[s] ? ct_cal_best_alpha(c, nt, s) : 1;
  return st;
}

static ct_status passes(cal_state *c, ct_workpool *pool, cal_worker *w, int nw, int64_t n, ct_ref_sample_fn sample,
                        void *user, ct_diag *d) {
  const ct_calibrate_options *o = c->o;
  ct_status st = run_pass(c, pool, w, nw, 1, n, sample, user, d);
  for (int s = 0; st == CT_OK && s < c->nslots; s++) {
    for (int i = 0; i < nw; i++) ct_calib_stats_merge(&c->stats[s], &w[i].stats[s]);
    for (int i = 0; i < nw; i++)
      for (int64_t k = 0; k < c->nch[s]; k++) c->chmax[s][k] = fmax(c->chmax[s][k], w[i].chmax[s][k]);
  }
  bool need_hist = o->tune || o->method != CT_CALIB_MAX;
  if (st == CT_OK && need_hist) st = init_hists(c, w, nw, d);
  if (st == CT_OK && need_hist) st = run_pass(c, pool, w, nw, 2, n, sample, user, d);
  for (int s = 0; st == CT_OK && need_hist && s < c->nslots; s++) {
    for (int i = 0; st == CT_OK && i < nw; i++) {
      st = ct_calib_hist_merge(&c->hist[s], &w[i].hist[s], d);
      c->zeros[s] += w[i].zeros[s];
    }
  }
  ct_calib_method m = o->tune ? CT_CALIB_KLD : o->method;
  if (st == CT_OK) st = thresholds(c, pool, m, d);
  int64_t nt = n < o->tune_num ? n : o->tune_num;
  if (st == CT_OK && o->tune) {
    c->tune_err = calloc((size_t)nt * (size_t)c->nslots * (size_t)(o->tune_steps + 1), sizeof *c->tune_err);
    if (!c->tune_err) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory for the tune scores");
  }
  if (st == CT_OK && o->tune) st = run_pass(c, pool, w, nw, 3, nt, sample, user, d);
  for (int s = 0; st == CT_OK && o->tune && s < c->nslots; s++)
    if (ct_cal_tunable(c, s)) st = tuned(c, nt, s, &c->th[s], d);
  if (st == CT_OK) st = channel_strengths(c, pool, w, nw, n, sample, user, d);
  return st;
}

static ct_status append_rows(cal_state *c, ct_calib_table *table, ct_diag *d) {
  ct_calib_table tmp;
  ct_calib_table_init(&tmp);
  ct_status st = CT_OK;
  for (int s = 0; st == CT_OK && s < c->nslots; s++) {
    const ct_calib_stats *x = &c->stats[s];
    if (x->count == 0) continue; /* empty tensor */
    st = ct_calib_table_add(&tmp, c->vals[s]->name, c->th[s], x->min, x->max, 0, d);
    if (st) prefix(d, st, c->vals[s]->name);
  }
  for (int64_t i = 0; st == CT_OK && i < tmp.n; i++) {
    const ct_calib_row *r = &tmp.rows[i];
    st = ct_calib_table_add(table, r->name, r->threshold, r->min, r->max, 0, d);
  }
  ct_calib_table_free(&tmp);
  return st;
}

/* The per-output-channel scales of op's weights w ([OC, ...] f32) into sc, as the INT8
 * lowering quantizes them: a Gemm's B scaled by its alpha first (each alpha·b rounded to
 * f32, as gemm-canon folds it). False when out of memory. */
static bool weight_scales(const ct_op *op, const ct_value *w, int64_t oc, int64_t per, double *sc) {
  double alpha = op->kind == CT_OP_GEMM ? ct_attr_gemm_alpha(op) : 1;
  if (alpha == 1) return ct_quant_weight_scales(w->data->data, oc, per, sc), true;
  float *a = malloc(sizeof *a * (size_t)(oc * per));
  if (!a) return false;
  const float *src = w->data->data;
  for (int64_t i = 0; i < oc * per; i++) a[i] = (float)(alpha * src[i]);
  ct_quant_weight_scales(a, oc, per, sc);
  free(a);
  return true;
}

/* TPU-MLIR's #weight_scale block: one row "<op name>_weight" per Conv / Gemm (transB = 1)
 * with constant f32 weights, the per-output-channel scales the INT8 lowering uses
 * (ct_quant_weight_scales, channel = axis 0; a Gemm's alpha folded in). Ops without a name are
 * skipped. */
static ct_status append_weight_rows(const ct_graph *g, ct_calib_table *table, ct_diag *d) {
  ct_status st = CT_OK;
  for (int i = 0; st == CT_OK && i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    bool mac = op->kind == CT_OP_CONV || (op->kind == CT_OP_GEMM && ct_attr_gemm_transB(op));
    const ct_value *w = mac && op->n_in > 1 ? op->in[1] : NULL;
    if (op->dead || !w || !op->loc || !w->data || w->data->dtype != CT_F32 || w->ndim < 2 || w->shape[0] < 1) continue;
    int64_t oc = w->shape[0], per = ct_value_numel(w) / oc;
    double *sc = malloc(sizeof *sc * (size_t)oc);
    char name[1024];
    snprintf(name, sizeof name, "%s_weight", op->loc);
    if (!sc || !weight_scales(op, w, oc, per, sc)) return free(sc), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    if (!ct_calib_table_find_weight(table, name)) st = ct_calib_table_add_weight(table, name, oc, sc, NULL, 0, d);
    free(sc);
  }
  return st;
}

/* The #channel_threshold block: per channel of a per-channel activation, its threshold
 * (ct_cal_channel_thresholds); none for a tensor that is better per tensor. */
static ct_status append_channel_rows(cal_state *c, ct_calib_table *table, ct_diag *d) {
  ct_status st = CT_OK;
  for (int s = 0; st == CT_OK && s < c->nslots; s++) {
    if (!c->nch[s] || c->stats[s].count == 0) continue;
    double *th = malloc(sizeof *th * (size_t)c->nch[s]);
    if (!th) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    if (ct_cal_channel_thresholds(c, s, th)) st = ct_calib_table_add_channel(table, c->vals[s]->name, c->nch[s], th, 0, d);
    free(th);
  }
  return st;
}

ct_status ct_calibrate(const ct_graph *g, int64_t n, ct_ref_sample_fn sample, void *sample_user,
                       const ct_calibrate_options *o, ct_calib_table *table, ct_diag *d) {
  ct_status st = check_options(o, n, d);
  if (st) return st;
  cal_state c = {.g = g, .o = o};
  int nw = o->threads;
  cal_worker *w = calloc((size_t)nw, sizeof *w);
  st = w ? make_slots(&c, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  size_t ns = (size_t)c.nslots + 1;
  if (st == CT_OK) {
    c.stats = malloc(sizeof *c.stats * ns);
    c.hist = calloc(ns, sizeof *c.hist);
    c.zeros = calloc(ns, sizeof *c.zeros);
    c.th = calloc(ns, sizeof *c.th);
    c.chmax = alloc_chmax(&c);
    c.fold = calloc(ns, sizeof *c.fold);
    c.alpha = malloc(sizeof *c.alpha * ns);
    if (!c.stats || !c.hist || !c.zeros || !c.th || !c.chmax || !c.fold || !c.alpha)
      st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    for (int s = 0; st == CT_OK && s < c.nslots; s++) c.stats[s] = ct_calib_stats_init(), c.alpha[s] = 1;
  }
  if (st == CT_OK) st = alloc_workers(&c, w, nw, d);
  ct_workpool *pool = st == CT_OK && nw > 1 ? ct_workpool_new(nw) : NULL;
  if (st == CT_OK && nw > 1 && !pool) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory starting %d threads", nw);
  if (st == CT_OK) st = passes(&c, pool, w, nw, n, sample, sample_user, d);
  if (st == CT_OK) st = append_rows(&c, table, d);
  if (st == CT_OK) st = append_weight_rows(g, table, d);
  if (st == CT_OK) st = append_channel_rows(&c, table, d);
  ct_workpool_free(pool);
  free_workers(w, nw, c.nslots);
  for (int s = 0; c.hist && s < c.nslots; s++) ct_calib_hist_free(&c.hist[s]);
  free_chmax(c.chmax, c.nslots);
  free(c.nch);
  free(c.slot_of), free(c.vals), free(c.readers), free(c.stats), free(c.hist), free(c.zeros), free(c.th), free(c.tune_err);
  free(c.fold), free(c.alpha), free(c.alpha_err);
  return st;
}
