/* fold_bn.c: BatchNormalization (inference form, ONNX BatchNormalization-15) folded into the
 * preceding Conv/ConvTranspose/Gemm: y = γ(x − μ)/√(σ² + ε) + β = s·x + t with
 * s = γ/√(σ² + ε), t = β − μ·s (Jacob et al. 2018 §3.2; TPU-MLIR's BatchNorm fusion). */
#include <math.h>
#include <stdlib.h>

#include "compiler/pass.h"

/* The producer of bn's input when the fold is legal, else NULL. */
static ct_op *foldable(ct_rw *rw, const ct_op *bn, int64_t *C) {
  const ct_value *x = bn->in[0];
  ct_op *p = x ? x->def : NULL;
  if (!p || (p->kind != CT_OP_CONV && p->kind != CT_OP_CONVTRANSPOSE && p->kind != CT_OP_GEMM)) return NULL;
  if (ct_rw_only_user(rw, x) != bn || x->ndim < 2 || ct_attr_batchnorm_training_mode(bn) != 0) return NULL;
  if (ct_attr_raw_act_act(p)) return NULL; /* an activation already sits between them */
  for (int k = 1; k < bn->n_out; k++)
    if (bn->out[k] && ct_rw_num_uses(rw, bn->out[k]) > 0) return NULL;
  *C = x->shape[1];
  for (int j = 1; j < 5; j++)
    if (!ct_value_is_const(bn->in[j]) || ct_tensor_numel(bn->in[j]->data) != *C) return NULL;
  return p;
}

/* Folds BatchNormalization bn into its producer; the number of rewrites (0 or 1). */
static int fold_one(ct_rw *rw, ct_op *bn, void *user) {
  (void)user;
  int64_t C = 0;
  ct_op *p = foldable(rw, bn, &C);
  if (!p) return 0;
  double *s = malloc(sizeof *s * (size_t)(2 * C + 1));
  if (!s) { rw->oom = true; return 0; }
  double *t = s + C, eps = ct_attr_batchnorm_epsilon(bn);
  for (int64_t c = 0; c < C; c++) {
    double gam = ct_tensor_get_f64(bn->in[1]->data, c), beta = ct_tensor_get_f64(bn->in[2]->data, c);
    double mu = ct_tensor_get_f64(bn->in[3]->data, c), var = ct_tensor_get_f64(bn->in[4]->data, c);
    s[c] = gam / sqrt(var + eps);
    t[c] = beta - mu * s[c];
  }
  bool ok = ct_rw_affine_out_channels(rw, p, s, t);
  free(s);
  if (!ok) return 0;
  ct_rw_absorb(rw, p, bn);
  return 1;
}

/* Pass "fold-bn": for BatchNormalization(x) whose x comes from a Conv, ConvTranspose or Gemm
 * (without a fused act) used by nothing else, with constant scale/B/mean/var of C elements
 * and unused training outputs: the producer's weight and bias become W·s, b·s + t and it
 * produces BN's result directly. Not fired when x has another consumer (that consumer needs
 * the unnormalized value) or the parameters are not constant. Error bound: s and t are
 * computed in double and each folded weight/bias is rounded once to f32, so every product
 * w·x differs from the unfused float computation by at most 2^-24·|w'·x| before the
 * (unchanged) float accumulation; the fused output is within 2^-23·Σ|w'·x| + 2^-24·|b'| of the
 * unfused one plus the unfused path's own rounding. Errors: CT_ERR_LIMIT. */
ct_status ct_pass_fold_bn(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_BATCHNORM};
  return ct_rw_for_each(g, kinds, 1, fold_one, NULL, n_changed, d);
}
