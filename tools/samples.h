/* samples.h: what the commands that score INT8 lowerings against float (qtable, refine)
 * share: the samples of a data set with the float model's outputs on them, loaded once, the
 * cosine sums of a Tpu result against its float value, and the lowering of a candidate. */
#ifndef CT_TOOL_SAMPLES_H
#define CT_TOOL_SAMPLES_H

#include <stdint.h>

#include "common/status.h"
#include "common/h5io.h"
#include "compiler/lower.h"
#include "ir/ir.h"
#include "reference/eval.h"

/* n samples: inputs[i] the module inputs of sample i (preprocessed as the Top module's Input
 * ops say), ref_out[i] the Top module's outputs on them (f32, module output order). */
typedef struct ct_tool_samples {
  int64_t n;
  ct_tensor_list *inputs, *ref_out;
} ct_tool_samples;

/* Opens the data set dataset (directory, list, HDF5 or .pb; io/dataset.h) for the Top module
 * g, loads its first max samples (all if it has fewer) and runs g on each (float reference,
 * one thread). s must be zeroed; ct_tool_samples_free releases it, also after an error.
 * Errors: those of ct_dataset_open / ct_dataset_load / ct_ref_run (the latter two prefixed
 * "sample I: "), CT_ERR_LIMIT out of memory. */
ct_status ct_tool_samples_load(const char *dataset, const ct_graph *g, int64_t max, ct_tool_samples *s, ct_diag *d);
void ct_tool_samples_free(ct_tool_samples *s);

/* Adds the pairs (ref, dequantized t) to sums (ct_eval_cos_add: non-finite pairs as common/cosine.h says;
 * nothing added when the element counts differ — not comparable, e.g. a value the other
 * dialect holds in another shape). ref is a float result, t the same value of a Tpu run (any
 * dtype; integers dequantized by their scale / zero point, common/dequant.h). Errors: those
 * of ct_dequant (CT_ERR_LIMIT out of memory, CT_ERR_INPUT bad quant parameters). */
ct_status ct_tool_cos_add(ct_cos_sums *sums, const ct_tensor *ref, const ct_tensor *t, ct_diag *d);
/* Loads the Top module at path and lowers it with o (ct_ir_load, ct_lower): the candidate
 * modules of qtable and refine. Errors: theirs; *out is NULL after an error. */
ct_status ct_tool_load_lowered(const char *path, const ct_lower_options *o, ct_graph **out, ct_diag *d);

#endif
