/* quantization.c: ONNX quantization family, QOperator int8 ops: shape functions and kernels of
 * QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger and DynamicQuantizeLinear. Operands
 * minus zero points accumulated exactly in int32 by direct loops, requantized in float32 with
 * round half to even and saturation (the float semantics of the ONNX spec, not quant/'s).
 * Conv and MatMul geometry is delegated to ct_shape_conv / ct_shape_matmul on a float view.
 * QuantizeLinear/DequantizeLinear: tensor_generator.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"
#include "ops/broadcast.h"
#include "ops/ops_util.h"
#include "ops/nn_util.h"
#include "ops/shape_util.h"

/* Entry c of a per-tensor (1 entry) or per-channel parameter t; dflt when t is NULL. */
static double qp(const ct_tensor *t, int64_t c, double dflt) {
  if (!t) return dflt;
  return ct_tensor_get_f64(t, ct_tensor_numel(t) == 1 ? 0 : c);
}

/* out[e] = t[e] − zp[(e / inner) % nz] as int32 (zp NULL = 0, 1 entry = per tensor). NULL
 * when out of memory. */
static int32_t *minus_zp(const ct_tensor *t, const ct_tensor *zp, int64_t inner) {
  int64_t n = ct_tensor_numel(t), nz = zp ? ct_tensor_numel(zp) : 1;
  int32_t *o = malloc(sizeof *o * (size_t)(n ? n : 1));
  if (!o) return NULL;
  for (int64_t e = 0; e < n; e++)
    o[e] = (int32_t)(ct_ops_get_i64(t, e) - (zp ? ct_ops_get_i64(zp, nz == 1 ? 0 : (e / inner) % nz) : 0));
  return o;
}

/* saturate_dt(round_half_even(v) + zp) (float32 v; NaN gives zp). */
static int64_t round_sat(float v, int64_t zp, ct_dtype dt) {
  float r = nearbyintf(v);
  r = isnan(r) ? 0 : fminf(fmaxf(r, -1e9f), 1e9f);
  return ct_quant_saturate((int64_t)r + zp, dt);
}

/* y = saturate(round_half_even(acc · mult) + zp) for y's integer dtype, in float32. */
static int64_t requant(int64_t acc, float mult, int64_t zp, ct_dtype dt) { return round_sat((float)acc * mult, zp, dt); }

/* ---- integer convolution ---- */

typedef struct iconv_job {
  ct_nn_geo g;
  int64_t c, oc, cg, ocg, kvol, ivol, ovol;
  const int32_t *x, *w;
  int32_t *acc; /* (N, OC, out volume) */
} iconv_job;

/* acc for the (n, oc) planes [lo, hi): direct loops over (c, kd, kh, kw), zero padding. */
static void iconv_rows(void *arg, int64_t lo, int64_t hi, int part) {
  (void)part;
  const iconv_job *j = arg;
  const ct_nn_geo *g = &j->g;
  for (int64_t r = lo; r < hi; r++) {
    int64_t n = r / j->oc, oc = r % j->oc, grp = oc / j->ocg;
    const int32_t *w = j->w + oc * j->cg * j->kvol;
    int32_t *y = j->acc + r * j->ovol;
    for (int64_t p = 0; p < j->ovol; p++) {
      int64_t o[3] = {p / (g->out[1] * g->out[2]), p / g->out[2] % g->out[1], p % g->out[2]}, s = 0;
      for (int64_t q = 0; q < j->cg * j->kvol; q++) {
        int64_t kk[3] = {q / (g->k[1] * g->k[2]) % g->k[0], q / g->k[2] % g->k[1], q % g->k[2]}, off = 0;
        bool inside = true;
        for (int i = 0; i < 3; i++) {
          int64_t pos = o[i] * g->s[i] - g->pb[i] + kk[i] * g->dl[i];
          inside = inside && pos >= 0 && pos < g->in[i];
          off = off * g->in[i] + pos;
        }
        if (inside) s += (int64_t)w[q] * j->x[(n * j->c + grp * j->cg + q / j->kvol) * j->ivol + off];
      }
      y[p] = (int32_t)s;
    }
  }
}

/* Integer conv of x (N, C, spatial) and w (OC, C/group, k) minus their zero points (x per
 * tensor, w per tensor or per output channel) into acc (N, OC, out volume of y). */
static ct_status iconv(const ct_op *op, const ct_tensor *x, const ct_tensor *xz, const ct_tensor *w,
                       const ct_tensor *wz, const ct_tensor *y, int32_t *acc, const ct_kernel_ctx *ctx, ct_diag *d) {
  iconv_job j = {.acc = acc};
  ct_status st = ct_nn_geo_read(op, x, w, y, &j.g, d);
  if (st) return st;
  int64_t group = ct_attr_conv_group(op);
  j.c = x->shape[1], j.oc = w->shape[0];
  if (group < 1 || j.c % group || j.oc % group || w->shape[1] * group != j.c || y->shape[1] != j.oc)
    return ct_shape_nn_fail(d, op, "weight shape does not match the channels (group %lld)", (long long)group);
  j.cg = j.c / group, j.ocg = j.oc / group;
  j.kvol = j.g.k[0] * j.g.k[1] * j.g.k[2], j.ivol = j.g.in[0] * j.g.in[1] * j.g.in[2];
  j.ovol = j.g.out[0] * j.g.out[1] * j.g.out[2];
  if (ct_tensor_numel(w) != j.oc * j.cg * j.kvol) return ct_shape_nn_fail(d, op, "kernel_shape differs from the weight");
  int32_t *xs = minus_zp(x, xz, 1), *ws = minus_zp(w, wz, j.cg * j.kvol);
  if (xs && ws) {
    j.x = xs, j.w = ws;
    int64_t rows = x->shape[0] * j.oc;
    ct_nn_parallel(ctx, rows, rows * j.ovol * j.cg * j.kvol, iconv_rows, &j);
  }
  free(xs);
  free(ws);
  return xs && ws ? CT_OK : ct_shape_nn_oom(d, op);
}

/* ConvInteger: Y int32 = conv(x − x_zero_point, w − w_zero_point). */
ct_status ct_kern_convinteger(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                              ct_diag *d) {
  ct_status st = ct_nn_need(op, out[0], CT_I32, "output Y", d);
  if (st) return st;
  return iconv(op, in[0], op->n_in > 2 ? in[2] : NULL, in[1], op->n_in > 3 ? in[3] : NULL, out[0], out[0]->data,
               ctx, d);
}

/* QLinearConv: Y = sat(round_half_even((conv(x − x_zp, w − w_zp) + B) · x_scale·w_scale/y_scale) + y_zp),
 * w_scale/w_zp per tensor or per output channel. */
ct_status ct_kern_qlinearconv(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                              ct_diag *d) {
  ct_tensor *y = out[0];
  const ct_tensor *b = op->n_in > 8 ? in[8] : NULL;
  int64_t n = ct_tensor_numel(y), oc = y->ndim > 1 ? y->shape[1] : 1, plane = oc ? n / (y->shape[0] * oc) : 0;
  if (b && ct_tensor_numel(b) != oc) return ct_shape_nn_fail(d, op, "bias must have %lld entries", (long long)oc);
  int32_t *acc = malloc(sizeof *acc * (size_t)(n ? n : 1));
  if (!acc) return ct_shape_nn_oom(d, op);
  ct_status st = iconv(op, in[0], in[2], in[3], in[5], y, acc, ctx, d);
  for (int64_t e = 0; !st && e < n; e++) {
    int64_t c = e / plane % oc;
    float mult = (float)qp(in[1], 0, 1) * (float)qp(in[4], c, 1) / (float)qp(in[6], 0, 1);
    int64_t a = (int64_t)acc[e] + (b ? ct_ops_get_i64(b, c) : 0);
    ct_ops_set_i64(y, e, requant(a, mult, (int64_t)qp(in[7], 0, 0), y->dtype));
  }
  free(acc);
  return st;
}

/* ---- integer matmul ---- */

/* Batched integer MatMul (numpy matmul broadcasting) of a (…, M, K) and b (…, K, N) minus
 * zero points (a per tensor or per row, b per tensor or per column) into acc (y's elements). */
static ct_status imatmul(const ct_op *op, const ct_tensor *a, const ct_tensor *az, const ct_tensor *b,
                         const ct_tensor *bz, const ct_tensor *y, int32_t *acc, ct_diag *d) {
  int64_t m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1, k = a->shape[a->ndim - 1];
  int64_t kb = b->ndim >= 2 ? b->shape[b->ndim - 2] : b->shape[0], n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
  int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0;
  int ny = y->ndim - (a->ndim >= 2) - (b->ndim >= 2);
  if (k != kb || ny < 0 || ny < na || ny < nb) return ct_shape_nn_fail(d, op, "A and B do not multiply");
  int64_t sa[CT_MAX_DIMS], sb[CT_MAX_DIMS], idx[CT_MAX_DIMS] = {0}, batch = ct_shape_numel(ny, y->shape);
  if (!ct_bcast_to(na, a->shape, ny, y->shape) || !ct_bcast_to(nb, b->shape, ny, y->shape))
    return ct_shape_nn_fail(d, op, "batch dims do not broadcast");
  ct_bcast_strides(na, a->shape, ny, y->shape, sa);
  ct_bcast_strides(nb, b->shape, ny, y->shape, sb);
  int32_t *as = minus_zp(a, az, k), *bs = minus_zp(b, bz, 1);
  if (!as || !bs) return free(as), free(bs), ct_shape_nn_oom(d, op);
  for (int64_t t = 0; t < batch; t++) {
    int64_t oa = 0, ob = 0;
    for (int i = 0; i < ny; i++) oa += idx[i] * sa[i], ob += idx[i] * sb[i];
    const int32_t *pa = as + oa * m * k, *pb = bs + ob * k * n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        int64_t s = 0;
        for (int64_t q = 0; q < k; q++) s += (int64_t)pa[i * k + q] * pb[q * n + j];
        acc[(t * m + i) * n + j] = (int32_t)s;
      }
    ct_ops_next_index(idx, ny, y->shape);
  }
  free(as);
  free(bs);
  return CT_OK;
}

/* MatMulInteger: Y int32 = (a − a_zero_point) · (b − b_zero_point). */
ct_status ct_kern_matmulinteger(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                ct_diag *d) {
  (void)ctx;
  ct_status st = ct_nn_need(op, out[0], CT_I32, "output Y", d);
  if (st) return st;
  return imatmul(op, in[0], op->n_in > 2 ? in[2] : NULL, in[1], op->n_in > 3 ? in[3] : NULL, out[0], out[0]->data, d);
}

/* QLinearMatMul: Y = sat(round_half_even(((a − a_zp)·(b − b_zp)) · a_scale·b_scale/y_scale) + y_zp),
 * a params per tensor or per row, b and y params per tensor or per column. */
ct_status ct_kern_qlinearmatmul(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                ct_diag *d) {
  (void)ctx;
  ct_tensor *y = out[0];
  const ct_tensor *a = in[0], *b = in[3];
  int64_t n = ct_tensor_numel(y), m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
  int64_t cols = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
  int32_t *acc = malloc(sizeof *acc * (size_t)(n ? n : 1));
  if (!acc) return ct_shape_nn_oom(d, op);
  ct_status st = imatmul(op, a, in[2], b, in[5], y, acc, d);
  for (int64_t e = 0; !st && e < n; e++) {
    int64_t j = e % cols, i = e / cols % m;
    float mult = (float)qp(in[1], i, 1) * (float)qp(in[4], j, 1) / (float)qp(in[6], j, 1);
    ct_ops_set_i64(y, e, requant(acc[e], mult, (int64_t)qp(in[7], j, 0), y->dtype));
  }
  free(acc);
  return st;
}

/* DynamicQuantizeLinear: scale = (max(0, max x) − min(0, min x)) / 255, zp = sat_u8(round_half_even(−min/scale)),
 * y = sat_u8(round_half_even(x / scale) + zp); an all-zero x gives scale 0, zp 0, y 0. */
ct_status ct_kern_dynquant(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                           ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  ct_status st;
  if ((st = ct_nn_need(op, x, CT_F32, "input x", d)) || (st = ct_nn_need(op, out[0], CT_U8, "output y", d)) ||
      (st = ct_nn_need(op, out[1], CT_F32, "output y_scale", d)) ||
      (st = ct_nn_need(op, out[2], CT_U8, "output y_zero_point", d)))
    return st;
  const float *xv = x->data;
  int64_t n = ct_tensor_numel(x);
  float lo = 0, hi = 0;
  for (int64_t e = 0; e < n; e++) lo = fminf(lo, xv[e]), hi = fmaxf(hi, xv[e]);
  float scale = (hi - lo) / 255.0f;
  int64_t zp = scale > 0 ? round_sat(-lo / scale, 0, CT_U8) : 0;
  for (int64_t e = 0; e < n; e++)
    ((uint8_t *)out[0]->data)[e] = (uint8_t)(scale > 0 ? round_sat(xv[e] / scale, zp, CT_U8) : 0);
  *(float *)out[1]->data = scale;
  *(uint8_t *)out[2]->data = (uint8_t)zp;
  return CT_OK;
}

/* ---- shape functions ---- */

/* Runs the float op `kind`'s shape function on a view of op whose inputs are a, b (and bias)
 * typed f32; the canonical attributes it writes land on op; output 0 then gets out_dt. */
static ct_status via_float(ct_graph *g, ct_op *op, ct_op_kind kind, const ct_value *a, const ct_value *b,
                           const ct_value *bias, ct_dtype out_dt, ct_diag *d) {
  ct_value fa = *a, fb = *b, fc;
  fa.dtype = fb.dtype = CT_F32;
  ct_value *ins[3] = {&fa, &fb, NULL};
  if (bias) {
    fc = *bias;
    fc.dtype = CT_F32;
    ins[2] = &fc;
  }
  ct_op view = *op;
  view.kind = kind;
  view.in = ins;
  view.n_in = bias ? 3 : 2;
  view.n_out = 1;
  ct_status st = ct_shape_fn_of(kind)(g, &view, d);
  op->attrs = view.attrs, op->n_attr = view.n_attr, op->cap_attr = view.cap_attr;
  if (st) return st;
  ct_value *y = op->out[0];
  ct_value_set_type(y, out_dt, y->ndim, y->shape);
  return CT_OK;
}

/* Checks that quantization parameter input i (scale or zero point), when present, has 1 or
 * n entries (per tensor or per channel/row/column). */
static ct_status qparam(const ct_op *op, int i, int64_t n, const char *what, ct_diag *d) {
  if (i >= op->n_in || !op->in[i]) return CT_OK;
  int64_t k = ct_value_numel(op->in[i]);
  if (op->in[i]->ndim > 1 || (k != 1 && k != n))
    return ct_ops_err(d, CT_ERR_INPUT, op, "%s (input %d) must have 1 or %lld entries", what, i, (long long)n);
  return CT_OK;
}

/* Checks input i is an 8-bit integer tensor. */
static ct_status int8_input(const ct_op *op, int i, ct_diag *d) {
  ct_value *v;
  ct_status st = ct_sm_in(op, i, &v, d);
  if (st) return st;
  if (v->dtype != CT_I8 && v->dtype != CT_U8)
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported dtype %s for input %d (int8/uint8 expected)",
                     ct_dtype_name(v->dtype), i);
  return CT_OK;
}

/* QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B int32]; Y like Conv's
 * output, dtype of y_zero_point. w_scale/w_zp per tensor or per output channel. */
ct_status ct_shape_qlinearconv(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  ct_value *y_zp;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 3, d)) || (st = int8_input(op, 7, d))) return st;
  y_zp = op->in[7];
  int64_t oc = op->in[3]->shape[0];
  if ((st = qparam(op, 1, 1, "x_scale", d)) || (st = qparam(op, 2, 1, "x_zero_point", d)) ||
      (st = qparam(op, 4, oc, "w_scale", d)) || (st = qparam(op, 5, oc, "w_zero_point", d)) ||
      (st = qparam(op, 6, 1, "y_scale", d)) || (st = qparam(op, 7, 1, "y_zero_point", d)))
    return st;
  const ct_value *b = op->n_in > 8 ? op->in[8] : NULL;
  if (b && b->dtype != CT_I32) return ct_ops_err(d, CT_ERR_INPUT, op, "bias must be int32");
  return via_float(g, op, CT_OP_CONV, op->in[0], op->in[3], b, y_zp->dtype, d);
}

/* ConvInteger: x, w[, x_zp, w_zp]; int32 Y like Conv's output. */
ct_status ct_shape_convinteger(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 1, d))) return st;
  int64_t oc = op->in[1]->shape[0];
  if ((st = qparam(op, 2, 1, "x_zero_point", d)) || (st = qparam(op, 3, oc, "w_zero_point", d))) return st;
  return via_float(g, op, CT_OP_CONV, op->in[0], op->in[1], NULL, CT_I32, d);
}

/* Rows of A (1 for 1-D A) and columns of B (1 for 1-D B) of a MatMul. */
static void mm_rows_cols(const ct_value *a, const ct_value *b, int64_t *m, int64_t *n) {
  *m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
  *n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
}

/* QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp; Y like MatMul's output,
 * dtype of y_zero_point. a params per tensor or per row, b/y params per tensor or per column. */
ct_status ct_shape_qlinearmatmul(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 3, d)) || (st = int8_input(op, 7, d))) return st;
  int64_t m, n;
  mm_rows_cols(op->in[0], op->in[3], &m, &n);
  if ((st = qparam(op, 1, m, "a_scale", d)) || (st = qparam(op, 2, m, "a_zero_point", d)) ||
      (st = qparam(op, 4, n, "b_scale", d)) || (st = qparam(op, 5, n, "b_zero_point", d)) ||
      (st = qparam(op, 6, n, "y_scale", d)) || (st = qparam(op, 7, n, "y_zero_point", d)))
    return st;
  return via_float(g, op, CT_OP_MATMUL, op->in[0], op->in[3], NULL, op->in[7]->dtype, d);
}

/* MatMulInteger: a, b[, a_zp per tensor or row, b_zp per tensor or column]; int32 Y like MatMul's. */
ct_status ct_shape_matmulinteger(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 1, d))) return st;
  int64_t m, n;
  mm_rows_cols(op->in[0], op->in[1], &m, &n);
  if ((st = qparam(op, 2, m, "a_zero_point", d)) || (st = qparam(op, 3, n, "b_zero_point", d))) return st;
  return via_float(g, op, CT_OP_MATMUL, op->in[0], op->in[1], NULL, CT_I32, d);
}

/* DynamicQuantizeLinear: f32 x → y uint8 (x's shape), y_scale f32 scalar, y_zero_point uint8 scalar. */
ct_status ct_shape_dynquant(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  if (x->dtype != CT_F32) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported dtype %s (float32 expected)", ct_dtype_name(x->dtype));
  ct_sm_out(op, 0, CT_U8, x->ndim, x->shape);
  ct_sm_out(op, 1, CT_F32, 0, NULL);
  ct_sm_out(op, 2, CT_U8, 0, NULL);
  return CT_OK;
}
