/* object_detection_nms.c: ONNX object_detection family, NonMaxSuppression-11: the greedy
 * per-class selection by descending score with IoU suppression (box formats and tie order as
 * onnxruntime's non_max_suppression), shared by the shape function (the output size depends on
 * the data, so only constant inputs have a shape) and the kernel. */
#include <math.h>
#include <stdlib.h>

#include "ops/sample_nms_loss.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"

/* Box s of batch b as [ymin, xmin, ymax, xmax]. */
static void nms_box(const ct_tensor *boxes, int64_t b, int64_t s, int64_t ns, bool center, double *o) {
  double v[4];
  for (int k = 0; k < 4; k++) v[k] = ct_tensor_get_f64(boxes, (b * ns + s) * 4 + k);
  if (center) {
    o[0] = v[1] - v[3] / 2, o[1] = v[0] - v[2] / 2, o[2] = v[1] + v[3] / 2, o[3] = v[0] + v[2] / 2;
    return;
  }
  o[0] = fmin(v[0], v[2]), o[1] = fmin(v[1], v[3]), o[2] = fmax(v[0], v[2]), o[3] = fmax(v[1], v[3]);
}

/* True when boxes a and b overlap with IoU > thr (a box of zero area never suppresses). */
static bool nms_suppress(const double *a, const double *b, double thr) {
  double ih = fmin(a[2], b[2]) - fmax(a[0], b[0]), iw = fmin(a[3], b[3]) - fmax(a[1], b[1]);
  if (ih <= 0 || iw <= 0) return false;
  double aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]);
  if (aa <= 0 || ab <= 0) return false;
  double inter = ih * iw;
  return inter / (aa + ab - inter) > thr;
}

/* Scalar input t as a double, dflt when absent or empty. */
static double nms_scalar(const ct_tensor *t, double dflt) {
  return t && ct_tensor_numel(t) > 0 ? ct_tensor_get_f64(t, 0) : dflt;
}

/* Selection for one (batch, class): appends triples to sel (when non-NULL) from *count on. */
static ct_status nms_class(const ct_op *op, const ct_tensor *boxes, const ct_tensor *scores, int64_t b, int64_t c,
                           ct_ops_vi *cand, double *kept, const double *lim, int64_t *sel, int64_t cap, int64_t *count,
                           ct_diag *d) {
  int64_t nk = scores->shape[1], ns = scores->shape[2], n = 0, nsel = 0;
  bool center = ct_attr_nms_center_point_box(op) == 1;
  for (int64_t s = 0; s < ns; s++) {
    double v = ct_tensor_get_f64(scores, (b * nk + c) * ns + s);
    if (isnan(lim[2]) || v > lim[2]) cand[n].i = s, cand[n++].v = v;
  }
  qsort(cand, (size_t)n, sizeof *cand, ct_ops_cmp_large);
  for (int64_t i = 0; i < n && nsel < (int64_t)lim[0]; i++) {
    double box[4];
    nms_box(boxes, b, cand[i].i, ns, center, box);
    bool drop = false;
    for (int64_t j = 0; j < nsel && !drop; j++) drop = nms_suppress(kept + 4 * j, box, lim[1]);
    if (drop) continue;
    for (int k = 0; k < 4; k++) kept[4 * nsel + k] = box[k];
    nsel++;
    if (*count >= cap && sel) return ct_ops_err(d, CT_ERR_INPUT, op, "more than %lld selected boxes", (long long)cap);
    if (sel) sel[3 * *count] = b, sel[3 * *count + 1] = c, sel[3 * *count + 2] = cand[i].i;
    ++*count;
  }
  return CT_OK;
}

ct_status ct_nms_select(const ct_op *op, const ct_tensor *boxes, const ct_tensor *scores, const ct_tensor *max_out,
                     const ct_tensor *iou, const ct_tensor *score_thr, int64_t *sel, int64_t cap, int64_t *count,
                     ct_diag *d) {
  int64_t cpb = ct_attr_nms_center_point_box(op);
  if (cpb != 0 && cpb != 1) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported center_point_box %lld", (long long)cpb);
  if (boxes->ndim != 3 || scores->ndim != 3 || boxes->shape[2] != 4 || boxes->shape[0] != scores->shape[0] ||
      boxes->shape[1] != scores->shape[2])
    return ct_ops_err(d, CT_ERR_INPUT, op, "boxes must be (B, S, 4) and scores (B, K, S)");
  double mo = nms_scalar(max_out, 0);
  double lim[3] = {mo < 0 ? 0 : mo, nms_scalar(iou, 0), nms_scalar(score_thr, NAN)};
  int64_t ns = boxes->shape[1];
  ct_ops_vi *cand = malloc(sizeof *cand * (size_t)(ns > 0 ? ns : 1));
  double *kept = malloc(sizeof *kept * 4 * (size_t)(ns > 0 ? ns : 1));
  ct_status st = cand && kept ? CT_OK : ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  *count = 0;
  for (int64_t b = 0; !st && b < scores->shape[0]; b++)
    for (int64_t c = 0; !st && c < scores->shape[1]; c++)
      st = nms_class(op, boxes, scores, b, c, cand, kept, lim, sel, cap, count, d);
  free(cand);
  free(kept);
  return st;
}

/* NonMaxSuppression: selected_indices (n, 3) int64 of ct_nms_select; n is the shape function's. */
ct_status ct_kern_nms(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  ct_tensor *y = out[0];
  const ct_tensor *opt[3] = {NULL, NULL, NULL};
  for (int i = 2; i < op->n_in && i < 5; i++) opt[i - 2] = in[i];
  if (y->dtype != CT_I64 || y->ndim != 2 || y->shape[1] != 3)
    return ct_ops_err(d, CT_ERR_INPUT, op, "output must be (n, 3) int64");
  int64_t n = 0;
  ct_status st = ct_nms_select(op, in[0], in[1], opt[0], opt[1], opt[2], y->data, y->shape[0], &n, d);
  if (!st && n != y->shape[0])
    return ct_ops_err(d, CT_ERR_INPUT, op, "%lld boxes selected, output has %lld rows", (long long)n, (long long)y->shape[0]);
  return st;
}

/* ---- shape function ---- */

/* NonMaxSuppression: selected_indices (n, 3) int64 where n depends on the data: computed by
 * ct_nms_select when every input is constant, else "unsupported: data-dependent shape". */
ct_status ct_shape_nms(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *v;
  const ct_tensor *t[5] = {NULL, NULL, NULL, NULL, NULL};
  ct_status st;
  for (int i = 0; i < op->n_in && i < 5; i++) {
    if (i > 1 && !op->in[i]) continue;
    if ((st = ct_sm_in(op, i, &v, d))) return st;
    if (!ct_value_is_const(v))
      return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: data-dependent shape (non-constant input %d)", i);
    t[i] = v->data;
  }
  if (op->n_in < 2) return ct_ops_err(d, CT_ERR_INPUT, op, "input 1 is missing");
  int64_t s[2] = {0, 3};
  if ((st = ct_nms_select(op, t[0], t[1], t[2], t[3], t[4], NULL, 0, &s[0], d))) return st;
  ct_sm_out(op, 0, CT_I64, 2, s);
  return CT_OK;
}
