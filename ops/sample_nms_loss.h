/* sample_nms_loss.h: attribute decoding and plans shared by shape functions and kernels of
 * GridSample and MaxUnpool (tensor_sample.c), NonMaxSuppression (object_detection_nms.c) and
 * the losses (math_loss.c). */
#ifndef CT_OPS_SAMPLE_NMS_LOSS_H
#define CT_OPS_SAMPLE_NMS_LOSS_H

#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"
#include "ir/ir.h"

/* GridSample interpolation modes and padding modes (ONNX GridSample-16/20). */
typedef enum ct_gridsample_mode { CT_GRIDSAMPLE_LINEAR, CT_GRIDSAMPLE_NEAREST, CT_GRIDSAMPLE_CUBIC } ct_gridsample_mode;
typedef enum ct_gridsample_pad { CT_GRIDSAMPLE_ZEROS, CT_GRIDSAMPLE_BORDER, CT_GRIDSAMPLE_REFLECTION } ct_gridsample_pad;

/* Reads GridSample's attributes mode ("bilinear"/"linear" default, "nearest", "bicubic"/
 * "cubic") and padding_mode ("zeros" default, "border", "reflection"). Errors (CT_ERR_INPUT
 * naming the node): any other value ("unsupported mode ..."). */
ct_status ct_gridsample_modes(const ct_op *op, ct_gridsample_mode *mode, ct_gridsample_pad *pad, ct_diag *d);

/* MaxUnpool's default output shape (ONNX MaxUnpool-11) for X of rank ndim (N, C, spatial...):
 * (N, C, (in - 1) * stride + kernel - pad_begin - pad_end ...) from attributes kernel_shape
 * (required), strides (default 1), pads (default 0) into out (ndim entries). Errors
 * (CT_ERR_INPUT naming the node): attribute lengths, a negative size. */
ct_status ct_maxunpool_shape(const ct_op *op, int ndim, const int64_t *x_shape, int64_t *out, ct_diag *d);

/* NonMaxSuppression (ONNX NonMaxSuppression-11): boxes (B, S, 4) float, scores (B, K, S) float,
 * optional scalars max_out (int64 per class, absent = 0), iou (float, absent = 0) and score_thr
 * (float, absent = none); attribute center_point_box (0: [y1, x1, y2, x2] of any diagonal, 1:
 * [x_c, y_c, w, h]). Per batch and class, boxes with score > score_thr are taken greedily by
 * descending score (ties: lower box index first) unless their IoU with an already selected
 * box is > iou, at most max_out of them. Writes the selected [batch, class, box] triples to
 * sel (row-major, room for cap triples; sel may be NULL to only count) and their number to
 * *count. Errors (CT_ERR_INPUT naming the node): boxes/scores shapes inconsistent, more
 * selections than cap, center_point_box not 0/1 ("unsupported"); CT_ERR_LIMIT out of memory. */
ct_status ct_nms_select(const ct_op *op, const ct_tensor *boxes, const ct_tensor *scores, const ct_tensor *max_out,
                     const ct_tensor *iou, const ct_tensor *score_thr, int64_t *sel, int64_t cap, int64_t *count,
                     ct_diag *d);

/* Loss reductions (ONNX NegativeLogLikelihoodLoss-13 / SoftmaxCrossEntropyLoss-13). */
typedef enum ct_loss_reduction { CT_LOSS_RED_NONE, CT_LOSS_RED_SUM, CT_LOSS_RED_MEAN } ct_loss_reduction;

/* Reads attribute reduction ("none", "sum", "mean" = default). Errors (CT_ERR_INPUT naming the
 * node): any other value ("unsupported reduction"). */
ct_status ct_loss_reduction_of(const ct_op *op, ct_loss_reduction *r, ct_diag *d);

#endif
