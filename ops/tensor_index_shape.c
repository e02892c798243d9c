/* tensor_index_shape.c: shape functions of the indexing and generator ops — Gather-13,
 * GatherElements-13, GatherND-13, ScatterElements-18, ScatterND-18, Cast-13, CastLike-15,
 * ConstantOfShape-9, Range-11 (ONNX operator spec). */
#include <math.h>
#include <string.h>

#include "ops/shape_util.h"

static ct_status need_int_indices(const ct_op *op, const ct_value *v, ct_diag *d) {
  if (v->dtype != CT_I64 && v->dtype != CT_I32)
    return ct_km_err(d, CT_ERR_INPUT, op, "indices must be int32 or int64, got %s", ct_dtype_name(v->dtype));
  return CT_OK;
}

/* Gather: data[:axis] + indices.shape + data[axis+1:]; axis made positive. */
ct_status ct_shape_gather(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *i = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &i, d)) || (st = need_int_indices(op, i, d))) return st;
  int ax;
  int64_t axis = ct_attr_gather_axis(op), s[CT_MAX_DIMS];
  if (!ct_km_axis(axis, x->ndim, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  int r = x->ndim - 1 + i->ndim, n = 0;
  if (r > CT_MAX_DIMS) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: output rank %d", r);
  for (int k = 0; k < ax; k++) s[n++] = x->shape[k];
  for (int k = 0; k < i->ndim; k++) s[n++] = i->shape[k];
  for (int k = ax + 1; k < x->ndim; k++) s[n++] = x->shape[k];
  if (!ct_attr_set_gather_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_sm_out(op, 0, x->dtype, r, s);
  return CT_OK;
}

/* GatherElements / ScatterElements: indices of the data's rank; axis made positive. The
 * output has the shape of indices (Gather) or of data (Scatter, updates like indices). */
ct_status ct_shape_elements(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *i = NULL, *u = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &i, d)) || (st = need_int_indices(op, i, d))) return st;
  int ax;
  int64_t axis = ct_attr_gather_axis(op);
  if (!ct_km_axis(axis, x->ndim, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (i->ndim != x->ndim)
    return ct_km_err(d, CT_ERR_INPUT, op, "indices rank %d differs from data rank %d", i->ndim, x->ndim);
  bool scatter = op->kind == CT_OP_SCATTERELEMENTS;
  if (scatter) {
    if ((st = ct_sm_in(op, 2, &u, d))) return st;
    bool ok = u->ndim == i->ndim && u->dtype == x->dtype;
    for (int k = 0; ok && k < i->ndim; k++) ok = u->shape[k] == i->shape[k];
    if (!ok) return ct_km_err(d, CT_ERR_INPUT, op, "updates must have the shape of indices and the dtype of data");
    const char *red = ct_attr_scatter_reduction(op);
    if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min"))
      return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: reduction \"%s\"", red);
  }
  if (!ct_attr_set_gather_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  const ct_value *o = scatter ? x : i;
  ct_sm_out(op, 0, x->dtype, o->ndim, o->shape);
  return CT_OK;
}

/* GatherND-13: indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:]. */
ct_status ct_shape_gathernd(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL, *i = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &i, d)) || (st = need_int_indices(op, i, d))) return st;
  int64_t b = ct_attr_gathernd_batch_dims(op);
  if (i->ndim < 1) return ct_km_err(d, CT_ERR_INPUT, op, "indices must have rank >= 1");
  int64_t last = i->shape[i->ndim - 1];
  if (b < 0 || b >= i->ndim || b >= x->ndim || last < 0 || b + last > x->ndim)
    return ct_km_err(d, CT_ERR_INPUT, op, "batch_dims %lld / index depth %lld do not fit data rank %d",
                     (long long)b, (long long)last, x->ndim);
  for (int k = 0; k < b; k++)
    if (i->shape[k] != x->shape[k]) return ct_km_err(d, CT_ERR_INPUT, op, "batch dim %d differs", k);
  int64_t s[CT_MAX_DIMS];
  int n = 0;
  if (i->ndim - 1 + x->ndim - b - last > CT_MAX_DIMS) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: output rank");
  for (int k = 0; k < i->ndim - 1; k++) s[n++] = i->shape[k];
  for (int64_t k = b + last; k < x->ndim; k++) s[n++] = x->shape[k];
  ct_sm_out(op, 0, x->dtype, n, s);
  return CT_OK;
}

/* ScatterND-18: output like data; updates = indices.shape[:-1] + data.shape[q:]. */
ct_status ct_shape_scatternd(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL, *i = NULL, *u = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &i, d)) || (st = ct_sm_in(op, 2, &u, d)) || (st = need_int_indices(op, i, d)))
    return st;
  int64_t q = i->ndim ? i->shape[i->ndim - 1] : -1;
  bool ok = i->ndim >= 1 && q <= x->ndim && u->ndim == i->ndim - 1 + x->ndim - q && u->dtype == x->dtype;
  for (int k = 0; ok && k < i->ndim - 1; k++) ok = u->shape[k] == i->shape[k];
  for (int64_t k = q; ok && k < x->ndim; k++) ok = u->shape[i->ndim - 1 + k - q] == x->shape[k];
  if (!ok) return ct_km_err(d, CT_ERR_INPUT, op, "updates shape does not match indices and data");
  const char *red = ct_attr_scatter_reduction(op);
  if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min"))
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: reduction \"%s\"", red);
  ct_sm_out(op, 0, x->dtype, x->ndim, x->shape);
  return CT_OK;
}

/* Cast-13: attribute `to` (ONNX TensorProto.DataType). */
ct_status ct_shape_cast(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  ct_dtype dt;
  const ct_attr *to = ct_attr_raw_cast_to(op);
  if (!to) return ct_km_err(d, CT_ERR_INPUT, op, "attribute to is missing");
  if (!ct_dtype_from_onnx((int)to->i, &dt))
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: cast to ONNX data type %lld", (long long)to->i);
  ct_sm_out(op, 0, dt, x->ndim, x->shape);
  return CT_OK;
}

/* CastLike-15: the dtype of input 1. */
ct_status ct_shape_castlike(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL, *y = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &y, d))) return st;
  ct_sm_out(op, 0, y->dtype, x->ndim, x->shape);
  return CT_OK;
}

/* ConstantOfShape-9: shape input constant 1-D int64; dtype from value_dtype (default f32). */
ct_status ct_shape_constantofshape(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  const ct_tensor *t;
  int64_t s[CT_MAX_DIMS];
  int n;
  ct_status st = ct_sm_const(op, 0, "shape", &t, d);
  if (st) return st;
  if (!t) return ct_km_err(d, CT_ERR_INPUT, op, "input 0 (shape) is missing");
  if ((st = ct_km_ints(op, t, "shape", CT_MAX_DIMS, s, &n, d))) return st;
  for (int i = 0; i < n; i++)
    if (s[i] < 0) return ct_km_err(d, CT_ERR_INPUT, op, "shape[%d] = %lld is negative", i, (long long)s[i]);
  ct_dtype dt = CT_F32;
  const ct_attr *vd = ct_attr_raw_constantofshape_value_dtype(op);
  if (vd && !ct_dtype_from_onnx((int)vd->i, &dt))
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: value of ONNX data type %lld", (long long)vd->i);
  ct_sm_out(op, 0, dt, n, s);
  return CT_OK;
}

/* Range-11: n = max(ceil((limit - start) / delta), 0) elements of start's dtype. */
ct_status ct_shape_range(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  const ct_tensor *t[3];
  static const char *const what[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; i++) {
    ct_status st = ct_sm_const(op, i, what[i], &t[i], d);
    if (st) return st;
    if (!t[i] || ct_tensor_numel(t[i]) != 1) return ct_km_err(d, CT_ERR_INPUT, op, "%s must be a scalar", what[i]);
    if (t[i]->dtype != t[0]->dtype) return ct_km_err(d, CT_ERR_INPUT, op, "%s dtype differs from start", what[i]);
  }
  int64_t n;
  if (ct_dtype_is_float(t[0]->dtype)) {
    double s = ct_tensor_get_f64(t[0], 0), l = ct_tensor_get_f64(t[1], 0), dl = ct_tensor_get_f64(t[2], 0);
    double c = ceil((l - s) / dl);
    if (dl == 0 || !isfinite(c)) return ct_km_err(d, CT_ERR_INPUT, op, "delta is 0 or the range is not finite");
    n = c > 0 ? (int64_t)c : 0;
  } else {
    int64_t s = ct_km_get_i64(t[0], 0), l = ct_km_get_i64(t[1], 0), dl = ct_km_get_i64(t[2], 0);
    if (dl == 0) return ct_km_err(d, CT_ERR_INPUT, op, "delta is 0");
    n = dl > 0 ? (l > s ? (l - s + dl - 1) / dl : 0) : (s > l ? (s - l + (-dl) - 1) / (-dl) : 0);
  }
  ct_sm_out(op, 0, t[0]->dtype, 1, &n);
  return CT_OK;
}
