/* kern_nn_norm.c: float32 BatchNormalization (inference form), InstanceNormalization,
 * LayerNormalization (+ Mean/InvStdDev), MeanVarianceNormalization and LRN. Formulas from
 * the ONNX spec (BatchNormalization-15, InstanceNormalization-6, LayerNormalization-17 with
 * population variance, MVN-13 function body with epsilon 1e-9, LRN-13); sums in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/kern_nn_util.h"

/* Checks every present input and output 0 is f32 and output 0 has input 0's shape. */
static ct_status f32_same_shape(const ct_op *op, ct_tensor *const *in, ct_tensor **out, ct_diag *d) {
  ct_status st;
  for (int i = 0; i < op->n_in; i++)
    if (in[i] && (st = ct_kn_need(op, in[i], CT_F32, i ? "a parameter input" : "input X", d))) return st;
  if (!in[0]) return ct_shape_nn_fail(d, op, "input X is missing");
  if ((st = ct_kn_need(op, out[0], CT_F32, "output Y", d))) return st;
  return ct_kn_check_shape(op, out[0], in[0]->ndim, in[0]->shape, d);
}

/* Checks input i is present with n elements. */
static ct_status need_len(const ct_op *op, ct_tensor *const *in, int i, int64_t n, ct_diag *d) {
  if (i >= op->n_in || !in[i]) return ct_shape_nn_fail(d, op, "input %d is missing", i);
  if (ct_tensor_numel(in[i]) != n)
    return ct_shape_nn_fail(d, op, "input %d has %lld elements, expected %lld", i, (long long)ct_tensor_numel(in[i]),
                      (long long)n);
  return CT_OK;
}

/* BatchNormalization (inference): y = (x - mean) * scale / sqrt(var + epsilon) + B per channel. */
ct_status ct_kern_batchnorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  ct_status st = f32_same_shape(op, in, out, d);
  if (st) return st;
  const ct_tensor *x = in[0];
  if (x->ndim < 2) return ct_shape_nn_fail(d, op, "input must have rank >= 2");
  int64_t n = x->shape[0], c = x->shape[1], vol = n * c != 0 ? ct_tensor_numel(x) / (n * c) : 0;
  for (int i = 1; i < 5; i++)
    if ((st = need_len(op, in, i, c, d))) return st;
  if (ct_op_get_int(op, "training_mode", 0)) return ct_shape_nn_fail(d, op, "unsupported training_mode = 1");
  double eps = ct_op_get_float(op, "epsilon", 1e-5);
  const float *sc = in[1]->data, *b = in[2]->data, *mean = in[3]->data, *var = in[4]->data, *xp = x->data;
  float *y = out[0]->data;
  for (int64_t ni = 0; ni < n; ni++)
    for (int64_t ci = 0; ci < c; ci++) {
      float a = (float)(sc[ci] / sqrt((double)var[ci] + eps)), o = (float)(b[ci] - mean[ci] * (double)a);
      const float *xr = xp + (ni * c + ci) * vol;
      float *yr = y + (ni * c + ci) * vol;
      for (int64_t i = 0; i < vol; i++) yr[i] = xr[i] * a + o;
    }
  return CT_OK;
}

/* Mean and population variance of n floats, in double. */
static void mean_var(const float *x, int64_t n, double *mean, double *var) {
  double s = 0, q = 0;
  for (int64_t i = 0; i < n; i++) s += x[i];
  double m = n ? s / (double)n : 0;
  for (int64_t i = 0; i < n; i++) q += (x[i] - m) * (x[i] - m);
  *mean = m;
  *var = n ? q / (double)n : 0;
}

/* InstanceNormalization: per (n, c) plane, y = scale (x - mean) / sqrt(var + epsilon) + B. */
ct_status ct_kern_instancenorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d) {
  (void)ctx;
  ct_status st = f32_same_shape(op, in, out, d);
  if (st) return st;
  const ct_tensor *x = in[0];
  if (x->ndim < 2) return ct_shape_nn_fail(d, op, "input must have rank >= 2");
  int64_t n = x->shape[0], c = x->shape[1], vol = n * c != 0 ? ct_tensor_numel(x) / (n * c) : 0;
  if ((st = need_len(op, in, 1, c, d)) || (st = need_len(op, in, 2, c, d))) return st;
  double eps = ct_op_get_float(op, "epsilon", 1e-5);
  const float *sc = in[1]->data, *b = in[2]->data;
  for (int64_t p = 0; p < n * c; p++) {
    const float *xr = (const float *)x->data + p * vol;
    float *yr = (float *)out[0]->data + p * vol;
    double m, v;
    mean_var(xr, vol, &m, &v);
    double a = sc[p % c] / sqrt(v + eps);
    for (int64_t i = 0; i < vol; i++) yr[i] = (float)((xr[i] - m) * a + b[p % c]);
  }
  return CT_OK;
}

/* LayerNormalization: per row of dims [axis, rank), population variance, optional Mean and
 * InvStdDev outputs. */
ct_status ct_kern_layernorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  ct_status st = f32_same_shape(op, in, out, d);
  if (st) return st;
  const ct_tensor *x = in[0], *sc = op->n_in > 1 ? in[1] : NULL, *b = op->n_in > 2 ? in[2] : NULL;
  int64_t axis = ct_op_get_int(op, "axis", -1);
  if (axis < 0) axis += x->ndim;
  if (axis < 0 || axis >= x->ndim) return ct_shape_nn_fail(d, op, "axis out of range");
  if (!sc) return ct_shape_nn_fail(d, op, "input Scale is missing");
  int64_t inner = 1;
  for (int i = (int)axis; i < x->ndim; i++) inner *= x->shape[i];
  int64_t outer = inner ? ct_tensor_numel(x) / inner : 0, ns = ct_tensor_numel(sc), nb = b ? ct_tensor_numel(b) : 1;
  if (ns < 1 || inner % ns || nb < 1 || inner % nb) return ct_shape_nn_fail(d, op, "Scale/B do not broadcast");
  float *stat[2] = {NULL, NULL};
  for (int k = 1; k < 3; k++)
    if (op->n_out > k && out[k]) {
      if ((st = ct_kn_need(op, out[k], CT_F32, "output Mean/InvStdDev", d))) return st;
      if (ct_tensor_numel(out[k]) != outer) return ct_shape_nn_fail(d, op, "output %d has the wrong size", k);
      stat[k - 1] = out[k]->data;
    }
  double eps = ct_op_get_float(op, "epsilon", 1e-5);
  const float *s = sc->data, *bb = b ? b->data : NULL;
  for (int64_t r = 0; r < outer; r++) {
    const float *xr = (const float *)x->data + r * inner;
    float *yr = (float *)out[0]->data + r * inner;
    double m, v;
    mean_var(xr, inner, &m, &v);
    double is = 1.0 / sqrt(v + eps);
    for (int64_t i = 0; i < inner; i++) yr[i] = (float)((xr[i] - m) * is * s[i % ns] + (bb ? bb[i % nb] : 0.0));
    if (stat[0]) stat[0][r] = (float)m;
    if (stat[1]) stat[1][r] = (float)is;
  }
  return CT_OK;
}

/* Flat index of the reduction group of element i: the index with the axes in `mask` dropped. */
static int64_t mvn_key(int64_t i, const ct_tensor *x, unsigned mask) {
  int64_t key = 0, mul = 1;
  for (int k = x->ndim - 1; k >= 0; k--) {
    int64_t c = i % x->shape[k];
    i /= x->shape[k];
    if (mask >> k & 1u) continue;
    key += c * mul;
    mul *= x->shape[k];
  }
  return key;
}

/* MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + 1e-9) over the axes (ONNX-13
 * function body). */
ct_status ct_kern_mvn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  ct_status st = f32_same_shape(op, in, out, d);
  if (st) return st;
  const ct_tensor *x = in[0];
  static const int64_t dflt[3] = {0, 2, 3};
  int na = 0;
  const int64_t *ax = ct_op_get_ints(op, "axes", &na);
  if (!ax) ax = dflt, na = 3;
  unsigned mask = 0;
  int64_t groups = ct_tensor_numel(x);
  for (int i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + x->ndim : ax[i];
    if (a < 0 || a >= x->ndim || (mask >> a & 1u)) return ct_shape_nn_fail(d, op, "axes[%d] out of range or repeated", i);
    mask |= 1u << a;
    groups = x->shape[a] ? groups / x->shape[a] : 0;
  }
  int64_t n = ct_tensor_numel(x), per = groups ? n / groups : 0;
  double *acc = calloc((size_t)(2 * groups + 1), sizeof *acc);
  if (!acc) return ct_shape_nn_oom(d, op);
  const float *xp = x->data;
  float *y = out[0]->data;
  for (int64_t i = 0; i < n; i++) acc[mvn_key(i, x, mask)] += xp[i];
  for (int64_t gi = 0; gi < groups; gi++) acc[gi] /= (double)per;
  for (int64_t i = 0; i < n; i++) {
    int64_t k = mvn_key(i, x, mask);
    acc[groups + k] += (xp[i] - acc[k]) * (xp[i] - acc[k]);
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t k = mvn_key(i, x, mask);
    y[i] = (float)((xp[i] - acc[k]) / (sqrt(acc[groups + k] / (double)per) + 1e-9));
  }
  free(acc);
  return CT_OK;
}

/* LRN: y = x / (bias + alpha / size * sum of x^2 over channels c - floor((size-1)/2) ..
 * c + ceil((size-1)/2))^beta. */
ct_status ct_kern_lrn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  ct_status st = f32_same_shape(op, in, out, d);
  if (st) return st;
  const ct_tensor *x = in[0];
  int64_t size = ct_op_get_int(op, "size", 0);
  if (size < 1 || x->ndim < 2) return ct_shape_nn_fail(d, op, "attribute size must be >= 1 and rank >= 2");
  double alpha = ct_op_get_float(op, "alpha", 1e-4), beta = ct_op_get_float(op, "beta", 0.75);
  double bias = ct_op_get_float(op, "bias", 1.0);
  int64_t n = x->shape[0], c = x->shape[1], vol = n * c != 0 ? ct_tensor_numel(x) / (n * c) : 0;
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float *xp = x->data;
  float *y = out[0]->data;
  for (int64_t ni = 0; ni < n; ni++)
    for (int64_t ci = 0; ci < c; ci++)
      for (int64_t i = 0; i < vol; i++) {
        double s = 0;
        for (int64_t cc = ci - before; cc <= ci + after; cc++)
          if (cc >= 0 && cc < c) {
            double v = xp[(ni * c + cc) * vol + i];
            s += v * v;
          }
        int64_t o = (ni * c + ci) * vol + i;
        y[o] = (float)(xp[o] / pow(bias + alpha / (double)size * s, beta));
      }
  return CT_OK;
}
