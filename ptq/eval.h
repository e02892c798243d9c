/* eval.h: classification accuracy of a model over a labeled data set (`ctpu eval`,
 * docs/calibration.md "Evaluation"): top-1 / top-5 of the first module output and the top-1
 * agreement with a second model, both run by the reference interpreter (ct_ref_run). */
#ifndef CT_EVAL_H
#define CT_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/cosine.h"
#include "common/status.h"
#include "ir/ir.h"
#include "ptq/calibrate.h"

/* Counts of an evaluation. */
typedef struct ct_eval_result {
  int64_t n;      /* samples run */
  int64_t top1;   /* label == the highest score (labels given) */
  int64_t top5;   /* label among the five highest scores */
  int64_t agree;  /* top-1 class equal to the other model's (other given) */
  double mean_cos; /* mean over samples of the cosine between the two models' first outputs
                      (real values: quantized outputs dequantized), other given; else 0 */
  double min_cos;  /* the smallest of those cosines */
} ct_eval_result;

/* Progress: done of total samples (called from the starting thread). */
typedef void (*ct_eval_progress_fn)(void *user, int64_t done, int64_t total);

/* Options of ct_eval; zero-initialize, threads < 1 means 1. */
typedef struct ct_eval_options {
  int threads;                   /* samples run in parallel */
  ct_eval_progress_fn progress;
  void *progress_user;
} ct_eval_options;

/* The class of a score tensor: index of its largest element over all elements (row-major;
 * a 1×K output is K scores), the first one on ties; NaN never wins. -1 for an empty tensor. */
int64_t ct_eval_argmax(const ct_tensor *scores);

/* True if label is among the k largest scores: fewer than k elements are larger than
 * scores[label] (ties count in its favour). False if label is out of range. */
bool ct_eval_in_topk(const ct_tensor *scores, int64_t label, int k);

/* Cosine similarity of two tensors' values (ct_tensor_get_f64; ct_cos_of of common/cosine.h,
 * with its rule for NaN and infinities): NaN also when the element counts differ. */
double ct_eval_cosine(const ct_tensor *a, const ct_tensor *b);

/* Adds the element pairs of x and y (real values, ct_tensor_get_f64) to s (ct_cos_add).
 * Returns false, adding nothing, when the element counts differ. */
bool ct_eval_cos_add(ct_cos_sums *s, const ct_tensor *x, const ct_tensor *y);

/* Runs g (and other, if not NULL: a second model with the same inputs) on samples 0..n-1
 * and counts into r: with labels (n class indices, NULL for none) top-1 / top-5 of g's first
 * output, with other the samples whose top-1 classes agree and the mean / min output cosine. Results do not depend on threads.
 * Errors: CT_ERR_USAGE n < 1 or a label < 0; errors of the sample callback and of ct_ref_run
 * prefixed with the sample number (`sample 3: ...`); CT_ERR_INPUT a model without outputs;
 * CT_ERR_LIMIT out of memory. */
ct_status ct_eval(const ct_graph *g, const ct_graph *other, int64_t n, ct_ref_sample_fn sample, void *sample_user,
                  const int64_t *labels, const ct_eval_options *o, ct_eval_result *r, ct_diag *d);

#endif
