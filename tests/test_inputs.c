/* test_inputs.c: io/ — image decoding and preprocessing (values derived by hand from the
 * bilinear half-pixel formula; mean/scale, keep-aspect crop, letterbox, gray) and the input
 * files of `ctpu infer` (HDF5, .pb, images; missing datasets, wrong counts, bad images). */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "ir/ir.h"
#include "onnx/onnx.pb-c.h"
#include "io/image.h"
#include "io/inputs.h"
#include "reference/interp.h"
#include "ops/kernel.h"
#include "ops/shape.h"
#include "tests/testutil.h"

/* Writes an RGB PNG of h×w pixels. */
static void write_png(const char *path, int h, int w, const uint8_t *rgb) {
  png_image pi;
  memset(&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  pi.width = (png_uint_32)w;
  pi.height = (png_uint_32)h;
  pi.format = PNG_FORMAT_RGB;
  ck_assert(png_image_write_to_file(&pi, path, 0, rgb, 0, NULL));
}

/* 2×2 image: R = [[0,100],[200,40]], G = 50 everywhere, B = [[10,20],[30,40]]. */
static const uint8_t img2x2[12] = {0, 50, 10, 100, 50, 20, 200, 50, 30, 40, 50, 40};

static ct_op *image_input(ct_graph *g, int64_t c, int64_t h, int64_t w) {
  int64_t s[4] = {1, c, h, w};
  ct_value *x = ct_test_add_input(g, "img", CT_F32, 4, s);
  return x->def;
}

START_TEST(test_image_bilinear_half_pixel_upscale) {
  const char *path = ct_test_tmp_path("a.png");
  write_png(path, 2, 2, img2x2);
  ct_image img;
  ct_diag d;
  ck_assert_int_eq(ct_image_load(path, &img, &d), CT_OK);
  ck_assert_int_eq(img.h, 2);
  ck_assert_int_eq(img.w, 2);
  ct_graph *g = ct_graph_new("m", "top");
  ct_op *op = image_input(g, 3, 4, 4);
  ct_image_prep p;
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_OK);
  ct_tensor *t = NULL;
  ck_assert_int_eq(ct_image_preprocess(&img, &p, 3, 4, 4, "img", &t, &d), CT_OK);
  const float *r = t->data, *gr = r + 16, *b = r + 32;
  /* taps for 2 → 4: dst 0 → 0, 1 → 0.25, 2 → 0.75, 3 → 1 (clamped) */
  ck_assert_float_eq_tol(r[0], 0.0f, 1e-4f);
  ck_assert_float_eq_tol(r[1 * 4 + 1], 58.75f, 1e-4f);  /* (0·.75+100·.25)·.75 + (200·.75+40·.25)·.25 */
  ck_assert_float_eq_tol(r[2 * 4 + 1], 126.25f, 1e-4f); /* 25·.25 + 160·.75 */
  ck_assert_float_eq_tol(r[15], 40.0f, 1e-4f);
  ck_assert_float_eq_tol(gr[6], 50.0f, 1e-4f);
  ck_assert_float_eq_tol(b[0 * 4 + 2], 17.5f, 1e-4f); /* 10·.25 + 20·.75 */
  ct_tensor_free(t);
  ct_image_free(&img);
  ct_graph_free(g);
}
END_TEST

/* Writes a 2×4 PNG named name in the test folder, pixel (y, x) R = 10x + y, G = 100,
 * B = 200 − x; returns its path. */
static const char *ramp_png(const char *name) {
  uint8_t rgb[2 * 4 * 3];
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 4; x++) {
      uint8_t *px = rgb + (y * 4 + x) * 3;
      px[0] = (uint8_t)(10 * x + y), px[1] = 100, px[2] = (uint8_t)(200 - x);
    }
  const char *path = ct_test_tmp_path(name);
  write_png(path, 2, 4, rgb);
  return path;
}

START_TEST(test_image_bgr_mean_scale_and_keep_aspect_crop) {
  const char *path = ramp_png("b.png");
  ct_graph *g = ct_graph_new("m", "top");
  ct_op *op = image_input(g, 3, 2, 2);
  double mean[3] = {1, 2, 3}, scale[3] = {0.5, 0.25, 2};
  int64_t dims[2] = {2, 2};
  ck_assert(ct_op_set_string(g, op, "pixel_format", "bgr"));
  ck_assert(ct_op_set_ints(g, op, "resize_dims", 2, dims));
  ck_assert(ct_op_set_int(g, op, "keep_aspect_ratio", 1));
  ck_assert(ct_op_set_floats(g, op, "mean", 3, mean));
  ck_assert(ct_op_set_floats(g, op, "scale", 3, scale));
  ct_image img;
  ct_image_prep p;
  ct_diag d;
  ck_assert_int_eq(ct_image_load(path, &img, &d), CT_OK);
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_OK);
  ct_tensor *t = NULL;
  ck_assert_int_eq(ct_image_preprocess(&img, &p, 3, 2, 2, "img", &t, &d), CT_OK);
  /* scale max(2/2, 2/4) = 1: no resampling; center crop keeps columns 1..2 */
  const float *o = t->data;
  ck_assert_float_eq_tol(o[0], (199.0f - 1) * 0.5f, 1e-4f);            /* B at (0,1) */
  ck_assert_float_eq_tol(o[4 + 3], (100.0f - 2) * 0.25f, 1e-4f);       /* G at (1,2) */
  ck_assert_float_eq_tol(o[8 + 2], (10.0f * 1 + 1 - 3) * 2.0f, 1e-4f); /* R at (1,1) */
  ct_tensor_free(t);
  /* without keep_aspect_ratio a 1×1 resize is smaller than the 2×2 input */
  dims[0] = dims[1] = 1;
  ck_assert(ct_op_set_ints(g, op, "resize_dims", 2, dims));
  ck_assert(ct_op_set_int(g, op, "keep_aspect_ratio", 0));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_OK);
  ck_assert_int_eq(ct_image_preprocess(&img, &p, 3, 2, 2, "img", &t, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "smaller than the input 2x2"));
  ct_image_free(&img);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_image_letterbox) {
  /* the ramp image into a 4×4 input: fit scale min(4/2, 4/4) = 1, no resampling; normal
   * puts it at the top left, center at row 1 */
  const char *path = ramp_png("lb.png");
  ct_graph *g = ct_graph_new("m", "top");
  ct_op *op = image_input(g, 3, 4, 4);
  ck_assert(ct_op_set_string(g, op, "pad_type", "normal"));
  ck_assert(ct_op_set_float(g, op, "pad_value", 114));
  ct_image img;
  ct_image_prep p;
  ct_diag d;
  ck_assert_int_eq(ct_image_load(path, &img, &d), CT_OK);
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_OK);
  ck_assert_int_eq(p.keep_aspect_ratio, 1); /* implied by the pad type */
  ct_tensor *t = NULL;
  ck_assert_int_eq(ct_image_preprocess(&img, &p, 3, 4, 4, "img", &t, &d), CT_OK);
  const float *o = t->data; /* R plane */
  ck_assert_float_eq_tol(o[0 * 4 + 3], 30.0f, 1e-4f);  /* (0,3): image */
  ck_assert_float_eq_tol(o[1 * 4 + 1], 11.0f, 1e-4f);  /* (1,1): image */
  ck_assert_float_eq_tol(o[2 * 4 + 0], 114.0f, 1e-4f); /* rows 2, 3: padding */
  ck_assert_float_eq_tol(o[16 + 3 * 4 + 3], 114.0f, 1e-4f);
  ct_tensor_free(t);
  ck_assert(ct_op_set_string(g, op, "pad_type", "center"));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_OK);
  ck_assert_int_eq(ct_image_preprocess(&img, &p, 3, 4, 4, "img", &t, &d), CT_OK);
  o = t->data;
  ck_assert_float_eq_tol(o[0 * 4 + 2], 114.0f, 1e-4f); /* row 0 padding */
  ck_assert_float_eq_tol(o[1 * 4 + 2], 20.0f, 1e-4f);  /* image row 0 at row 1 */
  ck_assert_float_eq_tol(o[2 * 4 + 2], 21.0f, 1e-4f);
  ck_assert_float_eq_tol(o[3 * 4 + 2], 114.0f, 1e-4f);
  ct_tensor_free(t);
  /* a 1×2 image into 4×4: scale 2, 2×4 resized (bilinear), rows 2..3 padding */
  ck_assert(ct_op_set_string(g, op, "pad_type", "normal"));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_OK);
  ct_image small = {.h = 1, .w = 2, .rgb = img.rgb};
  ck_assert_int_eq(ct_image_preprocess(&small, &p, 3, 4, 4, "img", &t, &d), CT_OK);
  o = t->data; /* R of the 1×2 image: 0, 10; half-pixel taps at x = −0.25 (clamped), 0.25, 0.75, 1.25 */
  ck_assert_float_eq_tol(o[0], 0.0f, 1e-4f);
  ck_assert_float_eq_tol(o[1], 2.5f, 1e-4f);
  ck_assert_float_eq_tol(o[4 + 2], 7.5f, 1e-4f);
  ck_assert_float_eq_tol(o[8 + 1], 114.0f, 1e-4f);
  ct_tensor_free(t);
  /* bad attributes */
  ck_assert(ct_op_set_string(g, op, "pad_type", "left"));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "pad_type"));
  ck_assert(ct_op_set_string(g, op, "pad_type", "normal"));
  ck_assert(ct_op_set_float(g, op, "pad_value", 300));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_ERR_INPUT);
  ct_image_free(&img);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_image_gray_and_bad_attributes) {
  const char *path = ct_test_tmp_path("c.png");
  uint8_t rgb[3] = {90, 90, 90};
  write_png(path, 1, 1, rgb);
  ct_graph *g = ct_graph_new("m", "top");
  ct_op *op = image_input(g, 1, 1, 1);
  ct_image img;
  ct_image_prep p;
  ct_diag d;
  ck_assert_int_eq(ct_image_load(path, &img, &d), CT_OK);
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_OK);
  ck_assert_int_eq(p.format, CT_PIX_GRAY);
  ct_tensor *t = NULL;
  ck_assert_int_eq(ct_image_preprocess(&img, &p, 1, 1, 1, "img", &t, &d), CT_OK);
  ck_assert_float_eq_tol(((float *)t->data)[0], 90.0f, 1e-3f);
  ct_tensor_free(t);
  ck_assert(ct_op_set_string(g, op, "pixel_format", "rgb"));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "input \"img\": pixel_format \"rgb\" needs 3 channels, the input has 1");
  ck_assert(ct_op_set_string(g, op, "pixel_format", "cmyk"));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_ERR_INPUT);
  double mean[2] = {1, 2};
  ck_assert(ct_op_set_string(g, op, "pixel_format", "gray"));
  ck_assert(ct_op_set_floats(g, op, "mean", 2, mean));
  ck_assert_int_eq(ct_image_prep_from_op(op, &p, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "input \"img\": attribute mean has 2 values, expected 1 or 1");
  ct_image_free(&img);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_image_corrupt_files_are_errors_naming_the_file) {
  const char *jpg = ct_test_tmp_path("bad.jpg"), *png = ct_test_tmp_path("bad.png");
  const char *txt = ct_test_tmp_path("bad.txt");
  static const uint8_t jbytes[] = {0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xFF, 0x12, 1, 2};
  static const uint8_t pbytes[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 9, 9};
  ck_assert(ct_test_write_file(jpg, jbytes, sizeof jbytes));
  ck_assert(ct_test_write_file(png, pbytes, sizeof pbytes));
  ck_assert(ct_test_write_file(txt, "hello world\n", 12));
  ct_image img;
  ct_diag d;
  ck_assert_int_eq(ct_image_load(jpg, &img, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, jpg));
  ck_assert_ptr_null(img.rgb);
  ck_assert_int_eq(ct_image_load(png, &img, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, png));
  ck_assert_int_eq(ct_image_load(txt, &img, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "not a JPEG or PNG image"));
  ck_assert_int_eq(ct_image_load(ct_test_tmp_path("nope.png"), &img, &d), CT_ERR_INPUT);
  ck_assert(!ct_image_is_image_file(txt));
  ck_assert(ct_image_is_image_file(jpg));
}
END_TEST

START_TEST(test_image_real_jpeg_decodes) {
  if (!ct_test_shared()) return; /* ../shared absent: the other tests still run */
  ct_image img;
  ct_diag d;
  ck_assert_int_eq(ct_image_load(ct_test_shared_path("images/misc/skimage_chelsea.jpg"), &img, &d), CT_OK);
  ck_assert_int_gt(img.h, 100);
  ck_assert_int_gt(img.w, 100);
  ct_image_free(&img);
}
END_TEST

/* Writes a float TensorProto named name with dims and values 0, 1, 2, ... */
static void write_pb(const char *path, const char *name, int ndim, const int64_t *dims) {
  Onnx__TensorProto tp;
  onnx__tensor_proto__init(&tp);
  tp.name = (char *)name;
  tp.has_data_type = 1;
  tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  tp.n_dims = (size_t)ndim;
  tp.dims = (int64_t *)dims;
  float vals[64];
  int64_t n = ct_shape_numel(ndim, dims);
  ck_assert_int_le(n, 64);
  for (int64_t i = 0; i < n; i++) vals[i] = (float)i;
  tp.n_float_data = (size_t)n;
  tp.float_data = vals;
  size_t len = onnx__tensor_proto__get_packed_size(&tp);
  uint8_t *buf = malloc(len);
  onnx__tensor_proto__pack(&tp, buf);
  ck_assert(ct_test_write_file(path, buf, len));
  free(buf);
}

/* Graph with inputs a (f32 2x3) and b (f32 1x3x2x2). */
static ct_graph *two_input_graph(void) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t sa[2] = {2, 3}, sb[4] = {1, 3, 2, 2};
  ct_value *outs[2] = {ct_test_add_input(g, "a", CT_F32, 2, sa), ct_test_add_input(g, "b", CT_F32, 4, sb)};
  ck_assert(ct_graph_set_outputs(g, 2, outs));
  return g;
}

START_TEST(test_inputs_hdf5_pb_and_image) {
  ct_graph *g = two_input_graph();
  int64_t sa[2] = {2, 3}, sb[4] = {1, 3, 2, 2};
  const char *h5 = ct_test_tmp_path("ab.h5"), *pb = ct_test_tmp_path("b.pb"), *png = ct_test_tmp_path("in.png");
  ct_tensor *ts[2] = {ct_test_f32_ramp("a", 2, sa, 1), ct_test_f32_ramp("b", 4, sb, 100)};
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(h5, ts, 2, &d), CT_OK);
  write_pb(pb, "whatever", 4, sb);
  write_png(png, 2, 2, img2x2);
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  /* one HDF5 file supplies both inputs */
  const char *f1[1] = {h5};
  ck_assert_int_eq(ct_inputs_load(g, f1, 1, &in, &d), CT_OK);
  ck_assert_int_eq(in.n, 2);
  ck_assert_str_eq(in.items[1]->name, "b");
  ck_assert_float_eq(((float *)in.items[1]->data)[11], 111.0f);
  ct_tensor_list_free(&in);
  /* positional: a .pb for a? no: a is 2x3 — the .pb (1x3x2x2) for a is a mismatch */
  const char *f2[2] = {pb, h5};
  ck_assert_int_eq(ct_inputs_load(g, f2, 2, &in, &d), CT_ERR_INPUT);
  char want[600];
  snprintf(want, sizeof want, "%s: input \"a\": expected f32 2x3, file has f32 1x3x2x2", pb);
  ck_assert_str_eq(d.msg, want);
  ck_assert_int_eq(in.n, 0);
  /* an HDF5 file fills what is left; the .pb then the image take the next free input */
  ct_tensor_free(ts[1]);
  ts[1] = ct_test_f32_ramp("b", 4, sb, 0);
  const char *f3[2] = {pb, png};
  ct_graph *g2 = ct_graph_new("m2", "top");
  ct_value *bb[2] = {ct_test_add_input(g2, "b", CT_F32, 4, sb), ct_test_add_input(g2, "c", CT_F32, 4, sb)};
  ck_assert(ct_graph_set_outputs(g2, 2, bb));
  ck_assert_int_eq(ct_inputs_load(g2, f3, 2, &in, &d), CT_ERR_INPUT); /* no preprocessing: refused */
  ck_assert_msg(strstr(d.msg, "no image preprocessing"), "%s", d.msg);
  ck_assert(ct_attr_set_input_keep_aspect_ratio(g2, bb[1]->def, 0));
  ck_assert_int_eq(ct_inputs_load(g2, f3, 2, &in, &d), CT_OK);
  ck_assert_str_eq(in.items[0]->name, "b"); /* renamed after the input */
  ck_assert_float_eq(((float *)in.items[0]->data)[7], 7.0f);
  ck_assert_str_eq(in.items[1]->name, "c");
  ck_assert_float_eq_tol(((float *)in.items[1]->data)[0], 0.0f, 1e-4f);   /* R (0,0) */
  ck_assert_float_eq_tol(((float *)in.items[1]->data)[11], 40.0f, 1e-4f); /* B (1,1) */
  ct_tensor_list_free(&in);
  ct_tensor_free(ts[0]);
  ct_tensor_free(ts[1]);
  ct_graph_free(g);
  ct_graph_free(g2);
}
END_TEST

START_TEST(test_inputs_errors_missing_dataset_bad_count_bad_image) {
  ct_graph *g = two_input_graph();
  int64_t sa[2] = {2, 3}, sx[2] = {3, 2};
  const char *h5 = ct_test_tmp_path("only_a.h5"), *bad = ct_test_tmp_path("bad_a.h5");
  const char *img = ct_test_tmp_path("broken.jpg");
  ct_tensor *ta = ct_test_f32_ramp("a", 2, sa, 1), *tx = ct_test_f32_ramp("a", 2, sx, 1);
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(h5, &ta, 1, &d), CT_OK);
  ck_assert_int_eq(ct_h5_write(bad, &tx, 1, &d), CT_OK);
  static const uint8_t jbytes[] = {0xFF, 0xD8, 0xFF, 0xE0, 0, 2, 0xFF, 0xD9};
  ck_assert(ct_test_write_file(img, jbytes, sizeof jbytes));
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  char want[600];
  const char *f1[1] = {h5};
  ck_assert_int_eq(ct_inputs_load(g, f1, 1, &in, &d), CT_ERR_INPUT);
  snprintf(want, sizeof want, "%s: no dataset \"b\" for input \"b\"", h5);
  ck_assert_str_eq(d.msg, want);
  const char *f2[1] = {bad};
  ck_assert_int_eq(ct_inputs_load(g, f2, 1, &in, &d), CT_ERR_INPUT);
  snprintf(want, sizeof want, "%s: input \"a\": expected f32 2x3, file has f32 3x2", bad);
  ck_assert_str_eq(d.msg, want);
  ck_assert_int_eq(ct_inputs_load(g, NULL, 0, &in, &d), CT_ERR_USAGE);
  ck_assert_str_eq(d.msg, "model has 2 inputs (\"a\", \"b\"), 0 given");
  const char *f3[3] = {h5, h5, h5};
  ck_assert_int_eq(ct_inputs_load(g, f3, 3, &in, &d), CT_ERR_INPUT); /* b missing from h5 */
  /* an image for a 2-D input: the preprocessing cannot apply */
  const char *f4[1] = {img};
  ck_assert_int_eq(ct_inputs_load(g, f4, 1, &in, &d), CT_ERR_INPUT);
  snprintf(want, sizeof want, "%s: input \"a\": an image needs a 1xCxHxW f32 input", img);
  ck_assert_str_eq(d.msg, want);
  /* a corrupt image for an image input */
  ct_graph *g2 = ct_graph_new("m2", "top");
  int64_t sb[4] = {1, 3, 2, 2};
  ct_value *b = ct_test_add_input(g2, "b", CT_F32, 4, sb);
  ck_assert(ct_graph_set_outputs(g2, 1, &b));
  ck_assert_int_eq(ct_inputs_load(g2, f4, 1, &in, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, img) && strstr(d.msg, "corrupt JPEG"), "%s", d.msg);
  ck_assert_int_eq(in.n, 0);
  ct_graph_free(g2);
  ct_tensor_free(ta);
  ct_tensor_free(tx);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_inputs_too_many_files) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t sa[2] = {2, 3};
  ct_value *a = ct_test_add_input(g, "a", CT_F32, 2, sa);
  ck_assert(ct_graph_set_outputs(g, 1, &a));
  const char *pb = ct_test_tmp_path("a.pb");
  write_pb(pb, "a", 2, sa);
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  ct_diag d;
  const char *f[2] = {pb, pb};
  ck_assert_int_eq(ct_inputs_load(g, f, 2, &in, &d), CT_ERR_USAGE);
  ck_assert_str_eq(d.msg, "model has 1 input (\"a\"), 2 given");
  ck_assert_int_eq(in.n, 0);
  ct_graph_free(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("inputs");
  TCase *ti = tcase_create("image");
  tcase_add_test(ti, test_image_bilinear_half_pixel_upscale);
  tcase_add_test(ti, test_image_bgr_mean_scale_and_keep_aspect_crop);
  tcase_add_test(ti, test_image_letterbox);
  tcase_add_test(ti, test_image_gray_and_bad_attributes);
  tcase_add_test(ti, test_image_corrupt_files_are_errors_naming_the_file);
  tcase_add_test(ti, test_image_real_jpeg_decodes);
  suite_add_tcase(s, ti);
  TCase *tf = tcase_create("inputs");
  tcase_add_test(tf, test_inputs_hdf5_pb_and_image);
  tcase_add_test(tf, test_inputs_errors_missing_dataset_bad_count_bad_image);
  tcase_add_test(tf, test_inputs_too_many_files);
  suite_add_tcase(s, tf);
  return ct_test_run_suite(s);
}
