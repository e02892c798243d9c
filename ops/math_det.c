/* math_det.c: ONNX math family, Det (Det-11): shape function and float kernel, by LU
 * decomposition with partial pivoting (Golub & Van Loan, Matrix Computations, §3.4) in double. */
#include <math.h>
#include <stdlib.h>

#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"

/* Determinant of the n×n row-major matrix a (destroyed): product of U's diagonal, sign
 * flipped per row swap. */
static double lu_det(double *a, int64_t n) {
  double det = 1;
  for (int64_t k = 0; k < n; k++) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; i++)
      if (fabs(a[i * n + k]) > fabs(a[p * n + k])) p = i;
    if (a[p * n + k] == 0) return 0;
    if (p != k) {
      for (int64_t j = 0; j < n; j++) {
        double t = a[k * n + j];
        a[k * n + j] = a[p * n + j], a[p * n + j] = t;
      }
      det = -det;
    }
    det *= a[k * n + k];
    for (int64_t i = k + 1; i < n; i++) {
      double f = a[i * n + k] / a[k * n + k];
      for (int64_t j = k; j < n; j++) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return det;
}

/* Det: y[b] = det(x[b]) for each (M, M) matrix of x (…, M, M). CT_ERR_INPUT for a
 * non-square input, CT_ERR_LIMIT out of memory. */
ct_status ct_kern_det(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0];
  if (x->ndim < 2 || x->shape[x->ndim - 1] != x->shape[x->ndim - 2])
    return ct_ops_err(d, CT_ERR_INPUT, op, "input must be (..., M, M)");
  int64_t m = x->shape[x->ndim - 1], batch = ct_tensor_numel(out[0]);
  double *a = malloc(sizeof *a * (size_t)(m > 0 ? m * m : 1));
  if (!a) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  for (int64_t b = 0; b < batch; b++) {
    for (int64_t i = 0; i < m * m; i++) a[i] = ct_tensor_get_f64(x, b * m * m + i);
    ct_tensor_set_f64(out[0], b, lu_det(a, m));
  }
  free(a);
  return CT_OK;
}

/* ---- shape function ---- */

/* Det: float X (…, M, M) → (…) of X's dtype. Errors: rank < 2, non-square, non-float. */
ct_status ct_shape_det(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  if (!ct_dtype_is_float(x->dtype)) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported dtype %s", ct_dtype_name(x->dtype));
  if (x->ndim < 2 || x->shape[x->ndim - 1] != x->shape[x->ndim - 2])
    return ct_ops_err(d, CT_ERR_INPUT, op, "input must be (..., M, M)");
  ct_sm_out(op, 0, x->dtype, x->ndim - 2, x->shape);
  return CT_OK;
}
