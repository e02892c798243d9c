/* test_cmodel_exec.c: per-opcode functional semantics of the cmodel (cmodel/exec.h),
 * bit-exact against plain C references written here (the requant formula of
 * docs/architecture.md §4.1 spelled out, not quant/'s code) on random data. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/elem.h"
#include "cmodel/exec.h"
#include "isa/chip.h"
#include "isa/isa.h"
#include "quant/quant.h"
#include "tests/testutil.h"

static ct_lmem L;
static ct_gmem G;
static ct_sim_mem MEM;

static void setup(void) {
  ck_assert_int_eq(ct_lmem_init(&L, 1 << 20, 16, 64, NULL), CT_OK);
  ck_assert_int_eq(ct_gmem_init(&G, 1 << 24, NULL), CT_OK);
  MEM = (ct_sim_mem){&L, &G};
  srand(1234);
}
static void teardown(void) {
  ct_lmem_free(&L);
  ct_gmem_free(&G);
}

static void fill_i8(uint64_t addr, int n) {
  for (int i = 0; i < n; i++) L.data[addr + (uint64_t)i] = (uint8_t)(rand() & 255);
}
static void fill_f32(uint64_t addr, int n) {
  for (int i = 0; i < n; i++) {
    float v = (float)(rand() % 2001 - 1000) / 250.0f;
    memcpy(L.data + addr + 4 * (uint64_t)i, &v, 4);
  }
}
static int8_t i8(uint64_t a, int i) { return (int8_t)L.data[a + (uint64_t)i]; }
static float f32(uint64_t a, int i) {
  float v;
  memcpy(&v, L.data + a + 4 * (uint64_t)i, 4);
  return v;
}
static int32_t i32(uint64_t a, int i) {
  int32_t v;
  memcpy(&v, L.data + a + 4 * (uint64_t)i, 4);
  return v;
}
static void put_i32(uint64_t a, int i, int32_t v) { memcpy(L.data + a + 4 * (uint64_t)i, &v, 4); }

/* floor(x / 2^s) of x + 2^(s-1): rounding half toward +inf (docs/architecture.md §4.1). */
static int64_t rsr(int64_t x, int s) {
  if (s == 0) return x;
  int64_t v = x + ((int64_t)1 << (s - 1)), q = v / ((int64_t)1 << s);
  if (v % ((int64_t)1 << s) != 0 && v < 0) q--;
  return q;
}
static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }
/* requant + act: v = rsr(x*m, s) + zp; relu: max(v, zp); clamp: min(max(v, zp), hi); sat. */
static int64_t rq(int64_t x, int64_t m, int s, int64_t zp, int act, int64_t hi, int64_t lo_t, int64_t hi_t) {
  int64_t v = rsr(x * m, s) + zp;
  if (act >= 1 && v < zp) v = zp;
  if (act == 2 && v > hi) v = hi;
  return clampi(v, lo_t, hi_t);
}

static void exec(ct_insn *in) {
  ct_diag d;
  ck_assert_msg(ct_sim_exec(&MEM, in, 0, &d) == CT_OK, "%s", d.msg);
}

START_TEST(test_conv_int8_groups_pad_stride_dilation_bias_rq_relu) {
  /* n 2, ic 4, 9x8 -> oc 6, groups 2, k 3x2, stride 2x1, dil 1x2, pads t1 l2 b0 r1 */
  const int n = 2, ic = 4, ih = 9, iw = 8, oc = 6, g = 2, kh = 3, kw = 2, sh = 2, sw = 1;
  const int dh = 1, dw = 2, pt = 1, pl = 2, pb = 0, pr = 1;
  const int oh = (ih + pt + pb - dh * (kh - 1) - 1) / sh + 1, ow = (iw + pl + pr - dw * (kw - 1) - 1) / sw + 1;
  const uint64_t IN = 0, W = 0x10000, OUT = 0x20000, B = 0x30000, RQ = 0x31000;
  fill_i8(IN, n * ic * ih * iw);
  fill_i8(W, oc * (ic / g) * kh * kw);
  for (int o = 0; o < oc; o++) {
    put_i32(B, o, rand() % 2000 - 1000);
    put_i32(RQ, 2 * o, 1000000 + rand() % 1000000);
    put_i32(RQ, 2 * o + 1, 24 + o % 3);
  }
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CONV;
  in.conv.in = IN, in.conv.wt = W, in.conv.out = OUT, in.conv.bias = B, in.conv.rq = RQ;
  in.conv.n = n, in.conv.ic = ic, in.conv.ih = ih, in.conv.iw = iw, in.conv.oc = oc;
  in.conv.oh = oh, in.conv.ow = ow, in.conv.kh = kh, in.conv.kw = kw;
  in.conv.stride_h = sh, in.conv.stride_w = sw, in.conv.pad_t = pt, in.conv.pad_l = pl;
  in.conv.pad_b = pb, in.conv.pad_r = pr, in.conv.dil_h = dh, in.conv.dil_w = dw;
  in.conv.groups = g, in.conv.dt_in = CT_I8, in.conv.dt_w = CT_I8, in.conv.dt_out = CT_I8;
  in.conv.has_bias = 1, in.conv.rq_mode = CT_ISA_RQ_CHANNEL, in.conv.act = CT_ISA_ACT_RELU;
  in.conv.zp_in = -5, in.conv.zp_out = -10;
  exec(&in);
  int icg = ic / g, ocg = oc / g;
  for (int b = 0; b < n; b++)
    for (int o = 0; o < oc; o++)
      for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) {
          int64_t acc = i32(B, o);
          for (int c = 0; c < icg; c++)
            for (int ky = 0; ky < kh; ky++)
              for (int kx = 0; kx < kw; kx++) {
                int iy = y * sh - pt + ky * dh, ix = x * sw - pl + kx * dw;
                int v = iy >= 0 && iy < ih && ix >= 0 && ix < iw ? i8(IN, ((b * ic + (o / ocg) * icg + c) * ih + iy) * iw + ix) : -5;
                acc += (v + 5) * i8(W, ((o * icg + c) * kh + ky) * kw + kx);
              }
          int64_t want = rq(acc, i32(RQ, 2 * o), i32(RQ, 2 * o + 1), -10, 1, 0, -128, 127);
          ck_assert_int_eq(i8(OUT, ((b * oc + o) * oh + y) * ow + x), want);
        }
}
END_TEST

START_TEST(test_matmul_int8_trans_bcast_acc_bias_and_bf16) {
  const int bt = 2, m = 5, k = 37, n = 9;
  const uint64_t A = 0, Bm = 0x10000, OUT = 0x20000, ACC = 0x30000, BI = 0x40000;
  fill_i8(A, bt * m * k);
  fill_i8(Bm, n * k);
  for (int i = 0; i < bt * m * n; i++) put_i32(ACC, i, rand() % 100000 - 50000);
  for (int j = 0; j < n; j++) put_i32(BI, j, rand() % 1000 - 500);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MATMUL;
  in.matmul.a = A, in.matmul.b = Bm, in.matmul.out = OUT, in.matmul.acc = ACC, in.matmul.bias = BI;
  in.matmul.batch = bt, in.matmul.m = m, in.matmul.k = k, in.matmul.n = n;
  in.matmul.b_trans = 1, in.matmul.b_bcast = 1, in.matmul.dt_a = CT_I8, in.matmul.dt_b = CT_I8;
  in.matmul.dt_out = CT_I32, in.matmul.acc_in = 1, in.matmul.has_bias = 1;
  in.matmul.rq_mode = CT_ISA_RQ_NONE, in.matmul.zp_a = 7;
  exec(&in);
  for (int b = 0; b < bt; b++)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        int64_t acc = i32(ACC, (b * m + i) * n + j) + i32(BI, j);
        for (int kk = 0; kk < k; kk++) acc += (i8(A, (b * m + i) * k + kk) - 7) * i8(Bm, j * k + kk);
        ck_assert_int_eq(i32(OUT, (b * m + i) * n + j), acc);
      }
  /* bf16 x bf16 -> f32, f32 accumulation in k order */
  for (int i = 0; i < m * k + k * n; i++) {
    float v = (float)(rand() % 200 - 100) / 16.0f;
    uint16_t h = ct_f32_to_bf16(v);
    memcpy(L.data + (i < m * k ? A + 2 * (uint64_t)i : Bm + 2 * (uint64_t)(i - m * k)), &h, 2);
  }
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MATMUL;
  in.matmul.a = A, in.matmul.b = Bm, in.matmul.out = OUT, in.matmul.batch = 1, in.matmul.m = m;
  in.matmul.k = k, in.matmul.n = n, in.matmul.dt_a = CT_BF16, in.matmul.dt_b = CT_BF16;
  in.matmul.dt_out = CT_F32, in.matmul.rq_mode = CT_ISA_RQ_NONE;
  exec(&in);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float acc = 0;
      for (int kk = 0; kk < k; kk++) {
        uint16_t a, b;
        memcpy(&a, L.data + A + 2 * (uint64_t)(i * k + kk), 2);
        memcpy(&b, L.data + Bm + 2 * (uint64_t)(kk * n + j), 2);
        acc += ct_bf16_to_f32(a) * ct_bf16_to_f32(b);
      }
      ck_assert_float_eq(f32(OUT, i * n + j), acc);
    }
}
END_TEST

START_TEST(test_eltwise_int8_broadcast_requant) {
  const int n = 2, c = 3, h = 4, w = 5;
  const uint64_t A = 0, Bv = 0x10000, OUT = 0x20000;
  fill_i8(A, n * c * h * w);
  fill_i8(Bv, c); /* B broadcast over n, h, w: shape [1, c, 1, 1] */
  for (int op = 0; op < 5; op++) {
    ct_insn in;
    memset(&in, 0, sizeof in);
    in.op = CT_ISA_ELTWISE;
    in.eltwise.a = A, in.eltwise.b = Bv, in.eltwise.out = OUT;
    in.eltwise.n = n, in.eltwise.c = c, in.eltwise.h = h, in.eltwise.w = w;
    in.eltwise.bcast_b = 1 | 4 | 8, in.eltwise.op = op;
    in.eltwise.dt_a = in.eltwise.dt_b = in.eltwise.dt_out = CT_I8;
    in.eltwise.m_a = 181, in.eltwise.s_a = 3, in.eltwise.zp_a = 4;
    in.eltwise.m_b = -90, in.eltwise.s_b = 2, in.eltwise.zp_b = -3;
    in.eltwise.s_out = op == 2 ? 9 : 4, in.eltwise.zp_out = 2, in.eltwise.act = CT_ISA_ACT_CLAMP;
    in.eltwise.act_hi = 100;
    exec(&in);
    for (int i = 0; i < n * c * h * w; i++) {
      int ch = (i / (h * w)) % c;
      int64_t a = rsr((int64_t)(i8(A, i) - 4) * 181, 3), b = rsr((int64_t)(i8(Bv, ch) + 3) * -90, 2);
      int64_t r = op == 0 ? a + b : op == 1 ? a - b : op == 2 ? a * b : op == 3 ? (a > b ? a : b) : (a < b ? a : b);
      ck_assert_int_eq(i8(OUT, i), rq(r, 1, op == 2 ? 9 : 4, 2, 2, 100, -128, 127));
    }
  }
}
END_TEST

START_TEST(test_pool_requant_lut_cast_reduce) {
  const uint64_t IN = 0, OUT = 0x20000, T = 0x30000, RQ = 0x31000;
  fill_i8(IN, 2 * 3 * 7 * 6);
  /* POOL avg 3x3 stride 2 pad 1 over 7x6 -> 4x3, in-bounds sum, m 57 s 9 */
  for (int mode = 0; mode < 2; mode++) {
    ct_insn in;
    memset(&in, 0, sizeof in);
    in.op = CT_ISA_POOL;
    in.pool.in = IN, in.pool.out = OUT, in.pool.n = 2, in.pool.c = 3, in.pool.ih = 7, in.pool.iw = 6;
    in.pool.oh = 4, in.pool.ow = 3, in.pool.kh = 3, in.pool.kw = 3, in.pool.stride_h = 2, in.pool.stride_w = 2;
    in.pool.pad_t = in.pool.pad_l = in.pool.pad_b = in.pool.pad_r = 1, in.pool.mode = mode, in.pool.dt = CT_I8;
    in.pool.m = 57, in.pool.s = 9, in.pool.zp_in = 3, in.pool.zp_out = -1;
    exec(&in);
    for (int p = 0; p < 6; p++)
      for (int y = 0; y < 4; y++)
        for (int x = 0; x < 3; x++) {
          int64_t r = mode ? 0 : -1000;
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int iy = 2 * y - 1 + ky, ix = 2 * x - 1 + kx;
              if (iy < 0 || iy >= 7 || ix < 0 || ix >= 6) continue;
              int v = i8(IN, (p * 7 + iy) * 6 + ix);
              r = mode ? r + v - 3 : (v > r ? v : r);
            }
          if (!mode) r -= 3;
          ck_assert_int_eq(i8(OUT, (p * 4 + y) * 3 + x), rq(r, 57, 9, -1, 0, 0, -128, 127));
        }
  }
  /* REQUANT per channel i32 -> i8 with clamp; LUT i8 -> u8; CAST f32 -> i8 */
  for (int i = 0; i < 2 * 3 * 4; i++) put_i32(IN, i, rand() % 200000 - 100000);
  for (int ch = 0; ch < 3; ch++) put_i32(RQ, 2 * ch, 3000 + ch * 1000), put_i32(RQ, 2 * ch + 1, 12 + ch);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_REQUANT;
  in.requant.in = IN, in.requant.out = OUT, in.requant.rq = RQ, in.requant.n = 2, in.requant.c = 3;
  in.requant.h = 2, in.requant.w = 2, in.requant.rq_mode = CT_ISA_RQ_CHANNEL, in.requant.zp_in = 11;
  in.requant.zp_out = 5, in.requant.dt_in = CT_I32, in.requant.dt_out = CT_I8;
  in.requant.act = CT_ISA_ACT_CLAMP, in.requant.act_hi = 90;
  exec(&in);
  for (int i = 0; i < 24; i++) {
    int ch = (i / 4) % 3;
    ck_assert_int_eq(i8(OUT, i), rq(i32(IN, i) - 11, 3000 + ch * 1000, 12 + ch, 5, 2, 90, -128, 127));
  }
  fill_i8(IN, 100);
  fill_i8(T, 256);
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_LUT;
  in.lut.in = IN, in.lut.out = OUT, in.lut.table = T, in.lut.n = 1, in.lut.c = 1, in.lut.h = 10, in.lut.w = 10;
  in.lut.dt_in = CT_I8, in.lut.dt_out = CT_U8;
  exec(&in);
  for (int i = 0; i < 100; i++) ck_assert_uint_eq(L.data[OUT + (uint64_t)i], L.data[T + (uint64_t)(i8(IN, i) + 128)]);
  /* the 16-bit LUT, one table per channel (2 × 257 int16): quant/'s lookup of each element */
  fill_i8(IN, 2 * 2 * 30);
  fill_i8(T, 2 * CT_ISA_LUT16_BYTES);
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_LUT;
  in.lut.in = IN, in.lut.out = OUT, in.lut.table = T, in.lut.n = 1, in.lut.c = 2, in.lut.h = 5, in.lut.w = 6;
  in.lut.dt_in = CT_I16, in.lut.dt_out = CT_I8, in.lut.per_channel = 1;
  exec(&in);
  for (int i = 0; i < 60; i++) {
    int16_t x, tab[CT_QUANT_LUT16_ENTRIES];
    memcpy(&x, L.data + IN + 2 * (uint64_t)i, 2);
    memcpy(tab, L.data + T + (uint64_t)(i / 30) * CT_ISA_LUT16_BYTES, sizeof tab);
    ck_assert_int_eq(i8(OUT, i), ct_quant_lut16_lookup(tab, x, CT_I8));
  }
  fill_f32(IN, 64);
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CAST;
  in.cast.in = IN, in.cast.out = OUT, in.cast.n = in.cast.c = in.cast.h = 1, in.cast.w = 64;
  in.cast.dt_in = CT_F32, in.cast.dt_out = CT_I8, in.cast.scale = 0.03125f, in.cast.zp = -7;
  exec(&in);
  for (int i = 0; i < 64; i++) {
    double q = (double)f32(IN, i) / 0.03125;
    int64_t r = (int64_t)(q < 0 ? q - 0.5 : q + 0.5); /* half away from zero */
    ck_assert_int_eq(i8(OUT, i), clampi(r - 7, -128, 127));
  }
  /* REDUCE sum int8 over h: r = Σ (x - zp_in), out = rq(r, m, s) */
  fill_i8(IN, 2 * 3 * 5 * 4);
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_REDUCE;
  in.reduce.in = IN, in.reduce.out = OUT, in.reduce.n = 2, in.reduce.c = 3, in.reduce.h = 5, in.reduce.w = 4;
  in.reduce.axis = 2, in.reduce.op = CT_ISA_RED_SUM, in.reduce.dt_in = CT_I8, in.reduce.dt_out = CT_I8;
  in.reduce.m = 13, in.reduce.s = 6, in.reduce.zp_in = -2, in.reduce.zp_out = 1;
  exec(&in);
  for (int p = 0; p < 6; p++)
    for (int x = 0; x < 4; x++) {
      int64_t r = 0;
      for (int y = 0; y < 5; y++) r += i8(IN, (p * 5 + y) * 4 + x) + 2;
      ck_assert_int_eq(i8(OUT, p * 4 + x), rq(r, 13, 6, 1, 0, 0, -128, 127));
    }
}
END_TEST

START_TEST(test_float_exp_softmax_norm) {
  const uint64_t IN = 0, OUT = 0x20000, GA = 0x30000, BE = 0x31000;
  fill_f32(IN, 2 * 3 * 4);
  fill_f32(GA, 12);
  fill_f32(BE, 12);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_SOFTMAX;
  in.softmax.in = IN, in.softmax.out = OUT, in.softmax.n = 2, in.softmax.c = 3, in.softmax.h = 1, in.softmax.w = 4;
  in.softmax.axis = 1, in.softmax.dt_in = in.softmax.dt_out = CT_F32;
  exec(&in);
  for (int b = 0; b < 2; b++)
    for (int x = 0; x < 4; x++) {
      float mx = -INFINITY;
      double sum = 0;
      for (int c = 0; c < 3; c++) mx = fmaxf(mx, f32(IN, (b * 3 + c) * 4 + x));
      for (int c = 0; c < 3; c++) sum += exp((double)f32(IN, (b * 3 + c) * 4 + x) - mx); /* as ops/math_softmax.c */
      for (int c = 0; c < 3; c++)
        ck_assert_float_eq(f32(OUT, (b * 3 + c) * 4 + x), (float)(exp((double)f32(IN, (b * 3 + c) * 4 + x) - mx) / sum));
    }
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_EXP;
  in.exp.in = IN, in.exp.out = OUT, in.exp.n = in.exp.c = in.exp.h = 1, in.exp.w = 24;
  in.exp.dt_in = CT_F32, in.exp.dt_out = CT_BF16;
  exec(&in);
  for (int i = 0; i < 24; i++) {
    uint16_t h;
    memcpy(&h, L.data + OUT + 2 * (uint64_t)i, 2);
    ck_assert_uint_eq(h, ct_f32_to_bf16(expf(f32(IN, i))));
  }
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_NORM;
  in.norm.in = IN, in.norm.out = OUT, in.norm.gamma = GA, in.norm.beta = BE;
  in.norm.n = 2, in.norm.c = 3, in.norm.h = 1, in.norm.w = 4, in.norm.axis = 1;
  in.norm.mode = CT_ISA_NORM_LAYER, in.norm.affine = 1, in.norm.eps = 1e-5f;
  in.norm.dt_in = in.norm.dt_out = CT_F32;
  exec(&in);
  for (int b = 0; b < 2; b++) {
    double s = 0, v = 0;
    for (int j = 0; j < 12; j++) s += f32(IN, b * 12 + j);
    double mean = s / 12;
    for (int j = 0; j < 12; j++) v += (f32(IN, b * 12 + j) - mean) * (f32(IN, b * 12 + j) - mean);
    double is = 1.0 / sqrt(v / 12 + (double)1e-5f); /* in double, as ops/nn_norm.c norm_row */
    for (int j = 0; j < 12; j++)
      ck_assert_float_eq(f32(OUT, b * 12 + j), (float)((f32(IN, b * 12 + j) - mean) * is * f32(GA, j) + f32(BE, j)));
  }
}
END_TEST

/* Taps of output index o, written out from the ONNX formulas (half_pixel and align_corners)
 * for the check below: input indices clamped, Q0.11 weight of the second one. */
static void lin_tap(int ac, int64_t in, int64_t out, int64_t o, int64_t *i0, int64_t *i1, int64_t *wq) {
  double c = ac ? (double)o * (double)(in - 1) / (double)(out - 1) : ((double)o + 0.5) * (double)in / (double)out - 0.5;
  double f = floor(c);
  *i0 = clampi((int64_t)f, 0, in - 1), *i1 = clampi((int64_t)f + 1, 0, in - 1);
  *wq = *i0 == *i1 ? 0 : (int64_t)floor((c - f) * 2048 + 0.5);
}

/* RESIZE i8, half_pixel ×2 and align_corners 5 → 9 rows: out = rsr(Σ wh·ww·(x − zp), 22) + zp
 * against the taps above; the same rows in two pieces (ih0 / oh0: an H-cut tile with its
 * halo) give the same bytes; a row outside the rows held is refused. */
START_TEST(test_resize_linear_int8_rows_and_tiles) {
  const uint64_t IN = 0, OUT = 0x10000, OUT2 = 0x20000;
  const int64_t C = 3, IH = 5, IW = 6, zp = -7;
  fill_i8(IN, (int)(C * IH * IW));
  for (int ac = 0; ac < 2; ac++) {
    int64_t OH = ac ? 9 : 2 * IH, OW = ac ? 4 : 2 * IW;
    ct_insn in;
    memset(&in, 0, sizeof in);
    in.op = CT_ISA_RESIZE;
    struct ct_insn_resize *r = &in.resize;
    r->in = IN, r->out = OUT, r->n = 1, r->c = C, r->ih = r->full_ih = IH, r->iw = IW, r->oh = r->full_oh = OH, r->ow = OW;
    r->ctm = ac ? CT_ISA_CTM_ALIGN_CORNERS : CT_ISA_CTM_HALF_PIXEL, r->dt_in = r->dt_out = CT_I8, r->zp = zp;
    r->scale_h = ac ? 0 : 2, r->scale_w = ac ? 0 : 2;
    exec(&in);
    for (int64_t c = 0; c < C; c++)
      for (int64_t y = 0; y < OH; y++)
        for (int64_t x = 0; x < OW; x++) {
          int64_t h0, h1, wh, w0, w1, ww;
          lin_tap(ac, IH, OH, y, &h0, &h1, &wh), lin_tap(ac, IW, OW, x, &w0, &w1, &ww);
          const int64_t *H[2] = {&h0, &h1}, *W[2] = {&w0, &w1}, WH[2] = {2048 - wh, wh}, WW[2] = {2048 - ww, ww};
          int64_t acc = 0;
          for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) acc += WH[a] * WW[b] * (i8(IN, (int)((c * IH + *H[a]) * IW + *W[b])) - zp);
          ck_assert_int_eq(i8(OUT, (int)((c * OH + y) * OW + x)), clampi(rsr(acc, 22) + zp, -128, 127));
        }
    /* two tiles of output rows: [0, OH/2) from input rows [0, 3), [OH/2, OH) from [2, IH) */
    int64_t half = OH / 2;
    for (int t = 0; t < 2; t++) {
      int64_t i0 = t ? 2 : 0, ni = t ? IH - 2 : 3, o0 = t ? half : 0, no = t ? OH - half : half;
      for (int64_t c = 0; c < C; c++) memcpy(L.data + 0x30000 + c * ni * IW, L.data + IN + (c * IH + i0) * IW, (size_t)(ni * IW));
      r->in = 0x30000, r->out = 0x40000, r->ih = ni, r->ih0 = i0, r->oh = no, r->oh0 = o0;
      exec(&in);
      for (int64_t c = 0; c < C; c++) memcpy(L.data + OUT2 + (c * OH + o0) * OW, L.data + 0x40000 + c * no * OW, (size_t)(no * OW));
    }
    ck_assert(memcmp(L.data + OUT, L.data + OUT2, (size_t)(C * OH * OW)) == 0);
    r->ih = 1, r->ih0 = 0, r->oh = OH, r->oh0 = 0; /* every row but the first lies outside */
    ct_diag d;
    ck_assert_int_eq(ct_sim_exec(&MEM, &in, 3, &d), CT_ERR_INPUT);
    ck_assert_msg(strstr(d.msg, "insn 3 (resize)") && strstr(d.msg, "outside the rows held"), "%s", d.msg);
  }
}
END_TEST

static uint32_t bits_f32(uint64_t a, int i) {
  uint32_t v;
  memcpy(&v, L.data + a + 4 * (uint64_t)i, 4);
  return v;
}

/* Float avg POOL 3×3 stride 2, ceil-mode output (one more column and row than floor mode),
 * pads t1 l0 b1 r0, count_pad: the divisor counts the taps inside [-1, 10 + 1) × [0, 10)
 * — onnxruntime's AveragePool (hend = min(hstart + k, H + pad_end)), so the ceil-mode
 * extension past the padding is not counted — written out here; the ISA check accepts the
 * ceil-mode size. */
START_TEST(test_float_pool_ceil_count_pad) {
  const uint64_t IN = 0, OUT = 0x20000;
  const int ih = 10, iw = 10, oh = 6, ow = 5; /* floor mode: 5 × 4 */
  fill_f32(IN, 2 * ih * iw);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_POOL;
  in.pool.in = IN, in.pool.out = OUT, in.pool.n = 1, in.pool.c = 2, in.pool.ih = ih, in.pool.iw = iw;
  in.pool.oh = oh, in.pool.ow = ow, in.pool.kh = 3, in.pool.kw = 3, in.pool.stride_h = 2, in.pool.stride_w = 2;
  in.pool.pad_t = 1, in.pool.pad_b = 1, in.pool.mode = CT_ISA_POOL_AVG, in.pool.dt = CT_F32, in.pool.count_pad = 1;
  ct_chip chip;
  ct_chip_default(&chip);
  ct_diag d;
  ck_assert_msg(ct_isa_check(&in, &chip, &d) == CT_OK, "%s", d.msg);
  in.pool.oh = oh + 1; /* its last window would start past the input */
  ck_assert_int_ne(ct_isa_check(&in, &chip, &d), CT_OK);
  in.pool.oh = oh;
  for (int cp = 0; cp < 2; cp++) {
    in.pool.count_pad = cp;
    exec(&in);
    for (int p = 0; p < 2; p++)
      for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) {
          int hs = 2 * y - 1, ws = 2 * x, he = hs + 3 < ih + 1 ? hs + 3 : ih + 1, we = ws + 3 < iw ? ws + 3 : iw;
          double sum = 0;
          int cnt = 0;
          for (int iy = hs; iy < hs + 3; iy++)
            for (int ix = ws; ix < ws + 3; ix++)
              if (iy >= 0 && iy < ih && ix < iw) sum += f32(IN, (p * ih + iy) * iw + ix), cnt++;
          int div = cp ? (he - hs) * (we - ws) : cnt;
          ck_assert_float_eq(f32(OUT, (p * oh + y) * ow + x), (float)(sum / div));
        }
    if (cp) /* (0, 4): rows -1..1 (-1 padding), columns 8..10 (10 past the input, not padding): 3 × 2 */
      ck_assert_float_eq(f32(OUT, 4), (float)(((double)f32(IN, 8) + f32(IN, 9) + f32(IN, 18) + f32(IN, 19)) / 6));
  }
}
END_TEST

/* Float CONV 3×3 pad 1: a NaN weight on tap (0, 0) meets the padding at output (0, 0); the
 * padded +0 times NaN is NaN (ONNX's zero padding), so every output of that channel is NaN,
 * stored as the canonical NaN 0x7fc00000 although the weight is the negative NaN 0xffffffff;
 * a finite channel is unchanged. ELTWISE max of a negative NaN and a POOL max window holding
 * one: the canonical NaN too. */
START_TEST(test_float_conv_nan_weight_in_padding) {
  const uint64_t IN = 0, W = 0x10000, OUT = 0x20000;
  fill_f32(IN, 4 * 4);
  fill_f32(W, 2 * 9);
  uint32_t neg_nan = 0xffffffffu;
  memcpy(L.data + W, &neg_nan, 4);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CONV;
  in.conv.in = IN, in.conv.wt = W, in.conv.out = OUT, in.conv.n = 1, in.conv.ic = 1, in.conv.ih = 4, in.conv.iw = 4;
  in.conv.oc = 2, in.conv.oh = 4, in.conv.ow = 4, in.conv.kh = 3, in.conv.kw = 3, in.conv.stride_h = 1, in.conv.stride_w = 1;
  in.conv.dil_h = in.conv.dil_w = 1, in.conv.pad_t = in.conv.pad_l = in.conv.pad_b = in.conv.pad_r = 1;
  in.conv.dt_in = in.conv.dt_w = in.conv.dt_out = CT_F32;
  exec(&in);
  for (int p = 0; p < 16; p++) {
    ck_assert_uint_eq(bits_f32(OUT, p), 0x7fc00000u);
    int y = p / 4, x = p % 4;
    float acc = 0;
    for (int ky = 0; ky < 3; ky++)
      for (int kx = 0; kx < 3; kx++) {
        int iy = y - 1 + ky, ix = x - 1 + kx;
        acc += (iy >= 0 && iy < 4 && ix >= 0 && ix < 4 ? f32(IN, iy * 4 + ix) : 0.0f) * f32(W, 9 + ky * 3 + kx);
      }
    ck_assert_float_eq(f32(OUT, 16 + p), acc);
  }
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_ELTWISE;
  in.eltwise.a = W, in.eltwise.b = IN, in.eltwise.out = OUT, in.eltwise.n = in.eltwise.c = in.eltwise.h = in.eltwise.w = 1;
  in.eltwise.op = CT_ISA_ELT_MAX, in.eltwise.dt_a = in.eltwise.dt_b = in.eltwise.dt_out = CT_F32;
  exec(&in);
  ck_assert_uint_eq(bits_f32(OUT, 0), 0x7fc00000u);
  /* POOL max 2×2 over 4×4 with a negative NaN at (1, 1), the last tap of window (0, 0):
   * that window is the canonical NaN (NaN wins), the others the max of their taps */
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_POOL;
  in.pool.in = IN, in.pool.out = OUT, in.pool.n = in.pool.c = 1, in.pool.ih = in.pool.iw = 4, in.pool.oh = in.pool.ow = 2;
  in.pool.kh = in.pool.kw = 2, in.pool.stride_h = in.pool.stride_w = 2, in.pool.mode = CT_ISA_POOL_MAX, in.pool.dt = CT_F32;
  memcpy(L.data + IN + 4 * 5, &neg_nan, 4);
  exec(&in);
  ck_assert_uint_eq(bits_f32(OUT, 0), 0x7fc00000u);
  for (int o = 1; o < 4; o++) {
    int y = o / 2 * 2, x = o % 2 * 2;
    float m = fmaxf(fmaxf(f32(IN, y * 4 + x), f32(IN, y * 4 + x + 1)), fmaxf(f32(IN, y * 4 + x + 4), f32(IN, y * 4 + x + 5)));
    ck_assert_float_eq(f32(OUT, o), m);
  }
}
END_TEST

START_TEST(test_dma_strided_transpose_load_store_move) {
  /* GMEM [2,3,4,5] i16 with padded rows (stride_h 7) -> LMEM transposed (n,c,w,h) dense */
  int16_t src[2 * 3 * 4 * 7];
  for (int i = 0; i < 2 * 3 * 4 * 7; i++) src[i] = (int16_t)(rand() - RAND_MAX / 2);
  ck_assert_int_eq(ct_gmem_write(&G, 0x1000, src, sizeof src, NULL), CT_OK);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_LOAD;
  in.load.dst = 0x100, in.load.src = 0x1000, in.load.dtype = CT_I16, in.load.trans = 1;
  in.load.n = 2, in.load.c = 3, in.load.h = 4, in.load.w = 5;
  in.load.src_sn = 84, in.load.src_sc = 28, in.load.src_sh = 7, in.load.src_sw = 1;
  in.load.dst_sn = 60, in.load.dst_sc = 20, in.load.dst_sh = 4, in.load.dst_sw = 1; /* (n,c,w,h) */
  exec(&in);
  for (int p = 0; p < 6; p++)
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 5; x++) {
        int16_t got;
        memcpy(&got, L.data + 0x100 + 2 * (uint64_t)(p * 20 + x * 4 + y), 2);
        ck_assert_int_eq(got, src[p * 28 + y * 7 + x]);
      }
  /* MOVE the first 40 bytes to 0x8000, STORE them to GMEM 0x9000 */
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MOVE;
  in.move.dst = 0x8000, in.move.src = 0x100, in.move.dtype = CT_I8, in.move.n = in.move.c = in.move.h = 1;
  in.move.w = 40, in.move.src_sw = in.move.dst_sw = 1;
  exec(&in);
  ck_assert_mem_eq(L.data + 0x8000, L.data + 0x100, 40);
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_STORE;
  in.store.dst = 0x9000, in.store.src = 0x8000, in.store.dtype = CT_I8, in.store.n = in.store.c = in.store.h = 1;
  in.store.w = 40, in.store.src_sw = in.store.dst_sw = 1;
  exec(&in);
  uint8_t back[40];
  ck_assert_int_eq(ct_gmem_read(&G, 0x9000, back, 40, NULL), CT_OK);
  ck_assert_mem_eq(back, L.data + 0x100, 40);
  /* GMEM bounds are checked on every access */
  ct_diag d;
  ck_assert_int_eq(ct_gmem_read(&G, (1 << 24) - 4, back, 8, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "outside"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("cmodel_exec");
  TCase *t = tcase_create("exec");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, test_conv_int8_groups_pad_stride_dilation_bias_rq_relu);
  tcase_add_test(t, test_matmul_int8_trans_bcast_acc_bias_and_bf16);
  tcase_add_test(t, test_eltwise_int8_broadcast_requant);
  tcase_add_test(t, test_pool_requant_lut_cast_reduce);
  tcase_add_test(t, test_float_exp_softmax_norm);
  tcase_add_test(t, test_dma_strided_transpose_load_store_move);
  tcase_add_test(t, test_resize_linear_int8_rows_and_tiles);
  tcase_add_test(t, test_float_pool_ceil_count_pad);
  tcase_add_test(t, test_float_conv_nan_weight_in_padding);
  suite_add_tcase(s, t);
  return ct_test_run_suite(s);
}
