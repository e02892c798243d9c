/* verify.h: the IR verifier without op semantics (MLIR's verifier idea): the structural,
 * type and quant-parameter checks of a Top/Tpu graph. Re-inference of result types needs the
 * shape functions of ops/, which ir/ cannot call: they come in as a lookup (ops/verify.h's
 * ct_ir_verify passes ct_shape_fn_of). */
#ifndef CT_IR_VERIFY_H
#define CT_IR_VERIFY_H

#include "ir/ir.h"

/* Maps an op kind to its shape function (NULL when it has none). */
typedef ct_shape_fn (*ct_shape_lookup)(ct_op_kind k);

/* The semantic checks of one op of a dialect beyond types and shapes (ops/verify_tpu.c for
 * the Tpu dialect): CT_ERR_INPUT naming the node and op kind. */
typedef ct_status (*ct_op_check)(const ct_graph *g, const ct_op *op, ct_diag *d);

/* Checks every op of g against the op table (ir/ops.def): the op exists in g's dialect (Input
 * and Weight in both) and every attribute conforms to the op's schema — its type, and the
 * count of a list whose length the schema fixes by operand 0's rank; the first problem is
 * CT_ERR_INPUT `FILE:LINE: node "x" (op Conv): attribute "grop": unknown attribute` or
 * `... attribute "strides" has 1 value, expected 2 (one per spatial axis)` (FILE:LINE when g
 * was parsed from a file, ct_op.line). */
ct_status ct_ir_check_attrs(const ct_graph *g, ct_diag *d);

/* Checks g as ct_ir_verify (ops/verify.h) documents; shape_of NULL skips the re-inference of
 * result types, tpu_check NULL the Tpu-dialect op checks (run after an op's other checks).
 * Errors: CT_ERR_INPUT naming the node and op kind, with "FILE:LINE: " in front when g was
 * parsed from a file; CT_ERR_LIMIT out of memory. */
ct_status ct_ir_verify_with(ct_graph *g, ct_shape_lookup shape_of, ct_op_check tpu_check, ct_diag *d);

#endif
