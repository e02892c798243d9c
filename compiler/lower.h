/* lower.h: lowering Top → Tpu (`ctpu lower`, docs/tpu.md): dtype and quant params on every
 * value — INT8 (per-channel symmetric i8 weights, per-tensor activations from a calibration
 * table or from a QDQ model's own Q/DQ pairs, int32 bias at s_in·s_w, per-channel requant
 * multiplier/shift), BF16, F16 or F32; ops without an integer form stay float with Cast ops
 * at the borders. TPU-MLIR's LoweringConfig / TopToTpu conversion. */
#ifndef CT_LOWER_H
#define CT_LOWER_H

#include <stdbool.h>

#include "common/status.h"
#include "ir/ir.h"
#include "quant/calib_table.h"
#include "quant/qtable.h"

/* Options of ct_lower. Zero-initialize, then set what is needed. */
typedef struct ct_lower_options {
  ct_qmode mode;                /* INT8, BF16, F16 or F32 (zero = INT8) */
  const ct_calib_table *calib;  /* INT8: thresholds by tensor name (NULL: only for QDQ models) */
  const ct_qtable *qtable;      /* optional: rows `op_or_tensor_name MODE` force an op's mode */
  bool asymmetric;              /* INT8 activations asymmetric (range min..max) */
  bool no_unsigned;             /* INT8: never use u8 for non-negative tensors */
  bool float_fallback_f32;      /* INT8: ops without an integer form run in F32 (default BF16) */
  bool keep_weight_zp;          /* QDQ: u8/i8 weights whose q − zp does not fit i8 keep their
                                 * integers and zero points (exact, but CONV/MATMUL have no
                                 * weight zero point: not deployable); default re-quantize them
                                 * per channel from their exact values s·(q − zp) */
  const char *chip;             /* chip name stored in the module (NULL: keep) */
  bool lut16;                   /* INT8: a Conv result read only by a LUT activation is i16,
                                 * looked up by the 16-bit LUT (docs/quant.md); default i8 */
} ct_lower_options;

/* Lowers the Top module g in place to the Tpu dialect (g->dialect becomes "tpu").
 * Ops keep their Top names; new Cast values are named "<tensor>_to_<dtype>", quantized
 * weights "<weight>_q". INT8 uses, for each activation, the QDQ pair's scale and zero point
 * when the Top graph has one (a QDQ model: its int weight initializers are used as they are),
 * else the calibration table row of the tensor name. Data-moving ops (Reshape, Transpose,
 * Slice, MaxPool, Resize nearest or linear, ...) keep their input's parameters.
 * Errors: CT_ERR_USAGE `--quantize INT8 needs a calibration table` (INT8 on a float model
 * without o->calib); CT_ERR_INPUT `tensor "x" is not in the calibration table`, `quantize
 * table: line N: no op or tensor named "x"`, an op whose integer parameters are not
 * representable is kept float (not an error); CT_ERR_LIMIT out of memory. On error g is
 * left partly lowered: callers discard it. */
ct_status ct_lower(ct_graph *g, const ct_lower_options *o, ct_diag *d);

#endif
