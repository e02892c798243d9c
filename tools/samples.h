/* samples.h: the samples of a data set with the float model's outputs on them, loaded once by
 * the commands that score INT8 lowerings against float (qtable, refine). */
#ifndef CT_TOOL_SAMPLES_H
#define CT_TOOL_SAMPLES_H

#include <stdint.h>

#include "common/status.h"
#include "common/h5io.h"
#include "ir/ir.h"

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

#endif
