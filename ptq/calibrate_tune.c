/* calibrate_tune.c: the scoring of `tune` (see ct_calibrate in calibrate.h): every op reading
 * a tunable tensor is re-run once per candidate threshold with its activation operands
 * fake-quantized (quant/ parameters, quantize → dequantize in float) and its outputs compared
 * with the float run's. TPU-MLIR python/calibration: SimpleTuner. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "ptq/calibrate_int.h"
#include "quant/quant.h"

bool ct_cal_tunable(const cal_state *c, int s) {
  double mx = ct_calib_stats_absmax(&c->stats[s]);
  return c->th[s] > 0 && c->th[s] < mx;
}

double ct_cal_tune_low(const cal_state *c, int s) {
  double f = c->o->tune_low;
  return f > 0 && f <= 1 ? f * c->th[s] : c->th[s];
}

/* Candidate j of slot s: lo + j·(absmax − lo)/steps, lo = ct_cal_tune_low. */
static double cal_candidate(const cal_state *c, int s, int j) {
  double mx = ct_calib_stats_absmax(&c->stats[s]), lo = ct_cal_tune_low(c, s);
  return lo + (mx - lo) * (double)j / (double)c->o->tune_steps;
}

/* y := dequantize(quantize(x)) with the symmetric parameters of threshold th for the tensor's
 * range (u8 when min ≥ 0, else i8: ct_quant_param_calib). */
static void fake_quant(const ct_calib_stats *s, double th, const float *x, float *y, int64_t n) {
  ct_quant_param p;
  if (!ct_quant_param_calib(th, s->min, s->max, false, true, &p)) {
    memcpy(y, x, sizeof *y * (size_t)n);
    return;
  }
  for (int64_t i = 0; i < n; i++) y[i] = (float)ct_quant_dequantize(ct_quant_quantize(x[i], p.scale, p.zp, p.dt), p.scale, p.zp);
}

static bool has_f32_output(const ct_op *op) {
  for (int k = 0; k < op->n_out; k++)
    if (op->out[k]->dtype == CT_F32) return true;
  return false;
}

void ct_cal_sq_error(const ct_tensor *got, const ct_tensor *ref, double *dd, double *rr) {
  const float *a = ref->data, *b = got->data;
  for (int64_t i = 0, n = ct_tensor_numel(ref); i < n; i++) {
    double e = (double)b[i] - (double)a[i];
    *dd += e * e;
    *rr += (double)a[i] * (double)a[i];
  }
}

/* Σ(y − r)² / Σ r² over op's f32 outputs (Σ(y − r)² when the reference is all zero). */
static double rel_error(const ct_op *op, ct_tensor *const *got, const ct_tensor *const *ref) {
  double dd = 0, rr = 0;
  for (int k = 0; k < op->n_out; k++)
    if (op->out[k]->dtype == CT_F32 && ref[k]) ct_cal_sq_error(got[k], ref[k], &dd, &rr);
  return rr > 0 ? dd / rr : dd;
}

/* Runs op on operands where every calibrated activation is fake-quantized: value v at
 * threshold th_v, the others at their base thresholds; returns the relative error of the
 * outputs against ref, or NaN with *st set on failure. */
static double score(cal_worker *w, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *ref,
                    const ct_value *v, double th_v, ct_status *st, ct_diag *d) {
  cal_state *c = w->c;
  ct_kernel_fn fn = ct_kernel_of(op->kind);
  ct_tensor **fin = calloc((size_t)op->n_in + 1, sizeof *fin), **fout = calloc((size_t)op->n_out + 1, sizeof *fout);
  bool *mine = calloc((size_t)op->n_in + 1, sizeof *mine);
  *st = fin && fout && mine ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int k = 0; *st == CT_OK && k < op->n_in; k++) {
    const ct_value *x = op->in[k];
    int s = x && !ct_value_is_const(x) ? c->slot_of[x->id] : -1;
    fin[k] = (ct_tensor *)in[k];
    if (s < 0 || !in[k]) continue;
    if (!(fin[k] = ct_tensor_clone(in[k]))) *st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    else fake_quant(&c->stats[s], x == v ? th_v : c->th[s], in[k]->data, fin[k]->data, ct_tensor_numel(in[k]));
    mine[k] = fin[k] != NULL;
  }
  for (int k = 0; *st == CT_OK && k < op->n_out; k++) {
    const ct_value *o = op->out[k];
    if (!(fout[k] = ct_tensor_new(o->dtype, o->ndim, o->shape, o->name))) *st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  ct_kernel_ctx ctx = {.threads = 1};
  if (*st == CT_OK) *st = fn(op, fin, fout, &ctx, d);
  double e = *st == CT_OK ? rel_error(op, fout, ref) : NAN;
  for (int k = 0; fin && mine && k < op->n_in; k++)
    if (mine[k]) ct_tensor_free(fin[k]);
  for (int k = 0; fout && k < op->n_out; k++) ct_tensor_free(fout[k]);
  free(fin);
  free(fout);
  free(mine);
  return e;
}

/* True if op->in[k]'s value appeared at an earlier operand (scored once per op). */
static bool seen_before(const ct_op *op, int k) {
  for (int j = 0; j < k; j++)
    if (op->in[j] == op->in[k]) return true;
  return false;
}

ct_status ct_cal_tune_op(cal_worker *w, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                      ct_diag *d) {
  cal_state *c = w->c;
  int steps = c->o->tune_steps;
  for (int k = 0; k < op->n_out; k++) { /* results no op reads: their own quantization error */
    int s = c->slot_of[op->out[k]->id];
    if (s < 0 || c->readers[s] > 0 || !ct_cal_tunable(c, s)) continue;
    ct_dtype dt = ct_quant_sym_type(c->stats[s].min, true);
    for (int j = 0; j <= steps; j++)
      w->err[(size_t)s * (size_t)(steps + 1) + (size_t)j] +=
          ct_calib_qdq_error(out[k]->data, ct_tensor_numel(out[k]), cal_candidate(c, s, j), dt);
  }
  if (op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || !has_f32_output(op) || !ct_kernel_of(op->kind)) return CT_OK;
  for (int k = 0; k < op->n_in; k++) {
    const ct_value *v = op->in[k];
    int s = v && !ct_value_is_const(v) ? c->slot_of[v->id] : -1;
    if (s < 0 || seen_before(op, k) || !ct_cal_tunable(c, s)) continue;
    for (int j = 0; j <= steps; j++) {
      ct_status st;
      double e = score(w, op, in, out, v, cal_candidate(c, s, j), &st, d);
      if (st) return st;
      w->err[(size_t)s * (size_t)(steps + 1) + (size_t)j] += e;
    }
  }
  return CT_OK;
}
