/* tensor_resize.c: ONNX tensor family, Resize-13/19: shape function and kernel, float32 (nearest
 * of any dtype, as a gather of elements), N-D: every dim is resampled with nearest/linear/cubic
 * taps from the spec's coordinate transformations; out-of-range taps clamp to the edge (the spec reference
 * pads with "edge"), cubic uses Keys' kernel with coefficient A (cubic_coeff_a) and optional
 * exclude_outside. Output size: floor(input_dimension * scale) or the sizes input. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn_util.h"
#include "ops/shape.h"
#include "ops/nn_shape_util.h"

typedef enum rz_ctm {
  CTM_HALF_PIXEL, CTM_HALF_PIXEL_SYM, CTM_PYTORCH_HALF_PIXEL, CTM_ALIGN_CORNERS, CTM_ASYMMETRIC,
  CTM_TF_HALF_PIXEL_NN, CTM_TF_CROP_AND_RESIZE, CTM_COUNT
} rz_ctm;

static const char *const ctm_names[CTM_COUNT] = {
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
    "tf_half_pixel_for_nn", "tf_crop_and_resize"};

static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
static const char *const mode_names[] = {"nearest", "linear", "cubic"};

/* The taps of one output coordinate along one dim. */
typedef struct rz_tap {
  int n;
  bool outside;                         /* tf_crop_and_resize: coordinate outside the input */
  int64_t idx[4];
  double w[4];
} rz_tap;

typedef struct rz_plan {
  int nd, mode, nearest;                /* mode: 0 nearest 1 linear 2 cubic (mode_names) */
  rz_ctm ctm;
  double cubic_a, extrapolation;
  bool exclude_outside;
  int64_t in[CT_MAX_DIMS], out[CT_MAX_DIMS], stride[CT_MAX_DIMS];
  double scale[CT_MAX_DIMS], roi0[CT_MAX_DIMS], roi1[CT_MAX_DIMS];
  rz_tap *taps[CT_MAX_DIMS];
} rz_plan;

/* Index of s in names (n entries), or -1. */
static int find_name(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

/* Output coordinate x along dim i mapped to the input (ONNX Resize coordinate_transformation_mode).
 * length_resized is in * scale, unrounded, as in the ONNX reference implementation (it differs
 * from the output size when scales are given and in * scale is not an integer). */
static double rz_coord(const rz_plan *p, int i, int64_t x) {
  double s = p->scale[i], in = (double)p->in[i], out = in * s, xd = (double)x;
  switch (p->ctm) { /* one formula per mode, as listed in the spec */
  case CTM_HALF_PIXEL: return (xd + 0.5) / s - 0.5;
  case CTM_HALF_PIXEL_SYM: {
    double adj = (double)p->out[i] / out, center = in / 2;
    return center * (1 - adj) + (xd + 0.5) / s - 0.5;
  }
  case CTM_PYTORCH_HALF_PIXEL: return out > 1 ? (xd + 0.5) / s - 0.5 : 0.0;
  case CTM_ALIGN_CORNERS: return out == 1 ? 0.0 : xd * (in - 1) / (out - 1);
  case CTM_ASYMMETRIC: return xd / s;
  case CTM_TF_HALF_PIXEL_NN: return (xd + 0.5) / s;
  case CTM_TF_CROP_AND_RESIZE:
    return out > 1 ? p->roi0[i] * (in - 1) + xd * (p->roi1[i] - p->roi0[i]) * (in - 1) / (out - 1)
                   : 0.5 * (p->roi0[i] + p->roi1[i]) * (in - 1);
  default: return 0.0;
  }
}

/* Keys' cubic convolution weights for the 4 taps at offsets -1, 0, 1, 2 of fraction t. */
static void cubic_w(double a, double t, double *w) {
  double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

/* Taps of output coordinate x along dim i. */
static void rz_taps(const rz_plan *p, int i, int64_t x, rz_tap *t) {
  double c = rz_coord(p, i, x);
  int64_t in = p->in[i];
  t->outside = p->ctm == CTM_TF_CROP_AND_RESIZE && (c < 0 || c > (double)(in - 1));
  if (p->mode == 0) {
    static double (*const rnd[4])(double) = {NULL, NULL, floor, ceil};
    double r = p->nearest == 0 ? ceil(c - 0.5) : p->nearest == 1 ? floor(c + 0.5) : rnd[p->nearest](c);
    int64_t k = r < 0 ? 0 : r > (double)(in - 1) ? in - 1 : (int64_t)r;
    t->n = 1, t->idx[0] = k, t->w[0] = 1;
    return;
  }
  double f = floor(c), fr = c - f;
  int64_t base = (int64_t)f;
  double w[4];
  int n = p->mode == 1 ? 2 : 4;
  if (p->mode == 1) w[0] = 1 - fr, w[1] = fr;
  else cubic_w(p->cubic_a, fr, w);
  int64_t first = p->mode == 1 ? base : base - 1;
  double sum = 0;
  t->n = 0;
  for (int k = 0; k < n; k++) {
    int64_t idx = first + k;
    bool out = idx < 0 || idx >= in;
    if (out && p->exclude_outside) continue;
    if (w[k] == 0) continue;
    t->idx[t->n] = idx < 0 ? 0 : idx >= in ? in - 1 : idx;
    t->w[t->n++] = w[k];
    sum += w[k];
  }
  if (p->exclude_outside && sum != 0)
    for (int k = 0; k < t->n; k++) t->w[k] /= sum;
  if (t->n == 0) t->n = 1, t->idx[0] = base < 0 ? 0 : base >= in ? in - 1 : base, t->w[0] = 0;
}

/* The tap combinations of the leading dims 0..nd-2 at output row index oi: input offsets and
 * weight products (at most cap; returns how many, 0 if more). *outside when a leading
 * coordinate is outside the crop (tf_crop_and_resize). */
static int rz_combos(const rz_plan *p, const int64_t *oi, int64_t *off, double *w, int cap, bool *outside) {
  int n = 1;
  off[0] = 0, w[0] = 1;
  *outside = false;
  for (int d = 0; d < p->nd - 1; d++) {
    const rz_tap *t = &p->taps[d][oi[d]];
    *outside = *outside || t->outside;
    if (n * t->n > cap) return 0;
    for (int c = n - 1; c >= 0; c--) /* expand in place, back to front */
      for (int k = t->n - 1; k >= 0; k--) {
        off[c * t->n + k] = off[c] + t->idx[k] * p->stride[d];
        w[c * t->n + k] = w[c] * t->w[k];
      }
    n *= t->n;
  }
  return n;
}

/* One output row (last dim) from the leading-dim combinations: y[q] = sum over combinations c
 * and last-dim taps k of w[c] w_k x[off[c] + idx_k]. */
static void rz_row(const rz_plan *p, const float *x, const int64_t *off, const double *w, int n, bool outside,
                   float *y) {
  const rz_tap *tw = p->taps[p->nd - 1];
  for (int64_t q = 0; q < p->out[p->nd - 1]; q++) {
    const rz_tap *t = &tw[q];
    if (outside || t->outside) {
      y[q] = (float)p->extrapolation;
    } else if (n == 1 && t->n == 1) { /* nearest */
      y[q] = (float)(w[0] * t->w[0] * x[off[0] + t->idx[0]]);
    } else {
      double s = 0;
      for (int c = 0; c < n; c++) {
        double r = 0;
        for (int k = 0; k < t->n; k++) r += t->w[k] * x[off[c] + t->idx[k]];
        s += w[c] * r;
      }
      y[q] = (float)s;
    }
  }
}

/* Reads attributes and the roi/scales inputs into p. */
static ct_status rz_setup(const ct_op *op, ct_tensor *const *in, const ct_tensor *y, rz_plan *p, ct_diag *d) {
  const ct_tensor *x = in[0];
  p->mode = find_name(ct_attr_resize_mode(op), mode_names, 3);
  p->ctm = (rz_ctm)find_name(ct_attr_resize_coordinate_transformation_mode(op), ctm_names,
                             CTM_COUNT);
  p->nearest = find_name(ct_attr_resize_nearest_mode(op), nearest_names, 4);
  if (p->mode < 0 || (int)p->ctm < 0 || p->nearest < 0 || ct_attr_resize_antialias(op) || ct_attr_raw_resize_axes(op))
    return ct_shape_nn_fail(d, op, "unsupported mode, coordinate_transformation_mode, nearest_mode, antialias or axes");
  p->cubic_a = ct_attr_resize_cubic_coeff_a(op);
  p->exclude_outside = ct_attr_resize_exclude_outside(op) != 0;
  p->extrapolation = ct_attr_resize_extrapolation_value(op);
  p->nd = x->ndim;
  if (y->ndim != x->ndim || x->ndim < 1) return ct_shape_nn_fail(d, op, "output rank differs from input rank, or rank 0");
  const ct_tensor *roi = op->n_in > 1 ? in[1] : NULL, *sc = op->n_in > 2 ? in[2] : NULL;
  bool has_roi = roi && ct_tensor_numel(roi) > 0, has_sc = sc && ct_tensor_numel(sc) > 0;
  if ((has_roi && ct_tensor_numel(roi) != 2 * x->ndim) || (has_sc && ct_tensor_numel(sc) != x->ndim))
    return ct_shape_nn_fail(d, op, "roi/scales length does not match rank %d", x->ndim);
  int64_t st = 1;
  for (int i = x->ndim - 1; i >= 0; i--) {
    p->in[i] = x->shape[i], p->out[i] = y->shape[i], p->stride[i] = st;
    st *= x->shape[i];
    p->scale[i] = has_sc ? (double)(float)ct_tensor_get_f64(sc, i) : (double)p->out[i] / (double)p->in[i];
    p->roi0[i] = has_roi ? ct_tensor_get_f64(roi, i) : 0.0;
    p->roi1[i] = has_roi ? ct_tensor_get_f64(roi, i + x->ndim) : 1.0;
    if (p->in[i] < 1 || !(p->scale[i] > 0)) return ct_shape_nn_fail(d, op, "empty input or non-positive scale (dim %d)", i);
  }
  return CT_OK;
}

/* oi := the output index of row r over the leading nd − 1 dims (row-major). */
static void rz_row_index(const rz_plan *p, int64_t r, int64_t *oi) {
  for (int i = p->nd - 2; i >= 0; i--) oi[i] = r % p->out[i], r /= p->out[i];
}

/* Nearest Resize of any dtype as a gather of elements (esz bytes), output rows [lo, hi):
 * each output element is the input element at its per-dim nearest taps (p->taps, one tap per
 * dim), copied with a constant size for 1-, 2- and 4-byte elements. No extrapolation (the
 * caller excludes tf_crop_and_resize). */
typedef struct rz_gather_job {
  const rz_plan *p;
  const uint8_t *x;
  uint8_t *y;
  size_t esz;
} rz_gather_job;

static void rz_gather(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const rz_gather_job *j = arg;
  const rz_plan *p = j->p;
  size_t esz = j->esz;
  int64_t rowlen = p->out[p->nd - 1], oi[CT_MAX_DIMS] = {0};
  rz_row_index(p, lo, oi);
  const rz_tap *tw = p->taps[p->nd - 1];
  uint8_t *y = j->y + (size_t)(lo * rowlen) * esz;
  for (int64_t r = lo; r < hi; r++, y += (size_t)rowlen * esz) {
    int64_t base = 0;
    for (int i = 0; i < p->nd - 1; i++) base += p->taps[i][oi[i]].idx[0] * p->stride[i];
    const uint8_t *xr = j->x + (size_t)base * esz;
    if (esz == 1)
      for (int64_t q = 0; q < rowlen; q++) y[q] = xr[tw[q].idx[0]];
    else if (esz == 2)
      for (int64_t q = 0; q < rowlen; q++) memcpy(y + 2 * q, xr + 2 * tw[q].idx[0], 2);
    else if (esz == 4)
      for (int64_t q = 0; q < rowlen; q++) memcpy(y + 4 * q, xr + 4 * tw[q].idx[0], 4);
    else
      for (int64_t q = 0; q < rowlen; q++) memcpy(y + (size_t)q * esz, xr + (size_t)tw[q].idx[0] * esz, esz);
    for (int i = p->nd - 2; i >= 0 && ++oi[i] == p->out[i]; i--) oi[i] = 0;
  }
}

/* The per-dim taps of p into one buffer (*buf, freed by the caller); false when out of memory. */
static bool rz_plan_taps(rz_plan *p, rz_tap **buf) {
  int64_t tot = 0;
  for (int i = 0; i < p->nd; i++) tot += p->out[i];
  rz_tap *q = *buf = malloc(sizeof *q * (size_t)(tot + 1));
  if (!q) return false;
  for (int i = 0; i < p->nd; i++) {
    p->taps[i] = q;
    for (int64_t o = 0; o < p->out[i]; o++) rz_taps(p, i, o, &q[o]);
    q += p->out[i];
  }
  return true;
}

/* Nearest Resize (not tf_crop_and_resize) with the input's dtype out: the gather, any dtype,
 * its rows on ctx's threads. */
static ct_status rz_nearest(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  rz_plan p;
  memset(&p, 0, sizeof p);
  ct_status st = rz_setup(op, in, out[0], &p, d);
  if (st) return st;
  rz_tap *buf;
  if (!rz_plan_taps(&p, &buf)) return ct_shape_nn_oom(d, op);
  int64_t n = ct_tensor_numel(out[0]), rowlen = p.out[p.nd - 1];
  rz_gather_job j = {&p, in[0]->data, out[0]->data, ct_dtype_size(in[0]->dtype)};
  if (n > 0) ct_nn_parallel(ctx, n / rowlen, CT_NN_STREAM_WORK(n), rz_gather, &j);
  free(buf);
  return CT_OK;
}

#define RZ_CAP 4096 /* interpolation taps per output row at most: 4^6, cubic on six leading dims */

/* Output rows [lo, hi) of a linear / cubic Resize: each row's taps and weights over the leading
 * dims (rz_combos), then rz_row. fail: 1 out of memory, 2 too many taps (the rows stop). */
typedef struct rz_interp_job {
  const rz_plan *p;
  const float *x;
  float *y;
  atomic_int fail; /* set by any thread that fails; read after the loop */
} rz_interp_job;

static void rz_interp(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  rz_interp_job *j = arg;
  const rz_plan *p = j->p;
  int64_t rowlen = p->out[p->nd - 1], oi[CT_MAX_DIMS] = {0};
  int64_t *off = malloc(sizeof *off * RZ_CAP);
  double *w = malloc(sizeof *w * RZ_CAP);
  if (!off || !w) atomic_store(&j->fail, 1);
  rz_row_index(p, lo, oi);
  for (int64_t r = lo; off && w && r < hi; r++) {
    bool outside;
    int n = rz_combos(p, oi, off, w, RZ_CAP, &outside);
    if (n == 0) {
      atomic_store(&j->fail, 2);
      break;
    }
    rz_row(p, j->x, off, w, n, outside, j->y + r * rowlen);
    for (int i = p->nd - 2; i >= 0 && ++oi[i] == p->out[i]; i--) oi[i] = 0;
  }
  free(off), free(w);
}

/* Resize, f32 (nearest: any dtype, as a gather): see the file comment. CT_ERR_INPUT for
 * unsupported attributes or malformed roi/scales. */
ct_status ct_kern_resize(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  bool nearest = strcmp(ct_attr_resize_mode(op), "nearest") == 0;
  if (nearest && in[0] && out[0] && in[0]->dtype == out[0]->dtype &&
      strcmp(ct_attr_resize_coordinate_transformation_mode(op), "tf_crop_and_resize") != 0)
    return rz_nearest(op, in, out, ctx, d);
  if (in[0] && in[0]->dtype != CT_F32 && nearest) return ct_nn_via_f32(ct_kern_resize, op, in, out, ctx, d);
  ct_status st;
  if ((st = ct_nn_need(op, in[0], CT_F32, "input X", d)) || (st = ct_nn_need(op, out[0], CT_F32, "output Y", d)))
    return st;
  rz_plan p;
  memset(&p, 0, sizeof p);
  if ((st = rz_setup(op, in, out[0], &p, d))) return st;
  rz_tap *buf;
  if (!rz_plan_taps(&p, &buf)) return ct_shape_nn_oom(d, op);
  int64_t rowlen = p.out[p.nd - 1], nrows = rowlen ? ct_tensor_numel(out[0]) / rowlen : 0;
  rz_interp_job j = {.p = &p, .x = in[0]->data, .y = out[0]->data};
  atomic_init(&j.fail, 0);
  ct_nn_parallel(ctx, nrows, ct_tensor_numel(out[0]), rz_interp, &j);
  free(buf);
  int fail = atomic_load(&j.fail);
  if (fail == 1) return ct_shape_nn_oom(d, op);
  if (fail == 2) return ct_shape_nn_fail(d, op, "unsupported: more than %d interpolation taps per row", RZ_CAP);
  return CT_OK;
}

/* ---- shape function ---- */

/* True when the optional input i is present with at least one element. */
static bool has_data_input(const ct_op *op, int i) {
  return i < op->n_in && op->in[i] && ct_value_numel(op->in[i]) > 0;
}

/* Checks a string attribute (accessor get, name attr) against a NULL-terminated list of
 * accepted values. */
static ct_status check_choice(const ct_op *op, const char *attr, const char *(*get)(const ct_op *),
                              const char *const *ok, ct_diag *d) {
  const char *v = get(op);
  for (int i = 0; ok[i]; i++)
    if (strcmp(v, ok[i]) == 0) return CT_OK;
  return ct_shape_nn_fail(d, op, "unsupported %s \"%s\"", attr, v);
}

static ct_status resize_attrs(const ct_op *op, ct_diag *d) {
  static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
  static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                     "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
  static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
  ct_status st;
  if ((st = check_choice(op, "mode", ct_attr_resize_mode, modes, d)) ||
      (st = check_choice(op, "coordinate_transformation_mode", ct_attr_resize_coordinate_transformation_mode, ctms, d)) ||
      (st = check_choice(op, "nearest_mode", ct_attr_resize_nearest_mode, nms, d)))
    return st;
  if (ct_attr_resize_antialias(op)) return ct_shape_nn_fail(d, op, "unsupported antialias = 1");
  if (ct_attr_raw_resize_axes(op)) return ct_shape_nn_fail(d, op, "unsupported attribute axes");
  if (strcmp(ct_attr_resize_keep_aspect_ratio_policy(op), "stretch") != 0)
    return ct_shape_nn_fail(d, op, "unsupported keep_aspect_ratio_policy");
  return CT_OK;
}

/* Resize (ONNX Resize-13/19; inputs X, roi, scales, sizes): exactly one of scales / sizes, which
 * must be constant; output = floor(in * scale) or sizes. mode, coordinate_transformation_mode
 * and nearest_mode are checked; antialias, axes and keep_aspect_ratio_policy other than
 * "stretch" are "unsupported". */
ct_status ct_shape_resize(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 1, d)) || (st = resize_attrs(op, d))) return st;
  const ct_value *x = op->in[0];
  bool hs = has_data_input(op, 2), hz = has_data_input(op, 3);
  if (hs == hz) return ct_shape_nn_fail(d, op, "exactly one of scales and sizes must be given");
  const ct_value *v = op->in[hs ? 2 : 3];
  if (!ct_value_is_const(v))
    return ct_shape_nn_fail(d, op, "unsupported non-constant %s (\"%s\")", hs ? "scales" : "sizes", v->name);
  if (ct_value_numel(v) != x->ndim)
    return ct_shape_nn_fail(d, op, "%s has %lld values for rank %d", hs ? "scales" : "sizes",
                            (long long)ct_value_numel(v), x->ndim);
  if (has_data_input(op, 1) && ct_value_numel(op->in[1]) != 2 * x->ndim)
    return ct_shape_nn_fail(d, op, "roi has %lld values, expected %d", (long long)ct_value_numel(op->in[1]),
                            2 * x->ndim);
  if ((st = strcmp(ct_attr_resize_mode(op), "nearest") == 0 ? ct_shape_nn_exact_f32_input(op, 0, d)
                                                                            : ct_shape_nn_float_input(op, 0, d)))
    return st;
  int64_t shape[CT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    if (hs) {
      double sc = (float)ct_tensor_get_f64(v->data, i);
      if (!(sc > 0) || !isfinite(sc)) return ct_shape_nn_fail(d, op, "scales[%d] must be positive", i);
      shape[i] = (int64_t)floor((double)x->shape[i] * sc);
    } else {
      shape[i] = ct_tensor_get_i64(v->data, i);
    }
    if (shape[i] < 1 || shape[i] > ((int64_t)1 << 40))
      return ct_shape_nn_fail(d, op, "output dim %d would be %lld", i, (long long)shape[i]);
  }
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, shape, d);
}
