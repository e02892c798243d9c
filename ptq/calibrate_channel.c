/* calibrate_channel.c: the #channel_threshold rows of per-channel activations. Where an
 * ordinary Conv reads such a tensor, its lowering folds the channel scales into its
 * weights, which moves quantization error from the activation into the weights; how far to
 * go (the migration strength α) is measured per tensor on the tune samples, as tune
 * measures thresholds (ct_cal_alpha_op, ct_cal_channel_thresholds). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/workpool.h"
#include "compiler/lower_policy.h"
#include "ops/kernel.h"
#include "ptq/calibrate_int.h"
#include "quant/quant.h"
#include "reference/interp.h"

static const double alphas[CAL_N_ALPHA] = {0, 0.25, 0.5, 0.75, 1};

bool ct_cal_folded(const cal_state *c, int s) {
  for (int i = 0; c->nch[s] && i < c->g->n_ops; i++)
    if (!c->g->ops[i]->dead && ct_lower_folds_channels(c->g->ops[i], c->vals[s])) return true;
  return false;
}

/* Channel thresholds of slot s at strength alpha: m_c^α·T^(1−α), m_c = max |x_c| within
 * [T/256, T] (the lowering's floor, CT_QUANT_CHANNEL_FLOOR). */
static void alpha_thresholds(const cal_state *c, int s, double alpha, double *th) {
  double T = c->th[s];
  for (int64_t ch = 0; ch < c->nch[s]; ch++) {
    double m = fmax(fmin(c->chmax[s][ch], T), T / CT_QUANT_CHANNEL_FLOOR);
    th[ch] = alpha == 1 ? fmin(c->chmax[s][ch], T) : pow(m, alpha) * pow(T, 1 - alpha);
  }
}

/* Storage scales of slot s at strength alpha into delta (nch entries): one scale for all
 * channels at α = 0 (per tensor), else the lowering's channel scales. */
static void alpha_scales(const cal_state *c, int s, double alpha, double *delta) {
  ct_dtype dt = ct_quant_sym_type(c->stats[s].min, true);
  alpha_thresholds(c, s, alpha, delta);
  if (alpha > 0) ct_quant_channel_scales(delta, c->nch[s], c->th[s], dt, delta);
  else
    for (int64_t ch = 0; ch < c->nch[s]; ch++) delta[ch] = ct_quant_scale_sym(c->th[s], dt);
}

/* y := x fake-quantized per channel (NCHW, steps delta, storage dt, zero point 0). */
static void fake_quant_channels(const ct_tensor *x, const double *delta, ct_dtype dt, float *y) {
  int64_t inner = x->shape[2] * x->shape[3], nc = x->shape[1], rows = x->shape[0] * nc;
  const float *a = x->data;
  for (int64_t r = 0; r < rows; r++) ct_quant_qdq_row(a + r * inner, inner, delta[r % nc], dt, y + r * inner);
}

/* w (OC×C×kh×kw) as the lowering stores it for input steps delta, dequantized back: folded
 * W·delta_c quantized per row and divided by delta_c, or (fold false) W quantized as it is. */
static ct_status fake_quant_weights(const ct_tensor *w, const double *delta, bool fold, ct_tensor **out, ct_diag *d) {
  int64_t oc = w->shape[0], n = ct_tensor_numel(w), per = n / oc, k = w->shape[2] * w->shape[3];
  ct_tensor *t = ct_tensor_clone(w);
  double *sc = malloc(sizeof *sc * (size_t)oc);
  int8_t *q = malloc((size_t)n);
  if (!t || !sc || !q) {
    ct_tensor_free(t), free(sc), free(q);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  float *f = t->data;
  for (int64_t i = 0; fold && i < n; i++) f[i] = (float)((double)f[i] * delta[(i % per) / k]);
  ct_quant_weight_scales(f, oc, per, sc);
  ct_quant_weight_quantize(f, oc, per, sc, q);
  for (int64_t i = 0; i < n; i++) f[i] = (float)(q[i] * sc[i / per] / (fold ? delta[(i % per) / k] : 1.0));
  free(sc), free(q);
  *out = t;
  return CT_OK;
}

/* Σ(y − r)² / Σ r² (Σ(y − r)² when r is all zero). */
static double rel_error0(const ct_tensor *got, const ct_tensor *ref) {
  double dd = 0, rr = 0;
  ct_cal_sq_error(got, ref, &dd, &rr);
  return rr > 0 ? dd / rr : dd;
}

/* y := op's result 0 with its input 0 replaced by x (NULL: as it is) and, when op folds
 * v's channel scales (ct_lower_folds_channels), its weights as the lowering stores them for
 * input steps delta (folded when fold). */
static ct_status run_reader(const ct_op *op, const ct_value *v, const ct_tensor *const *in, ct_tensor *x,
                            const double *delta, bool fold, ct_tensor *y, ct_diag *d) {
  ct_tensor **fin = calloc((size_t)op->n_in + 1, sizeof *fin), *wq = NULL;
  ct_status st = fin ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK && ct_lower_folds_channels(op, v)) st = fake_quant_weights(in[1], delta, fold, &wq, d);
  for (int k = 0; st == CT_OK && k < op->n_in; k++) fin[k] = (ct_tensor *)in[k];
  if (st == CT_OK && x) fin[0] = x;
  if (st == CT_OK && wq) fin[1] = wq;
  ct_kernel_ctx ctx = {.threads = 1};
  if (st == CT_OK) st = ct_kernel_of(op->kind)(op, fin, &y, &ctx, d);
  ct_tensor_free(wq), free(fin);
  return st;
}

/* Relative output error of reader op of slot s at strength alpha (its input 0 fake-quantized
 * per channel, its weights as the lowering stores them when it folds). */
static ct_status alpha_score(cal_worker *w, const ct_op *op, int s, double alpha, const ct_tensor *const *in,
                             const ct_tensor *const *out, double *err, ct_diag *d) {
  const cal_state *c = w->c;
  ct_tensor *x = ct_tensor_clone(in[0]);
  ct_tensor *y = ct_tensor_new(op->out[0]->dtype, op->out[0]->ndim, op->out[0]->shape, op->out[0]->name);
  double *delta = malloc(sizeof *delta * (size_t)c->nch[s]);
  ct_status st = x && y && delta ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK) {
    alpha_scales(c, s, alpha, delta);
    fake_quant_channels(in[0], delta, ct_quant_sym_type(c->stats[s].min, true), x->data);
    st = run_reader(op, c->vals[s], in, x, delta, alpha > 0, y, d);
  }
  if (st == CT_OK) *err = rel_error0(y, out[0]);
  ct_tensor_free(x), ct_tensor_free(y), free(delta);
  return st;
}

ct_status ct_cal_alpha_op(cal_worker *w, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                       ct_diag *d) {
  const cal_state *c = w->c;
  const ct_value *v = op->n_in > 0 ? op->in[0] : NULL;
  int s = v && !ct_value_is_const(v) ? c->slot_of[v->id] : -1;
  if (s < 0 || !c->fold[s] || !in[0] || in[0]->ndim != 4 || op->n_out != 1 || !out[0] || !ct_kernel_of(op->kind))
    return CT_OK;
  for (int a = 0; a < CAL_N_ALPHA; a++) {
    double e = 0;
    ct_status st = alpha_score(w, op, s, alphas[a], in, out, &e, d);
    if (st) return st;
    w->err[(size_t)s * CAL_N_ALPHA + (size_t)a] += e;
  }
  return CT_OK;
}

double ct_cal_best_alpha(const cal_state *c, int64_t n, int s) {
  double best = 1, lowest = INFINITY;
  for (int a = 0; a < CAL_N_ALPHA; a++) {
    double e = 0;
    for (int64_t i = 0; i < n; i++) e += c->alpha_err[((size_t)i * (size_t)c->nslots + (size_t)s) * CAL_N_ALPHA + (size_t)a];
    if (e < lowest) lowest = e, best = alphas[a];
  }
  return best;
}

bool ct_cal_channel_thresholds(const cal_state *c, int s, double *th) {
  double alpha = c->alpha ? c->alpha[s] : 1;
  alpha_thresholds(c, s, alpha, th);
  return alpha > 0;
}

/* ---- scoring at the module outputs (ct_calibrate_options.channel_score_output) ---- */

/* One run's rewrite: slot s fake-quantized per channel at steps delta, its folding
 * readers' results recomputed with their weights as the lowering stores them. */
typedef struct out_rewrite {
  const cal_state *c;
  int s;
  double alpha;
  const double *delta;
} out_rewrite;

static ct_status rewrite_op(void *user, const ct_op *op, const ct_tensor *const *in, ct_tensor *const *out,
                            ct_diag *d) {
  const out_rewrite *r = user;
  const ct_value *v = r->c->vals[r->s];
  if (op->n_out > 0 && op->out[0] == v && out[0] && out[0]->ndim == 4) {
    fake_quant_channels(out[0], r->delta, ct_quant_sym_type(r->c->stats[r->s].min, true), out[0]->data);
    return CT_OK;
  }
  if (!ct_lower_folds_channels(op, v) || op->n_out != 1 || !out[0]) return CT_OK;
  ct_tensor *y = ct_tensor_new(out[0]->dtype, out[0]->ndim, out[0]->shape, out[0]->name);
  ct_status st = y ? run_reader(op, v, in, NULL, r->delta, r->alpha > 0, y, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK) memcpy(out[0]->data, y->data, (size_t)ct_tensor_numel(y) * ct_dtype_size(y->dtype));
  ct_tensor_free(y);
  return st;
}

/* Σ over module outputs of Σ(y − r)² / Σ r². */
static double outputs_error(const ct_tensor_list *got, const ct_tensor_list *ref) {
  double e = 0;
  for (int k = 0; k < got->n && k < ref->n; k++)
    if (got->items[k]->dtype == CT_F32 && ref->items[k]->dtype == CT_F32) e += rel_error0(got->items[k], ref->items[k]);
  return e;
}

typedef struct out_job {
  cal_state *c;
  ct_ref_sample_fn sample;
  void *user;
  const int *slots; /* the folded slots */
  int nf;
  ct_tensor_list *ref; /* per sample: the float outputs */
  ct_status *st;       /* per item */
  ct_diag *diag;       /* per item */
  atomic_int_fast64_t done;
  int64_t total;
} out_job;

/* Item t: with ref, the float run of sample t (its outputs into j->ref[t]); else the run of
 * sample i with folded slot f at strength a, t = (i·nf + f)·CAL_N_ALPHA + a, its outputs'
 * error into c->alpha_err. */
static void run_item(out_job *j, int64_t t, bool ref) {
  cal_state *c = j->c;
  ct_tensor_list in, out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&out);
  int64_t i = ref ? t : t / ((int64_t)j->nf * CAL_N_ALPHA);
  int f = ref ? 0 : (int)(t / CAL_N_ALPHA % j->nf), a = ref ? 0 : (int)(t % CAL_N_ALPHA), s = j->slots[f];
  double *delta = malloc(sizeof *delta * (size_t)(c->nch[s] + 1));
  out_rewrite r = {c, s, alphas[a], delta};
  ct_ref_options o = {.threads = 1, .rewrite = ref ? NULL : rewrite_op, .rewrite_user = &r};
  ct_status st = delta ? j->sample(j->user, i, &in, &j->diag[t]) : ct_diag_set(&j->diag[t], CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK && !ref) alpha_scales(c, s, alphas[a], delta);
  if (st == CT_OK) st = ct_ref_run(c->g, &o, &in, ref ? &j->ref[i] : &out, &j->diag[t]);
  if (st == CT_OK && !ref)
    c->alpha_err[((size_t)i * (size_t)c->nslots + (size_t)s) * CAL_N_ALPHA + (size_t)a] = outputs_error(&out, &j->ref[i]);
  j->st[t] = st;
  ct_tensor_list_free(&in), ct_tensor_list_free(&out), free(delta);
}

static void ref_items(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  for (int64_t t = lo; t < hi; t++) run_item(arg, t, true);
}

static void score_items(void *arg, int64_t lo, int64_t hi, int slot) {
  out_job *j = arg;
  const ct_calibrate_options *o = j->c->o;
  for (int64_t t = lo; t < hi; t++) {
    run_item(j, t, false);
    int64_t done = atomic_fetch_add(&j->done, 1) + 1;
    if (slot == 0 && o->progress) o->progress(o->progress_user, "channel scales", done, j->total);
  }
}

/* The first failing item's status into d. */
static ct_status first_error(const out_job *j, int64_t n, ct_diag *d) {
  for (int64_t t = 0; t < n; t++)
    if (j->st[t]) return ct_diag_set(d, j->st[t], "channel scales: %s", j->diag[t].msg);
  return CT_OK;
}

ct_status ct_cal_alpha_outputs(cal_state *c, ct_workpool *pool, int64_t nt, ct_ref_sample_fn sample, void *user,
                            ct_diag *d) {
  int nf = 0;
  int *slots = malloc(sizeof *slots * ((size_t)c->nslots + 1));
  for (int s = 0; slots && s < c->nslots; s++)
    if (c->fold[s]) slots[nf++] = s;
  int64_t items = nt * nf * CAL_N_ALPHA, n = items > nt ? items : nt;
  out_job j = {c, sample, user, slots, nf, calloc((size_t)nt, sizeof *j.ref), calloc((size_t)n, sizeof *j.st),
               calloc((size_t)n, sizeof *j.diag), 0, items};
  atomic_init(&j.done, 0);
  ct_status st = slots && j.ref && j.st && j.diag ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK) ct_workpool_for(pool, nt, nt, ref_items, &j);
  if (st == CT_OK) st = first_error(&j, nt, d);
  if (st == CT_OK) ct_workpool_for(pool, items, items, score_items, &j);
  if (st == CT_OK) st = first_error(&j, items, d);
  for (int64_t i = 0; j.ref && i < nt; i++) ct_tensor_list_free(&j.ref[i]);
  free(slots), free(j.ref), free(j.st), free(j.diag);
  return st;
}
