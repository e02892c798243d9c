/* test_quant_isa.c: parameters derived by quant/ (eltwise, pool, reduce, LUT, rescale, conv
 * requant tables) put into real instructions — encoded and decoded through isa/ (so every
 * value must fit its isa.def field) and executed by the cmodel — against real arithmetic
 * written here: the Tpu ops' integer semantics are what the machine computes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/exec.h"
#include "isa/isa.h"
#include "quant/quant.h"
#include "tests/testutil.h"

static ct_lmem L;
static ct_gmem G;
static ct_sim_mem MEM;

static void setup(void) {
  ck_assert_int_eq(ct_lmem_init(&L, 1 << 20, 16, 64, NULL), CT_OK);
  ck_assert_int_eq(ct_gmem_init(&G, 1 << 20, NULL), CT_OK);
  MEM = (ct_sim_mem){&L, &G};
  srand(99);
}
static void teardown(void) {
  ct_lmem_free(&L);
  ct_gmem_free(&G);
}

/* Encodes, decodes (every field must fit) and executes in. */
static void run(const ct_insn *in) {
  uint8_t word[CT_ISA_INSN_BYTES];
  ct_insn dec;
  ct_diag d;
  ck_assert_msg(ct_isa_encode(in, word, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_isa_decode(word, &dec, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_sim_exec(&MEM, &dec, 0, &d) == CT_OK, "%s", d.msg);
}

static int8_t i8(uint64_t a, int i) { return (int8_t)L.data[a + (uint64_t)i]; }
static void put_i32(uint64_t a, int i, int32_t v) { memcpy(L.data + a + 4 * (uint64_t)i, &v, 4); }

/* sat_T(round_half_away(v)) written here, T = [lo, hi]. */
static int ref_round(double v, int lo, int hi) {
  double r = v < 0 ? -floor(-v + 0.5) : floor(v + 0.5);
  return r < lo ? lo : r > hi ? hi : (int)r;
}

/* ADD and MUL of every int8 pair (A along h, B along w, broadcast): with these scales the
 * real results are never within 0.02 of a rounding tie (test_quant_ops), so the machine
 * must produce exactly round((A op B) / s_o) + zp_o. */
START_TEST(test_eltwise_add_mul_on_the_machine) {
  const uint64_t A = 0, B = 0x100, OUT = 0x10000;
  for (int i = 0; i < 256; i++) L.data[A + i] = L.data[B + i] = (uint8_t)(i - 128);
  ct_quant_param pa = {0.1, 3, CT_I8}, pb = {0.2, -5, CT_I8}, po = {0.25, 7, CT_I8};
  for (int op = CT_QUANT_ELT_ADD; op <= CT_QUANT_ELT_MUL; op++) {
    if (op == CT_QUANT_ELT_SUB) continue;
    ct_quant_elt p;
    ck_assert(ct_quant_eltwise_params((ct_quant_elt_op)op, pa, pb, po, &p));
    ct_insn in;
    memset(&in, 0, sizeof in);
    in.op = CT_ISA_ELTWISE;
    in.eltwise.a = A, in.eltwise.b = B, in.eltwise.out = OUT;
    in.eltwise.n = 1, in.eltwise.c = 1, in.eltwise.h = 256, in.eltwise.w = 256;
    in.eltwise.bcast_a = 8, in.eltwise.bcast_b = 4, in.eltwise.op = op;
    in.eltwise.dt_a = in.eltwise.dt_b = in.eltwise.dt_out = CT_I8;
    in.eltwise.m_a = p.m_a, in.eltwise.s_a = p.s_a, in.eltwise.zp_a = p.zp_a;
    in.eltwise.m_b = p.m_b, in.eltwise.s_b = p.s_b, in.eltwise.zp_b = p.zp_b;
    in.eltwise.s_out = p.s_out, in.eltwise.zp_out = p.zp_out;
    run(&in);
    for (int x = -128; x < 128; x++)
      for (int y = -128; y < 128; y++) {
        double ra = 0.1 * (x - 3), rb = 0.2 * (y + 5), r = op == CT_QUANT_ELT_ADD ? ra + rb : ra * rb;
        ck_assert_int_eq(i8(OUT, (x + 128) * 256 + y + 128), ref_round(r / 0.25 + 7, -128, 127));
      }
  }
}
END_TEST

/* AvgPool 3x3 stride 1, no padding, s_in 0.1 zp −3 → s_out 0.05 zp 2 (factor 2/9: never a
 * tie, ≥ 1/18 away from one; multiplier error < 5e-4 over the int8 range) on random data. */
START_TEST(test_avgpool_on_the_machine) {
  const uint64_t IN = 0, OUT = 0x1000;
  const int c = 3, h = 8, w = 8, oh = 6, ow = 6;
  for (int i = 0; i < c * h * w; i++) L.data[IN + i] = (uint8_t)(rand() & 255);
  int32_t m;
  int s;
  ck_assert(ct_quant_pool_params(0.1, 0.05, 9, &m, &s));
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_POOL;
  in.pool.in = IN, in.pool.out = OUT, in.pool.n = 1, in.pool.c = c, in.pool.ih = h, in.pool.iw = w;
  in.pool.oh = oh, in.pool.ow = ow, in.pool.kh = 3, in.pool.kw = 3, in.pool.stride_h = 1, in.pool.stride_w = 1;
  in.pool.mode = CT_ISA_POOL_AVG, in.pool.dt = CT_I8, in.pool.m = m, in.pool.s = s;
  in.pool.zp_in = -3, in.pool.zp_out = 2;
  run(&in);
  for (int ch = 0; ch < c; ch++)
    for (int y = 0; y < oh; y++)
      for (int x = 0; x < ow; x++) {
        int sum = 0;
        for (int ky = 0; ky < 3; ky++)
          for (int kx = 0; kx < 3; kx++) sum += i8(IN, (ch * h + y + ky) * w + x + kx) + 3;
        double real = 0.1 * sum / 9;
        ck_assert_int_eq(i8(OUT, (ch * oh + y) * ow + x), ref_round(real / 0.05 + 2, -128, 127));
      }
}
END_TEST

/* GlobalAvgPool of 7x7 planes as REDUCE sum along w of [1, c, 1, 49], same scale: exactly
 * round(sum / 49) (49 odd: no ties). */
START_TEST(test_global_avgpool_reduce_on_the_machine) {
  const uint64_t IN = 0, OUT = 0x1000;
  const int c = 16;
  for (int i = 0; i < c * 49; i++) L.data[IN + i] = (uint8_t)(rand() & 255);
  int32_t m;
  int s;
  ck_assert(ct_quant_pool_params(0.1, 0.1, 49, &m, &s));
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_REDUCE;
  in.reduce.in = IN, in.reduce.out = OUT, in.reduce.n = 1, in.reduce.c = c, in.reduce.h = 1, in.reduce.w = 49;
  in.reduce.axis = 3, in.reduce.op = CT_ISA_RED_SUM, in.reduce.dt_in = CT_I8, in.reduce.dt_out = CT_I8;
  in.reduce.m = m, in.reduce.s = s;
  run(&in);
  for (int ch = 0; ch < c; ch++) {
    int sum = 0;
    for (int k = 0; k < 49; k++) sum += i8(IN, ch * 49 + k);
    ck_assert_int_eq(i8(OUT, ch), ref_round(sum / 49.0, -128, 127));
  }
}
END_TEST

/* Sigmoid LUT (in i8 s 1/16, out u8 s 1/255) over every input: the hand values of
 * test_quant_ops at 0, ±1, −8, 7.9375, and monotone non-decreasing in between. */
START_TEST(test_sigmoid_lut_on_the_machine) {
  const uint64_t IN = 0, OUT = 0x100, TAB = 0x200;
  for (int i = 0; i < 256; i++) L.data[IN + i] = (uint8_t)(i - 128);
  ct_quant_lut_spec sg = ct_quant_lut_default(CT_QUANT_LUT_SIGMOID);
  ct_quant_param pin = {1.0 / 16, 0, CT_I8}, pout = {1.0 / 255, 0, CT_U8};
  ck_assert(ct_quant_lut_make(&sg, pin, pout, L.data + TAB));
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_LUT;
  in.lut.in = IN, in.lut.out = OUT, in.lut.table = TAB, in.lut.n = 1, in.lut.c = 1, in.lut.h = 1, in.lut.w = 256;
  in.lut.dt_in = CT_I8, in.lut.dt_out = CT_U8;
  run(&in);
  const uint8_t *y = L.data + OUT; /* y[i] is the output for input i − 128 */
  ck_assert_int_eq(y[128], 128);
  ck_assert_int_eq(y[144], 186);
  ck_assert_int_eq(y[112], 69);
  ck_assert_int_eq(y[0], 0);
  ck_assert_int_eq(y[255], 255);
  for (int i = 1; i < 256; i++) ck_assert_int_ge(y[i], y[i - 1]);
}
END_TEST

/* Concat input rescale by REQUANT: s 0.2 zp 3 → s 0.1 zp −2 is exactly 2·(x − 3) − 2. */
START_TEST(test_concat_requant_on_the_machine) {
  const uint64_t IN = 0, OUT = 0x100;
  for (int i = 0; i < 256; i++) L.data[IN + i] = (uint8_t)(i - 128);
  int32_t m;
  int s;
  bool id;
  ck_assert(ct_quant_rescale(0.2, 3, 0.1, -2, &m, &s, &id));
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_REQUANT;
  in.requant.in = IN, in.requant.out = OUT, in.requant.n = 1, in.requant.c = 1, in.requant.h = 1;
  in.requant.w = 256, in.requant.rq_mode = CT_ISA_RQ_TENSOR, in.requant.m = m, in.requant.s = s;
  in.requant.zp_in = 3, in.requant.zp_out = -2, in.requant.dt_in = CT_I8, in.requant.dt_out = CT_I8;
  run(&in);
  for (int x = -128; x < 128; x++) ck_assert_int_eq(i8(OUT, x + 128), ref_round(2.0 * (x - 3) - 2, -128, 127));
}
END_TEST

/* CONV 3x3 per output channel: float weights and bias quantized by quant/ (per-channel
 * scales, bias at s_in·s_w), requant table from ct_quant_mac_requant; the machine's output
 * must be round(acc · s_in·s_w[o] / s_out) + zp_out for the integer acc computed here
 * (skipping values within 1e-6 of a tie, below the 2^-30 multiplier error). */
START_TEST(test_conv_per_channel_on_the_machine) {
  enum { IC = 2, H = 6, W = 6, OC = 3, K = 3, OH = 4, OW = 4 };
  const uint64_t IN = 0, WT = 0x1000, OUT = 0x2000, BI = 0x3000, RQ = 0x4000;
  const double s_in = 0.05, s_out = 0.1;
  const int zp_in = -3, zp_out = 4;
  float wf[OC * IC * K * K], bf[OC] = {0.3f, -1.7f, 0.0f};
  for (int i = 0; i < OC * IC * K * K; i++) wf[i] = (float)(rand() % 2001 - 1000) / (i < IC * K * K ? 4000 : 900);
  for (int i = 0; i < IC * H * W; i++) L.data[IN + i] = (uint8_t)(rand() & 255);
  double sw[OC];
  int32_t bq[OC], rq[2 * OC];
  ct_quant_weight_scales(wf, OC, IC * K * K, sw);
  ct_quant_weight_quantize(wf, OC, IC * K * K, sw, (int8_t *)(L.data + WT));
  ct_quant_bias_channels(bf, OC, sw, s_in, bq);
  ck_assert(ct_quant_mac_requant(s_in, sw, OC, s_out, rq));
  for (int o = 0; o < OC; o++) put_i32(BI, o, bq[o]), put_i32(RQ, 2 * o, rq[2 * o]), put_i32(RQ, 2 * o + 1, rq[2 * o + 1]);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CONV;
  in.conv.in = IN, in.conv.wt = WT, in.conv.out = OUT, in.conv.bias = BI, in.conv.rq = RQ;
  in.conv.n = 1, in.conv.ic = IC, in.conv.ih = H, in.conv.iw = W, in.conv.oc = OC, in.conv.oh = OH, in.conv.ow = OW;
  in.conv.kh = K, in.conv.kw = K, in.conv.stride_h = 1, in.conv.stride_w = 1, in.conv.dil_h = 1, in.conv.dil_w = 1;
  in.conv.groups = 1, in.conv.dt_in = CT_I8, in.conv.dt_w = CT_I8, in.conv.dt_out = CT_I8;
  in.conv.has_bias = 1, in.conv.rq_mode = CT_ISA_RQ_CHANNEL, in.conv.zp_in = zp_in, in.conv.zp_out = zp_out;
  run(&in);
  for (int o = 0; o < OC; o++)
    for (int y = 0; y < OH; y++)
      for (int x = 0; x < OW; x++) {
        int64_t acc = bq[o];
        for (int c = 0; c < IC; c++)
          for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++)
              acc += (i8(IN, (c * H + y + ky) * W + x + kx) - zp_in) * i8(WT, ((o * IC + c) * K + ky) * K + kx);
        double v = (double)acc * s_in * sw[o] / s_out, f = v - floor(v);
        if (fabs(f - 0.5) < 1e-6) continue;
        ck_assert_int_eq(i8(OUT, (o * OH + y) * OW + x), ref_round(v + zp_out, -128, 127));
      }
}
END_TEST

/* MATMUL (Gemm with constant B) per output column, fused Relu6: act_hi = quantize(6) =
 * 6 / 0.05 = 120 quanta; real reference round(clamp(acc·M_j, 0, 6) / s_out) + zp_out. */
START_TEST(test_matmul_per_column_relu6_on_the_machine) {
  enum { M = 4, K = 20, N = 5 };
  const uint64_t A = 0, B = 0x1000, OUT = 0x2000, BI = 0x3000, RQ = 0x4000;
  const double s_a = 0.04, s_out = 0.05;
  const int zp_a = 10, zp_out = -100;
  float bf[K * N], bt[N * K], bias[N] = {0.5f, -0.5f, 2.0f, 0.0f, 1.0f};
  for (int i = 0; i < K * N; i++) bf[i] = (float)(rand() % 2001 - 1000) / 700;
  for (int j = 0; j < N; j++) /* B stored [n, k] (b_trans) so that a column is a channel */
    for (int k = 0; k < K; k++) bt[j * K + k] = bf[k * N + j];
  for (int i = 0; i < M * K; i++) L.data[A + i] = (uint8_t)(rand() & 255);
  double sw[N];
  int32_t bq[N], rq[2 * N];
  ct_quant_weight_scales(bt, N, K, sw);
  ct_quant_weight_quantize(bt, N, K, sw, (int8_t *)(L.data + B));
  ct_quant_bias_channels(bias, N, sw, s_a, bq);
  ck_assert(ct_quant_mac_requant(s_a, sw, N, s_out, rq));
  for (int j = 0; j < N; j++) put_i32(BI, j, bq[j]), put_i32(RQ, 2 * j, rq[2 * j]), put_i32(RQ, 2 * j + 1, rq[2 * j + 1]);
  int hi = ct_quant_quantize(6.0, s_out, zp_out, CT_I8);
  ck_assert_int_eq(hi, 20); /* 120 − 100 */
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MATMUL;
  in.matmul.a = A, in.matmul.b = B, in.matmul.out = OUT, in.matmul.bias = BI, in.matmul.rq = RQ;
  in.matmul.batch = 1, in.matmul.m = M, in.matmul.k = K, in.matmul.n = N, in.matmul.b_trans = 1;
  in.matmul.dt_a = CT_I8, in.matmul.dt_b = CT_I8, in.matmul.dt_out = CT_I8, in.matmul.has_bias = 1;
  in.matmul.rq_mode = CT_ISA_RQ_CHANNEL, in.matmul.act = CT_ISA_ACT_CLAMP, in.matmul.zp_a = zp_a;
  in.matmul.zp_out = zp_out, in.matmul.act_hi = hi;
  run(&in);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int64_t acc = bq[j];
      for (int k = 0; k < K; k++) acc += (i8(A, i * K + k) - zp_a) * i8(B, j * K + k);
      double v = (double)acc * s_a * sw[j], f = v / s_out - floor(v / s_out);
      if (fabs(f - 0.5) < 1e-6) continue;
      v = v < 0 ? 0 : v > 6 ? 6 : v;
      ck_assert_int_eq(i8(OUT, i * N + j), ref_round(v / s_out + zp_out, -128, 127));
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("quant_isa");
  TCase *tc = tcase_create("quant_isa");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_eltwise_add_mul_on_the_machine);
  tcase_add_test(tc, test_avgpool_on_the_machine);
  tcase_add_test(tc, test_global_avgpool_reduce_on_the_machine);
  tcase_add_test(tc, test_sigmoid_lut_on_the_machine);
  tcase_add_test(tc, test_concat_requant_on_the_machine);
  tcase_add_test(tc, test_conv_per_channel_on_the_machine);
  tcase_add_test(tc, test_matmul_per_column_relu6_on_the_machine);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
