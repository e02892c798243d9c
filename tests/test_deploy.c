/* test_deploy.c: `ctpu deploy` end to end on fmnist-rescnn: transform, calibrate in-process on
 * Fashion-MNIST test images (tests/lower_calib.c), lower to INT8, then plan + codegen + cmodel
 * run with --compare-all on the default chip (none, greedy, dp) and the 32 sweep chips of
 * test_backend_models (dp): every stored tensor must equal the Tpu reference bit for bit; the
 * same for MobileNetV2 QDQ-INT8 on the default chip and 3 sweep chips. Also
 * the BF16 / F16 / F32 lowerings of fmnist-rescnn, bit-exact too, and the error paths (a Top
 * module, usage). Needs ../shared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "io/dataset.h"
#include "ir/text.h"
#include "tests/lower_calib.h"
#include "tests/testutil.h"

#define N_CALIB 8
#define N_SWEEP 32

static char top[600], tpu[600], bf16[600], sample[N_CALIB][600];

/* Writes the first N_CALIB preprocessed images of the data set as .h5 inputs. */
static void write_samples(void) {
  ct_graph *g = NULL;
  ct_dataset *ds = NULL;
  ct_diag d;
  ck_assert_msg(ct_ir_load(top, &g, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_dataset_open(ct_test_shared_path("datasets/fashion-mnist-test.h5"), g, &ds, &d) == CT_OK, "%s", d.msg);
  for (int i = 0; i < N_CALIB; i++) {
    ct_tensor_list l;
    ct_tensor_list_init(&l);
    ck_assert_msg(ct_dataset_load(ds, i, &l, &d) == CT_OK, "%s", d.msg);
    char name[64];
    snprintf(name, sizeof name, "sample%d.h5", i);
    snprintf(sample[i], sizeof sample[i], "%s", ct_test_tmp_path(name));
    ck_assert_msg(ct_h5_write(sample[i], l.items, l.n, &d) == CT_OK, "%s", d.msg);
    ct_tensor_list_free(&l);
  }
  ct_dataset_free(ds);
  ct_graph_free(g);
}

static void setup(void) {
  char out[8192], err[512], table[700];
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("fm.top"));
  snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path("fm.tpu"));
  snprintf(bf16, sizeof bf16, "%s", ct_test_tmp_path("fm_bf16.tpu"));
  snprintf(table, sizeof table, "%s.calib", top);
  int rc = ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s' --mean 72.93 --scale 0.0111092595",
                            ct_test_shared_path("models/fmnist-rescnn/model.onnx"), top);
  ck_assert_msg(rc == 0, "transform: %s", out);
  write_samples();
  const char *files[N_CALIB];
  for (int i = 0; i < N_CALIB; i++) files[i] = sample[i];
  ck_assert_msg(ct_test_calibrate(top, files, N_CALIB, CT_CALIB_KLD, 0.9999, table, err, sizeof err), "%s", err);
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' -o '%s'", top, table, tpu);
  ck_assert_msg(rc == 0, "lower INT8: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize BF16 -o '%s'", top, bf16);
  ck_assert_msg(rc == 0, "lower BF16: %s", out);
}

/* Every group the program ran (OUT.groups.csv rows with sim_cycles) must have its estimated
 * cycles within 15 % of the simulated ones: the planner's pipeline model (lg_cost.c) and the
 * schedule the codegen emits (cg_sched.c) agree — a serial schedule of a pipelined group
 * lands near 0.5-0.7. */
static void check_agreement(const char *csv, const char *tag) {
  double r[512];
  char worst[512];
  int rows = ct_test_group_ratios(csv, r, 512, worst, sizeof worst);
  ck_assert_msg(rows > 0, "%s: no simulated groups in %s", tag, csv);
  for (int i = 0; i < rows && i < 512; i++)
    ck_assert_msg(r[i] >= 0.85 && r[i] <= 1.15, "%s: estimated / simulated cycles %.4f outside [0.85, 1.15]: %s", tag,
                  r[i], worst);
}

/* Deploys on chip (NULL = default) with strategy s and input sample i; asserts bit-exact. */
static void deploy_module(const char *module, const char *chip, const char *s, int i, const char *tag) {
  char out[8192], prog[700], chipopt[700] = "";
  snprintf(prog, sizeof prog, "%s", ct_test_tmp_path(tag));
  if (chip) snprintf(chipopt, sizeof chipopt, "--chip '%s'", chip);
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s --layer-group %s -o '%s' --test-input '%s' --compare-all", module,
                            chipopt, s, prog, sample[i]);
  ck_assert_msg(rc == 0, "%s: deploy exited %d: %s", tag, rc, out);
  int compared = -1, differ = -1;
  const char *m = strstr(out, "--compare-all: ");
  ck_assert_msg(m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2, "%s: %s",
                tag, out);
  ck_assert_msg(compared >= 3 && differ == 0, "%s: %s", tag, out);
  char csv[800];
  snprintf(csv, sizeof csv, "%s.groups.csv", prog);
  char *text = ct_test_read_file(csv, NULL);
  ck_assert_msg(text && strstr(text, "sim_cycles"), "%s: no groups CSV", tag);
  free(text);
  check_agreement(csv, tag);
  const char *line = strstr(out, "deploy ");
  printf("%s\n", line ? line : out);
}

static void deploy_exact(const char *chip, const char *s, int i, const char *tag) { deploy_module(tpu, chip, s, i, tag); }

START_TEST(test_default_chip) {
  static const char *strategies[] = {"none", "greedy", "dp"};
  for (int k = 0; k < 3; k++) {
    char tag[64];
    snprintf(tag, sizeof tag, "fm_%s.ctpu", strategies[k]);
    deploy_exact(NULL, strategies[k], k, tag);
  }
}
END_TEST

/* BF16 / F16 / F32 lowerings (float CONV / MATMUL in the ISA's order, float ELTWISE, POOL,
 * Relu): every stored tensor bit-exact on the default chip (none, dp) and two sweep chips
 * (small LMEM: tiles and output-channel cuts; 16×16 OS), the cost model within 15 %. */
START_TEST(test_float_modes) {
  static const char *modes[] = {"BF16", "F16", "F32"};
  char out[8192], mod[700], chip[2][700];
  for (int k = 0; k < 2; k++) snprintf(chip[k], sizeof chip[k], "%s", ct_test_sweep_chip(k ? 11 : 4, "fmf"));
  for (int m = 0; m < 3; m++) {
    char name[64], tag[64];
    snprintf(name, sizeof name, "fm_%s.tpu", modes[m]);
    snprintf(mod, sizeof mod, "%s", m ? ct_test_tmp_path(name) : bf16);
    if (m) {
      int rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize %s -o '%s'", top, modes[m], mod);
      ck_assert_msg(rc == 0, "lower %s: %s", modes[m], out);
    }
    for (int v = 0; v < 4; v++) {
      snprintf(tag, sizeof tag, "fm_%s_%d.ctpu", modes[m], v);
      deploy_module(mod, v >= 2 ? chip[v - 2] : NULL, v == 0 ? "none" : "dp", (m + v) % N_CALIB, tag);
    }
  }
}
END_TEST

/* The sweep of test_backend_models (sweep_chip there), as dotted-key JSON. */
START_TEST(test_sweep_chip) {
  int k = _i;
  char tag[64];
  char chip[700]; /* ct_test_tmp_path's storage is a ring: copy */
  const char *p = ct_test_sweep_chip(k, "fm");
  ck_assert(p);
  snprintf(chip, sizeof chip, "%s", p);
  snprintf(tag, sizeof tag, "fm_sweep%d.ctpu", k);
  deploy_exact(chip, "dp", k % N_CALIB, tag);
}
END_TEST

/* Chips with 1–4 DMA load and 1–4 store engines (64 KiB LMEM in 16 banks: tiled, pipelined
 * groups): bit-exact, and every group's estimate within 15 % of its simulated cycles — the
 * codegen keeps the pipeline and spreads a tile's transfers over the engine slots the planner
 * costs (cg_sched.h CG_DMA_SLOTS). */
START_TEST(test_dma_engines) {
  int nl = 1 + _i / 4, ns = 1 + _i % 4;
  char json[256], name[64], tag[64], chip[700];
  snprintf(json, sizeof json,
           "{\"name\": \"dma%d%d\", \"lmem.bytes\": 65536, \"lmem.banks\": 16, \"dma.load_engines\": %d, "
           "\"dma.store_engines\": %d}",
           nl, ns, nl, ns);
  snprintf(name, sizeof name, "dma%d%d.json", nl, ns);
  snprintf(chip, sizeof chip, "%s", ct_test_tmp_path(name));
  ck_assert(ct_test_write_file(chip, json, strlen(json)));
  snprintf(tag, sizeof tag, "fm_dma%d%d.ctpu", nl, ns);
  deploy_exact(chip, "dp", _i % N_CALIB, tag);
}
END_TEST

START_TEST(test_errors) {
  char out[8192];
  const char *prog = ct_test_tmp_path("err.ctpu");
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s'", top, prog);
  ck_assert_msg(rc == 3 && strstr(out, "Tpu module"), "Top module: %d %s", rc, out);
  ck_assert_msg(!ct_test_file_exists(prog), "a failed deploy wrote %s", prog);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s'", tpu);
  ck_assert_int_eq(rc, 2);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s' --compare-all", tpu, prog);
  ck_assert_int_eq(rc, 2);
}
END_TEST

/* --test-reference: the program's output against the float Top inference by cosine /
 * euclidean similarity (--tolerance, model_deploy's); an unreachable tolerance fails with exit 1
 * naming the output and leaves nothing behind. */
START_TEST(test_reference_tolerance) {
  char out[8192], ref[700], prog[700];
  snprintf(ref, sizeof ref, "%s", ct_test_tmp_path("fm_float.h5"));
  snprintf(prog, sizeof prog, "%s", ct_test_tmp_path("fm_ref.ctpu"));
  int rc = ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s'", top, sample[0], ref);
  ck_assert_msg(rc == 0, "infer: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s' --test-input '%s' --test-reference '%s'", tpu, prog, sample[0], ref);
  double cos = 0;
  const char *m = strstr(out, "cosine ");
  ck_assert_msg(rc == 0 && m && sscanf(m, "cosine %lf", &cos) == 1 && cos > 0.99 && cos <= 1.0, "%d %s", rc, out);
  remove(prog);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s' --test-input '%s' --test-reference '%s' --tolerance 1,1", tpu,
                        prog, sample[0], ref);
  ck_assert_msg(rc == 1 && strstr(out, "FAIL") && strstr(out, "1 outputs"), "%d %s", rc, out);
  ck_assert_msg(!ct_test_file_exists(prog), "a failed deploy wrote %s", prog);
  rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s' --test-input '%s' --test-reference '%s' --tolerance 2,x", tpu,
                        prog, sample[0], ref);
  ck_assert_msg(rc == 2 && strstr(out, "--tolerance"), "%d %s", rc, out);
}
END_TEST

/* `ctpu sim --dump-all` writes every stored tensor under the name, dtype, shape and quant
 * attributes of `ctpu infer MODEL.tpu --dump-all`: the two files compare directly, exactly
 * (the program's .tensor records describe them); the asm text round-trips the records. */
START_TEST(test_sim_dumps_match_infer) {
  char out[16384], prog[700], sd[700], rd[700], s[700], asmf[700], prog2[700];
  snprintf(prog, sizeof prog, "%s", ct_test_tmp_path("fm_dump.ctpu"));
  snprintf(sd, sizeof sd, "%s", ct_test_tmp_path("fm_sim_all.h5"));
  snprintf(rd, sizeof rd, "%s", ct_test_tmp_path("fm_ref_all.h5"));
  snprintf(s, sizeof s, "%s", ct_test_tmp_path("fm_dump.s"));
  snprintf(asmf, sizeof asmf, "%s", ct_test_tmp_path("fm_dump_o.h5"));
  snprintf(prog2, sizeof prog2, "%s", ct_test_tmp_path("fm_dump2.ctpu"));
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' --layer-group none -o '%s'", tpu, prog);
  ck_assert_msg(rc == 0, "deploy: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "sim '%s' --input '%s' -o '%s' --dump-all '%s'", prog, sample[1], asmf, sd);
  ck_assert_msg(rc == 0, "sim: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s' --dump-all '%s'", tpu, sample[1], asmf, rd);
  ck_assert_msg(rc == 0, "infer: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' --exact", rd, sd);
  int n = -1, passed = -1, failed = -1;
  const char *m = strstr(out, "compare: ");
  ck_assert_msg(rc == 0 && m && sscanf(m, "compare: %d tensors, %d passed, %d failed", &n, &passed, &failed) == 3 &&
                n >= 10 && passed == n && failed == 0, "%d %s", rc, out);
  rc = ct_test_run_ctpu(out, sizeof out, "disasm '%s' -o '%s'", prog, s);
  ck_assert_msg(rc == 0, "disasm: %s", out);
  char *text = ct_test_read_file(s, NULL);
  ck_assert_msg(text && strstr(text, "\n.tensor "), "no .tensor record in the disassembly");
  free(text);
  rc = ct_test_run_ctpu(out, sizeof out, "asm '%s' -o '%s'", s, prog2);
  ck_assert_msg(rc == 0, "asm: %s", out);
  size_t n1 = 0, n2 = 0;
  char *a = ct_test_read_file(prog, &n1), *b = ct_test_read_file(prog2, &n2);
  ck_assert_msg(a && b && n1 == n2 && !memcmp(a, b, n1), "asm(disasm(P)) differs from P");
  free(a), free(b);
}
END_TEST

/* `ctpu sim --input` takes the images `deploy --test-input` takes (one input loader): with
 * --model (the module the program was compiled from) the image is preprocessed as its Input op
 * says and the outputs equal the Tpu reference's on the same image (infer, bit for bit); without
 * it the image is refused, naming --model. */
START_TEST(test_sim_image_input) {
  char out[8192], prog[700], got[700], want[700], img[700];
  snprintf(prog, sizeof prog, "%s", ct_test_tmp_path("fm_img.ctpu"));
  snprintf(got, sizeof got, "%s", ct_test_tmp_path("fm_img_sim.h5"));
  snprintf(want, sizeof want, "%s", ct_test_tmp_path("fm_img_ref.h5"));
  snprintf(img, sizeof img, "%s", ct_test_shared_path("images/misc/darknet_dog.jpg"));
  int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' -o '%s' --test-input '%s'", tpu, prog, img);
  ck_assert_msg(rc == 0, "deploy --test-input image: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "sim '%s' --input '%s' -o '%s'", prog, img, got);
  ck_assert_msg(rc == 3 && strstr(out, "--model") && !ct_test_file_exists(got), "sim image without --model: %d %s", rc, out);
  rc = ct_test_run_ctpu(out, sizeof out, "sim '%s' --input '%s' --model '%s' -o '%s'", prog, img, tpu, got);
  ck_assert_msg(rc == 0, "sim image --model: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s'", tpu, img, want);
  ck_assert_msg(rc == 0, "infer image: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' --exact", want, got);
  ck_assert_msg(rc == 0 && strstr(out, "1 passed, 0 failed"), "sim vs infer on the image: %d %s", rc, out);
}
END_TEST

/* The prefetched LOADs of program `ctpu` (debug step -1, docs/pipeline.md "Prefetch across
 * the barrier"): each follows the previous group's instructions and precedes the SYNC before
 * the rest of its own group. Returns how many there are. */
static int check_prefetch(const char *ctpu) {
  char out[4096], s[600];
  snprintf(s, sizeof s, "%s.s", ctpu);
  int rc = ct_test_run_ctpu(out, sizeof out, "disasm '%s' -o '%s'", ctpu, s);
  ck_assert_msg(rc == 0, "disasm: %s", out);
  size_t n = 0;
  char *text = ct_test_read_file(s, &n);
  ck_assert(text);
  int found = 0, prev = -1, pending = -1; /* group of the last instruction; a prefetched group awaiting its SYNC */
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    const char *hash = strchr(line, '#'), *c = hash ? strstr(hash, " g") : NULL;
    int g = -1, t = 0, st = 0;
    if (!strncmp(line, "SYNC", 4)) {
      pending = -1;
      continue;
    }
    if (!c || sscanf(c, " g%d t%d s%d", &g, &t, &st) != 3) continue;
    if (st == -1 && !strncmp(line, "LOAD", 4)) {
      ck_assert_msg(g == prev + 1 || (pending == g && prev == g), "prefetched LOAD of group %d after group %d: %s", g, prev, line);
      found++, pending = g, prev = g;
      continue;
    }
    ck_assert_msg(pending < 0 || g != pending, "group %d runs before the SYNC after its prefetch: %s", g, line);
    prev = g;
  }
  free(text);
  return found;
}

/* Does the comma list after `key=` in line hold semaphore n? */
static bool sem_in(const char *line, const char *key, int n) {
  const char *p = strstr(line, key);
  if (!p) return false;
  p += strlen(key);
  for (;;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p) return false;
    if (v == n) return true;
    if (*end != ',') return false;
    p = end + 1;
  }
}

/* The streamed LOADs of program `ctpu` (semaphore 30, docs/pipeline.md "Streaming resident
 * LOADs"): as many signals as waits, each wait after its signal, and LOADs interleaved with the
 * compute (some signalling LOAD after a compute instruction of its group). Returns the signals. */
static int check_stream(const char *ctpu) {
  char s[600];
  snprintf(s, sizeof s, "%s.s", ctpu); /* written by check_prefetch */
  size_t n = 0;
  char *text = ct_test_read_file(s, &n);
  ck_assert(text);
  int sig = 0, wait = 0, interleaved = 0;
  bool compute_seen = false;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    bool load = !strncmp(line, "LOAD", 4), dma = load || !strncmp(line, "STORE", 5);
    if (!strncmp(line, "SYNC", 4)) compute_seen = false;
    if (load && sem_in(line, "signal=", 30)) sig++, interleaved += compute_seen;
    if (sem_in(line, "wait=", 30)) wait++, ck_assert_msg(wait <= sig, "a wait on semaphore 30 before its signal: %s", line);
    if (!dma && strchr(line, '#')) compute_seen = true;
  }
  free(text);
  ck_assert_int_eq(sig, wait);
  if (sig > 1) ck_assert_msg(interleaved > 0, "streamed LOADs are not interleaved with the compute");
  return sig;
}

/* MobileNetV2 QDQ-INT8 (its own scales) on the default chip and three sweep chips (tight LMEM:
 * 256 KiB, 4 banks; 64×64 OS; 16×64). */
START_TEST(test_mnv2) {
  static const int chips[] = {-1, 0, 3, 22};
  char out[8192], tag[64], chipopt[700] = "";
  char mq[600], mt[600], in[600]; /* the path helpers return ring buffers: copy */
  snprintf(mq, sizeof mq, "%s", ct_test_tmp_path("mq.top"));
  snprintf(mt, sizeof mt, "%s", ct_test_tmp_path("mq.tpu"));
  snprintf(in, sizeof in, "%s", ct_test_shared_path("models/mobilenetv2-torchvision-qdq-int8/test_data_set_0/input_0.pb"));
  int rc = ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'",
                            ct_test_shared_path("models/mobilenetv2-torchvision-qdq-int8/model.onnx"), mq);
  ck_assert_msg(rc == 0, "transform: %s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 -o '%s'", mq, mt);
  ck_assert_msg(rc == 0, "lower: %s", out);
  for (int i = 0; i < 4; i++) {
    int k = chips[i];
    if (k >= 0) {
      const char *p = ct_test_sweep_chip(k, "mq");
      ck_assert(p);
      snprintf(chipopt, sizeof chipopt, "--chip '%s'", p);
    }
    snprintf(tag, sizeof tag, "mq%d.ctpu", k);
    rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s -o '%s' --test-input '%s' --compare-all", mt, chipopt,
                          ct_test_tmp_path(tag), in);
    int compared = -1, differ = -1;
    const char *m = strstr(out, "--compare-all: ");
    ck_assert_msg(rc == 0 && m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2 &&
                  compared >= 5 && differ == 0, "mobilenetv2 chip %d: %d %s", k, rc, out);
    const char *line = strstr(out, "deploy ");
    printf("%s\n", line ? line : out);
    char csv[800];
    snprintf(csv, sizeof csv, "%s.groups.csv", ct_test_tmp_path(tag));
    check_agreement(csv, tag);
    int pf = check_prefetch(ct_test_tmp_path(tag)), sm = check_stream(ct_test_tmp_path(tag));
    if (k < 0) ck_assert_msg(pf > 0 && sm > 1, "mobilenetv2, default chip: %d prefetched LOADs, %d streams", pf, sm);
  }
  /* `ctpu sim` takes the same ONNX TensorProto input as deploy */
  rc = ct_test_run_ctpu(out, sizeof out, "sim '%s' --input '%s' -o '%s'", ct_test_tmp_path("mq-1.ctpu"), in,
                        ct_test_tmp_path("mq_sim.h5"));
  ck_assert_msg(rc == 0 && ct_test_file_exists(ct_test_tmp_path("mq_sim.h5")), "sim .pb: %d %s", rc, out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy");
  TCase *tc = tcase_create("fmnist");
  tcase_set_timeout(tc, 300);
  tcase_add_unchecked_fixture(tc, setup, NULL);
  tcase_add_test(tc, test_default_chip);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_float_modes);
  tcase_add_test(tc, test_reference_tolerance);
  tcase_add_test(tc, test_sim_dumps_match_infer);
  tcase_add_test(tc, test_sim_image_input);
  tcase_add_loop_test(tc, test_sweep_chip, 0, N_SWEEP);
  tcase_add_loop_test(tc, test_dma_engines, 0, 16);
  tcase_add_test(tc, test_mnv2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  ct_test_require_shared("test_deploy");
  return ct_test_run_suite(suite());
}
