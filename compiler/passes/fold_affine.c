/* fold_affine.c: Mul/Add/Sub/Div of a Conv/ConvTranspose/Gemm result by a per-channel
 * constant folded into its weights and bias — the same algebra as BatchNorm folding
 * (conv(x, W)·c = conv(x, W·c); TPU-MLIR's Conv+Mul/Add canonicalization). */
#include <stdlib.h>

#include "compiler/pass.h"

static bool is_producer(const ct_op *p) {
  return p && (p->kind == CT_OP_CONV || p->kind == CT_OP_CONVTRANSPOSE || p->kind == CT_OP_GEMM) &&
         !ct_attr_raw_act_act(p);
}

/* Fills s, t for op = y ∘ c (y the producer's result at operand `yi`); false if not foldable. */
static bool coeffs(const ct_op *op, int yi, const double *c, int64_t C, double *s, double *t) {
  for (int64_t k = 0; k < C; k++) {
    s[k] = 1, t[k] = 0;
    switch (op->kind) {
      case CT_OP_MUL: s[k] = c[k]; break;
      case CT_OP_ADD: t[k] = c[k]; break;
      case CT_OP_SUB: /* y − c, or c − y = (−1)·y + c */
        if (yi == 0) t[k] = -c[k];
        else s[k] = -1, t[k] = c[k];
        break;
      case CT_OP_DIV:
        if (yi != 0 || c[k] == 0) return false;
        s[k] = 1.0 / c[k];
        break;
      default: return false;
    }
  }
  return true;
}

/* Tries to fold op (Mul/Add/Sub/Div); the number of rewrites (0 or 1). */
static int fold_one(ct_rw *rw, ct_op *op, void *user) {
  (void)user;
  for (int yi = 0; yi < 2; yi++) {
    ct_value *y = op->in[yi], *cv = op->in[1 - yi];
    ct_op *p = y ? y->def : NULL;
    if (!is_producer(p) || ct_rw_only_user(rw, y) != op || !ct_rw_same_shape(op->out[0], y) || y->dtype != CT_F32)
      continue;
    int64_t C = y->shape[1];
    double *buf = malloc(sizeof *buf * (size_t)(3 * C + 1));
    if (!buf) { rw->oom = true; return 0; }
    bool ok = ct_rw_per_channel(cv, y->ndim, C, buf) && coeffs(op, yi, buf, C, buf + C, buf + 2 * C) &&
              ct_rw_affine_out_channels(rw, p, buf + C, buf + 2 * C);
    free(buf);
    if (!ok) continue;
    ct_rw_absorb(rw, p, op);
    return 1;
  }
  return 0;
}

/* Pass "fold-affine": for Mul, Add, Sub (either order) or Div (producer result divided by the
 * constant) where one operand is the result of a Conv, ConvTranspose or Gemm without a fused
 * act, used by nothing else, and the other a constant varying at most along the channel axis
 * (dim 1) whose broadcast keeps the result shape: scales/shifts that op's weights and bias.
 * Not fired for a constant that varies along other axes (not per-channel), a producer result
 * with other consumers, c / y, or division by zero. Error bound: as fold-bn (one f32 rounding
 * per folded weight, 2^-24 relative); Div uses 1/c in double, so y/c becomes y·(1/c) with an
 * extra relative difference ≤ 2^-24. Sub with the constant first negates the weights (exact).
 * Errors: CT_ERR_LIMIT. */
ct_status ct_pass_fold_affine(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_MUL, CT_OP_ADD, CT_OP_SUB, CT_OP_DIV};
  return ct_rw_for_each(g, kinds, 4, fold_one, NULL, n_changed, d);
}
