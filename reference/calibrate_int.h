/* calibrate_int.h: state shared by calibrate.c (passes, thresholds) and calibrate_tune.c
 * (the tune pass's per-op scoring). Internal to reference/. */
#ifndef CT_CALIBRATE_INT_H
#define CT_CALIBRATE_INT_H

#include "reference/calibrate.h"

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
  int64_t *nch;            /* by slot: channels of a per-channel activation (ct_tq_channel_act), else 0 */
  double **chmax;          /* by slot: max |x| per channel (nch entries), merged after pass 1 */
  double *tune_err;        /* by tune sample × slot × (tune_steps + 1): scores, summed in
                            * sample order afterwards (independent of the thread count) */
} cal_state;

/* One thread's accumulators (merged by the driver after each pass). */
typedef struct cal_worker {
  cal_state *c;
  int phase;               /* 1 min/max, 2 histograms, 3 tune */
  ct_calib_stats *stats;
  ct_calib_hist *hist;
  int64_t *zeros;
  double **chmax;          /* by slot: this thread's max |x| per channel (c->nch entries) */
  double *err;             /* the current tune sample's scores (slot × (tune_steps + 1)) */
} cal_worker;

/* True if slot s takes part in tuning (0 < th < absmax). */
bool cal_tunable(const cal_state *c, int s);
/* The lowest tune candidate of slot s: tune_low · th (th when tune_low is not in (0, 1]). */
double cal_tune_low(const cal_state *c, int s);
/* Candidate j of slot s: lo + j·(absmax − lo)/steps, lo = cal_tune_low. */
double cal_candidate(const cal_state *c, int s, int j);
/* The tune pass's work for op (its float operands in, results out): adds the scores of every
 * candidate of every tunable operand of op, and of op's unread tunable results, to w->err. */
ct_status cal_tune_op(cal_worker *w, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                      ct_diag *d);

#endif
