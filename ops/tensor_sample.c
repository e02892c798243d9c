/* tensor_sample.c: ops that sample or scatter feature maps: shape functions and kernels of
 * GridSample (ONNX tensor family, GridSample-16/20, 4-D; the coordinate, padding and cubic
 * rules of onnx/reference's op_grid_sample), RoiAlign (object_detection, RoiAlign-16, Mask
 * R-CNN, He et al. 2017) and MaxUnpool-11 (nn). */
#include <math.h>
#include <string.h>

#include "ops/sample_nms_loss.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"

ct_status ct_gridsample_modes(const ct_op *op, ct_gridsample_mode *mode, ct_gridsample_pad *pad, ct_diag *d) {
  static const char *const modes[][2] = {{"bilinear", "linear"}, {"nearest", "nearest"}, {"bicubic", "cubic"}};
  static const char *const pads[] = {"zeros", "border", "reflection"};
  const char *m = ct_attr_gridsample_mode(op), *p = ct_attr_gridsample_padding_mode(op);
  int mi = -1, pi = -1;
  for (int i = 0; i < 3; i++) {
    if (!strcmp(m, modes[i][0]) || !strcmp(m, modes[i][1])) mi = i;
    if (!strcmp(p, pads[i])) pi = i;
  }
  if (mi < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported mode \"%s\"", m);
  if (pi < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported padding_mode \"%s\"", p);
  *mode = (ct_gridsample_mode)mi;
  *pad = (ct_gridsample_pad)pi;
  return CT_OK;
}

/* One GridSample plane: sizes, modes, the valid coordinate range [lo, hi] per axis (y, x). */
typedef struct gs_plan {
  ct_gridsample_mode mode;
  ct_gridsample_pad pad;
  bool align;
  int64_t size[2];
  double lo[2], hi[2];
} gs_plan;

/* Reflects x into [lo, hi] (mirror without repeating the edge), as op_grid_sample's _gs_reflect. */
static double gs_reflect(double x, double lo, double hi) {
  double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  double dx = x < lo ? lo - x : x - hi;
  double n = floor(dx / rng), r = dx - n * rng;
  bool even = fmod(n, 2) == 0;
  return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
}

/* Index i on axis a after padding; -1 when the pixel is a zero pad. */
static int64_t gs_index(const gs_plan *p, int a, int64_t i) {
  int64_t n = p->size[a];
  if (i >= 0 && i < n) return i;
  if (p->pad == CT_GRIDSAMPLE_ZEROS) return -1;
  if (p->pad == CT_GRIDSAMPLE_BORDER) return i < 0 ? 0 : n - 1;
  int64_t r = (int64_t)gs_reflect((double)i, p->lo[a], p->hi[a]);
  return r < 0 ? 0 : r >= n ? n - 1 : r;
}

static double gs_pixel(const gs_plan *p, const ct_tensor *x, int64_t base, int64_t iy, int64_t ix) {
  int64_t y = gs_index(p, 0, iy), xx = gs_index(p, 1, ix);
  return y < 0 || xx < 0 ? 0 : ct_tensor_get_f64(x, base + y * p->size[1] + xx);
}

/* Keys' cubic convolution weight (A = -0.75) at distance s from the sample. */
static double keys(double s) {
  const double a = -0.75;
  s = fabs(s);
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  return s < 2 ? ((a * s - 5 * a) * s + 8 * a) * s - 4 * a : 0;
}

/* Interpolated value at (y, x) (pixel coordinates) of the plane at base. Nearest rounds half
 * to even (nearbyint); linear uses the 2x2, cubic the 4x4 neighbourhood. */
static double gs_value(const gs_plan *p, const ct_tensor *x, int64_t base, double y, double xc) {
  if (p->mode == CT_GRIDSAMPLE_NEAREST) return gs_pixel(p, x, base, (int64_t)nearbyint(y), (int64_t)nearbyint(xc));
  double fy = floor(y), fx = floor(xc), v = 0;
  int lo = p->mode == CT_GRIDSAMPLE_LINEAR ? 0 : -1, hi = p->mode == CT_GRIDSAMPLE_LINEAR ? 1 : 2;
  for (int i = lo; i <= hi; i++) {
    double wy = p->mode == CT_GRIDSAMPLE_LINEAR ? 1 - fabs(y - (fy + i)) : keys(y - (fy + i));
    for (int j = lo; j <= hi; j++) {
      double wx = p->mode == CT_GRIDSAMPLE_LINEAR ? 1 - fabs(xc - (fx + j)) : keys(xc - (fx + j));
      v += wy * wx * gs_pixel(p, x, base, (int64_t)fy + i, (int64_t)fx + j);
    }
  }
  return v;
}

/* Normalized grid coordinate g in [-1, 1] → pixel coordinate on axis a, padded (border clamps,
 * reflection mirrors) when outside [lo, hi]. */
static double gs_coord(const gs_plan *p, int a, double g) {
  double n = (double)p->size[a];
  double c = p->align ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
  if (c >= p->lo[a] && c <= p->hi[a]) return c;
  if (p->pad == CT_GRIDSAMPLE_BORDER) return c < 0 ? 0 : c > n - 1 ? n - 1 : c;
  if (p->pad == CT_GRIDSAMPLE_REFLECTION) return gs_reflect(c, p->lo[a], p->hi[a]);
  return c;
}

/* GridSample: X (N, C, H, W), grid (N, Ho, Wo, 2) of normalized (x, y) → Y (N, C, Ho, Wo).
 * CT_ERR_INPUT for other ranks ("unsupported") or inconsistent shapes, unknown modes. */
ct_status ct_kern_gridsample(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                             ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *grid = in[1];
  gs_plan p = {.align = ct_attr_gridsample_align_corners(op) != 0};
  ct_status st = ct_gridsample_modes(op, &p.mode, &p.pad, d);
  if (st) return st;
  if (x->ndim != 4 || grid->ndim != 4 || grid->shape[3] != 2 || grid->shape[0] != x->shape[0])
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: X must be (N, C, H, W) and grid (N, Ho, Wo, 2)");
  int64_t nb = x->shape[0], c = x->shape[1], ho = grid->shape[1], wo = grid->shape[2];
  for (int a = 0; a < 2; a++) {
    p.size[a] = x->shape[2 + a];
    p.lo[a] = p.align ? 0 : -0.5;
    p.hi[a] = p.align ? (double)p.size[a] - 1 : (double)p.size[a] - 0.5;
  }
  for (int64_t n = 0; n < nb; n++)
    for (int64_t k = 0; k < ho * wo; k++) {
      int64_t gi = (n * ho * wo + k) * 2;
      double xc = gs_coord(&p, 1, ct_tensor_get_f64(grid, gi)), y = gs_coord(&p, 0, ct_tensor_get_f64(grid, gi + 1));
      for (int64_t ch = 0; ch < c; ch++)
        ct_tensor_set_f64(out[0], (n * c + ch) * ho * wo + k, gs_value(&p, x, (n * c + ch) * p.size[0] * p.size[1], y, xc));
    }
  return CT_OK;
}

/* RoiAlign geometry of one RoI: start (y, x), bin size, samples per bin. */
typedef struct ra_roi {
  double y0, x0, bh, bw;
  int64_t gh, gw;
} ra_roi;

/* One bilinear sample at (y, x) of the H×W plane at base, as Detectron/onnxruntime: 0 outside
 * [-1, H] × [-1, W], coordinates clamped to the plane. Writes the 4 weighted corner terms. */
static void ra_sample(const ct_tensor *x, int64_t base, int64_t h, int64_t w, double y, double xc, double *t) {
  t[0] = t[1] = t[2] = t[3] = 0;
  if (y < -1.0 || y > (double)h || xc < -1.0 || xc > (double)w) return;
  y = y <= 0 ? 0 : y, xc = xc <= 0 ? 0 : xc;
  int64_t yl = (int64_t)y, xl = (int64_t)xc, yh = yl + 1, xh = xl + 1;
  if (yl >= h - 1) yh = yl = h - 1, y = (double)yl;
  if (xl >= w - 1) xh = xl = w - 1, xc = (double)xl;
  double ly = y - (double)yl, lx = xc - (double)xl, hy = 1 - ly, hx = 1 - lx;
  t[0] = hy * hx * ct_tensor_get_f64(x, base + yl * w + xl);
  t[1] = hy * lx * ct_tensor_get_f64(x, base + yl * w + xh);
  t[2] = ly * hx * ct_tensor_get_f64(x, base + yh * w + xl);
  t[3] = ly * lx * ct_tensor_get_f64(x, base + yh * w + xh);
}

/* Output bin (ph, pw) of one RoI on the plane at base: average of the samples' bilinear values,
 * or (mode max, as onnxruntime) the maximum over samples of the largest weighted corner term. */
static double ra_bin(const ra_roi *r, const ct_tensor *x, int64_t base, int64_t h, int64_t w, int64_t ph,
                     int64_t pw, bool is_max) {
  double acc = 0, t[4];
  for (int64_t iy = 0; iy < r->gh; iy++)
    for (int64_t ix = 0; ix < r->gw; ix++) {
      double y = r->y0 + (double)ph * r->bh + ((double)iy + 0.5) * r->bh / (double)r->gh;
      double xc = r->x0 + (double)pw * r->bw + ((double)ix + 0.5) * r->bw / (double)r->gw;
      ra_sample(x, base, h, w, y, xc, t);
      double m = fmax(fmax(t[0], t[1]), fmax(t[2], t[3]));
      acc = is_max ? (iy == 0 && ix == 0 ? m : fmax(acc, m)) : acc + t[0] + t[1] + t[2] + t[3];
    }
  int64_t count = r->gh * r->gw;
  return is_max || count == 0 ? acc : acc / (double)count;
}

/* RoI r of rois (R, 4) [x1, y1, x2, y2] scaled by spatial_scale, shifted by -0.5 in half_pixel
 * mode (output_half_pixel: no shift, sizes at least 1); sampling_ratio 0 = ceil(size / bins). */
static void ra_geometry(const ct_op *op, const ct_tensor *rois, int64_t r, int64_t oh, int64_t ow, bool half, ra_roi *g) {
  double scale = ct_attr_roialign_spatial_scale(op), off = half ? 0.5 : 0;
  double x1 = ct_tensor_get_f64(rois, r * 4) * scale - off, y1 = ct_tensor_get_f64(rois, r * 4 + 1) * scale - off;
  double rw = ct_tensor_get_f64(rois, r * 4 + 2) * scale - off - x1;
  double rh = ct_tensor_get_f64(rois, r * 4 + 3) * scale - off - y1;
  if (!half) rw = fmax(rw, 1), rh = fmax(rh, 1);
  int64_t sr = ct_attr_roialign_sampling_ratio(op);
  g->y0 = y1, g->x0 = x1, g->bh = rh / (double)oh, g->bw = rw / (double)ow;
  g->gh = sr > 0 ? sr : (int64_t)ceil(rh / (double)oh);
  g->gw = sr > 0 ? sr : (int64_t)ceil(rw / (double)ow);
}

/* RoiAlign: X (N, C, H, W), rois (R, 4), batch_indices (R) → Y (R, C, oh, ow). CT_ERR_INPUT for
 * unknown mode / coordinate_transformation_mode ("unsupported"), a batch index out of range. */
ct_status ct_kern_roialign(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                           ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *rois = in[1], *bi = in[2];
  const char *mode = ct_attr_roialign_mode(op), *ctm = ct_attr_roialign_coordinate_transformation_mode(op);
  bool is_max = !strcmp(mode, "max"), half = !strcmp(ctm, "half_pixel");
  if (!is_max && strcmp(mode, "avg")) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported mode \"%s\"", mode);
  if (!half && strcmp(ctm, "output_half_pixel"))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported coordinate_transformation_mode \"%s\"", ctm);
  const ct_tensor *y = out[0];
  int64_t nr = y->shape[0], c = y->shape[1], oh = y->shape[2], ow = y->shape[3], h = x->shape[2], w = x->shape[3];
  for (int64_t r = 0; r < nr; r++) {
    int64_t b = ct_ops_get_i64(bi, r);
    if (b < 0 || b >= x->shape[0]) return ct_ops_err(d, CT_ERR_INPUT, op, "batch index %lld out of range", (long long)b);
    ra_roi g;
    ra_geometry(op, rois, r, oh, ow, half, &g);
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t ph = 0; ph < oh; ph++)
        for (int64_t pw = 0; pw < ow; pw++)
          ct_tensor_set_f64(out[0], ((r * c + ch) * oh + ph) * ow + pw, ra_bin(&g, x, (b * c + ch) * h * w, h, w, ph, pw, is_max));
  }
  return CT_OK;
}

ct_status ct_maxunpool_shape(const ct_op *op, int ndim, const int64_t *x_shape, int64_t *out, ct_diag *d) {
  int nsp = ndim - 2, nk = 0, ns = 0, np = 0;
  const int64_t *k = ct_attr_window_kernel_shape(op, &nk), *s = ct_attr_window_strides(op, &ns);
  const int64_t *p = ct_attr_window_pads(op, &np);
  if (nsp < 1 || !k || nk != nsp || (s && ns != nsp) || (p && np != 2 * nsp))
    return ct_ops_err(d, CT_ERR_INPUT, op, "kernel_shape/strides/pads must have %d/%d/%d entries", nsp, nsp, 2 * nsp);
  out[0] = x_shape[0], out[1] = x_shape[1];
  for (int i = 0; i < nsp; i++) {
    out[2 + i] = (x_shape[2 + i] - 1) * (s ? s[i] : 1) + k[i] - (p ? p[i] + p[nsp + i] : 0);
    if (out[2 + i] < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "negative output size on spatial dim %d", i);
  }
  return CT_OK;
}

/* MaxUnpool: Y = zeros, then X[i] goes to the element of Y at the coordinates that index I[i]
 * has in the default output shape (ct_maxunpool_shape; MaxPool's flat Indices): with a given
 * output_shape the default result is padded at the end of each dim, as onnxruntime. Errors
 * (CT_ERR_INPUT): an index outside the default shape or a coordinate outside Y. */
ct_status ct_kern_maxunpool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *ind = in[1];
  ct_tensor *y = out[0];
  size_t es = ct_dtype_size(y->dtype);
  int64_t ny = ct_tensor_numel(y), nx = ct_tensor_numel(x), def[CT_MAX_DIMS], ndef = 1;
  if (ct_tensor_numel(ind) != nx || x->dtype != y->dtype || y->ndim != x->ndim)
    return ct_ops_err(d, CT_ERR_INPUT, op, "indices must have the input's shape");
  ct_status st = ct_maxunpool_shape(op, x->ndim, x->shape, def, d);
  if (st) return st;
  for (int i = 0; i < x->ndim; i++) ndef *= def[i];
  memset(y->data, 0, (size_t)ny * es);
  for (int64_t i = 0; i < nx; i++) {
    int64_t k = ct_ops_get_i64(ind, i), rem = k, off = 0, scale = 1;
    if (k < 0 || k >= ndef) return ct_ops_err(d, CT_ERR_INPUT, op, "index %lld outside the output", (long long)k);
    for (int a = x->ndim - 1; a >= 0; a--) {
      int64_t c = rem % def[a];
      rem /= def[a];
      if (c >= y->shape[a]) return ct_ops_err(d, CT_ERR_INPUT, op, "index %lld outside output_shape", (long long)k);
      off += c * scale, scale *= y->shape[a];
    }
    memcpy((char *)y->data + (size_t)off * es, (const char *)x->data + (size_t)i * es, es);
  }
  return CT_OK;
}

/* ---- shape functions ---- */

/* GridSample: X (N, C, H, W), grid (N, Ho, Wo, 2) → (N, C, Ho, Wo) of X's dtype. Other ranks
 * are "unsupported"; unknown modes as ct_gridsample_modes. */
ct_status ct_shape_gridsample(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x, *grid;
  ct_gridsample_mode mode;
  ct_gridsample_pad pad;
  ct_status st = ct_gridsample_modes(op, &mode, &pad, d);
  if (st || (st = ct_sm_float_in(op, 0, -1, &x, d)) || (st = ct_sm_float_in(op, 1, -1, &grid, d))) return st;
  if (x->ndim != 4 || grid->ndim != 4) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: rank %d (only 4-D)", x->ndim);
  if (grid->shape[3] != 2 || grid->shape[0] != x->shape[0])
    return ct_ops_err(d, CT_ERR_INPUT, op, "grid must be (N, Ho, Wo, 2) with X's N");
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
  if ((st = ct_sm_float_in(op, 0, 4, &x, d)) || (st = ct_sm_float_in(op, 1, 2, &rois, d)) || (st = ct_sm_in(op, 2, &bi, d)))
    return st;
  if (rois->shape[1] != 4 || bi->ndim != 1 || bi->shape[0] != rois->shape[0] || !ct_ops_is_int(bi->dtype))
    return ct_ops_err(d, CT_ERR_INPUT, op, "rois must be (R, 4) and batch_indices (R) integer");
  int64_t oh = ct_attr_roialign_output_height(op), ow = ct_attr_roialign_output_width(op);
  if (oh < 1 || ow < 1 || ct_attr_roialign_sampling_ratio(op) < 0)
    return ct_ops_err(d, CT_ERR_INPUT, op, "output sizes must be >= 1 and sampling_ratio >= 0");
  int64_t s[4] = {rois->shape[0], x->shape[1], oh, ow};
  ct_sm_out(op, 0, x->dtype, 4, s);
  return CT_OK;
}

/* MaxUnpool: X (N, C, spatial...), I (X's shape, int64) → output_shape (constant input 2) or the
 * default size of ct_maxunpool_shape. Errors: those of ct_maxunpool_shape, shapes, a
 * non-constant output_shape ("unsupported"). */
ct_status ct_shape_maxunpool(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x, *ind;
  const ct_tensor *os = NULL;
  ct_status st;
  if ((st = ct_sm_in(op, 0, &x, d)) || (st = ct_sm_in(op, 1, &ind, d))) return st;
  if (op->n_in > 2 && (st = ct_sm_const(op, 2, "output_shape", &os, d))) return st;
  if (x->ndim < 3 || ind->ndim != x->ndim || ind->dtype != CT_I64 || ct_value_numel(ind) != ct_value_numel(x))
    return ct_ops_err(d, CT_ERR_INPUT, op, "X must be (N, C, spatial...) and I int64 of its shape");
  int64_t s[CT_MAX_DIMS];
  if ((st = ct_maxunpool_shape(op, x->ndim, x->shape, s, d))) return st;
  if (os) {
    int n = 0;
    if ((st = ct_ops_ints(op, os, "output_shape", CT_MAX_DIMS, s, &n, d))) return st;
    if (n != x->ndim) return ct_ops_err(d, CT_ERR_INPUT, op, "output_shape must have %d entries", x->ndim);
  }
  ct_sm_out(op, 0, x->dtype, x->ndim, s);
  return CT_OK;
}
