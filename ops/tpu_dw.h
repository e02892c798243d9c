/* tpu_dw.h: the depthwise path of the integer Conv (ops/tpu_dw.c), called by ct_tpu_conv
 * (ops/tpu_mac.c) for groups of one input and one output channel. Private to ops/. */
#ifndef CT_OPS_TPU_DW_H
#define CT_OPS_TPU_DW_H

#include "ops/nn_util.h"
#include "ops/tpu_util.h"

/* One image of a depthwise Conv: input x [N, C, D, H, W] (NCHW, any integer storage), OIHW
 * weights w [C, 1, kd, kh, kw], optional i32 bias b [C], output y [N, C, OD, OH, OW] (P =
 * OD·OH·OW elements per channel), geometry geo, per-channel requant (m, s) and weight zero
 * points zw (NULL: zw0 for all), zero points zx, zy, fused activation act (CLAMP bound hi). */
typedef struct ct_tpu_dw_job {
  const ct_tensor *x, *w, *b;
  ct_tensor *y;
  const ct_nn_geo *geo;
  int64_t n, oc, P;       /* the image, the channels C, the outputs per channel */
  const int32_t *m;
  const int *s;
  const int32_t *zw;
  int32_t zw0, zx, zy, hi;
  ct_quant_act act;
  bool oom;               /* set when a scratch allocation failed (outputs then incomplete) */
} ct_tpu_dw_job;

/* Channels [lo, hi) of image job->n (arg: a ct_tpu_dw_job *; a ct_workpool_fn for
 * ct_nn_parallel): y = requant_act(b + Σ_taps (x − zx)·(w − zw)) per channel, the same
 * integers whatever the split. Sets job->oom when out of memory. */
void ct_tpu_dw_channels(void *arg, int64_t lo, int64_t hi, int slot);

#endif
