/* test_kern_nn_ops.c: shape functions + float reference kernels of the normalizations,
 * softmax family, Resize and DepthToSpace/SpaceToDepth. Expected values are worked by hand
 * from the ONNX spec formulas, computed by naive loops written here, or (cubic Resize) taken
 * from the ONNX backend test data (numpy reference implementation of the ONNX project). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kern_nn_harness.h"
#include "tests/testutil.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

START_TEST(test_batchnorm_and_instancenorm) {
  uint32_t seed = 3;
  ct_tensor *x = knh_rand(4, SH(2, 3, 4, 5), &seed), *p[4];
  for (int i = 0; i < 4; i++) p[i] = knh_rand(1, SH(3), &seed);
  float *var = p[3]->data;
  for (int i = 0; i < 3; i++) var[i] = fabsf(var[i]) + 0.1f;
  ct_tensor *ins[5] = {x, p[0], p[1], p[2], p[3]};
  knh *h = knh_new(CT_OP_BATCHNORM, 5, ins, 1);
  knh_float(h, "epsilon", 1e-2);
  ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
  float want[120];
  const float *xv = x->data, *s = p[0]->data, *b = p[1]->data, *m = p[2]->data;
  for (int i = 0; i < 120; i++) {
    int c = (i / 20) % 3;
    want[i] = (float)((xv[i] - m[c]) / sqrt(var[c] + 1e-2) * s[c] + b[c]);
  }
  knh_expect_close(h->out[0], want, 120, 1e-5, 1e-5);
  knh_free(h);
  /* training mode is reported as unsupported */
  h = knh_new(CT_OP_BATCHNORM, 5, ins, 1);
  knh_int(h, "training_mode", 1);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "unsupported"));
  knh_free(h);
  /* InstanceNorm: per (n, c) plane of 20 values, population variance */
  ct_tensor *ins2[3] = {x, p[0], p[1]};
  h = knh_new(CT_OP_INSTANCENORM, 3, ins2, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  for (int pl = 0; pl < 6; pl++) {
    double mu = 0, v = 0;
    for (int i = 0; i < 20; i++) mu += xv[pl * 20 + i] / 20.0;
    for (int i = 0; i < 20; i++) v += (xv[pl * 20 + i] - mu) * (xv[pl * 20 + i] - mu) / 20.0;
    for (int i = 0; i < 20; i++) want[pl * 20 + i] = (float)((xv[pl * 20 + i] - mu) / sqrt(v + 1e-5) * s[pl % 3] + b[pl % 3]);
  }
  knh_expect_close(h->out[0], want, 120, 1e-5, 1e-5);
  knh_free(h);
  ct_tensor_free(x);
  for (int i = 0; i < 4; i++) ct_tensor_free(p[i]);
}
END_TEST

START_TEST(test_layernorm_axes_and_stats) {
  uint32_t seed = 11;
  ct_tensor *x = knh_rand(4, SH(2, 3, 4, 5), &seed), *sc = knh_rand(2, SH(4, 5), &seed), *b = knh_rand(1, SH(5), &seed);
  ct_tensor *ins[3] = {x, sc, b};
  knh *h = knh_new(CT_OP_LAYERNORM, 3, ins, 3);
  knh_int(h, "axis", -2);
  ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
  ck_assert_int_eq(ct_op_get_int(h->op, "axis", 0), 2);
  knh_expect_shape(h->out[1], 4, SH(2, 3, 1, 1));
  const float *xv = x->data, *s = sc->data, *bv = b->data;
  float want[120], wm[6], wi[6];
  for (int r = 0; r < 6; r++) {
    double mu = 0, v = 0;
    for (int i = 0; i < 20; i++) mu += xv[r * 20 + i] / 20.0;
    for (int i = 0; i < 20; i++) v += (xv[r * 20 + i] - mu) * (xv[r * 20 + i] - mu) / 20.0;
    wm[r] = (float)mu, wi[r] = (float)(1 / sqrt(v + 1e-5));
    for (int i = 0; i < 20; i++) want[r * 20 + i] = (float)((xv[r * 20 + i] - mu) * wi[r] * s[i] + bv[i % 5]);
  }
  knh_expect_close(h->out[0], want, 120, 1e-5, 1e-5);
  knh_expect_close(h->out[1], wm, 6, 1e-6, 1e-5);
  knh_expect_close(h->out[2], wi, 6, 1e-5, 1e-5);
  knh_free(h);
  /* a scale that does not match the normalized dims is an error naming the node */
  ct_tensor *bad = knh_rand(1, SH(4), &seed);
  ins[1] = bad;
  h = knh_new(CT_OP_LAYERNORM, 2, ins, 1);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "node \"n0\""));
  knh_free(h);
  ct_tensor_free(x), ct_tensor_free(sc), ct_tensor_free(b), ct_tensor_free(bad);
}
END_TEST

START_TEST(test_mvn_and_lrn) {
  uint32_t seed = 17;
  ct_tensor *x = knh_rand(4, SH(3, 3, 3, 1), &seed);
  ct_tensor *ins[1] = {x};
  knh *h = knh_new(CT_OP_MVN, 1, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  /* default axes [0, 2, 3]: one group per channel c of 9 values x[n][c][h] */
  const float *xv = x->data;
  float want[27];
  for (int c = 0; c < 3; c++) {
    double mu = 0, v = 0;
    for (int n = 0; n < 3; n++)
      for (int k = 0; k < 3; k++) mu += xv[(n * 3 + c) * 3 + k] / 9.0;
    for (int n = 0; n < 3; n++)
      for (int k = 0; k < 3; k++) v += pow(xv[(n * 3 + c) * 3 + k] - mu, 2) / 9.0;
    for (int n = 0; n < 3; n++)
      for (int k = 0; k < 3; k++) want[(n * 3 + c) * 3 + k] = (float)((xv[(n * 3 + c) * 3 + k] - mu) / (sqrt(v) + 1e-9));
  }
  knh_expect_close(h->out[0], want, 27, 1e-5, 1e-5);
  knh_free(h);
  ct_tensor_free(x);
  /* LRN size 3, alpha 3, beta 1, bias 1 on channels [1, 2, 3]: 1/(1+5), 2/(1+14), 3/(1+13) */
  x = knh_vals(4, SH(1, 3, 1, 1), (const float[]){1, 2, 3});
  ins[0] = x;
  h = knh_new(CT_OP_LRN, 1, ins, 1);
  knh_int(h, "size", 3), knh_float(h, "alpha", 3), knh_float(h, "beta", 1), knh_float(h, "bias", 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){1.0f / 6, 2.0f / 15, 3.0f / 14}, 3, 1e-7, 1e-6);
  knh_free(h);
  ct_tensor_free(x);
}
END_TEST

START_TEST(test_softmax_family) {
  ct_tensor *x = knh_vals(2, SH(1, 3), (const float[]){1, 2, 3});
  ct_tensor *ins[1] = {x};
  double z = exp(1) + exp(2) + exp(3);
  knh *h = knh_new(CT_OP_SOFTMAX, 1, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){(float)(exp(1) / z), (float)(exp(2) / z), (float)(exp(3) / z)}, 3, 1e-7, 1e-6);
  knh_free(h);
  h = knh_new(CT_OP_LOGSOFTMAX, 1, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){(float)(1 - log(z)), (float)(2 - log(z)), (float)(3 - log(z))}, 3, 1e-6, 1e-6);
  knh_free(h);
  ct_tensor_free(x);
  /* large numbers stay finite; hardmax picks the first maximum */
  x = knh_vals(2, SH(1, 4), (const float[]){1000, 1001, 1001, 999});
  ins[0] = x;
  h = knh_new(CT_OP_HARDMAX, 1, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){0, 1, 0, 0}, 4, 0, 0);
  knh_free(h);
  h = knh_new(CT_OP_SOFTMAX, 1, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  double z2 = exp(-1) + 2 + exp(-2);
  knh_expect_close(h->out[0], (const float[]){(float)(exp(-1) / z2), (float)(1 / z2), (float)(1 / z2), (float)(exp(-2) / z2)}, 4,
                   1e-7, 1e-6);
  knh_free(h);
  ct_tensor_free(x);
  /* (2,3,4) axis 1: over 3 values of stride 4; coerce_2d axis 1: over all 12 values per batch */
  uint32_t seed = 23;
  x = knh_rand(3, SH(2, 3, 4), &seed);
  ins[0] = x;
  const float *xv = x->data;
  for (int coerce = 0; coerce < 2; coerce++) {
    h = knh_new(CT_OP_SOFTMAX, 1, ins, 1);
    knh_int(h, "axis", 1);
    if (coerce) knh_int(h, "coerce_2d", 1);
    ck_assert_int_eq(knh_run(h), CT_OK);
    float want[24];
    for (int i = 0; i < 24; i++) {
      int n = i / 12, c = (i / 4) % 3, w = i % 4;
      double den = 0;
      for (int j = 0; j < (coerce ? 12 : 3); j++) den += exp(xv[coerce ? n * 12 + j : n * 12 + j * 4 + w]);
      want[i] = (float)(exp(xv[i]) / den);
      (void)c;
    }
    knh_expect_close(h->out[0], want, 24, 1e-7, 1e-5);
    knh_free(h);
  }
  h = knh_new(CT_OP_SOFTMAX, 1, ins, 1);
  knh_int(h, "axis", 3);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  knh_free(h);
  ct_tensor_free(x);
}
END_TEST

/* ONNX DepthToSpace spec example: x = 0..47 (1, 8, 2, 3), blocksize 2. */
START_TEST(test_depth_to_space_and_back) {
  float v[48];
  for (int i = 0; i < 48; i++) v[i] = (float)i;
  ct_tensor *x = knh_vals(4, SH(1, 8, 2, 3), v);
  ct_tensor *ins[1] = {x};
  static const float dcr[48] = {0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4, 16, 5, 17, 27, 39, 28, 40, 29, 41,
                                6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47};
  static const float crd[48] = {0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23,
                                24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47};
  for (int m = 0; m < 2; m++) {
    knh *h = knh_new(CT_OP_DEPTHTOSPACE, 1, ins, 1);
    knh_int(h, "blocksize", 2);
    knh_str(h, "mode", m ? "CRD" : "DCR");
    ck_assert_int_eq(knh_run(h), CT_OK);
    knh_expect_shape(h->out[0], 4, SH(1, 2, 4, 6));
    knh_expect_close(h->out[0], m ? crd : dcr, 48, 0, 0);
    if (!m) { /* SpaceToDepth inverts DCR */
      ct_tensor *back_in[1] = {h->out[0]};
      knh *b = knh_new(CT_OP_SPACETODEPTH, 1, back_in, 1);
      knh_int(b, "blocksize", 2);
      ck_assert_int_eq(knh_run(b), CT_OK);
      knh_expect_shape(b->out[0], 4, SH(1, 8, 2, 3));
      knh_expect_close(b->out[0], v, 48, 0, 0);
      knh_free(b);
    }
    knh_free(h);
  }
  knh *h = knh_new(CT_OP_DEPTHTOSPACE, 1, ins, 1);
  knh_int(h, "blocksize", 3);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  knh_free(h);
  ct_tensor_free(x);
}
END_TEST

/* Runs Resize on x with scales (4 floats) or sizes (4 ints) and string attributes. */
static knh *run_resize(ct_tensor *x, const float *scales, const int64_t *sizes, const float *roi, const char *mode,
                       const char *ctm, const char *nearest) {
  ct_tensor *sc = scales ? knh_vals(1, SH(4), scales) : NULL, *sz = NULL, *r = roi ? knh_vals(1, SH(8), roi) : NULL;
  if (sizes) {
    sz = ct_tensor_new(CT_I64, 1, SH(4), NULL);
    memcpy(sz->data, sizes, 4 * sizeof *sizes);
  }
  ct_tensor *ins[4] = {x, r, sc, sz};
  knh *h = knh_new(CT_OP_RESIZE, 4, ins, 1);
  knh_str(h, "mode", mode);
  if (ctm) knh_str(h, "coordinate_transformation_mode", ctm);
  if (nearest) knh_str(h, "nearest_mode", nearest);
  ct_tensor_free(sc), ct_tensor_free(sz), ct_tensor_free(r);
  return h;
}

START_TEST(test_resize_nearest_and_linear_hand) {
  ct_tensor *x = knh_vals(4, SH(1, 1, 2, 2), (const float[]){1, 2, 3, 4});
  knh *h = run_resize(x, (const float[]){1, 1, 2, 3}, NULL, NULL, "nearest", NULL, NULL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 4, 6));
  knh_expect_close(h->out[0], (const float[]){1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 24, 0, 0);
  knh_free(h);
  /* half_pixel 2 -> 4: source coords -0.25, 0.25, 0.75, 1.25 (clamped at the edges) */
  h = run_resize(x, (const float[]){1, 1, 2, 2}, NULL, NULL, "linear", NULL, NULL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4},
                   16, 1e-6, 0);
  knh_free(h);
  /* align_corners: coords x/3 */
  h = run_resize(x, (const float[]){1, 1, 2, 2}, NULL, NULL, "linear", "align_corners", NULL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  float t = 1.0f / 3, want[16];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) want[i * 4 + j] = 1 + 2 * (i * t) + j * t;
  knh_expect_close(h->out[0], want, 16, 1e-6, 0);
  knh_free(h);
  ct_tensor_free(x);
  /* downsample 2x4 (1..8) by 0.6: out 1x2; rows at 1/3, cols at 1/3 and 2 → 2.6667, 4.3333 */
  x = knh_vals(4, SH(1, 1, 2, 4), (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
  h = run_resize(x, (const float[]){1, 1, 0.6f, 0.6f}, NULL, NULL, "linear", NULL, NULL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 1, 2));
  knh_expect_close(h->out[0], (const float[]){8.0f / 3, 13.0f / 3}, 2, 1e-5, 0);
  knh_free(h);
  ct_tensor_free(x);
}
END_TEST

START_TEST(test_resize_nearest_modes_and_crop) {
  float v[16];
  for (int i = 0; i < 16; i++) v[i] = (float)(i + 1);
  ct_tensor *x = knh_vals(4, SH(1, 1, 4, 4), v);
  static const struct {
    const char *ctm, *nm;
    float row0[8];
  } cases[] = {
      {"align_corners", "floor", {1, 1, 1, 2, 2, 3, 3, 4}},       /* x*3/7 floored */
      {"asymmetric", "round_prefer_ceil", {1, 2, 2, 3, 3, 4, 4, 4}}, /* x/2, halves up */
      {"half_pixel", "ceil", {1, 2, 2, 3, 3, 4, 4, 4}},           /* (x+.5)/2-.5 ceiled */
      {"asymmetric", "round_prefer_floor", {1, 1, 2, 2, 3, 3, 4, 4}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    knh *h = run_resize(x, NULL, SH(1, 1, 8, 8), NULL, "nearest", cases[c].ctm, cases[c].nm);
    ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
    knh_expect_shape(h->out[0], 4, SH(1, 1, 8, 8));
    const float *y = h->out[0]->data;
    for (int j = 0; j < 8; j++) ck_assert_msg(y[j] == cases[c].row0[j], "case %zu col %d: %g", c, j, y[j]);
    knh_free(h);
  }
  /* tf_crop_and_resize, roi [0,0,.4,.6, 1,1,1.2,1.7], 3x3, extrapolation 10: rows at 1.2, 2.4, 3.6
   * (outside), cols at 1.8, 3.45 (outside), 5.1 (outside); x[r][c] = 4r + c + 1 is bilinear */
  knh *h = run_resize(x, NULL, SH(1, 1, 3, 3), (const float[]){0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}, "linear",
                      "tf_crop_and_resize", NULL);
  knh_float(h, "extrapolation_value", 10);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){7.6f, 10, 10, 12.4f, 10, 10, 10, 10, 10}, 9, 1e-5, 0);
  knh_free(h);
  /* pytorch_half_pixel 4x4 -> 3x1: W has one output so its coordinate is 0; H coordinates
   * (y + 0.5) / 0.75 - 0.5 = 1/6, 1.5, 17/6 over column 0 = 1, 5, 9, 13 */
  h = run_resize(x, NULL, SH(1, 1, 3, 1), NULL, "linear", "pytorch_half_pixel", NULL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){1 + 4.0f / 6, 7, 1 + 4 * 17.0f / 6}, 3, 1e-5, 0);
  knh_free(h);
  /* both scales and sizes given; antialias: errors naming the node */
  h = run_resize(x, (const float[]){1, 1, 2, 2}, SH(1, 1, 8, 8), NULL, "nearest", NULL, NULL);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  knh_free(h);
  h = run_resize(x, (const float[]){1, 1, 2, 2}, NULL, NULL, "linear", NULL, NULL);
  knh_int(h, "antialias", 1);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "unsupported"));
  knh_free(h);
  ct_tensor_free(x);
}
END_TEST

/* Cubic: first and last output rows' ends from the ONNX backend test data (numpy reference). */
START_TEST(test_resize_cubic_vs_onnx_reference) {
  float v[16];
  for (int i = 0; i < 16; i++) v[i] = (float)(i + 1);
  ct_tensor *x = knh_vals(4, SH(1, 1, 4, 4), v);
  static const struct {
    const char *ctm;
    double a;
    int excl;
    float s;
    int out;
    float first[3], last;
  } cases[] = {
      {"half_pixel", -0.75, 0, 2, 8, {0.47265625f, 0.76953125f, 1.2460938f}, 16.527344f},
      {"half_pixel", -0.5, 1, 2, 8, {0.5588235f, 0.81494206f, 1.3569825f}, 16.441177f},
      {"align_corners", -0.75, 0, 0.8f, 3, {1.0f, 2.3951917f, 3.790383f}, 14.951916f},
      {"asymmetric", -0.75, 0, 2, 8, {1.0f, 1.40625f, 2.0f}, 16.46875f},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    float s = cases[c].s;
    knh *h = run_resize(x, (const float[]){1, 1, s, s}, NULL, NULL, "cubic", cases[c].ctm, NULL);
    knh_float(h, "cubic_coeff_a", cases[c].a);
    knh_int(h, "exclude_outside", cases[c].excl);
    ck_assert_int_eq(knh_run(h), CT_OK);
    int n = cases[c].out;
    knh_expect_shape(h->out[0], 4, SH(1, 1, n, n));
    const float *y = h->out[0]->data;
    for (int j = 0; j < 3; j++) ck_assert_float_eq_tol(y[j], cases[c].first[j], 1e-4f);
    ck_assert_float_eq_tol(y[n * n - 1], cases[c].last, 1e-4f);
    knh_free(h);
  }
  ct_tensor_free(x);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kern_nn_ops");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_batchnorm_and_instancenorm);
  tcase_add_test(tc, test_layernorm_axes_and_stats);
  tcase_add_test(tc, test_mvn_and_lrn);
  tcase_add_test(tc, test_softmax_family);
  tcase_add_test(tc, test_depth_to_space_and_back);
  tcase_add_test(tc, test_resize_nearest_and_linear_hand);
  tcase_add_test(tc, test_resize_nearest_modes_and_crop);
  tcase_add_test(tc, test_resize_cubic_vs_onnx_reference);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
