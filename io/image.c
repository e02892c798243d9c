/* image.c: JPEG/PNG decoding (libjpeg with a setjmp error handler, as libjpeg.txt "Error
 * handling" describes; libpng's simplified png_image API) and Input-op preprocessing:
 * bilinear half-pixel resize (ONNX Resize linear/half_pixel), torchvision-style center crop. */
#include "io/image.h"

#include <stdio.h> /* before jpeglib.h, which uses FILE */

#include <jpeglib.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#define CT_IMAGE_MAX_PIXELS ((int64_t)1 << 28)

void ct_image_free(ct_image *img) {
  if (!img) return;
  free(img->rgb);
  img->rgb = NULL;
  img->h = img->w = 0;
}

/* Reads the first n bytes of path into buf; false if shorter or unreadable. */
static bool read_magic(const char *path, unsigned char *buf, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool ok = fread(buf, 1, n, f) == n;
  fclose(f);
  return ok;
}

static bool is_jpeg(const unsigned char *m) { return m[0] == 0xFF && m[1] == 0xD8 && m[2] == 0xFF; }
static bool is_png(const unsigned char *m) { return memcmp(m, "\x89PNG\r\n\x1a\n", 8) == 0; }

bool ct_image_is_image_file(const char *path) {
  unsigned char m[8];
  return read_magic(path, m, sizeof m) && (is_jpeg(m) || is_png(m));
}

/* ---- JPEG ---- */

typedef struct jpeg_err {
  struct jpeg_error_mgr mgr;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
} jpeg_err;

static void jpeg_fail(j_common_ptr cinfo) {
  jpeg_err *e = (jpeg_err *)cinfo->err;
  e->mgr.format_message(cinfo, e->msg);
  longjmp(e->jump, 1);
}

static void jpeg_quiet(j_common_ptr cinfo, int level) { (void)cinfo, (void)level; }

/* Decodes after the header was read; the caller's setjmp catches libjpeg errors. */
static ct_status jpeg_pixels(struct jpeg_decompress_struct *ci, const char *path, ct_image *img, ct_diag *d) {
  ci->out_color_space = JCS_RGB;
  jpeg_start_decompress(ci);
  int64_t h = ci->output_height, w = ci->output_width;
  if (ci->output_components != 3 || h * w > CT_IMAGE_MAX_PIXELS)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: unsupported JPEG (%lldx%lld, %d components)", path, (long long)w,
                       (long long)h, ci->output_components);
  img->rgb = malloc((size_t)(h * w * 3));
  if (!img->rgb) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory for %lldx%lld pixels", path, (long long)w, (long long)h);
  img->h = h;
  img->w = w;
  while (ci->output_scanline < ci->output_height) {
    JSAMPROW row = img->rgb + (size_t)ci->output_scanline * (size_t)w * 3;
    jpeg_read_scanlines(ci, &row, 1);
  }
  jpeg_finish_decompress(ci);
  return CT_OK;
}

static ct_status load_jpeg(const char *path, ct_image *img, ct_diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot open image", path);
  struct jpeg_decompress_struct ci;
  jpeg_err err;
  memset(&err, 0, sizeof err);
  ci.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.emit_message = jpeg_quiet;
  ct_status st = CT_OK;
  if (setjmp(err.jump)) {
    ct_image_free(img);
    jpeg_destroy_decompress(&ci);
    fclose(f);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: corrupt JPEG: %s", path, err.msg);
  }
  jpeg_create_decompress(&ci);
  jpeg_stdio_src(&ci, f);
  jpeg_read_header(&ci, TRUE);
  st = jpeg_pixels(&ci, path, img, d);
  if (st) ct_image_free(img);
  jpeg_destroy_decompress(&ci);
  fclose(f);
  return st;
}

/* ---- PNG (simplified API: expands palette/gray, strips alpha and 16-bit) ---- */

static ct_status load_png(const char *path, ct_image *img, ct_diag *d) {
  png_image pi;
  memset(&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&pi, path))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: corrupt PNG: %s", path, pi.message);
  pi.format = PNG_FORMAT_RGB;
  int64_t h = pi.height, w = pi.width;
  if (h * w > CT_IMAGE_MAX_PIXELS) {
    png_image_free(&pi);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: PNG too large (%lldx%lld)", path, (long long)w, (long long)h);
  }
  img->rgb = malloc((size_t)PNG_IMAGE_SIZE(pi));
  if (!img->rgb) {
    png_image_free(&pi);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory for %lldx%lld pixels", path, (long long)w, (long long)h);
  }
  png_color background = {0, 0, 0};
  if (!png_image_finish_read(&pi, &background, img->rgb, 0, NULL)) {
    ct_image_free(img);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: corrupt PNG: %s", path, pi.message);
  }
  img->h = h;
  img->w = w;
  return CT_OK;
}

ct_status ct_image_load(const char *path, ct_image *img, ct_diag *d) {
  memset(img, 0, sizeof *img);
  unsigned char m[8];
  if (!read_magic(path, m, sizeof m)) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot read image", path);
  if (is_jpeg(m)) return load_jpeg(path, img, d);
  if (is_png(m)) return load_png(path, img, d);
  return ct_diag_set(d, CT_ERR_INPUT, "%s: not a JPEG or PNG image", path);
}

/* ---- preprocessing attributes ---- */

static ct_status read_format(const ct_op *op, int64_t c, ct_image_prep *p, ct_diag *d) {
  const char *name = op->out[0]->name;
  const char *fmt = ct_attr_has_input_pixel_format(op) ? ct_attr_input_pixel_format(op) : c == 1 ? "gray" : "rgb";
  static const struct { const char *s; ct_pixel_format f; int c; } fmts[] = {
      {"rgb", CT_PIX_RGB, 3}, {"bgr", CT_PIX_BGR, 3}, {"gray", CT_PIX_GRAY, 1}};
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    if (strcmp(fmt, fmts[i].s) != 0) continue;
    if (c != fmts[i].c)
      return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": pixel_format \"%s\" needs %d channels, the input has %lld",
                         name, fmt, fmts[i].c, (long long)c);
    p->format = fmts[i].f;
    return CT_OK;
  }
  return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": attribute pixel_format: unknown format \"%s\" (rgb, bgr, gray)", name, fmt);
}

/* Reads a per-channel attribute (1 or c values; get is its accessor, attr its name). */
static ct_status read_per_channel(const ct_op *op, const char *attr, const double *(*get)(const ct_op *, int *),
                                  int64_t c, int *n, double *out, ct_diag *d) {
  int k = 0;
  const double *v = get(op, &k);
  if (!v) return (*n = 0), CT_OK;
  if (k != 1 && k != c)
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": attribute %s has %d values, expected 1 or %lld",
                       op->out[0]->name, attr, k, (long long)c);
  for (int i = 0; i < k; i++) out[i] = v[i];
  *n = k;
  return CT_OK;
}

ct_status ct_image_prep_from_op(const ct_op *op, ct_image_prep *p, ct_diag *d) {
  memset(p, 0, sizeof *p);
  const ct_value *v = op->out[0];
  if (v->ndim != 4 || v->dtype != CT_F32 || v->shape[0] != 1)
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": an image needs a 1xCxHxW f32 input", v->name);
  int64_t c = v->shape[1];
  ct_status st = read_format(op, c, p, d);
  if (st) return st;
  int n = 0;
  const int64_t *dims = ct_attr_input_resize_dims(op, &n);
  if (dims && (n != 2 || dims[0] <= 0 || dims[1] <= 0 || dims[0] > 65536 || dims[1] > 65536))
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": attribute resize_dims must be 2 positive sizes", v->name);
  p->resize_h = dims ? dims[0] : 0;
  p->resize_w = dims ? dims[1] : 0;
  p->keep_aspect_ratio = ct_attr_input_keep_aspect_ratio(op) != 0;
  const char *pad = ct_attr_input_pad_type(op);
  int kind = !pad[0] ? CT_PAD_NONE : !strcmp(pad, "normal") ? CT_PAD_NORMAL : !strcmp(pad, "center") ? CT_PAD_CENTER : -1;
  p->pad = kind < 0 ? CT_PAD_NONE : (ct_pad_type)kind;
  p->pad_value = ct_attr_input_pad_value(op);
  if (kind < 0 || !(p->pad_value >= 0 && p->pad_value <= 255))
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": attribute pad_type \"%s\" / pad_value %g: expected normal or center and 0..255",
                       v->name, pad, p->pad_value);
  if (p->pad != CT_PAD_NONE) p->keep_aspect_ratio = 1;
  st = read_per_channel(op, "mean", ct_attr_input_mean, c, &p->n_mean, p->mean, d);
  if (st == CT_OK) st = read_per_channel(op, "scale", ct_attr_input_scale, c, &p->n_scale, p->scale, d);
  return st;
}

/* ---- preprocessing ---- */

/* Bilinear taps along one axis: src = (dst + 0.5)·ratio − 0.5 clamped to [0, in−1]. */
typedef struct tap {
  int64_t i0, i1; /* i0 < 0: outside the resized image (letterbox padding) */
  float w1;       /* weight of i1; i0 gets 1 − w1 */
} tap;

/* Taps of output positions k + offset of a resize from `in` to `resized` samples; positions
 * outside [0, resized) get i0 = −1 (padding). */
static void make_taps(tap *t, int64_t n, int64_t offset, int64_t in, int64_t resized) {
  double ratio = (double)in / (double)resized;
  for (int64_t k = 0; k < n; k++) {
    if (k + offset < 0 || k + offset >= resized) {
      t[k] = (tap){-1, -1, 0};
      continue;
    }
    double x = ((double)(k + offset) + 0.5) * ratio - 0.5;
    if (x < 0) x = 0;
    if (x > (double)(in - 1)) x = (double)(in - 1);
    int64_t i0 = (int64_t)floor(x);
    t[k].i0 = i0;
    t[k].i1 = i0 + 1 < in ? i0 + 1 : i0;
    t[k].w1 = (float)(x - (double)i0);
  }
}

/* Placement of the resized image per ct_image_preprocess steps 1–2: the canvas is
 * ch×cw, the resized image rh×rw sits at (oy, ox) on it. */
typedef struct placement {
  int64_t ch, cw, rh, rw, oy, ox;
} placement;

static placement place(const ct_image *img, const ct_image_prep *p, int64_t h, int64_t w) {
  int64_t th = p->resize_h ? p->resize_h : h, tw = p->resize_w ? p->resize_w : w;
  placement q = {th, tw, th, tw, 0, 0};
  if (!p->keep_aspect_ratio) return q;
  double sh = (double)th / (double)img->h, sw = (double)tw / (double)img->w;
  if (p->pad != CT_PAD_NONE) { /* letterbox: fit inside, sizes rounded down (YOLOX, cv2) */
    double s = fmin(sh, sw);
    q.rh = (int64_t)fmax(1.0, floor((double)img->h * s + 1e-9));
    q.rw = (int64_t)fmax(1.0, floor((double)img->w * s + 1e-9));
    if (q.rh > th) q.rh = th;
    if (q.rw > tw) q.rw = tw;
    if (p->pad == CT_PAD_CENTER) q.oy = (th - q.rh) / 2, q.ox = (tw - q.rw) / 2;
    return q;
  }
  double s = fmax(sh, sw);
  q.rh = (int64_t)floor((double)img->h * s + 0.5);
  q.rw = (int64_t)floor((double)img->w * s + 0.5);
  if (q.rh < th) q.rh = th;
  if (q.rw < tw) q.rw = tw;
  q.ch = q.rh, q.cw = q.rw;
  return q;
}

/* Samples channel `src_c` (0..2 of RGB, or 3 = gray) at the taps. */
static float sample(const ct_image *img, const tap *ty, const tap *tx, int src_c) {
  static const float gray_w[3] = {0.299f, 0.587f, 0.114f};
  float acc = 0;
  for (int c = 0; c < 3; c++) {
    if (src_c != 3 && c != src_c) continue;
    const uint8_t *r0 = img->rgb + (size_t)(ty->i0 * img->w) * 3 + (size_t)c;
    const uint8_t *r1 = img->rgb + (size_t)(ty->i1 * img->w) * 3 + (size_t)c;
    float top = (float)r0[tx->i0 * 3] * (1 - tx->w1) + (float)r0[tx->i1 * 3] * tx->w1;
    float bot = (float)r1[tx->i0 * 3] * (1 - tx->w1) + (float)r1[tx->i1 * 3] * tx->w1;
    float v = top * (1 - ty->w1) + bot * ty->w1;
    acc += src_c == 3 ? gray_w[c] * v : v;
  }
  return acc;
}

static void fill_channels(const ct_image *img, const ct_image_prep *p, int64_t c, int64_t h, int64_t w,
                          const tap *ty, const tap *tx, float *out) {
  static const int order[3][3] = {{0, 1, 2}, {2, 1, 0}, {3, 3, 3}};
  for (int64_t ch = 0; ch < c; ch++) {
    int src_c = order[p->format][ch];
    double mean = p->n_mean ? p->mean[p->n_mean == 1 ? 0 : ch] : 0.0;
    double scale = p->n_scale ? p->scale[p->n_scale == 1 ? 0 : ch] : 1.0;
    float *o = out + ch * h * w;
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++) {
        double px = ty[y].i0 < 0 || tx[x].i0 < 0 ? p->pad_value : (double)sample(img, &ty[y], &tx[x], src_c);
        o[y * w + x] = (float)((px - mean) * scale);
      }
  }
}

ct_status ct_image_preprocess(const ct_image *img, const ct_image_prep *p, int64_t c, int64_t h,
                              int64_t w, const char *name, ct_tensor **out, ct_diag *d) {
  *out = NULL;
  placement q = place(img, p, h, w);
  if (q.ch < h || q.cw < w)
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": image resized to %lldx%lld is smaller than the input %lldx%lld",
                       name, (long long)q.ch, (long long)q.cw, (long long)h, (long long)w);
  int64_t shape[4] = {1, c, h, w};
  ct_tensor *t = ct_tensor_new(CT_F32, 4, shape, name);
  tap *ty = malloc((size_t)h * sizeof *ty), *tx = malloc((size_t)w * sizeof *tx);
  if (!t || !ty || !tx) {
    ct_tensor_free(t);
    free(ty);
    free(tx);
    return ct_diag_set(d, CT_ERR_LIMIT, "input \"%s\": out of memory", name);
  }
  make_taps(ty, h, (q.ch - h) / 2 - q.oy, img->h, q.rh);
  make_taps(tx, w, (q.cw - w) / 2 - q.ox, img->w, q.rw);
  fill_channels(img, p, c, h, w, ty, tx, t->data);
  free(ty);
  free(tx);
  *out = t;
  return CT_OK;
}
