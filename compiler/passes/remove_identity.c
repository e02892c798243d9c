/* remove_identity.c: removes ops that return their first operand unchanged — Identity,
 * inference-mode Dropout (ONNX Dropout-13: output = input when training_mode is false) and
 * no-op forms of Cast, Reshape-likes, Expand, Slice, Pad, Concat, Split and x*1, x/1, x+0, x-0. */
#include "compiler/pass.h"

/* True if op's result 0 equals its operand 0 element for element. */
static bool is_noop(ct_rw *rw, const ct_op *op) {
  const ct_value *x = op->in[0], *y = op->out[0];
  if (!x || !y || !ct_rw_same_shape(x, y) || x->dtype != y->dtype) return false;
  switch (op->kind) {
    case CT_OP_IDENTITY: case CT_OP_CAST: case CT_OP_CASTLIKE: case CT_OP_RESHAPE:
    case CT_OP_FLATTEN: case CT_OP_SQUEEZE: case CT_OP_UNSQUEEZE: case CT_OP_EXPAND:
      return true;
    case CT_OP_CONCAT:
      return op->n_in == 1;
    case CT_OP_SPLIT:
      return op->n_out == 1;
    case CT_OP_DROPOUT: { /* mask result unused; training_mode absent or constant false, or ratio constant 0 */
      const ct_value *tm = op->n_in > 2 ? op->in[2] : NULL, *ratio = op->n_in > 1 ? op->in[1] : NULL;
      if (op->n_out > 1 && op->out[1] && ct_rw_num_uses(rw, op->out[1]) > 0) return false;
      return !tm || ct_rw_const_all(tm, 0.0) || (ratio && ct_rw_const_all(ratio, 0.0));
    }
    case CT_OP_SLICE: { /* same shape with unit steps = the whole range */
      const ct_value *st = op->n_in > 4 ? op->in[4] : NULL;
      return !st || ct_rw_const_all(st, 1.0);
    }
    case CT_OP_PAD:
      return op->n_in > 1 && ct_rw_const_all(op->in[1], 0.0);
    case CT_OP_MUL: case CT_OP_DIV:
      return ct_dtype_is_float(y->dtype) && ct_rw_const_all(op->in[1], 1.0);
    case CT_OP_ADD: case CT_OP_SUB:
      return ct_dtype_is_float(y->dtype) && ct_rw_const_all(op->in[1], 0.0);
    default:
      return false;
  }
}

/* Removes op when it is a no-op; the number of rewrites (0 or 1). */
static int remove_one(ct_rw *rw, ct_op *op, void *user) {
  (void)user;
  if (op->n_in < 1 || op->n_out < 1) return 0;
  if ((op->kind == CT_OP_MUL || op->kind == CT_OP_ADD) && ct_value_is_const(op->in[0]) &&
      !ct_value_is_const(op->in[1])) {
    ct_value *t = op->in[0]; /* commute the constant to the right for the check */
    op->in[0] = op->in[1];
    op->in[1] = t;
  }
  if (!is_noop(rw, op) || !ct_rw_can_replace(rw, op->out[0], op->in[0])) return 0;
  ct_rw_replace(rw, op->out[0], op->in[0]);
  ct_rw_erase(rw, op);
  return 1;
}

/* Pass "remove-identity": replaces the result of every no-op (see file comment; operand and
 * result types must be identical) by its operand 0; Mul/Add with the constant on the left is
 * handled by commuting. Skips a rewrite that would rename a module input or weight. Exact,
 * except x + 0 and x - 0 turn -0.0 into +0.0 (equal values). Errors: none besides
 * CT_ERR_LIMIT. */
ct_status ct_pass_remove_identity(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  return ct_rw_for_each(g, NULL, 0, remove_one, NULL, n_changed, d);
}
