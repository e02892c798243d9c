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
 *    result data and attributes are restored after each call.
 * Errors: CT_ERR_INPUT as above; CT_ERR_LIMIT when out of memory. */
ct_status ct_ir_verify(ct_graph *g, ct_diag *d);

#endif
