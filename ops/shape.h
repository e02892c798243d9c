/* shape.h: per-op shape inference. Each op kind may have a shape function (ir/ops.def's shape
 * column, ct_shape_fn_of) that, given its inputs' dtypes/shapes (and constant data where an
 * input is a constant, e.g. Reshape's shape), sets its outputs' dtypes/shapes and
 * canonicalizes attributes (auto_pad → explicit pads, negative axes → positive, defaults made
 * explicit where kernels rely on them). */
#ifndef CT_SHAPE_H
#define CT_SHAPE_H

#include "ir/ir.h"

/* The shape function of kind k, or NULL when ctpu has none. The function returned first
 * checks the operand dtypes (ct_op_check_types), then runs the op's own shape function. */
ct_shape_fn ct_shape_fn_of(ct_op_kind k);

/* Checks op's operand dtypes against its rows of ir/op_types.def (the ONNX operator spec's
 * type constraints, latest opset) when g is in the Top dialect; Tpu graphs always pass.
 * Absent optional operands are skipped. Errors: CT_ERR_INPUT naming node, operand and types,
 * e.g. `node "dq" (op QuantizeLinear): input 2 ("zp") has type f32; the op's type constraint
 * allows u8, i8, u16, i16, i32, i64, u32, u64`. */
ct_status ct_op_check_types(const ct_graph *g, const ct_op *op, ct_diag *d);

#endif
