/* refine.h: threshold refinement behind `ctpu refine` (docs/calibration.md "ctpu refine"):
 * scores a calibration table by what the user measures — the module outputs of the INT8
 * lowering against float on the samples — and searches the thresholds jointly by coordinate
 * descent. Loss-aware post-training quantization (Nahshan et al., "Loss Aware Post-training
 * Quantization", 2019, who minimise the task loss over the clipping values with Powell's
 * method; here a fixed set of factors per tensor and pass, the loss the output cosine). */
#ifndef CT_PTQ_REFINE_H
#define CT_PTQ_REFINE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "common/workpool.h"
#include "ptq/samples.h"
#include "quant/calib_table.h"
#include "quant/qtable.h"

/* The factor step of pass 0; pass p uses CT_PTQ_REFINE_STEP / 2^p. */
#define CT_PTQ_REFINE_STEP 0.15

/* A refinement. Set the inputs, call ct_ptq_refine_start, then ct_ptq_refine_pass per pass;
 * ct_ptq_refine_free releases the working state (not the inputs). */
typedef struct ct_ptq_refine {
  /* inputs */
  ct_ptq_source src;        /* fresh copies of the Top module to lower */
  ct_calib_table *table;    /* the table refined in place (thresholds and channel rows) */
  const ct_qtable *qtable;  /* lower with this quantize table (NULL: none) */
  bool lut16;               /* lower with ct_lower_options.lut16 */
  const ct_ptq_samples *sm; /* samples with the Top module's outputs on them */
  int threads;              /* samples scored in parallel, 1..CT_WORKPOOL_MAX (< 1: 1) */
  /* after each row of a pass: row r (0-based) of rows done, the best score so far, rows
   * changed in this pass so far; optional */
  void (*on_row)(void *user, int pass, int64_t r, int64_t rows, double score, int changed);
  void *user;
  /* results */
  double start;             /* the score of the table as given */
  double score;             /* the best score: that of the table as it now is */
  long long evals;          /* candidate tables scored (lowered and run) */
  long long skipped;        /* candidates whose lowering equals the best one (not run) */
  /* working state */
  ct_workpool *pool;
  int n_out;                /* module outputs */
  ct_cos_sums *sums;        /* by sample and output: the candidate's output vs float */
  ct_status *st;            /* by sample */
  ct_diag *diag;            /* by sample */
  const ct_graph *run;      /* the candidate being scored (pool workers read it) */
  ct_graph *best;           /* lowering of the best table so far */
  char *best_text;          /* its text */
} ct_ptq_refine;

/* Scores the table as given (r->start = r->score): the INT8 lowering (ct_lower with r->table,
 * r->qtable, r->lut16) run on every sample; per module output the cosine of all samples
 * taken together (Σ over samples in order, so any thread count gives the same bits), the
 * smallest over the outputs — the "int8 cosine" of ct_ptq_qtable_cosine on the same
 * samples. Errors: those of ct_ptq_lower (a tensor not in the table: CT_ERR_INPUT), of
 * ct_ref_run (prefixed "sample I: "), CT_ERR_INPUT a candidate with another output count
 * than the float module, CT_ERR_LIMIT out of memory. */
ct_status ct_ptq_refine_start(ct_ptq_refine *r, ct_diag *d);

/* Pass p (0-based): for every row of the table in order, its threshold and channel
 * thresholds times (1 + step)^±1 and (1 + step)^±2 (step = CT_PTQ_REFINE_STEP / 2^p) are
 * scored, and the factor with the best score is kept if that beats the score before the
 * row; a row whose threshold does not reach the lowered module (its lowering equals the
 * best one) is left after its first factor. So r->score never falls, and a row changes only
 * when the score rose. *changed: the rows changed. Errors: those of ct_ptq_refine_start;
 * the row being tried then keeps its last factor. */
ct_status ct_ptq_refine_pass(ct_ptq_refine *r, int p, int *changed, ct_diag *d);

/* Releases the working state (pool, sums, best lowering); the inputs and results stay. */
void ct_ptq_refine_free(ct_ptq_refine *r);

#endif
