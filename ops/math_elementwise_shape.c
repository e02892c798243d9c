/* math_elementwise_shape.c: shape functions of the elementwise ops — unary math and activations, Clip,
 * Dropout, broadcasting binary/variadic ops, comparisons, logical ops, PRelu, Where — and the
 * helpers of shape_misc.h. Broadcasting: onnx/docs/Broadcasting.md via ops/broadcast.h. */
#include "ops/shape_util.h"

#include <stdio.h>

#include "ops/broadcast.h"

ct_status ct_sm_in(const ct_op *op, int i, ct_value **v, ct_diag *d) {
  if (i >= op->n_in || !op->in[i]) return ct_km_err(d, CT_ERR_INPUT, op, "input %d is missing", i);
  if (op->in[i]->ndim < 0) return ct_km_err(d, CT_ERR_INPUT, op, "input %d has no shape yet", i);
  *v = op->in[i];
  return CT_OK;
}

ct_status ct_sm_const(const ct_op *op, int i, const char *what, const ct_tensor **t, ct_diag *d) {
  *t = NULL;
  if (i >= op->n_in || !op->in[i]) return CT_OK;
  if (!ct_value_is_const(op->in[i])) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: non-constant %s", what);
  *t = op->in[i]->data;
  return CT_OK;
}

ct_status ct_sm_in_ints(const ct_op *op, ct_value **x, const char *what, int max, int64_t *vals, int *n,
                        ct_diag *d) {
  const ct_tensor *t;
  ct_status st = ct_sm_in(op, 0, x, d);
  if (st || (st = ct_sm_const(op, 1, what, &t, d))) return st;
  if (!t) return ct_km_err(d, CT_ERR_INPUT, op, "input 1 (%s) is missing", what);
  return ct_km_ints(op, t, what, max, vals, n, d);
}

void ct_sm_out(ct_op *op, int k, ct_dtype dt, int ndim, const int64_t *shape) {
  if (k < op->n_out && op->out[k]) ct_value_set_type(op->out[k], dt, ndim, shape);
}

const char *ct_sm_shape(const ct_value *v, char *buf, size_t n) { return ct_shape_str(v->ndim, v->shape, buf, n); }

/* out = in0 (unary math, activations, Clip, Identity...). */
ct_status ct_shape_same(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  ct_sm_out(op, 0, x->dtype, x->ndim, x->shape);
  return CT_OK;
}

/* IsInf / IsNaN / Not: same shape, bool. */
ct_status ct_shape_bool_unary(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  ct_sm_out(op, 0, CT_BOOL, x->ndim, x->shape);
  return CT_OK;
}

/* Dropout: output 0 like the input, optional mask (output 1) bool of the same shape. */
ct_status ct_shape_dropout(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st = ct_shape_same(g, op, d);
  if (st) return st;
  ct_sm_out(op, 1, CT_BOOL, op->in[0]->ndim, op->in[0]->shape);
  return CT_OK;
}

/* Broadcast of inputs [0, n) (NULL inputs skipped) into nd/shape; checks equal dtypes of
 * inputs [first_same, n) when same_dtype. */
static ct_status bcast_inputs(const ct_op *op, int first, int n, bool same_dtype, int *nd,
                              int64_t *shape, ct_diag *d) {
  ct_value *v = NULL;
  ct_status st = ct_sm_in(op, first, &v, d);
  if (st) return st;
  *nd = v->ndim;
  for (int i = 0; i < v->ndim; i++) shape[i] = v->shape[i];
  for (int k = first + 1; k < n; k++) {
    ct_value *w = NULL;
    if ((st = ct_sm_in(op, k, &w, d))) return st;
    char b1[96], b2[96];
    if (same_dtype && w->dtype != v->dtype)
      return ct_km_err(d, CT_ERR_INPUT, op, "input %d dtype %s differs from input %d dtype %s", k,
                       ct_dtype_name(w->dtype), first, ct_dtype_name(v->dtype));
    int64_t tmp[CT_MAX_DIMS];
    int tn;
    if (!ct_bcast_shape(*nd, shape, w->ndim, w->shape, &tn, tmp))
      return ct_km_err(d, CT_ERR_INPUT, op, "shapes %s and %s do not broadcast (input %d)",
                       ct_shape_str(*nd, shape, b1, sizeof b1), ct_sm_shape(w, b2, sizeof b2), k);
    *nd = tn;
    for (int i = 0; i < tn; i++) shape[i] = tmp[i];
  }
  return CT_OK;
}

/* Arithmetic binary and variadic ops: broadcast shape, dtype of input 0 (Pow: exponent may
 * have another type). */
ct_status ct_shape_bcast(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd;
  int64_t shape[CT_MAX_DIMS];
  ct_status st = bcast_inputs(op, 0, op->n_in, op->kind != CT_OP_POW, &nd, shape, d);
  if (st) return st;
  ct_sm_out(op, 0, op->in[0]->dtype, nd, shape);
  return CT_OK;
}

/* Comparisons and logical ops: broadcast shape, bool output. */
ct_status ct_shape_compare(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd;
  int64_t shape[CT_MAX_DIMS];
  ct_status st = bcast_inputs(op, 0, op->n_in, true, &nd, shape, d);
  if (st) return st;
  ct_sm_out(op, 0, CT_BOOL, nd, shape);
  return CT_OK;
}

/* Where: cond bool, X and Y of one dtype; three-way broadcast. */
ct_status ct_shape_where(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd, nd2;
  int64_t shape[CT_MAX_DIMS], s2[CT_MAX_DIMS], out[CT_MAX_DIMS];
  ct_status st = bcast_inputs(op, 1, 3, true, &nd, shape, d);
  if (st || (st = bcast_inputs(op, 0, 1, false, &nd2, s2, d))) return st;
  if (op->in[0]->dtype != CT_BOOL)
    return ct_km_err(d, CT_ERR_INPUT, op, "condition must be bool, got %s", ct_dtype_name(op->in[0]->dtype));
  int no;
  char b1[96], b2[96];
  if (!ct_bcast_shape(nd2, s2, nd, shape, &no, out))
    return ct_km_err(d, CT_ERR_INPUT, op, "condition shape %s does not broadcast with %s",
                     ct_shape_str(nd2, s2, b1, sizeof b1), ct_shape_str(nd, shape, b2, sizeof b2));
  ct_sm_out(op, 0, op->in[1]->dtype, no, out);
  return CT_OK;
}

/* PRelu: slope unidirectionally broadcastable to X; output like X. */
ct_status ct_shape_prelu(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL, *s = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &s, d))) return st;
  char b1[96], b2[96];
  if (!ct_bcast_to(s->ndim, s->shape, x->ndim, x->shape))
    return ct_km_err(d, CT_ERR_INPUT, op, "slope shape %s does not broadcast to input shape %s",
                     ct_sm_shape(s, b1, sizeof b1), ct_sm_shape(x, b2, sizeof b2));
  if (s->dtype != x->dtype)
    return ct_km_err(d, CT_ERR_INPUT, op, "slope dtype %s differs from input dtype %s",
                     ct_dtype_name(s->dtype), ct_dtype_name(x->dtype));
  ct_sm_out(op, 0, x->dtype, x->ndim, x->shape);
  return CT_OK;
}
