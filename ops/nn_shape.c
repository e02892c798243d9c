/* nn_shape.c: shape functions of the windowed and matrix ops: Conv, ConvTranspose, MaxPool,
 * AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, Gemm, MatMul, and the helpers of
 * nn_shape_util.h. Output-size and auto_pad formulas are those of the ONNX operator spec
 * (Conv-11, ConvTranspose-11, MaxPool-12, AveragePool-11, Gemm-13, MatMul-13). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/limits.h"
#include "ops/shape.h"
#include "ops/nn_shape_util.h"
#include "ops/broadcast.h"

ct_status ct_shape_nn_fail(ct_diag *d, const ct_op *op, const char *fmt, ...) {
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return ct_diag_set(d, CT_ERR_INPUT, "node \"%s\" (op %s): %s", op->loc, ct_op_name(op->kind), buf);
}

ct_status ct_shape_nn_input(const ct_op *op, int i, int min_ndim, ct_diag *d) {
  if (i >= op->n_in || !op->in[i]) return ct_shape_nn_fail(d, op, "input %d is missing", i);
  const ct_value *v = op->in[i];
  if (v->ndim < 0) return ct_shape_nn_fail(d, op, "input %d (\"%s\") has no shape", i, v->name);
  if (v->ndim < min_ndim)
    return ct_shape_nn_fail(d, op, "input %d (\"%s\") has rank %d, expected at least %d", i, v->name,
                            v->ndim, min_ndim);
  return CT_OK;
}

ct_status ct_shape_nn_float_input(const ct_op *op, int i, ct_diag *d) {
  ct_dtype dt = op->in[i]->dtype;
  if (dt != CT_F32) return ct_shape_nn_fail(d, op, "unsupported dtype %s of input %d (f32 only)", ct_dtype_name(dt), i);
  return CT_OK;
}

ct_status ct_shape_nn_exact_f32_input(const ct_op *op, int i, ct_diag *d) {
  static const ct_dtype ok[] = {CT_F32, CT_F16, CT_BF16, CT_U8, CT_I8, CT_U16, CT_I16};
  ct_dtype dt = op->in[i]->dtype;
  for (size_t k = 0; k < sizeof ok / sizeof *ok; k++)
    if (dt == ok[k]) return CT_OK;
  return ct_shape_nn_fail(d, op, "unsupported dtype %s of input %d", ct_dtype_name(dt), i);
}

ct_status ct_shape_nn_set_out(ct_op *op, int i, ct_dtype dt, int ndim, const int64_t *shape, ct_diag *d) {
  if (i >= op->n_out || !op->out[i]) {
    if (i == 0) return ct_shape_nn_fail(d, op, "output 0 is missing");
    return CT_OK; /* absent optional output */
  }
  ct_value_set_type(op->out[i], dt, ndim, shape);
  return CT_OK;
}

ct_status ct_shape_nn_ints(const ct_op *op, const char *name, ct_attr_ints_fn get, int n, int64_t dflt,
                           int64_t *out, ct_diag *d) {
  int got = 0;
  const int64_t *v = get(op, &got);
  if (!v) {
    for (int i = 0; i < n; i++) out[i] = dflt;
    return CT_OK;
  }
  if (got != n) return ct_shape_nn_fail(d, op, "attribute %s has %d values, expected %d", name, got, n);
  memcpy(out, v, sizeof *out * (size_t)n);
  return CT_OK;
}

ct_status ct_shape_nn_oom(ct_diag *d, const ct_op *op) {
  return ct_diag_set(d, CT_ERR_LIMIT, "node \"%s\" (op %s): out of memory", op->loc, ct_op_name(op->kind));
}

ct_status ct_shape_nn_check_act(const ct_op *op, ct_diag *d) {
  static const char *const acts[] = {"none", "relu", "relu6", "leaky_relu", "clip"};
  const char *a = ct_attr_act_act(op);
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
    if (strcmp(a, acts[i]) == 0) return CT_OK;
  return ct_shape_nn_fail(d, op, "unsupported act \"%s\"", a);
}

/* Reads kernel_shape/strides/dilations/pads/auto_pad into geo (kernel from `kernel` when
 * the attribute is absent), resolves auto_pad and computes the output sizes. ceil selects
 * ceil_mode rounding (pools). Formulas: ONNX Conv-11 / MaxPool-12 "auto_pad" and "output shape". */
static ct_status sp_read(const ct_op *op, const int64_t *kernel, int ceil, ct_shape_nn_geo *geo, ct_diag *d) {
  int n = geo->nsp;
  ct_status st;
  if ((st = ct_shape_nn_ints(op, "strides", ct_attr_window_strides, n, 1, geo->s, d)) ||
      (st = ct_shape_nn_ints(op, "dilations", ct_attr_window_dilations, n, 1, geo->dl, d)) ||
      (st = ct_shape_nn_ints(op, "pads", ct_attr_window_pads, 2 * n, 0, geo->pads, d)))
    return st;
  if (ct_attr_raw_window_kernel_shape(op)) {
    if ((st = ct_shape_nn_ints(op, "kernel_shape", ct_attr_window_kernel_shape, n, 1, geo->k, d))) return st;
    if (kernel)
      for (int i = 0; i < n; i++)
        if (geo->k[i] != kernel[i])
          return ct_shape_nn_fail(d, op, "kernel_shape[%d] = %lld but the weight has %lld", i,
                                  (long long)geo->k[i], (long long)kernel[i]);
  } else if (kernel) {
    memcpy(geo->k, kernel, sizeof *kernel * (size_t)n);
  } else {
    return ct_shape_nn_fail(d, op, "attribute kernel_shape is missing");
  }
  for (int i = 0; i < n; i++) {
    if (geo->k[i] < 1 || geo->s[i] < 1 || geo->dl[i] < 1)
      return ct_shape_nn_fail(d, op, "kernel_shape, strides and dilations must be positive (dim %d)", i);
    if (geo->pads[i] < 0 || geo->pads[i + n] < 0)
      return ct_shape_nn_fail(d, op, "unsupported negative pads (dim %d)", i);
  }
  const char *ap = ct_attr_window_auto_pad(op);
  bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
  if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
    return ct_shape_nn_fail(d, op, "unsupported auto_pad \"%s\"", ap);
  for (int i = 0; i < n; i++) {
    int64_t ext, padded, tot;
    if (!ct_kernel_extent(geo->k[i], geo->dl[i], &ext))
      return ct_shape_nn_fail(d, op, "kernel extent (kernel_shape[%d] - 1) * dilations[%d] + 1 overflows 64 bits", i, i);
    if (strcmp(ap, "VALID") == 0) geo->pads[i] = geo->pads[i + n] = 0;
    if (!ct_add_i64(geo->in[i], geo->pads[i], &padded) || !ct_add_i64(padded, geo->pads[i + n], &padded))
      return ct_shape_nn_fail(d, op, "padded input size overflows 64 bits (dim %d)", i);
    if (same) {
      int64_t o = (geo->in[i] + geo->s[i] - 1) / geo->s[i];
      if (!ct_mul_i64(o - 1, geo->s[i], &tot) || !ct_add_i64(tot, ext, &tot))
        return ct_shape_nn_fail(d, op, "SAME padding overflows 64 bits (dim %d)", i);
      tot -= geo->in[i];
      if (tot < 0) tot = 0;
      int64_t small = tot / 2, big = tot - tot / 2;
      geo->pads[i] = ap[5] == 'U' ? small : big;
      geo->pads[i + n] = ap[5] == 'U' ? big : small;
      geo->out[i] = o;
      continue;
    }
    int64_t span = padded - ext;
    if (span < 0)
      return ct_shape_nn_fail(d, op, "kernel extent %lld exceeds padded input %lld (dim %d)", (long long)ext,
                              (long long)padded, i);
    geo->out[i] = (ceil ? (span + geo->s[i] - 1) / geo->s[i] : span / geo->s[i]) + 1;
    /* ceil_mode: a window that would start inside the end padding is dropped (PyTorch rule,
     * adopted by ONNX 1.16's reference) */
    if (ceil && (geo->out[i] - 1) * geo->s[i] >= geo->in[i] + geo->pads[i]) geo->out[i]--;
  }
  return CT_OK;
}

/* Writes the canonical spatial attributes (explicit kernel_shape/strides/dilations/pads,
 * no auto_pad). */
static ct_status sp_store(ct_graph *g, ct_op *op, const ct_shape_nn_geo *geo, ct_diag *d) {
  int n = geo->nsp;
  if (!ct_attr_set_window_kernel_shape(g, op, n, geo->k) || !ct_attr_set_window_strides(g, op, n, geo->s) ||
      !ct_attr_set_window_dilations(g, op, n, geo->dl) || !ct_attr_set_window_pads(g, op, 2 * n, geo->pads))
    return ct_shape_nn_oom(d, op);
  ct_attr_del_window_auto_pad(op);
  return CT_OK;
}

/* Checks shared by Conv and ConvTranspose: X and W present with rank >= 3 and equal ranks, X
 * f32, a known act; reads attribute group (default 1) into *group and checks it is >= 1 and
 * divides X's channels. CT_ERR_INPUT otherwise. */
static ct_status conv_common(const ct_op *op, int64_t *group, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 3, d)) || (st = ct_shape_nn_input(op, 1, 3, d)) ||
      (st = ct_shape_nn_float_input(op, 0, d)) || (st = ct_shape_nn_check_act(op, d)))
    return st;
  const ct_value *x = op->in[0], *w = op->in[1];
  if (w->ndim != x->ndim)
    return ct_shape_nn_fail(d, op, "weight has rank %d, input has rank %d", w->ndim, x->ndim);
  *group = ct_attr_conv_group(op);
  if (*group < 1 || x->shape[1] % *group)
    return ct_shape_nn_fail(d, op, "group %lld does not divide %lld input channels", (long long)*group,
                            (long long)x->shape[1]);
  return CT_OK;
}

/* Conv (ONNX Conv-11, also the fused Top form with act): X (N, C, spatial...) and W (OC, C/group,
 * k...) give Y (N, OC, out...), out = floor((in + pads - dil (k - 1) - 1) / stride) + 1; writes
 * explicit kernel_shape/strides/dilations/pads/group and drops auto_pad (SAME_UPPER/LOWER:
 * out = ceil(in / stride), extra pad at the end/start). Errors: CT_ERR_INPUT for channel, group,
 * bias or rank mismatches, a kernel larger than the padded input, non-f32 X, unknown act. */
ct_status ct_shape_conv(ct_graph *g, ct_op *op, ct_diag *d) {
  int64_t group = 1;
  ct_status st = conv_common(op, &group, d);
  if (st) return st;
  const ct_value *x = op->in[0], *w = op->in[1];
  if (w->shape[0] % group)
    return ct_shape_nn_fail(d, op, "group %lld does not divide %lld output channels", (long long)group,
                            (long long)w->shape[0]);
  if (w->shape[1] * group != x->shape[1])
    return ct_shape_nn_fail(d, op, "weight has %lld input channels, input has %lld (group %lld)",
                            (long long)w->shape[1], (long long)x->shape[1], (long long)group);
  if (op->n_in > 2 && op->in[2]) {
    const ct_value *b = op->in[2];
    if (b->ndim != 1 || b->shape[0] != w->shape[0])
      return ct_shape_nn_fail(d, op, "bias must have shape [%lld]", (long long)w->shape[0]);
  }
  ct_shape_nn_geo geo = {.nsp = x->ndim - 2};
  memcpy(geo.in, x->shape + 2, sizeof(int64_t) * (size_t)geo.nsp);
  if ((st = sp_read(op, w->shape + 2, 0, &geo, d))) return st;
  if ((st = sp_store(g, op, &geo, d))) return st;
  if (!ct_attr_set_conv_group(g, op, group)) return ct_shape_nn_oom(d, op);
  int64_t shape[CT_MAX_DIMS] = {x->shape[0], w->shape[0]};
  memcpy(shape + 2, geo.out, sizeof(int64_t) * (size_t)geo.nsp);
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, shape, d);
}

/* ConvTranspose output size and pads: ONNX ConvTranspose-11. A requested output_shape larger
 * than the natural size pads the end with bias-only positions (total padding clamped at 0,
 * as onnxruntime does; the conformance test convtranspose_output_shape expects this). */
static ct_status convt_geo(const ct_op *op, const ct_value *x, const ct_value *w, ct_shape_nn_geo *geo,
                           int64_t *outpad, bool *keep_os, ct_diag *d) {
  int n = geo->nsp;
  ct_status st;
  if ((st = ct_shape_nn_ints(op, "output_padding", ct_attr_convt_output_padding, n, 0, outpad, d))) return st;
  const char *ap = ct_attr_window_auto_pad(op);
  if ((st = ct_shape_nn_ints(op, "strides", ct_attr_window_strides, n, 1, geo->s, d)) ||
      (st = ct_shape_nn_ints(op, "dilations", ct_attr_window_dilations, n, 1, geo->dl, d)) ||
      (st = ct_shape_nn_ints(op, "pads", ct_attr_window_pads, 2 * n, 0, geo->pads, d)) ||
      (st = ct_shape_nn_ints(op, "kernel_shape", ct_attr_window_kernel_shape, n, 0, geo->k, d)))
    return st;
  int nos = 0;
  const int64_t *os = ct_attr_convt_output_shape(op, &nos);
  if (os && nos != n && nos != n + 2)
    return ct_shape_nn_fail(d, op, "attribute output_shape has %d values, expected %d", nos, n);
  if (os && nos == n + 2) os += 2;
  bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
  if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
    return ct_shape_nn_fail(d, op, "unsupported auto_pad \"%s\"", ap);
  *keep_os = os && !same;
  *keep_os = os && !same;
  for (int i = 0; i < n; i++) {
    if (geo->k[i] == 0) geo->k[i] = w->shape[2 + i];
    if (geo->k[i] != w->shape[2 + i])
      return ct_shape_nn_fail(d, op, "kernel_shape[%d] = %lld but the weight has %lld", i, (long long)geo->k[i],
                              (long long)w->shape[2 + i]);
    if (geo->s[i] < 1 || geo->dl[i] < 1 || geo->pads[i] < 0 || geo->pads[i + n] < 0 || outpad[i] < 0)
      return ct_shape_nn_fail(d, op, "strides/dilations must be positive, pads non-negative (dim %d)", i);
    int64_t in = x->shape[2 + i];
    int64_t natural = geo->s[i] * (in - 1) + outpad[i] + (geo->k[i] - 1) * geo->dl[i] + 1;
    if (strcmp(ap, "VALID") == 0) geo->pads[i] = geo->pads[i + n] = 0;
    int64_t want = os ? os[i] : same ? in * geo->s[i] : -1;
    if (want >= 0) {
      int64_t tot = natural - want;
      if (tot < 0) tot = 0, *keep_os = true; /* bias-only positions: only output_shape says so */
      bool upper = strcmp(ap, "SAME_UPPER") == 0;
      geo->pads[i] = upper ? tot / 2 : tot - tot / 2;
      geo->pads[i + n] = upper ? tot - tot / 2 : tot / 2;
      geo->out[i] = want;
    } else {
      geo->out[i] = natural - geo->pads[i] - geo->pads[i + n];
    }
    if (geo->out[i] < 1) return ct_shape_nn_fail(d, op, "output size %lld < 1 (dim %d)", (long long)geo->out[i], i);
  }
  return CT_OK;
}

/* ConvTranspose (ONNX ConvTranspose-11): W is (C, OC/group, k...); out = stride (in - 1) +
 * output_padding + dil (k - 1) + 1 - pads, or output_shape / SAME (out = in * stride) with the
 * total padding split as the spec says (SAME_UPPER: extra at the end). Writes explicit
 * kernel_shape/strides/dilations/pads/group/output_padding, and output_shape only where the
 * explicit pads cannot say the size (a user's output_shape without SAME, whose split is then
 * recomputed identically; a size beyond the natural one), so that running the function again
 * on its own result (verifier, text round trip) is a fixed point. CT_ERR_INPUT on
 * inconsistent shapes or attributes. */
ct_status ct_shape_convtranspose(ct_graph *g, ct_op *op, ct_diag *d) {
  int64_t group = 1;
  ct_status st = conv_common(op, &group, d);
  if (st) return st;
  const ct_value *x = op->in[0], *w = op->in[1];
  if (w->shape[0] != x->shape[1])
    return ct_shape_nn_fail(d, op, "weight has %lld input channels, input has %lld", (long long)w->shape[0],
                            (long long)x->shape[1]);
  int64_t oc = w->shape[1] * group;
  if (op->n_in > 2 && op->in[2] && (op->in[2]->ndim != 1 || op->in[2]->shape[0] != oc))
    return ct_shape_nn_fail(d, op, "bias must have shape [%lld]", (long long)oc);
  ct_shape_nn_geo geo = {.nsp = x->ndim - 2};
  int64_t outpad[CT_MAX_DIMS];
  bool keep_os = false;
  if ((st = convt_geo(op, x, w, &geo, outpad, &keep_os, d))) return st;
  if ((st = sp_store(g, op, &geo, d))) return st;
  int64_t shape[CT_MAX_DIMS] = {x->shape[0], oc};
  memcpy(shape + 2, geo.out, sizeof(int64_t) * (size_t)geo.nsp);
  if (!keep_os) ct_attr_del_convt_output_shape(op);
  if (!ct_attr_set_conv_group(g, op, group) || (keep_os && !ct_attr_set_convt_output_shape(g, op, geo.nsp, geo.out)) ||
      !ct_attr_set_convt_output_padding(g, op, geo.nsp, outpad))
    return ct_shape_nn_oom(d, op);
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, shape, d);
}

/* MaxPool, AveragePool and LpPool share the window geometry. */
static ct_status pool_shape(ct_graph *g, ct_op *op, bool is_max, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 3, d))) return st;
  const ct_value *x = op->in[0];
  if (!is_max && (st = ct_shape_nn_float_input(op, 0, d))) return st;
  if (is_max && (st = ct_shape_nn_exact_f32_input(op, 0, d))) return st;
  if (is_max && ct_attr_pool_storage_order(op) & ~1LL)
    return ct_shape_nn_fail(d, op, "storage_order must be 0 or 1");
  ct_shape_nn_geo geo = {.nsp = x->ndim - 2};
  memcpy(geo.in, x->shape + 2, sizeof(int64_t) * (size_t)geo.nsp);
  int64_t ceil = ct_attr_pool_ceil_mode(op);
  if ((st = sp_read(op, NULL, ceil != 0, &geo, d))) return st;
  if ((st = sp_store(g, op, &geo, d))) return st;
  int64_t shape[CT_MAX_DIMS] = {x->shape[0], x->shape[1]};
  memcpy(shape + 2, geo.out, sizeof(int64_t) * (size_t)geo.nsp);
  if ((st = ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, shape, d))) return st;
  return is_max ? ct_shape_nn_set_out(op, 1, CT_I64, x->ndim, shape, d) : CT_OK;
}

/* MaxPool (ONNX MaxPool-12): kernel_shape required; ceil_mode rounds the output up and drops a
 * window starting in the end padding; Y and the optional int64 Indices have shape (N, C, out...).
 * Writes explicit pads/strides/dilations, drops auto_pad. CT_ERR_INPUT on bad attributes or a
 * dtype f32 cannot hold exactly. */
ct_status ct_shape_maxpool(ct_graph *g, ct_op *op, ct_diag *d) { return pool_shape(g, op, true, d); }
/* AveragePool (ONNX AveragePool-11/19): as MaxPool, f32 only, no Indices. */
ct_status ct_shape_avgpool(ct_graph *g, ct_op *op, ct_diag *d) { return pool_shape(g, op, false, d); }

/* LpPool (ONNX LpPool-11/18): as AveragePool, attribute p >= 1. */
ct_status ct_shape_lppool(ct_graph *g, ct_op *op, ct_diag *d) {
  if (ct_attr_pool_p(op) < 1) return ct_shape_nn_fail(d, op, "attribute p must be >= 1");
  return pool_shape(g, op, false, d);
}

/* GlobalAveragePool / GlobalMaxPool: (N, C, spatial...) -> (N, C, 1, ...). CT_ERR_INPUT for
 * rank < 3 or an unsupported dtype. */
ct_status ct_shape_globalpool(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 3, d))) return st;
  const ct_value *x = op->in[0];
  if ((st = op->kind == CT_OP_GLOBALMAXPOOL ? ct_shape_nn_exact_f32_input(op, 0, d) : ct_shape_nn_float_input(op, 0, d)))
    return st;
  int64_t shape[CT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) shape[i] = i < 2 ? x->shape[i] : 1;
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, shape, d);
}

/* Gemm/MatMul run on sgemm or dgemm: input 0 must be f32 or f64. */
static ct_status f32_or_f64(const ct_op *op, ct_diag *d) {
  ct_dtype dt = op->in[0]->dtype;
  if (dt != CT_F32 && dt != CT_F64)
    return ct_shape_nn_fail(d, op, "unsupported dtype %s (f32 and f64 only)", ct_dtype_name(dt));
  return CT_OK;
}

/* Gemm (ONNX Gemm-13): op(A) (M, K) x op(B) (K, N) -> (M, N); C must broadcast
 * unidirectionally to (M, N) (ops/broadcast.h); f32 or f64; writes explicit transA/transB.
 * CT_ERR_INPUT on rank, inner-dimension, dtype or C mismatches. */
ct_status ct_shape_gemm(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 2, d)) || (st = ct_shape_nn_input(op, 1, 2, d)) ||
      (st = f32_or_f64(op, d)) || (st = ct_shape_nn_check_act(op, d)))
    return st;
  const ct_value *a = op->in[0], *b = op->in[1];
  if (a->ndim != 2 || b->ndim != 2) return ct_shape_nn_fail(d, op, "A and B must be 2-D");
  if (a->dtype != b->dtype) return ct_shape_nn_fail(d, op, "A and B have different dtypes");
  int ta = ct_attr_gemm_transA(op) != 0, tb = ct_attr_gemm_transB(op) != 0;
  int64_t m = a->shape[ta], k = a->shape[1 - ta], kb = b->shape[tb], n = b->shape[1 - tb];
  if (k != kb)
    return ct_shape_nn_fail(d, op, "A has %lld columns (transA %d), B has %lld rows (transB %d)", (long long)k,
                            ta, (long long)kb, tb);
  if (op->n_in > 2 && op->in[2]) {
    const ct_value *c = op->in[2];
    int64_t mn[2] = {m, n};
    char buf[64];
    if (c->ndim < 0 || !ct_bcast_to(c->ndim, c->shape, 2, mn))
      return ct_shape_nn_fail(d, op, "C of shape %s does not broadcast to [%lldx%lld]",
                              ct_shape_str(c->ndim, c->shape, buf, sizeof buf), (long long)m, (long long)n);
  }
  if (!ct_attr_set_gemm_transA(g, op, ta) || !ct_attr_set_gemm_transB(g, op, tb)) return ct_shape_nn_oom(d, op);
  int64_t shape[2] = {m, n};
  return ct_shape_nn_set_out(op, 0, a->dtype, 2, shape, d);
}

/* MatMul (ONNX MatMul-13, numpy matmul): batch dims broadcast, a 1-D A is (1, K) and a 1-D B
 * is (K, 1) with the added dim removed from Y; f32 or f64. CT_ERR_INPUT on mismatches. */
ct_status ct_shape_matmul(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 1, d)) || (st = ct_shape_nn_input(op, 1, 1, d)) || (st = f32_or_f64(op, d)))
    return st;
  const ct_value *a = op->in[0], *b = op->in[1];
  if (a->dtype != b->dtype) return ct_shape_nn_fail(d, op, "A and B have different dtypes");
  int64_t ka = a->shape[a->ndim - 1], kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
  if (ka != kb)
    return ct_shape_nn_fail(d, op, "A has %lld columns, B has %lld rows", (long long)ka, (long long)kb);
  int ba = a->ndim > 2 ? a->ndim - 2 : 0, bb = b->ndim > 2 ? b->ndim - 2 : 0;
  int nb = ba > bb ? ba : bb, nd = 0;
  int64_t shape[CT_MAX_DIMS + 2];
  for (int i = 0; i < nb; i++) {
    int64_t da = i - (nb - ba) >= 0 ? a->shape[i - (nb - ba)] : 1;
    int64_t db = i - (nb - bb) >= 0 ? b->shape[i - (nb - bb)] : 1;
    if (da != db && da != 1 && db != 1)
      return ct_shape_nn_fail(d, op, "batch dims %lld and %lld do not broadcast", (long long)da, (long long)db);
    shape[nd++] = da == 1 ? db : da;
  }
  if (a->ndim >= 2) shape[nd++] = a->shape[a->ndim - 2];
  if (b->ndim >= 2) shape[nd++] = b->shape[b->ndim - 1];
  if (nd > CT_MAX_DIMS) return ct_shape_nn_fail(d, op, "unsupported rank %d", nd);
  return ct_shape_nn_set_out(op, 0, a->dtype, nd, shape, d);
}
