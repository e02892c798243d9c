/* tensor_reshape.c: ONNX tensor family, ops that change only the shape: shape functions and
 * kernels of Shape-15, Size, Reshape-14, Flatten, Squeeze-13 and Unsqueeze-13 (the last four
 * are byte copies). Shape-determining inputs must be constant. */
#include <math.h>
#include <string.h>

#include "ops/shape_util.h"
#include "ops/broadcast.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"

/* Shape-15: 1-D int64 of the dims in [start, end) (negative adds rank, then clamped). */
ct_status ct_shape_shape(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  int64_t r = x->ndim, s = ct_attr_shape_start(op), e = ct_attr_has_shape_end(op) ? ct_attr_shape_end(op) : r;
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = s < 0 ? 0 : s > r ? r : s;
  e = e < 0 ? 0 : e > r ? r : e;
  if (e < s) e = s;
  if (!ct_attr_set_shape_start(g, op, s) || !ct_attr_set_shape_end(g, op, e))
    return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  int64_t n = e - s;
  ct_sm_out(op, 0, CT_I64, 1, &n);
  return CT_OK;
}

/* Size: int64 scalar. */
ct_status ct_shape_size(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  ct_sm_out(op, 0, CT_I64, 0, NULL);
  return CT_OK;
}

/* Reshape-14: 0 copies the input dim (unless allowzero = 1), one -1 is inferred. */
ct_status ct_shape_reshape(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  int64_t s[CT_MAX_DIMS];
  int n, neg = -1;
  ct_status st = ct_sm_in_ints(op, &x, "shape", CT_MAX_DIMS, s, &n, d);
  if (st) return st;
  bool allowzero = ct_attr_reshape_allowzero(op) != 0;
  int64_t known = 1, total = ct_value_numel(x);
  for (int i = 0; i < n; i++) {
    if (s[i] == 0 && !allowzero) {
      if (i >= x->ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "shape[%d] = 0 but the input has %d dims", i, x->ndim);
      s[i] = x->shape[i];
    }
    if (s[i] == -1) {
      if (neg >= 0) return ct_ops_err(d, CT_ERR_INPUT, op, "shape has more than one -1");
      neg = i;
    } else if (s[i] < 0) {
      return ct_ops_err(d, CT_ERR_INPUT, op, "shape[%d] = %lld is negative", i, (long long)s[i]);
    } else {
      known *= s[i];
    }
  }
  if (neg >= 0) s[neg] = known ? total / known : 0;
  char b1[96], b2[96];
  if (ct_shape_numel(n, s) != total || (neg >= 0 && known == 0 && total != 0))
    return ct_ops_err(d, CT_ERR_INPUT, op, "cannot reshape %s (%lld elements) to %s",
                     ct_sm_shape(x, b1, sizeof b1), (long long)total, ct_shape_str(n, s, b2, sizeof b2));
  ct_sm_out(op, 0, x->dtype, n, s);
  return CT_OK;
}

/* Flatten-13: 2-D (prod(dims[:axis]), prod(dims[axis:])); axis in [-r, r], made positive. */
ct_status ct_shape_flatten(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  int64_t axis = ct_attr_flatten_axis(op);
  if (axis < -x->ndim || axis > x->ndim)
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (axis < 0) axis += x->ndim;
  if (!ct_attr_set_flatten_axis(g, op, axis)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  int64_t s[2] = {ct_shape_numel((int)axis, x->shape), ct_shape_numel(x->ndim - (int)axis, x->shape + axis)};
  ct_sm_out(op, 0, x->dtype, 2, s);
  return CT_OK;
}

/* Squeeze-13: removes the listed axes (each must be 1), or every 1 when axes is absent. */
ct_status ct_shape_squeeze(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  const ct_tensor *t;
  int64_t a[CT_MAX_DIMS], s[CT_MAX_DIMS];
  int na = 0, n = 0;
  bool drop[CT_MAX_DIMS] = {false};
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_const(op, 1, "axes", &t, d))) return st;
  if (t && (st = ct_ops_ints(op, t, "axes", CT_MAX_DIMS, a, &na, d))) return st;
  for (int i = 0; i < x->ndim; i++) drop[i] = !t && x->shape[i] == 1;
  for (int i = 0; i < na; i++) {
    int ax;
    if (!ct_ops_axis(a[i], x->ndim, &ax))
      return ct_ops_err(d, CT_ERR_INPUT, op, "axes[%d] = %lld out of range for rank %d", i, (long long)a[i], x->ndim);
    if (x->shape[ax] != 1)
      return ct_ops_err(d, CT_ERR_INPUT, op, "cannot squeeze dim %d of size %lld", ax, (long long)x->shape[ax]);
    drop[ax] = true;
  }
  for (int i = 0; i < x->ndim; i++)
    if (!drop[i]) s[n++] = x->shape[i];
  ct_sm_out(op, 0, x->dtype, n, s);
  return CT_OK;
}

/* Unsqueeze-13: inserts 1s at the listed axes of the output (rank r + len(axes)). */
ct_status ct_shape_unsqueeze(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  int64_t a[CT_MAX_DIMS], s[CT_MAX_DIMS];
  int na = 0;
  bool ins[CT_MAX_DIMS] = {false};
  ct_status st = ct_sm_in_ints(op, &x, "axes", CT_MAX_DIMS, a, &na, d);
  if (st) return st;
  int r = x->ndim + na;
  if (r > CT_MAX_DIMS) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: output rank %d > %d", r, CT_MAX_DIMS);
  for (int i = 0; i < na; i++) {
    int ax;
    if (!ct_ops_axis(a[i], r, &ax) || ins[ax])
      return ct_ops_err(d, CT_ERR_INPUT, op, "axes[%d] = %lld out of range or repeated", i, (long long)a[i]);
    ins[ax] = true;
  }
  for (int i = 0, k = 0; i < r; i++) s[i] = ins[i] ? 1 : x->shape[k++];
  ct_sm_out(op, 0, x->dtype, r, s);
  return CT_OK;
}

/* ---- kernels ---- */

/* Shape-15: y[i] = x.shape[start + i] (start made explicit by the shape function). */
ct_status ct_kern_shape(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  int64_t s = ct_attr_shape_start(op), n = ct_tensor_numel(out[0]);
  if (s < 0 || s + n > in[0]->ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "start/end do not fit rank %d", in[0]->ndim);
  for (int64_t i = 0; i < n; i++) ((int64_t *)out[0]->data)[i] = in[0]->shape[s + i];
  return CT_OK;
}

/* Size: y = element count of x (int64 scalar). */
ct_status ct_kern_size(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  (void)op, (void)ctx, (void)d;
  *(int64_t *)out[0]->data = ct_tensor_numel(in[0]);
  return CT_OK;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the data is unchanged, only the shape differs. */
ct_status ct_kern_copy(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  (void)ctx;
  if (in[0]->nbytes != out[0]->nbytes || in[0]->dtype != out[0]->dtype)
    return ct_ops_err(d, CT_ERR_INPUT, op, "output size or dtype differs from the input");
  memcpy(out[0]->data, in[0]->data, in[0]->nbytes);
  return CT_OK;
}
