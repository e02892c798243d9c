/* verify.h: structural checks of a Top/Tpu graph (MLIR's verifier idea: run after every
 * pass and after parsing): arity, SSA dominance in op order, ownership, names, types,
 * weight data, and agreement of result types with the shape functions of ops/shape.h. */
#ifndef CT_OPS_VERIFY_H
#define CT_OPS_VERIFY_H

#include "ir/ir.h"

/* Checks g and reports the first problem found, as CT_ERR_INPUT with a one-line message
 * naming the node (op loc) and the op kind, e.g.
 *   node "conv1" (op Conv): result 0 is 1x8x4x4, inference says 1x8x3x3
 * Checks, in op order (dead ops are skipped):
 *  - operand/result counts within ops.def's arity; the first min_in operands present
 *    (absent optional operands are NULL); results non-NULL, result->def == op;
 *  - every operand and module output is a value of g (g->values[v->id] == v) defined by a
 *    live op placed earlier in g->ops (dominance; a value is defined by one op only);
 *  - value names non-empty and unique; every value has a known shape (ndim 0..8, dims ≥ 0)
 *    and a valid dtype; quant params (n_scale > 0) present with finite scales > 0;
 *  - Weight values that carry data: the data's dtype and shape equal the value's;
 *  - ops with a shape function (ct_shape_fn_of): the function is re-run and the results'
 *    shapes (and, in the "top" dialect, dtypes) must equal the stored ones; a failing shape
 *    function is reported in the "top" dialect. Ops reading a Weight value without data (a
 *    parsed, not loaded, module) are not re-inferred. g is left unchanged: result types,
 *    result data and attributes are restored after each call. In the "tpu" dialect the
 *    function runs on a float view (operands of storage types i8/u8/i16/u16/bf16/f16 and
 *    quantized or non-constant i32 seen as f32: a Tpu op has its Top op's shapes) and a
 *    failing function is an error too;
 *  - every op exists in the graph's dialect and its attributes conform to ops.def's schema:
 *    types, and the count of every list whose length the schema fixes (kernel_shape, strides,
 *    dilations one per spatial axis of operand 0, pads two per spatial axis, perm one per
 *    axis: `node "conv1" (op Conv): attribute "strides" has 1 value, expected 2 (one per
 *    spatial axis)`);
 *  - "tpu" dialect: ct_tpu_verify_op's checks (what the Tpu reference, the planner and the
 *    codegen assume of each op).
 * Messages start with "FILE:LINE: " when g was parsed from a file (ct_op.line).
 * Errors: CT_ERR_INPUT as above; CT_ERR_LIMIT when out of memory. */
ct_status ct_ir_verify(ct_graph *g, ct_diag *d);

/* The Tpu-dialect checks of one op (verify_tpu.c), for ct_ir_verify: operand and result
 * dtypes (integer storage where the op is quantized, the result's type equal to the operand's
 * for data movement), the requant attributes (multiplier / rshift counts per op, shifts
 * 0..63, multipliers within int32), act / qact_hi, Lut tables (length and entries).
 * Errors: CT_ERR_INPUT `node "x" (op Conv): ...`. */
ct_status ct_tpu_verify_op(const ct_graph *g, const ct_op *op, ct_diag *d);

/* ct_ir_load (ir/text.h) then ct_ir_verify: the load of every command that reads a .top or
 * .tpu file, so that no later stage meets a graph the verifier refuses. Errors: those of
 * ct_ir_load; a verifier error as CT_ERR_INPUT (`m.tpu:12: node "Add_3" (op Add): result 0
 * is 2x4x3x3, inference says 1x4x3x3`); CT_ERR_LIMIT out of memory. *out is NULL on error. */
ct_status ct_ir_load_verified(const char *path, ct_graph **out, ct_diag *d);

#endif
