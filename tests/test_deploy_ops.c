/* test_deploy_ops.c: patterns of real networks outside ../shared, on a model built here
 * (tests/onnx_build.c) — a grouped conv (RegNet, ResNeXt), a BatchNormalization after a
 * Concat (DenseNet: canonicalize's bn-to-conv), a ceil_mode MaxPool (GoogLeNet), a
 * ReduceMean over H and W (ShuffleNet, MnasNet); an explicit Pad, integer and float (Swin); a ViT's 16×16 patch embedding (a stride the
 * CONV fields cannot hold: space-to-depth MOVEs + a 1×1 CONV) and its class-token Gather — transformed, calibrated, lowered to INT8
 * and a bilinear Resize chain (YOLO / DeepLab upsampling: the RESIZE instruction, every coordinate mode, integer and
 * non-integer scales, up and down) —
 * and deployed with --compare-all on the default chip and on small-LMEM sweep chips (tiles):
 * every stored tensor bit-exact against the Tpu reference; the same models lowered to BF16,
 * F16 and F32 (float codegen; with the float activations of the function unit and a Div), and
 * a float op without codegen (exit 3, named). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

static float lcgf(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / (float)(1u << 24) * 2.0f - 1.0f; /* [-1, 1) */
}

static void init_rand(ob_model *b, const char *name, int ndim, const int64_t *dims, uint32_t *seed, float lo) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= dims[i];
  float *v = malloc(sizeof *v * (size_t)n);
  ck_assert_ptr_nonnull(v);
  for (int64_t i = 0; i < n; i++) v[i] = lo > 0 ? lo + (lcgf(seed) + 1) * 0.5f : lcgf(seed) * 0.5f;
  ob_init_f32(b, name, ndim, dims, v);
  free(v);
}

/* Writes the model with output "y" to path and a random input "x" of shape xs (values
 * amp · [-1, 1)) to input, then frees the builder. */
static void finish(ob_model *b, const char *path, const char *input, const int64_t xs[4], uint32_t *seed, float amp) {
  ob_output(b, "y");
  ck_assert(ob_write(b, path));
  Onnx__TensorProto *t = ob_tensor(b, "x", T_FLOAT, 4, xs);
  int64_t n = xs[0] * xs[1] * xs[2] * xs[3];
  float *v = malloc(sizeof *v * (size_t)n);
  ck_assert_ptr_nonnull(v);
  for (int64_t i = 0; i < n; i++) v[i] = amp * lcgf(seed);
  ob_raw(b, t, v, sizeof *v * (size_t)n);
  free(v);
  ck_assert(ob_write_tensor(t, input));
  ob_free(b);
}

/* x[1,8,16,16] → Conv(group 4, 16 out, 3×3 pad 1) → Relu → Concat(·, x) → BatchNormalization
 * → Relu → MaxPool(3×3, stride 2, ceil_mode) → ReduceMean(axes 2, 3, keepdims 0) → y[1,24]. */
static void write_model(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 12345;
  int64_t xs[4] = {1, 8, 16, 16}, ws[4] = {16, 2, 3, 3}, c16 = 16, c24 = 24;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  init_rand(&b, "w", 4, ws, &seed, 0), init_rand(&b, "wb", 1, &c16, &seed, 0);
  init_rand(&b, "gamma", 1, &c24, &seed, 0.5f), init_rand(&b, "beta", 1, &c24, &seed, 0);
  init_rand(&b, "mean", 1, &c24, &seed, 0), init_rand(&b, "var", 1, &c24, &seed, 0.5f);
  Onnx__NodeProto *n = ob_node(&b, "Conv", "gconv", (const char *[]){"x", "w", "wb", NULL}, (const char *[]){"c", NULL});
  ob_attr_i(&b, n, "group", 4), ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3});
  ob_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ob_node(&b, "Relu", "relu1", (const char *[]){"c", NULL}, (const char *[]){"r", NULL});
  n = ob_node(&b, "Concat", "cat", (const char *[]){"r", "x", NULL}, (const char *[]){"k", NULL});
  ob_attr_i(&b, n, "axis", 1);
  ob_node(&b, "BatchNormalization", "bn", (const char *[]){"k", "gamma", "beta", "mean", "var", NULL},
          (const char *[]){"n", NULL});
  ob_node(&b, "Relu", "relu2", (const char *[]){"n", NULL}, (const char *[]){"q", NULL});
  n = ob_node(&b, "MaxPool", "pool", (const char *[]){"q", NULL}, (const char *[]){"p", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, n, "strides", 2, (int64_t[]){2, 2});
  ob_attr_i(&b, n, "ceil_mode", 1);
  n = ob_node(&b, "ReduceMean", "mean_hw", (const char *[]){"p", NULL}, (const char *[]){"y", NULL});
  ob_attr_ints(&b, n, "axes", 2, (int64_t[]){2, 3}), ob_attr_i(&b, n, "keepdims", 0);
  finish(&b, path, input, xs, &seed, 2);
}

/* x[1,3,48,32] → Conv(16×16, stride 16, 12 out) → [1,12,3,2] → Pad(1 row / column on each
 * side, nothing to fold it into) → [1,12,5,4] → Gather(axis 2, index 1) → [1,12,4] (a ViT's
 * patch embedding and class-token pick in NCHW, an explicit Pad). */
static void write_patches(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 777;
  int64_t xs[4] = {1, 3, 48, 32}, ws[4] = {12, 3, 16, 16}, c12 = 12;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  init_rand(&b, "w", 4, ws, &seed, 0), init_rand(&b, "wb", 1, &c12, &seed, 0);
  ob_init_i64(&b, "idx", 1, (int64_t[]){1});
  ob_init_i64(&b, "pads", 8, (int64_t[]){0, 0, 1, 1, 0, 0, 1, 1});
  Onnx__NodeProto *n = ob_node(&b, "Conv", "patch", (const char *[]){"x", "w", "wb", NULL}, (const char *[]){"p", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){16, 16}), ob_attr_ints(&b, n, "strides", 2, (int64_t[]){16, 16});
  ob_node(&b, "Pad", "pad", (const char *[]){"p", "pads", NULL}, (const char *[]){"pp", NULL});
  n = ob_node(&b, "Gather", "cls", (const char *[]){"pp", "idx", NULL}, (const char *[]){"y", NULL});
  ob_attr_i(&b, n, "axis", 2);
  finish(&b, path, input, xs, &seed, 2);
}

/* x[1,2,4,6] → Softmax(axis −1, kept BF16 by the INT8 lowering) → Pad(1 on each side of H
 * and W) → y[1,2,6,8]: a float zero Pad (Swin's window padding). */
static void write_float_pad(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 99;
  int64_t xs[4] = {1, 2, 4, 6};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_i64(&b, "pads", 8, (int64_t[]){0, 0, 1, 1, 0, 0, 1, 1});
  Onnx__NodeProto *n = ob_node(&b, "Softmax", "sm", (const char *[]){"x", NULL}, (const char *[]){"s", NULL});
  ob_attr_i(&b, n, "axis", -1);
  ob_node(&b, "Pad", "fpad", (const char *[]){"s", "pads", NULL}, (const char *[]){"y", NULL});
  finish(&b, path, input, xs, &seed, 3);
}

/* x[1,4,8,8] → Conv(8 out, 3×3 pad 1) → LeakyRelu(0.1) → HardSigmoid(0.2, 0.5) · Tanh(x') …:
 * the float activations of the function unit and a Div — c = Conv(x), l = LeakyRelu(c),
 * h = HardSigmoid(l), t = Tanh(c), e = Exp(h), q = (t · e) / (h + 1.5),
 * s = Softsign(min(max(Elu(Softplus(q)), t), h)), y = max(Relu(t · 0), −s) → y[1,8,8,8] (the
 * Relu sees −0 where t < 0: +0 out, as the reference's Relu; −s ≤ 0, so y shows that sign). */
static void write_float_acts(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 4242;
  int64_t xs[4] = {1, 4, 8, 8}, ws[4] = {8, 4, 3, 3}, c8 = 8, one = 1;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  init_rand(&b, "w", 4, ws, &seed, 0), init_rand(&b, "wb", 1, &c8, &seed, 0);
  ob_init_f32(&b, "k", 1, &one, (float[]){1.5f});
  ob_init_f32(&b, "kz", 1, &one, (float[]){0.0f});
  ob_init_f32(&b, "km", 1, &one, (float[]){-1.0f});
  Onnx__NodeProto *n = ob_node(&b, "Conv", "conv", (const char *[]){"x", "w", "wb", NULL}, (const char *[]){"c", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  n = ob_node(&b, "LeakyRelu", "leaky", (const char *[]){"c", NULL}, (const char *[]){"l", NULL});
  ob_attr_f(&b, n, "alpha", 0.1f);
  n = ob_node(&b, "HardSigmoid", "hsig", (const char *[]){"l", NULL}, (const char *[]){"h", NULL});
  ob_attr_f(&b, n, "alpha", 0.2f), ob_attr_f(&b, n, "beta", 0.5f);
  ob_node(&b, "Tanh", "tanh", (const char *[]){"c", NULL}, (const char *[]){"t", NULL});
  ob_node(&b, "Exp", "exp", (const char *[]){"h", NULL}, (const char *[]){"e", NULL});
  ob_node(&b, "Mul", "mul", (const char *[]){"t", "e", NULL}, (const char *[]){"m", NULL});
  ob_node(&b, "Add", "add", (const char *[]){"h", "k", NULL}, (const char *[]){"a", NULL});
  ob_node(&b, "Div", "div", (const char *[]){"m", "a", NULL}, (const char *[]){"q", NULL});
  ob_node(&b, "Softplus", "softplus", (const char *[]){"q", NULL}, (const char *[]){"sp", NULL});
  n = ob_node(&b, "Elu", "elu", (const char *[]){"sp", NULL}, (const char *[]){"el", NULL});
  ob_attr_f(&b, n, "alpha", 0.5f);
  ob_node(&b, "Max", "max", (const char *[]){"el", "t", NULL}, (const char *[]){"mx", NULL});
  ob_node(&b, "Min", "min", (const char *[]){"mx", "h", NULL}, (const char *[]){"mn", NULL});
  ob_node(&b, "Softsign", "softsign", (const char *[]){"mn", NULL}, (const char *[]){"ss", NULL});
  ob_node(&b, "Mul", "zero", (const char *[]){"t", "kz", NULL}, (const char *[]){"z", NULL});  /* ±0 */
  ob_node(&b, "Relu", "relu0", (const char *[]){"z", NULL}, (const char *[]){"rz", NULL});    /* −0 → +0 */
  ob_node(&b, "Mul", "neg", (const char *[]){"ss", "km", NULL}, (const char *[]){"wn", NULL}); /* ≤ 0 */
  ob_node(&b, "Max", "max0", (const char *[]){"rz", "wn", NULL}, (const char *[]){"y", NULL});
  finish(&b, path, input, xs, &seed, 2);
}

/* A linear Resize of its own: scales (4 floats) or sizes (4 ints), a coordinate mode. */
static void resize_node(ob_model *b, const char *name, const char *in, const char *out, const float *sc,
                        const int64_t *sz, const char *ctm) {
  char sn[64];
  snprintf(sn, sizeof sn, "%s_%s", name, sc ? "scales" : "sizes");
  if (sc) ob_init_f32(b, sn, 1, (int64_t[]){4}, sc);
  else ob_init_i64(b, sn, 4, sz);
  Onnx__NodeProto *n = ob_node(b, "Resize", name, (const char *[]){in, "", sc ? sn : "", sc ? NULL : sn, NULL},
                               (const char *[]){out, NULL});
  ob_attr_s(b, n, "mode", "linear"), ob_attr_s(b, n, "coordinate_transformation_mode", ctm);
}

/* x[1,4,10,12] → Conv(8 out, 3×3 pad 1) → Resize(linear, ×2, half_pixel) → [1,8,20,24] →
 * Conv(6 out, 3×3 pad 1) → Resize(linear, sizes 13×17, align_corners) → Resize(linear, scales
 * 0.6 × 1.5, pytorch_half_pixel: a non-integer shrink of H, stretch of W) → [1,6,7,25] →
 * Resize(linear, ×2 × 1, asymmetric) → y[1,6,14,25] (YOLO / DeepLab / LR-ASPP upsampling). */
static void write_bilinear(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 2718;
  int64_t xs[4] = {1, 4, 10, 12}, ws[4] = {8, 4, 3, 3}, w2s[4] = {6, 8, 3, 3}, c8 = 8, c6 = 6;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  init_rand(&b, "w", 4, ws, &seed, 0), init_rand(&b, "wb", 1, &c8, &seed, 0);
  init_rand(&b, "w2", 4, w2s, &seed, 0), init_rand(&b, "wb2", 1, &c6, &seed, 0);
  Onnx__NodeProto *n = ob_node(&b, "Conv", "conv", (const char *[]){"x", "w", "wb", NULL}, (const char *[]){"c", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  resize_node(&b, "up2", "c", "u", (const float[]){1, 1, 2, 2}, NULL, "half_pixel");
  n = ob_node(&b, "Conv", "conv2", (const char *[]){"u", "w2", "wb2", NULL}, (const char *[]){"c2", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  resize_node(&b, "corners", "c2", "a", NULL, (const int64_t[]){1, 6, 13, 17}, "align_corners");
  resize_node(&b, "odd", "a", "o", (const float[]){1, 1, 0.6f, 1.5f}, NULL, "pytorch_half_pixel");
  resize_node(&b, "asym", "o", "y", (const float[]){1, 1, 2, 1}, NULL, "asymmetric");
  finish(&b, path, input, xs, &seed, 2);
}

/* x[1,1,36,40] → Conv(1 out, 3×3 pad 1) → Resize(linear, ×2, half_pixel) → [1,1,72,80] →
 * Resize(linear, sizes 53×80, align_corners) → Resize(linear, scales 1.7 × 1, pytorch_half_pixel)
 * → y[1,1,90,80]: one channel, so a small LMEM cuts the Resizes along H (halo rows). */
static void write_bilinear_rows(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 31415;
  int64_t xs[4] = {1, 1, 36, 40}, ws[4] = {1, 1, 3, 3}, c1 = 1;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  init_rand(&b, "w", 4, ws, &seed, 0), init_rand(&b, "wb", 1, &c1, &seed, 0);
  Onnx__NodeProto *n = ob_node(&b, "Conv", "conv", (const char *[]){"x", "w", "wb", NULL}, (const char *[]){"c", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  resize_node(&b, "up2", "c", "u", (const float[]){1, 1, 2, 2}, NULL, "half_pixel");
  resize_node(&b, "corners", "u", "a", NULL, (const int64_t[]){1, 1, 53, 80}, "align_corners");
  resize_node(&b, "odd", "a", "y", (const float[]){1, 1, 1.7f, 1}, NULL, "pytorch_half_pixel");
  finish(&b, path, input, xs, &seed, 2);
}

/* x[1,3,21,18] → Conv(1×1, 4 out) → AveragePool(3×3, stride 2, pads [1, 0, 1, 0], ceil_mode,
 * count_include_pad) → y[1,4,11,9]: the last row's and column's windows reach past the end
 * padding; their divisors count the padded taps but not the ceil-mode extension
 * (onnxruntime's; INT8 keeps such a pool in BF16: docs/quant.md). */
static void write_avgpool_ceil(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 31;
  int64_t xs[4] = {1, 3, 21, 18}, ws[4] = {4, 3, 1, 1};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  init_rand(&b, "w", 4, ws, &seed, 0);
  Onnx__NodeProto *n = ob_node(&b, "Conv", "pw", (const char *[]){"x", "w", NULL}, (const char *[]){"c", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){1, 1});
  n = ob_node(&b, "AveragePool", "apool", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, n, "strides", 2, (int64_t[]){2, 2});
  ob_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 0, 1, 0});
  ob_attr_i(&b, n, "ceil_mode", 1), ob_attr_i(&b, n, "count_include_pad", 1);
  finish(&b, path, input, xs, &seed, 2);
}

typedef void (*writer_fn)(const char *path, const char *input);
static const struct {
  const char *name, *must, *must_not; /* the transformed .top holds must, not must_not */
  writer_fn write;
} models[] = {
    {"patterns", "group = 24", "BatchNormalization", write_model},
    {"patches", "top.Pad", "top.Gather", write_patches},
    {"float_pad", "top.Pad", "top.Gather", write_float_pad},
    {"float_acts", "top.HardSigmoid", "top.Gather", write_float_acts},
    {"bilinear", "top.Resize", "top.Gather", write_bilinear},
    {"avgpool_ceil", "count_include_pad = 1", "top.Gather", write_avgpool_ceil},
};

/* Deploys tpu on the default chip and sweep chips 0, 5, …, 30 with --compare-all: bit-exact. */
static void deploy_chips(const char *tpu, const char *input, const char *tag) {
  char out[8192];
  for (int k = -1; k < 32; k += k < 0 ? 1 : 5) {
    char chip[700] = "", prog[100];
    if (k >= 0) snprintf(chip, sizeof chip, "--chip '%s'", ct_test_sweep_chip(k, "ops"));
    snprintf(prog, sizeof prog, "%s_%d.ctpu", tag, k);
    int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s -o '%s' --test-input '%s' --compare-all", tpu, chip,
                              ct_test_tmp_path(prog), input);
    int compared = -1, differ = -1;
    const char *m = strstr(out, "--compare-all: ");
    ck_assert_msg(rc == 0 && m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2,
                  "%s chip %d: deploy exited %d: %s", tag, k, rc, out);
    ck_assert_msg(compared >= 1 && differ == 0, "%s chip %d: %s", tag, k, out);
  }
}

START_TEST(test_patterns_bit_exact) {
  char model[700], input[700], top[700], calib[700], tpu[700], out[8192], name[100];
  const char *m0 = models[_i].name;
#define TMP(buf, fmt) (snprintf(name, sizeof name, fmt, m0), snprintf(buf, sizeof buf, "%s", ct_test_tmp_path(name)))
  TMP(model, "%s.onnx"), TMP(input, "%s_in.pb"), TMP(top, "%s.top"), TMP(calib, "%s.calib"), TMP(tpu, "%s.tpu");
#undef TMP
  models[_i].write(model, input);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  char *text = ct_test_read_file(top, NULL);
  ck_assert_ptr_nonnull(text);
  ck_assert_msg(!strstr(text, models[_i].must_not) && strstr(text, models[_i].must), "%s: canonicalize:\n%s", m0, text);
  free(text);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0,
                "calibrate: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' -o '%s'", top, calib,
                                 tpu) == 0,
                "lower: %s", out);
  deploy_chips(tpu, input, m0);
  static const char *fm[] = {"BF16", "F16", "F32"}; /* the float codegen, bit-exact too */
  for (int f = 0; f < 3; f++) {
    char ftpu[720], tag[100];
    snprintf(ftpu, sizeof ftpu, "%s.%s.tpu", top, fm[f]);
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s -o '%s'", top, fm[f], ftpu) == 0, "lower: %s", out);
    snprintf(tag, sizeof tag, "%s_%s", m0, fm[f]);
    deploy_chips(ftpu, input, tag);
  }
}
END_TEST

/* The bilinear model with asymmetric INT8 (zero points ≠ 0 inside RESIZE) deploys bit-exact
 * on the default chip and sweep chips 3, 17, 29; its Tpu reference (INT8 and BF16) is within
 * cosine 0.99 of the Top float inference. */
START_TEST(test_bilinear_asymmetric_and_cosine) {
  char model[700], input[700], top[700], calib[700], tpu[700], out[8192], dump[3][700];
  snprintf(model, sizeof model, "%s", ct_test_tmp_path("bl.onnx")), snprintf(input, sizeof input, "%s", ct_test_tmp_path("bl_in.pb"));
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("bl.top")), snprintf(calib, sizeof calib, "%s", ct_test_tmp_path("bl.calib"));
  snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path("bl.tpu"));
  write_bilinear(model, input);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0, "%s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --asymmetric --calibration-table '%s' -o '%s'", top,
                                 calib, tpu) == 0, "lower: %s", out);
  char *text = ct_test_read_file(tpu, NULL);
  ck_assert_msg(text && strstr(text, "tpu.Resize") && strstr(text, "x14x25xu8 !quant<") && !strstr(text, "xbf16"), "%s", text);
  free(text);
  for (int k = -1; k < 3; k++) {
    static const int chips[] = {3, 17, 29};
    char chip[700] = "";
    if (k >= 0) snprintf(chip, sizeof chip, "--chip '%s'", ct_test_sweep_chip(chips[k], "bl"));
    int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s -o '%s' --test-input '%s' --compare-all", tpu, chip,
                              ct_test_tmp_path("bl.ctpu"), input);
    ck_assert_msg(rc == 0 && strstr(out, " 0 differ"), "chip %d: %d %s", k, rc, out);
  }
  char btpu[700];
  snprintf(btpu, sizeof btpu, "%s", ct_test_tmp_path("bl.BF16.tpu"));
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize BF16 -o '%s'", top, btpu) == 0, "lower: %s", out);
  const char *mods[3] = {top, tpu, btpu};
  for (int i = 0; i < 3; i++) {
    char name[40];
    snprintf(name, sizeof name, "bl_out%d.h5", i);
    snprintf(dump[i], sizeof dump[i], "%s", ct_test_tmp_path(name));
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s' --dequant", mods[i], input, dump[i]) == 0,
                  "infer: %s", out);
  }
  for (int i = 1; i < 3; i++) {
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s'", dump[0], dump[i]) == 0, "compare: %s", out);
    const char *row = strstr(out, "\ny ");
    char verdict[32];
    double cos = 0;
    ck_assert_msg(row && sscanf(row, " y %*s %*s %31s %lf", verdict, &cos) == 2 && cos >= 0.99, "%s", out);
  }
}
END_TEST

/* x[1,2,6,7] → Conv(3 out, 3×3, pad 1; channel 0's tap (0, 0) a NaN, channel 1's tap (2, 2)
 * the negative NaN) → Relu → Mul(ones with one NaN in channel 2) → MaxPool(2×2) → y: in BF16,
 * F16 and F32 on the default and the sweep chips, bit-exact — the NaN weight meets the zero
 * padding at the border (NaN there as everywhere, ONNX), the pool window holding the NaN is
 * NaN (NaN wins) and every NaN is stored as the canonical NaN on both sides. */
START_TEST(test_float_nan_weight_padding) {
  char model[700], input[700], top[700], out[8192];
  snprintf(model, sizeof model, "%s", ct_test_tmp_path("nanw.onnx"));
  snprintf(input, sizeof input, "%s", ct_test_tmp_path("nanw_in.pb"));
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("nanw.top"));
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 5, neg_nan = 0xffffffffu;
  int64_t xs[4] = {1, 2, 6, 7}, ws[4] = {3, 2, 3, 3}, n = 3 * 2 * 9;
  float w[54];
  for (int64_t i = 0; i < n; i++) w[i] = lcgf(&seed) * 0.5f;
  w[0] = NAN;
  memcpy(&w[18 + 8], &neg_nan, 4);
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_f32(&b, "w", 4, ws, w);
  Onnx__NodeProto *nd = ob_node(&b, "Conv", "conv", (const char *[]){"x", "w", NULL}, (const char *[]){"c", NULL});
  ob_attr_ints(&b, nd, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, nd, "pads", 4, (int64_t[]){1, 1, 1, 1});
  float k[3 * 6 * 7];
  for (int i = 0; i < 3 * 6 * 7; i++) k[i] = 1.0f;
  k[2 * 42 + 3 * 7 + 3] = NAN; /* channel 2, (3, 3): the last tap of pool window (1, 1) */
  ob_init_f32(&b, "k", 4, (int64_t[]){1, 3, 6, 7}, k);
  ob_node(&b, "Relu", "relu", (const char *[]){"c", NULL}, (const char *[]){"r", NULL});
  ob_node(&b, "Mul", "mask", (const char *[]){"r", "k", NULL}, (const char *[]){"rk", NULL});
  nd = ob_node(&b, "MaxPool", "pool", (const char *[]){"rk", NULL}, (const char *[]){"y", NULL});
  ob_attr_ints(&b, nd, "kernel_shape", 2, (int64_t[]){2, 2}), ob_attr_ints(&b, nd, "strides", 2, (int64_t[]){2, 2});
  finish(&b, model, input, xs, &seed, 2);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  static const char *fm[] = {"BF16", "F16", "F32"};
  for (int f = 0; f < 3; f++) {
    char ftpu[720], tag[100];
    snprintf(ftpu, sizeof ftpu, "%s.%s.tpu", top, fm[f]);
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s -o '%s'", top, fm[f], ftpu) == 0, "lower: %s", out);
    snprintf(tag, sizeof tag, "nanw_%s", fm[f]);
    deploy_chips(ftpu, input, tag);
  }
}
END_TEST

/* The one-channel bilinear model on a 4 KiB LMEM chip: every Resize is cut along H (RESIZE
 * with ih0 / oh0 > 0 in the program), INT8 and BF16 bit-exact. */
START_TEST(test_bilinear_h_tiles) {
  char model[700], input[700], top[700], calib[700], tpu[700], out[8192], chip[700], prog[700];
  snprintf(model, sizeof model, "%s", ct_test_tmp_path("blr.onnx")), snprintf(input, sizeof input, "%s", ct_test_tmp_path("blr_in.pb"));
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("blr.top")), snprintf(calib, sizeof calib, "%s", ct_test_tmp_path("blr.calib"));
  snprintf(chip, sizeof chip, "%s", ct_test_tmp_path("lmem4k.json")), snprintf(prog, sizeof prog, "%s", ct_test_tmp_path("blr.ctpu"));
  const char *json = "{\"name\": \"lmem4k\", \"lmem.bytes\": 4096, \"lmem.banks\": 4}";
  ck_assert(ct_test_write_file(chip, json, strlen(json)));
  write_bilinear_rows(model, input);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0, "%s", out);
  for (int f = 0; f < 2; f++) {
    snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path(f ? "blr.BF16.tpu" : "blr.tpu"));
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s --calibration-table '%s' -o '%s'", top,
                                   f ? "BF16" : "INT8", calib, tpu) == 0, "lower: %s", out);
    int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --chip '%s' -o '%s' --test-input '%s' --compare-all", tpu, chip,
                              prog, input);
    ck_assert_msg(rc == 0 && strstr(out, " 0 differ"), "%s: %d %s", tpu, rc, out);
    static char dis[1 << 18];
    ck_assert_msg(ct_test_run_ctpu(dis, sizeof dis, "disasm '%s'", prog) == 0, "disasm failed");
    int cut[3] = {0, 0, 0};
    static const char *names[3] = {" up2 g", " corners g", " odd g"}; /* the debug comment: # id layer group tile */
    for (const char *l = strstr(dis, "RESIZE "); l; l = strstr(l + 1, "RESIZE ")) {
      const char *e = strchr(l, '\n'), *h = strstr(l, " ih0="), *o = strstr(l, " oh0=");
      for (int k = 0; k < 3; k++) {
        const char *t = strstr(l, names[k]);
        if (t && (!e || t < e) && h && o && (atoi(h + 5) > 0 || atoi(o + 5) > 0)) cut[k]++;
      }
    }
    ck_assert_msg(cut[0] && cut[1] && cut[2], "%s: Resizes not cut along H: %d %d %d", tpu, cut[0], cut[1], cut[2]);
  }
}
END_TEST

/* The patterns model in INT8 on chips with more LMEM banks than a 64-bit mask holds (128,
 * and chip.def's maximum 1024): `ctpu chip` accepts them, deploy is bit-exact, and `ctpu sim`
 * runs the program on the same chip. */
START_TEST(test_many_banks_bit_exact) {
  char model[700], input[700], top[700], calib[700], tpu[700], out[8192];
  snprintf(model, sizeof model, "%s", ct_test_tmp_path("banks.onnx"));
  snprintf(input, sizeof input, "%s", ct_test_tmp_path("banks_in.pb"));
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("banks.top"));
  snprintf(calib, sizeof calib, "%s", ct_test_tmp_path("banks.calib"));
  snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path("banks.tpu"));
  write_model(model, input);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0, "%s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' -o '%s'", top, calib, tpu) == 0,
                "lower: %s", out);
  static const int banks[] = {128, 1024};
  for (int i = 0; i < 2; i++) {
    char chip[700], prog[700], res[700], name[64], js[64];
    snprintf(name, sizeof name, "banks%d.json", banks[i]);
    snprintf(chip, sizeof chip, "%s", ct_test_tmp_path(name));
    snprintf(js, sizeof js, "{\"lmem\": {\"banks\": %d}}", banks[i]);
    ck_assert(ct_test_write_file(chip, js, strlen(js)));
    snprintf(name, sizeof name, "banks%d.ctpu", banks[i]);
    snprintf(prog, sizeof prog, "%s", ct_test_tmp_path(name));
    snprintf(name, sizeof name, "banks%d.h5", banks[i]);
    snprintf(res, sizeof res, "%s", ct_test_tmp_path(name));
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "chip --dump --chip '%s'", chip) == 0, "chip: %s", out);
    int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --chip '%s' -o '%s' --test-input '%s' --compare-all", tpu, chip, prog,
                              input);
    ck_assert_msg(rc == 0 && strstr(out, " 0 differ"), "%d banks: deploy exited %d: %s", banks[i], rc, out);
    rc = ct_test_run_ctpu(out, sizeof out, "sim '%s' --chip '%s' --input '%s' -o '%s'", prog, chip, input, res);
    ck_assert_msg(rc == 0, "%d banks: sim exited %d: %s", banks[i], rc, out);
  }
}
END_TEST

/* A float op the function unit does not have (Sin): deploy exits 3 naming the layer and the
 * reason, and writes nothing. */
START_TEST(test_float_op_without_codegen) {
  char model[700], input[700], top[700], tpu[700], prog[700], out[8192];
  snprintf(model, sizeof model, "%s", ct_test_tmp_path("sine.onnx"));
  snprintf(input, sizeof input, "%s", ct_test_tmp_path("sine_in.pb"));
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("sine.top"));
  snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path("sine.tpu"));
  snprintf(prog, sizeof prog, "%s", ct_test_tmp_path("sine.ctpu"));
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 7;
  int64_t xs[4] = {1, 2, 4, 4};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_node(&b, "Sin", "sine", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
  finish(&b, model, input, xs, &seed, 2);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize BF16 -o '%s'", top, tpu) == 0, "lower: %s", out);
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s' --test-input '%s'", tpu, prog, input);
  ck_assert_msg(rc == 3 && strstr(out, "layer \"sine\"") && strstr(out, "no codegen"), "%d %s", rc, out);
  ck_assert_msg(!ct_test_file_exists(prog), "a failed deploy wrote %s", prog);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy_ops");
  TCase *tc = tcase_create("patterns");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_patterns_bit_exact, 0, (int)(sizeof models / sizeof models[0]));
  tcase_add_test(tc, test_float_op_without_codegen);
  tcase_add_test(tc, test_bilinear_asymmetric_and_cosine);
  tcase_add_test(tc, test_bilinear_h_tiles);
  tcase_add_test(tc, test_float_nan_weight_padding);
  tcase_add_test(tc, test_many_banks_bit_exact);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
