/* reduction.c: ONNX reduction family: float kernels of the ten Reduce* ops (Reduce*-18: init /
 * accumulate / finish per op, double accumulators, empty reductions give the identity),
 * ArgMax/ArgMin-13 (first extreme unless select_last_index), TopK-11 (math; ties by lower
 * index) and CumSum-14 (math; exclusive, reverse). Shape functions: reduction_shape.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_util.h"
#include "ops/kernel.h"

typedef struct red_entry {
  ct_op_kind kind;
  double init;
  double (*acc)(double a, double x);
  double (*fin)(double a, int64_t n);
} red_entry;

static double a_sum(double a, double x) { return a + x; }
static double a_abs(double a, double x) { return a + fabs(x); }
static double a_sq(double a, double x) { return a + x * x; }
static double a_prod(double a, double x) { return a * x; }
static double a_max(double a, double x) { return isnan(a) || isnan(x) ? NAN : x > a ? x : a; }
static double a_min(double a, double x) { return isnan(a) || isnan(x) ? NAN : x < a ? x : a; }
static double f_id(double a, int64_t n) { (void)n; return a; }
static double f_mean(double a, int64_t n) { return a / (double)n; }
static double f_sqrt(double a, int64_t n) { (void)n; return sqrt(a); }
static double f_log(double a, int64_t n) { (void)n; return log(a); }

static const red_entry red_table[] = {
    {CT_OP_REDUCESUM, 0, a_sum, f_id},       {CT_OP_REDUCEMEAN, 0, a_sum, f_mean},
    {CT_OP_REDUCEMAX, -INFINITY, a_max, f_id}, {CT_OP_REDUCEMIN, INFINITY, a_min, f_id},
    {CT_OP_REDUCEPROD, 1, a_prod, f_id},     {CT_OP_REDUCEL1, 0, a_abs, f_id},
    {CT_OP_REDUCEL2, 0, a_sq, f_sqrt},       {CT_OP_REDUCELOGSUM, 0, a_sum, f_log},
    {CT_OP_REDUCELOGSUMEXP, 0, a_sum, f_log}, {CT_OP_REDUCESUMSQUARE, 0, a_sq, f_id},
};

/* Output offset strides aligned to the input dims (0 on reduced dims). */
static void red_strides(const ct_tensor *x, const bool *red, int64_t *ost) {
  int64_t s = 1;
  for (int i = x->ndim - 1; i >= 0; i--) {
    ost[i] = red[i] ? 0 : s;
    if (!red[i]) s *= x->shape[i];
  }
}

/* acc[o] = e->acc(acc[o], f(x)) over every input element; f subtracts sub[o] then exp when
 * sub is given (the LogSumExp pass). */
static void red_pass(const ct_tensor *x, const int64_t *ost, const red_entry *e, double *acc, const double *sub) {
  int64_t n = ct_tensor_numel(x), idx[CT_MAX_DIMS] = {0}, o = 0;
  bool f32 = x->dtype == CT_F32;
  for (int64_t i = 0; i < n; i++) {
    double v = f32 ? ((const float *)x->data)[i] : ct_tensor_get_f64(x, i);
    if (sub) v = exp(v - sub[o]);
    acc[o] = e->acc(acc[o], v);
    for (int k = x->ndim - 1; k >= 0; k--) {
      o += ost[k];
      if (++idx[k] < x->shape[k]) break;
      o -= ost[k] * x->shape[k];
      idx[k] = 0;
    }
  }
}

/* Reduce*-18: one accumulator per output element; LogSumExp first finds the max per output
 * and sums exp(x - max) for stability. */
ct_status ct_kern_reduce(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  const red_entry *e = NULL;
  for (size_t i = 0; i < sizeof red_table / sizeof red_table[0]; i++)
    if (red_table[i].kind == op->kind) e = &red_table[i];
  bool red[CT_MAX_DIMS], noop;
  ct_status st = ct_ops_reduce_axes(op, x->ndim, op->n_in > 1 ? in[1] : NULL, red, &noop, d);
  if (st) return st;
  if (!e) return ct_ops_err(d, CT_ERR_INTERNAL, op, "no reduction");
  int64_t ost[CT_MAX_DIMS], no = ct_tensor_numel(y), cnt = 1;
  for (int i = 0; i < x->ndim; i++) cnt *= red[i] ? x->shape[i] : 1;
  red_strides(x, red, ost);
  double *acc = malloc((size_t)(no ? no : 1) * sizeof *acc), *mx = NULL;
  if (!acc) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  bool lse = op->kind == CT_OP_REDUCELOGSUMEXP;
  if (lse && !(mx = malloc((size_t)(no ? no : 1) * sizeof *mx))) {
    free(acc);
    return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  }
  if (lse) {
    for (int64_t o = 0; o < no; o++) mx[o] = -INFINITY;
    red_pass(x, ost, &red_table[2], mx, NULL);
    for (int64_t o = 0; o < no; o++) mx[o] = isfinite(mx[o]) ? mx[o] : 0;
  }
  for (int64_t o = 0; o < no; o++) acc[o] = e->init;
  red_pass(x, ost, e, acc, mx);
  for (int64_t o = 0; o < no; o++) {
    double v = e->fin(acc[o], cnt) + (mx ? mx[o] : 0);
    if (ct_ops_is_int(y->dtype)) ct_ops_set_i64(y, o, ct_ops_trunc_i64(v));
    else ct_tensor_set_f64(y, o, v);
  }
  free(acc);
  free(mx);
  return CT_OK;
}

/* Splits x around axis: outer * n * inner. */
static void around(const ct_tensor *x, int ax, int64_t *outer, int64_t *n, int64_t *inner) {
  *outer = ct_shape_numel(ax, x->shape);
  *n = x->shape[ax];
  *inner = ct_shape_numel(x->ndim - ax - 1, x->shape + ax + 1);
}

/* ArgMax / ArgMin-13: int64 index of the extreme along axis (NaN never wins). */
ct_status ct_kern_arg(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  int ax;
  if (!ct_ops_axis(ct_attr_arg_axis(op), x->ndim, &ax)) return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis");
  int64_t outer, n, inner;
  around(x, ax, &outer, &n, &inner);
  if (n == 0) return ct_ops_err(d, CT_ERR_INPUT, op, "cannot take the arg of an empty axis");
  bool mx = op->kind == CT_OP_ARGMAX, last = ct_attr_arg_select_last_index(op) != 0;
  int64_t *py = out[0]->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t best = 0;
      double bv = ct_tensor_get_f64(x, o * n * inner + i);
      for (int64_t k = 1; k < n; k++) {
        double v = ct_tensor_get_f64(x, (o * n + k) * inner + i);
        bool better = mx ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
        if (better) best = k, bv = v;
      }
      py[o * inner + i] = best;
    }
  return CT_OK;
}

typedef ct_ops_vi vi;
int ct_ops_cmp_large(const void *a, const void *b) {
  const vi *p = a, *q = b;
  if (p->v != q->v) return p->v > q->v ? -1 : 1;
  return p->i < q->i ? -1 : p->i > q->i;
}
static int cmp_small(const void *a, const void *b) {
  const vi *p = a, *q = b;
  if (p->v != q->v) return p->v < q->v ? -1 : 1;
  return p->i < q->i ? -1 : p->i > q->i;
}

/* TopK-11: per line along axis, sort (value, index) pairs; ties keep the lower index first. */
ct_status ct_kern_topk(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  int ax;
  if (!ct_ops_axis(ct_attr_topk_axis(op), x->ndim, &ax)) return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis");
  int64_t outer, n, inner, k = out[0]->shape[ax];
  around(x, ax, &outer, &n, &inner);
  if (k > n) return ct_ops_err(d, CT_ERR_INPUT, op, "k %lld exceeds the axis length %lld", (long long)k, (long long)n);
  vi *buf = malloc((size_t)(n ? n : 1) * sizeof *buf);
  if (!buf) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  bool large = ct_attr_topk_largest(op) != 0;
  int64_t *pi = out[1]->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      for (int64_t j = 0; j < n; j++) buf[j] = (vi){ct_tensor_get_f64(x, (o * n + j) * inner + i), j};
      qsort(buf, (size_t)n, sizeof *buf, large ? ct_ops_cmp_large : cmp_small);
      for (int64_t j = 0; j < k; j++) {
        int64_t dst = (o * k + j) * inner + i;
        ct_tensor_set_f64(out[0], dst, buf[j].v);
        if (!ct_dtype_is_float(x->dtype)) ct_ops_set_i64(out[0], dst, ct_ops_get_i64(x, (o * n + buf[j].i) * inner + i));
        pi[dst] = buf[j].i;
      }
    }
  free(buf);
  return CT_OK;
}

/* CumSum-14: running sum along axis (from in[1]), exclusive and/or reverse. */
ct_status ct_kern_cumsum(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  int ax;
  if (!in[1] || ct_tensor_numel(in[1]) != 1 || !ct_ops_axis(ct_ops_get_i64(in[1], 0), x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis must be a scalar in range");
  int64_t outer, n, inner;
  around(x, ax, &outer, &n, &inner);
  bool excl = ct_attr_cumsum_exclusive(op) != 0, rev = ct_attr_cumsum_reverse(op) != 0;
  bool fl = ct_dtype_is_float(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double fa = 0;
      int64_t ia = 0;
      for (int64_t j = 0; j < n; j++) {
        int64_t k = rev ? n - 1 - j : j, at = (o * n + k) * inner + i;
        double fv = fl ? ct_tensor_get_f64(x, at) : 0;
        int64_t iv = fl ? 0 : ct_ops_get_i64(x, at);
        if (!excl) fa += fv, ia += iv;
        if (fl) ct_tensor_set_f64(y, at, fa);
        else ct_ops_set_i64(y, at, ia);
        if (excl) fa += fv, ia += iv;
      }
    }
  return CT_OK;
}
