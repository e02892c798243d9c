/* calibrate_int.h: state shared by calibrate.c (passes, thresholds) and calibrate_tune.c
 * (the tune pass's per-op scoring). Internal to ptq/. */
#ifndef CT_CALIBRATE_INT_H
#define CT_CALIBRATE_INT_H

#include "common/workpool.h"
#include "ptq/calibrate.h"
#include "reference/interp.h"

/* What a whole run knows: the calibrated values (slots) and the merged results. */
typedef struct cal_state {
  const ct_graph *g;
  const ct_calibrate_options *o;
  int *slot_of;            /* by value id: slot, or -1 when not calibrated */
  const ct_value **vals;   /* by slot */
  int nslots;
  int *readers;            /* by slot: live ops reading the value */
  ct_calib_stats *stats;   /* by slot, merged after pass 1 */
  ct_calib_hist *hist;     /* by slot, merged after pass 2 */
  int64_t *zeros;          /* by slot: exact zeros seen in pass 2 */
  double *th;              /* by slot: threshold of the method (KLD when tuning) */
  int64_t *nch;            /* by slot: channels of a per-channel activation (ct_lower_channel_act), else 0 */
  double **chmax;          /* by slot: max |x| per channel (nch entries), merged after pass 1 */
  double *tune_err;        /* by tune sample × slot × (tune_steps + 1): scores, summed in
                            * sample order afterwards (independent of the thread count) */
  bool *fold;              /* by slot: an ordinary Conv folds its channel scales (ct_cal_folded) */
  double *alpha_err;       /* by tune sample × slot × CAL_N_ALPHA: the strength scores */
  double *alpha;           /* by slot: the chosen strength (1 where nothing folds) */
} cal_state;

#define CAL_N_ALPHA 5 /* strengths scored: 0, ¼, ½, ¾, 1 */

/* One thread's accumulators (merged by the driver after each pass). */
typedef struct cal_worker {
  cal_state *c;
  int phase;               /* 1 min/max, 2 histograms, 3 tune, 4 channel strengths */
  ct_calib_stats *stats;
  ct_calib_hist *hist;
  int64_t *zeros;
  double **chmax;          /* by slot: this thread's max |x| per channel (c->nch entries) */
  double *err;             /* the current sample's scores (phase 3: slot × (tune_steps + 1),
                            * phase 4: slot × CAL_N_ALPHA) */
  ct_ref_consts *consts;   /* this thread's results of ops on constants only, kept across samples */
} cal_worker;

/* True if slot s takes part in tuning (0 < th < absmax). */
bool ct_cal_tunable(const cal_state *c, int s);
/* The lowest tune candidate of slot s: tune_low · th (th when tune_low is not in (0, 1]). */
double ct_cal_tune_low(const cal_state *c, int s);
/* dd += Σ(got − ref)², rr += Σ ref² over two f32 tensors of ref's element count. */
void ct_cal_sq_error(const ct_tensor *got, const ct_tensor *ref, double *dd, double *rr);
/* The tune pass's work for op (its float operands in, results out): adds the scores of every
 * candidate of every tunable operand of op, and of op's unread tunable results, to w->err. */
ct_status ct_cal_tune_op(cal_worker *w, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                      ct_diag *d);

/* Per-channel activations read by an ordinary Conv (docs/quant.md "Per-channel
 * activations"): the Conv's lowering folds the channel scales into its weights, W[o, c]·s_c,
 * which moves quantization error from the activation into the weights (and loses weights
 * that were on an exact 8-bit grid, a dequantized QDQ model's). How far to go is chosen per
 * tensor as SmoothQuant's migration strength (Xiao et al. 2023, eq. 4, α as the exponent of
 * the channel range): th_c = m_c^α · T^(1−α) (m_c the channel's max |x| within [T/256, T],
 * T the tensor threshold; α = 0 is per tensor, no fold), α in {0, ¼, ½, ¾, 1} scored on the
 * tune samples by every reader's output error with its input fake-quantized at those scales
 * and a folding Conv's weights as the lowering stores them (ct_cal_alpha_op), as tune scores
 * thresholds.
 *
 * Does an ordinary Conv read per-channel slot s (so that its strength is scored)? */
bool ct_cal_folded(const cal_state *c, int s);
/* Phase 4's work for op: adds the relative output error of op at each strength to
 * w->err[slot × CAL_N_ALPHA + a] when op reads a folded slot as its input 0. Errors: the
 * kernel's; CT_ERR_LIMIT when out of memory. */
ct_status ct_cal_alpha_op(cal_worker *w, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                       ct_diag *d);
/* The strengths scored at the module outputs instead (ct_calibrate_options
 * channel_score_output): per sample, folded slot and α, one float run of the whole module
 * with only that tensor fake-quantized (and its folding readers' weights as stored), its
 * outputs' relative error vs the float run into c->alpha_err. Runs the items on pool.
 * Errors: the sample's or the interpreter's (first failing item), CT_ERR_LIMIT. */
ct_status ct_cal_alpha_outputs(cal_state *c, ct_workpool *pool, int64_t nt, ct_ref_sample_fn sample, void *user,
                            ct_diag *d);
/* The strength of slot s with the lowest error summed over samples 0..n-1 in order. */
double ct_cal_best_alpha(const cal_state *c, int64_t n, int s);
/* Channel thresholds th[0..nch) of per-channel slot s at its strength (c->alpha, 1 when
 * unset); false when the tensor is better per tensor (α = 0: no #channel_threshold row). */
bool ct_cal_channel_thresholds(const cal_state *c, int s, double *th);

#endif
