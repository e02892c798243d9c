/* tensor_movement_shape.c: shape functions of Concat-13, Split-18, Slice-13, Expand-13, Tile-13,
 * Pad-19, Cast-13, CastLike-15, ConstantOfShape-9 and Range-11 (ONNX operator spec).
 * ConstantOfShape's value arrives from the importer as attributes `value` (FLOAT or INT)
 * and `value_dtype` (ONNX TensorProto.DataType), onnx/onnx.h. */
#include <math.h>
#include <string.h>

#include "ops/shape_util.h"
#include "ops/broadcast.h"

/* Concat: inputs agree on rank, dtype and every dim but axis (made positive). */
ct_status ct_shape_concat(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x = NULL, *y = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  int ax;
  const ct_attr *a = ct_attr_raw_concat_axis(op);
  if (!a) return ct_km_err(d, CT_ERR_INPUT, op, "attribute axis is missing");
  if (!ct_km_axis(a->i, x->ndim, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)a->i, x->ndim);
  int64_t s[CT_MAX_DIMS];
  memcpy(s, x->shape, sizeof s);
  for (int k = 1; k < op->n_in; k++) {
    if ((st = ct_sm_in(op, k, &y, d))) return st;
    bool ok = y->ndim == x->ndim && y->dtype == x->dtype;
    for (int i = 0; ok && i < x->ndim; i++) ok = i == ax || y->shape[i] == x->shape[i];
    char b1[96], b2[96];
    if (!ok)
      return ct_km_err(d, CT_ERR_INPUT, op, "input %d (%s %s) does not match input 0 (%s %s) off axis %d", k,
                       ct_sm_shape(y, b1, sizeof b1), ct_dtype_name(y->dtype), ct_sm_shape(x, b2, sizeof b2),
                       ct_dtype_name(x->dtype), ax);
    s[ax] += y->shape[ax];
  }
  if (!ct_attr_set_concat_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
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
  if (!ct_km_axis(axis, x->ndim, &ax))
    return ct_km_err(d, CT_ERR_INPUT, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (n > 64) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: %d outputs", n);
  int64_t dim = x->shape[ax], sum = 0;
  if (t) {
    int ns;
    if ((st = ct_km_ints(op, t, "split", 64, sz, &ns, d))) return st;
    if (ns != n) return ct_km_err(d, CT_ERR_INPUT, op, "split has %d entries for %d outputs", ns, n);
  } else {
    int64_t chunk = (dim + n - 1) / n;
    for (int i = 0; i < n; i++) sz[i] = dim - sum < chunk ? dim - sum : chunk, sum += sz[i];
    sum = 0;
  }
  for (int i = 0; i < n; i++) {
    if (sz[i] < 0) return ct_km_err(d, CT_ERR_INPUT, op, "split[%d] is negative", i);
    sum += sz[i];
  }
  if (sum != dim)
    return ct_km_err(d, CT_ERR_INPUT, op, "split sizes add up to %lld, dim %d is %lld", (long long)sum, ax, (long long)dim);
  if (!ct_attr_set_concat_axis(g, op, ax)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  for (int i = 0; i < n; i++) {
    int64_t s[CT_MAX_DIMS];
    memcpy(s, x->shape, sizeof s);
    s[ax] = sz[i];
    ct_sm_out(op, i, x->dtype, x->ndim, s);
  }
  return CT_OK;
}

/* Slice-13 through ct_km_slice; starts/ends/axes/steps constant. */
ct_status ct_shape_slice(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  const ct_tensor *t[5] = {NULL};
  static const char *const what[5] = {"", "starts", "ends", "axes", "steps"};
  ct_status st = ct_sm_in(op, 0, &x, d);
  for (int i = 1; i < 5 && !st; i++) st = ct_sm_const(op, i, what[i], &t[i], d);
  if (st) return st;
  if (!t[1] || !t[2]) return ct_km_err(d, CT_ERR_INPUT, op, "starts and ends are required");
  int64_t start[CT_MAX_DIMS], step[CT_MAX_DIMS], len[CT_MAX_DIMS];
  if ((st = ct_km_slice(op, x->ndim, x->shape, t[1], t[2], t[3], t[4], start, step, len, d))) return st;
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
    return ct_km_err(d, CT_ERR_INPUT, op, "input shape %s does not broadcast with shape %s",
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
  if (n != x->ndim) return ct_km_err(d, CT_ERR_INPUT, op, "repeats has %d entries for rank %d", n, x->ndim);
  for (int i = 0; i < n; i++) {
    if (r[i] < 0) return ct_km_err(d, CT_ERR_INPUT, op, "repeats[%d] is negative", i);
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
  if (!pads) return ct_km_err(d, CT_ERR_INPUT, op, "input 1 (pads) is missing");
  const char *mode = ct_attr_pad_mode(op);
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: mode \"%s\"", mode);
  if ((st = ct_sm_const(op, 2, "constant_value", &cv, d)) && op->in[2]) {
    ct_diag_clear(d); /* a non-constant pad value is fine: the kernel reads it */
    st = CT_OK;
  }
  int64_t b[CT_MAX_DIMS], a[CT_MAX_DIMS], s[CT_MAX_DIMS];
  if ((st = ct_km_pads(op, x->ndim, x->shape, pads, axes, b, a, d))) return st;
  for (int i = 0; i < x->ndim; i++) {
    s[i] = x->shape[i] + b[i] + a[i];
    if (strcmp(mode, "constant") && x->shape[i] == 0 && s[i] > 0)
      return ct_km_err(d, CT_ERR_INPUT, op, "mode %s cannot pad the empty dim %d", mode, i);
  }
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  return CT_OK;
}
