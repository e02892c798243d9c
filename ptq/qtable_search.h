/* qtable_search.h: the mixed precision search behind `ctpu qtable` (docs/qtable.md, TPU-MLIR's
 * search_qtable): ranks the ops of an INT8 lowering by the cosine each one loses against the
 * float module, optionally re-ranks the worst by the output cosine each alone in float gives,
 * then finds the fewest of the ranked ops to keep in BF16/F16 so that the output cosine
 * reaches a target. The steps are separate calls so that a command can report between them. */
#ifndef CT_PTQ_QTABLE_SEARCH_H
#define CT_PTQ_QTABLE_SEARCH_H

#include <stdint.h>

#include "common/status.h"
#include "ir/ir.h"
#include "ptq/samples.h"
#include "quant/calib_table.h"
#include "quant/qtable.h"

/* What a search works on. top, calib and sm must outlive every call; src gives fresh copies
 * of top (the same module) to lower. The callbacks are optional (NULL: not called). */
typedef struct ct_ptq_qtable_ctx {
  const ct_graph *top;          /* the Top module (ranking; float runs of the sensitivity pass) */
  ct_ptq_source src;            /* copies of top, lowered to INT8 with a quantize table */
  const ct_calib_table *calib;  /* INT8 thresholds */
  const ct_ptq_samples *sm;     /* samples with top's outputs on them */
  ct_qmode float_mode;          /* precision of the float layers: CT_QMODE_BF16 or CT_QMODE_F16 */
  double expected_cos;          /* target output cosine, in (0, 1] */
  /* after each search step: k ranked layers in float, rows quantize-table rows with their
   * per-channel chains, cos the output cosine */
  void (*on_try)(void *user, int k, int64_t rows, double cos);
  /* after each probe: done of total layers probed */
  void (*on_probe)(void *user, int done, int total);
  void *user;
} ct_ptq_qtable_ctx;

/* One candidate: a live op of top (not Input / Weight, with a first result), the cosine its
 * INT8 form loses (loss) and its result's cosine (cos; after probing, the output cosine with
 * it alone in float). */
typedef struct ct_ptq_layer {
  const ct_op *op;
  double loss, cos;
} ct_ptq_layer;

/* The candidates, worst first. cos0: the output cosine of the plain INT8 lowering; probed: how
 * many leading entries ct_ptq_qtable_probe re-ranked. ct_ptq_ranking_free releases it. */
typedef struct ct_ptq_ranking {
  ct_ptq_layer *layers;
  int n, probed;
  double cos0;
} ct_ptq_ranking;

/* Releases r's layers and zeroes it. */
void ct_ptq_ranking_free(ct_ptq_ranking *r);

/* The output cosine of top lowered to INT8 with rows (NULL: none) as its quantize table: per
 * module output the cosine of all samples' elements taken together (Σxy, Σx², Σy² summed in
 * sample order; quantized results dequantized), the smallest over the outputs; 1 for an
 * output nothing comparable was added to. Errors: those of ct_ptq_lower and ct_ref_run
 * (prefixed "sample I: "), of ct_ptq_cos_add; CT_ERR_LIMIT out of memory. */
ct_status ct_ptq_qtable_cosine(const ct_ptq_qtable_ctx *c, const ct_qtable *rows, double *cos, ct_diag *d);

/* The sensitivity pass (one INT8 lowering, a float and an INT8 run per sample, every value
 * compared by name): r->cos0 and the candidates. An op's loss is the cosine of its computed
 * operands taken together (their sums added: exact for a Concat; 1 with none) minus its
 * first result's cosine; an op that gains cosine (a Relu after an Add whose requant already
 * clamps) passes the gain to the producer of its worst operand, so the pair counts as one.
 * Every candidate is listed (a value the INT8 run does not hold, a Sigmoid fused into a SiLU
 * Lut, loses 0), sorted by loss, largest first, graph order on ties. Errors: those of
 * ct_ptq_qtable_cosine; r is then empty. */
ct_status ct_ptq_qtable_rank(const ct_ptq_qtable_ctx *c, ct_ptq_ranking *r, ct_diag *d);

/* When r->cos0 is below the target: each of the first min(max_probe, r->n) candidates alone
 * in float (one lowering and run of all samples each); they are re-ranked by the output
 * cosine that gives (layers[i].cos), highest first (graph order on ties), ahead of the
 * unprobed rest; r->probed says how many. At or above the target nothing is probed. Errors:
 * those of ct_ptq_qtable_cosine. */
ct_status ct_ptq_qtable_probe(const ct_ptq_qtable_ctx *c, ct_ptq_ranking *r, int64_t max_probe, ct_diag *d);

/* The quantize table of the first k candidates in c->float_mode, each named by its first
 * result, with their per-channel chains: every op sharing a per-channel activation
 * (ct_lower_channel_act) with a chosen op — the producer and the depthwise / LUT readers of
 * each channel activation a chosen op reads or computes, to a fixed point — since such a
 * chain is INT8 per channel only as a whole (an ordinary Conv that folds the channel scales
 * is no link). Rows in graph order; rows is emptied first. Errors: CT_ERR_LIMIT out of
 * memory. */
ct_status ct_ptq_qtable_rows(const ct_ptq_qtable_ctx *c, const ct_ptq_ranking *r, int k, ct_qtable *rows, ct_diag *d);

/* The fewest k (in ranked order, at most max_float; max_float < 0: no limit) whose output
 * cosine reaches c->expected_cos: k = 1, 2, 4, ... until it is reached or the limit, then
 * bisection between the last miss and the first hit (the cosine grows with k in practice,
 * not strictly: the fewest under this search). *best = that k and *best_cos its cosine; not
 * reached: the largest k tried and its cosine. r->cos0 at or above the target: *best = 0,
 * *best_cos = r->cos0, nothing run. Errors: those of ct_ptq_qtable_cosine. */
ct_status ct_ptq_qtable_search(const ct_ptq_qtable_ctx *c, const ct_ptq_ranking *r, int64_t max_float, int *best,
                               double *best_cos, ct_diag *d);

#endif
