/* collapse_reshape.c: chains of Reshape/Flatten/Squeeze/Unsqueeze collapse into one Reshape
 * to the final static shape — they only reinterpret a row-major buffer, so any chain equals
 * one reshape (TPU-MLIR's ReshapeOp canonicalization, Grappler's RemoveRedundantReshape). */
#include "compiler/pass.h"

static bool is_reshape_like(const ct_op *op) {
  return op && (op->kind == CT_OP_RESHAPE || op->kind == CT_OP_FLATTEN || op->kind == CT_OP_SQUEEZE ||
                op->kind == CT_OP_UNSQUEEZE);
}

/* Replaces a reshape-like op of a reshape-like op by one Reshape; the number of rewrites. */
static int collapse_one(ct_rw *rw, ct_op *op, void *user) {
  (void)user;
  if (!is_reshape_like(op) || !op->in[0] || !is_reshape_like(op->in[0]->def)) return 0;
  ct_value *x = op->in[0]->def->in[0], *y = op->out[0];
  bool ok = x && y->ndim >= 0 && x->dtype == y->dtype;
  for (int k = 0; ok && k < y->ndim; k++) ok = y->shape[k] > 0;
  if (!ok) return 0;
  int64_t rank = y->ndim;
  char base[512];
  snprintf(base, sizeof base, "%s_shape", y->name);
  ct_value *in[2] = {x, ct_rw_weight_i64(rw, base, 1, &rank, y->shape)};
  if (!in[1] || !ct_rw_add_op(rw, CT_OP_RESHAPE, op->loc, 2, in, 1, &y)) return 0;
  ct_rw_erase(rw, op);
  return 1;
}

/* Pass "collapse-reshape": a Reshape/Flatten/Squeeze/Unsqueeze whose operand comes from
 * another of these ops is replaced by Reshape(original operand, constant final shape); the
 * skipped op goes when nothing else uses it (dce). Needs a static result shape without zero
 * dims (a 0 in Reshape's shape would mean "copy"). Exact (pure data reinterpretation).
 * Errors: CT_ERR_LIMIT. */
ct_status ct_pass_collapse_reshape(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  return ct_rw_for_each(g, NULL, 0, collapse_one, NULL, n_changed, d);
}
