/* verify.h: the IR verifier without op semantics (MLIR's verifier idea): the structural,
 * type and quant-parameter checks of a Top/Tpu graph. Re-inference of result types needs the
 * shape functions of ops/, which ir/ cannot call: they come in as a lookup (ops/verify.h's
 * ct_ir_verify passes ct_shape_fn_of). */
#ifndef CT_IR_VERIFY_H
#define CT_IR_VERIFY_H

#include "ir/ir.h"

/* Maps an op kind to its shape function (NULL when it has none). */
typedef ct_shape_fn (*ct_shape_lookup)(ct_op_kind k);

/* Checks every attribute of g's ops against the op table's schema (ir/ops.def): the first
 * unknown or mistyped one is CT_ERR_INPUT `FILE:LINE: node "x" (op Conv): attribute "grop":
 * unknown attribute` (FILE:LINE when g was parsed from a file, ct_op.line). Tpu-dialect
 * graphs are not checked yet: their op rows and attribute sets come with the lowering. */
ct_status ct_ir_check_attrs(const ct_graph *g, ct_diag *d);

/* Checks g as ct_ir_verify (ops/verify.h) documents; shape_of NULL skips the re-inference of
 * result types. Errors: CT_ERR_INPUT naming the node and op kind; CT_ERR_LIMIT out of memory. */
ct_status ct_ir_verify_with(ct_graph *g, ct_shape_lookup shape_of, ct_diag *d);

#endif
