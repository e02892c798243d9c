/* test_deploy_sweep.c: every shared model lowered to INT8
 * deploys with `ctpu deploy --compare-all` and every stored tensor equals the Tpu reference
 * bit for bit, on the default chip and on all 32 sweep chips (the formula of test_deploy /
 * test_backend_models: MXU 8×8 to 64×64 and 16×64, LMEM 256 KiB to 4 MiB, 4 to 32 banks, DDR
 * 8 to 128 B/cycle, WS and OS, 1 or 2 load / store engines). Under AddressSanitizer only
 * every 8th sweep chip runs (CI time). One lowering per model is shared by its chips; small
 * inputs where the model allows (det 64×64, MobileNetV2 96×96, where the fp32 model's
 * clipped Requant after GlobalAveragePool saturates). A deploy
 * that had to hold LMEM banks back (the fallback when the planner's reservation for tables
 * and scratch was short, lg_reserve.c) fails the test too.
 *
 * The models split into two parts so CTest runs them in parallel: CT_SWEEP_PART=0 or 1 (unset:
 * all). Calibration tables are built in-process (tests/lower_calib.c, max) from the test
 * input. Needs ../shared. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lower_calib.h"
#include "tests/testutil.h"

#define TV "--mean 123.675,116.28,103.53 --scale 0.017125,0.017507,0.017429"
#define IMG "images/imagenet-sample/n01440764_tench.JPEG"

typedef struct sweep_case {
  const char *dir, *tag;
  const char *transform_opts; /* --input-shapes and preprocessing */
  const char *input;          /* under ../shared: calibration and test input */
  bool calibrate;             /* float model: a calibration table from the input (else QDQ scales) */
  int part;                   /* CTest part (CT_SWEEP_PART) */
} sweep_case;

static const sweep_case cases[] = {
    {"ppocrv4-rec", "rec", "", "models/ppocrv4-rec/test_data_set_0/input_0.pb", true, 0},
    {"fmnist-rescnn", "fm", "", "models/fmnist-rescnn/test_data_set_0/input_0.pb", true, 0},
    {"ppocrv4-det", "det", "--input-shapes x:1x3x64x64 --mean 123.675,116.28,103.53 --scale 0.01712,0.0175,0.01743",
     "images/misc/skimage_coffee.jpg", true, 0},
    {"ultraface-rfb-320", "uf", "", "models/ultraface-rfb-320/test_data_set_0/input_0.pb", true, 0},
    {"yolox-nano", "yx", "", "models/yolox-nano/test_data_set_0/input_0.pb", true, 1},
    {"mobilenetv2-fp32-dequant-from-qdq", "mf", "--input-shapes input:1x3x96x96 " TV, IMG, true, 1},
    {"mobilenetv2-torchvision-qdq-int8", "mq", "--input-shapes input:1x3x96x96 " TV, IMG, false, 1},
};

#define N_MODELS ((int)(sizeof cases / sizeof cases[0]))
#define N_SWEEP 32
#if defined(__SANITIZE_ADDRESS__)
#define SWEEP_STEP 8 /* ASan: sweep chips 0, 8, 16, 24 */
#else
#define SWEEP_STEP 1
#endif

/* Sweep chip k (tests/testutil.h ct_test_sweep_chip). */
static const char *sweep_chip(int k) {
  const char *p = ct_test_sweep_chip(k, "ds");
  ck_assert(p);
  return p;
}

/* Transforms, calibrates (max, float models) and lowers model i to INT8 into tpu. */
static void prepare(int i, char *tpu, size_t n, char *input, size_t ni) {
  const sweep_case *mc = &cases[i];
  char out[8192], err[512], name[64], top[600], calib[620];
  snprintf(name, sizeof name, "%s.top", mc->tag), snprintf(top, sizeof top, "%s", ct_test_tmp_path(name));
  snprintf(name, sizeof name, "%s.tpu", mc->tag), snprintf(tpu, n, "%s", ct_test_tmp_path(name));
  snprintf(calib, sizeof calib, "%s.calib", top);
  snprintf(input, ni, "%s", ct_test_shared_path("%s", mc->input));
  int rc = ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s' %s",
                            ct_test_shared_path("models/%s/model.onnx", mc->dir), top, mc->transform_opts);
  ck_assert_msg(rc == 0, "%s: transform: %s", mc->dir, out);
  char copt[700] = "";
  if (mc->calibrate) {
    const char *files[1] = {input};
    ck_assert_msg(ct_test_calibrate(top, files, 1, CT_CALIB_MAX, 0, calib, err, sizeof err), "%s: %s", mc->dir, err);
    snprintf(copt, sizeof copt, "--calibration-table '%s'", calib);
  }
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 %s -o '%s'", top, copt, tpu);
  ck_assert_msg(rc == 0, "%s: lower: %s", mc->dir, out);
}

/* Estimated ÷ simulated cycles per group over the chips of one model (OUT.groups.csv). */
typedef struct agreement {
  int groups, within; /* within 15 % */
  double lo, hi;
  char worst[400];
  double chip_min;    /* the lowest per-chip share of groups within 15 % */
  int chip_min_k;     /* its chip */
} agreement;

static void add_ratios(agreement *a, const char *csv, int k) {
  double r[1024];
  char worst[300];
  int n = ct_test_group_ratios(csv, r, 1024, worst, sizeof worst), in = 0;
  for (int i = 0; i < n && i < 1024; i++) in += r[i] >= 0.85 && r[i] <= 1.15;
  if (n > 0 && (a->groups == 0 || (double)in / n < a->chip_min)) a->chip_min = (double)in / n, a->chip_min_k = k;
  for (int i = 0; i < n && i < 1024; i++) {
    a->groups++, a->within += r[i] >= 0.85 && r[i] <= 1.15;
    if (a->groups == 1 || r[i] < a->lo) a->lo = r[i];
    if (a->groups == 1 || r[i] > a->hi) a->hi = r[i];
    if (r[i] < 0.85 || r[i] > 1.15) snprintf(a->worst, sizeof a->worst, "chip %d: %s", k, worst);
  }
}

/* Deploys tpu on chip k (-1: default) with --compare-all; true when it exits 0, compares at
 * least one tensor, none differs and no bank was held back. Prints a line on failure. Adds
 * the groups' estimated / simulated cycles to a. */
static bool deploy_exact(const char *tpu, const char *in, const char *tag, int k, agreement *a) {
  char out[8192], chipopt[700] = "", prog[64];
  if (k >= 0) snprintf(chipopt, sizeof chipopt, "--chip '%s'", sweep_chip(k));
  snprintf(prog, sizeof prog, "%s_%d.ctpu", tag, k);
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s -o '%s' --test-input '%s' --compare-all", tpu, chipopt,
                            ct_test_tmp_path(prog), in);
  int compared = -1, differ = -1;
  const char *m = strstr(out, "--compare-all: ");
  bool ok = rc == 0 && m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2 &&
            compared >= 1 && differ == 0 && !strstr(out, "held back");
  if (!ok) printf("%s chip %d: exit %d: %s\n", tag, k, rc, out);
  char csv[700];
  snprintf(csv, sizeof csv, "%s.groups.csv", ct_test_tmp_path(prog));
  if (ok) add_ratios(a, csv, k);
  return ok;
}

START_TEST(test_sweep) {
  int i = _i;
  const char *part = getenv("CT_SWEEP_PART");
  if (part && *part && atoi(part) != cases[i].part) return;
  char tpu[600], in[600];
  prepare(i, tpu, sizeof tpu, in, sizeof in);
  int ok = 0, n = 0;
  char bad[512] = "";
  agreement a = {0};
  for (int k = -1; k < N_SWEEP; k += k < 0 ? 1 : SWEEP_STEP, n++) {
    if (deploy_exact(tpu, in, cases[i].tag, k, &a)) ok++;
    else snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %d", k);
  }
  printf("deploy sweep %s: %d/%d chips bit-exact (default + sweep step %d)%s%s\n", cases[i].tag, ok, n, SWEEP_STEP,
         *bad ? "; failing chips:" : "", bad);
  ck_assert_msg(ok == n, "%s: %d of %d chips not bit-exact:%s", cases[i].tag, n - ok, n, bad);
  /* the planner's cost model against the cmodel (docs/pipeline.md): at least 99 % of the
   * groups within 15 %, none off by more than 30 % */
  printf("cost agreement %s: %d groups, %d within 15 %%, est/sim %.3f .. %.3f, lowest chip %d: %.3f%s%s\n", cases[i].tag,
         a.groups, a.within, a.lo, a.hi, a.chip_min_k, a.chip_min, *a.worst ? "; e.g. " : "", a.worst);
  ck_assert_msg(a.groups > 0 && a.within >= 0.99 * a.groups && a.lo >= 0.7 && a.hi <= 1.3,
                "%s: estimated / simulated cycles: %d of %d groups within 15 %%, range %.3f .. %.3f (%s)", cases[i].tag,
                a.within, a.groups, a.lo, a.hi, a.worst);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy_sweep");
  TCase *tc = tcase_create("sweep");
  tcase_set_timeout(tc, 900);
  tcase_add_loop_test(tc, test_sweep, 0, N_MODELS);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  ct_test_require_shared("test_deploy_sweep");
  return ct_test_run_suite(suite());
}
