/* quant_resize.h: linear (bilinear) Resize on the TPU, defined once for the Tpu reference
 * (ops/tpu_resize.c) and the cmodel's RESIZE (cmodel/exec_vpu.c): the ONNX coordinate
 * transformations, two taps per axis, integer weights in fixed point (docs/quant.md). */
#ifndef CT_QUANT_RESIZE_H
#define CT_QUANT_RESIZE_H

#include <stdint.h>

#include "common/tensor.h"

/* Coordinate transformations of linear Resize (same numbering as isa.def's CTM kind). */
typedef enum ct_quant_ctm {
  CT_QUANT_CTM_HALF_PIXEL, CT_QUANT_CTM_PYTORCH_HALF_PIXEL, CT_QUANT_CTM_ALIGN_CORNERS, CT_QUANT_CTM_ASYMMETRIC,
  CT_QUANT_CTM_HALF_PIXEL_SYMMETRIC, CT_QUANT_CTM_COUNT
} ct_quant_ctm;

/* Fractional bits of the integer interpolation weights (Q0.11 per axis, Q0.22 per tap). */
#define CT_QUANT_RESIZE_FRAC 11

/* The two taps of one output index along one axis: input indices i0 <= i1 (clamped into
 * [0, in)), weight w1 of tap i1 (1 − w1 of tap i0) as a double and in fixed point
 * (w1_q = round_half_away(w1 · 2^FRAC), 0..2^FRAC). A coordinate outside [0, in − 1] gives
 * i0 = i1 and w1 = w1_q = 0 (the coordinate is first clamped into [−1, in], NaN to −1, so
 * any scale gives indices in range). */
typedef struct ct_quant_lin_tap {
  int64_t i0, i1;
  double w1;
  int32_t w1_q;
} ct_quant_lin_tap;

/* The ONNX name of ctm ("half_pixel", ...); NULL outside the enum. */
const char *ct_quant_ctm_name(ct_quant_ctm ctm);

/* The ctm named by an ONNX coordinate_transformation_mode; -1 for the modes linear Resize
 * has no TPU form of (tf_crop_and_resize, tf_half_pixel_for_nn, unknown names). */
int ct_quant_ctm_parse(const char *name);

/* Taps of output index o (0 <= o < out) along an axis resized from in to out elements.
 * scale: the ONNX scale as f32, or 0 for out / in (the op gave sizes); the source coordinate
 * is the ONNX formula in double (as ops/tensor_resize.c), e.g. half_pixel
 * (o + 0.5) / scale − 0.5, align_corners o · (in − 1) / (out − 1). */
void ct_quant_resize_tap(ct_quant_ctm ctm, int64_t in, int64_t out, float scale, int64_t o, ct_quant_lin_tap *t);

/* One integer output element from the four taps x[0] = X[h.i0][w.i0], x[1] = X[h.i0][w.i1],
 * x[2] = X[h.i1][w.i0], x[3] = X[h.i1][w.i1] (input and output share the scale and zero
 * point zp): acc = Σ wh·ww·(x − zp) in int64 with the Q0.11 weights (1 − w1 as
 * 2^11 − w1_q), out = sat_dt(rshift_round(acc, 22) + zp) — rshift_round rounds half
 * toward +inf (ct_quant_rshift_round). */
int64_t ct_quant_resize_lin_q(const int64_t x[4], const ct_quant_lin_tap *h, const ct_quant_lin_tap *w, int32_t zp,
                              ct_dtype dt);

/* One float output element from the same four taps: in double,
 * ((1 − wh)·((1 − ww)·x0 + ww·x1) + wh·((1 − ww)·x2 + ww·x3)), rounded once to f32 (the
 * caller's store rounds bf16 / f16 to nearest even). */
float ct_quant_resize_lin_f(const float x[4], const ct_quant_lin_tap *h, const ct_quant_lin_tap *w);

#endif
