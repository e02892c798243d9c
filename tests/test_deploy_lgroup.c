/* test_deploy_lgroup.c: the layer-group planner (lg_*.c) and the codegen (cg_*.c) agree and
 * produce correct, race-free programs — small models built here (tests/onnx_build.c) for
 * each class of disagreement found, transformed, calibrated, lowered to INT8 and deployed
 * with --compare-all under --layer-group dp and none on the default chip and on small-LMEM
 * chips (serial and pipelined groups): every stored tensor bit-exact against the Tpu
 * reference (an independent implementation, ops/tpu_*.c), the cmodel's race check on.
 * Classes: a row-to-row layer (LUT, ELTWISE) whose input tile holds more rows than it
 * computes (another reader's halo, an escaping value's stored rows); two border Casts (program
 * inputs) in GMEM; a border Cast's input held resident while tiles load it again; and deploy
 * refusing a racy program without --test-input (ct_sim_check_order on a hand-written one). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"
#include "isa/asm.h"
#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

/* A random input tensor `name` of shape xs written to path (values 2 · [-1, 1)). */
static void write_input(ob_model *b, const char *name, const int64_t xs[4], const char *path, uint32_t *seed) {
  Onnx__TensorProto *t = ob_tensor(b, name, T_FLOAT, 4, xs);
  int64_t n = xs[0] * xs[1] * xs[2] * xs[3];
  float *v = malloc(sizeof *v * (size_t)n);
  ck_assert_ptr_nonnull(v);
  for (int64_t i = 0; i < n; i++) v[i] = 2 * ob_lcg_unit(seed);
  ob_raw(b, t, v, sizeof *v * (size_t)n);
  free(v);
  ck_assert(ob_write_tensor(t, path));
}

static Onnx__NodeProto *conv(ob_model *b, const char *name, const char *x, const char *w, const char *y, int64_t group,
                             const int64_t k[2], const int64_t pads[4], const int64_t st[2], const int64_t dil[2]) {
  Onnx__NodeProto *n = ob_node(b, "Conv", name, (const char *[]){x, w, NULL}, (const char *[]){y, NULL});
  ob_attr_i(b, n, "group", group), ob_attr_ints(b, n, "kernel_shape", 2, k), ob_attr_ints(b, n, "pads", 4, pads);
  ob_attr_ints(b, n, "strides", 2, st), ob_attr_ints(b, n, "dilations", 2, dil);
  return n;
}

/* x[1,15,27,48] → LeakyRelu → MaxPool(5×5, stride 2, pad top 1) → y0 [1,15,12,22] (its last
 * tile needs input rows up to 26 of 27); x → MatMul(W[48,39]) → y1: the border Cast of x is
 * read in the pool's group and by the MatMul's group, so its tile holds the rows to the end
 * and the LUT reads fewer. */
static void m_lut_pool(ob_model *b, uint32_t *seed) {
  int64_t xs[4] = {1, 15, 27, 48}, ws[2] = {48, 39};
  ob_input(b, "x", T_FLOAT, 4, xs);
  ob_init_rand(b, "w", 2, ws, seed);
  Onnx__NodeProto *n = ob_node(b, "LeakyRelu", "leaky", (const char *[]){"x", NULL}, (const char *[]){"l", NULL});
  ob_attr_f(b, n, "alpha", 0.1f);
  n = ob_node(b, "MaxPool", "pool", (const char *[]){"l", NULL}, (const char *[]){"y0", NULL});
  ob_attr_ints(b, n, "kernel_shape", 2, (int64_t[]){5, 5}), ob_attr_ints(b, n, "strides", 2, (int64_t[]){2, 2});
  ob_attr_ints(b, n, "pads", 4, (int64_t[]){1, 0, 0, 0});
  ob_node(b, "MatMul", "mm", (const char *[]){"x", "w", NULL}, (const char *[]){"y1", NULL});
  ob_output(b, "y0"), ob_output(b, "y1");
}

/* x[1,16,16,16] → Add(HardSwish(x), depthwise 3×3 pad 1 Conv(x)) → y0: x's tile holds the
 * depthwise conv's halo, the LUT reads its middle rows. */
static void m_lut_add_dw(ob_model *b, uint32_t *seed) {
  int64_t xs[4] = {1, 16, 16, 16}, w[4] = {16, 1, 3, 3};
  ob_input(b, "x", T_FLOAT, 4, xs);
  ob_init_rand(b, "w", 4, w, seed);
  conv(b, "dw", "x", "w", "d", 16, (int64_t[]){3, 3}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){1, 1}, (int64_t[]){1, 1});
  ob_node(b, "HardSwish", "hswish", (const char *[]){"x", NULL}, (const char *[]){"h", NULL});
  ob_node(b, "Add", "add", (const char *[]){"h", "d", NULL}, (const char *[]){"y0", NULL});
  ob_output(b, "y0");
}

/* x[1,1,28,22] → t = Conv 4×4 (37) → Tanh → depthwise 6×4 Conv, stride 2, dilation [1, 3]
 * → y0 (its tiles skip rows); t → depthwise 3×3 Conv → y1. */
static void m_lut_strided_dw(ob_model *b, uint32_t *seed) {
  int64_t xs[4] = {1, 1, 28, 22}, w1[4] = {37, 1, 4, 4}, w2[4] = {37, 1, 6, 4}, w3[4] = {37, 1, 3, 3};
  ob_input(b, "x", T_FLOAT, 4, xs);
  ob_init_rand(b, "w1", 4, w1, seed), ob_init_rand(b, "w2", 4, w2, seed), ob_init_rand(b, "w3", 4, w3, seed);
  conv(b, "c1", "x", "w1", "t", 1, (int64_t[]){4, 4}, (int64_t[]){0, 3, 0, 2}, (int64_t[]){1, 1}, (int64_t[]){1, 1});
  ob_node(b, "Tanh", "tanh", (const char *[]){"t", NULL}, (const char *[]){"u", NULL});
  conv(b, "c2", "u", "w2", "y0", 37, (int64_t[]){6, 4}, (int64_t[]){0, 0, 0, 0}, (int64_t[]){2, 2}, (int64_t[]){1, 3});
  conv(b, "c3", "t", "w3", "y1", 37, (int64_t[]){3, 3}, (int64_t[]){1, 1, 0, 2}, (int64_t[]){1, 1}, (int64_t[]){1, 1});
  ob_output(b, "y0"), ob_output(b, "y1");
}

/* x[1,8,40,24] → c = Conv 3×3 pad 1 (8) → y1; c → Conv 1×1 stride 2 (8) → y0: c is stored,
 * so each tile's range of c runs down to where the tile before stopped, and the strided
 * conv skips those rows (a gather whose scratch the planner must reserve). */
static void m_stored_strided(ob_model *b, uint32_t *seed) {
  int64_t xs[4] = {1, 8, 40, 24}, w1[4] = {8, 8, 3, 3}, w2[4] = {8, 8, 1, 1};
  ob_input(b, "x", T_FLOAT, 4, xs);
  ob_init_rand(b, "w1", 4, w1, seed), ob_init_rand(b, "w2", 4, w2, seed);
  conv(b, "c3", "x", "w1", "y1", 1, (int64_t[]){3, 3}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){1, 1}, (int64_t[]){1, 1});
  conv(b, "c1s2", "y1", "w2", "y0", 1, (int64_t[]){1, 1}, (int64_t[]){0, 0, 0, 0}, (int64_t[]){2, 2}, (int64_t[]){1, 1});
  ob_output(b, "y0"), ob_output(b, "y1");
}

/* x[1,67,2,21] → depthwise 3×3 Conv, dilation 2, pads [2, 1, 4, 0] → y [1,67,4,18]: every
 * tile reads the whole input (held resident: loaded once). */
static void m_dw_resident(ob_model *b, uint32_t *seed) {
  int64_t xs[4] = {1, 67, 2, 21}, w[4] = {67, 1, 3, 3};
  ob_input(b, "x", T_FLOAT, 4, xs);
  ob_init_rand(b, "w", 4, w, seed);
  conv(b, "dw", "x", "w", "y", 67, (int64_t[]){3, 3}, (int64_t[]){2, 1, 4, 0}, (int64_t[]){1, 1}, (int64_t[]){2, 2});
  ob_output(b, "y");
}

/* x[1,3,2,2] → GlobalAveragePool → y0, x1[1,2,2,2] → GlobalAveragePool → y1: two program
 * inputs (border Casts in groups of their own). */
static void m_two_inputs(ob_model *b, uint32_t *seed) {
  (void)seed;
  ob_input(b, "x", T_FLOAT, 4, (int64_t[]){1, 3, 2, 2}), ob_input(b, "x1", T_FLOAT, 4, (int64_t[]){1, 2, 2, 2});
  ob_node(b, "GlobalAveragePool", "gap0", (const char *[]){"x", NULL}, (const char *[]){"y0", NULL});
  ob_node(b, "GlobalAveragePool", "gap1", (const char *[]){"x1", NULL}, (const char *[]){"y1", NULL});
  ob_output(b, "y1"), ob_output(b, "y0");
}

typedef void (*model_fn)(ob_model *b, uint32_t *seed);
static const struct {
  const char *name;
  model_fn build;
  int64_t xs[2][4]; /* input shapes ("x", "x1"; N = 0: none) */
  uint32_t seed;    /* weights and inputs (two_inputs: means of both signs, i8 results) */
} models[] = {
    {"lut_pool", m_lut_pool, {{1, 15, 27, 48}}, 1000},
    {"lut_add_dw", m_lut_add_dw, {{1, 16, 16, 16}}, 1001},
    {"lut_strided_dw", m_lut_strided_dw, {{1, 1, 28, 22}}, 1002},
    {"stored_strided", m_stored_strided, {{1, 8, 40, 24}}, 1005},
    {"dw_resident", m_dw_resident, {{1, 67, 2, 21}}, 1003},
    {"two_inputs", m_two_inputs, {{1, 3, 2, 2}, {1, 2, 2, 2}}, 1004},
};

/* Chips: the default; 64 KiB in 4 banks (serial groups, many tiles); 128 KiB in 8 banks
 * (pipelined); a 2 MiB, 64-bank chip with 3 load and 2 store engines, 4-byte bank ports and
 * 8 semaphores (fuzz seed 101538's). */
static const char *chips[] = {
    NULL,
    "{\"name\": \"lg64k\", \"lmem.bytes\": 65536, \"lmem.banks\": 4}",
    "{\"name\": \"lg128k\", \"lmem.bytes\": 131072, \"lmem.banks\": 8, \"dma.load_engines\": 2}",
    "{\"name\": \"fz\", \"mxu.rows\": 16, \"mxu.cols\": 64, \"mxu.dataflow\": \"os\", \"vpu.lanes\": 16, "
    "\"lmem.bytes\": 2097152, \"lmem.banks\": 64, \"lmem.bank_port_bytes\": 4, \"gmem.bytes_per_cycle\": 4, "
    "\"gmem.burst_bytes\": 1, \"dma.load_engines\": 3, \"dma.store_engines\": 2, \"queue.depth\": 64, \"sem.count\": 8}",
};

START_TEST(test_groups_bit_exact) {
  char model[700], in[2][700], top[700], calib[700], tpu[700], list[700], out[8192], name[128];
  const char *m0 = models[_i].name;
  int n_in = models[_i].xs[1][0] ? 2 : 1;
#define TMP(buf, fmt) (snprintf(name, sizeof name, fmt, m0), snprintf(buf, sizeof buf, "%s", ct_test_tmp_path(name)))
  TMP(model, "%s.onnx"), TMP(in[0], "%s_in0.pb"), TMP(in[1], "%s_in1.pb"), TMP(top, "%s.top"), TMP(calib, "%s.calib");
  TMP(tpu, "%s.tpu"), TMP(list, "%s_list.txt");
#undef TMP
  ob_model b;
  ob_init(&b, 13);
  uint32_t seed = models[_i].seed;
  models[_i].build(&b, &seed);
  ck_assert(ob_write(&b, model));
  static const char *names[2] = {"x", "x1"};
  for (int k = 0; k < n_in; k++) write_input(&b, names[k], models[_i].xs[k], in[k], &seed);
  ob_free(&b);
  char line[1500];
  snprintf(line, sizeof line, n_in == 2 ? "%s,%s\n" : "%s\n", in[0], in[1]);
  ck_assert(ct_test_write_file(list, line, strlen(line)));
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "transform '%s' -o '%s'", model, top) == 0, "transform: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "calibrate '%s' --dataset '%s' -o '%s'", top, list, calib) == 0,
                "calibrate: %s", out);
  ck_assert_msg(ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' -o '%s'", top, calib,
                                 tpu) == 0, "lower: %s", out);
  char inputs[1500];
  snprintf(inputs, sizeof inputs, n_in == 2 ? "'%s' '%s'" : "'%s'", in[0], in[1]);
  static const char *strategies[] = {"dp", "none"};
  for (int k = 0; k < (int)(sizeof chips / sizeof chips[0]); k++) {
    char chip[800] = "", cpath[100], prog[160];
    if (chips[k]) {
      snprintf(cpath, sizeof cpath, "%s_chip%d.json", m0, k);
      const char *p = ct_test_tmp_path(cpath);
      ck_assert(ct_test_write_file(p, chips[k], strlen(chips[k])));
      snprintf(chip, sizeof chip, "--chip '%s'", p);
    }
    for (int s = 0; s < 2; s++) {
      snprintf(prog, sizeof prog, "%s_%d_%s.ctpu", m0, k, strategies[s]);
      int rc = ct_test_run_ctpu(out, sizeof out, "deploy '%s' %s --layer-group %s -o '%s' --test-input %s --compare-all",
                                tpu, chip, strategies[s], ct_test_tmp_path(prog), inputs);
      int compared = -1, differ = -1;
      const char *m = strstr(out, "--compare-all: ");
      ck_assert_msg(rc == 0 && m && sscanf(m, "--compare-all: %d stored tensors compared, %d differ", &compared, &differ) == 2,
                    "%s chip %d %s: deploy exited %d: %s", m0, k, strategies[s], rc, out);
      ck_assert_msg(compared >= 1 && differ == 0, "%s chip %d %s: %s", m0, k, strategies[s], out);
    }
  }
}
END_TEST

/* A program whose LOAD of a second tile overwrites the LMEM bytes a POOL of the first tile
 * still reads, with no semaphore between them (the shape of a double-buffer slip): the order
 * check that every deploy runs finds the race without data; with the semaphore it passes. */
START_TEST(test_order_check_finds_race) {
  static const char *fmt =
      ".const w i8 [1, 2, 3, 4, 5, 6, 7, 8, 9] at=0x0\n"
      ".input x 1x1x4x4 i8 0x40 1 0\n"
      ".output y 1x1x4x4 i8 0x80 1 0\n"
      "LOAD dst=0x0 src=@x dtype=i8 n=1 c=1 h=4 w=4 src_sn=16 src_sc=16 src_sh=4 src_sw=1 dst_sn=16 dst_sc=16 dst_sh=4 "
      "dst_sw=1 signal=0\n"
      "LOAD dst=0x100 src=@w dtype=i8 n=1 c=1 h=3 w=3 src_sn=9 src_sc=9 src_sh=3 src_sw=1 dst_sn=9 dst_sc=9 dst_sh=3 "
      "dst_sw=1 signal=1\n"
      "POOL in=0x0 out=0x200 n=1 c=1 ih=4 iw=4 oh=4 ow=4 kh=3 kw=3 stride_h=1 stride_w=1 pad_t=1 pad_l=1 pad_b=1 "
      "pad_r=1 mode=max dt=i8 m=1 s=0 wait=0,1 signal=2%s\n"
      "LOAD dst=0x0 src=@x dtype=i8 n=1 c=1 h=4 w=4 src_sn=16 src_sc=16 src_sh=4 src_sw=1 dst_sn=16 dst_sc=16 dst_sh=4 "
      "dst_sw=1%s\n"
      "STORE dst=@y src=0x200 dtype=i8 n=1 c=1 h=4 w=4 src_sn=16 src_sc=16 src_sh=4 src_sw=1 dst_sn=16 dst_sc=16 dst_sh=4 "
      "dst_sw=1 wait=2%s\n"
      "END\n";
  ct_chip chip;
  ct_chip_default(&chip);
  for (int ordered = 0; ordered < 2; ordered++) {
    char text[4096];
    snprintf(text, sizeof text, fmt, ordered ? ",3" : "", ordered ? " wait=3 signal=4" : "", ordered ? ",4" : "");
    ct_program p;
    ct_diag d;
    ct_diag_clear(&d);
    ct_program_init(&p, ct_chip_signature(&chip));
    ct_status st = ct_asm_parse(text, "race.s", ".", &chip, &p, &d);
    ck_assert_msg(st == CT_OK, "asm: %s", d.msg);
    st = ct_sim_check_order(&chip, &p, &d);
    if (ordered) ck_assert_msg(st == CT_OK, "ordered program: %s", d.msg);
    else ck_assert_msg(st == CT_ERR_CHECK && strstr(d.msg, "race"), "racy program: %d %s", (int)st, d.msg);
    ct_program_free(&p);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy_lgroup");
  TCase *tc = tcase_create("groups");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_groups_bit_exact, 0, (int)(sizeof models / sizeof models[0]));
  tcase_add_test(tc, test_order_check_finds_race);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
