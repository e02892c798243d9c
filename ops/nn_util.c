/* nn_util.c: helpers of the nn-family kernels (nn_util.h): window geometry from the canonical
 * attributes, fused activations, a parallel-for on the context's worker pool and the f32
 * detour for integer inputs of data-moving ops. */
#include "ops/nn_util.h"
#include "common/clones.h"

#include <cblas.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ct_status ct_nn_need(const ct_op *op, const ct_tensor *t, ct_dtype dt, const char *what, ct_diag *d) {
  if (!t) return ct_shape_nn_fail(d, op, "%s is missing", what);
  if (t->dtype != dt)
    return ct_shape_nn_fail(d, op, "unsupported dtype %s of %s (expected %s)", ct_dtype_name(t->dtype), what,
                      ct_dtype_name(dt));
  return CT_OK;
}

ct_status ct_nn_check_shape(const ct_op *op, const ct_tensor *out, int ndim, const int64_t *shape, ct_diag *d) {
  bool ok = out->ndim == ndim;
  for (int i = 0; ok && i < ndim; i++) ok = out->shape[i] == shape[i];
  if (ok) return CT_OK;
  char a[128], b[128];
  return ct_shape_nn_fail(d, op, "output has shape %s, expected %s", ct_shape_str(out->ndim, out->shape, a, sizeof a),
                    ct_shape_str(ndim, shape, b, sizeof b));
}

/* Reads an int list attribute (accessor get; n values, dflt each when absent) into out; false
 * on length mismatch. */
static bool read_ints(const ct_op *op, const int64_t *(*get)(const ct_op *, int *), int n, int64_t dflt,
                      int64_t *out) {
  int got = 0;
  const int64_t *v = get(op, &got);
  for (int i = 0; i < n; i++) out[i] = v ? (i < got ? v[i] : 0) : dflt;
  return !v || got == n;
}

ct_status ct_nn_geo_read(const ct_op *op, const ct_tensor *x, const ct_tensor *wk, const ct_tensor *y,
                         ct_nn_geo *g, ct_diag *d) {
  int n = x->ndim - 2;
  if (n < 1 || n > 3) return ct_shape_nn_fail(d, op, "unsupported %d spatial dims (1..3 supported)", n);
  if (y->ndim != x->ndim) return ct_shape_nn_fail(d, op, "output rank %d differs from input rank %d", y->ndim, x->ndim);
  const char *ap = ct_attr_window_auto_pad(op);
  if (strcmp(ap, "NOTSET") != 0) return ct_shape_nn_fail(d, op, "auto_pad %s not resolved (run shape inference)", ap);
  int64_t k[3], s[3], dl[3], p[6];
  bool ok = read_ints(op, ct_attr_window_strides, n, 1, s) && read_ints(op, ct_attr_window_dilations, n, 1, dl) &&
            read_ints(op, ct_attr_window_pads, 2 * n, 0, p);
  if (ct_attr_raw_window_kernel_shape(op) || !wk)
    ok = ok && ct_attr_raw_window_kernel_shape(op) && read_ints(op, ct_attr_window_kernel_shape, n, 1, k);
  else
    memcpy(k, wk->shape + 2, sizeof k[0] * (size_t)n);
  if (!ok) return ct_shape_nn_fail(d, op, "malformed kernel_shape/strides/dilations/pads");
  g->nsp = n;
  int off = 3 - n;
  for (int i = 0; i < 3; i++) {
    int j = i - off;
    g->in[i] = j >= 0 ? x->shape[2 + j] : 1;
    g->out[i] = j >= 0 ? y->shape[2 + j] : 1;
    g->k[i] = j >= 0 ? k[j] : 1;
    g->s[i] = j >= 0 ? s[j] : 1;
    g->dl[i] = j >= 0 ? dl[j] : 1;
    g->pb[i] = j >= 0 ? p[j] : 0;
    g->pe[i] = j >= 0 ? p[j + n] : 0;
    if (g->k[i] < 1 || g->s[i] < 1 || g->dl[i] < 1 || g->pb[i] < 0 || g->pe[i] < 0)
      return ct_shape_nn_fail(d, op, "invalid kernel/stride/dilation/pad in spatial dim %d", j);
  }
  return CT_OK;
}

ct_status ct_nn_act_parse(const ct_op *op, ct_nn_act *a, ct_diag *d) {
  static const struct {
    const char *name;
    bool leaky;
    float lo, hi;
  } acts[] = {{"none", false, -INFINITY, INFINITY}, {"relu", false, 0, INFINITY},
              {"relu6", false, 0, 6},               {"leaky_relu", true, -INFINITY, INFINITY},
              {"clip", false, -INFINITY, INFINITY}};
  const char *name = ct_attr_act_act(op);
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) {
    if (strcmp(name, acts[i].name) != 0) continue;
    a->none = i == 0;
    a->leaky = acts[i].leaky;
    a->alpha = (float)ct_attr_act_act_alpha(op);
    a->lo = ct_attr_has_act_act_min(op) ? (float)ct_attr_act_act_min(op) : acts[i].lo;
    a->hi = ct_attr_has_act_act_max(op) ? (float)ct_attr_act_act_max(op) : acts[i].hi;
    return CT_OK;
  }
  return ct_shape_nn_fail(d, op, "unsupported act \"%s\"", name);
}

/* Clamp of v to [lo, hi] written so that it compiles to maxps/minps. */
static inline float clampf(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* y = clamp(leaky(y + b)); one loop per case, in blocks of 8, so that GCC's -O2 (very-cheap
 * cost model) vectorizes them; leaky(v) = max(v, 0) + alpha min(v, 0). CT_CLONES_AVX2. */
CT_CLONES_AVX2 static void ct_nn_bias_act_clones(const ct_nn_act *a, float b, float *y, int64_t n) {
  const float lo = a->lo, hi = a->hi, al = a->alpha;
  int64_t m = n - n % 8, i;
  if (a->none) {
    if (b == 0.0f) return;
    for (i = 0; i < m; i += 8)
      for (int k = 0; k < 8; k++) y[i + k] += b;
    for (i = m; i < n; i++) y[i] += b;
  } else if (!a->leaky) {
    for (i = 0; i < m; i += 8)
      for (int k = 0; k < 8; k++) y[i + k] = clampf(y[i + k] + b, lo, hi);
    for (i = m; i < n; i++) y[i] = clampf(y[i] + b, lo, hi);
  } else {
    for (i = 0; i < m; i += 8)
      for (int k = 0; k < 8; k++) {
        float v = y[i + k] + b;
        y[i + k] = clampf((v > 0.0f ? v : 0.0f) + al * (v < 0.0f ? v : 0.0f), lo, hi);
      }
    for (i = m; i < n; i++) {
      float v = y[i] + b;
      y[i] = clampf((v > 0.0f ? v : 0.0f) + al * (v < 0.0f ? v : 0.0f), lo, hi);
    }
  }
}

void ct_nn_bias_act(const ct_nn_act *a, float b, float *y, int64_t n) { ct_nn_bias_act_clones(a, b, y, n); }

void ct_nn_act_apply(const ct_nn_act *a, float *x, int64_t n) { ct_nn_bias_act(a, 0.0f, x, n); }

void ct_nn_blas_threads(const ct_kernel_ctx *ctx) {
  (void)ctx;
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

int ct_nn_parallel_parts(const ct_kernel_ctx *ctx, int64_t n, int64_t work) {
  int t = ct_workpool_threads(ctx ? ctx->pool : NULL);
  return n >= 2 && work >= CT_NN_MIN_WORK ? t : 1;
}

void ct_nn_parallel(const ct_kernel_ctx *ctx, int64_t n, int64_t work, ct_workpool_fn fn, void *arg) {
  int t = ct_nn_parallel_parts(ctx, n, work);
  if (t <= 1) {
    if (n > 0) fn(arg, 0, n, 0);
    return;
  }
  ct_workpool_for(ctx->pool, n, 4 * (int64_t)t, fn, arg);
}

ct_status ct_nn_via_f32(ct_kernel_fn fn, const ct_op *op, ct_tensor *const *in, ct_tensor **out,
                        const ct_kernel_ctx *ctx, ct_diag *d) {
  enum { MAXIO = 8 };
  static const ct_dtype exact[] = {CT_F16, CT_BF16, CT_U8, CT_I8, CT_U16, CT_I16}; /* exact in f32 */
  bool ok = false;
  for (size_t k = 0; in[0] && k < sizeof exact / sizeof *exact; k++) ok = ok || in[0]->dtype == exact[k];
  if (!ok) return ct_shape_nn_fail(d, op, "unsupported dtype %s", in[0] ? ct_dtype_name(in[0]->dtype) : "(none)");
  if (op->n_in > MAXIO || op->n_out > MAXIO) return ct_shape_nn_fail(d, op, "too many operands");
  ct_tensor *fin[MAXIO] = {NULL}, *fout[MAXIO] = {NULL};
  ct_tensor *const *fin_c = fin;
  ct_status st = CT_OK;
  for (int i = 0; i < op->n_in; i++) fin[i] = in[i];
  fin[0] = ct_tensor_cast(in[0], CT_F32);
  ok = fin[0] != NULL;
  for (int i = 0; ok && i < op->n_out; i++) {
    fout[i] = out[i];
    if (out[i] && out[i]->dtype == in[0]->dtype) {
      fout[i] = ct_tensor_new(CT_F32, out[i]->ndim, out[i]->shape, NULL);
      ok = fout[i] != NULL;
    }
  }
  if (!ok) st = ct_shape_nn_oom(d, op);
  if (!st) st = fn(op, fin_c, fout, ctx, d);
  for (int i = 0; i < op->n_out; i++) {
    if (!fout[i] || fout[i] == out[i]) continue;
    if (!st) {
      int64_t n = ct_tensor_numel(out[i]);
      const float *f = fout[i]->data;
      for (int64_t j = 0; j < n; j++) ct_tensor_set_f64(out[i], j, f[j]);
    }
    ct_tensor_free(fout[i]);
  }
  ct_tensor_free(fin[0]);
  return st;
}
