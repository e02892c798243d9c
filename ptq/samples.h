/* samples.h: what scoring INT8 lowerings against float needs (the mixed precision search,
 * ptq/qtable_search.h; threshold refinement, ptq/refine.h): samples with the float module's
 * outputs on them, loaded once; the cosine sums of a Tpu result against its float value;
 * fresh copies of the Top module to lower, one per candidate. */
#ifndef CT_PTQ_SAMPLES_H
#define CT_PTQ_SAMPLES_H

#include <stdint.h>

#include "common/h5io.h"
#include "common/status.h"
#include "compiler/lower.h"
#include "ir/ir.h"
#include "ptq/calibrate.h"
#include "ptq/eval.h"

/* n samples: inputs[i] the module inputs of sample i, ref_out[i] the Top module's outputs on
 * them (f32, module output order). Zero-initialize; ct_ptq_samples_free releases it. */
typedef struct ct_ptq_samples {
  int64_t n;
  ct_tensor_list *inputs, *ref_out;
} ct_ptq_samples;

/* Takes samples 0..n-1 from the callback and runs the Top module g on each (float reference,
 * one thread). s must be zeroed; s->n counts the samples taken so far, so ct_ptq_samples_free
 * releases everything also after an error. Errors: the callback's and ct_ref_run's, prefixed
 * "sample I: "; CT_ERR_LIMIT out of memory. */
ct_status ct_ptq_samples_run(const ct_graph *g, int64_t n, ct_ref_sample_fn sample, void *user, ct_ptq_samples *s,
                             ct_diag *d);
/* Opens the data set dataset (directory, list, HDF5 or .pb; io/dataset.h) for the Top module
 * g, preprocessed as g's Input ops say, and takes its first max samples (all if it has fewer)
 * with ct_ptq_samples_run. Errors: those of ct_dataset_open and ct_ptq_samples_run. */
ct_status ct_ptq_samples_load(const char *dataset, const ct_graph *g, int64_t max, ct_ptq_samples *s, ct_diag *d);
/* Releases s (also after an error of the loaders) and zeroes it. */
void ct_ptq_samples_free(ct_ptq_samples *s);

/* What the search and refine start from: the Top module at model (ct_ir_load_verified; *g,
 * freed by the caller, also after an error) and its first max samples of dataset
 * (ct_ptq_samples_load). Errors: those of the loaders; CT_ERR_INPUT "MODEL: not a Top module
 * (why)" for a module of another dialect (why: what the caller does with a float model). */
ct_status ct_ptq_load_top(const char *model, const char *dataset, int64_t max, const char *why, ct_graph **g,
                          ct_ptq_samples *s, ct_diag *d);

/* Adds the pairs (ref, dequantized t) to sums (ct_eval_cos_add, common/cosine.h: agreeing non-finite pairs left out, others make it NaN;
 * nothing added when the element counts differ — not comparable, e.g. a value the other
 * dialect holds in another shape). ref is a float result, t the same value of a Tpu run (any
 * dtype; integers dequantized by their scale / zero point, common/dequant.h). Errors: those
 * of ct_dequant (CT_ERR_LIMIT out of memory, CT_ERR_INPUT bad quant parameters). */
ct_status ct_ptq_cos_add(ct_cos_sums *sums, const ct_tensor *ref, const ct_tensor *t, ct_diag *d);

/* A source of fresh copies of one Top module: each load gives a new graph (*out, freed by the
 * caller) that the search lowers in place. Errors: the loader's; *out NULL after one. */
typedef struct ct_ptq_source {
  ct_status (*load)(void *user, ct_graph **out, ct_diag *d);
  void *user;
} ct_ptq_source;

/* The source that reads the module file path (ct_ir_load_verified: text and weights). path
 * must outlive the source. */
ct_ptq_source ct_ptq_source_file(const char *path);
/* A fresh copy of src's module lowered with o (ct_lower): a candidate of the search. Errors:
 * the loader's and ct_lower's; *out is NULL after an error. */
ct_status ct_ptq_lower(const ct_ptq_source *src, const ct_lower_options *o, ct_graph **out, ct_diag *d);

#endif
