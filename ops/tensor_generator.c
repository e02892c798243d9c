/* tensor_generator.c: ONNX tensor/generator/quantization families, ops that build or select
 * elements: kernels of Trilu-14, OneHot-11, Compress-11, EyeLike-9, ReverseSequence-10,
 * NonZero-13 and QuantizeLinear / DequantizeLinear-19, shape functions of OneHot, Compress,
 * EyeLike and NonZero (ONNX operator spec). QuantizeLinear rounds half to even (the spec's
 * "rounding to nearest ties to even") and saturates with quant/'s ct_quant_saturate. */
#include <math.h>
#include <string.h>

#include "quant/quant.h"
#include "ops/qdq_rows.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"
#include "common/clones.h"

/* Trilu: keeps j - i >= k (upper, default) or j - i <= k (lower) in the last two dims. */
ct_status ct_kern_trilu(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  if (x->ndim < 2) return ct_ops_err(d, CT_ERR_INPUT, op, "input must have rank >= 2");
  int64_t k = op->n_in > 1 && in[1] ? ct_ops_get_i64(in[1], 0) : 0;
  int64_t r = x->shape[x->ndim - 2], c = x->shape[x->ndim - 1], n = ct_tensor_numel(x);
  bool up = ct_attr_trilu_upper(op) != 0;
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
  if (!ct_ops_axis(ct_attr_onehot_axis(op), y->ndim, &ax)) return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis");
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
  const ct_attr *a = ct_attr_raw_compress_axis(op);
  int ax = -1;
  if (a && !ct_ops_axis(a->i, x->ndim, &ax)) return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis");
  int64_t outer = ax < 0 ? 1 : ct_shape_numel(ax, x->shape), n = ax < 0 ? ct_tensor_numel(x) : x->shape[ax];
  int64_t inner = ax < 0 ? 1 : ct_shape_numel(x->ndim - ax - 1, x->shape + ax + 1), nc = ct_tensor_numel(c), cnt = 0;
  for (int64_t k = 0; k < nc && k < n; k++) cnt += ct_tensor_get_f64(c, k) != 0;
  if (ct_tensor_numel(out[0]) != outer * cnt * inner) return ct_ops_err(d, CT_ERR_INPUT, op, "output size differs");
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
  int64_t k = ct_attr_eyelike_k(op);
  for (int64_t i = 0; i < y->shape[0]; i++)
    if (i + k >= 0 && i + k < y->shape[1]) ct_ops_set_i64(y, i * y->shape[1] + i + k, 1);
  return CT_OK;
}

/* ReverseSequence: for batch b, the first seq_lens[b] steps along time_axis are reversed. */
ct_status ct_kern_reversesequence(const ct_op *op, ct_tensor *const *in, ct_tensor **out,
                                  const ct_kernel_ctx *ctx, ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *len = in[1];
  int ba, ta;
  if (!ct_ops_axis(ct_attr_reversesequence_batch_axis(op), x->ndim, &ba) ||
      !ct_ops_axis(ct_attr_reversesequence_time_axis(op), x->ndim, &ta) || ba == ta)
    return ct_ops_err(d, CT_ERR_INPUT, op, "bad batch_axis / time_axis");
  if (ct_tensor_numel(len) != x->shape[ba]) return ct_ops_err(d, CT_ERR_INPUT, op, "sequence_lens must have batch entries");
  int64_t st[CT_MAX_DIMS], idx[CT_MAX_DIMS] = {0}, n = ct_tensor_numel(x);
  ct_ops_strides(x->ndim, x->shape, st);
  size_t es = ct_dtype_size(x->dtype);
  for (int64_t e = 0; e < n; e++) {
    int64_t l = ct_ops_get_i64(len, idx[ba]), t = idx[ta], src = e;
    if (l < 0 || l > x->shape[ta]) return ct_ops_err(d, CT_ERR_INPUT, op, "sequence length %lld out of range", (long long)l);
    if (t < l) src = e + (l - 1 - 2 * t) * st[ta];
    memcpy((char *)out[0]->data + (size_t)e * es, (const char *)x->data + (size_t)src * es, es);
    ct_ops_next_index(idx, x->ndim, x->shape);
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
      if (j >= cnt) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape (output too small)");
      for (int k = 0; k < x->ndim; k++) ((int64_t *)out[0]->data)[k * cnt + j] = idx[k];
      j++;
    }
    ct_ops_next_index(idx, x->ndim, x->shape);
  }
  if (j != cnt) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape (count changed)");
  return CT_OK;
}

/* 1.5 * 2^23: for a float |v| < 2^22, (v + M) - M is v rounded to an integer half to even
 * (IEEE round-to-nearest-even of the sum, whose ulp is 1), as nearbyintf in the default
 * rounding mode, but in a form compilers vectorize. */
#define QDQ_RNE_MAGIC 12582912.0f

/* Quantize of n f32 values: y = round_half_even(clamp(x / s, lo, hi)) + zp, the division in
 * float32; lo, hi = type limits minus zp (clamping before rounding to integer bounds equals
 * saturating after). NaN gives 0 as in the generic path. Blocks of 8 so that GCC's -O2
 * (very-cheap cost model) vectorizes. */
#define QDQ_Q_ONE(T, i)                                                                     \
  do {                                                                                      \
    float r = x[i] / s, v = r < lo ? lo : r;                                                \
    v = v > hi ? hi : v;                                                                    \
    v = r != r ? z0 : v;                                                                    \
    y[i] = (T)((int32_t)((v + QDQ_RNE_MAGIC) - QDQ_RNE_MAGIC) + zp);                        \
  } while (0)
#define QDQ_Q_ROW(T, name)                                                                  \
  CT_CLONES_AVX2 static void name(const float *restrict x, T *restrict y, int64_t n, float s, int32_t zp, \
                              float lo, float hi) {                                         \
    int64_t m = n - n % 8, i;                                                               \
    const float z0 = (float)-zp;                                                            \
    for (i = 0; i < m; i += 8)                                                              \
      for (int k = 0; k < 8; k++) QDQ_Q_ONE(T, i + k);                                      \
    for (i = m; i < n; i++) QDQ_Q_ONE(T, i);                                                \
  }
/* Dequantize of n int8/uint8 values: y = (x - zp) * s in float32 (exact product rounded
 * once, as the double path: |x - zp| < 2^9). */
#define QDQ_DQ_ROW(T, name)                                                                 \
  CT_CLONES_AVX2 static void name(const T *restrict x, float *restrict y, int64_t n, float s, int32_t zp) { \
    int64_t m = n - n % 8, i;                                                               \
    for (i = 0; i < m; i += 8)                                                              \
      for (int k = 0; k < 8; k++) y[i + k] = (float)((int32_t)x[i + k] - zp) * s;           \
    for (i = m; i < n; i++) y[i] = (float)((int32_t)x[i] - zp) * s;                         \
  }
QDQ_Q_ROW(uint8_t, q_row_u8)
QDQ_Q_ROW(int8_t, q_row_i8)
QDQ_DQ_ROW(uint8_t, dq_row_u8)
QDQ_DQ_ROW(int8_t, dq_row_i8)
#undef QDQ_Q_ONE
#undef QDQ_Q_ROW
#undef QDQ_DQ_ROW

/* One run of n elements at element offset off with scale sc and zero point zp, quantized
 * type qt (U8 or I8). */
static void qdq_run(bool q, ct_dtype qt, const ct_tensor *x, ct_tensor *y, int64_t off, int64_t n,
                    float sc, int32_t zp) {
  float lo = (float)(ct_quant_min(qt) - zp), hi = (float)(ct_quant_max(qt) - zp);
  if (q && ct_qdq_q_row512((const float *)x->data + off, (char *)y->data + off, qt == CT_U8, n, sc, zp, lo, hi)) return;
  if (!q && ct_qdq_dq_row512((const char *)x->data + off, qt == CT_U8, (float *)y->data + off, n, sc, zp)) return;
  if (q && qt == CT_U8) q_row_u8((const float *)x->data + off, (uint8_t *)y->data + off, n, sc, zp, lo, hi);
  else if (q) q_row_i8((const float *)x->data + off, (int8_t *)y->data + off, n, sc, zp, lo, hi);
  else if (qt == CT_U8) dq_row_u8((const uint8_t *)x->data + off, (float *)y->data + off, n, sc, zp);
  else dq_row_i8((const int8_t *)x->data + off, (float *)y->data + off, n, sc, zp);
}

/* Fast path of Quantize (f32 -> u8/i8) and Dequantize (u8/i8 -> f32) with f32 scales, per
 * tensor (ns = 1) or per axis (ns channels of inner elements). false when the dtypes are
 * others (the caller then runs the generic path). */
static bool qdq_fast(bool q, const ct_tensor *x, const ct_tensor *s, const ct_tensor *z, ct_tensor *y,
                     int64_t ns, int64_t inner) {
  ct_dtype qt = q ? y->dtype : x->dtype, ft = q ? x->dtype : y->dtype;
  if (s->dtype != CT_F32 || ft != CT_F32 || (qt != CT_U8 && qt != CT_I8) || (z && z->dtype != qt)) return false;
  int64_t n = ct_tensor_numel(x);
  if (ns == 1) inner = n;
  if (n == 0 || inner == 0) return true;
  const float *ps = s->data;
  for (int64_t o = 0; o < n / (ns * inner); o++)
    for (int64_t c = 0; c < ns; c++)
      qdq_run(q, qt, x, y, (o * ns + c) * inner, inner, ps[c], z ? (int32_t)ct_ops_get_i64(z, c) : 0);
  return true;
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
    if (!ct_ops_axis(ct_attr_qdq_axis(op), x->ndim, &ax) || x->shape[ax] != ns)
      return ct_ops_err(d, CT_ERR_INPUT, op, "scale does not match the quantization axis");
    inner = ct_shape_numel(x->ndim - ax - 1, x->shape + ax + 1);
  }
  if (z && ct_tensor_numel(z) != ns) return ct_ops_err(d, CT_ERR_INPUT, op, "zero point size differs from scale");
  bool q = op->kind == CT_OP_QUANTIZELINEAR;
  if (qdq_fast(q, x, s, z, y, ns, inner)) return CT_OK;
  for (int64_t e = 0; e < n; e++) {
    int64_t c = ns > 1 ? (e / inner) % ns : 0;
    double sc = ct_tensor_get_f64(s, c);
    int64_t zp = z ? ct_ops_get_i64(z, c) : 0;
    if (q) {
      double xv = ct_tensor_get_f64(x, e), r = xv / sc;
      if (x->dtype == CT_F32 && s->dtype == CT_F32) r = (float)xv / (float)sc; /* as runtimes do */
      double v = nearbyint(r) + (double)zp;
      v = isnan(v) ? 0 : v < -4e18 ? -4e18 : v > 4e18 ? 4e18 : v;
      ct_ops_set_i64(y, e, ct_quant_saturate((int64_t)v, y->dtype));
    } else {
      ct_tensor_set_f64(y, e, (double)(ct_ops_get_i64(x, e) - zp) * sc);
    }
  }
  return CT_OK;
}

/* ---- shape functions ---- */

/* OneHot: output rank r+1 with depth inserted at axis (default -1); dtype of values. */
ct_status ct_shape_onehot(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *v = NULL;
  const ct_tensor *dt;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 2, &v, d)) || (st = ct_sm_const(op, 1, "depth", &dt, d))) return st;
  if (!dt || ct_tensor_numel(dt) != 1) return ct_ops_err(d, CT_ERR_INPUT, op, "depth must be a scalar");
  if (ct_value_numel(v) != 2) return ct_ops_err(d, CT_ERR_INPUT, op, "values must have 2 elements");
  int64_t depth = (int64_t)ct_tensor_get_f64(dt, 0), axis = ct_attr_onehot_axis(op), s[CT_MAX_DIMS];
  int r = x->ndim + 1, ax;
  if (depth < 1) return ct_ops_err(d, CT_ERR_INPUT, op, "depth %lld must be positive", (long long)depth);
  if (r > CT_MAX_DIMS || !ct_ops_axis(axis, r, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for output rank %d", (long long)axis, r);
  for (int i = 0, k = 0; i < r; i++) s[i] = i == ax ? depth : x->shape[k++];
  if (!ct_attr_set_onehot_axis(g, op, ax)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
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
  if (!c || c->ndim != 1) return ct_ops_err(d, CT_ERR_INPUT, op, "condition must be 1-D");
  const ct_attr *a = ct_attr_raw_compress_axis(op);
  int ax = -1;
  if (a && !ct_ops_axis(a->i, x->ndim, &ax))
    return ct_ops_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)a->i, x->ndim);
  int64_t len = ax < 0 ? ct_value_numel(x) : x->shape[ax], cnt = 0, s[CT_MAX_DIMS];
  if (c->shape[0] > len) return ct_ops_err(d, CT_ERR_INPUT, op, "condition is longer than the input");
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
  if (x->ndim != 2) return ct_ops_err(d, CT_ERR_INPUT, op, "input must be 2-D");
  ct_dtype dt = x->dtype;
  const ct_attr *a = ct_attr_raw_eyelike_dtype(op);
  if (a && !ct_dtype_from_onnx((int)a->i, &dt))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: ONNX data type %lld", (long long)a->i);
  ct_sm_out(op, 0, dt, 2, x->shape);
  return CT_OK;
}

/* NonZero: [rank, count] int64, computable only from constant data. */
ct_status ct_shape_nonzero(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  if (!ct_value_is_const(x)) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape");
  int64_t n = ct_tensor_numel(x->data), s[2] = {x->ndim, 0};
  for (int64_t i = 0; i < n; i++) s[1] += ct_tensor_get_f64(x->data, i) != 0;
  ct_sm_out(op, 0, CT_I64, 2, s);
  return CT_OK;
}
