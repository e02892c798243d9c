/* test_kern_misc.c: shape functions + reference kernels of the misc ops (elementwise,
 * shape, indexing, reductions, quantization). Expected values are derived by hand from the
 * ONNX operator spec (comments show the derivation); error cases must fail cleanly. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/shape.h"
#include "reference/broadcast.h"
#include "reference/kernel.h"
#include "tests/testutil.h"

/* One op under test: a graph with constant inputs, the op, its computed outputs. */
typedef struct tc {
  ct_graph *g;
  ct_op *op;
  ct_tensor *out[4];
  ct_diag d;
} tc;

/* A tensor of dtype dt and shape (nd dims) with values vals (NULL = zeros). */
static ct_tensor *mk(ct_dtype dt, int nd, const int64_t *shape, const double *vals) {
  ct_tensor *t = ct_tensor_new(dt, nd, shape, NULL);
  ck_assert_ptr_nonnull(t);
  if (vals)
    for (int64_t i = 0; i < ct_tensor_numel(t); i++) ct_tensor_set_f64(t, i, vals[i]);
  return t;
}
#define SH(...) (const int64_t[]){__VA_ARGS__}
#define VA(...) (const double[]){__VA_ARGS__}
#define F32(nd, shape, ...) mk(CT_F32, nd, shape, VA(__VA_ARGS__))
#define I64(nd, shape, ...) mk(CT_I64, nd, shape, VA(__VA_ARGS__))

/* Builds op kind with inputs ins (NULL = absent; constant when the bit of const_mask is set,
 * else a plain value of that shape) and n_out outputs. Takes ownership of ins. */
static tc tc_new(ct_op_kind kind, int n_in, ct_tensor **ins, unsigned nonconst_mask, int n_out) {
  tc c;
  memset(&c, 0, sizeof c);
  c.g = ct_graph_new("t", "top");
  ct_value *iv[8] = {NULL}, *ov[4] = {NULL};
  for (int i = 0; i < n_in; i++) {
    if (!ins[i]) continue;
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    if (nonconst_mask & (1u << i)) {
      iv[i] = ct_graph_add_value(c.g, name, ins[i]->dtype, ins[i]->ndim, ins[i]->shape);
      ct_graph_add_op(c.g, CT_OP_INPUT, name, 0, NULL, 1, &iv[i]);
      ct_tensor_free(ins[i]);
    } else {
      ck_assert(ct_tensor_set_name(ins[i], name));
      iv[i] = ct_graph_add_weight(c.g, name, ins[i]);
    }
  }
  for (int k = 0; k < n_out; k++) ov[k] = ct_graph_add_value(c.g, NULL, CT_F32, -1, NULL);
  c.op = ct_graph_add_op(c.g, kind, "node0", n_in, iv, n_out, ov);
  ck_assert_ptr_nonnull(c.op);
  return c;
}

/* Runs the shape function then the kernel; returns the first failing status. */
static ct_status tc_run(tc *c) {
  ct_shape_fn sf = ct_shape_fn_of(c->op->kind);
  ct_kernel_fn kf = ct_kernel_of(c->op->kind);
  ck_assert_msg(sf && kf, "op %s lacks shape fn or kernel", ct_op_name(c->op->kind));
  ct_status st = sf(c->g, c->op, &c->d);
  if (st) return st;
  ct_tensor *ins[8] = {NULL};
  for (int i = 0; i < c->op->n_in; i++) ins[i] = c->op->in[i] ? c->op->in[i]->data : NULL;
  for (int k = 0; k < c->op->n_out; k++) {
    ct_value *v = c->op->out[k];
    c->out[k] = ct_tensor_new(v->dtype, v->ndim, v->shape, NULL);
    ck_assert_ptr_nonnull(c->out[k]);
  }
  ct_kernel_ctx ctx = {1};
  return kf(c->op, ins, c->out, &ctx, &c->d);
}

static void tc_free(tc *c) {
  for (int k = 0; k < 4; k++) ct_tensor_free(c->out[k]);
  ct_graph_free(c->g);
}

/* Asserts t has shape (nd dims) and values want (tolerance 1e-6 relative). */
static void expect(const ct_tensor *t, ct_dtype dt, int nd, const int64_t *shape, const double *want) {
  ck_assert_int_eq(t->dtype, dt);
  ck_assert_int_eq(t->ndim, nd);
  for (int i = 0; i < nd; i++) ck_assert_int_eq(t->shape[i], shape[i]);
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) {
    double g = ct_tensor_get_f64(t, i), w = want[i];
    if (isnan(w)) {
      ck_assert_msg(isnan(g), "element %lld: got %g, want NaN", (long long)i, g);
      continue;
    }
    ck_assert_msg(fabs(g - w) <= 1e-6 * (1 + fabs(w)), "element %lld: got %.9g, want %.9g", (long long)i, g, w);
  }
}

/* Runs a one-input one-output op and checks the result. */
static void run1(ct_op_kind k, ct_tensor *x, ct_dtype dt, int nd, const int64_t *shape, const double *want) {
  tc c = tc_new(k, 1, (ct_tensor *[]){x}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], dt, nd, shape, want);
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

static Suite *suite(void) {
  Suite *s = suite_create("kern_misc");
  TCase *t = tcase_create("elementwise");
  tcase_add_test(t, test_bcast_shapes);
  tcase_add_test(t, test_add_broadcast_values);
  tcase_add_test(t, test_broadcast_incompatible_is_error);
  tcase_add_test(t, test_int_arith_mod_pow_bitshift);
  tcase_add_test(t, test_compare_logical_where);
  tcase_add_test(t, test_variadic_and_prelu);
  tcase_add_test(t, test_unary_activations);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
