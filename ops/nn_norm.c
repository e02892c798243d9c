/* nn_norm.c: ONNX nn family, normalizations: shape functions and float32 kernels of
 * BatchNormalization (inference form), InstanceNormalization, LayerNormalization (+ Mean /
 * InvStdDev), MeanVarianceNormalization and LRN. Formulas from the ONNX spec
 * (BatchNormalization-15, InstanceNormalization-6, LayerNormalization-17 with population
 * variance, MVN-13 function body with epsilon 1e-9, LRN-13); sums in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn_util.h"
#include "ops/shape.h"
#include "ops/nn_shape_util.h"

/* Checks every present input and output 0 is f32 and output 0 has input 0's shape. */
static ct_status f32_same_shape(const ct_op *op, ct_tensor *const *in, ct_tensor **out, ct_diag *d) {
  ct_status st;
  for (int i = 0; i < op->n_in; i++)
    if (in[i] && (st = ct_nn_need(op, in[i], CT_F32, i ? "a parameter input" : "input X", d))) return st;
  if (!in[0]) return ct_shape_nn_fail(d, op, "input X is missing");
  if ((st = ct_nn_need(op, out[0], CT_F32, "output Y", d))) return st;
  return ct_nn_check_shape(op, out[0], in[0]->ndim, in[0]->shape, d);
}

/* X with its shape split for the per-channel norms: N, C and the volume of one (n, c) plane
 * (n = c = vol = 0 when X has rank < 2). */
typedef struct norm_x {
  const ct_tensor *x;
  int64_t n, c, vol;
} norm_x;

/* Body of one norm kernel, called by norm_run after the common checks. */
typedef ct_status (*norm_body)(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const norm_x *g,
                               ct_diag *d);

/* Runs body after f32_same_shape and, when min_rank >= 2, a check that X has that rank; the
 * kernels need no context (single-threaded). */
static ct_status norm_run(const ct_op *op, ct_tensor *const *in, ct_tensor **out, int min_rank, norm_body body,
                          ct_diag *d) {
  ct_status st = f32_same_shape(op, in, out, d);
  if (st) return st;
  norm_x g = {.x = in[0]};
  if (g.x->ndim < min_rank) return ct_shape_nn_fail(d, op, "input must have rank >= %d", min_rank);
  if (g.x->ndim >= 2) {
    g.n = g.x->shape[0], g.c = g.x->shape[1];
    g.vol = g.n * g.c != 0 ? ct_tensor_numel(g.x) / (g.n * g.c) : 0;
  }
  return body(op, in, out, &g, d);
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
static ct_status batchnorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const norm_x *g, ct_diag *d) {
  ct_status st;
  int64_t n = g->n, c = g->c, vol = g->vol;
  for (int i = 1; i < 5; i++)
    if ((st = need_len(op, in, i, c, d))) return st;
  if (ct_attr_batchnorm_training_mode(op)) return ct_shape_nn_fail(d, op, "unsupported training_mode = 1");
  double eps = ct_attr_batchnorm_epsilon(op);
  const float *sc = in[1]->data, *b = in[2]->data, *mean = in[3]->data, *var = in[4]->data, *xp = g->x->data;
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

ct_status ct_kern_batchnorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  return norm_run(op, in, out, 2, batchnorm, d);
}

/* Normalizes one row of n floats: y[i] = (x[i] - mean) * is * s[i % ns] + (b ? b[i % nb] : 0)
 * with population variance and is = 1 / sqrt(var + eps), all in double; stores mean and is
 * in stat[0], stat[1]. */
static void norm_row(const float *x, float *y, int64_t n, double eps, const float *s, int64_t ns, const float *b,
                     int64_t nb, double stat[2]) {
  double sum = 0, q = 0;
  for (int64_t i = 0; i < n; i++) sum += x[i];
  double m = n ? sum / (double)n : 0;
  for (int64_t i = 0; i < n; i++) q += (x[i] - m) * (x[i] - m);
  double is = 1.0 / sqrt((n ? q / (double)n : 0) + eps);
  for (int64_t i = 0; i < n; i++) y[i] = (float)((x[i] - m) * is * s[i % ns] + (b ? b[i % nb] : 0.0));
  stat[0] = m;
  stat[1] = is;
}

/* InstanceNormalization: per (n, c) plane, y = scale (x - mean) / sqrt(var + epsilon) + B. */
static ct_status instancenorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const norm_x *g,
                              ct_diag *d) {
  ct_status st;
  int64_t c = g->c, vol = g->vol;
  if ((st = need_len(op, in, 1, c, d)) || (st = need_len(op, in, 2, c, d))) return st;
  double eps = ct_attr_instancenorm_epsilon(op), stat[2];
  const float *sc = in[1]->data, *b = in[2]->data;
  for (int64_t p = 0; p < g->n * c; p++)
    norm_row((const float *)g->x->data + p * vol, (float *)out[0]->data + p * vol, vol, eps, sc + p % c, 1,
             b + p % c, 1, stat);
  return CT_OK;
}

ct_status ct_kern_instancenorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d) {
  (void)ctx;
  return norm_run(op, in, out, 2, instancenorm, d);
}

/* LayerNormalization: per row of dims [axis, rank), population variance, optional Mean and
 * InvStdDev outputs. */
static ct_status layernorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const norm_x *g, ct_diag *d) {
  ct_status st;
  const ct_tensor *x = g->x, *sc = op->n_in > 1 ? in[1] : NULL, *b = op->n_in > 2 ? in[2] : NULL;
  int64_t axis = ct_attr_layernorm_axis(op);
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
      if ((st = ct_nn_need(op, out[k], CT_F32, "output Mean/InvStdDev", d))) return st;
      if (ct_tensor_numel(out[k]) != outer) return ct_shape_nn_fail(d, op, "output %d has the wrong size", k);
      stat[k - 1] = out[k]->data;
    }
  double eps = ct_attr_layernorm_epsilon(op);
  const float *s = sc->data, *bb = b ? b->data : NULL;
  for (int64_t r = 0; r < outer; r++) {
    double ms[2];
    norm_row((const float *)x->data + r * inner, (float *)out[0]->data + r * inner, inner, eps, s, ns, bb, nb, ms);
    if (stat[0]) stat[0][r] = (float)ms[0];
    if (stat[1]) stat[1][r] = (float)ms[1];
  }
  return CT_OK;
}

ct_status ct_kern_layernorm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  return norm_run(op, in, out, 0, layernorm, d);
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
static ct_status mvn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const norm_x *g, ct_diag *d) {
  (void)in;
  const ct_tensor *x = g->x;
  int na = 0;
  const int64_t *ax = ct_attr_mvn_axes(op, &na);
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

ct_status ct_kern_mvn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  return norm_run(op, in, out, 0, mvn, d);
}

/* LRN: y = x / (bias + alpha / size * sum of x^2 over channels c - floor((size-1)/2) ..
 * c + ceil((size-1)/2))^beta. */
static ct_status lrn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const norm_x *g, ct_diag *d) {
  (void)in;
  int64_t size = ct_attr_lrn_size(op);
  if (size < 1) return ct_shape_nn_fail(d, op, "attribute size must be >= 1");
  double alpha = ct_attr_lrn_alpha(op), beta = ct_attr_lrn_beta(op);
  double bias = ct_attr_lrn_bias(op);
  int64_t n = g->n, c = g->c, vol = g->vol;
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float *xp = g->x->data;
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

ct_status ct_kern_lrn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  return norm_run(op, in, out, 2, lrn, d);
}

/* ---- shape functions ---- */

/* The output has the input's type and shape. */
static ct_status same_as_input(ct_op *op, ct_diag *d) {
  const ct_value *x = op->in[0];
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, x->shape, d);
}

/* Checks input i is a 1-D tensor of n elements. */
static ct_status need_vec(const ct_op *op, int i, int64_t n, const char *what, ct_diag *d) {
  ct_status st = ct_shape_nn_input(op, i, 1, d);
  if (st) return st;
  if (ct_value_numel(op->in[i]) != n || op->in[i]->ndim != 1)
    return ct_shape_nn_fail(d, op, "%s (input %d) must have shape [%lld]", what, i, (long long)n);
  return CT_OK;
}

/* BatchNormalization, inference form (ONNX BatchNormalization-15, training_mode 0): scale, B,
 * input_mean, input_var are [C]; Y has X's shape. Training mode or its extra outputs are
 * "unsupported" (CT_ERR_INPUT). */
ct_status ct_shape_batchnorm(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  static const char *const names[] = {"", "scale", "B", "input_mean", "input_var"};
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 2, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  for (int i = 1; i < 5; i++)
    if ((st = need_vec(op, i, op->in[0]->shape[1], names[i], d))) return st;
  if (ct_attr_batchnorm_training_mode(op))
    return ct_shape_nn_fail(d, op, "unsupported training_mode = 1");
  for (int i = 1; i < op->n_out; i++)
    if (op->out[i]) return ct_shape_nn_fail(d, op, "unsupported training output %d", i);
  return same_as_input(op, d);
}

/* InstanceNormalization (ONNX-6): scale and B are [C]; Y has X's shape. */
ct_status ct_shape_instancenorm(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 2, d)) || (st = ct_shape_nn_float_input(op, 0, d)) ||
      (st = need_vec(op, 1, op->in[0]->shape[1], "scale", d)) ||
      (st = need_vec(op, 2, op->in[0]->shape[1], "B", d)))
    return st;
  return same_as_input(op, d);
}

/* True when v's shape, without leading 1s, is a suffix of shape[from..ndim) (the broadcast
 * the LayerNormalization kernel implements). */
static bool suffix_broadcasts(const ct_value *v, int ndim, const int64_t *shape, int from) {
  int lead = 0;
  while (lead < v->ndim && v->shape[lead] == 1) lead++;
  int rest = v->ndim - lead;
  if (rest > ndim - from) return false;
  for (int i = 0; i < rest; i++)
    if (v->shape[lead + i] != shape[ndim - rest + i]) return false;
  return true;
}

/* LayerNormalization (ONNX-17): normalizes dims [axis, rank); Scale/B must broadcast to them
 * (their shape without leading 1s a suffix of X's); writes a positive axis; optional Mean and
 * InvStdDev (f32) have X's shape with dims >= axis set to 1. */
ct_status ct_shape_layernorm(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 1, d)) || (st = ct_shape_nn_input(op, 1, 0, d)) ||
      (st = ct_shape_nn_float_input(op, 0, d)))
    return st;
  const ct_value *x = op->in[0];
  int64_t axis = ct_attr_layernorm_axis(op);
  if (axis < -x->ndim || axis >= x->ndim)
    return ct_shape_nn_fail(d, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (axis < 0) axis += x->ndim;
  for (int i = 1; i < op->n_in && i < 3; i++)
    if (op->in[i] && !suffix_broadcasts(op->in[i], x->ndim, x->shape, (int)axis))
      return ct_shape_nn_fail(d, op, "input %d does not broadcast to the normalized dims", i);
  if (!ct_attr_set_layernorm_axis(g, op, axis)) return ct_shape_nn_oom(d, op);
  int64_t shape[CT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) shape[i] = i < axis ? x->shape[i] : 1;
  if ((st = same_as_input(op, d)) || (st = ct_shape_nn_set_out(op, 1, CT_F32, x->ndim, shape, d)))
    return st;
  return ct_shape_nn_set_out(op, 2, CT_F32, x->ndim, shape, d);
}

/* MeanVarianceNormalization (ONNX-13): axes (default from ir/ops.def) written explicit and positive. */
ct_status ct_shape_mvn(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 1, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  const ct_value *x = op->in[0];
  int n = 0;
  const int64_t *ax = ct_attr_mvn_axes(op, &n);
  int64_t axes[CT_MAX_DIMS];
  unsigned seen = 0;
  if (n > x->ndim) return ct_shape_nn_fail(d, op, "attribute axes has %d values for rank %d", n, x->ndim);
  for (int i = 0; i < n; i++) {
    axes[i] = ax[i] < 0 ? ax[i] + x->ndim : ax[i];
    if (axes[i] < 0 || axes[i] >= x->ndim || (seen >> axes[i] & 1u))
      return ct_shape_nn_fail(d, op, "axes[%d] = %lld is out of range or repeated", i, (long long)ax[i]);
    seen |= 1u << axes[i];
  }
  if (!ct_attr_set_mvn_axes(g, op, n, axes)) return ct_shape_nn_oom(d, op);
  return same_as_input(op, d);
}

/* LRN (ONNX-13): attribute size >= 1; Y has X's shape (N, C, ...). */
ct_status ct_shape_lrn(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 2, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  if (ct_attr_lrn_size(op) < 1) return ct_shape_nn_fail(d, op, "attribute size must be >= 1");
  return same_as_input(op, d);
}
