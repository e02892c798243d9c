/* quant_resize.c: linear Resize taps and element arithmetic shared by the Tpu reference and
 * the cmodel (quant_resize.h). Coordinates follow the ONNX Resize spec's formulas, computed
 * in double as ops/tensor_resize.c does; the integer weights are Q0.11 per axis. */
#include <math.h>
#include <string.h>

#include "quant/quant.h"
#include "quant/quant_resize.h"

static const char *const ctm_names[CT_QUANT_CTM_COUNT] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                                         "asymmetric", "half_pixel_symmetric"};

const char *ct_quant_ctm_name(ct_quant_ctm ctm) {
  return (unsigned)ctm < CT_QUANT_CTM_COUNT ? ctm_names[ctm] : NULL;
}

int ct_quant_ctm_parse(const char *name) {
  for (int i = 0; name && i < CT_QUANT_CTM_COUNT; i++)
    if (!strcmp(name, ctm_names[i])) return i;
  return -1;
}

/* Source coordinate of output index o (ONNX Resize coordinate_transformation_mode). */
static double coord(ct_quant_ctm ctm, int64_t in, int64_t out, float scale, int64_t o) {
  double s = scale > 0 ? (double)scale : (double)out / (double)in, len = (double)in * s, x = (double)o;
  switch (ctm) {
  case CT_QUANT_CTM_HALF_PIXEL: return (x + 0.5) / s - 0.5;
  case CT_QUANT_CTM_PYTORCH_HALF_PIXEL: return len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
  case CT_QUANT_CTM_ALIGN_CORNERS: return len == 1 ? 0.0 : x * (double)(in - 1) / (len - 1);
  case CT_QUANT_CTM_ASYMMETRIC: return x / s;
  case CT_QUANT_CTM_HALF_PIXEL_SYMMETRIC: {
    double adj = (double)out / len, center = (double)in / 2;
    return center * (1 - adj) + (x + 0.5) / s - 0.5;
  }
  default: return 0.0;
  }
}

static int64_t clamp(int64_t i, int64_t in) { return i < 0 ? 0 : i >= in ? in - 1 : i; }

void ct_quant_resize_tap(ct_quant_ctm ctm, int64_t in, int64_t out, float scale, int64_t o, ct_quant_lin_tap *t) {
  double c = coord(ctm, in, out, scale, o);
  c = c > -1 ? (c < (double)in ? c : (double)in) : -1; /* NaN and far coordinates: an edge tap */
  double f = floor(c);
  int64_t base = (int64_t)f;
  t->i0 = clamp(base, in), t->i1 = clamp(base + 1, in);
  t->w1 = t->i0 == t->i1 ? 0.0 : c - f;
  t->w1_q = (int32_t)ct_quant_round_half_away(t->w1 * (double)(1 << CT_QUANT_RESIZE_FRAC));
}

int64_t ct_quant_resize_lin_q(const int64_t x[4], const ct_quant_lin_tap *h, const ct_quant_lin_tap *w, int32_t zp,
                              ct_dtype dt) {
  const int64_t one = INT64_C(1) << CT_QUANT_RESIZE_FRAC, wh1 = h->w1_q, ww1 = w->w1_q, wh0 = one - wh1, ww0 = one - ww1;
  int64_t r0 = ww0 * (x[0] - zp) + ww1 * (x[1] - zp), r1 = ww0 * (x[2] - zp) + ww1 * (x[3] - zp);
  int64_t acc = wh0 * r0 + wh1 * r1;
  return ct_quant_saturate(ct_quant_rshift_round(acc, 2 * CT_QUANT_RESIZE_FRAC) + zp, dt);
}

float ct_quant_resize_lin_f(const float x[4], const ct_quant_lin_tap *h, const ct_quant_lin_tap *w) {
  double ww1 = w->w1, ww0 = 1 - ww1, wh1 = h->w1, wh0 = 1 - wh1;
  double r0 = ww0 * x[0] + ww1 * x[1], r1 = ww0 * x[2] + ww1 * x[3];
  return (float)(wh0 * r0 + wh1 * r1);
}
