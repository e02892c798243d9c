/* math_loss.c: ONNX math family, classification losses: shape function and kernels of
 * NegativeLogLikelihoodLoss-13 and SoftmaxCrossEntropyLoss-13 (loss = −w[t]·logp[n, t, d…],
 * ignore_index, reductions none/sum/mean, mean divided by the sum of the applied weights), in
 * double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/sample_nms_loss.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"

ct_status ct_loss_reduction_of(const ct_op *op, ct_loss_reduction *r, ct_diag *d) {
  static const char *const names[] = {"none", "sum", "mean"};
  const char *s = ct_attr_loss_reduction(op);
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, names[i])) return *r = (ct_loss_reduction)i, CT_OK;
  return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported reduction \"%s\"", s);
}

/* Loss of log-probabilities lp (N, C, D… flattened to N·C·D, row-major) against target (N, D…)
 * with optional weight (C) into y (target's shape for reduction none, else a scalar). Errors:
 * a target outside [0, C) that is not ignore_index. */
static ct_status nll(const ct_op *op, const double *lp, int64_t c, const ct_tensor *target, const ct_tensor *weight,
                     ct_tensor *y, ct_diag *d) {
  ct_loss_reduction red = CT_LOSS_RED_NONE;
  ct_status st = ct_loss_reduction_of(op, &red, d);
  if (st) return st;
  bool has_ii = ct_attr_raw_loss_ignore_index(op) != NULL;
  int64_t ii = ct_attr_loss_ignore_index(op), nt = ct_tensor_numel(target);
  int64_t n = target->ndim ? target->shape[0] : 1, inner = n ? nt / n : 0;
  double num = 0, den = 0;
  for (int64_t k = 0; k < nt; k++) {
    int64_t t = ct_ops_get_i64(target, k), b = inner ? k / inner : 0, j = inner ? k % inner : 0;
    double w = 0, loss = 0;
    if (!has_ii || t != ii) {
      if (t < 0 || t >= c) return ct_ops_err(d, CT_ERR_INPUT, op, "target %lld outside [0, %lld)", (long long)t, (long long)c);
      w = weight ? ct_tensor_get_f64(weight, t) : 1;
      loss = -lp[(b * c + t) * inner + j] * w;
    }
    if (red == CT_LOSS_RED_NONE) ct_tensor_set_f64(y, k, loss);
    num += loss, den += w;
  }
  if (red != CT_LOSS_RED_NONE) ct_tensor_set_f64(y, 0, red == CT_LOSS_RED_SUM ? num : num / den);
  return CT_OK;
}

/* x (N, C, D…) as doubles (malloc'ed, NULL when out of memory); *c gets C. */
static double *to_double(const ct_tensor *x, int64_t *c) {
  int64_t n = ct_tensor_numel(x);
  double *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; v && i < n; i++) v[i] = ct_tensor_get_f64(x, i);
  *c = x->ndim > 1 ? x->shape[1] : 1;
  return v;
}

/* NegativeLogLikelihoodLoss: input (N, C, d…) log-probabilities, target (N, d…) integer, optional
 * weight (C). CT_ERR_LIMIT out of memory; errors of nll. */
ct_status ct_kern_nllloss(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  (void)ctx;
  int64_t c;
  double *lp = to_double(in[0], &c);
  if (!lp) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_status st = nll(op, lp, c, in[1], op->n_in > 2 ? in[2] : NULL, out[0], d);
  free(lp);
  return st;
}

/* SoftmaxCrossEntropyLoss: log_softmax of scores (N, C, d…) along C (max-subtracted), written to
 * the optional output 1, then the NegativeLogLikelihoodLoss of it. Errors as NLL's. */
ct_status ct_kern_sceloss(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  (void)ctx;
  int64_t c, total = ct_tensor_numel(in[0]);
  double *lp = to_double(in[0], &c);
  if (!lp) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  int64_t inner = total && c ? total / (in[0]->shape[0] * c) : 0;
  for (int64_t b = 0; b < in[0]->shape[0]; b++)
    for (int64_t j = 0; j < inner; j++) {
      double *row = lp + b * c * inner + j, mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < c; k++) mx = fmax(mx, row[k * inner]);
      for (int64_t k = 0; k < c; k++) s += exp(row[k * inner] - mx);
      for (int64_t k = 0; k < c; k++) row[k * inner] -= mx + log(s);
    }
  if (op->n_out > 1 && out[1])
    for (int64_t i = 0; i < total; i++) ct_tensor_set_f64(out[1], i, lp[i]);
  ct_status st = nll(op, lp, c, in[1], op->n_in > 2 ? in[2] : NULL, out[0], d);
  free(lp);
  return st;
}

/* ---- shape function ---- */

/* NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: input (N, C, d…) float, target (N, d…)
 * integer, optional weight (C) → loss of target's shape (reduction none) or a scalar, input's
 * dtype; SoftmaxCrossEntropyLoss's optional output 1 (log_prob) has the input's type. Errors:
 * shapes, reduction as ct_loss_reduction_of. */
ct_status ct_shape_loss(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x, *t, *w = op->n_in > 2 ? op->in[2] : NULL;
  ct_loss_reduction red = CT_LOSS_RED_MEAN; /* set by ct_loss_reduction_of; initialized for gcc -O3 */
  ct_status st;
  if ((st = ct_loss_reduction_of(op, &red, d)) || (st = ct_sm_float_in(op, 0, -1, &x, d)) || (st = ct_sm_in(op, 1, &t, d)))
    return st;
  bool ok = x->ndim >= 2 && t->ndim == x->ndim - 1 && ct_ops_is_int(t->dtype) && t->shape[0] == x->shape[0];
  for (int i = 1; ok && i < t->ndim; i++) ok = t->shape[i] == x->shape[i + 1];
  if (!ok) return ct_ops_err(d, CT_ERR_INPUT, op, "input must be (N, C, d...) and target (N, d...) integer");
  if (w && (w->ndim != 1 || w->shape[0] != x->shape[1]))
    return ct_ops_err(d, CT_ERR_INPUT, op, "weight must have C = %lld entries", (long long)x->shape[1]);
  ct_sm_out(op, 0, x->dtype, red == CT_LOSS_RED_NONE ? t->ndim : 0, t->shape);
  if (op->kind == CT_OP_SOFTMAXCROSSENTROPYLOSS) ct_sm_out(op, 1, x->dtype, x->ndim, x->shape);
  return CT_OK;
}
