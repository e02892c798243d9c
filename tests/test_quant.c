/* test_quant.c: quant/ — rounding shift (ties, negatives, shift 0 and 63), requantization
 * and saturation, multiplier search accuracy, float→int rounding, scales, bias, LUTs,
 * elementwise; exhaustive int8 checks against plain formulas written here, independently. */
#include <math.h>
#include <stdlib.h>

#include "quant/quant.h"
#include "quant/quant_resize.h"
#include "tests/testutil.h"

/* Independent reference: floor((x + 2^(s-1)) / 2^s) by exact long division on |x|. */
static int64_t ref_rshift(int64_t x, int s) {
  if (s == 0) return x;
  __int128 v = (__int128)x + ((__int128)1 << (s - 1));
  __int128 q = v / ((__int128)1 << s);
  if (v < 0 && q * ((__int128)1 << s) != v) q -= 1; /* floor for negatives */
  return (int64_t)q;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

START_TEST(test_rshift_round_hand_values) {
  /* ties go toward +inf: 2.5 → 3, -2.5 → -2, -1.5 → -1 */
  ck_assert_int_eq(ct_quant_rshift_round(5, 1), 3);
  ck_assert_int_eq(ct_quant_rshift_round(-5, 1), -2);
  ck_assert_int_eq(ct_quant_rshift_round(-3, 1), -1);
  ck_assert_int_eq(ct_quant_rshift_round(7, 2), 2);   /* 1.75 */
  ck_assert_int_eq(ct_quant_rshift_round(-7, 2), -2); /* -1.75 */
  ck_assert_int_eq(ct_quant_rshift_round(6, 2), 2);   /* 1.5 */
  ck_assert_int_eq(ct_quant_rshift_round(-6, 2), -1); /* -1.5 */
  ck_assert_int_eq(ct_quant_rshift_round(-5, 2), -1); /* -1.25 */
  /* shift 0 is the identity, including the extremes */
  ck_assert_int_eq(ct_quant_rshift_round(INT64_MIN, 0), INT64_MIN);
  ck_assert_int_eq(ct_quant_rshift_round(INT64_MAX, 0), INT64_MAX);
  /* shift 63: INT64_MAX / 2^63 ≈ 1 - 2^-63 → 1; 2^62 / 2^63 = 0.5 → 1; -2^62 → -0.5 → 0 */
  ck_assert_int_eq(ct_quant_rshift_round(INT64_MAX, 63), 1);
  ck_assert_int_eq(ct_quant_rshift_round(INT64_C(1) << 62, 63), 1);
  ck_assert_int_eq(ct_quant_rshift_round(-(INT64_C(1) << 62), 63), 0);
  ck_assert_int_eq(ct_quant_rshift_round(INT64_MIN, 63), -1);
  ck_assert_int_eq(ct_quant_rshift_round((INT64_C(1) << 62) - 1, 63), 0);
}
END_TEST

START_TEST(test_rshift_round_matches_wide_reference) {
  srand(7);
  for (int i = 0; i < 200000; i++) {
    uint64_t u = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand();
    int64_t x = (int64_t)(i & 1 ? 0 - u : u);
    if (i % 1000 == 0) x = i % 3000 == 0 ? INT64_MAX : INT64_MIN + i;
    int s = i % 64;
    ck_assert_int_eq(ct_quant_rshift_round(x, s), ref_rshift(x, s));
  }
}
END_TEST

START_TEST(test_requant_hand_values_and_saturation) {
  ck_assert_int_eq(ct_quant_requant(100, 1 << 30, 31, 0, CT_I8), 50); /* 100 * 0.5 */
  ck_assert_int_eq(ct_quant_requant(3, 1, 1, 0, CT_I8), 2);           /* 1.5 → 2 */
  ck_assert_int_eq(ct_quant_requant(-3, 1, 1, 0, CT_I8), -1);         /* -1.5 → -1 */
  ck_assert_int_eq(ct_quant_requant(1000, 1, 0, 0, CT_I8), 127);
  ck_assert_int_eq(ct_quant_requant(-1000, 1, 0, 0, CT_I8), -128);
  ck_assert_int_eq(ct_quant_requant(-5, 1, 0, 0, CT_U8), 0);
  ck_assert_int_eq(ct_quant_requant(-3, 1, 0, 10, CT_U8), 7);
  ck_assert_int_eq(ct_quant_requant(300, 1, 0, 0, CT_U8), 255);
  ck_assert_int_eq(ct_quant_requant(40000, 1, 0, 0, CT_I16), 32767);
  ck_assert_int_eq(ct_quant_requant(INT32_MAX, INT32_MAX, 0, 0, CT_I32), INT32_MAX);
  ck_assert_int_eq(ct_quant_requant(INT32_MIN, INT32_MAX, 0, 0, CT_I32), INT32_MIN);
  ck_assert_int_eq(ct_quant_requant(INT32_MIN, INT32_MIN, 62, 0, CT_I32), 1); /* 2^62 / 2^62 */
  /* fused activations clamp at zp_out (relu) and act_hi (clamp) before saturation */
  ck_assert_int_eq(ct_quant_requant_act(-50, 1, 0, -10, CT_QUANT_ACT_RELU, 0, CT_I8), -10);
  ck_assert_int_eq(ct_quant_requant_act(20, 1, 0, -10, CT_QUANT_ACT_RELU, 0, CT_I8), 10);
  ck_assert_int_eq(ct_quant_requant_act(200, 1, 0, 0, CT_QUANT_ACT_CLAMP, 60, CT_I8), 60);
  ck_assert_int_eq(ct_quant_requant_act(200, 1, 0, 0, CT_QUANT_ACT_CLAMP, 300, CT_I8), 127);
  ck_assert_int_eq(ct_quant_requant_act(-7, 1, 0, 0, CT_QUANT_ACT_CLAMP, 60, CT_I8), 0);
}
END_TEST

START_TEST(test_requant_exhaustive_int8_range_against_formula) {
  const int32_t ms[] = {1, 3, 1 << 30, 1518500250, -1518500250, 77, INT32_MAX};
  const int ss[] = {0, 1, 7, 31, 38, 62};
  for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
    for (size_t si = 0; si < sizeof ss / sizeof *ss; si++)
      for (int32_t acc = -70000; acc <= 70000; acc += 7) {
        int64_t want = clamp64(ref_rshift((int64_t)acc * ms[mi], ss[si]) + 5, -128, 127);
        ck_assert_int_eq(ct_quant_requant(acc, ms[mi], ss[si], 5, CT_I8), want);
      }
}
END_TEST

/* The requant rows (vectorized, compiled per ISA) equal ct_quant_requant_act element by
 * element for every output type and activation, over shifts 0..63, ties (±2^(s-1)), int32
 * limits, products near ±2^62 and odd row lengths (vector body and tail); the int32 row too. */
START_TEST(test_requant_row_matches_element) {
  const ct_dtype dts[] = {CT_I8, CT_U8, CT_I16, CT_U16, CT_I32};
  const int32_t ms[] = {1, 3, 1 << 30, 1518500250, -1518500250, INT32_MAX, INT32_MIN};
  const int ss[] = {0, 1, 2, 7, 31, 32, 33, 34, 38, 62, 63};
  const int32_t zps[] = {-7, 0, 100};
  int64_t x[61];
  int32_t x32[61], got[61];
  srand(5);
  for (size_t di = 0; di < 5; di++)
    for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
      for (size_t si = 0; si < sizeof ss / sizeof *ss; si++)
        for (int act = 0; act < 3; act++) {
          int s = ss[si], n = 33 + (int)((di * 7 + mi * 3 + si + (size_t)act) % 29);
          int32_t zp = zps[(mi + si) % 3], hi = (int32_t)(act == 2 ? 90 + 1000 * (int)di : 0);
          for (int i = 0; i < n; i++) {
            int64_t tie = s ? (int64_t)1 << (s - 1) : 1, r = ((int64_t)rand() - RAND_MAX / 2) / ((int64_t)1 << (i % 29));
            int64_t v = i % 6 == 0 ? INT32_MIN : i % 6 == 1 ? INT32_MAX : i % 6 == 2 ? (i & 8 ? -1 : 1) * (tie / (ms[mi] ? ms[mi] : 1)) : r;
            x[i] = v, x32[i] = (int32_t)v;
          }
          for (int row = 0; row < 2; row++) {
            ck_assert(row ? ct_quant_requant_act_row_i32(x32, n, ms[mi], s, zp, (ct_quant_act)act, hi, dts[di], got)
                          : ct_quant_requant_act_row(x, n, ms[mi], s, zp, (ct_quant_act)act, hi, dts[di], got));
            for (int i = 0; i < n; i++) {
              int32_t want = ct_quant_requant_act(row ? x32[i] : x[i], ms[mi], s, zp, (ct_quant_act)act, hi, dts[di]);
              int32_t g = dts[di] == CT_I8 ? ((int8_t *)got)[i] : dts[di] == CT_U8 ? ((uint8_t *)got)[i]
                          : dts[di] == CT_I16 ? ((int16_t *)got)[i] : dts[di] == CT_U16 ? ((uint16_t *)got)[i] : got[i];
              ck_assert_msg(g == want, "dt %d m %d s %d act %d x %lld: %d != %d", (int)dts[di], ms[mi], s, act,
                            (long long)x[i], g, want);
            }
          }
        }
  got[0] = 42;
  ck_assert(!ct_quant_requant_act_row(x, 1, 1, 0, 0, CT_QUANT_ACT_NONE, 0, CT_F32, got) && got[0] == 42);
}
END_TEST

/* |m·2^-s − M| ≤ 2^-31·|M| over a sweep; (m, s) also beats its neighbours. */
START_TEST(test_multiplier_search_accuracy_sweep) {
  for (double M = 1.0 / (1 << 30); M < 1e6; M *= 1.0137) {
    for (int sign = -1; sign <= 1; sign += 2) {
      int32_t m;
      int s;
      ck_assert(ct_quant_multiplier_shift(sign * M, &m, &s));
      double got = ldexp((double)m, -s), err = fabs(got - sign * M);
      ck_assert_msg(err <= ldexp(fabs(M), -31), "M=%g m=%d s=%d err=%g", sign * M, m, s, err);
      ck_assert((m < 0) == (sign < 0));
      /* a larger shift would need |m| ≥ 2^31 */
      if (s < 63) ck_assert(fabs(round(ldexp(M, s + 1))) > 2147483647.0);
    }
  }
  int32_t m;
  int s;
  ck_assert(ct_quant_multiplier_shift(0.5, &m, &s));
  ck_assert_int_eq(m, 1 << 30);
  ck_assert_int_eq(s, 31);
  ck_assert(ct_quant_multiplier_shift(-0.75, &m, &s));
  ck_assert_int_eq(m, -1610612736);
  ck_assert_int_eq(s, 31);
  ck_assert(ct_quant_multiplier_shift(0.0, &m, &s));
  ck_assert_int_eq(m, 0);
  ck_assert(!ct_quant_multiplier_shift(3e9, &m, &s));
  ck_assert(!ct_quant_multiplier_shift(NAN, &m, &s));
  /* 8-bit variant: |m| ≤ 127. 0.5 → (64, 7); 0.3 → 0.3·256 = 76.8 → (77, 8) */
  ck_assert(ct_quant_multiplier_shift_bits(0.5, 8, &m, &s));
  ck_assert_int_eq(m, 64);
  ck_assert_int_eq(s, 7);
  ck_assert(ct_quant_multiplier_shift_bits(0.3, 8, &m, &s));
  ck_assert_int_eq(m, 77);
  ck_assert_int_eq(s, 8);
  ck_assert(!ct_quant_multiplier_shift_bits(200, 8, &m, &s));
}
END_TEST

START_TEST(test_float_to_int_rounds_half_away_and_saturates) {
  ck_assert_int_eq(ct_quant_round_sat(2.5, CT_I8), 3);
  ck_assert_int_eq(ct_quant_round_sat(-2.5, CT_I8), -3);
  ck_assert_int_eq(ct_quant_round_sat(0.5, CT_I8), 1);
  ck_assert_int_eq(ct_quant_round_sat(-0.5, CT_I8), -1);
  ck_assert_int_eq(ct_quant_round_sat(0.49999, CT_I8), 0);
  ck_assert_int_eq(ct_quant_round_sat(300, CT_I8), 127);
  ck_assert_int_eq(ct_quant_round_sat(-1e300, CT_I32), INT32_MIN);
  ck_assert_int_eq(ct_quant_round_sat(NAN, CT_I8), 0);
  ck_assert_int_eq(ct_quant_round_sat(-3, CT_U8), 0);
  ck_assert_int_eq(ct_quant_quantize(1.0, 0.5, 3, CT_I8), 5);
  ck_assert_int_eq(ct_quant_quantize(0.25, 0.5, 0, CT_I8), 1);  /* 0.5 → 1 */
  ck_assert_int_eq(ct_quant_quantize(-0.25, 0.5, 0, CT_I8), -1); /* -0.5 → -1 */
  ck_assert_int_eq(ct_quant_quantize(-10.0, 0.5, 3, CT_U8), 0);
  ck_assert_int_eq(ct_quant_quantize(1e30, 1e-30, 0, CT_I8), 127);
  ck_assert_double_eq(ct_quant_dequantize(5, 0.5, 3), 1.0);
}
END_TEST

START_TEST(test_scales_bias_and_weights) {
  ck_assert_double_eq(ct_quant_scale_sym(127.0, CT_I8), 1.0);
  ck_assert_double_eq(ct_quant_scale_sym(255.0, CT_U8), 1.0);
  float w[6] = {1, -2, 0.5, 0, 0, 0};
  double sc[2];
  ct_quant_weight_scales(w, 2, 3, sc);
  /* 1, −2, 0.5 are multiples of 0.5 = 2/4: the finest exact grid 2/n, n ≤ 127, is n = 124 */
  ck_assert_double_eq_tol(sc[0], 2.0 / 124.0, 1e-15);
  ck_assert_double_eq(sc[1], 1.0);
  float off[2] = {1, 0.3141592f}; /* no n ≤ 127 makes 0.3141592·n an integer: max / 127 */
  ct_quant_weight_scales(off, 1, 2, sc);
  ck_assert_double_eq_tol(sc[0], 1.0 / 127.0, 1e-15);
  float grid[3] = {0.3f, -0.1f, 0.2f}; /* multiples of 0.1 = 0.3/3: n = 126 */
  ct_quant_weight_scales(grid, 1, 3, sc);
  ck_assert_double_eq_tol(sc[0], 0.3 / 126.0, 1e-9);
  ck_assert_int_eq(ct_quant_bias(1.0, 0.5, 0.25), 8);
  ck_assert_int_eq(ct_quant_bias(-0.3125, 0.5, 0.25), -3); /* -2.5 → -3 */
  ck_assert_int_eq(ct_quant_bias(1e30, 1e-10, 1e-10), INT32_MAX);
}
END_TEST

static double relu_f(double x, void *ctx) {
  (void)ctx;
  return x > 0 ? x : 0;
}

START_TEST(test_lut_build_and_index) {
  uint8_t t[256];
  ck_assert_int_eq(ct_quant_lut_index(-128, CT_I8), 0);
  ck_assert_int_eq(ct_quant_lut_index(127, CT_I8), 255);
  ck_assert_int_eq(ct_quant_lut_index(0, CT_U8), 0);
  /* relu, s_in = 0.1, s_out = 0.05: T[i] = sat(round(max(0, (i-128)*0.1) / 0.05)) = min(127, 2*(i-128)) */
  ck_assert(ct_quant_lut_build(relu_f, NULL, 0.1, 0, CT_I8, 0.05, 0, CT_I8, t));
  for (int i = 0; i < 256; i++) {
    int v = i - 128, want = v <= 0 ? 0 : 2 * v > 127 ? 127 : 2 * v;
    ck_assert_int_eq((int8_t)t[i], want);
  }
  ck_assert(!ct_quant_lut_build(relu_f, NULL, 0.1, 0, CT_I16, 0.05, 0, CT_I8, t));
  ck_assert(!ct_quant_lut_build(relu_f, NULL, 0.0, 0, CT_I8, 0.05, 0, CT_I8, t));
}
END_TEST

static double ident_f(double x, void *ctx) {
  (void)ctx;
  return x;
}

static double square_f(double x, void *ctx) {
  (void)ctx;
  return x * x;
}

/* The 16-bit LUT by hand: s_in = 1/256 puts entry j at x_j = j − 128 (one segment per
 * output step), T_j = 128·clamp(f(x_j)) (7 fraction bits). */
START_TEST(test_lut16_build_and_lookup) {
  int16_t t[CT_QUANT_LUT16_ENTRIES];
  ck_assert(ct_quant_lut16_build(ident_f, NULL, 1.0 / 256, 1.0, 0, CT_I8, t));
  ck_assert_int_eq(t[0], -128 * 128);
  ck_assert_int_eq(t[128], 0);
  ck_assert_int_eq(t[129], 128);
  ck_assert_int_eq(t[255], 127 * 128);
  ck_assert_int_eq(t[256], 127 * 128); /* f = 128 saturates to 127 before scaling */
  int i, f;
  ct_quant_lut16_index(-32768, &i, &f);
  ck_assert(i == 0 && f == 0);
  ct_quant_lut16_index(300, &i, &f); /* u = 33068 = 129·256 + 44 */
  ck_assert(i == 129 && f == 44);
  ck_assert_int_eq(ct_quant_lut16_lookup(t, 0, CT_I8), 0);
  ck_assert_int_eq(ct_quant_lut16_lookup(t, 128, CT_I8), 1);     /* 0.5: v = 128·128 = 2^14, ties up */
  ck_assert_int_eq(ct_quant_lut16_lookup(t, -128, CT_I8), 0);    /* −0.5: −2^15 + 2^14, ties up to 0 */
  ck_assert_int_eq(ct_quant_lut16_lookup(t, -129, CT_I8), -1);
  ck_assert_int_eq(ct_quant_lut16_lookup(t, 32767, CT_I8), 127);
  ck_assert_int_eq(ct_quant_lut16_lookup(t, -32768, CT_I8), -128);
  ck_assert_int_eq(ct_quant_lut16_lookup(t, 40000, CT_I8), 127); /* the input saturates to i16 first */
  /* x² interpolates between entries: x = 1.25 (code 320) lies between T_129 = 128 (1) and
   * T_130 = 512 (4): v = 128·256 + 384·64 = 57344, rshift_round(v, 15) = 2 (exact 1.5625) */
  ck_assert(ct_quant_lut16_build(square_f, NULL, 1.0 / 256, 1.0, 0, CT_U8, t));
  ck_assert_int_eq(t[129], 128);
  ck_assert_int_eq(t[130], 512);
  ck_assert_int_eq(t[0], 255 * 128); /* (−128)² saturates to u8's 255 */
  ck_assert_int_eq(ct_quant_lut16_lookup(t, 320, CT_U8), 2);
  ck_assert_int_eq(ct_quant_lut16_interp(128, 512, 64, CT_U8), 2);
  ck_assert_int_eq(ct_quant_lut16_interp(-16384, -16384, 255, CT_I8), -128);
  /* zero point: the entries carry it (f = 0 everywhere gives zp) */
  ck_assert(ct_quant_lut16_build(relu_f, NULL, 1.0 / 256, 1.0, 7, CT_U8, t));
  ck_assert_int_eq(ct_quant_lut16_lookup(t, -1000, CT_U8), 7);
  ck_assert(!ct_quant_lut16_build(ident_f, NULL, 1.0 / 256, 1.0, 0, CT_I16, t));
  ck_assert(!ct_quant_lut16_build(ident_f, NULL, 0.0, 1.0, 0, CT_I8, t));
  ct_quant_lut_spec sp = ct_quant_lut_default(CT_QUANT_LUT_SILU);
  ck_assert(!ct_quant_lut16_make(&sp, (ct_quant_param){0.01, 0, CT_I8}, (ct_quant_param){0.01, 0, CT_I8}, t));
  ck_assert(!ct_quant_lut16_make(&sp, (ct_quant_param){0.01, 3, CT_I16}, (ct_quant_param){0.01, 0, CT_I8}, t));
  ck_assert(ct_quant_lut16_make(&sp, (ct_quant_param){0.01, 0, CT_I16}, (ct_quant_param){0.01, 0, CT_I8}, t));
}
END_TEST

/* Every (a, b) in int8² for each op against the formula of isa.def ELTWISE written here. */
START_TEST(test_eltwise_exhaustive_int8) {
  for (int op = 0; op <= CT_QUANT_ELT_MIN; op++) {
    ct_quant_elt p = {(ct_quant_elt_op)op, 90, 3, -45, -2, 4, 100, 6, 5, 9, CT_QUANT_ACT_CLAMP, CT_I8};
    for (int a = -128; a < 128; a++)
      for (int b = -128; b < 128; b++) {
        int64_t x = ref_rshift((int64_t)(a - 3) * 90, 6), y = ref_rshift((int64_t)(b + 2) * -45, 5), r;
        r = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : op == 3 ? (x > y ? x : y) : (x < y ? x : y);
        int64_t v = ref_rshift(r, 9) + 4;
        v = clamp64(clamp64(v, 4, 100), -128, 127);
        ck_assert_int_eq(ct_quant_eltwise(&p, a, b), v);
      }
  }
}
END_TEST

START_TEST(test_half_wrappers_round_to_nearest_even) {
  ck_assert_uint_eq(ct_quant_f32_to_bf16(1.0f), 0x3f80);
  ck_assert_uint_eq(ct_quant_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
  ck_assert_uint_eq(ct_quant_f32_to_f16(1.0f), 0x3c00);
  ck_assert_float_eq(ct_quant_round_float(1.0f + 0x1p-8f, CT_BF16), 1.0f);
  ck_assert_float_eq(ct_quant_round_float(1.0f + 3 * 0x1p-11f, CT_F16), 1.0f + 4 * 0x1p-11f);
  ck_assert_float_eq(ct_quant_round_float(0.1f, CT_F32), 0.1f);
  ck_assert_float_eq(ct_quant_bf16_to_f32(0x4000), 2.0f);
  ck_assert_float_eq(ct_quant_f16_to_f32(0x4000), 2.0f);
}
END_TEST

/* The clamp bound of a float result (ISA act_hi:zp_out, hand values): 3.4291034 (a Clip bound of
 * MobileNetV2) rounds to bf16 3.421875 = 0x405B0000 (219 · 2^-6) and to f16 3.4296875 =
 * 0x405B8000 as an f32 (1756 · 2^-9); an f32 result keeps the bound's own bits (0x405B766E);
 * negative bounds and infinities; clamping at the rounded bound then rounding equals rounding
 * the clamp at the bound. */
START_TEST(test_float_act_hi_bits) {
  int64_t h = 0, z = 0;
  ck_assert(ct_quant_float_act_hi_bits(3.4291034f, CT_BF16, &h, &z) && h == 0x405B && z == 0);
  ck_assert_float_eq(ct_quant_float_act_hi(h, z), 3.421875f);
  ck_assert(ct_quant_float_act_hi_bits(3.4291034f, CT_F16, &h, &z) && h == 0x405B && z == (int16_t)0x8000);
  ck_assert_float_eq(ct_quant_float_act_hi(h, z), 3.4296875f);
  ck_assert(ct_quant_float_act_hi_bits(3.4291034f, CT_F32, &h, &z));
  ck_assert_float_eq(ct_quant_float_act_hi(h, z), 3.4291034f);
  ck_assert(ct_quant_float_act_hi_bits(6.0f, CT_F32, &h, &z) && h == 0x40C0 && z == 0);
  h = 77, z = 78;
  ck_assert(!ct_quant_float_act_hi_bits(INFINITY, CT_BF16, &h, &z) && h == 77 && z == 78);
  ck_assert(ct_quant_float_act_hi_bits(-6.0f, CT_BF16, &h, &z) && h == (int16_t)0xC0C0 && z == 0);
  ck_assert_float_eq(ct_quant_float_act_hi(h, z), -6.0f);
  const float b = 3.4291034f;
  for (int t = 0; t < 2; t++) {
    ct_dtype dt = t ? CT_F16 : CT_BF16;
    ck_assert(ct_quant_float_act_hi_bits(b, dt, &h, &z));
    float br = ct_quant_float_act_hi(h, z);
    for (float v = 3.40f; v < 3.45f; v += 0x1p-14f)
      ck_assert_float_eq(ct_quant_round_float(v < b ? v : b, dt), ct_quant_round_float(v < br ? v : br, dt));
  }
}
END_TEST

/* The two named roundings on the ties ±0.5, ±1.5, ±2.5 and around them (hand values). */
START_TEST(test_round_half_away_and_half_even_ties) {
  const double x[] = {0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.4999999, 2.5000001, -3.5, 0.0};
  const double away[] = {1, -1, 2, -2, 3, -3, 2, 3, -4, 0};
  const double even[] = {0, -0.0, 2, -2, 2, -2, 2, 3, -4, 0};
  for (int i = 0; i < 10; i++) {
    ck_assert_double_eq(ct_quant_round_half_away(x[i]), away[i]);
    ck_assert_double_eq(ct_quant_round_half_even(x[i]), even[i]);
  }
  /* 2^52 + 1 is an integer already; 2^51 + 0.5 is a tie whose lower neighbour 2^51 is even */
  ck_assert_double_eq(ct_quant_round_half_even(0x1p52 + 1), 0x1p52 + 1);
  ck_assert_double_eq(ct_quant_round_half_even(0x1p51 + 0.5), 0x1p51);
  ck_assert_double_eq(ct_quant_round_half_even(0x1p51 + 1.5), 0x1p51 + 2);
  ck_assert(isnan(ct_quant_round_half_even(NAN)));
  ck_assert(isinf(ct_quant_round_half_even(-INFINITY)));
}
END_TEST

/* ONNX QuantizeLinear: half to even, then saturate; ctpu's quantize: half away. */
START_TEST(test_quantize_onnx_vs_ctpu_rounding) {
  ck_assert_int_eq(ct_quant_quantize_onnx(2.5f, 1.0f, 0, CT_I8), 2);
  ck_assert_int_eq(ct_quant_quantize(2.5, 1.0, 0, CT_I8), 3);
  ck_assert_int_eq(ct_quant_quantize_onnx(-2.5f, 1.0f, 0, CT_I8), -2);
  ck_assert_int_eq(ct_quant_quantize(-2.5, 1.0, 0, CT_I8), -3);
  ck_assert_int_eq(ct_quant_quantize_onnx(3.5f, 1.0f, 0, CT_I8), 4);
  ck_assert_int_eq(ct_quant_quantize_onnx(0.75f, 0.5f, 10, CT_U8), 12); /* 1.5 → 2, + 10 */
  ck_assert_int_eq(ct_quant_quantize_onnx(-0.5f, 1.0f, 10, CT_U8), 10);  /* -0.5 → 0 */
  ck_assert_int_eq(ct_quant_quantize_onnx(300.0f, 1.0f, 0, CT_I8), 127);
  ck_assert_int_eq(ct_quant_quantize_onnx(-300.0f, 1.0f, 5, CT_U8), 0);
  ck_assert_int_eq(ct_quant_quantize_onnx(1e30f, 1e-30f, 0, CT_I8), 127);
  ck_assert_int_eq(ct_quant_quantize_onnx(NAN, 1.0f, -7, CT_I8), -7);
}
END_TEST

/* Shifts outside 0..63 are clamped (quant.h): negative = no shift, > 63 = 63. Tiny
 * multipliers use the largest shift: 2^-40 → m = 2^23, s = 63 (exact); 3·2^-70 is below the
 * resolution 2^-63: 3·2^-70·2^63 = 0.023 rounds to m = 0 (s = 63). */
START_TEST(test_negative_and_large_shifts) {
  ck_assert_int_eq(ct_quant_rshift_round(5, -3), 5);
  ck_assert_int_eq(ct_quant_rshift_round(-5, -1), -5);
  ck_assert_int_eq(ct_quant_rshift_round(INT64_MAX, 100), 1);
  ck_assert_int_eq(ct_quant_rshift_round(-(INT64_C(1) << 62), 64), 0);
  int32_t m;
  int s;
  ck_assert(ct_quant_multiplier_shift(0x1p-40, &m, &s));
  ck_assert_int_eq(m, 1 << 23);
  ck_assert_int_eq(s, 63);
  ck_assert(ct_quant_multiplier_shift(3 * 0x1p-70, &m, &s));
  ck_assert_int_eq(m, 0);
  ck_assert_int_eq(s, 63);
  ck_assert_int_eq(ct_quant_requant(1 << 20, 1 << 23, 63, 0, CT_I32), 0); /* 2^43 / 2^63 */
  ck_assert_int_eq(ct_quant_requant(INT32_MAX, 1 << 23, 40, 0, CT_I32), 16384); /* 2^54 / 2^40 */
}
END_TEST

/* The vectorizable ONNX row equals the scalar ONNX quantize element by element: quarter
 * steps (ties at every odd k with scale 0.5), random floats, NaN, infinities, huge values;
 * i8 and u8, several zero points. Also round_even_sat's ties and NaN by hand. */
START_TEST(test_quantize_onnx_row_matches_scalar) {
  enum { N = 4103 };
  static float x[N];
  int8_t yi[N];
  uint8_t yu[N];
  srand(11);
  for (int i = 0; i < N; i++) x[i] = i < 4001 ? (float)(i - 2000) / 4 : (float)(rand() % 200001 - 100000) / 997;
  x[N - 1] = NAN, x[N - 2] = INFINITY, x[N - 3] = -INFINITY, x[N - 4] = 3e38f, x[N - 5] = -3e38f;
  const int32_t zps[3] = {0, 5, -7};
  for (int z = 0; z < 3; z++) {
    ck_assert(ct_quant_quantize_onnx_row(x, N, 0.5f, zps[z], CT_I8, yi));
    ck_assert(ct_quant_quantize_onnx_row(x, N, 0.5f, zps[z] + 7, CT_U8, yu));
    for (int i = 0; i < N; i++) {
      ck_assert_int_eq(yi[i], ct_quant_quantize_onnx(x[i], 0.5f, zps[z], CT_I8));
      ck_assert_int_eq(yu[i], ct_quant_quantize_onnx(x[i], 0.5f, zps[z] + 7, CT_U8));
    }
  }
  ck_assert(!ct_quant_quantize_onnx_row(x, N, 0.5f, 0, CT_I16, yi));
  ck_assert_int_eq(ct_quant_round_even_sat(2.5, 0, CT_I8), 2);
  ck_assert_int_eq(ct_quant_round_even_sat(-3.5, 1, CT_I8), -3); /* −4 + 1 */
  ck_assert_int_eq(ct_quant_round_even_sat(NAN, 9, CT_U8), 9);
  ck_assert_int_eq(ct_quant_round_even_sat(1e300, 0, CT_I32), INT32_MAX);
}
END_TEST

/* The row quantize rounds like the scalar one next to every tie: float32 values within two
 * ulps of (k + ½)·scale for |k| up to 40 000, several scales (exact binary ones, thirds, tiny
 * and large), i16 and i32 (no saturation in range), zero points −7 and 5. */
START_TEST(test_quantize_row_ties) {
  enum { K = 40000, W = 5, N = (2 * K + 1) * W };
  static float x[N];
  static int32_t q[N];
  const double scales[5] = {0.37, 1.0 / 3.0, 0.0078125, 1.7e-3, 913.25};
  const ct_dtype dts[2] = {CT_I16, CT_I32};
  for (int si = 0; si < 5; si++) {
    int n = 0;
    for (int k = -K; k <= K; k++) {
      float c = (float)(((double)k + 0.5) * scales[si]);
      float lo2 = nextafterf(nextafterf(c, -INFINITY), -INFINITY);
      for (int w = 0; w < W; w++, lo2 = nextafterf(lo2, INFINITY)) x[n++] = lo2;
    }
    for (int t = 0; t < 2; t++)
      for (int z = -7; z <= 5; z += 12) {
        ct_quant_quantize_row(x, n, scales[si], z, dts[t], q);
        for (int i = 0; i < n; i++)
          ck_assert_msg(q[i] == ct_quant_quantize(x[i], scales[si], z, dts[t]), "x %.9g scale %g: %d vs %d", x[i],
                        scales[si], q[i], ct_quant_quantize(x[i], scales[si], z, dts[t]));
      }
  }
}
END_TEST

/* The row quantize (CAST f32 → integer) and the row requant (the element-wise kernels'
 * REQUANT and Concat) equal their scalar functions element by element: half steps (ties),
 * random floats, NaN, infinities, values beyond every type's range; i8, u8, i16, i32, several
 * zero points; accumulators at the int32 edges with fused clamps. */
START_TEST(test_rows_match_scalar) {
  enum { N = 2051 };
  static float x[N];
  static int32_t q[N], acc[N];
  static int64_t acc64[N];
  int8_t y8[N];
  srand(12);
  for (int i = 0; i < N; i++) x[i] = i < 1601 ? (float)(i - 800) / 2 : (float)(rand() % 2000001 - 1000000) / 7;
  x[N - 1] = NAN, x[N - 2] = INFINITY, x[N - 3] = -INFINITY, x[N - 4] = 3e38f, x[N - 5] = -3e38f, x[N - 6] = 2.5e9f;
  const ct_dtype dts[4] = {CT_I8, CT_U8, CT_I16, CT_I32};
  for (int t = 0; t < 4; t++)
    for (int z = -3; z <= 3; z += 3) {
      ct_quant_quantize_row(x, N, 0.37, z + (dts[t] == CT_U8 ? 3 : 0), dts[t], q);
      for (int i = 0; i < N; i++) ck_assert_int_eq(q[i], ct_quant_quantize(x[i], 0.37, z + (dts[t] == CT_U8 ? 3 : 0), dts[t]));
    }
  for (int i = 0; i < N; i++) acc[i] = i < 6 ? (int32_t[]){INT32_MIN, INT32_MAX, 0, -1, 1, 65535}[i] : rand() * (rand() % 2 ? 1 : -1);
  for (int i = 0; i < N; i++) acc64[i] = acc[i];
  const ct_quant_act acts[3] = {CT_QUANT_ACT_NONE, CT_QUANT_ACT_RELU, CT_QUANT_ACT_CLAMP};
  for (int a = 0; a < 3; a++)
    for (int s = 0; s <= 40; s += 20) {
      ck_assert(ct_quant_requant_act_row_i32(acc, N, 1518500250, s, -5, acts[a], 100, CT_I8, y8));
      for (int i = 0; i < N; i++) ck_assert_int_eq(y8[i], ct_quant_requant_act(acc[i], 1518500250, s, -5, acts[a], 100, CT_I8));
      ck_assert(ct_quant_requant_act_row(acc64, N, -7, s, 3, acts[a], 90, CT_I8, y8));
      for (int i = 0; i < N; i++) ck_assert_int_eq(y8[i], ct_quant_requant_act(acc64[i], -7, s, 3, acts[a], 90, CT_I8));
    }
}
END_TEST

/* The ELTWISE row equals ct_quant_eltwise element by element: every operation, output type
 * and fused activation, operands over the 16-bit range and at its edges, 16-bit multipliers
 * of both signs at their limits, shifts 0..40, rows longer than one internal chunk. */
START_TEST(test_eltwise_row_matches_scalar) {
  enum { N = 1100 };
  static int32_t a[N], b[N], y32[N];
  srand(13);
  for (int i = 0; i < N; i++) {
    a[i] = i % 7 == 0 ? (i % 2 ? 32767 : -32768) : rand() % 65536 - 32768;
    b[i] = i % 5 == 0 ? (i % 2 ? -32768 : 32767) : rand() % 65536 - 32768;
  }
  const ct_dtype outs[5] = {CT_I8, CT_U8, CT_I16, CT_U16, CT_I32};
  const int32_t ms[3] = {32767, -32767, 1};
  for (int op = 0; op <= CT_QUANT_ELT_MIN; op++)
    for (int o = 0; o < 5; o++)
      for (int act = 0; act < 3; act++)
        for (int k = 0; k < 3; k++) {
          ct_quant_elt p = {.op = (ct_quant_elt_op)op, .m_a = ms[k], .m_b = ms[(k + 1) % 3], .zp_a = 3, .zp_b = -7,
                            .zp_out = outs[o] == CT_U8 || outs[o] == CT_U16 ? 9 : -2, .s_a = 20 * k, .s_b = 40 - 20 * k,
                            .s_out = op == CT_QUANT_ELT_MUL ? 30 : 5 * k, .act = (ct_quant_act)act, .act_hi = 100, .out = outs[o]};
          ck_assert(ct_quant_eltwise_row(&p, a, b, N, y32));
          for (int i = 0; i < N; i++) {
            int64_t want = ct_quant_eltwise(&p, a[i], b[i]), got;
            switch (outs[o]) {
            case CT_I8: got = ((int8_t *)y32)[i]; break;
            case CT_U8: got = ((uint8_t *)y32)[i]; break;
            case CT_I16: got = ((int16_t *)y32)[i]; break;
            case CT_U16: got = ((uint16_t *)y32)[i]; break;
            default: got = y32[i]; break;
            }
            ck_assert_msg(got == want, "op %d out %d act %d k %d at %d: %lld, want %lld", op, o, act, k, i, (long long)got, (long long)want);
          }
        }
  /* the ranges of INT8 models (8-bit operands, shifts 0..28), where the 32-bit lanes run,
   * until a 16-bit operand beyond their limit at element 613 hands the row to the int64 form */
  for (int i = 0; i < N; i++) a[i] = rand() % 256 - 128, b[i] = i == 613 ? 32767 : rand() % 256 - 128;
  const int32_t m8[4] = {32767, -32767, 1 << 14, 3};
  const int s8[5] = {0, 1, 13, 20, 28};
  for (int op = 0; op <= CT_QUANT_ELT_MIN; op++)
    for (int o = 0; o < 5; o++)
      for (int k = 0; k < 20; k++) {
        ct_quant_elt p = {.op = (ct_quant_elt_op)op, .m_a = m8[k % 4], .m_b = m8[(k + 1) % 4], .zp_a = k % 3 - 1, .zp_b = 5,
                          .zp_out = outs[o] == CT_U8 || outs[o] == CT_U16 ? 9 : -2, .s_a = s8[k % 5], .s_b = s8[(k + 2) % 5],
                          .s_out = s8[(k + 3) % 5], .act = (ct_quant_act)(k % 3), .act_hi = 100, .out = outs[o]};
        ck_assert(ct_quant_eltwise_row(&p, a, b, N, y32));
        for (int i = 0; i < N; i++) {
          int64_t want = ct_quant_eltwise(&p, a[i], b[i]);
          int64_t got = outs[o] == CT_I8 ? ((int8_t *)y32)[i] : outs[o] == CT_U8 ? ((uint8_t *)y32)[i]
                        : outs[o] == CT_I16 ? ((int16_t *)y32)[i] : outs[o] == CT_U16 ? ((uint16_t *)y32)[i] : y32[i];
          ck_assert_msg(got == want, "8-bit: op %d out %d k %d at %d: %lld, want %lld", op, o, k, i, (long long)got, (long long)want);
        }
      }
}
END_TEST

/* An all-zero tensor (threshold 0) gets scale 1: no division by zero, 0 stays exact. */
START_TEST(test_zero_threshold_gives_scale_one) {
  ck_assert_double_eq(ct_quant_scale_sym(0.0, CT_I8), 1.0);
  ck_assert_double_eq(ct_quant_scale_sym(0.0, CT_U8), 1.0);
  ck_assert_double_eq(ct_quant_scale_sym(NAN, CT_I8), 1.0);
  ck_assert_int_eq(ct_quant_quantize(0.0, ct_quant_scale_sym(0.0, CT_I8), 0, CT_I8), 0);
  ck_assert_double_eq(ct_quant_scale_sym(12.7, CT_I8), 12.7 / 127.0);
}
END_TEST

/* Linear Resize taps by hand (ONNX Resize spec formulas): ×2 half_pixel rows 0..3 of 4 sit at
 * −0.25 (clamped: one tap), 0.25, 0.75, 1.25; align_corners 3 → 5 at 0, 0.5, 1, ...;
 * asymmetric 0.6 at o / 0.6; a NaN or far coordinate gives an in-range edge tap. Integer
 * element: 0.25·(−100) + 0.75·20 = −10 exactly, a tie (−2.5 → −2: half toward +inf). */
START_TEST(test_resize_linear_taps_and_element) {
  ct_quant_lin_tap t;
  static const struct { int ctm; int64_t in, out; float sc; int64_t o, i0, i1; int32_t wq; } c[] = {
      {CT_QUANT_CTM_HALF_PIXEL, 4, 8, 2, 0, 0, 0, 0},        {CT_QUANT_CTM_HALF_PIXEL, 4, 8, 2, 1, 0, 1, 512},
      {CT_QUANT_CTM_HALF_PIXEL, 4, 8, 2, 2, 0, 1, 1536},     {CT_QUANT_CTM_HALF_PIXEL, 4, 8, 2, 7, 3, 3, 0},
      {CT_QUANT_CTM_ALIGN_CORNERS, 3, 5, 0, 1, 0, 1, 1024},  {CT_QUANT_CTM_ALIGN_CORNERS, 3, 5, 0, 4, 2, 2, 0},
      {CT_QUANT_CTM_ASYMMETRIC, 10, 6, 0.6f, 1, 1, 2, 1365}, {CT_QUANT_CTM_PYTORCH_HALF_PIXEL, 5, 1, 0, 0, 0, 1, 0},
      {CT_QUANT_CTM_HALF_PIXEL, 5, 9, 1e-30f, 3, 4, 4, 0},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    ct_quant_resize_tap((ct_quant_ctm)c[k].ctm, c[k].in, c[k].out, c[k].sc, c[k].o, &t);
    ck_assert_msg(t.i0 == c[k].i0 && t.i1 == c[k].i1 && t.w1_q == c[k].wq, "case %zu: %lld %lld %d", k, (long long)t.i0,
                  (long long)t.i1, t.w1_q);
  }
  ct_quant_lin_tap h = {0, 1, 0.75, 1536}, h2 = {0, 1, 0.5, 1024}, w = {0, 0, 0, 0};
  ck_assert_int_eq(ct_quant_resize_lin_q((const int64_t[]){-100, -100, 20, 20}, &h, &w, 0, CT_I8), -10);
  ck_assert_int_eq(ct_quant_resize_lin_q((const int64_t[]){-3, -3, -2, -2}, &h2, &w, 0, CT_I8), -2);
  ck_assert_int_eq(ct_quant_resize_lin_q((const int64_t[]){10, 10, 30, 30}, &h, &w, 10, CT_U8), 25);
  ck_assert_int_eq(ct_quant_resize_lin_q((const int64_t[]){127, 127, 127, 127}, &h, &h2, -128, CT_I8), 127);
  ck_assert_float_eq(ct_quant_resize_lin_f((const float[]){-100, 0, 20, 0}, &h, &w), -10.0f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("quant");
  TCase *tc = tcase_create("quant");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_rshift_round_hand_values);
  tcase_add_test(tc, test_rshift_round_matches_wide_reference);
  tcase_add_test(tc, test_requant_hand_values_and_saturation);
  tcase_add_test(tc, test_requant_exhaustive_int8_range_against_formula);
  tcase_add_test(tc, test_requant_row_matches_element);
  tcase_add_test(tc, test_multiplier_search_accuracy_sweep);
  tcase_add_test(tc, test_float_to_int_rounds_half_away_and_saturates);
  tcase_add_test(tc, test_scales_bias_and_weights);
  tcase_add_test(tc, test_lut_build_and_index);
  tcase_add_test(tc, test_lut16_build_and_lookup);
  tcase_add_test(tc, test_eltwise_exhaustive_int8);
  tcase_add_test(tc, test_half_wrappers_round_to_nearest_even);
  tcase_add_test(tc, test_float_act_hi_bits);
  tcase_add_test(tc, test_round_half_away_and_half_even_ties);
  tcase_add_test(tc, test_quantize_onnx_vs_ctpu_rounding);
  tcase_add_test(tc, test_zero_threshold_gives_scale_one);
  tcase_add_test(tc, test_negative_and_large_shifts);
  tcase_add_test(tc, test_quantize_onnx_row_matches_scalar);
  tcase_add_test(tc, test_rows_match_scalar);
  tcase_add_test(tc, test_quantize_row_ties);
  tcase_add_test(tc, test_eltwise_row_matches_scalar);
  tcase_add_test(tc, test_resize_linear_taps_and_element);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
