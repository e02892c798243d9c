/* reduction_shape.c: shape functions of the reductions (Reduce*-18), ArgMax/ArgMin-13,
 * TopK-11, CumSum-14, Trilu-14, OneHot-11, Compress-11, EyeLike-9, ReverseSequence-10,
 * NonZero-13, QuantizeLinear/DequantizeLinear-19 (ONNX operator spec). */
#include <string.h>

#include "ops/shape_util.h"

/* Output dims of a reduction over reduce[] with keepdims. */
static void reduced_shape(const ct_value *x, const bool *reduce, bool keep, int *n, int64_t *s) {
  *n = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (!reduce[i]) s[(*n)++] = x->shape[i];
    else if (keep) s[(*n)++] = 1;
  }
}

/* Reduce*: axes input constant (absent/empty = all, or none with noop_with_empty_axes). */
ct_status ct_shape_reduce(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  const ct_tensor *axes;
  bool red[CT_MAX_DIMS], noop;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_const(op, 1, "axes", &axes, d))) return st;
  if ((st = ct_km_reduce_axes(op, x->ndim, axes, red, &noop, d))) return st;
  int n;
  int64_t s[CT_MAX_DIMS];
  reduced_shape(x, red, ct_attr_reduce_keepdims(op) != 0, &n, s);
  ct_sm_out(op, 0, x->dtype, n, s);
  return CT_OK;
}

/* ArgMax / ArgMin: int64 indices; axis made positive. */
ct_status ct_shape_arg(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  int ax, n;
  int64_t axis = ct_attr_arg_axis(op), s[CT_MAX_DIMS];
  if (!ct_km_axis(axis, x->ndim, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  bool red[CT_MAX_DIMS] = {false};
  red[ax] = true;
  reduced_shape(x, red, ct_attr_arg_keepdims(op) != 0, &n, s);
  if (!ct_attr_set_arg_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_sm_out(op, 0, CT_I64, n, s);
  return CT_OK;
}

/* TopK: k (constant, 1 element) <= dim; values like X, indices int64. */
ct_status ct_shape_topk(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL;
  int64_t k[1];
  int nk, ax;
  ct_status st = ct_sm_in_ints(op, &x, "k", 1, k, &nk, d);
  if (st) return st;
  int64_t axis = ct_attr_topk_axis(op);
  if (!ct_km_axis(axis, x->ndim, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (nk != 1 || k[0] < 0 || k[0] > x->shape[ax])
    return ct_km_err(d, CT_ERR_INPUT, op, "k must be one value in [0, %lld]", (long long)x->shape[ax]);
  int64_t s[CT_MAX_DIMS];
  memcpy(s, x->shape, sizeof s);
  s[ax] = k[0];
  if (!ct_attr_set_topk_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  ct_sm_out(op, 1, CT_I64, x->ndim, s);
  return CT_OK;
}

/* OneHot: output rank r+1 with depth inserted at axis (default -1); dtype of values. */
ct_status ct_shape_onehot(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *v = NULL;
  const ct_tensor *dt;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 2, &v, d)) || (st = ct_sm_const(op, 1, "depth", &dt, d))) return st;
  if (!dt || ct_tensor_numel(dt) != 1) return ct_km_err(d, CT_ERR_INPUT, op, "depth must be a scalar");
  if (ct_value_numel(v) != 2) return ct_km_err(d, CT_ERR_INPUT, op, "values must have 2 elements");
  int64_t depth = (int64_t)ct_tensor_get_f64(dt, 0), axis = ct_attr_onehot_axis(op), s[CT_MAX_DIMS];
  int r = x->ndim + 1, ax;
  if (depth < 1) return ct_km_err(d, CT_ERR_INPUT, op, "depth %lld must be positive", (long long)depth);
  if (r > CT_MAX_DIMS || !ct_km_axis(axis, r, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for output rank %d", (long long)axis, r);
  for (int i = 0, k = 0; i < r; i++) s[i] = i == ax ? depth : x->shape[k++];
  if (!ct_attr_set_onehot_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_sm_out(op, 0, v->dtype, r, s);
  return CT_OK;
}

/* Compress: the output length is the number of true conditions (within the axis length),
 * so the condition must be constant. */
ct_status ct_shape_compress(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  const ct_tensor *c;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_const(op, 1, "condition", &c, d))) return st;
  if (!c || c->ndim != 1) return ct_km_err(d, CT_ERR_INPUT, op, "condition must be 1-D");
  const ct_attr *a = ct_attr_raw_compress_axis(op);
  int ax = -1;
  if (a && !ct_km_axis(a->i, x->ndim, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)a->i, x->ndim);
  int64_t len = ax < 0 ? ct_value_numel(x) : x->shape[ax], cnt = 0, s[CT_MAX_DIMS];
  if (c->shape[0] > len) return ct_km_err(d, CT_ERR_INPUT, op, "condition is longer than the input");
  for (int64_t i = 0; i < c->shape[0]; i++) cnt += ct_tensor_get_f64(c, i) != 0;
  if (ax < 0) {
    ct_sm_out(op, 0, x->dtype, 1, &cnt);
    return CT_OK;
  }
  memcpy(s, x->shape, sizeof s);
  s[ax] = cnt;
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  return CT_OK;
}

/* EyeLike: 2-D like the input; dtype attribute (ONNX data type) or the input's. */
ct_status ct_shape_eyelike(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  if (x->ndim != 2) return ct_km_err(d, CT_ERR_INPUT, op, "input must be 2-D");
  ct_dtype dt = x->dtype;
  const ct_attr *a = ct_attr_raw_eyelike_dtype(op);
  if (a && !ct_dtype_from_onnx((int)a->i, &dt))
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: ONNX data type %lld", (long long)a->i);
  ct_sm_out(op, 0, dt, 2, x->shape);
  return CT_OK;
}

/* NonZero: [rank, count] int64, computable only from constant data. */
ct_status ct_shape_nonzero(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  if (!ct_value_is_const(x)) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape");
  int64_t n = ct_tensor_numel(x->data), s[2] = {x->ndim, 0};
  for (int64_t i = 0; i < n; i++) s[1] += ct_tensor_get_f64(x->data, i) != 0;
  ct_sm_out(op, 0, CT_I64, 2, s);
  return CT_OK;
}

/* QuantizeLinear (output dtype = zero point's, default u8) / DequantizeLinear (output =
 * scale's float dtype): per-tensor scale or 1-D per-axis scale of dim[axis] entries. */
ct_status ct_shape_qdq(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *s = NULL, *z = op->n_in > 2 ? op->in[2] : NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &s, d))) return st;
  int ax = 0;
  int64_t ns = ct_value_numel(s);
  if (s->ndim > 1) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: blocked quantization (scale rank %d)", s->ndim);
  if (s->ndim == 1 && ns != 1) {
    int64_t axis = ct_attr_qdq_axis(op);
    if (!ct_km_axis(axis, x->ndim, &ax) || x->shape[ax] != ns)
      return ct_km_err(d, CT_ERR_INPUT, op, "scale has %lld entries, not dim %lld of the input", (long long)ns, (long long)axis);
    if (!ct_attr_set_qdq_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  }
  if (z && (z->ndim < 0 || ct_value_numel(z) != ns))
    return ct_km_err(d, CT_ERR_INPUT, op, "zero point must have the scale's %lld entries", (long long)ns);
  if (!ct_dtype_is_float(s->dtype)) return ct_km_err(d, CT_ERR_INPUT, op, "scale must be float");
  ct_dtype out = s->dtype;
  if (op->kind == CT_OP_QUANTIZELINEAR) {
    out = z ? z->dtype : CT_U8;
    if (!ct_km_is_int(out) || ct_dtype_size(out) > 4)
      return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: quantized type %s", ct_dtype_name(out));
  } else if (z && z->dtype != x->dtype) {
    return ct_km_err(d, CT_ERR_INPUT, op, "zero point dtype %s differs from input %s", ct_dtype_name(z->dtype),
                     ct_dtype_name(x->dtype));
  }
  ct_sm_out(op, 0, out, x->ndim, x->shape);
  return CT_OK;
}
