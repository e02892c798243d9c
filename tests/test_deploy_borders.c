/* test_deploy_borders.c: float / integer borders at the module input and Casts, on models
 * built here (tests/onnx_build.c): an NHWC export (f32 input → Transpose → Conv → Relu →
 * Conv: BlazeFace's stem), a Flatten of the f32 input into a Gemm, the f32 input read by a
 * float op and by the INT8 ops' quantizing Cast at once, and a bool → float Cast of a
 * comparison (Cast(Greater(x, k)) · x), the input passed through as a second output — each transformed, calibrated, lowered to INT8 and
 * BF16 and deployed with --compare-all on the default chip and three sweep chips: every
 * stored tensor bit-exact against the Tpu reference. Also: the Tpu reference runs a Cast of
 * a bool tensor made inside the module (no quantization parameters) in every mode. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

/* Writes the model (output "y") to path and a random input "x" of shape xs (rank nd, values
 * 2 · [-1, 1)) to input, then frees the builder. */
static void finish(ob_model *b, const char *path, const char *input, int nd, const int64_t *xs, uint32_t *seed) {
  ob_output(b, "y");
  ck_assert(ob_write(b, path));
  Onnx__TensorProto *t = ob_tensor(b, "x", T_FLOAT, nd, xs);
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= xs[i];
  float *v = malloc(sizeof *v * (size_t)n);
  ck_assert_ptr_nonnull(v);
  for (int64_t i = 0; i < n; i++) v[i] = 2 * ob_lcg_unit(seed);
  ob_raw(b, t, v, sizeof *v * (size_t)n);
  free(v);
  ck_assert(ob_write_tensor(t, input));
  ob_free(b);
}

/* x[1,10,12,3] (NHWC) → Transpose(0,3,1,2) → Conv(8 out, 3×3, pad 1) → Relu → Conv(4 out,
 * 1×1) → y[1,4,10,12]. */
static void write_nhwc(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 31;
  int64_t xs[4] = {1, 10, 12, 3}, w1[4] = {8, 3, 3, 3}, w2[4] = {4, 8, 1, 1}, c8 = 8;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_rand(&b, "w1", 4, w1, &seed), ob_init_rand(&b, "b1", 1, &c8, &seed), ob_init_rand(&b, "w2", 4, w2, &seed);
  Onnx__NodeProto *n = ob_node(&b, "Transpose", "nchw", (const char *[]){"x", NULL}, (const char *[]){"t", NULL});
  ob_attr_ints(&b, n, "perm", 4, (int64_t[]){0, 3, 1, 2});
  n = ob_node(&b, "Conv", "conv1", (const char *[]){"t", "w1", "b1", NULL}, (const char *[]){"c", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){3, 3}), ob_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ob_node(&b, "Relu", "relu", (const char *[]){"c", NULL}, (const char *[]){"r", NULL});
  n = ob_node(&b, "Conv", "conv2", (const char *[]){"r", "w2", NULL}, (const char *[]){"y", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){1, 1});
  finish(&b, path, input, 4, xs, &seed);
}

/* x[1,2,3,8] → Flatten(axis 1) → Gemm(W [48, 6]) → y[1,6]. */
static void write_flatten(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 32;
  int64_t xs[4] = {1, 2, 3, 8}, ws[2] = {48, 6};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_rand(&b, "w", 2, ws, &seed);
  ob_node(&b, "Flatten", "flat", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
  ob_node(&b, "Gemm", "fc", (const char *[]){"f", "w", NULL}, (const char *[]){"y", NULL});
  finish(&b, path, input, 4, xs, &seed);
}

/* x[1,4,6,6] read by Softmax(axis 3) (float in INT8) and by Add(x, x) (INT8: its quantizing
 * Cast) → y = Softmax(x) + (x + x). */
static void write_shared(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 33;
  int64_t xs[4] = {1, 4, 6, 6};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  Onnx__NodeProto *n = ob_node(&b, "Softmax", "soft", (const char *[]){"x", NULL}, (const char *[]){"s", NULL});
  ob_attr_i(&b, n, "axis", 3);
  ob_node(&b, "Add", "twice", (const char *[]){"x", "x", NULL}, (const char *[]){"a", NULL});
  ob_node(&b, "Add", "sum", (const char *[]){"s", "a", NULL}, (const char *[]){"y", NULL});
  finish(&b, path, input, 4, xs, &seed);
}

/* x[1,4,6,6] → Greater(x, 0.25) → Cast(to float) → Mul(x, ·) → y: x where x > 0.25, else 0. */
static void write_mask(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 34;
  int64_t xs[4] = {1, 4, 6, 6}, one = 1;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_f32(&b, "k", 1, &one, (float[]){0.25f});
  ob_node(&b, "Greater", "gt", (const char *[]){"x", "k", NULL}, (const char *[]){"g", NULL});
  Onnx__NodeProto *n = ob_node(&b, "Cast", "mask", (const char *[]){"g", NULL}, (const char *[]){"m", NULL});
  ob_attr_i(&b, n, "to", T_FLOAT);
  ob_node(&b, "Mul", "keep", (const char *[]){"x", "m", NULL}, (const char *[]){"y", NULL});
  finish(&b, path, input, 4, xs, &seed);
}

/* x[1,4,6,6] → Relu → Conv(4 out, 1×1, named "conv": the quantize table forces it to F32)
 * → y: a float layer inside an INT8 module, its input dequantized to f32. */
static void write_qtable(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 35;
  int64_t xs[4] = {1, 4, 6, 6}, ws[4] = {4, 4, 1, 1};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_rand(&b, "w", 4, ws, &seed);
  ob_node(&b, "Relu", "relu", (const char *[]){"x", NULL}, (const char *[]){"r", NULL});
  Onnx__NodeProto *n = ob_node(&b, "Conv", "conv", (const char *[]){"r", "w", NULL}, (const char *[]){"y", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){1, 1});
  finish(&b, path, input, 4, xs, &seed);
}

/* x[1,2,4,4] → Greater(x, 0.5 · x) (two activations: no mask form, a bool result) →
 * Cast(to float) → Mul(x, ·) → y. */
static void write_bool_cast(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 36;
  int64_t xs[4] = {1, 2, 4, 4}, one = 1;
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_f32(&b, "half", 1, &one, (float[]){0.5f});
  ob_node(&b, "Mul", "halve", (const char *[]){"x", "half", NULL}, (const char *[]){"h", NULL});
  ob_node(&b, "Greater", "gt", (const char *[]){"x", "h", NULL}, (const char *[]){"g", NULL});
  Onnx__NodeProto *n = ob_node(&b, "Cast", "mask", (const char *[]){"g", NULL}, (const char *[]){"m", NULL});
  ob_attr_i(&b, n, "to", T_FLOAT);
  ob_node(&b, "Mul", "keep", (const char *[]){"x", "m", NULL}, (const char *[]){"y", NULL});
  finish(&b, path, input, 4, xs, &seed);
}

/* x[1,4,3,5] → Relu → y, and x itself a module output (passed through): the program has an
 * input and an output named "x" at the same GMEM bytes. */
static void write_passthrough(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 37;
  int64_t xs[4] = {1, 4, 3, 5};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_node(&b, "Relu", "relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "x");
  finish(&b, path, input, 4, xs, &seed);
}

/* x[1,3,4,6] → Sigmoid → y, and z = Cast(Cast(y, float16), float) another output: lowered
 * to one dtype the cast pair folds away and the module returns one value twice (one output). */
static void write_twice(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 38;
  int64_t xs[4] = {1, 3, 4, 6};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_node(&b, "Sigmoid", "sig", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
  Onnx__NodeProto *n = ob_node(&b, "Cast", "half", (const char *[]){"y", NULL}, (const char *[]){"h", NULL});
  ob_attr_i(&b, n, "to", 10);
  n = ob_node(&b, "Cast", "back", (const char *[]){"h", NULL}, (const char *[]){"z", NULL});
  ob_attr_i(&b, n, "to", T_FLOAT);
  ob_output(&b, "z");
  finish(&b, path, input, 4, xs, &seed);
}

typedef void (*writer_fn)(const char *path, const char *input);
static const struct {
  const char *name;
  writer_fn write;
} models[] = {
    {"nhwc", write_nhwc}, {"flatten", write_flatten}, {"shared", write_shared}, {"mask", write_mask},
    {"passthrough", write_passthrough}, {"twice", write_twice},
};

/* Deploys tpu on the default chip and sweep chips 3, 13, 23 with --compare-all: bit-exact. */
static void deploy_chips(const char *tpu, const char *input, const char *tag) {
  char out[8192];
  static const int chips[] = {-1, 3, 13, 23};
  for (size_t i = 0; i < sizeof chips / sizeof *chips; i++) {
    int k = chips[i];
    char chip[700] = "", prog[160];
    if (k >= 0) snprintf(chip, sizeof chip, "--chip '%s'", ct_test_sweep_chip(k, "borders"));
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

/* Writes the model of writer w as tmp files named after tag: model, input, Top module and
 * calibration table (from the input). */
static void front(writer_fn w, const char *tag, char *model, char *input, char *top, char *calib) {
  char name[100], out[8192];
#define TMP(buf, fmt) (snprintf(name, sizeof name, fmt, tag), snprintf(buf, 700, "%s", ct_test_tmp_path(name)))
  TMP(model, "b_%s.onnx"), TMP(input, "b_%s_in.pb"), TMP(top, "b_%s.top"), TMP(calib, "b_%s.calib");
#undef TMP
  w(model, input);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0,
                "calibrate: %s", out);
}

/* A quantize table forcing a Conv to F32 inside an INT8 module (docs/qtable.md): the Conv
 * reads an f32 dequantization of its INT8 input (f32 weights need f32 input), bit-exact. The
 * same model in BF16: its Relu reads the f32 input and writes bf16 (ELTWISE f32 → bf16). */
START_TEST(test_qtable_float_layer) {
  char model[700], input[700], top[700], calib[700], tpu[720], qt[720], out[8192];
  front(write_qtable, "qtable", model, input, top, calib);
  snprintf(qt, sizeof qt, "%s.qtable", top), snprintf(tpu, sizeof tpu, "%s.tpu", top);
  ck_assert(ct_test_write_file(qt, "conv F32\n", 9));
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' --quantize-table '%s' -o '%s'",
                                 top, calib, qt, tpu) == 0,
                "lower: %s", out);
  char *text = ct_test_read_file(tpu, NULL);
  ck_assert_ptr_nonnull(text);
  ck_assert_msg(strstr(text, "r_to_f32") && strstr(text, "tpu.Lut"), "%s", text);
  free(text);
  deploy_chips(tpu, input, "b_qtable");
  snprintf(tpu, sizeof tpu, "%s.BF16.tpu", top);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize BF16 -o '%s'", top, tpu) == 0, "lower: %s", out);
  deploy_chips(tpu, input, "b_relu_bf16");
}
END_TEST

/* A Cast of a bool tensor made inside the module (no quantization parameters: a plain ONNX
 * Cast, M-LSD's decoder) runs on the Tpu reference in INT8, BF16, F16 and F32 (exit 0);
 * ct_tpu_cast used to ask it for parameters ("a dequantizing cast needs per-tensor
 * parameters on its operand", exit 3). */
START_TEST(test_plain_cast_reference) {
  char model[700], input[700], top[700], calib[700], tpu[720], res[720], out[8192];
  front(write_bool_cast, "boolcast", model, input, top, calib);
  static const char *modes[] = {"INT8", "BF16", "F16", "F32"};
  for (int f = 0; f < 4; f++) {
    snprintf(tpu, sizeof tpu, "%s.%s.tpu", top, modes[f]), snprintf(res, sizeof res, "%s.%s.h5", top, modes[f]);
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s --calibration-table '%s' -o '%s'", top, modes[f],
                                   calib, tpu) == 0,
                  "lower %s: %s", modes[f], out);
    char *text = ct_test_read_file(tpu, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "tpu.Greater") && strstr(text, "xi1>"), "%s: %s", modes[f], text); /* a bool result is cast */
    free(text);
    int rc = ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s'", tpu, input, res);
    ck_assert_msg(rc == 0, "%s: infer exited %d: %s", modes[f], rc, out);
  }
}
END_TEST

START_TEST(test_borders_bit_exact) {
  char model[700], input[700], top[700], calib[700], tpu[720], out[8192], name[100], tag[100];
  const char *m0 = models[_i].name;
#define TMP(buf, fmt) (snprintf(name, sizeof name, fmt, m0), snprintf(buf, sizeof buf, "%s", ct_test_tmp_path(name)))
  TMP(model, "b_%s.onnx"), TMP(input, "b_%s_in.pb"), TMP(top, "b_%s.top"), TMP(calib, "b_%s.calib");
#undef TMP
  models[_i].write(model, input);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0,
                "calibrate: %s", out);
  static const char *modes[] = {"INT8", "BF16"};
  for (int f = 0; f < 2; f++) {
    snprintf(tpu, sizeof tpu, "%s.%s.tpu", top, modes[f]);
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s %s%s%s -o '%s'", top, modes[f],
                                   f == 0 ? "--calibration-table '" : "", f == 0 ? calib : "", f == 0 ? "'" : "", tpu) == 0,
                  "lower %s: %s", modes[f], out);
    snprintf(tag, sizeof tag, "b_%s_%s", m0, modes[f]);
    deploy_chips(tpu, input, tag);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy_borders");
  TCase *tc = tcase_create("borders");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_borders_bit_exact, 0, (int)(sizeof models / sizeof models[0]));
  tcase_add_test(tc, test_qtable_float_layer);
  tcase_add_test(tc, test_plain_cast_reference);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
