/* sample_nms_loss_shape.c: shape functions of the second batch of extended ops (ONNX operator spec, latest
 * opset): GridSample-20 (4-D), RoiAlign-16, MaxUnpool-11, NonMaxSuppression-11, the losses
 * NegativeLogLikelihoodLoss-13 and SoftmaxCrossEntropyLoss-13, Hann/Hamming/BlackmanWindow-17.
 * Mode and reduction parsing, MaxUnpool's default size and the NMS selection are shared with the
 * kernels (ops/sample_nms_loss.h). */
#include "ops/shape_util.h"
#include "ops/sample_nms_loss.h"

/* Input i present, of float dtype and rank ndim (any rank when ndim < 0). */
static ct_status float_in(const ct_op *op, int i, int ndim, ct_value **v, ct_diag *d) {
  ct_status st = ct_sm_in(op, i, v, d);
  if (st) return st;
  if (!ct_dtype_is_float((*v)->dtype))
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported dtype %s (input %d)", ct_dtype_name((*v)->dtype), i);
  if (ndim >= 0 && (*v)->ndim != ndim) return ct_km_err(d, CT_ERR_INPUT, op, "input %d must have rank %d", i, ndim);
  return CT_OK;
}

/* GridSample: X (N, C, H, W), grid (N, Ho, Wo, 2) → (N, C, Ho, Wo) of X's dtype. Other ranks
 * are "unsupported"; unknown modes as ct_ke2_gs_modes. */
ct_status ct_shape_gridsample(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x, *grid;
  ct_ke2_gs_mode mode;
  ct_ke2_gs_pad pad;
  ct_status st = ct_ke2_gs_modes(op, &mode, &pad, d);
  if (st || (st = float_in(op, 0, -1, &x, d)) || (st = float_in(op, 1, -1, &grid, d))) return st;
  if (x->ndim != 4 || grid->ndim != 4) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: rank %d (only 4-D)", x->ndim);
  if (grid->shape[3] != 2 || grid->shape[0] != x->shape[0])
    return ct_km_err(d, CT_ERR_INPUT, op, "grid must be (N, Ho, Wo, 2) with X's N");
  int64_t s[4] = {x->shape[0], x->shape[1], grid->shape[1], grid->shape[2]};
  ct_sm_out(op, 0, x->dtype, 4, s);
  return CT_OK;
}

/* RoiAlign: X (N, C, H, W), rois (R, 4), batch_indices (R) integer → (R, C, output_height,
 * output_width). Errors: shapes, output sizes < 1, negative sampling_ratio. */
ct_status ct_shape_roialign(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x, *rois, *bi;
  ct_status st;
  if ((st = float_in(op, 0, 4, &x, d)) || (st = float_in(op, 1, 2, &rois, d)) || (st = ct_sm_in(op, 2, &bi, d)))
    return st;
  if (rois->shape[1] != 4 || bi->ndim != 1 || bi->shape[0] != rois->shape[0] || !ct_km_is_int(bi->dtype))
    return ct_km_err(d, CT_ERR_INPUT, op, "rois must be (R, 4) and batch_indices (R) integer");
  int64_t oh = ct_attr_roialign_output_height(op), ow = ct_attr_roialign_output_width(op);
  if (oh < 1 || ow < 1 || ct_attr_roialign_sampling_ratio(op) < 0)
    return ct_km_err(d, CT_ERR_INPUT, op, "output sizes must be >= 1 and sampling_ratio >= 0");
  int64_t s[4] = {rois->shape[0], x->shape[1], oh, ow};
  ct_sm_out(op, 0, x->dtype, 4, s);
  return CT_OK;
}

/* MaxUnpool: X (N, C, spatial...), I (X's shape, int64) → output_shape (constant input 2) or the
 * default size of ct_ke2_unpool_shape. Errors: those of ct_ke2_unpool_shape, shapes, a
 * non-constant output_shape ("unsupported"). */
ct_status ct_shape_maxunpool(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x, *ind;
  const ct_tensor *os = NULL;
  ct_status st;
  if ((st = ct_sm_in(op, 0, &x, d)) || (st = ct_sm_in(op, 1, &ind, d))) return st;
  if (op->n_in > 2 && (st = ct_sm_const(op, 2, "output_shape", &os, d))) return st;
  if (x->ndim < 3 || ind->ndim != x->ndim || ind->dtype != CT_I64 || ct_value_numel(ind) != ct_value_numel(x))
    return ct_km_err(d, CT_ERR_INPUT, op, "X must be (N, C, spatial...) and I int64 of its shape");
  int64_t s[CT_MAX_DIMS];
  if ((st = ct_ke2_unpool_shape(op, x->ndim, x->shape, s, d))) return st;
  if (os) {
    int n = 0;
    if ((st = ct_km_ints(op, os, "output_shape", CT_MAX_DIMS, s, &n, d))) return st;
    if (n != x->ndim) return ct_km_err(d, CT_ERR_INPUT, op, "output_shape must have %d entries", x->ndim);
  }
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  return CT_OK;
}

/* NonMaxSuppression: selected_indices (n, 3) int64 where n depends on the data: computed by
 * ct_ke2_nms when every input is constant, else "unsupported: data-dependent shape". */
ct_status ct_shape_nms(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *v;
  const ct_tensor *t[5] = {NULL, NULL, NULL, NULL, NULL};
  ct_status st;
  for (int i = 0; i < op->n_in && i < 5; i++) {
    if (i > 1 && !op->in[i]) continue;
    if ((st = ct_sm_in(op, i, &v, d))) return st;
    if (!ct_value_is_const(v))
      return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape (non-constant input %d)", i);
    t[i] = v->data;
  }
  if (op->n_in < 2) return ct_km_err(d, CT_ERR_INPUT, op, "input 1 is missing");
  int64_t s[2] = {0, 3};
  if ((st = ct_ke2_nms(op, t[0], t[1], t[2], t[3], t[4], NULL, 0, &s[0], d))) return st;
  ct_sm_out(op, 0, CT_I64, 2, s);
  return CT_OK;
}

/* NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: input (N, C, d…) float, target (N, d…)
 * integer, optional weight (C) → loss of target's shape (reduction none) or a scalar, input's
 * dtype; SoftmaxCrossEntropyLoss's optional output 1 (log_prob) has the input's type. Errors:
 * shapes, reduction as ct_ke2_reduction_of. */
ct_status ct_shape_loss(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x, *t, *w = op->n_in > 2 ? op->in[2] : NULL;
  ct_ke2_reduction red;
  ct_status st;
  if ((st = ct_ke2_reduction_of(op, &red, d)) || (st = float_in(op, 0, -1, &x, d)) || (st = ct_sm_in(op, 1, &t, d)))
    return st;
  bool ok = x->ndim >= 2 && t->ndim == x->ndim - 1 && ct_km_is_int(t->dtype) && t->shape[0] == x->shape[0];
  for (int i = 1; ok && i < t->ndim; i++) ok = t->shape[i] == x->shape[i + 1];
  if (!ok) return ct_km_err(d, CT_ERR_INPUT, op, "input must be (N, C, d...) and target (N, d...) integer");
  if (w && (w->ndim != 1 || w->shape[0] != x->shape[1]))
    return ct_km_err(d, CT_ERR_INPUT, op, "weight must have C = %lld entries", (long long)x->shape[1]);
  ct_sm_out(op, 0, x->dtype, red == CT_KE2_RED_NONE ? t->ndim : 0, t->shape);
  if (op->kind == CT_OP_SOFTMAXCROSSENTROPYLOSS) ct_sm_out(op, 1, x->dtype, x->ndim, x->shape);
  return CT_OK;
}

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
  if (!t) return ct_km_err(d, CT_ERR_INPUT, op, "input 0 (size) is missing");
  if ((st = ct_km_ints(op, t, "size", 1, &size, &n, d))) return st;
  if (n != 1 || size < 0) return ct_km_err(d, CT_ERR_INPUT, op, "size must be one integer >= 0");
  int64_t odt = ct_attr_window_fn_output_datatype(op);
  if (!ct_dtype_from_onnx((int)odt, &dt) || dt == CT_BOOL)
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported output_datatype %lld", (long long)odt);
  ct_sm_out(op, 0, dt, 1, &size);
  return CT_OK;
}
