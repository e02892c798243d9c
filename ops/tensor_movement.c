/* tensor_movement.c: ONNX tensor family, ops that move elements: shape functions and kernels of
 * Transpose, Concat, Split, Slice, Expand, Tile and Pad (latest opset: Split-18, Slice-13,
 * Expand-13, Tile-13, Pad-19; shape-determining inputs must be constant). Every kernel is
 * dtype-agnostic: it moves elements of ct_dtype_size bytes and never interprets them. */
#include <math.h>
#include <string.h>

#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"
#include "ops/broadcast.h"

/* dst[j] = src[j * is] for j < n, elements of es bytes: for 1, 2, 4 and 8 bytes a memcpy of
 * constant size, which GCC inlines as one move (a memcpy call per element cost more than the
 * copy), else a memcpy call per element. */
#define GATHER(N)                                                                   \
  for (int64_t j = 0; j < n; j++) memcpy(dst + j * (N), src + j * is * (N), (N))
static void gather(size_t es, char *dst, const char *src, int64_t n, int64_t is) {
  if (es == 4) GATHER(4);
  else if (es == 8) GATHER(8);
  else if (es == 2) GATHER(2);
  else if (es == 1) GATHER(1);
  else GATHER(es);
}
#undef GATHER

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
      gather(es, dst + (size_t)o * es, src + (size_t)off * es, inner, is);
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

/* Transpose: y[i0..in] = x[i_perm...]; a strided copy with the permuted input strides. */
ct_status ct_kern_transpose(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  int n;
  const int64_t *p = ct_attr_transpose_perm(op, &n);
  int64_t st[CT_MAX_DIMS], sstr[CT_MAX_DIMS];
  if (!p) n = x->ndim;
  if (n != x->ndim || out[0]->ndim != n) return ct_ops_err(d, CT_ERR_INPUT, op, "perm does not match the rank");
  ct_ops_strides(x->ndim, x->shape, st);
  for (int i = 0; i < n; i++) {
    int64_t k = p ? p[i] : n - 1 - i;
    if (k < 0 || k >= n || out[0]->shape[i] != x->shape[k]) return ct_ops_err(d, CT_ERR_INPUT, op, "bad perm");
    sstr[i] = st[k];
  }
  strided_copy(ct_dtype_size(x->dtype), n, out[0]->shape, x->data, 0, sstr, out[0]->data);
  return CT_OK;
}

/* Concat (split = false) or Split (split = true) along axis: t[k] blocks of
 * t[k]->shape[axis] * inner elements alternate in the big tensor for each outer index. */
static ct_status concat_split(const ct_op *op, ct_tensor *big, ct_tensor *const *t, int n, bool split, ct_diag *d) {
  int ax;
  if (!ct_ops_axis(ct_attr_concat_axis(op), big->ndim, &ax)) return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis");
  size_t es = ct_dtype_size(big->dtype);
  int64_t outer = ct_shape_numel(ax, big->shape), inner = ct_shape_numel(big->ndim - ax - 1, big->shape + ax + 1);
  int64_t sum = 0;
  for (int k = 0; k < n; k++) {
    if (!t[k] || t[k]->ndim != big->ndim || t[k]->dtype != big->dtype)
      return ct_ops_err(d, CT_ERR_INPUT, op, "operand %d missing or mismatched", k);
    sum += t[k]->shape[ax];
  }
  if (sum != big->shape[ax]) return ct_ops_err(d, CT_ERR_INPUT, op, "sizes along axis %d do not add up", ax);
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

/* Slice-13: per-dim start/step/len from ct_ops_slice, then one strided copy. */
ct_status ct_kern_slice(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  int64_t start[CT_MAX_DIMS], step[CT_MAX_DIMS], len[CT_MAX_DIMS], st[CT_MAX_DIMS], sstr[CT_MAX_DIMS], base = 0;
  ct_status s = ct_ops_slice(op, x->ndim, x->shape, in[1], in[2], op->n_in > 3 ? in[3] : NULL,
                            op->n_in > 4 ? in[4] : NULL, start, step, len, d);
  if (s) return s;
  ct_ops_strides(x->ndim, x->shape, st);
  for (int i = 0; i < x->ndim; i++) {
    if (len[i] != out[0]->shape[i]) return ct_ops_err(d, CT_ERR_INPUT, op, "output shape differs from the slice");
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
  return ct_ops_bcast_copy(op, in[0], out[0], d);
}

/* Tile: out[o] = x[o_i mod dim_i per dim], row by row (rows repeat the source row). */
ct_status ct_kern_tile(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  if (y->ndim != x->ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "output rank differs");
  if (ct_tensor_numel(y) == 0) return CT_OK;
  int nd = x->ndim;
  size_t es = ct_dtype_size(x->dtype);
  int64_t st[CT_MAX_DIMS], idx[CT_MAX_DIMS] = {0}, inner = nd ? y->shape[nd - 1] : 1, w = nd ? x->shape[nd - 1] : 1;
  ct_ops_strides(nd, x->shape, st);
  const char *px = x->data;
  char *py = y->data;
  for (int64_t o = 0;;) {
    int64_t off = 0;
    for (int i = 0; i < nd - 1; i++) off += (idx[i] % x->shape[i]) * st[i];
    for (int64_t j = 0; j < inner; j += w) memcpy(py + (size_t)(o + j) * es, px + (size_t)off * es, (size_t)w * es);
    o += inner;
    if (!ct_ops_next_index(idx, nd - 1, y->shape)) return CT_OK;
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
  ct_status s = ct_ops_pads(op, nd, x->shape, in[1], op->n_in > 3 ? in[3] : NULL, b, a, d);
  if (s) return s;
  for (int i = 0; i < nd; i++)
    if (y->shape[i] != x->shape[i] + b[i] + a[i]) return ct_ops_err(d, CT_ERR_INPUT, op, "output shape differs");
  if (cv && (cv->dtype != x->dtype || ct_tensor_numel(cv) != 1))
    return ct_ops_err(d, CT_ERR_INPUT, op, "constant_value must be a scalar of the data dtype");
  char mode = ct_attr_pad_mode(op)[0];
  size_t es = ct_dtype_size(x->dtype);
  int64_t n = ct_tensor_numel(y);
  ct_ops_strides(nd, x->shape, st);
  for (int64_t o = 0; o < n; o++) {
    int64_t off = 0;
    for (int i = 0; i < nd && off >= 0; i++) {
      int64_t c = pad_src(idx[i] - b[i], x->shape[i], mode);
      off = c < 0 ? -1 : off + c * st[i];
    }
    char *dst = (char *)y->data + (size_t)o * es;
    if (off >= 0) memcpy(dst, (const char *)x->data + (size_t)off * es, es);
    else if (cv) memcpy(dst, cv->data, es);
    ct_ops_next_index(idx, nd, y->shape);
  }
  return CT_OK;
}

/* ---- shape functions ---- */

/* Transpose: perm (default reversed dims) checked to be a permutation and made explicit. */
ct_status ct_shape_transpose(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  int n;
  const int64_t *p = ct_attr_transpose_perm(op, &n);
  int64_t perm[CT_MAX_DIMS], s[CT_MAX_DIMS];
  bool seen[CT_MAX_DIMS] = {false};
  if (!p) n = x->ndim;
  if (n != x->ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "perm has %d entries for rank %d", n, x->ndim);
  for (int i = 0; i < n; i++) {
    perm[i] = p ? p[i] : n - 1 - i;
    if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
      return ct_ops_err(d, CT_ERR_INPUT, op, "perm is not a permutation of 0..%d", n - 1);
    seen[perm[i]] = true;
    s[i] = x->shape[perm[i]];
  }
  if (!ct_attr_set_transpose_perm(g, op, n, perm)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_sm_out(op, 0, x->dtype, n, s);
  return CT_OK;
}

/* Concat: inputs agree on rank, dtype and every dim but axis (made positive). */
ct_status ct_shape_concat(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *y = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  int ax;
  const ct_attr *a = ct_attr_raw_concat_axis(op);
  if (!a) return ct_ops_err(d, CT_ERR_INPUT, op, "attribute axis is missing");
  if (!ct_ops_axis(a->i, x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)a->i, x->ndim);
  int64_t s[CT_MAX_DIMS];
  memcpy(s, x->shape, sizeof s);
  for (int k = 1; k < op->n_in; k++) {
    if ((st = ct_sm_in(op, k, &y, d))) return st;
    bool ok = y->ndim == x->ndim && y->dtype == x->dtype;
    for (int i = 0; ok && i < x->ndim; i++) ok = i == ax || y->shape[i] == x->shape[i];
    char b1[96], b2[96];
    if (!ok)
      return ct_ops_err(d, CT_ERR_INPUT, op, "input %d (%s %s) does not match input 0 (%s %s) off axis %d", k,
                       ct_sm_shape(y, b1, sizeof b1), ct_dtype_name(y->dtype), ct_sm_shape(x, b2, sizeof b2),
                       ct_dtype_name(x->dtype), ax);
    s[ax] += y->shape[ax];
  }
  if (!ct_attr_set_concat_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  return CT_OK;
}

/* Split-18: sizes from the split input, else num_outputs (or the output count) chunks of
 * ceil(dim / n), the last one smaller. */
ct_status ct_shape_split(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL;
  const ct_tensor *t;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_const(op, 1, "split", &t, d))) return st;
  int ax, n = op->n_out;
  int64_t axis = ct_attr_concat_axis(op), sz[64];
  if (!ct_ops_axis(axis, x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (n > 64) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: %d outputs", n);
  int64_t dim = x->shape[ax], sum = 0;
  if (t) {
    int ns;
    if ((st = ct_ops_ints(op, t, "split", 64, sz, &ns, d))) return st;
    if (ns != n) return ct_ops_err(d, CT_ERR_INPUT, op, "split has %d entries for %d outputs", ns, n);
  } else {
    int64_t chunk = (dim + n - 1) / n;
    for (int i = 0; i < n; i++) sz[i] = dim - sum < chunk ? dim - sum : chunk, sum += sz[i];
    sum = 0;
  }
  for (int i = 0; i < n; i++) {
    if (sz[i] < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "split[%d] is negative", i);
    sum += sz[i];
  }
  if (sum != dim)
    return ct_ops_err(d, CT_ERR_INPUT, op, "split sizes add up to %lld, dim %d is %lld", (long long)sum, ax, (long long)dim);
  if (!ct_attr_set_concat_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  for (int i = 0; i < n; i++) {
    int64_t s[CT_MAX_DIMS];
    memcpy(s, x->shape, sizeof s);
    s[ax] = sz[i];
    ct_sm_out(op, i, x->dtype, x->ndim, s);
  }
  return CT_OK;
}

/* Slice-13 through ct_ops_slice; starts/ends/axes/steps constant. */
ct_status ct_shape_slice(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  const ct_tensor *t[5] = {NULL};
  static const char *const what[5] = {"", "starts", "ends", "axes", "steps"};
  ct_status st = ct_sm_in(op, 0, &x, d);
  for (int i = 1; i < 5 && !st; i++) st = ct_sm_const(op, i, what[i], &t[i], d);
  if (st) return st;
  if (!t[1] || !t[2]) return ct_ops_err(d, CT_ERR_INPUT, op, "starts and ends are required");
  int64_t start[CT_MAX_DIMS], step[CT_MAX_DIMS], len[CT_MAX_DIMS];
  if ((st = ct_ops_slice(op, x->ndim, x->shape, t[1], t[2], t[3], t[4], start, step, len, d))) return st;
  ct_sm_out(op, 0, x->dtype, x->ndim, len);
  return CT_OK;
}

/* Expand-13: multidirectional broadcast of the input shape and the (constant) shape. */
ct_status ct_shape_expand(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  int64_t s[CT_MAX_DIMS], o[CT_MAX_DIMS];
  int n, no;
  ct_status st = ct_sm_in_ints(op, &x, "shape", CT_MAX_DIMS, s, &n, d);
  if (st) return st;
  char b1[96], b2[96];
  if (!ct_bcast_shape(x->ndim, x->shape, n, s, &no, o))
    return ct_ops_err(d, CT_ERR_INPUT, op, "input shape %s does not broadcast with shape %s",
                     ct_sm_shape(x, b1, sizeof b1), ct_shape_str(n, s, b2, sizeof b2));
  ct_sm_out(op, 0, x->dtype, no, o);
  return CT_OK;
}

/* Tile-13: out[i] = in[i] * repeats[i]; repeats has rank entries, each >= 0. */
ct_status ct_shape_tile(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  int64_t r[CT_MAX_DIMS], s[CT_MAX_DIMS];
  int n;
  ct_status st = ct_sm_in_ints(op, &x, "repeats", CT_MAX_DIMS, r, &n, d);
  if (st) return st;
  if (n != x->ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "repeats has %d entries for rank %d", n, x->ndim);
  for (int i = 0; i < n; i++) {
    if (r[i] < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "repeats[%d] is negative", i);
    s[i] = x->shape[i] * r[i];
  }
  ct_sm_out(op, 0, x->dtype, n, s);
  return CT_OK;
}

/* Pad-19: modes constant / reflect / edge / wrap; pads (and axes) constant. */
ct_status ct_shape_pad(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  const ct_tensor *pads, *axes, *cv;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_const(op, 1, "pads", &pads, d)) || (st = ct_sm_const(op, 3, "axes", &axes, d)))
    return st;
  if (!pads) return ct_ops_err(d, CT_ERR_INPUT, op, "input 1 (pads) is missing");
  const char *mode = ct_attr_pad_mode(op);
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: mode \"%s\"", mode);
  if ((st = ct_sm_const(op, 2, "constant_value", &cv, d)) && op->in[2]) {
    ct_diag_clear(d); /* a non-constant pad value is fine: the kernel reads it */
    st = CT_OK;
  }
  int64_t b[CT_MAX_DIMS], a[CT_MAX_DIMS], s[CT_MAX_DIMS];
  if ((st = ct_ops_pads(op, x->ndim, x->shape, pads, axes, b, a, d))) return st;
  for (int i = 0; i < x->ndim; i++) {
    s[i] = x->shape[i] + b[i] + a[i];
    if (strcmp(mode, "constant") && x->shape[i] == 0 && s[i] > 0)
      return ct_ops_err(d, CT_ERR_INPUT, op, "mode %s cannot pad the empty dim %d", mode, i);
  }
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  return CT_OK;
}
