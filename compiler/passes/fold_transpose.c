/* fold_transpose.c: Transpose(Transpose(x, p1), p2) = Transpose(x, q) with q[i] = p1[p2[i]]
 * (ONNX Transpose: out dim i = in dim perm[i]); identity permutations vanish (TPU-MLIR's
 * TransposeOp folding, Grappler's transpose optimizer). */
#include "compiler/pass.h"

/* op's permutation (default: reversed dims) into p; false if malformed. */
static bool get_perm(const ct_op *op, int r, int64_t *p) {
  int n = 0;
  const int64_t *a = ct_attr_transpose_perm(op, &n);
  if (a && n != r) return false;
  for (int i = 0; i < r; i++) {
    p[i] = a ? (a[i] < 0 ? a[i] + r : a[i]) : r - 1 - i;
    if (p[i] < 0 || p[i] >= r) return false;
  }
  return true;
}

static bool is_identity(const int64_t *p, int r) {
  for (int i = 0; i < r; i++)
    if (p[i] != i) return false;
  return true;
}

/* Merges a Transpose into its Transpose operand and drops it when the permutation is the
 * identity; the number of rewrites (0..2). */
static int fold_one(ct_rw *rw, ct_op *op, void *user) {
  (void)user;
  int r = op->in[0] ? op->in[0]->ndim : -1, changed = 0;
  int64_t p2[CT_MAX_DIMS], p1[CT_MAX_DIMS], q[CT_MAX_DIMS];
  if (r < 0 || !get_perm(op, r, p2)) return 0;
  ct_op *inner = op->in[0]->def;
  if (inner && !inner->dead && inner->kind == CT_OP_TRANSPOSE && inner->in[0] && inner->in[0]->ndim == r &&
      get_perm(inner, r, p1)) {
    for (int k = 0; k < r; k++) q[k] = p1[p2[k]];
    if (!ct_attr_set_transpose_perm(rw->g, op, r, q)) { rw->oom = true; return 0; }
    ct_rw_set_input(rw, op, 0, inner->in[0]);
    for (int k = 0; k < r; k++) p2[k] = q[k];
    changed++;
  }
  if (is_identity(p2, r) && ct_rw_can_replace(rw, op->out[0], op->in[0])) {
    ct_rw_replace(rw, op->out[0], op->in[0]);
    ct_rw_erase(rw, op);
    changed++;
  }
  return changed;
}

/* Pass "fold-transpose": a Transpose whose operand is another Transpose takes that one's
 * operand and the composed permutation (the inner one goes when unused, via dce); a
 * Transpose with the identity permutation is replaced by its operand. Exact (data movement).
 * Errors: CT_ERR_LIMIT. */
ct_status ct_pass_fold_transpose(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_TRANSPOSE};
  return ct_rw_for_each(g, kinds, 1, fold_one, NULL, n_changed, d);
}
