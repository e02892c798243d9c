/* merge_chains.c: Mul/Add-by-constant chains — (x·c1)·c2 → x·(c1·c2) and (x + c1) + c2 →
 * x + (c1 + c2); the new constant-only op is evaluated by fold-constants in the next round
 * (reassociation as in TVM's FoldConstant + SimplifyExpr and Grappler's arithmetic optimizer). */
#include "compiler/pass.h"

/* Numpy broadcast of two shapes into out (rank returned), -1 if incompatible. */
static int broadcast(const ct_value *a, const ct_value *b, int64_t *out) {
  int r = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->ndim), ib = i - (r - b->ndim);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1) return -1;
    out[i] = da == 1 ? db : da;
  }
  return r;
}

/* The constant operand index of a binary op whose other operand is not constant, or -1. */
static int const_side(const ct_op *op) {
  if (op->n_in != 2 || !op->in[0] || !op->in[1]) return -1;
  bool c0 = ct_value_is_const(op->in[0]), c1 = ct_value_is_const(op->in[1]);
  return c0 == c1 ? -1 : c0 ? 0 : 1;
}

/* Reassociates op(op(x, c1), c2) into op(x, op(c1, c2)); the number of rewrites (0 or 1). */
static int merge_one(ct_rw *rw, ct_op *op, void *user) {
  (void)user;
  int s2 = const_side(op);
  if (s2 < 0) return 0;
  ct_value *y = op->in[1 - s2], *c2 = op->in[s2];
  ct_op *inner = y->def;
  int s1 = inner && inner->kind == op->kind && !inner->dead ? const_side(inner) : -1;
  if (s1 < 0 || ct_rw_only_user(rw, y) != op || y->dtype != CT_F32 || c2->dtype != CT_F32) return 0;
  ct_value *x = inner->in[1 - s1], *c1 = inner->in[s1];
  int64_t shape[CT_MAX_DIMS];
  int r = c1->dtype == CT_F32 && c1->ndim >= 0 && c2->ndim >= 0 ? broadcast(c1, c2, shape) : -1;
  if (r < 0 || r > op->out[0]->ndim) return 0;
  ct_value *k = ct_rw_add_value(rw, c2->name, CT_F32, r, shape), *in[2] = {c1, c2};
  if (!k || !ct_rw_add_op(rw, op->kind, inner->loc, 2, in, 1, &k)) return 0;
  ct_rw_set_input(rw, op, 1 - s2, x);
  ct_rw_set_input(rw, op, s2, k);
  return 1;
}

/* Pass "merge-chains": for Mul (or Add) with a constant operand c2 whose other operand is the
 * result of another Mul (Add) of a non-constant x and a constant c1, used by nothing else:
 * the outer op becomes x ∘ k with k = c1 ∘ c2, a new op on constants (folded by
 * fold-constants); the inner op goes (dce). Shapes: numpy broadcasting is associative, so the
 * result shape is unchanged; requires f32 and c1, c2 ranks ≤ the result's. Error bound:
 * reassociation, |(x·c1)·c2 − x·(c1·c2)| ≤ 2^-23·|x·c1·c2| (two roundings against one);
 * additions likewise within 2^-23·(|x| + |c1| + |c2|). Errors: CT_ERR_LIMIT. */
ct_status ct_pass_merge_chains(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_MUL, CT_OP_ADD};
  return ct_rw_for_each(g, kinds, 2, merge_one, NULL, n_changed, d);
}
