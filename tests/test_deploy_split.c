/* test_deploy_split.c: ONNX Split through the whole pipeline — models built here
 * (tests/onnx_build.c) with Splits along C, H, W and the last axis of a rank-3 tensor, equal
 * and unequal parts, split sizes as an input (opset 13), an attribute (opset 11) and
 * num_outputs (opset 18), outputs read by different layers, one output also a module output
 * and one read by nobody — deployed with --compare-all in INT8, BF16, F16 and F32 on the
 * default chip and four sweep chips (bit-exact against the Tpu reference), tiled along another
 * axis on a small LMEM, and a pure F32 Split checked against a hand loop. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "common/tensor.h"
#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

/* Writes the model to path and a random input "x" (shape xs, values 2 · [-1, 1)) to input;
 * frees the builder. */
static void finish(ob_model *b, const char *path, const char *input, int nd, const int64_t *xs, uint32_t *seed) {
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

static Onnx__NodeProto *conv(ob_model *b, const char *name, const char *in, const char *w, const char *out, int k) {
  Onnx__NodeProto *n = ob_node(b, "Conv", name, (const char *[]){in, w, NULL}, (const char *[]){out, NULL});
  ob_attr_ints(b, n, "kernel_shape", 2, (int64_t[]){k, k});
  if (k == 3) ob_attr_ints(b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  return n;
}

/* Opset 13, split sizes as an input: x[1,6,10,12] → Conv(8, 3×3) → Split(axis 1, [3, 5]) →
 * a[1,3,..] → Relu, b[1,5,..] → Conv(3, 1×1); y = Relu(a) + Conv(b); b is a module output
 * too (read by a layer and stored). */
static void write_split_c(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 101;
  int64_t xs[4] = {1, 6, 10, 12};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_rand(&b, "w", 4, (int64_t[]){8, 6, 3, 3}, &seed), ob_init_rand(&b, "w2", 4, (int64_t[]){3, 5, 1, 1}, &seed);
  ob_init_i64(&b, "parts", 2, (int64_t[]){3, 5});
  conv(&b, "conv", "x", "w", "c", 3);
  Onnx__NodeProto *n = ob_node(&b, "Split", "split_c", (const char *[]){"c", "parts", NULL}, (const char *[]){"a", "b", NULL});
  ob_attr_i(&b, n, "axis", 1);
  ob_node(&b, "Relu", "relu", (const char *[]){"a", NULL}, (const char *[]){"r", NULL});
  conv(&b, "pw", "b", "w2", "p", 1);
  ob_node(&b, "Add", "add", (const char *[]){"r", "p", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y"), ob_output(&b, "b");
  finish(&b, path, input, 4, xs, &seed);
}

/* Opset 11, split as an attribute: x[1,4,10,12] → Conv(6, 3×3) → Split(axis 2, [4, 6]) →
 * t[1,6,4,12] → MaxPool(2×2, stride 2) → yp; u[1,6,6,12] → Split(axis −1, three equal parts,
 * no sizes) → u0, u1, u2 (u2 read by nobody); ym = Sigmoid(u0) · u1. */
static void write_split_hw(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 11);
  uint32_t seed = 202;
  int64_t xs[4] = {1, 4, 10, 12};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_rand(&b, "w", 4, (int64_t[]){6, 4, 3, 3}, &seed);
  conv(&b, "conv", "x", "w", "c", 3);
  Onnx__NodeProto *n = ob_node(&b, "Split", "split_h", (const char *[]){"c", NULL}, (const char *[]){"t", "u", NULL});
  ob_attr_i(&b, n, "axis", 2), ob_attr_ints(&b, n, "split", 2, (int64_t[]){4, 6});
  n = ob_node(&b, "MaxPool", "pool", (const char *[]){"t", NULL}, (const char *[]){"yp", NULL});
  ob_attr_ints(&b, n, "kernel_shape", 2, (int64_t[]){2, 2}), ob_attr_ints(&b, n, "strides", 2, (int64_t[]){2, 2});
  n = ob_node(&b, "Split", "split_w", (const char *[]){"u", NULL}, (const char *[]){"u0", "u1", "u2", NULL});
  ob_attr_i(&b, n, "axis", -1);
  ob_node(&b, "Sigmoid", "sig", (const char *[]){"u0", NULL}, (const char *[]){"s", NULL});
  ob_node(&b, "Mul", "mul", (const char *[]){"s", "u1", NULL}, (const char *[]){"ym", NULL});
  ob_output(&b, "yp"), ob_output(&b, "ym");
  finish(&b, path, input, 4, xs, &seed);
}

/* Opset 18, num_outputs (a transformer's fused QKV): x[1,8,16] → MatMul([16, 48]) →
 * Split(axis 2, num_outputs 3) → q, k, v [1,8,16]; y = (q + k) · v; q is a module output. */
static void write_split_qkv(const char *path, const char *input) {
  ob_model b;
  ob_init(&b, 18);
  uint32_t seed = 303;
  int64_t xs[3] = {1, 8, 16};
  ob_input(&b, "x", T_FLOAT, 3, xs);
  ob_init_rand(&b, "wqkv", 2, (int64_t[]){16, 48}, &seed);
  ob_node(&b, "MatMul", "qkv", (const char *[]){"x", "wqkv", NULL}, (const char *[]){"m", NULL});
  Onnx__NodeProto *n = ob_node(&b, "Split", "split_qkv", (const char *[]){"m", NULL}, (const char *[]){"q", "k", "v", NULL});
  ob_attr_i(&b, n, "axis", 2), ob_attr_i(&b, n, "num_outputs", 3);
  ob_node(&b, "Add", "qk", (const char *[]){"q", "k", NULL}, (const char *[]){"s", NULL});
  ob_node(&b, "Mul", "sv", (const char *[]){"s", "v", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y"), ob_output(&b, "q");
  finish(&b, path, input, 3, xs, &seed);
}

typedef void (*writer_fn)(const char *path, const char *input);
static const struct {
  const char *name;
  writer_fn write;
} models[] = {{"split_c", write_split_c}, {"split_hw", write_split_hw}, {"split_qkv", write_split_qkv}};

/* Deploys tpu on the default chip and sweep chips 0, 10, 20, 30 with --compare-all: bit-exact. */
static void deploy_chips(const char *tpu, const char *input, const char *tag) {
  char out[8192];
  for (int k = -1; k < 32; k += k < 0 ? 1 : 10) {
    char chip[700] = "", prog[200];
    if (k >= 0) snprintf(chip, sizeof chip, "--chip '%s'", ct_test_sweep_chip(k, "split"));
    snprintf(prog, sizeof prog, "%s_%d.ctpu", tag, k);
    int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s -o '%s' --test-input '%s' --compare-all", tpu, chip,
                              ct_test_tmp_path(prog), input);
    int compared = -1, differ = -1;
    const char *m = strstr(out, "--compare-all: ");
    ck_assert_msg(rc == 0 && m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2,
                  "%s chip %d: deploy exited %d: %s", tag, k, rc, out);
    ck_assert_msg(compared >= 3 && differ == 0, "%s chip %d: %s", tag, k, out);
  }
}

/* Each model: the Top module holds its Splits; INT8 (calibrated), BF16, F16 and F32
 * lowerings keep them (tpu.Split) and deploy bit-exact on 5 chips. */
START_TEST(test_split_bit_exact) {
  char model[700], input[700], top[700], calib[700], tpu[700], out[8192], name[100];
  const char *m0 = models[_i].name;
#define TMP(buf, fmt) (snprintf(name, sizeof name, fmt, m0), snprintf(buf, sizeof buf, "%s", ct_test_tmp_path(name)))
  TMP(model, "%s.onnx"), TMP(input, "%s_in.pb"), TMP(top, "%s.top"), TMP(calib, "%s.calib"), TMP(tpu, "%s.tpu");
#undef TMP
  models[_i].write(model, input);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0,
                "calibrate: %s", out);
  static const char *fm[] = {"INT8", "BF16", "F16", "F32"};
  for (int f = 0; f < 4; f++) {
    char ftpu[720], tag[120];
    snprintf(ftpu, sizeof ftpu, "%s.%s.tpu", tpu, fm[f]);
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s --calibration-table '%s' -o '%s'", top, fm[f],
                                   calib, ftpu) == 0, "lower: %s", out);
    char *text = ct_test_read_file(ftpu, NULL);
    ck_assert_msg(text && strstr(text, "tpu.Split"), "%s %s: no tpu.Split:\n%s", m0, fm[f], text ? text : "");
    free(text);
    snprintf(tag, sizeof tag, "%s_%s", m0, fm[f]);
    deploy_chips(ftpu, input, tag);
  }
}
END_TEST

/* x[1,3,40,24] → Split(axis 1, [1, 2]) → y0, y1 (module outputs), F32: on a 4 KiB LMEM chip
 * the Split is tiled along H (its group has several tiles) and the simulated outputs equal
 * the input's channel blocks, element by element (a hand loop); INT8 deploys bit-exact there
 * too. */
START_TEST(test_split_tiled_hand_loop) {
  char model[700], input[700], top[700], calib[700], tpu[700], prog[700], res[700], chip[700], out[8192];
  snprintf(model, sizeof model, "%s", ct_test_tmp_path("sp_t.onnx")), snprintf(input, sizeof input, "%s", ct_test_tmp_path("sp_t_in.pb"));
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("sp_t.top")), snprintf(calib, sizeof calib, "%s", ct_test_tmp_path("sp_t.calib"));
  snprintf(prog, sizeof prog, "%s", ct_test_tmp_path("sp_t.ctpu")), snprintf(res, sizeof res, "%s", ct_test_tmp_path("sp_t.h5"));
  snprintf(chip, sizeof chip, "%s", ct_test_tmp_path("sp_lmem4k.json"));
  const char *json = "{\"name\": \"lmem4k\", \"lmem.bytes\": 4096, \"lmem.banks\": 4}";
  ck_assert(ct_test_write_file(chip, json, strlen(json)));
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = 404;
  int64_t xs[4] = {1, 3, 40, 24};
  ob_input(&b, "x", T_FLOAT, 4, xs);
  ob_init_i64(&b, "parts", 2, (int64_t[]){1, 2});
  Onnx__NodeProto *n = ob_node(&b, "Split", "split", (const char *[]){"x", "parts", NULL}, (const char *[]){"y0", "y1", NULL});
  ob_attr_i(&b, n, "axis", 1);
  ob_output(&b, "y0"), ob_output(&b, "y1");
  finish(&b, model, input, 4, xs, &seed);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, input, calib) == 0, "%s", out);
  for (int f = 0; f < 2; f++) {
    snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path(f ? "sp_t.INT8.tpu" : "sp_t.F32.tpu"));
    ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s --calibration-table '%s' -o '%s'", top,
                                   f ? "INT8" : "F32", calib, tpu) == 0, "lower: %s", out);
    int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --chip '%s' -o '%s' --test-input '%s' --compare-all", tpu, chip,
                              prog, input);
    ck_assert_msg(rc == 0 && strstr(out, " 0 differ"), "%s: %d %s", tpu, rc, out);
    char csv[720];
    snprintf(csv, sizeof csv, "%s", ct_test_tmp_path("sp_t.ctpu.groups.csv"));
    char *text = ct_test_read_file(csv, NULL), *row = text ? strstr(text, "\"split\",\"split\",") : NULL;
    int tiles = 0; /* group,layers,first_layer,last_layer,tile_shape,tiles,... */
    ck_assert_msg(row && sscanf(row, "\"split\",\"split\",%*[^,],%d", &tiles) == 1 && tiles > 1, "Split not tiled:\n%s", text);
    free(text);
  }
  /* the F32 program again, simulated: outputs against a hand loop over the input */
  snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path("sp_t.F32.tpu"));
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "deploy '%s' --chip '%s' -o '%s'", tpu, chip, prog) == 0, "%s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "sim '%s' --chip '%s' --input '%s' -o '%s'", prog, chip, input, res) == 0,
                "sim: %s", out);
  seed = 404;
  float x[3 * 40 * 24];
  for (int i = 0; i < 3 * 40 * 24; i++) x[i] = 2 * ob_lcg_unit(&seed); /* finish's input values */
  ct_tensor_list got;
  memset(&got, 0, sizeof got);
  ct_diag d;
  memset(&d, 0, sizeof d);
  ck_assert_msg(ct_h5_read(res, &got, &d) == CT_OK, "%s", d.msg);
  int found = 0;
  for (int i = 0; i < got.n; i++) {
    const ct_tensor *t = got.items[i];
    int y1 = !strcmp(t->name, "y1");
    if (!y1 && strcmp(t->name, "y0")) continue;
    found++;
    ck_assert_int_eq(t->dtype, CT_F32);
    ck_assert_int_eq(ct_tensor_numel(t), (y1 ? 2 : 1) * 40 * 24);
    const float *v = t->data;
    for (int64_t e = 0; e < ct_tensor_numel(t); e++)
      ck_assert_msg(v[e] == x[(y1 ? 40 * 24 : 0) + e], "%s[%lld] = %g, x has %g", t->name, (long long)e, v[e],
                    x[(y1 ? 40 * 24 : 0) + e]);
  }
  ck_assert_int_eq(found, 2);
  ct_tensor_list_free(&got);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy_split");
  TCase *tc = tcase_create("split");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_split_bit_exact, 0, (int)(sizeof models / sizeof models[0]));
  tcase_add_test(tc, test_split_tiled_hand_loop);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
