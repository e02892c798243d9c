/* bn_to_conv.c: a BatchNormalization that fold-bn cannot fold (its input is not the single-use
 * result of a Conv / ConvTranspose / Gemm: DenseNet's and pre-activation ResNets' BN → ReLU →
 * Conv) becomes a depthwise 1×1 Conv with weight s and bias t, s = γ/√(σ² + ε),
 * t = β − μ·s — the same per-channel affine in the form the INT8 lowering and the codegen
 * have (TPU-MLIR rewrites it to a Scale op for the same reason). NCHW (rank 4) only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "compiler/pass.h"

/* True when fold-bn could fold bn into its producer now or once the producer is settled:
 * leave it to fold-bn. */
static bool left_to_fold_bn(ct_rw *rw, const ct_op *bn) {
  const ct_op *p = bn->in[0] ? bn->in[0]->def : NULL;
  return p && (p->kind == CT_OP_CONV || p->kind == CT_OP_CONVTRANSPOSE || p->kind == CT_OP_GEMM) &&
         ct_rw_only_user(rw, bn->in[0]) == bn && !ct_attr_raw_act_act(p);
}

/* Rewrites bn; the number of rewrites (0 or 1). */
static int rewrite_one(ct_rw *rw, ct_op *bn, void *user) {
  (void)user;
  ct_value *x = bn->in[0], *y = bn->out[0];
  if (!x || !y || x->ndim != 4 || x->shape[1] <= 0 || ct_attr_batchnorm_training_mode(bn) != 0 ||
      left_to_fold_bn(rw, bn))
    return 0;
  for (int k = 1; k < bn->n_out; k++)
    if (bn->out[k] && ct_rw_num_uses(rw, bn->out[k]) > 0) return 0;
  int64_t C = x->shape[1];
  for (int j = 1; j < 5; j++)
    if (j >= bn->n_in || !ct_value_is_const(bn->in[j]) || ct_tensor_numel(bn->in[j]->data) != C) return 0;
  double *s = malloc(sizeof *s * (size_t)(2 * C));
  if (!s) return rw->oom = true, 0;
  double *t = s + C, eps = ct_attr_batchnorm_epsilon(bn);
  for (int64_t c = 0; c < C; c++) {
    double var = ct_tensor_get_f64(bn->in[4]->data, c);
    s[c] = ct_tensor_get_f64(bn->in[1]->data, c) / sqrt(var + eps);
    t[c] = ct_tensor_get_f64(bn->in[2]->data, c) - ct_tensor_get_f64(bn->in[3]->data, c) * s[c];
  }
  int64_t wshape[4] = {C, 1, 1, 1};
  char ws[200], bs[200];
  snprintf(ws, sizeof ws, "%s_scale", bn->loc ? bn->loc : "bn"), snprintf(bs, sizeof bs, "%s_bias", bn->loc ? bn->loc : "bn");
  ct_value *in[3] = {x, ct_rw_weight_f32(rw, ws, 4, wshape, s), ct_rw_weight_f32(rw, bs, 1, &C, t)};
  free(s);
  if (!in[1] || !in[2]) return rw->oom = true, 0;
  const char *loc = bn->loc;
  ct_rw_erase(rw, bn);
  ct_op *cv = ct_rw_add_op(rw, CT_OP_CONV, loc, 3, in, 1, &y);
  int64_t k[2] = {1, 1}, st[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
  if (!cv || !ct_attr_set_conv_group(rw->g, cv, C) || !ct_attr_set_window_kernel_shape(rw->g, cv, 2, k) ||
      !ct_attr_set_window_strides(rw->g, cv, 2, st) || !ct_attr_set_window_pads(rw->g, cv, 4, pads))
    return rw->oom = true, 0;
  return 1;
}

/* Pass "bn-to-conv": BatchNormalization (inference, NCHW, constant scale/B/mean/var of C
 * elements, training outputs unused) that fold-bn leaves — its input is not the single-use,
 * act-free result of a Conv / ConvTranspose / Gemm — becomes Conv(x, W[C,1,1,1] = s, b = t,
 * group = C, 1×1). Error bound: as fold-bn's (s, t in double, rounded once to f32); the
 * float result differs from γ(x − μ)/√(σ²+ε) + β by the rounding of s·x + t. Errors:
 * CT_ERR_LIMIT. */
ct_status ct_pass_bn_to_conv(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_BATCHNORM};
  return ct_rw_for_each(g, kinds, 1, rewrite_one, NULL, n_changed, d);
}
