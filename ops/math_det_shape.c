/* math_det_shape.c: shape functions of the miscellaneous extended ops: Det (ONNX Det-11). */
#include "ops/shape_util.h"

/* Det: float X (…, M, M) → (…) of X's dtype. Errors: rank < 2, non-square, non-float. */
ct_status ct_shape_det(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  if (!ct_dtype_is_float(x->dtype)) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported dtype %s", ct_dtype_name(x->dtype));
  if (x->ndim < 2 || x->shape[x->ndim - 1] != x->shape[x->ndim - 2])
    return ct_km_err(d, CT_ERR_INPUT, op, "input must be (..., M, M)");
  ct_sm_out(op, 0, x->dtype, x->ndim - 2, x->shape);
  return CT_OK;
}
