/* test_kern_ext.c: shape functions + reference kernels of the extended ops (QOperator int8
 * family, Einsum, LSTM/GRU/RNN). Expected values are derived by hand from the ONNX operator
 * spec; the derivation is in the comments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kern_nn_harness.h"
#include "tests/testutil.h"

#define SH(...) (const int64_t[]){__VA_ARGS__}
#define VA(...) (const double[]){__VA_ARGS__}

/* Tensor of dtype dt, shape (nd dims), values vals (stored with ct_tensor_set_f64). */
static ct_tensor *mk(ct_dtype dt, int nd, const int64_t *shape, const double *vals) {
  ct_tensor *t = ct_tensor_new(dt, nd, shape, NULL);
  ck_assert_ptr_nonnull(t);
  for (int64_t i = 0; vals && i < ct_tensor_numel(t); i++) ct_tensor_set_f64(t, i, vals[i]);
  return t;
}
#define SCALAR(dt, v) mk(dt, 0, NULL, VA(v))

/* Asserts t's elements equal want exactly (integer outputs). */
static void expect_ints(const ct_tensor *t, const double *want, int64_t n) {
  ck_assert_int_eq(ct_tensor_numel(t), n);
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(ct_tensor_get_f64(t, i) == want[i], "element %lld: got %g, want %g", (long long)i,
                  ct_tensor_get_f64(t, i), want[i]);
}

/* Runs op kind on ins (n_in entries, NULL = absent; freed here) with n_out outputs. */
static knh *run(ct_op_kind kind, int n_in, ct_tensor **ins, int n_out, ct_status want) {
  knh *h = knh_new(kind, n_in, ins, n_out);
  for (int i = 0; i < n_in; i++) ct_tensor_free(ins[i]);
  ct_status st = knh_run(h);
  ck_assert_msg(st == want, "status %d (%s)", st, h->d.msg);
  return h;
}

/* x = [[10..18]] u8 with zp 10 → x' = [[0,1,2],[3,4,5],[6,7,8]]; w = [[1,2],[3,4]], zp 0. */
static ct_tensor *conv_x(void) { return mk(CT_U8, 4, SH(1, 1, 3, 3), VA(10, 11, 12, 13, 14, 15, 16, 17, 18)); }
static ct_tensor *conv_w(void) { return mk(CT_U8, 4, SH(1, 1, 2, 2), VA(1, 2, 3, 4)); }

/* conv(x', w): (0,0) = 0+2+9+16 = 27; (0,1) = 1+4+12+20 = 37; (1,0) = 3+8+18+28 = 57;
 * (1,1) = 4+10+21+32 = 67. */
START_TEST(test_convinteger_hand) {
  ct_tensor *ins[4] = {conv_x(), conv_w(), SCALAR(CT_U8, 10), SCALAR(CT_U8, 0)};
  knh *h = run(CT_OP_CONVINTEGER, 4, ins, 1, CT_OK);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 2, 2));
  ck_assert_int_eq(h->out[0]->dtype, CT_I32);
  expect_ints(h->out[0], VA(27, 37, 57, 67), 4);
  knh_free(h);
}
END_TEST

/* QLinearConv, x_scale 0.5, w_scale 1, y_scale 1: acc · 0.5 = 13.5, 18.5, 28.5, 33.5 → round
 * half to even 14, 18, 28, 34, + y_zp 5 = 19, 23, 33, 39. With bias 1 and y_zp 240:
 * 28, 38, 58, 68 · 0.5 = 14, 19, 29, 34, + 240 = 254, 259, 269, 274 → saturate u8 → 254, 255, 255, 255. */
START_TEST(test_qlinearconv_hand_rounding_and_saturation) {
  ct_tensor *ins[9] = {conv_x(), SCALAR(CT_F32, 0.5), SCALAR(CT_U8, 10), conv_w(), SCALAR(CT_F32, 1),
                       SCALAR(CT_U8, 0), SCALAR(CT_F32, 1), SCALAR(CT_U8, 5), NULL};
  knh *h = run(CT_OP_QLINEARCONV, 8, ins, 1, CT_OK);
  ck_assert_int_eq(h->out[0]->dtype, CT_U8);
  expect_ints(h->out[0], VA(19, 23, 33, 39), 4);
  knh_free(h);
  ct_tensor *ins2[9] = {conv_x(), SCALAR(CT_F32, 0.5), SCALAR(CT_U8, 10), conv_w(), SCALAR(CT_F32, 1),
                        SCALAR(CT_U8, 0), SCALAR(CT_F32, 1), SCALAR(CT_U8, 240), mk(CT_I32, 1, SH(1), VA(1))};
  h = run(CT_OP_QLINEARCONV, 9, ins2, 1, CT_OK);
  expect_ints(h->out[0], VA(254, 255, 255, 255), 4);
  knh_free(h);
}
END_TEST

/* A = [[3,4],[5,6]] u8, zp 1 → [[2,3],[4,5]]; B = [[1,-1],[2,0]] i8 → A'B = [[2+6, -2], [4+10, -4]]. */
START_TEST(test_matmulinteger_hand) {
  ct_tensor *ins[4] = {mk(CT_U8, 2, SH(2, 2), VA(3, 4, 5, 6)), mk(CT_I8, 2, SH(2, 2), VA(1, -1, 2, 0)),
                       SCALAR(CT_U8, 1), NULL};
  knh *h = run(CT_OP_MATMULINTEGER, 4, ins, 1, CT_OK);
  expect_ints(h->out[0], VA(8, -2, 14, -4), 4);
  knh_free(h);
}
END_TEST

/* QLinearMatMul with a_scale 0.5, b_scale 0.25, y_scale 0.5 → multiplier 0.25: [[8,-2],[14,-4]]
 * · 0.25 = [[2, -0.5], [3.5, -1]] → half to even [[2, -0], [4, -1]] + y_zp 10 = [[12,10],[14,9]]. */
START_TEST(test_qlinearmatmul_hand) {
  ct_tensor *ins[8] = {mk(CT_U8, 2, SH(2, 2), VA(3, 4, 5, 6)), SCALAR(CT_F32, 0.5), SCALAR(CT_U8, 1),
                       mk(CT_I8, 2, SH(2, 2), VA(1, -1, 2, 0)), SCALAR(CT_F32, 0.25), SCALAR(CT_I8, 0),
                       SCALAR(CT_F32, 0.5), SCALAR(CT_U8, 10)};
  knh *h = run(CT_OP_QLINEARMATMUL, 8, ins, 1, CT_OK);
  knh_expect_shape(h->out[0], 2, SH(2, 2));
  expect_ints(h->out[0], VA(12, 10, 14, 9), 4);
  knh_free(h);
}
END_TEST

/* x = [-1, 0, 2, 4]: scale = (4 − (−1)) / 255 = 5/255, zp = round(1 / scale) = 51,
 * y = round(x / scale) + 51 = [−51, 0, 102, 204] + 51 = [0, 51, 153, 255]. */
START_TEST(test_dynamicquantizelinear_hand) {
  ct_tensor *ins[1] = {mk(CT_F32, 1, SH(4), VA(-1, 0, 2, 4))};
  knh *h = run(CT_OP_DYNAMICQUANTIZELINEAR, 1, ins, 3, CT_OK);
  expect_ints(h->out[0], VA(0, 51, 153, 255), 4);
  ck_assert_float_eq_tol(*(float *)h->out[1]->data, 5.0f / 255.0f, 1e-9f);
  expect_ints(h->out[2], VA(51), 1);
  knh_free(h);
}
END_TEST

/* A float input or a w_scale of the wrong length is an input error naming the node. */
START_TEST(test_qlinear_bad_inputs) {
  ct_tensor *ins[2] = {mk(CT_F32, 4, SH(1, 1, 3, 3), NULL), conv_w()};
  knh *h = run(CT_OP_CONVINTEGER, 2, ins, 1, CT_ERR_INPUT);
  ck_assert_msg(strstr(h->d.msg, "\"n0\"") && strstr(h->d.msg, "input 0") && strstr(h->d.msg, "has type f32"), "%s", h->d.msg);
  knh_free(h);
  ct_tensor *ins2[8] = {conv_x(), SCALAR(CT_F32, 0.5), SCALAR(CT_U8, 10), conv_w(), mk(CT_F32, 1, SH(3), VA(1, 1, 1)),
                        SCALAR(CT_U8, 0), SCALAR(CT_F32, 1), SCALAR(CT_U8, 5)};
  h = run(CT_OP_QLINEARCONV, 8, ins2, 1, CT_ERR_INPUT);
  ck_assert(strstr(h->d.msg, "w_scale"));
  knh_free(h);
}
END_TEST

/* Einsum on equation eq over f32 operands a (and b). */
static knh *einsum(const char *eq, ct_tensor *a, ct_tensor *b) {
  ct_tensor *ins[2] = {a, b};
  knh *h = knh_new(CT_OP_EINSUM, b ? 2 : 1, ins, 1);
  knh_str(h, "equation", eq);
  ct_tensor_free(a);
  ct_tensor_free(b);
  ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
  return h;
}

/* "ij,jk" (implicit → ik): [[1,2],[3,4]]·[[5,6],[7,8]] = [[19,22],[43,50]]; "ii->i": diagonal
 * [1,4]; "ba" (implicit → ab): transpose; "...i,...i->...": rows of [[1,2,3],[4,5,6]] · [1,0,-1]
 * broadcast = [-2,-2]. */
START_TEST(test_einsum_hand) {
  ct_tensor *a22 = mk(CT_F32, 2, SH(2, 2), VA(1, 2, 3, 4));
  knh *h = einsum("ij,jk", ct_tensor_clone(a22), mk(CT_F32, 2, SH(2, 2), VA(5, 6, 7, 8)));
  knh_expect_close(h->out[0], (const float[]){19, 22, 43, 50}, 4, 0, 0);
  knh_free(h);
  h = einsum("ii->i", ct_tensor_clone(a22), NULL);
  knh_expect_shape(h->out[0], 1, SH(2));
  knh_expect_close(h->out[0], (const float[]){1, 4}, 2, 0, 0);
  knh_free(h);
  h = einsum("ba", a22, NULL);
  knh_expect_close(h->out[0], (const float[]){1, 3, 2, 4}, 4, 0, 0);
  knh_free(h);
  h = einsum("...i, ...i -> ...", mk(CT_F32, 2, SH(2, 3), VA(1, 2, 3, 4, 5, 6)), mk(CT_F32, 1, SH(3), VA(1, 0, -1)));
  knh_expect_shape(h->out[0], 1, SH(2));
  knh_expect_close(h->out[0], (const float[]){-2, -2}, 2, 0, 0);
  knh_free(h);
}
END_TEST

/* Mismatched label sizes and a term count differing from the inputs are input errors. */
START_TEST(test_einsum_errors) {
  ct_tensor *ins[2] = {mk(CT_F32, 2, SH(2, 3), NULL), mk(CT_F32, 2, SH(2, 3), NULL)};
  knh *h = knh_new(CT_OP_EINSUM, 2, ins, 1);
  knh_str(h, "equation", "ij,jk->ik");
  ck_assert_int_eq(knh_run(h), CT_ERR_INPUT);
  ck_assert(strstr(h->d.msg, "\"n0\"") && strstr(h->d.msg, "size"));
  knh_free(h);
  h = knh_new(CT_OP_EINSUM, 2, ins, 1);
  knh_str(h, "equation", "ij->i");
  ck_assert_int_eq(knh_run(h), CT_ERR_INPUT);
  knh_free(h);
  ct_tensor_free(ins[0]);
  ct_tensor_free(ins[1]);
}
END_TEST

#define T3(a, b, c, ...) mk(CT_F32, 3, SH(a, b, c), VA(__VA_ARGS__))

/* LSTM one step, I = H = 1, x = 1, W (i, o, f, c) = (0, 0, 0, 1), R = 0, c0 = 2: i = o = f =
 * σ(0) = 0.5, c̃ = tanh(1); c1 = 0.5·2 + 0.5·tanh(1) = 1.3807971, h1 = 0.5·tanh(c1) = 0.4405648. */
START_TEST(test_lstm_single_step_hand) {
  ct_tensor *ins[7] = {T3(1, 1, 1, 1), T3(1, 4, 1, 0, 0, 0, 1), T3(1, 4, 1, 0, 0, 0, 0), NULL, NULL, NULL,
                       T3(1, 1, 1, 2)};
  knh *h = run(CT_OP_LSTM, 7, ins, 3, CT_OK);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 1, 1));
  knh_expect_close(h->out[0], (const float[]){0.4405648f}, 1, 1e-6, 1e-5);
  knh_expect_close(h->out[1], (const float[]){0.4405648f}, 1, 1e-6, 1e-5);
  knh_expect_close(h->out[2], (const float[]){1.3807971f}, 1, 1e-6, 1e-5);
  knh_free(h);
}
END_TEST

/* RNN reverse, W = 1, R = 0.5, x = [1, 2]: step t=1 first: h = tanh(2) = 0.9640276; then t=0:
 * h = tanh(1 + 0.5·0.9640276) = 0.9018446. Y[t] holds the state computed at t; Y_h the last. */
START_TEST(test_rnn_reverse_hand) {
  ct_tensor *ins[3] = {T3(2, 1, 1, 1, 2), T3(1, 1, 1, 1), T3(1, 1, 1, 0.5)};
  knh *h = knh_new(CT_OP_RNN, 3, ins, 2);
  for (int i = 0; i < 3; i++) ct_tensor_free(ins[i]);
  knh_str(h, "direction", "reverse");
  ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
  knh_expect_close(h->out[0], (const float[]){0.9018446f, 0.9640276f}, 2, 1e-6, 1e-5);
  knh_expect_close(h->out[1], (const float[]){0.9018446f}, 1, 1e-6, 1e-5);
  knh_free(h);
}
END_TEST

/* GRU, x = 1, h0 = 1, W (z, r, h) = (0, 0, 1), R = (0, 0, 1), Rb_h = 1: z = r = 0.5.
 * linear_before_reset 0: h̃ = tanh(1 + (0.5·1)·1 + 1) = tanh(2.5), H = 0.5 h̃ + 0.5 = 0.9933071;
 * linear_before_reset 1: h̃ = tanh(1 + 0.5·(1·1 + 1)) = tanh(2), H = 0.9820138. */
START_TEST(test_gru_linear_before_reset_hand) {
  const float want[2] = {0.9933071f, 0.9820138f};
  for (int lbr = 0; lbr < 2; lbr++) {
    ct_tensor *ins[6] = {T3(1, 1, 1, 1), T3(1, 3, 1, 0, 0, 1), T3(1, 3, 1, 0, 0, 1),
                         mk(CT_F32, 2, SH(1, 6), VA(0, 0, 0, 0, 0, 1)), NULL, T3(1, 1, 1, 1)};
    knh *h = knh_new(CT_OP_GRU, 6, ins, 2);
    for (int i = 0; i < 6; i++) ct_tensor_free(ins[i]);
    knh_int(h, "linear_before_reset", lbr);
    ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
    knh_expect_close(h->out[1], &want[lbr], 1, 1e-6, 1e-5);
    knh_free(h);
  }
}
END_TEST

/* Det: [[1,2],[3,4]] → 1·4 − 2·3 = −2; [[0,1,0],[1,0,0],[0,0,3]] (needs a pivot swap) →
 * −3 (one transposition times 3). */
START_TEST(test_det_hand) {
  ct_tensor *ins[1] = {mk(CT_F32, 2, SH(2, 2), VA(1, 2, 3, 4))};
  knh *h = run(CT_OP_DET, 1, ins, 1, CT_OK);
  ck_assert_int_eq(h->out[0]->ndim, 0);
  knh_expect_close(h->out[0], (const float[]){-2}, 1, 1e-6, 1e-6);
  knh_free(h);
  ct_tensor *ins2[1] = {mk(CT_F32, 3, SH(1, 3, 3), VA(0, 1, 0, 1, 0, 0, 0, 0, 3))};
  h = run(CT_OP_DET, 1, ins2, 1, CT_OK);
  knh_expect_close(h->out[0], (const float[]){-3}, 1, 1e-6, 1e-6);
  knh_free(h);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kern_ext");
  TCase *tc = tcase_create("qoperator");
  tcase_add_test(tc, test_convinteger_hand);
  tcase_add_test(tc, test_qlinearconv_hand_rounding_and_saturation);
  tcase_add_test(tc, test_matmulinteger_hand);
  tcase_add_test(tc, test_qlinearmatmul_hand);
  tcase_add_test(tc, test_dynamicquantizelinear_hand);
  tcase_add_test(tc, test_qlinear_bad_inputs);
  suite_add_tcase(s, tc);
  tc = tcase_create("einsum");
  tcase_add_test(tc, test_einsum_hand);
  tcase_add_test(tc, test_einsum_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("recurrent");
  tcase_add_test(tc, test_lstm_single_step_hand);
  tcase_add_test(tc, test_rnn_reverse_hand);
  tcase_add_test(tc, test_gru_linear_before_reset_hand);
  tcase_add_test(tc, test_det_hand);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
