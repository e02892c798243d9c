/* kern_misc_gen.c: reference kernels of Trilu-14, OneHot-11, Compress-11, EyeLike-9,
 * ReverseSequence-10, NonZero-13 and QuantizeLinear / DequantizeLinear-19 (ONNX operator
 * spec). QuantizeLinear rounds half to even (the spec's "rounding to nearest ties to even")
 * and saturates with quant/'s ct_quant_saturate. */
#include <math.h>
#include <string.h>

#include "quant/quant.h"
#include "reference/kern_misc.h"
#include "reference/kernel.h"

/* Trilu: keeps j - i >= k (upper, default) or j - i <= k (lower) in the last two dims. */
ct_status ct_kern_trilu(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  if (x->ndim < 2) return ct_km_err(d, CT_ERR_INPUT, op, "input must have rank >= 2");
  int64_t k = op->n_in > 1 && in[1] ? ct_km_get_i64(in[1], 0) : 0;
  int64_t r = x->shape[x->ndim - 2], c = x->shape[x->ndim - 1], n = ct_tensor_numel(x);
  bool up = ct_op_get_int(op, "upper", 1) != 0;
  size_t es = ct_dtype_size(x->dtype);
  memcpy(out[0]->data, x->data, x->nbytes);
  for (int64_t e = 0; e < n; e++) {
    int64_t j = e % c, i = (e / c) % r;
    if (up ? j - i < k : j - i > k) memset((char *)out[0]->data + (size_t)e * es, 0, es);
  }
  return CT_OK;
}

/* OneHot: y[..., d, ...] = on if d == index (negative adds depth) else off; indices outside
 * [-depth, depth-1] give all off. */
ct_status ct_kern_onehot(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  const ct_tensor *ind = in[0], *val = in[2];
  ct_tensor *y = out[0];
  int ax;
  if (!ct_km_axis(ct_op_get_int(op, "axis", -1), y->ndim, &ax)) return ct_km_err(d, CT_ERR_INPUT, op, "bad axis");
  int64_t depth = y->shape[ax], outer = ct_shape_numel(ax, y->shape);
  int64_t inner = ct_shape_numel(y->ndim - ax - 1, y->shape + ax + 1);
  size_t es = ct_dtype_size(y->dtype);
  const char *off = val->data, *on = off + es;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t v = (int64_t)ct_tensor_get_f64(ind, o * inner + i);
      if (v < 0) v += depth;
      for (int64_t k = 0; k < depth; k++)
        memcpy((char *)y->data + (size_t)((o * depth + k) * inner + i) * es, k == v ? on : off, es);
    }
  return CT_OK;
}

/* Compress: keeps the slices (along axis, or of the flattened input) whose condition is true. */
ct_status ct_kern_compress(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                           ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *c = in[1];
  const ct_attr *a = ct_op_attr(op, "axis");
  int ax = -1;
  if (a && !ct_km_axis(a->i, x->ndim, &ax)) return ct_km_err(d, CT_ERR_INPUT, op, "bad axis");
  int64_t outer = ax < 0 ? 1 : ct_shape_numel(ax, x->shape), n = ax < 0 ? ct_tensor_numel(x) : x->shape[ax];
  int64_t inner = ax < 0 ? 1 : ct_shape_numel(x->ndim - ax - 1, x->shape + ax + 1), nc = ct_tensor_numel(c), cnt = 0;
  for (int64_t k = 0; k < nc && k < n; k++) cnt += ct_tensor_get_f64(c, k) != 0;
  if (ct_tensor_numel(out[0]) != outer * cnt * inner) return ct_km_err(d, CT_ERR_INPUT, op, "output size differs");
  size_t row = (size_t)inner * ct_dtype_size(x->dtype);
  char *py = out[0]->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < nc && k < n; k++)
      if (ct_tensor_get_f64(c, k) != 0) {
        memcpy(py, (const char *)x->data + (size_t)(o * n + k) * row, row);
        py += row;
      }
  return CT_OK;
}

/* EyeLike-9: ones on the k-th diagonal (y[i][i + k]), zeros elsewhere. */
ct_status ct_kern_eyelike(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  (void)in, (void)ctx, (void)d;
  ct_tensor *y = out[0];
  int64_t k = ct_op_get_int(op, "k", 0);
  for (int64_t i = 0; i < y->shape[0]; i++)
    if (i + k >= 0 && i + k < y->shape[1]) ct_km_set_i64(y, i * y->shape[1] + i + k, 1);
  return CT_OK;
}

/* ReverseSequence: for batch b, the first seq_lens[b] steps along time_axis are reversed. */
ct_status ct_kern_reversesequence(const ct_op *op, ct_tensor *const *in, ct_tensor **out,
                                  const ct_kernel_ctx *ctx, ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *len = in[1];
  int ba, ta;
  if (!ct_km_axis(ct_op_get_int(op, "batch_axis", 1), x->ndim, &ba) ||
      !ct_km_axis(ct_op_get_int(op, "time_axis", 0), x->ndim, &ta) || ba == ta)
    return ct_km_err(d, CT_ERR_INPUT, op, "bad batch_axis / time_axis");
  if (ct_tensor_numel(len) != x->shape[ba]) return ct_km_err(d, CT_ERR_INPUT, op, "sequence_lens must have batch entries");
  int64_t st[CT_MAX_DIMS], idx[CT_MAX_DIMS] = {0}, n = ct_tensor_numel(x);
  ct_km_strides(x->ndim, x->shape, st);
  size_t es = ct_dtype_size(x->dtype);
  for (int64_t e = 0; e < n; e++) {
    int64_t l = ct_km_get_i64(len, idx[ba]), t = idx[ta], src = e;
    if (l < 0 || l > x->shape[ta]) return ct_km_err(d, CT_ERR_INPUT, op, "sequence length %lld out of range", (long long)l);
    if (t < l) src = e + (l - 1 - 2 * t) * st[ta];
    memcpy((char *)out[0]->data + (size_t)e * es, (const char *)x->data + (size_t)src * es, es);
    ct_km_next_index(idx, x->ndim, x->shape);
  }
  return CT_OK;
}

/* NonZero: y[dim][j] = coordinate dim of the j-th non-zero element (row-major order). */
ct_status ct_kern_nonzero(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  int64_t n = ct_tensor_numel(x), cnt = out[0]->ndim == 2 ? out[0]->shape[1] : -1, j = 0, idx[CT_MAX_DIMS] = {0};
  for (int64_t e = 0; e < n; e++) {
    if (ct_tensor_get_f64(x, e) != 0) {
      if (j >= cnt) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape (output too small)");
      for (int k = 0; k < x->ndim; k++) ((int64_t *)out[0]->data)[k * cnt + j] = idx[k];
      j++;
    }
    ct_km_next_index(idx, x->ndim, x->shape);
  }
  if (j != cnt) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape (count changed)");
  return CT_OK;
}

/* Quantize: y = sat(round_half_even(x / s) + zp), the division in float32 when x and s are
 * float32 (as onnxruntime); Dequantize: y = (x - zp) * s. Scale per tensor or per axis
 * (index (e / inner) % C). */
ct_status ct_kern_qdq(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *s = in[1], *z = op->n_in > 2 ? in[2] : NULL;
  ct_tensor *y = out[0];
  int64_t ns = ct_tensor_numel(s), n = ct_tensor_numel(x), inner = 1;
  if (ns > 1) {
    int ax;
    if (!ct_km_axis(ct_op_get_int(op, "axis", 1), x->ndim, &ax) || x->shape[ax] != ns)
      return ct_km_err(d, CT_ERR_INPUT, op, "scale does not match the quantization axis");
    inner = ct_shape_numel(x->ndim - ax - 1, x->shape + ax + 1);
  }
  if (z && ct_tensor_numel(z) != ns) return ct_km_err(d, CT_ERR_INPUT, op, "zero point size differs from scale");
  bool q = op->kind == CT_OP_QUANTIZELINEAR;
  for (int64_t e = 0; e < n; e++) {
    int64_t c = ns > 1 ? (e / inner) % ns : 0;
    double sc = ct_tensor_get_f64(s, c);
    int64_t zp = z ? ct_km_get_i64(z, c) : 0;
    if (q) {
      double xv = ct_tensor_get_f64(x, e), r = xv / sc;
      if (x->dtype == CT_F32 && s->dtype == CT_F32) r = (float)xv / (float)sc; /* as runtimes do */
      double v = nearbyint(r) + (double)zp;
      v = isnan(v) ? 0 : v < -4e18 ? -4e18 : v > 4e18 ? 4e18 : v;
      ct_km_set_i64(y, e, ct_quant_saturate((int64_t)v, y->dtype));
    } else {
      ct_tensor_set_f64(y, e, (double)(ct_km_get_i64(x, e) - zp) * sc);
    }
  }
  return CT_OK;
}
