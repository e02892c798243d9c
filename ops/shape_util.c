/* shape_util.c: the helpers of shape_util.h shared by the shape functions of every family:
 * operand checks with errors naming the node, constant integer inputs, output typing. */
#include "ops/shape_util.h"

#include <stdio.h>

#include "ops/broadcast.h"

ct_status ct_sm_in(const ct_op *op, int i, ct_value **v, ct_diag *d) {
  if (i >= op->n_in || !op->in[i]) return ct_ops_err(d, CT_ERR_INPUT, op, "input %d is missing", i);
  if (op->in[i]->ndim < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "input %d has no shape yet", i);
  *v = op->in[i];
  return CT_OK;
}

ct_status ct_sm_const(const ct_op *op, int i, const char *what, const ct_tensor **t, ct_diag *d) {
  *t = NULL;
  if (i >= op->n_in || !op->in[i]) return CT_OK;
  if (!ct_value_is_const(op->in[i])) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: non-constant %s", what);
  *t = op->in[i]->data;
  return CT_OK;
}

ct_status ct_sm_float_in(const ct_op *op, int i, int ndim, ct_value **v, ct_diag *d) {
  ct_status st = ct_sm_in(op, i, v, d);
  if (st) return st;
  if (!ct_dtype_is_float((*v)->dtype))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported dtype %s (input %d)", ct_dtype_name((*v)->dtype), i);
  if (ndim >= 0 && (*v)->ndim != ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "input %d must have rank %d", i, ndim);
  return CT_OK;
}

ct_status ct_sm_in_ints(const ct_op *op, ct_value **x, const char *what, int max, int64_t *vals, int *n,
                        ct_diag *d) {
  const ct_tensor *t;
  ct_status st = ct_sm_in(op, 0, x, d);
  if (st || (st = ct_sm_const(op, 1, what, &t, d))) return st;
  if (!t) return ct_ops_err(d, CT_ERR_INPUT, op, "input 1 (%s) is missing", what);
  return ct_ops_ints(op, t, what, max, vals, n, d);
}

void ct_sm_out(ct_op *op, int k, ct_dtype dt, int ndim, const int64_t *shape) {
  if (k < op->n_out && op->out[k]) ct_value_set_type(op->out[k], dt, ndim, shape);
}

const char *ct_sm_shape(const ct_value *v, char *buf, size_t n) { return ct_shape_str(v->ndim, v->shape, buf, n); }
