/* tensor_movement.c: reference kernels of the data-movement ops — Shape, Size, Reshape /
 * Flatten / Squeeze / Unsqueeze (byte copies), Transpose, Concat, Split, Slice, Expand, Tile
 * and Pad (ONNX operator spec, latest opset). Every kernel is dtype-agnostic: it moves
 * elements of ct_dtype_size bytes and never interprets them. */
#include <string.h>

#include "ops/ops_util.h"
#include "ops/kernel.h"

/* dst (contiguous, shape nd dims) [o] = src[base + sum idx[i] * sstr[i]], elements of es
 * bytes; rows along the last dim are memcpy'd when their source stride is 1. */
static void strided_copy(size_t es, int nd, const int64_t *shape, const char *src, int64_t base,
                         const int64_t *sstr, char *dst) {
  if (ct_shape_numel(nd, shape) <= 0) return;
  int64_t idx[CT_MAX_DIMS] = {0}, inner = nd ? shape[nd - 1] : 1, is = nd ? sstr[nd - 1] : 0, off = base;
  for (int64_t o = 0;;) {
    if (is == 1) {
      memcpy(dst + (size_t)o * es, src + (size_t)off * es, (size_t)inner * es);
    } else {
      for (int64_t j = 0; j < inner; j++) memcpy(dst + (size_t)(o + j) * es, src + (size_t)(off + j * is) * es, es);
    }
    o += inner;
    int d = nd - 2;
    for (; d >= 0; d--) {
      off += sstr[d];
      if (++idx[d] < shape[d]) break;
      off -= sstr[d] * shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/* Shape-15: y[i] = x.shape[start + i] (start made explicit by the shape function). */
ct_status ct_kern_shape(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  int64_t s = ct_attr_shape_start(op), n = ct_tensor_numel(out[0]);
  if (s < 0 || s + n > in[0]->ndim) return ct_km_err(d, CT_ERR_INPUT, op, "start/end do not fit rank %d", in[0]->ndim);
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
    return ct_km_err(d, CT_ERR_INPUT, op, "output size or dtype differs from the input");
  memcpy(out[0]->data, in[0]->data, in[0]->nbytes);
  return CT_OK;
}

/* Transpose: y[i0..in] = x[i_perm...]; a strided copy with the permuted input strides. */
ct_status ct_kern_transpose(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  int n;
  const int64_t *p = ct_attr_transpose_perm(op, &n);
  int64_t st[CT_MAX_DIMS], sstr[CT_MAX_DIMS];
  if (!p) n = x->ndim;
  if (n != x->ndim || out[0]->ndim != n) return ct_km_err(d, CT_ERR_INPUT, op, "perm does not match the rank");
  ct_km_strides(x->ndim, x->shape, st);
  for (int i = 0; i < n; i++) {
    int64_t k = p ? p[i] : n - 1 - i;
    if (k < 0 || k >= n || out[0]->shape[i] != x->shape[k]) return ct_km_err(d, CT_ERR_INPUT, op, "bad perm");
    sstr[i] = st[k];
  }
  strided_copy(ct_dtype_size(x->dtype), n, out[0]->shape, x->data, 0, sstr, out[0]->data);
  return CT_OK;
}

/* Concat (split = false) or Split (split = true) along axis: t[k] blocks of
 * t[k]->shape[axis] * inner elements alternate in the big tensor for each outer index. */
static ct_status concat_split(const ct_op *op, ct_tensor *big, ct_tensor *const *t, int n, bool split, ct_diag *d) {
  int ax;
  if (!ct_km_axis(ct_attr_concat_axis(op), big->ndim, &ax)) return ct_km_err(d, CT_ERR_INPUT, op, "bad axis");
  size_t es = ct_dtype_size(big->dtype);
  int64_t outer = ct_shape_numel(ax, big->shape), inner = ct_shape_numel(big->ndim - ax - 1, big->shape + ax + 1);
  int64_t sum = 0;
  for (int k = 0; k < n; k++) {
    if (!t[k] || t[k]->ndim != big->ndim || t[k]->dtype != big->dtype)
      return ct_km_err(d, CT_ERR_INPUT, op, "operand %d missing or mismatched", k);
    sum += t[k]->shape[ax];
  }
  if (sum != big->shape[ax]) return ct_km_err(d, CT_ERR_INPUT, op, "sizes along axis %d do not add up", ax);
  char *pb = big->data;
  for (int64_t o = 0; o < outer; o++) {
    for (int k = 0; k < n; k++) {
      size_t bytes = (size_t)(t[k]->shape[ax] * inner) * es;
      char *pt = (char *)t[k]->data + (size_t)o * bytes;
      if (split) memcpy(pt, pb, bytes);
      else memcpy(pb, pt, bytes);
      pb += bytes;
    }
  }
  return CT_OK;
}

/* Concat: the inputs one after another along axis. */
ct_status ct_kern_concat(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  return concat_split(op, out[0], in, op->n_in, false, d);
}

/* Split: the output sizes along axis come from the preallocated outputs. */
ct_status ct_kern_split(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  return concat_split(op, in[0], out, op->n_out, true, d);
}

/* Slice-13: per-dim start/step/len from ct_km_slice, then one strided copy. */
ct_status ct_kern_slice(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  int64_t start[CT_MAX_DIMS], step[CT_MAX_DIMS], len[CT_MAX_DIMS], st[CT_MAX_DIMS], sstr[CT_MAX_DIMS], base = 0;
  ct_status s = ct_km_slice(op, x->ndim, x->shape, in[1], in[2], op->n_in > 3 ? in[3] : NULL,
                            op->n_in > 4 ? in[4] : NULL, start, step, len, d);
  if (s) return s;
  ct_km_strides(x->ndim, x->shape, st);
  for (int i = 0; i < x->ndim; i++) {
    if (len[i] != out[0]->shape[i]) return ct_km_err(d, CT_ERR_INPUT, op, "output shape differs from the slice");
    base += start[i] * st[i];
    sstr[i] = step[i] * st[i];
  }
  strided_copy(ct_dtype_size(x->dtype), x->ndim, len, x->data, base, sstr, out[0]->data);
  return CT_OK;
}

/* Expand-13: broadcast copy of x to the output shape. */
ct_status ct_kern_expand(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  return ct_km_bcast_copy(op, in[0], out[0], d);
}

/* Tile: out[o] = x[o_i mod dim_i per dim], row by row (rows repeat the source row). */
ct_status ct_kern_tile(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  if (y->ndim != x->ndim) return ct_km_err(d, CT_ERR_INPUT, op, "output rank differs");
  if (ct_tensor_numel(y) == 0) return CT_OK;
  int nd = x->ndim;
  size_t es = ct_dtype_size(x->dtype);
  int64_t st[CT_MAX_DIMS], idx[CT_MAX_DIMS] = {0}, inner = nd ? y->shape[nd - 1] : 1, w = nd ? x->shape[nd - 1] : 1;
  ct_km_strides(nd, x->shape, st);
  const char *px = x->data;
  char *py = y->data;
  for (int64_t o = 0;;) {
    int64_t off = 0;
    for (int i = 0; i < nd - 1; i++) off += (idx[i] % x->shape[i]) * st[i];
    for (int64_t j = 0; j < inner; j += w) memcpy(py + (size_t)(o + j) * es, px + (size_t)off * es, (size_t)w * es);
    o += inner;
    if (!ct_km_next_index(idx, nd - 1, y->shape)) return CT_OK;
  }
}

/* Source index of output coordinate c (already minus the begin pad) in a dim of size n for
 * Pad's modes; -1 = constant fill. reflect mirrors without repeating the edge (numpy). */
static int64_t pad_src(int64_t c, int64_t n, char mode) {
  if (c >= 0 && c < n) return c;
  if (mode == 'c' || n == 0) return -1;
  if (mode == 'e') return c < 0 ? 0 : n - 1;
  if (mode == 'w') return ((c % n) + n) % n;
  if (n == 1) return 0;
  int64_t p = 2 * (n - 1), m = ((c % p) + p) % p;
  return m < n ? m : p - m;
}

/* Pad-19: per output element, the source coordinate by mode (pad_src) or constant_value
 * (0 when absent). */
ct_status ct_kern_pad(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *cv = op->n_in > 2 ? in[2] : NULL;
  ct_tensor *y = out[0];
  int nd = x->ndim;
  int64_t b[CT_MAX_DIMS], a[CT_MAX_DIMS], st[CT_MAX_DIMS], idx[CT_MAX_DIMS] = {0};
  ct_status s = ct_km_pads(op, nd, x->shape, in[1], op->n_in > 3 ? in[3] : NULL, b, a, d);
  if (s) return s;
  for (int i = 0; i < nd; i++)
    if (y->shape[i] != x->shape[i] + b[i] + a[i]) return ct_km_err(d, CT_ERR_INPUT, op, "output shape differs");
  if (cv && (cv->dtype != x->dtype || ct_tensor_numel(cv) != 1))
    return ct_km_err(d, CT_ERR_INPUT, op, "constant_value must be a scalar of the data dtype");
  char mode = ct_attr_pad_mode(op)[0];
  size_t es = ct_dtype_size(x->dtype);
  int64_t n = ct_tensor_numel(y);
  ct_km_strides(nd, x->shape, st);
  for (int64_t o = 0; o < n; o++) {
    int64_t off = 0;
    for (int i = 0; i < nd && off >= 0; i++) {
      int64_t c = pad_src(idx[i] - b[i], x->shape[i], mode);
      off = c < 0 ? -1 : off + c * st[i];
    }
    char *dst = (char *)y->data + (size_t)o * es;
    if (off >= 0) memcpy(dst, (const char *)x->data + (size_t)off * es, es);
    else if (cv) memcpy(dst, cv->data, es);
    ct_km_next_index(idx, nd, y->shape);
  }
  return CT_OK;
}
