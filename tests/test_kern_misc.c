/* test_kern_misc.c: shape functions + float kernels of the elementwise ops (broadcasting,
 * arithmetic, comparisons, unary activations), reductions and quantization (tensor-family ops:
 * test_kern_tensor.c). Expected values are derived by hand from the ONNX operator spec
 * (comments show the derivation); error cases must fail cleanly. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/broadcast.h"
#include "tests/kern_misc_harness.h"
#include "tests/testutil.h"

/* Runs f32 binary op k on a (shape sa, na dims, values va) and b, checks the 2x9 output
 * against want (computed by the caller with a plain C loop). */
static void run_arith(ct_op_kind k, int na, const int64_t *sa, const double *va, int nb, const int64_t *sb,
                      const double *vb, const double *want) {
  tc c = tc_new(k, 2, (ct_tensor *[]){mk(CT_F32, na, sa, va), mk(CT_F32, nb, sb, vb)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 9), want);
  tc_free(&c);
}

/* ---------------- broadcasting ---------------- */

START_TEST(test_bcast_shapes) {
  int n;
  int64_t out[8];
  ck_assert(ct_bcast_shape(4, SH(2, 3, 4, 5), 1, SH(5), &n, out));
  ck_assert_int_eq(n, 4);
  ck_assert_int_eq(out[3], 5);
  ck_assert(ct_bcast_shape(2, SH(4, 1), 3, SH(2, 1, 6), &n, out));
  ck_assert_int_eq(n, 3);
  ck_assert(out[0] == 2 && out[1] == 4 && out[2] == 6);
  ck_assert(ct_bcast_shape(1, SH(0), 1, SH(1), &n, out) && out[0] == 0);
  ck_assert(!ct_bcast_shape(2, SH(3, 4), 2, SH(5, 6), &n, out));
  ck_assert(!ct_bcast_shape(1, SH(2), 1, SH(3), &n, out));
  ck_assert(ct_bcast_to(2, SH(3, 1), 3, SH(2, 3, 4)));
  ck_assert(!ct_bcast_to(2, SH(2, 3), 2, SH(1, 3)));
}
END_TEST

/* Rows of 8 and more run the vectorized f32 Add/Sub/Mul/Div loops: same shape, per-channel
 * (b of shape 2x1), scalar b and scalar a, each checked against a plain C loop. */
START_TEST(test_arith_f32_rows) {
  double a[18], b[18], w[18], ch[2] = {2, 4}, two = 0.5, s36 = 36;
  for (int i = 0; i < 18; i++) a[i] = i, b[i] = i - 8.5;
  for (int i = 0; i < 18; i++) w[i] = (float)a[i] * (float)b[i];
  run_arith(CT_OP_MUL, 2, SH(2, 9), a, 2, SH(2, 9), b, w);
  for (int i = 0; i < 18; i++) w[i] = a[i] - ch[i / 9];
  run_arith(CT_OP_SUB, 2, SH(2, 9), a, 2, SH(2, 1), ch, w);
  for (int i = 0; i < 18; i++) w[i] = a[i] + two;
  run_arith(CT_OP_ADD, 2, SH(2, 9), a, 0, NULL, &two, w);
  for (int i = 0; i < 18; i++) w[i] = 36.0f / (float)b[i];
  run_arith(CT_OP_DIV, 0, NULL, &s36, 2, SH(2, 9), b, w);
}
END_TEST

START_TEST(test_add_broadcast_values) {
  /* a: 2x3 = [[1,2,3],[4,5,6]], b: 3x1x1 = [10,20,30] → 3x2x3, y[k][i][j] = a[i][j] + b[k] */
  tc c = tc_new(CT_OP_ADD, 2, (ct_tensor *[]){F32(2, SH(2, 3), 1, 2, 3, 4, 5, 6), F32(3, SH(3, 1, 1), 10, 20, 30)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 3, SH(3, 2, 3),
         VA(11, 12, 13, 14, 15, 16, 21, 22, 23, 24, 25, 26, 31, 32, 33, 34, 35, 36));
  tc_free(&c);
  /* row vector - column vector: 1x3 minus 2x1 → 2x3 */
  c = tc_new(CT_OP_SUB, 2, (ct_tensor *[]){F32(2, SH(1, 3), 1, 2, 3), F32(2, SH(2, 1), 1, 10)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 3), VA(0, 1, 2, -9, -8, -7));
  tc_free(&c);
}
END_TEST

START_TEST(test_broadcast_incompatible_is_error) {
  tc c = tc_new(CT_OP_ADD, 2, (ct_tensor *[]){mk(CT_F32, 2, SH(3, 4), NULL), mk(CT_F32, 2, SH(5, 6), NULL)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(c.d.msg, "node0"));
  ck_assert_ptr_nonnull(strstr(c.d.msg, "3x4 and 5x6"));
  tc_free(&c);
  c = tc_new(CT_OP_ADD, 2, (ct_tensor *[]){mk(CT_F32, 1, SH(3), NULL), mk(CT_I64, 1, SH(3), NULL)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT);
  tc_free(&c);
}
END_TEST

START_TEST(test_int_arith_mod_pow_bitshift) {
  /* Mod fmod=0 takes the divisor's sign (Python %): -7 % 3 = 2, 7 % -3 = -2; Div truncates */
  tc c = tc_new(CT_OP_MOD, 2, (ct_tensor *[]){I64(1, SH(4), -7, 7, 7, -7), I64(1, SH(4), 3, -3, 3, -3)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 1, SH(4), VA(2, -2, 1, -1));
  tc_free(&c);
  c = tc_new(CT_OP_MOD, 2, (ct_tensor *[]){F32(1, SH(2), -7, 7.5), F32(1, SH(2), 3, -2)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "fmod", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(2), VA(-1, 1.5)); /* C fmod: sign of the dividend */
  tc_free(&c);
  c = tc_new(CT_OP_DIV, 2, (ct_tensor *[]){I64(1, SH(3), -7, 7, 5), I64(1, SH(3), 2, 2, 0)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 1, SH(3), VA(-3, 3, 0)); /* x/0 defined as 0, no crash */
  tc_free(&c);
  /* Pow with an int64 base and float exponent keeps the base type: 2^3=8, 3^0.5=1.73→1 */
  c = tc_new(CT_OP_POW, 2, (ct_tensor *[]){I64(1, SH(2), 2, 3), F32(1, SH(2), 3, 0.5)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 1, SH(2), VA(8, 1));
  tc_free(&c);
  c = tc_new(CT_OP_BITSHIFT, 2, (ct_tensor *[]){mk(CT_U8, 1, SH(2), VA(16, 3)), mk(CT_U8, 1, SH(2), VA(2, 7))}, 0, 1);
  ck_assert(ct_op_set_string(c.g, c.op, "direction", "LEFT"));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_U8, 1, SH(2), VA(64, 128)); /* 3 << 7 = 384 wraps to 128 in u8 */
  tc_free(&c);
}
END_TEST

START_TEST(test_compare_logical_where) {
  tc c = tc_new(CT_OP_LESSOREQUAL, 2, (ct_tensor *[]){F32(1, SH(3), 1, 2, 3), F32(0, NULL, 2)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_BOOL, 1, SH(3), VA(1, 1, 0));
  tc_free(&c);
  c = tc_new(CT_OP_XOR, 2, (ct_tensor *[]){mk(CT_BOOL, 1, SH(4), VA(0, 0, 1, 1)), mk(CT_BOOL, 1, SH(4), VA(0, 1, 0, 1))}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_BOOL, 1, SH(4), VA(0, 1, 1, 0));
  tc_free(&c);
  /* Where(cond 2x1, x 1x2, y scalar) → 2x2: row 0 takes x, row 1 takes y */
  c = tc_new(CT_OP_WHERE, 3, (ct_tensor *[]){mk(CT_BOOL, 2, SH(2, 1), VA(1, 0)), I64(2, SH(1, 2), 5, 6), I64(0, NULL, -1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 2, SH(2, 2), VA(5, 6, -1, -1));
  tc_free(&c);
}
END_TEST

START_TEST(test_variadic_and_prelu) {
  /* Mean of [1,2] (2), [3] (1), [[5],[7]] (2x1) → 2x2: ((1+3+5)/3, (2+3+5)/3, (1+3+7)/3, (2+3+7)/3) */
  tc c = tc_new(CT_OP_MEAN, 3, (ct_tensor *[]){F32(1, SH(2), 1, 2), F32(1, SH(1), 3), F32(2, SH(2, 1), 5, 7)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 2), VA(3, 10.0 / 3, 11.0 / 3, 4));
  tc_free(&c);
  c = tc_new(CT_OP_MAX, 2, (ct_tensor *[]){F32(1, SH(3), 1, NAN, 5), F32(1, SH(3), 2, 1, 4)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(3), VA(2, NAN, 5));
  tc_free(&c);
  /* PRelu slope per channel (C=2, shape 2x1 against 1x2x2) */
  c = tc_new(CT_OP_PRELU, 2, (ct_tensor *[]){F32(3, SH(1, 2, 2), -1, 2, -3, 4), F32(2, SH(2, 1), 0.5, 0.25)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 3, SH(1, 2, 2), VA(-0.5, 2, -0.75, 4));
  tc_free(&c);
}
END_TEST

/* The f32 row loops of Relu, LeakyRelu, HardSigmoid, HardSwish, Sigmoid and SiLU (own
 * vectorized exp, in float) against plain C formulas over libm exp in double, rounded to
 * float: on 4001 points of [-100, 100] plus -800, ±inf, -0, NaN, the piecewise-linear ones
 * within 1 ulp, Sigmoid within 2 and SiLU within 3; results below float's normal range
 * (2^-126) may flush toward 0, and SiLU's error may reach |v|·2^-149 where its sigmoid
 * factor is subnormal (v < -87). */
/* How many floats lie between a and b (both finite or both the same infinity); INT_MAX when
 * they differ in sign (but for ±0). */
static int ulps_apart(float a, float b) {
  if (a == b) return 0;
  if ((a < 0) != (b < 0)) return INT_MAX;
  int32_t ia, ib;
  memcpy(&ia, &a, sizeof ia);
  memcpy(&ib, &b, sizeof ib);
  return abs(ia - ib);
}

static double ref_act(ct_op_kind k, double v) {
  double sg = v >= 0 ? 1 / (1 + exp(-v)) : exp(v) / (1 + exp(v)), h = v / 6 + 0.5;
  if (k == CT_OP_RELU) return v > 0 ? v : (isnan(v) ? v : 0);
  if (k == CT_OP_LEAKYRELU) return v < 0 ? 0.01 * v : v;
  if (k == CT_OP_HARDSIGMOID) return fmin(fmax((double)0.2f * v + 0.5, 0), 1) + (isnan(v) ? v : 0); /* ONNX alpha: float 0.2 */
  if (k == CT_OP_HARDSWISH) return v * (h < 0 ? 0 : h > 1 ? 1 : h);
  return k == CT_OP_SIGMOID ? sg : v * sg;
}

START_TEST(test_unary_f32_rows) {
  enum { N = 4008 };
  static double xs[N], want[N];
  static const double edge[] = {-800, -INFINITY, INFINITY, -0.0, NAN, 1e-30, -1e-30};
  for (int i = 0; i < 4001; i++) xs[i] = -100 + i * 0.05 + (i % 7) * 1e-4;
  for (int i = 0; i < 7; i++) xs[4001 + i] = edge[i];
  static const ct_op_kind ks[] = {CT_OP_RELU, CT_OP_LEAKYRELU, CT_OP_HARDSIGMOID, CT_OP_HARDSWISH, CT_OP_SIGMOID, CT_OP_SILU};
  for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
    for (int i = 0; i < N; i++) want[i] = (float)ref_act(ks[j], (float)xs[i]);
    tc c = tc_new(ks[j], 1, (ct_tensor *[]){mk(CT_F32, 1, SH(N), xs)}, 0, 1);
    ck_assert_int_eq(tc_run(&c), CT_OK);
    const float *g = c.out[0]->data;
    int tol = ks[j] == CT_OP_SILU ? 3 : ks[j] == CT_OP_SIGMOID ? 2 : 1;
    for (int i = 0; i < N; i++) {
      float w = (float)want[i];
      /* a subnormal sigmoid carries an absolute error up to 2^-149, which SiLU scales by |v| */
      bool tiny = (fabsf(w) < FLT_MIN && fabsf(g[i]) <= FLT_MIN) ||
                  (ks[j] == CT_OP_SILU && fabs((double)g[i] - w) <= fabs(xs[i]) * 0x1p-149);
      ck_assert_msg((isnan(w) && isnan(g[i])) || tiny || ulps_apart(g[i], w) <= tol, "%s(%g): got %a, want %a",
                    ct_op_name(ks[j]), xs[i], g[i], w);
    }
    tc_free(&c);
  }
}
END_TEST

START_TEST(test_unary_activations) {
  /* defaults: LeakyRelu alpha 0.01, HardSigmoid 0.2x+0.5 clamped, Elu alpha 1 */
  run1(CT_OP_LEAKYRELU, F32(1, SH(2), -2, 3), CT_F32, 1, SH(2), VA(-0.02, 3));
  run1(CT_OP_HARDSIGMOID, F32(1, SH(3), -3, 0, 1), CT_F32, 1, SH(3), VA(0, 0.5, 0.7));
  run1(CT_OP_HARDSWISH, F32(1, SH(3), -4, 1, 4), CT_F32, 1, SH(3), VA(0, 1 * (1.0 / 6 + 0.5), 4));
  run1(CT_OP_ELU, F32(1, SH(2), -1, 2), CT_F32, 1, SH(2), VA(exp(-1) - 1, 2));
  run1(CT_OP_SILU, F32(1, SH(2), 0, 1), CT_F32, 1, SH(2), VA(0, 1 / (1 + exp(-1))));
  run1(CT_OP_SHRINK, F32(1, SH(3), -1, 0.2, 2), CT_F32, 1, SH(3), VA(-1, 0, 2)); /* lambd .5 bias 0 */
  run1(CT_OP_ROUND, F32(1, SH(4), 0.5, 1.5, 2.5, -2.5), CT_F32, 1, SH(4), VA(0, 2, 2, -2));
  run1(CT_OP_ISNAN, F32(1, SH(2), NAN, 1), CT_BOOL, 1, SH(2), VA(1, 0));
  run1(CT_OP_NEG, mk(CT_I32, 1, SH(2), VA(5, -3)), CT_I32, 1, SH(2), VA(-5, 3));
  run1(CT_OP_GELU, F32(1, SH(1), 1), CT_F32, 1, SH(1), VA(0.5 * (1 + erf(1 / sqrt(2)))));
  tc c = tc_new(CT_OP_CLIP, 3, (ct_tensor *[]){F32(1, SH(4), -2, 0, 3, 9), F32(0, NULL, -1), NULL}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(4), VA(-1, 0, 3, 9)); /* max absent: +inf */
  tc_free(&c);
}
END_TEST


/* ---------------- shape ops ---------------- */

START_TEST(test_reduce_keepdims_axes) {
  /* x 2x3 = [[1,2,3],[4,5,6]] */
  tc c = tc_new(CT_OP_REDUCESUM, 2, (ct_tensor *[]){F32(2, SH(2, 3), 1, 2, 3, 4, 5, 6), I64(1, SH(1), -1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 1), VA(6, 15));
  tc_free(&c);
  c = tc_new(CT_OP_REDUCEMEAN, 2, (ct_tensor *[]){F32(2, SH(2, 3), 1, 2, 3, 4, 5, 6), I64(1, SH(1), 0)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "keepdims", 0));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(3), VA(2.5, 3.5, 4.5));
  tc_free(&c);
  /* no axes: everything, keepdims → 1x1 */
  c = tc_new(CT_OP_REDUCEMAX, 1, (ct_tensor *[]){F32(2, SH(2, 3), 1, 7, 3, 4, 5, 6)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(1, 1), VA(7));
  tc_free(&c);
  /* noop_with_empty_axes: no dim reduced, each element alone: SumSquare gives x^2 (as the
   * ONNX reference ReduceSumSquare_18 returns np.square(data)) */
  c = tc_new(CT_OP_REDUCESUMSQUARE, 1, (ct_tensor *[]){F32(1, SH(2), 3, 4)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "noop_with_empty_axes", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(2), VA(9, 16));
  tc_free(&c);
  c = tc_new(CT_OP_REDUCEL2, 1, (ct_tensor *[]){F32(1, SH(2), 3, 4)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(1), VA(5));
  tc_free(&c);
  /* LogSumExp of [1000, 1000] = 1000 + log 2 (no overflow) */
  c = tc_new(CT_OP_REDUCELOGSUMEXP, 1, (ct_tensor *[]){mk(CT_F64, 1, SH(2), VA(1000, 1000))}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F64, 1, SH(1), VA(1000 + log(2)));
  tc_free(&c);
  c = tc_new(CT_OP_REDUCEPROD, 2, (ct_tensor *[]){F32(2, SH(2, 3), 1, 2, 3, 4, 5, 6), I64(1, SH(1), 2)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT); /* axis 2 out of range for rank 2 */
  tc_free(&c);
}
END_TEST

START_TEST(test_argmax_topk_cumsum) {
  tc c = tc_new(CT_OP_ARGMAX, 1, (ct_tensor *[]){F32(2, SH(2, 3), 1, 5, 5, 7, 2, 7)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", 1));
  ck_assert(ct_op_set_int(c.g, c.op, "keepdims", 0));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 1, SH(2), VA(1, 0)); /* first of ties */
  tc_free(&c);
  c = tc_new(CT_OP_ARGMIN, 1, (ct_tensor *[]){F32(1, SH(4), 3, 1, 2, 1)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "select_last_index", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 1, SH(1), VA(3));
  tc_free(&c);
  /* TopK k=3 largest of [1, 4, 4, 2, 9]: 9(4), 4(1), 4(2) — equal values by lower index */
  c = tc_new(CT_OP_TOPK, 2, (ct_tensor *[]){F32(1, SH(5), 1, 4, 4, 2, 9), I64(1, SH(1), 3)}, 0, 2);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(3), VA(9, 4, 4));
  expect(c.out[1], CT_I64, 1, SH(3), VA(4, 1, 2));
  tc_free(&c);
  c = tc_new(CT_OP_TOPK, 2, (ct_tensor *[]){F32(1, SH(5), 1, 4, 4, 2, 9), I64(1, SH(1), 2)}, 0, 2);
  ck_assert(ct_op_set_int(c.g, c.op, "largest", 0));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(2), VA(1, 2));
  expect(c.out[1], CT_I64, 1, SH(2), VA(0, 3));
  tc_free(&c);
  /* CumSum [1,2,3,4]: exclusive + reverse → [9, 7, 4, 0] */
  c = tc_new(CT_OP_CUMSUM, 2, (ct_tensor *[]){F32(1, SH(4), 1, 2, 3, 4), mk(CT_I32, 0, NULL, VA(0))}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "exclusive", 1));
  ck_assert(ct_op_set_int(c.g, c.op, "reverse", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(4), VA(9, 7, 4, 0));
  tc_free(&c);
}
END_TEST

START_TEST(test_generators_misc) {
  /* Trilu lower with k = 0 on 3x3 of ones... use 1..9 */
  tc c = tc_new(CT_OP_TRILU, 2, (ct_tensor *[]){I64(2, SH(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), I64(0, NULL, 1)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "upper", 0));
  ck_assert_int_eq(tc_run(&c), CT_OK); /* keep j - i <= 1 */
  expect(c.out[0], CT_I64, 2, SH(3, 3), VA(1, 2, 0, 4, 5, 6, 7, 8, 9));
  tc_free(&c);
  /* OneHot indices [0, -1, 5] depth 3, values [0, 1] (axis -1): 5 is out of range → all off */
  c = tc_new(CT_OP_ONEHOT, 3, (ct_tensor *[]){I64(1, SH(3), 0, -1, 5), I64(0, NULL, 3), F32(1, SH(2), 0, 1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(3, 3), VA(1, 0, 0, 0, 0, 1, 0, 0, 0));
  tc_free(&c);
  c = tc_new(CT_OP_COMPRESS, 2, (ct_tensor *[]){F32(2, SH(3, 2), 1, 2, 3, 4, 5, 6), mk(CT_BOOL, 1, SH(2), VA(0, 1))}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", 0));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(1, 2), VA(3, 4));
  tc_free(&c);
  c = tc_new(CT_OP_EYELIKE, 1, (ct_tensor *[]){mk(CT_I32, 2, SH(2, 3), NULL)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "k", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I32, 2, SH(2, 3), VA(0, 1, 0, 0, 0, 1));
  tc_free(&c);
  /* ReverseSequence time_axis 0, batch_axis 1: x 3x2 (time x batch), lens [3, 1] */
  c = tc_new(CT_OP_REVERSESEQUENCE, 2, (ct_tensor *[]){F32(2, SH(3, 2), 1, 2, 3, 4, 5, 6), I64(1, SH(2), 3, 1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(3, 2), VA(5, 2, 3, 4, 1, 6));
  tc_free(&c);
  c = tc_new(CT_OP_NONZERO, 1, (ct_tensor *[]){F32(2, SH(2, 2), 1, 0, 0, 3)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 2, SH(2, 2), VA(0, 1, 0, 1));
  tc_free(&c);
  c = tc_new(CT_OP_NONZERO, 1, (ct_tensor *[]){F32(1, SH(2), 1, 0)}, 1u, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(c.d.msg, "unsupported: data-dependent shape"));
  tc_free(&c);
}
END_TEST

START_TEST(test_quantize_half_to_even) {
  /* x / 0.5 = [0.5, 1.5, 2.5, -0.5, -1.5, 300, -300] → half to even [0, 2, 2, -0, -2, ...];
   * + zp 1, int8 saturation → [1, 3, 3, 1, -1, 127, -128] */
  tc c = tc_new(CT_OP_QUANTIZELINEAR, 3, (ct_tensor *[]){F32(1, SH(7), 0.25, 0.75, 1.25, -0.25, -0.75, 150, -150),
                                                         F32(0, NULL, 0.5), mk(CT_I8, 0, NULL, VA(1))}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I8, 1, SH(7), VA(1, 3, 3, 1, -1, 127, -128));
  tc_free(&c);
  /* default zero point: uint8, 0; 2.5 → 2, -1 → 0 (saturated) */
  c = tc_new(CT_OP_QUANTIZELINEAR, 2, (ct_tensor *[]){F32(1, SH(3), 2.5, 3.5, -1), F32(0, NULL, 1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_U8, 1, SH(3), VA(2, 4, 0));
  tc_free(&c);
  /* per-axis dequantize, axis 1 of 1x2x2: scales [1, 10], zps [0, 2] */
  c = tc_new(CT_OP_DEQUANTIZELINEAR, 3, (ct_tensor *[]){mk(CT_U8, 3, SH(1, 2, 2), VA(1, 2, 3, 4)), F32(1, SH(2), 1, 10),
                                                         mk(CT_U8, 1, SH(2), VA(0, 2))}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 3, SH(1, 2, 2), VA(1, 2, 10, 20));
  tc_free(&c);
}
END_TEST

/* Rows of 8 and more run the vectorized f32 <-> int8 loops: same semantics as above on runs
 * of 8 plus tails, per tensor and per axis. */
START_TEST(test_quantize_vector_rows) {
  /* i8, scale 0.5, zp -3: x / 0.5 = [0.5 1.5 2.5 -0.5 -1.5 -2.5 0.6 -0.6 | 2000 -2000 inf -inf
   * nan 124.5 125.5 -125 | 0 20 20.5 -20.5] → half to even [0 2 2 0 -2 -2 1 -1 | 2000 -2000
   * inf -inf nan 124 126 -125 | 0 20 20 -20] → + zp, saturated, NaN → 0 */
  tc c = tc_new(CT_OP_QUANTIZELINEAR, 3,
                (ct_tensor *[]){F32(1, SH(20), 0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 0.3, -0.3, 1000, -1000,
                                    INFINITY, -INFINITY, NAN, 62.25, 62.75, -62.5, 0, 10, 10.25, -10.25),
                                F32(0, NULL, 0.5), mk(CT_I8, 0, NULL, VA(-3))}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I8, 1, SH(20),
         VA(-3, -1, -1, -3, -5, -5, -2, -4, 127, -128, 127, -128, 0, 121, 123, -128, -3, 17, 17, -23));
  tc_free(&c);
  /* u8 per axis 1 of 1x2x9, scales [0.5, 0.25], zps [3, 250]: channel 0 x / s = [0.5 1.5
   * -0.5 -3.5 -4 400 2 1 2.5] → [0 2 0 -4 -4 400 2 1 2] + 3; channel 1 x / s = [0.5 1.5 4 6
   * -0.5 -400 8 0 2.5] → [0 2 4 6 0 -400 8 0 2] + 250; saturated to [0, 255] */
  c = tc_new(CT_OP_QUANTIZELINEAR, 3,
             (ct_tensor *[]){F32(3, SH(1, 2, 9), 0.25, 0.75, -0.25, -1.75, -2, 200, 1, 0.5, 1.25, 0.125, 0.375, 1,
                                 1.5, -0.125, -100, 2, 0, 0.625),
                             F32(1, SH(2), 0.5, 0.25), mk(CT_U8, 1, SH(2), VA(3, 250))}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_U8, 3, SH(1, 2, 9), VA(3, 5, 3, 0, 0, 255, 5, 4, 5, 250, 252, 254, 255, 250, 0, 255, 250, 252));
  tc_free(&c);
  /* i8 per axis 1 of 1x2x9, scales [0.5, 2], zps [-1, 3]: (q + 1) * 0.5 and (q - 3) * 2 */
  c = tc_new(CT_OP_DEQUANTIZELINEAR, 3,
             (ct_tensor *[]){mk(CT_I8, 3, SH(1, 2, 9), VA(-128, -1, 0, 1, 127, 5, -5, 2, 3, -128, 3, 0, 127, -3, 10, -10, 4, 2)),
                             F32(1, SH(2), 0.5, 2), mk(CT_I8, 1, SH(2), VA(-1, 3))}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 3, SH(1, 2, 9),
         VA(-63.5, 0, 0.5, 1, 64, 3, -2, 1.5, 2, -262, 0, -6, 248, -12, 14, -26, 2, -2));
  tc_free(&c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("kern_misc");
  TCase *t = tcase_create("elementwise");
  tcase_add_test(t, test_bcast_shapes);
  tcase_add_test(t, test_add_broadcast_values);
  tcase_add_test(t, test_arith_f32_rows);
  tcase_add_test(t, test_broadcast_incompatible_is_error);
  tcase_add_test(t, test_int_arith_mod_pow_bitshift);
  tcase_add_test(t, test_compare_logical_where);
  tcase_add_test(t, test_variadic_and_prelu);
  tcase_add_test(t, test_unary_activations);
  tcase_add_test(t, test_unary_f32_rows);
  suite_add_tcase(s, t);
  t = tcase_create("reduce_quant");
  tcase_add_test(t, test_reduce_keepdims_axes);
  tcase_add_test(t, test_argmax_topk_cumsum);
  tcase_add_test(t, test_generators_misc);
  tcase_add_test(t, test_quantize_half_to_even);
  tcase_add_test(t, test_quantize_vector_rows);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
