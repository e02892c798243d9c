/* inputs.h: the one loader of the input files every command takes (infer --input, deploy
 * --test-input, sim --input, data set samples): HDF5 tensor files, ONNX TensorProto .pb
 * files and JPEG/PNG images (preprocessed as the Input op says), matched to a graph's Input
 * ops or to a program's inputs. */
#ifndef CT_INPUTS_H
#define CT_INPUTS_H

#include "common/h5io.h"
#include "common/status.h"
#include "ir/ir.h"

/* One input to supply: its name, dtype and shape; op, the Input op whose attributes say how
 * an image is preprocessed for it (NULL: images are refused, no_image saying why); with
 * any_dtype a tensor of any dtype and the right shape is taken (its consumer converts it, as
 * ct_sim_run quantizes float data for an integer program input). */
typedef struct ct_input_slot {
  const char *name;
  ct_dtype dtype;
  int ndim;
  const int64_t *shape;
  const ct_op *op;
  bool any_dtype;
  const char *no_image;
} ct_input_slot;

/* Loads the tensors for n_slots inputs from files (n of them) into out, one tensor per slot in
 * order, each named by its slot. Files are taken in order and recognized by content: an HDF5
 * file supplies every input not yet supplied (the dataset named like the input), a .pb
 * TensorProto supplies the input its tensor is named after if that one is not yet supplied,
 * else the next input not yet supplied, and an image supplies the next input not yet
 * supplied. Each tensor must have the slot's shape and (unless any_dtype) dtype; an image
 * is preprocessed to it (io/image.h). Errors as ct_inputs_load's. */
ct_status ct_inputs_load_slots(const ct_input_slot *slots, int n_slots, const char *const *files, int n,
                               ct_tensor_list *out, ct_diag *d);

/* Loads the tensors for g's Input ops from files (n of them) into out, one tensor per
 * Input op in graph order, each named by its Input value's name (ct_inputs_load_slots with
 * a slot per Input op: its value's dtype and shape, images preprocessed as the op says).
 * Errors (out is left as it was):
 *   CT_ERR_USAGE  more files than inputs, or inputs left without a file
 *                 (`model has 2 inputs ("a", "b"), 1 given`);
 *   CT_ERR_INPUT  `in.h5: no dataset "x" for input "x"`; a dtype/shape mismatch naming the
 *                 file, the input and both types (`in.pb: input "x": expected f32
 *                 1x3x8x8, file has f32 1x3x4x4`); unreadable/corrupt file naming it;
 *   CT_ERR_LIMIT  out of memory. */
ct_status ct_inputs_load(const ct_graph *g, const char *const *files, int n, ct_tensor_list *out, ct_diag *d);

#endif
