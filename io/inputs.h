/* inputs.h: the input files of `ctpu infer` (docs/architecture.md §8): HDF5 tensor files,
 * ONNX TensorProto .pb files and JPEG/PNG images (preprocessed as the Input op says),
 * matched to a graph's Input ops. */
#ifndef CT_INPUTS_H
#define CT_INPUTS_H

#include "common/h5io.h"
#include "common/status.h"
#include "ir/ir.h"

/* Loads the tensors for g's Input ops from files (n of them) into out, one tensor per
 * Input op in graph order, each named by its Input value's name. Files are taken in order
 * and recognized by content: an HDF5 file supplies every input not yet supplied (the
 * dataset named like the input), a .pb TensorProto or an image supplies the next input not
 * yet supplied. Each tensor must have the input's dtype and shape (an image is
 * preprocessed to it, see io/image.h).
 * Errors (out is left as it was):
 *   CT_ERR_USAGE  more files than inputs, or inputs left without a file
 *                 (`model has 2 inputs ("a", "b"), 1 given`);
 *   CT_ERR_INPUT  `in.h5: no dataset "x" for input "x"`; a dtype/shape mismatch naming the
 *                 file, the input and both types (`in.pb: input "x": expected f32
 *                 1x3x8x8, file has f32 1x3x4x4`); unreadable/corrupt file naming it;
 *   CT_ERR_LIMIT  out of memory. */
ct_status ct_inputs_load(const ct_graph *g, const char *const *files, int n, ct_tensor_list *out, ct_diag *d);

#endif
