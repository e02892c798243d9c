/* fuse_act.c: activation fusion — Relu, LeakyRelu and Clip after a Conv or Gemm become the
 * producer's `act` attribute ("relu", "relu6", "leaky_relu" + act_alpha, "clip" + act_min /
 * act_max) so lowering sees one op (TPU-MLIR's do_relu / relu_limit on Conv and MatMul). */
#include <math.h>

#include "compiler/pass.h"

/* The scalar value of an optional Clip bound, or dflt when absent; false if not constant. */
static bool clip_bound(const ct_value *v, double dflt, double *out) {
  if (!v) { *out = dflt; return true; }
  if (!ct_value_is_const(v) || ct_tensor_numel(v->data) != 1) return false;
  *out = ct_tensor_get_f64(v->data, 0);
  return !isnan(*out);
}

/* Sets the act attributes on p for activation op a; false when a has no fusable form. */
static bool set_act(ct_graph *g, ct_op *p, const ct_op *a, bool *oom) {
  bool ok = true;
  if (a->kind == CT_OP_RELU) {
    ok = ct_attr_set_act_act(g, p, "relu");
  } else if (a->kind == CT_OP_LEAKYRELU) {
    ok = ct_attr_set_act_act(g, p, "leaky_relu") && ct_attr_set_act_act_alpha(g, p, ct_attr_leakyrelu_alpha(a));
  } else {
    double lo, hi;
    if (!clip_bound(a->n_in > 1 ? a->in[1] : NULL, -INFINITY, &lo) ||
        !clip_bound(a->n_in > 2 ? a->in[2] : NULL, INFINITY, &hi))
      return false;
    if (lo == 0 && isinf(hi) && hi > 0) ok = ct_attr_set_act_act(g, p, "relu");
    else if (lo == 0 && hi == 6) ok = ct_attr_set_act_act(g, p, "relu6");
    else if (isfinite(lo) && isfinite(hi) && lo <= hi)
      ok = ct_attr_set_act_act(g, p, "clip") && ct_attr_set_act_act_min(g, p, lo) && ct_attr_set_act_act_max(g, p, hi);
    else return false;
  }
  if (!ok) *oom = true;
  return ok;
}

/* Fuses activation a into its Conv/Gemm producer; the number of rewrites (0 or 1). */
static int fuse_one(ct_rw *rw, ct_op *a, void *user) {
  (void)user;
  ct_value *x = a->in[0];
  ct_op *p = x ? x->def : NULL;
  if (!p || (p->kind != CT_OP_CONV && p->kind != CT_OP_GEMM) || ct_attr_raw_act_act(p) ||
      ct_rw_only_user(rw, x) != a || x->dtype != CT_F32 || !ct_rw_same_shape(x, a->out[0]))
    return 0;
  if (!set_act(rw->g, p, a, &rw->oom)) return 0;
  ct_rw_absorb(rw, p, a);
  return 1;
}

/* Pass "fuse-act": Relu, LeakyRelu or Clip (constant scalar bounds; min 0 → relu / relu6,
 * both finite → clip) whose operand is the result of a Conv or Gemm without an act and used by
 * nothing else: the producer gets the act attribute and produces the activation's result.
 * Not fired when the producer's result has another consumer, a Clip bound is not constant or
 * only one bound is given (other than min 0), or the producer already has an act. Exact (the
 * same function applied to the same values). Errors: CT_ERR_LIMIT. */
ct_status ct_pass_fuse_act(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_RELU, CT_OP_LEAKYRELU, CT_OP_CLIP};
  return ct_rw_for_each(g, kinds, 3, fuse_one, NULL, n_changed, d);
}
