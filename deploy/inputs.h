/* inputs.h: the input files of a program run (`ctpu sim --input`): HDF5 files or ONNX
 * TensorProto .pb files, matched to the program's IO table. */
#ifndef CT_DEPLOY_INPUTS_H
#define CT_DEPLOY_INPUTS_H

#include "common/h5io.h"
#include "common/status.h"
#include "isa/program.h"

/* Appends the tensors of one input file to in: an HDF5 file (every dataset, named as the
 * program's inputs) or, for a path ending in ".pb", an ONNX TensorProto, which supplies the
 * program input its name gives or, when the name is empty or names no program input, the
 * first program input not yet in in (renamed to it; as `ctpu infer` takes them). Errors:
 * those of ct_h5_read and ct_onnx_read_tensor_pb_into; CT_ERR_USAGE "PATH: more input files
 * than program inputs" for a .pb with no input left; CT_ERR_LIMIT out of memory. */
ct_status ct_deploy_read_input(const ct_program *prog, const char *path, ct_tensor_list *in, ct_diag *d);

#endif
