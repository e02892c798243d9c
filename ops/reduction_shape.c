/* reduction_shape.c: shape functions of the reductions (Reduce*-18), ArgMax/ArgMin-13, TopK-11
 * and QuantizeLinear/DequantizeLinear-19 (ONNX operator spec). Kept apart from reduction.c
 * while the harden branch edits ct_shape_qdq; CumSum, Trilu and ReverseSequence use
 * ct_shape_same (math_unary.c). */
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
  if ((st = ct_ops_reduce_axes(op, x->ndim, axes, red, &noop, d))) return st;
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
  if (!ct_ops_axis(axis, x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  bool red[CT_MAX_DIMS] = {false};
  red[ax] = true;
  reduced_shape(x, red, ct_attr_arg_keepdims(op) != 0, &n, s);
  if (!ct_attr_set_arg_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
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
  if (!ct_ops_axis(axis, x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (nk != 1 || k[0] < 0 || k[0] > x->shape[ax])
    return ct_ops_err(d, CT_ERR_INPUT, op, "k must be one value in [0, %lld]", (long long)x->shape[ax]);
  int64_t s[CT_MAX_DIMS];
  memcpy(s, x->shape, sizeof s);
  s[ax] = k[0];
  if (!ct_attr_set_topk_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  ct_sm_out(op, 1, CT_I64, x->ndim, s);
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
  if (s->ndim > 1) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: blocked quantization (scale rank %d)", s->ndim);
  if (s->ndim == 1 && ns != 1) {
    int64_t axis = ct_attr_qdq_axis(op);
    if (!ct_ops_axis(axis, x->ndim, &ax) || x->shape[ax] != ns)
      return ct_ops_err(d, CT_ERR_INPUT, op, "scale has %lld entries, not dim %lld of the input", (long long)ns, (long long)axis);
    if (!ct_attr_set_qdq_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  }
  if (z && (z->ndim < 0 || ct_value_numel(z) != ns))
    return ct_ops_err(d, CT_ERR_INPUT, op, "zero point must have the scale's %lld entries", (long long)ns);
  if (!ct_dtype_is_float(s->dtype)) return ct_ops_err(d, CT_ERR_INPUT, op, "scale must be float");
  ct_dtype out = s->dtype;
  if (op->kind == CT_OP_QUANTIZELINEAR) {
    out = z ? z->dtype : CT_U8;
    if (!ct_ops_is_int(out) || ct_dtype_size(out) > 4)
      return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: quantized type %s", ct_dtype_name(out));
  } else if (!ct_ops_is_int(x->dtype) || ct_dtype_size(x->dtype) > 4) {
    /* ONNX type constraint T1 of DequantizeLinear: int8, uint8, int32 (+ 16-bit in opset 21) */
    return ct_ops_err(d, CT_ERR_INPUT, op, "input 0 (x) must be an integer type (int8, uint8, int16, int32), not %s",
                     ct_dtype_name(x->dtype));
  } else if (z && (!ct_ops_is_int(z->dtype) || ct_dtype_size(z->dtype) > 4)) {
    return ct_ops_err(d, CT_ERR_INPUT, op, "input 2 (x_zero_point) must be an integer type like x, not %s",
                     ct_dtype_name(z->dtype));
  } else if (z && z->dtype != x->dtype) {
    return ct_ops_err(d, CT_ERR_INPUT, op, "zero point dtype %s differs from input %s", ct_dtype_name(z->dtype),
                     ct_dtype_name(x->dtype));
  }
  ct_sm_out(op, 0, out, x->ndim, x->shape);
  return CT_OK;
}
