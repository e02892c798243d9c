/* tensor_index.c: ONNX tensor/generator families, indexing and typed fills: shape functions
 * and kernels of Gather-13, GatherElements-13, GatherND-13, ScatterElements-18, ScatterND-18,
 * Cast-13 / CastLike-15, ConstantOfShape-9 and Range-11 (ONNX operator spec). Indices may be
 * negative (counted from the end); an index out of range is an error naming the node. */
#include <math.h>
#include <string.h>

#include "common/limits.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"

/* Normalized index k (from indices element i) into a dim of size n, or error. */
static ct_status norm_index(const ct_op *op, const ct_tensor *ind, int64_t i, int64_t n, int64_t *k, ct_diag *d) {
  int64_t v = ct_ops_get_i64(ind, i);
  if (v < -n || v >= n)
    return ct_ops_err(d, CT_ERR_INPUT, op, "index %lld at indices[%lld] is out of range [%lld, %lld]", (long long)v,
                     (long long)i, (long long)-n, (long long)(n - 1));
  *k = v < 0 ? v + n : v;
  return CT_OK;
}

/* Gather-13: y[o][j][i] = x[o][indices[j]][i] with x viewed as outer x dim x inner. */
ct_status ct_kern_gather(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *ind = in[1];
  int ax;
  if (!ct_ops_axis(ct_attr_gather_axis(op), x->ndim, &ax)) return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis");
  size_t es = ct_dtype_size(x->dtype);
  int64_t outer = ct_shape_numel(ax, x->shape), n = x->shape[ax];
  int64_t inner = ct_shape_numel(x->ndim - ax - 1, x->shape + ax + 1), ni = ct_tensor_numel(ind);
  if (ct_tensor_numel(out[0]) != outer * ni * inner) return ct_ops_err(d, CT_ERR_INPUT, op, "output size differs");
  size_t row = (size_t)inner * es;
  char *py = out[0]->data;
  for (int64_t j = 0; j < ni; j++) {
    int64_t k = 0;
    ct_status st = norm_index(op, ind, j, n, &k, d);
    if (st) return st;
    for (int64_t o = 0; o < outer; o++)
      memcpy(py + (size_t)(o * ni + j) * row, (const char *)x->data + (size_t)(o * n + k) * row, row);
  }
  return CT_OK;
}

/* Scatter reduction of one element: dst = red(dst, src); red 'n' none, 'a' add, 'm' mul,
 * 'x' max, 'i' min (ScatterElements-18 / ScatterND-18). */
static void scatter_one(ct_tensor *y, int64_t o, const ct_tensor *u, int64_t i, char red) {
  size_t es = ct_dtype_size(y->dtype);
  if (red == 'n') {
    memcpy((char *)y->data + (size_t)o * es, (const char *)u->data + (size_t)i * es, es);
  } else if (ct_dtype_is_float(y->dtype)) {
    double a = ct_tensor_get_f64(y, o), b = ct_tensor_get_f64(u, i);
    ct_tensor_set_f64(y, o, red == 'a' ? a + b : red == 'm' ? a * b : red == 'x' ? fmax(a, b) : fmin(a, b));
  } else {
    int64_t a = ct_ops_get_i64(y, o), b = ct_ops_get_i64(u, i);
    int64_t r = red == 'a' ? (int64_t)((uint64_t)a + (uint64_t)b) : red == 'm' ? (int64_t)((uint64_t)a * (uint64_t)b)
              : red == 'x' ? (a > b ? a : b) : (a < b ? a : b);
    ct_ops_set_i64(y, o, r);
  }
}

static char reduction_of(const ct_op *op) {
  const char *r = ct_attr_scatter_reduction(op);
  return strcmp(r, "max") == 0 ? 'x' : strcmp(r, "min") == 0 ? 'i' : r[0];
}

/* GatherElements (y = NULL-free gather) and ScatterElements: walk the indices tensor's
 * multi-index; the data offset replaces the axis coordinate by the index value. */
static ct_status elements(const ct_op *op, const ct_tensor *x, const ct_tensor *ind, const ct_tensor *upd,
                          ct_tensor *y, ct_diag *d) {
  int ax, nd = x->ndim;
  if (!ct_ops_axis(ct_attr_gather_axis(op), nd, &ax) || ind->ndim != nd)
    return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis or indices rank");
  int64_t st[CT_MAX_DIMS], idx[CT_MAX_DIMS] = {0}, n = ct_tensor_numel(ind);
  ct_ops_strides(nd, x->shape, st);
  size_t es = ct_dtype_size(x->dtype);
  char red = reduction_of(op);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = 0, off = 0;
    ct_status s = norm_index(op, ind, i, x->shape[ax], &k, d);
    if (s) return s;
    for (int j = 0; j < nd; j++) {
      if (j != ax && idx[j] >= x->shape[j]) return ct_ops_err(d, CT_ERR_INPUT, op, "indices shape exceeds data shape");
      off += (j == ax ? k : idx[j]) * st[j];
    }
    if (upd) scatter_one(y, off, upd, i, red);
    else memcpy((char *)y->data + (size_t)i * es, (const char *)x->data + (size_t)off * es, es);
    ct_ops_next_index(idx, nd, ind->shape);
  }
  return CT_OK;
}

/* GatherElements-13: y[idx] = x[idx with axis coordinate = indices[idx]]. */
ct_status ct_kern_gatherelements(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                 ct_diag *d) {
  (void)ctx;
  return elements(op, in[0], in[1], NULL, out[0], d);
}

/* ScatterElements-18: y = x, then y[idx with axis = indices[idx]] (reduction)= updates[idx]. */
ct_status ct_kern_scatterelements(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                  ct_diag *d) {
  (void)ctx;
  if (out[0]->nbytes != in[0]->nbytes) return ct_ops_err(d, CT_ERR_INPUT, op, "output size differs");
  memcpy(out[0]->data, in[0]->data, in[0]->nbytes);
  return elements(op, in[0], in[1], in[2], out[0], d);
}

/* GatherND (upd NULL) / ScatterND: for each batch b and index tuple m, the slice of
 * `slice` elements at data[b][idx tuple]. batch_dims only for GatherND. */
static ct_status nd_walk(const ct_op *op, const ct_tensor *x, const ct_tensor *ind, const ct_tensor *upd,
                         ct_tensor *y, ct_diag *d) {
  int64_t bd = upd ? 0 : ct_attr_gathernd_batch_dims(op), q = ind->shape[ind->ndim - 1];
  if (bd < 0 || q < 0 || bd + q > x->ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "index depth does not fit");
  int64_t nb = ct_shape_numel((int)bd, ind->shape), nm = ct_shape_numel(ind->ndim - 1 - (int)bd, ind->shape + bd);
  int64_t slice = ct_shape_numel(x->ndim - (int)(bd + q), x->shape + bd + q);
  int64_t bstride = ct_shape_numel(x->ndim - (int)bd, x->shape + bd), st[CT_MAX_DIMS];
  ct_ops_strides(x->ndim, x->shape, st);
  size_t es = ct_dtype_size(x->dtype);
  char red = reduction_of(op);
  for (int64_t b = 0; b < nb; b++) {
    for (int64_t m = 0; m < nm; m++) {
      int64_t off = b * bstride, t = (b * nm + m) * q;
      for (int64_t j = 0; j < q; j++) {
        int64_t k = 0;
        ct_status s = norm_index(op, ind, t + j, x->shape[bd + j], &k, d);
        if (s) return s;
        off += k * st[bd + j];
      }
      int64_t o = (b * nm + m) * slice;
      if (!upd) memcpy((char *)y->data + (size_t)o * es, (const char *)x->data + (size_t)off * es, (size_t)slice * es);
      else
        for (int64_t e = 0; e < slice; e++) scatter_one(y, off + e, upd, o + e, red);
    }
  }
  return CT_OK;
}

/* GatherND-13 with batch_dims: slices of x addressed by the last dim of indices. */
ct_status ct_kern_gathernd(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                           ct_diag *d) {
  (void)ctx;
  if (in[1]->ndim < 1) return ct_ops_err(d, CT_ERR_INPUT, op, "indices must have rank >= 1");
  return nd_walk(op, in[0], in[1], NULL, out[0], d);
}

/* ScatterND-18: y = x, then the addressed slices (reduction)= updates, in index order. */
ct_status ct_kern_scatternd(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  if (in[1]->ndim < 1 || out[0]->nbytes != in[0]->nbytes) return ct_ops_err(d, CT_ERR_INPUT, op, "bad indices or output");
  memcpy(out[0]->data, in[0]->data, in[0]->nbytes);
  return nd_walk(op, in[0], in[1], in[2], out[0], d);
}

/* Cast / CastLike. Rules (documented choice; ONNX leaves out-of-range float→int undefined):
 * float→int truncates toward zero then saturates to the target range, NaN → 0; int→int
 * wraps modulo 2^bits (C / numpy astype); anything→bool is v != 0; →float rounds to
 * nearest even. */
ct_status ct_kern_cast(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  int64_t n = ct_tensor_numel(x);
  if (ct_tensor_numel(y) != n) return ct_ops_err(d, CT_ERR_INPUT, op, "output size differs");
  bool xf = ct_dtype_is_float(x->dtype), yf = ct_dtype_is_float(y->dtype);
  for (int64_t i = 0; i < n; i++) {
    if (xf) {
      double v = ct_tensor_get_f64(x, i);
      if (y->dtype == CT_BOOL) ((uint8_t *)y->data)[i] = v != 0;
      else ct_tensor_set_f64(y, i, yf ? v : trunc(v));
    } else {
      int64_t v = ct_ops_get_i64(x, i);
      if (yf) ct_tensor_set_f64(y, i, x->dtype == CT_U64 ? (double)(uint64_t)v : (double)v);
      else ct_ops_set_i64(y, i, v);
    }
  }
  return CT_OK;
}

/* ConstantOfShape-9: every element = attribute value (INT or FLOAT; absent: 0). */
ct_status ct_kern_constantofshape(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                  ct_diag *d) {
  (void)in, (void)ctx, (void)d;
  ct_tensor *y = out[0];
  const ct_attr *a = ct_attr_raw_constantofshape_value(op);
  int64_t n = ct_tensor_numel(y);
  for (int64_t i = 0; i < n; i++) {
    if (a && a->kind == CT_ATTR_INT) ct_ops_set_i64(y, i, a->i);
    else ct_tensor_set_f64(y, i, a && a->kind == CT_ATTR_FLOAT ? a->f : 0);
  }
  return CT_OK;
}

/* Range: y[i] = start + i * delta. */
ct_status ct_kern_range(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)op, (void)ctx, (void)d;
  ct_tensor *y = out[0];
  int64_t n = ct_tensor_numel(y);
  for (int64_t i = 0; i < n; i++) {
    if (ct_dtype_is_float(y->dtype))
      ct_tensor_set_f64(y, i, ct_tensor_get_f64(in[0], 0) + (double)i * ct_tensor_get_f64(in[2], 0));
    else
      ct_ops_set_i64(y, i, ct_ops_get_i64(in[0], 0) + i * ct_ops_get_i64(in[2], 0));
  }
  return CT_OK;
}

/* ---- shape functions ---- */

static ct_status need_int_indices(const ct_op *op, const ct_value *v, ct_diag *d) {
  if (v->dtype != CT_I64 && v->dtype != CT_I32)
    return ct_ops_err(d, CT_ERR_INPUT, op, "indices must be int32 or int64, got %s", ct_dtype_name(v->dtype));
  return CT_OK;
}

/* Gather: data[:axis] + indices.shape + data[axis+1:]; axis made positive. */
ct_status ct_shape_gather(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *i = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &i, d)) || (st = need_int_indices(op, i, d))) return st;
  int ax;
  int64_t axis = ct_attr_gather_axis(op), s[CT_MAX_DIMS];
  if (!ct_ops_axis(axis, x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  int r = x->ndim - 1 + i->ndim, n = 0;
  if (r > CT_MAX_DIMS) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: output rank %d", r);
  for (int k = 0; k < ax; k++) s[n++] = x->shape[k];
  for (int k = 0; k < i->ndim; k++) s[n++] = i->shape[k];
  for (int k = ax + 1; k < x->ndim; k++) s[n++] = x->shape[k];
  if (!ct_attr_set_gather_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
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
  if (!ct_ops_axis(axis, x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (i->ndim != x->ndim)
    return ct_ops_err(d, CT_ERR_INPUT, op, "indices rank %d differs from data rank %d", i->ndim, x->ndim);
  bool scatter = op->kind == CT_OP_SCATTERELEMENTS;
  if (scatter) {
    if ((st = ct_sm_in(op, 2, &u, d))) return st;
    bool ok = u->ndim == i->ndim && u->dtype == x->dtype;
    for (int k = 0; ok && k < i->ndim; k++) ok = u->shape[k] == i->shape[k];
    if (!ok) return ct_ops_err(d, CT_ERR_INPUT, op, "updates must have the shape of indices and the dtype of data");
    const char *red = ct_attr_scatter_reduction(op);
    if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min"))
      return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: reduction \"%s\"", red);
  }
  if (!ct_attr_set_gather_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
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
  if (i->ndim < 1) return ct_ops_err(d, CT_ERR_INPUT, op, "indices must have rank >= 1");
  int64_t last = i->shape[i->ndim - 1];
  if (b < 0 || b >= i->ndim || b >= x->ndim || last < 0 || b + last > x->ndim)
    return ct_ops_err(d, CT_ERR_INPUT, op, "batch_dims %lld / index depth %lld do not fit data rank %d",
                     (long long)b, (long long)last, x->ndim);
  for (int k = 0; k < b; k++)
    if (i->shape[k] != x->shape[k]) return ct_ops_err(d, CT_ERR_INPUT, op, "batch dim %d differs", k);
  int64_t s[CT_MAX_DIMS];
  int n = 0;
  if (i->ndim - 1 + x->ndim - b - last > CT_MAX_DIMS) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: output rank");
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
  if (!ok) return ct_ops_err(d, CT_ERR_INPUT, op, "updates shape does not match indices and data");
  const char *red = ct_attr_scatter_reduction(op);
  if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min"))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: reduction \"%s\"", red);
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
  if (!to) return ct_ops_err(d, CT_ERR_INPUT, op, "attribute to is missing");
  if (!ct_dtype_from_onnx((int)to->i, &dt))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: cast to ONNX data type %lld", (long long)to->i);
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
  if (!t) return ct_ops_err(d, CT_ERR_INPUT, op, "input 0 (shape) is missing");
  if ((st = ct_ops_ints(op, t, "shape", CT_MAX_DIMS, s, &n, d))) return st;
  for (int i = 0; i < n; i++)
    if (s[i] < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "shape[%d] = %lld is negative", i, (long long)s[i]);
  ct_dtype dt = CT_F32;
  const ct_attr *vd = ct_attr_raw_constantofshape_value_dtype(op);
  if (vd && !ct_dtype_from_onnx((int)vd->i, &dt))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: value of ONNX data type %lld", (long long)vd->i);
  int64_t bytes;
  if (!ct_shape_bytes(dt, n, s, &bytes)) return ct_ops_err(d, CT_ERR_INPUT, op, "output size overflows 64 bits");
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
    if (!t[i] || ct_tensor_numel(t[i]) != 1) return ct_ops_err(d, CT_ERR_INPUT, op, "%s must be a scalar", what[i]);
    if (t[i]->dtype != t[0]->dtype) return ct_ops_err(d, CT_ERR_INPUT, op, "%s dtype differs from start", what[i]);
  }
  int64_t n;
  if (ct_dtype_is_float(t[0]->dtype)) {
    double s = ct_tensor_get_f64(t[0], 0), l = ct_tensor_get_f64(t[1], 0), dl = ct_tensor_get_f64(t[2], 0);
    double c = ceil((l - s) / dl);
    if (dl == 0 || !isfinite(c)) return ct_ops_err(d, CT_ERR_INPUT, op, "delta is 0 or the range is not finite");
    n = c > 0 ? (int64_t)c : 0;
  } else {
    int64_t s = ct_ops_get_i64(t[0], 0), l = ct_ops_get_i64(t[1], 0), dl = ct_ops_get_i64(t[2], 0);
    if (dl == 0) return ct_ops_err(d, CT_ERR_INPUT, op, "delta is 0");
    n = dl > 0 ? (l > s ? (l - s + dl - 1) / dl : 0) : (s > l ? (s - l + (-dl) - 1) / (-dl) : 0);
  }
  ct_sm_out(op, 0, t[0]->dtype, 1, &n);
  return CT_OK;
}
