/* test_quant_ops.c: quant/quant_params.c and quant_lut.c — scales and zero points from
 * ranges, per-channel weights / bias / requant tables, rescale (Concat), pooling division,
 * ELTWISE parameters and activation LUTs; every expected value derived by hand below. */
#include <math.h>

#include "quant/quant.h"
#include "tests/testutil.h"

START_TEST(test_sym_and_unsigned_types) {
  ck_assert_int_eq(ct_quant_sym_type(0.0, true), CT_U8);
  ck_assert_int_eq(ct_quant_sym_type(-0.1, true), CT_I8);
  ck_assert_int_eq(ct_quant_sym_type(0.0, false), CT_I8);
  ct_quant_param p;
  ck_assert(ct_quant_param_sym(12.7, CT_I8, &p));
  ck_assert_double_eq_tol(p.scale, 0.1, 1e-15);
  ck_assert_int_eq(p.zp, 0);
  ck_assert(ct_quant_param_sym(25.5, CT_U8, &p)); /* u8: threshold / 255 */
  ck_assert_double_eq_tol(p.scale, 0.1, 1e-15);
  ck_assert_int_eq(p.dt, CT_U8);
  ck_assert(ct_quant_param_sym(0.0, CT_I8, &p)); /* all-zero tensor */
  ck_assert_double_eq(p.scale, 1.0);
  ck_assert(!ct_quant_param_sym(-1.0, CT_I8, &p));
  ck_assert(!ct_quant_param_sym(INFINITY, CT_I8, &p));
  ck_assert(!ct_quant_param_sym(1.0, CT_F32, &p));
}
END_TEST

/* [-1, 3] → scale 4/255; u8: zp = 0 − round(−63.75) = 64; i8: zp = −128 + 64 = −64; then
 * −1 → qmin, 3 → qmax, 0 → zp exactly. */
START_TEST(test_asymmetric_zero_point) {
  ct_quant_param p;
  ck_assert(ct_quant_param_asym(-1.0, 3.0, CT_U8, &p));
  ck_assert_double_eq_tol(p.scale, 4.0 / 255.0, 1e-15);
  ck_assert_int_eq(p.zp, 64);
  ck_assert_int_eq(ct_quant_quantize(-1.0, p.scale, p.zp, CT_U8), 0);
  ck_assert_int_eq(ct_quant_quantize(3.0, p.scale, p.zp, CT_U8), 255);
  ck_assert(ct_quant_param_asym(-1.0, 3.0, CT_I8, &p));
  ck_assert_int_eq(p.zp, -64);
  ck_assert_int_eq(ct_quant_quantize(-1.0, p.scale, p.zp, CT_I8), -128);
  ck_assert_int_eq(ct_quant_quantize(3.0, p.scale, p.zp, CT_I8), 127);
  ck_assert_int_eq(ct_quant_quantize(0.0, p.scale, p.zp, CT_I8), -64);
  ck_assert(ct_quant_param_asym(2.0, 5.0, CT_U8, &p)); /* widened to [0, 5] */
  ck_assert_double_eq_tol(p.scale, 5.0 / 255.0, 1e-15);
  ck_assert_int_eq(p.zp, 0);
  ck_assert(ct_quant_param_asym(0.0, 0.0, CT_I8, &p)); /* zero range */
  ck_assert_double_eq(p.scale, 1.0);
  ck_assert_int_eq(p.zp, 0);
  ck_assert(!ct_quant_param_asym(1.0, -1.0, CT_I8, &p));
  ck_assert(!ct_quant_param_asym(NAN, 1.0, CT_I8, &p));
  ck_assert(!ct_quant_param_asym(0.0, 1.0, CT_I16, &p));
}
END_TEST

/* From table rows: (6, 0, 6) symmetric with u8 allowed → u8, 6/255; (6, −1, 6) → i8 6/127;
 * u8 not allowed → i8; asymmetric (6, −1, 3) → u8 [−1, 3]: zp 64 (as above); bad rows. */
START_TEST(test_param_from_calibration_row) {
  ct_quant_param p;
  ck_assert(ct_quant_param_calib(6, 0, 6, false, true, &p));
  ck_assert_int_eq(p.dt, CT_U8);
  ck_assert_double_eq_tol(p.scale, 6.0 / 255, 1e-15);
  ck_assert(ct_quant_param_calib(6, -1, 6, false, true, &p));
  ck_assert_int_eq(p.dt, CT_I8);
  ck_assert_double_eq_tol(p.scale, 6.0 / 127, 1e-15);
  ck_assert(ct_quant_param_calib(6, 0, 6, false, false, &p));
  ck_assert_int_eq(p.dt, CT_I8);
  ck_assert(ct_quant_param_calib(6, -1, 3, true, true, &p));
  ck_assert_int_eq(p.dt, CT_U8);
  ck_assert_int_eq(p.zp, 64);
  /* asymmetric range clipped to the threshold: [−1, 3] at threshold 2 is [−1, 2]: 3/255, zp 85 */
  ck_assert(ct_quant_param_calib(2, -1, 3, true, true, &p));
  ck_assert_double_eq_tol(p.scale, 3.0 / 255, 1e-15);
  ck_assert_int_eq(p.zp, 85);
  ck_assert(!ct_quant_param_calib(-1, -1, 3, true, true, &p));
  ck_assert(!ct_quant_param_calib(6, 2, 1, false, true, &p));
  ck_assert(!ct_quant_param_calib(-6, 0, 1, false, true, &p));
  ck_assert(!ct_quant_param_calib(6, 0, INFINITY, true, true, &p));
}
END_TEST

/* Channel 0: max|w| = 1.27 → scale 0.01 → q = 50, −127, 1; channel 1 all zero → scale 1,
 * q = 0. Bias: 1/(0.5·0.25) = 8, −0.3125/(0.25·0.25) = −5. */
START_TEST(test_per_channel_weights_bias_and_zero_channel) {
  float w[6] = {0.5f, -1.27f, 0.01f, 0, 0, 0};
  double sc[2];
  int8_t q[6];
  ct_quant_weight_scales(w, 2, 3, sc);
  ck_assert_double_eq_tol(sc[0], 0.01, 1e-9);
  ck_assert_double_eq(sc[1], 1.0);
  ct_quant_weight_quantize(w, 2, 3, sc, q);
  const int8_t want[6] = {50, -127, 1, 0, 0, 0};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(q[i], want[i]);
  float b[2] = {1.0f, -0.3125f};
  double sw[2] = {0.5, 0.25};
  int32_t bq[2];
  ct_quant_bias_channels(b, 2, sw, 0.25, bq);
  ck_assert_int_eq(bq[0], 8);
  ck_assert_int_eq(bq[1], -5);
}
END_TEST

/* s_in 0.5, s_w {0.25, 0.75}, s_out 0.125: M = 1 → (2^30, 30); M = 3 → (3·2^29, 29) since
 * 3·2^30 > 2^31 − 1. acc 10 → 10 and 30. */
START_TEST(test_conv_requant_table) {
  double sw[2] = {0.25, 0.75};
  int32_t rq[4];
  ck_assert(ct_quant_mac_requant(0.5, sw, 2, 0.125, rq));
  ck_assert_int_eq(rq[0], 1 << 30);
  ck_assert_int_eq(rq[1], 30);
  ck_assert_int_eq(rq[2], 1610612736);
  ck_assert_int_eq(rq[3], 29);
  ck_assert_int_eq(ct_quant_requant(10, rq[0], rq[1], 0, CT_I8), 10);
  ck_assert_int_eq(ct_quant_requant(10, rq[2], rq[3], 0, CT_I8), 30);
  double bad[1] = {0.0};
  ck_assert(!ct_quant_mac_requant(0.5, bad, 1, 0.125, rq));
  ck_assert(!ct_quant_mac_requant(1e10, sw, 1, 1e-10, rq)); /* M ≥ 2^31 */
}
END_TEST

/* Concat input (s 0.2, zp 3) into the output (s 0.1, zp −2): M = 2 → (2^30, 29); q = −5 is
 * real −1.6 → −16 + (−2) = −18. */
START_TEST(test_concat_rescale) {
  int32_t m;
  int s;
  bool id;
  ck_assert(ct_quant_rescale(0.2, 3, 0.1, -2, &m, &s, &id));
  ck_assert_int_eq(m, 1 << 30);
  ck_assert_int_eq(s, 29);
  ck_assert(!id);
  ck_assert_int_eq(ct_quant_requant_act(-5 - 3, m, s, -2, CT_QUANT_ACT_NONE, 0, CT_I8), -18);
  ck_assert(ct_quant_rescale(0.2, 3, 0.2, 3, &m, &s, &id));
  ck_assert(id);
  ck_assert(ct_quant_rescale(0.2, 3, 0.2, 4, &m, &s, &id));
  ck_assert(!id);
  ck_assert(!ct_quant_rescale(0.0, 0, 0.1, 0, &m, &s, &id));
}
END_TEST

/* AvgPool 3x3, same scale: 2^18/9 = 29127.1 → (29127, 18) (2^19/9 > 32767). Sums 45 → 5,
 * 4 → 0 (0.444), 5 → 1 (0.556). 7x7: 2^20/49 = 21399.51 → (21400, 20); sums 147 → 3,
 * 24 → 0 (0.4898), 25 → 1 (0.5102). */
START_TEST(test_avgpool_division) {
  int32_t m;
  int s;
  ck_assert(ct_quant_pool_params(0.1, 0.1, 9, &m, &s));
  ck_assert_int_eq(m, 29127);
  ck_assert_int_eq(s, 18);
  ck_assert_int_eq(ct_quant_requant_act(45, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8), 5);
  ck_assert_int_eq(ct_quant_requant_act(4, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8), 0);
  ck_assert_int_eq(ct_quant_requant_act(5, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8), 1);
  ck_assert_int_eq(ct_quant_requant_act(-45, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8), -5);
  ck_assert(ct_quant_pool_params(0.1, 0.1, 49, &m, &s));
  ck_assert_int_eq(m, 21400);
  ck_assert_int_eq(s, 20);
  ck_assert_int_eq(ct_quant_requant_act(147, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8), 3);
  ck_assert_int_eq(ct_quant_requant_act(24, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8), 0);
  ck_assert_int_eq(ct_quant_requant_act(25, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8), 1);
  ck_assert(ct_quant_pool_params(0.1, 0.05, 9, &m, &s)); /* 2/9: 2^17·2/9 = 29127.1 */
  ck_assert_int_eq(m, 29127);
  ck_assert_int_eq(s, 17);
  ck_assert(!ct_quant_pool_params(0.1, 0.1, 0, &m, &s));
  ck_assert(!ct_quant_pool_params(1e6, 1.0, 1, &m, &s)); /* ≥ 32767.5 */
}
END_TEST

/* ADD, s_a 0.1, s_b 0.2, s_o 0.25 (i8, zp 0): r_a = 0.4 → (26214, 16) (0.4·2^17 > 32767),
 * r_b = 0.8 → (26214, 15); s_out = 15, sh_a = 1, sh_b = 0. a = 50, b = −30: 5 − 6 = −1 real
 * = −4 quanta: a' = rshift(1310700, 1) = 655350, b' = −786420, sum −131070, /2^15 = −3.99994
 * → −4. a = b = 10 / 5: 1 + 1 = 2 → 8 (262140 / 32768 = 7.9999 → 8). */
START_TEST(test_eltwise_add_params_hand) {
  ct_quant_param a = {0.1, 0, CT_I8}, b = {0.2, 0, CT_I8}, o = {0.25, 0, CT_I8};
  ct_quant_elt p;
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_ADD, a, b, o, &p));
  ck_assert_int_eq(p.m_a, 26214);
  ck_assert_int_eq(p.s_a, 1);
  ck_assert_int_eq(p.m_b, 26214);
  ck_assert_int_eq(p.s_b, 0);
  ck_assert_int_eq(p.s_out, 15);
  ck_assert_int_eq(ct_quant_eltwise(&p, 50, -30), -4);
  ck_assert_int_eq(ct_quant_eltwise(&p, 10, 5), 8);
  ck_assert_int_eq(ct_quant_eltwise(&p, 127, 127), 127); /* 38.1 / 0.25 saturates */
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_SUB, a, b, o, &p));
  ck_assert_int_eq(ct_quant_eltwise(&p, 10, 5), 0);
  ck_assert_int_eq(ct_quant_eltwise(&p, 50, -30), 44); /* 5 + 6 = 11 → 44 */
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_MAX, a, b, o, &p));
  ck_assert_int_eq(ct_quant_eltwise(&p, 50, -30), 20); /* max(5, −6) = 5 → 20 */
  ct_quant_param f = {0.1, 0, CT_F32};
  ck_assert(!ct_quant_eltwise_params(CT_QUANT_ELT_ADD, f, b, o, &p));
  ct_quant_param big = {1e5, 0, CT_I8};
  ck_assert(!ct_quant_eltwise_params(CT_QUANT_ELT_ADD, big, b, o, &p)); /* 4e5 ≥ 32767.5 */
}
END_TEST

/* MUL: s_a·s_b/s_o = 0.08 → (20972, 18) (0.08·2^18 = 20971.52; ·2^19 > 32767). a = 50,
 * b = −30: 5 · (−6) = −30 real = −120 quanta: 50·20972·(−30) = −31458000, /2^18 =
 * −120.0015 → −120. With zero points (a zp 2, b zp −3): a = 52, b = −33 gives the same. */
START_TEST(test_eltwise_mul_params_hand) {
  ct_quant_param a = {0.1, 0, CT_I8}, b = {0.2, 0, CT_I8}, o = {0.25, 0, CT_I8};
  ct_quant_elt p;
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_MUL, a, b, o, &p));
  ck_assert_int_eq(p.m_a, 20972);
  ck_assert_int_eq(p.s_a, 0);
  ck_assert_int_eq(p.m_b, 1);
  ck_assert_int_eq(p.s_b, 0);
  ck_assert_int_eq(p.s_out, 18);
  ck_assert_int_eq(ct_quant_eltwise(&p, 50, -30), -120);
  a.zp = 2;
  b.zp = -3;
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_MUL, a, b, o, &p));
  ck_assert_int_eq(ct_quant_eltwise(&p, 52, -33), -120);
}
END_TEST

/* Sigmoid, in i8 s = 1/16, out u8 s = 1/255: x = 0 → 127.5 → 128; x = 1 →
 * 0.7310586·255 = 186.42 → 186; x = −1 → 68.58 → 69; x = −8 → 0.086 → 0; x = 7.9375 →
 * 254.91 → 255. Tanh, out i8 s = 1/127: x = ±0.5 → ±0.4621172·127 = ±58.69 → ±59. */
START_TEST(test_lut_sigmoid_tanh_spot_values) {
  uint8_t t[256];
  ct_quant_lut_spec sg = ct_quant_lut_default(CT_QUANT_LUT_SIGMOID);
  ct_quant_param in = {1.0 / 16, 0, CT_I8}, out = {1.0 / 255, 0, CT_U8};
  ck_assert(ct_quant_lut_make(&sg, in, out, t));
  ck_assert_int_eq(t[128], 128);
  ck_assert_int_eq(t[128 + 16], 186);
  ck_assert_int_eq(t[128 - 16], 69);
  ck_assert_int_eq(t[0], 0);
  ck_assert_int_eq(t[255], 255);
  ct_quant_lut_spec th = ct_quant_lut_default(CT_QUANT_LUT_TANH);
  ct_quant_param o8 = {1.0 / 127, 0, CT_I8};
  ck_assert(ct_quant_lut_make(&th, in, o8, t));
  ck_assert_int_eq((int8_t)t[128 + 8], 59);
  ck_assert_int_eq((int8_t)t[128 - 8], -59);
  ck_assert_int_eq((int8_t)t[128], 0);
  ct_quant_lut_spec bad = {CT_QUANT_LUT_COUNT, 0, 0, 1, 0};
  ck_assert(!ct_quant_lut_make(&bad, in, o8, t));
}
END_TEST

/* HardSwish (s 0.1 in and out): x = 3 → 3; −3 → 0; 1 → 1·(1/6 + 1/2) = 0.667 → 7 quanta;
 * −1 → −1/3 → −3.33 → −3. GELU (in s 1/16, out s 1/64): x = 1 → 0.841345·64 = 53.85 → 54;
 * x = −1 → −0.158655·64 = −10.15 → −10. LeakyRelu 0.01 (s 0.1): x = −10 → −0.1 → −1. */
START_TEST(test_lut_hardswish_gelu_leaky) {
  uint8_t t[256];
  ct_quant_param s01 = {0.1, 0, CT_I8};
  ct_quant_lut_spec hs = ct_quant_lut_default(CT_QUANT_LUT_HARDSWISH);
  ck_assert(ct_quant_lut_make(&hs, s01, s01, t));
  ck_assert_int_eq((int8_t)t[128 + 30], 30);
  ck_assert_int_eq((int8_t)t[128 - 30], 0);
  ck_assert_int_eq((int8_t)t[128 + 10], 7);
  ck_assert_int_eq((int8_t)t[128 - 10], -3);
  ct_quant_lut_spec ge = ct_quant_lut_default(CT_QUANT_LUT_GELU);
  ct_quant_param in = {1.0 / 16, 0, CT_I8}, out = {1.0 / 64, 0, CT_I8};
  ck_assert(ct_quant_lut_make(&ge, in, out, t));
  ck_assert_int_eq((int8_t)t[128 + 16], 54);
  ck_assert_int_eq((int8_t)t[128 - 16], -10);
  ct_quant_lut_spec lr = ct_quant_lut_default(CT_QUANT_LUT_LEAKYRELU);
  ck_assert(ct_quant_lut_make(&lr, s01, s01, t));
  ck_assert_int_eq((int8_t)t[128 - 100], -1);
  ck_assert_int_eq((int8_t)t[128 + 100], 100);
  ck_assert_str_eq(ct_quant_lut_name(CT_QUANT_LUT_HARDSWISH), "hardswish");
  ck_assert_ptr_null(ct_quant_lut_name(CT_QUANT_LUT_COUNT));
  ck_assert_double_eq(ct_quant_lut_default(CT_QUANT_LUT_HARDSIGMOID).alpha, 0.2);
}
END_TEST

/* sat_i8(round_half_away(v)), written here independently of quant/. */
static int ref_i8(double v) {
  double r = v < 0 ? -floor(-v + 0.5) : floor(v + 0.5);
  return r < -128 ? -128 : r > 127 ? 127 : (int)r;
}

/* The integer POOL division equals exact rounding of sum / count for every window sum of
 * int8 values: sum/9 and sum/49 are never ties (9, 49 odd), at least 1/18 resp. 1/98 away
 * from one, and the multiplier error (< 4.3e-7, < 4.7e-7 relative) moves |sum/count| ≤ 128
 * by less than that. */
START_TEST(test_avgpool_exact_for_all_sums) {
  const int counts[2] = {9, 49};
  for (int k = 0; k < 2; k++) {
    int32_t m;
    int s;
    ck_assert(ct_quant_pool_params(0.1, 0.1, counts[k], &m, &s));
    for (int sum = -128 * counts[k]; sum <= 127 * counts[k]; sum++)
      ck_assert_int_eq(ct_quant_requant_act(sum, m, s, 0, CT_QUANT_ACT_NONE, 0, CT_I8),
                       ref_i8((double)sum / counts[k]));
  }
}
END_TEST

/* ELTWISE with the derived parameters against real arithmetic over all int8 pairs, with zero
 * points: add: (0.1·(a−3) + 0.2·(b+5)) / 0.25 = 0.4·n, never within 0.1 of a tie, the fixed
 * point error is < 0.002; mul: 0.08·(a−3)(b+5) is a multiple of 0.04, never within 0.02 of a
 * tie, error < 127·2.3e-5 while unsaturated. So both must equal round-and-saturate exactly. */
START_TEST(test_eltwise_params_match_real_arithmetic) {
  ct_quant_param a = {0.1, 3, CT_I8}, b = {0.2, -5, CT_I8}, o = {0.25, 7, CT_I8};
  ct_quant_elt add, mul;
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_ADD, a, b, o, &add));
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_MUL, a, b, o, &mul));
  for (int x = -128; x < 128; x++)
    for (int y = -128; y < 128; y++) {
      double ra = 0.1 * (x - 3), rb = 0.2 * (y + 5);
      ck_assert_int_eq(ct_quant_eltwise(&add, x, y), ref_i8((ra + rb) / 0.25 + 7));
      ck_assert_int_eq(ct_quant_eltwise(&mul, x, y), ref_i8(ra * rb / 0.25 + 7));
    }
}
END_TEST

/* CONV requant of the derived table against real arithmetic: y = round(acc · s_in·s_w/s_out)
 * for acc in ±20000 (M = 0.5·0.013/0.07 ≈ 0.0929, relative multiplier error < 2^-30: exact
 * except within 1e-6 of a tie, which these accumulators never are as checked below). */
START_TEST(test_conv_requant_matches_real_arithmetic) {
  double sw[1] = {0.013};
  int32_t rq[2];
  ck_assert(ct_quant_mac_requant(0.5, sw, 1, 0.07, rq));
  double M = 0.5 * 0.013 / 0.07;
  for (int acc = -20000; acc <= 20000; acc++) {
    double v = acc * M, f = v - floor(v);
    if (fabs(f - 0.5) < 1e-6) continue;
    ck_assert_int_eq(ct_quant_requant(acc, rq[0], rq[1], 0, CT_I8), ref_i8(v));
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("quant_ops");
  TCase *tc = tcase_create("quant_ops");
  tcase_add_test(tc, test_sym_and_unsigned_types);
  tcase_add_test(tc, test_asymmetric_zero_point);
  tcase_add_test(tc, test_param_from_calibration_row);
  tcase_add_test(tc, test_per_channel_weights_bias_and_zero_channel);
  tcase_add_test(tc, test_conv_requant_table);
  tcase_add_test(tc, test_concat_rescale);
  tcase_add_test(tc, test_avgpool_division);
  tcase_add_test(tc, test_eltwise_add_params_hand);
  tcase_add_test(tc, test_eltwise_mul_params_hand);
  tcase_add_test(tc, test_lut_sigmoid_tanh_spot_values);
  tcase_add_test(tc, test_lut_hardswish_gelu_leaky);
  tcase_add_test(tc, test_avgpool_exact_for_all_sums);
  tcase_add_test(tc, test_eltwise_params_match_real_arithmetic);
  tcase_add_test(tc, test_conv_requant_matches_real_arithmetic);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
