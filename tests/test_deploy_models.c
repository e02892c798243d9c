/* test_deploy_models.c: `ctpu deploy --compare-all` on the shared detection models lowered to
 * INT8 — PP-OCRv4 det (160×160: Resize, Concat, ConvTranspose, LUTs), Ultraface-RFB-320
 * (Transpose, Reshape views, Slice, Concat along other axes, a BF16 Softmax output) and
 * YOLOX-Nano (float Slices of the f32 input, MaxPool, Resize, Concat, Transpose) and
 * PP-OCRv4 rec (BF16 LayerNormalization and Softmax, MatMul of two activations, rank-5
 * Transpose / Slice): every
 * stored tensor must equal the Tpu reference bit for bit on the default chip and two sweep
 * chips; and each lowered to BF16 (float codegen), bit-exact on the default chip (YOLOX also
 * on a sweep chip). Calibration tables are built in-process (tests/lower_calib.c) from one input.
 * Also: deploy straight from MODEL.onnx and MODEL.top (lowered first), its usage errors, and
 * a chip whose LMEM is too small (exit 4 naming the layer and the bytes, nothing written).
 * Needs ../shared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lower_calib.h"
#include "tests/testutil.h"

typedef struct model_case {
  const char *dir, *tag;
  const char *transform_opts; /* --input-shapes and preprocessing */
  const char *input;          /* under ../shared: calibration and test input */
} model_case;

static const model_case cases[] = {
    {"ppocrv4-det", "det", "--input-shapes x:1x3x160x160 --mean 123.675,116.28,103.53 --scale 0.01712,0.0175,0.01743",
     "images/misc/skimage_coffee.jpg"},
    {"ultraface-rfb-320", "uf", "", "models/ultraface-rfb-320/test_data_set_0/input_0.pb"},
    {"yolox-nano", "yx", "", "models/yolox-nano/test_data_set_0/input_0.pb"},
    {"ppocrv4-rec", "rec", "", "models/ppocrv4-rec/test_data_set_0/input_0.pb"},
};

/* Sweep chips of test_deploy (index k there): 4 = 16×64 WS 256 KiB 4 banks 2 load engines;
 * 11 = 16×16 OS 1 MiB 8 banks, 2 store engines. */
static const int sweep[] = {4, 11};

#define N_MODELS ((int)(sizeof cases / sizeof cases[0]))

static char top[N_MODELS][600], tpu[N_MODELS][600], calib[N_MODELS][620], input[N_MODELS][600];

/* Transforms, calibrates (max) and lowers model i to INT8. */
static void prepare(int i) {
  const model_case *mc = &cases[i];
  char out[8192], err[512], name[64];
  snprintf(name, sizeof name, "%s.top", mc->tag), snprintf(top[i], sizeof top[i], "%s", ct_test_tmp_path(name));
  snprintf(name, sizeof name, "%s.tpu", mc->tag), snprintf(tpu[i], sizeof tpu[i], "%s", ct_test_tmp_path(name));
  snprintf(calib[i], sizeof calib[i], "%s.calib", top[i]);
  snprintf(input[i], sizeof input[i], "%s", ct_test_shared_path("%s", mc->input));
  int rc = ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s' %s",
                            ct_test_shared_path("models/%s/model.onnx", mc->dir), top[i], mc->transform_opts);
  ck_assert_msg(rc == 0, "%s: transform: %s", mc->dir, out);
  const char *files[1] = {input[i]};
  ck_assert_msg(ct_test_calibrate(top[i], files, 1, CT_CALIB_MAX, 0, calib[i], err, sizeof err), "%s: %s", mc->dir, err);
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' -o '%s'", top[i], calib[i],
                        tpu[i]);
  ck_assert_msg(rc == 0, "%s: lower: %s", mc->dir, out);
}

/* Sweep chip k (tests/testutil.h ct_test_sweep_chip). */
static const char *sweep_chip(int k) {
  const char *p = ct_test_sweep_chip(k, "dm");
  ck_assert(p);
  return p;
}

/* Deploys `model opts` with --compare-all; asserts exit 0, at least `min` tensors compared
 * and none differing; prints the summary line. */
static void deploy_exact(const char *model, const char *opts, const char *chip, const char *in, const char *tag, int min) {
  char out[8192], chipopt[700] = "";
  if (chip) snprintf(chipopt, sizeof chipopt, "--chip '%s'", chip);
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s %s -o '%s' --test-input '%s' --compare-all", model, opts,
                            chipopt, ct_test_tmp_path(tag), in);
  int compared = -1, differ = -1;
  const char *m = strstr(out, "--compare-all: ");
  ck_assert_msg(rc == 0 && m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2,
                "%s: deploy exited %d: %s", tag, rc, out);
  ck_assert_msg(compared >= min && differ == 0, "%s: %s", tag, out);
  const char *line = strstr(out, "deploy ");
  printf("%s\n", line ? line : out);
}

START_TEST(test_models) {
  int i = _i;
  prepare(i);
  char tag[64];
  snprintf(tag, sizeof tag, "%s.ctpu", cases[i].tag);
  deploy_exact(tpu[i], "", NULL, input[i], tag, 20);
  for (size_t k = 0; k < (i < 2 ? 2 : 1); k++) { /* the larger models on one sweep chip (test time) */
    snprintf(tag, sizeof tag, "%s_sweep%d.ctpu", cases[i].tag, sweep[k]);
    deploy_exact(tpu[i], "", sweep_chip(sweep[k]), input[i], tag, 20);
  }
  if (i == 0 || i == 2) { /* the 16-bit LUT (lower --lut-input 16): i16 Conv results, 257-entry tables */
    char tpu16[700], out[8192];
    snprintf(tpu16, sizeof tpu16, "%s16.tpu", top[i]);
    int rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' --lut-input 16 -o '%s'",
                              top[i], calib[i], tpu16);
    ck_assert_msg(rc == 0, "%s: lower --lut-input 16: %s", cases[i].dir, out);
    char *text = ct_test_read_file(tpu16, NULL);
    ck_assert_msg(text && strstr(text, "xi16 !quant"), "%s: no i16 LUT input", cases[i].dir);
    free(text);
    snprintf(tag, sizeof tag, "%s_lut16.ctpu", cases[i].tag);
    deploy_exact(tpu16, "", NULL, input[i], tag, 20);
    snprintf(tag, sizeof tag, "%s_lut16_sweep%d.ctpu", cases[i].tag, sweep[0]);
    deploy_exact(tpu16, "", sweep_chip(sweep[0]), input[i], tag, 20);
  }
  { /* BF16: float CONV / MATMUL / ELTWISE (Div too) / POOL, ConvTranspose, the function unit
     * (SiLU, Sigmoid, HardSigmoid, HardSwish, Exp), LayerNorm, Softmax — bit-exact too */
    char bf[700], out[8192];
    snprintf(bf, sizeof bf, "%s_bf16.tpu", top[i]);
    int rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize BF16 -o '%s'", top[i], bf);
    ck_assert_msg(rc == 0, "%s: lower BF16: %s", cases[i].dir, out);
    snprintf(tag, sizeof tag, "%s_bf16.ctpu", cases[i].tag);
    deploy_exact(bf, "", NULL, input[i], tag, 20);
    if (i == 2) { /* rec in BF16 does not fit chip 11 (a Conv tile needs 475 KiB: exit 4) */
      snprintf(tag, sizeof tag, "%s_bf16_sweep%d.ctpu", cases[i].tag, sweep[1]);
      deploy_exact(bf, "", sweep_chip(sweep[1]), input[i], tag, 20);
    }
  }
  if (i == 0) { /* the same from the Top module, lowered by deploy */
    char opts[4096];
    snprintf(opts, sizeof opts, "--quantize INT8 --calibration-table '%s'", calib[i]);
    deploy_exact(top[i], opts, NULL, input[i], "det_from_top.ctpu", 20);
  }
  if (i == 1) { /* straight from the ONNX model (no preprocessing: a tensor input) */
    char opts[4096];
    snprintf(opts, sizeof opts, "--quantize INT8 --calibration-table '%s'", calib[i]);
    deploy_exact(ct_test_shared_path("models/%s/model.onnx", cases[i].dir), opts, NULL, input[i], "uf_from_onnx.ctpu", 20);
  }
}
END_TEST

/* MobileNetV2 (fp32, 96×96) in BF16, F16 and F32: its Clips end at bounds bf16 / f16 cannot
 * hold (3.4291…), so the float clamp bound (act_hi:zp_out) is the bound rounded to the result
 * type — bit-exact all the same, on the default chip (dp and one layer per group) and sweep
 * chip 4. */
START_TEST(test_mnv2_float) {
  char out[8192], top2[700], mod[720], tag[64], in[700];
  snprintf(top2, sizeof top2, "%s", ct_test_tmp_path("mf.top"));
  snprintf(in, sizeof in, "%s", ct_test_shared_path("images/imagenet-sample/n01440764_tench.JPEG"));
  int rc = ct_test_run_ctpu(out, sizeof out,
                            "transform '%s' -o '%s' --input-shapes input:1x3x96x96 --mean 123.675,116.28,103.53 "
                            "--scale 0.017125,0.017507,0.017429",
                            ct_test_shared_path("models/mobilenetv2-fp32-dequant-from-qdq/model.onnx"), top2);
  ck_assert_msg(rc == 0, "transform: %s", out);
  static const char *modes[] = {"BF16", "F16", "F32"};
  for (int m = 0; m < 3; m++) {
    snprintf(mod, sizeof mod, "%s_%s.tpu", top2, modes[m]);
    rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s -o '%s'", top2, modes[m], mod);
    ck_assert_msg(rc == 0, "lower %s: %s", modes[m], out);
    char *text = ct_test_read_file(mod, NULL);
    ck_assert_msg(text && strstr(text, "act_max = 3.42910"), "%s: no Clip bound 3.4291 fused into a Conv", modes[m]);
    free(text);
    snprintf(tag, sizeof tag, "mf_%s.ctpu", modes[m]);
    deploy_exact(mod, "", NULL, in, tag, 15);
    snprintf(tag, sizeof tag, "mf_%s_none.ctpu", modes[m]);
    deploy_exact(mod, "--layer-group none", NULL, in, tag, 60);
    snprintf(tag, sizeof tag, "mf_%s_sweep%d.ctpu", modes[m], sweep[0]);
    deploy_exact(mod, "", sweep_chip(sweep[0]), in, tag, 10);
  }
}
END_TEST

/* Usage errors of the lowering options and a chip whose LMEM is too small. */
START_TEST(test_errors) {
  char out[8192];
  const char *prog = ct_test_tmp_path("dm_err.ctpu");
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s'", top[0], prog);
  ck_assert_msg(rc == 3 && strstr(out, "Tpu module"), "Top without --quantize: %d %s", rc, out);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --quantize INT8 -o '%s'", top[0], prog);
  ck_assert_msg(rc == 2 && strstr(out, "calibration table"), "INT8 without a table: %d %s", rc, out);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --quantize INT8 -o '%s'", tpu[0], prog);
  ck_assert_msg(rc == 2 && strstr(out, "already a Tpu module"), "--quantize on a Tpu module: %d %s", rc, out);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --quantize INT9 -o '%s'", top[0], prog);
  ck_assert_msg(rc == 2 && strstr(out, "INT9"), "bad mode: %d %s", rc, out);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --input-shapes x:1x3x32x32 -o '%s'", tpu[0], prog);
  ck_assert_msg(rc == 2 && strstr(out, "ONNX"), "--input-shapes on a Tpu module: %d %s", rc, out);
  static const char *const tiny[] = {"{\"name\": \"tiny\", \"lmem.bytes\": 16384, \"lmem.banks\": 4}",
                                     "{\"name\": \"tiny24\", \"lmem.bytes\": 24576, \"lmem.banks\": 4}"};
  for (int k = 0; k < 2; k++) {
    const char *chip = ct_test_tmp_path(k ? "dm_tiny24.json" : "dm_tiny.json");
    ck_assert(ct_test_write_file(chip, tiny[k], strlen(tiny[k])));
    rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --chip '%s' -o '%s'", tpu[0], chip, prog);
    ck_assert_msg(rc == 4 && strstr(out, "layer \"") && strstr(out, "bytes") && (k || strstr(out, "16384")),
                  "too small LMEM: %d %s", rc, out);
    ck_assert_msg(!ct_test_file_exists(prog), "a failed deploy wrote %s", prog);
  }
}
END_TEST

static void setup(void) { prepare(0); }

static Suite *suite(void) {
  Suite *s = suite_create("deploy_models");
  TCase *tc = tcase_create("models");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_models, 0, N_MODELS);
  tcase_add_test(tc, test_mnv2_float);
  suite_add_tcase(s, tc);
  TCase *te = tcase_create("errors");
  tcase_set_timeout(te, 120);
  tcase_add_unchecked_fixture(te, setup, NULL);
  tcase_add_test(te, test_errors);
  suite_add_tcase(s, te);
  return s;
}

int main(void) {
  ct_test_require_shared("test_deploy_models");
  return ct_test_run_suite(suite());
}
