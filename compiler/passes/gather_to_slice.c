/* gather_to_slice.c: Gather with one constant index (ONNX Gather-13; a ViT's class token
 * `x[:, 0]`, a sequence's last step) becomes Slice [i, i + 1) along the axis, followed by a
 * Reshape dropping the axis when the index is a scalar — data movement the back end has
 * (TPU-MLIR lowers such a Gather to a Slice too). */
#include "compiler/pass.h"

/* Rewrites g; the number of rewrites (0 or 1). */
static int rewrite_one(ct_rw *rw, ct_op *g, void *user) {
  (void)user;
  ct_value *x = g->in[0], *iv = g->in[1], *y = g->out[0];
  if (!x || !iv || !y || !ct_value_is_const(iv) || ct_tensor_numel(iv->data) != 1 || iv->ndim > 1 || x->ndim < 1)
    return 0;
  int64_t ax = ct_attr_gather_axis(g);
  if (ax < 0) ax += x->ndim;
  if (ax < 0 || ax >= x->ndim || x->shape[ax] <= 0) return 0;
  int64_t i = ct_tensor_get_i64(iv->data, 0);
  if (i < 0) i += x->shape[ax];
  if (i < 0 || i >= x->shape[ax]) return 0;
  int64_t sh[CT_MAX_DIMS], st = i, en = i + 1;
  for (int d = 0; d < x->ndim; d++) sh[d] = d == ax ? 1 : x->shape[d];
  const char *loc = g->loc ? g->loc : "gather";
  ct_value *s_in[4] = {x, ct_rw_weight_i64(rw, loc, 1, (int64_t[]){1}, &st), ct_rw_weight_i64(rw, loc, 1, (int64_t[]){1}, &en),
                       ct_rw_weight_i64(rw, loc, 1, (int64_t[]){1}, &ax)};
  bool scalar = iv->ndim == 0;
  ct_value *mid = scalar ? ct_rw_add_value(rw, loc, y->dtype, x->ndim, sh) : y;
  int64_t ys[CT_MAX_DIMS];
  for (int d = 0; d < y->ndim; d++) ys[d] = y->shape[d];
  ct_value *shape = scalar ? ct_rw_weight_i64(rw, loc, 1, (int64_t[]){y->ndim}, ys) : NULL;
  if (!s_in[1] || !s_in[2] || !s_in[3] || !mid || (scalar && !shape)) return rw->oom = true, 0;
  ct_rw_erase(rw, g);
  if (!ct_rw_add_op(rw, CT_OP_SLICE, loc, 4, s_in, 1, &mid)) return rw->oom = true, 0;
  ct_value *r_in[2] = {mid, shape};
  if (scalar && !ct_rw_add_op(rw, CT_OP_RESHAPE, loc, 2, r_in, 1, &y)) return rw->oom = true, 0;
  return 1;
}

/* Pass "gather-to-slice": Gather whose indices are one constant element (scalar or [1]),
 * in range, → Slice(x, [i], [i + 1], [axis]) (+ Reshape to Gather's shape for a scalar
 * index). Exact (moves the same elements). Errors: CT_ERR_LIMIT. */
ct_status ct_pass_gather_to_slice(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_GATHER};
  return ct_rw_for_each(g, kinds, 1, rewrite_one, NULL, n_changed, d);
}
