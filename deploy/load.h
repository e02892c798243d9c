/* load.h: the model `ctpu deploy` compiles, from an ONNX model, a Top module or a Tpu
 * module: import and canonicalize as `ctpu transform` does, lower as `ctpu lower` does
 * (TPU-MLIR's model_deploy runs the same steps before it compiles). */
#ifndef CT_DEPLOY_LOAD_H
#define CT_DEPLOY_LOAD_H

#include "common/status.h"
#include "ir/ir.h"

typedef struct ct_deploy_src {
  const char *model;        /* MODEL.onnx | MODEL.top | MODEL.tpu */
  const char *quantize;     /* --quantize INT8|BF16|F16|F32 (NULL: the model must be a Tpu module) */
  const char *calib;        /* --calibration-table (INT8 on a float model) */
  const char *input_shapes; /* --input-shapes for an ONNX model (NULL: the model's) */
  const char *chip_name;    /* chip name stored in the lowered module */
} ct_deploy_src;

/* Loads s->model as a Tpu module into *out (freed with ct_graph_free). A .onnx model is
 * imported, shape-propagated and canonicalized (no image preprocessing: test inputs must be
 * tensors); a Top module is lowered with s->quantize and s->calib. Errors: CT_ERR_USAGE for
 * --quantize on a Tpu module, an unknown mode, --input-shapes on a non-ONNX model;
 * CT_ERR_INPUT for a Top module without --quantize (the message names "Tpu module"), those of
 * ct_onnx_import, ct_ir_load and ct_lower (INT8 without a table on a float model). */
ct_status ct_deploy_load(const ct_deploy_src *s, ct_graph **out, ct_diag *d);

#endif
