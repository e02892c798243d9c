/* math_window.c: ONNX math family, window generators: shape function and kernel of
 * HannWindow, HammingWindow and BlackmanWindow (*Window-17): w[n] = a0 − a1 cos(2πn/N) + a2
 * cos(4πn/N), N = size when periodic (default) else size − 1, the spec's coefficients, in
 * double. */
#include <math.h>

#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"
#include "ops/sample_nms_loss.h"

/* Coefficients (a0, a1, a2) of a window op. */
static void window_coeffs(ct_op_kind kind, double *a) {
  a[2] = 0;
  if (kind == CT_OP_HAMMINGWINDOW) a[0] = 25.0 / 46, a[1] = 21.0 / 46;
  else if (kind == CT_OP_BLACKMANWINDOW) a[0] = 0.42, a[1] = 0.5, a[2] = 0.08;
  else a[0] = a[1] = 0.5;
}

/* Hann/Hamming/BlackmanWindow: output (size) of the output_datatype the shape function set.
 * A symmetric window of size 1 divides by N = 0 (NaN, as the spec's formula). */
ct_status ct_kern_window(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  (void)in;
  double a[3];
  window_coeffs(op->kind, a);
  ct_tensor *y = out[0];
  if (y->ndim != 1) return ct_ops_err(d, CT_ERR_INPUT, op, "output must be 1-D");
  int64_t size = y->shape[0];
  double n_den = (double)(ct_attr_window_fn_periodic(op) ? size : size - 1);
  for (int64_t n = 0; n < size; n++) {
    double x = 2 * 3.14159265358979323846 * (double)n / n_den; /* 2πn/N */
    ct_tensor_set_f64(y, n, a[0] - a[1] * cos(x) + a[2] * cos(2 * x));
  }
  return CT_OK;
}

/* ---- shape function ---- */

/* HannWindow / HammingWindow / BlackmanWindow: constant scalar integer size → (size) of ONNX
 * type output_datatype (default 1 = float). Errors: a non-constant size ("unsupported"), size
 * < 0, an unknown output_datatype ("unsupported"). */
ct_status ct_shape_window(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  const ct_tensor *t = NULL;
  int64_t size = 0;
  int n = 0;
  ct_dtype dt;
  ct_status st = ct_sm_const(op, 0, "size", &t, d);
  if (st) return st;
  if (!t) return ct_ops_err(d, CT_ERR_INPUT, op, "input 0 (size) is missing");
  if ((st = ct_ops_ints(op, t, "size", 1, &size, &n, d))) return st;
  if (n != 1 || size < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "size must be one integer >= 0");
  int64_t odt = ct_attr_window_fn_output_datatype(op);
  if (!ct_dtype_from_onnx((int)odt, &dt) || dt == CT_BOOL)
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported output_datatype %lld", (long long)odt);
  ct_sm_out(op, 0, dt, 1, &size);
  return CT_OK;
}
