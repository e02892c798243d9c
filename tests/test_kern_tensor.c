/* test_kern_tensor.c: shape functions + float kernels of the ONNX tensor-family ops (reshape,
 * slice, transpose/concat/split, squeeze/unsqueeze/flatten/shape, pad, expand/tile, gather,
 * scatter, cast, generators). Expected values are derived by hand from the ONNX operator spec
 * (comments show the derivation); error cases must fail cleanly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kern_misc_harness.h"
#include "tests/testutil.h"

START_TEST(test_reshape_zero_and_minus_one) {
  tc c = tc_new(CT_OP_RESHAPE, 2, (ct_tensor *[]){mk(CT_F32, 3, SH(2, 3, 4), NULL), I64(1, SH(2), 0, -1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  ck_assert_int_eq(c.out[0]->ndim, 2);
  ck_assert(c.out[0]->shape[0] == 2 && c.out[0]->shape[1] == 12); /* 0 copies 2, -1 = 24/2 */
  tc_free(&c);
  /* allowzero = 1 keeps a literal 0 dim: 0x3 input to [0, 3] */
  c = tc_new(CT_OP_RESHAPE, 2, (ct_tensor *[]){mk(CT_F32, 2, SH(3, 0), NULL), I64(1, SH(2), 0, 3)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "allowzero", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  ck_assert(c.out[0]->shape[0] == 0 && c.out[0]->shape[1] == 3);
  tc_free(&c);
}
END_TEST

START_TEST(test_reshape_errors) {
  tc c = tc_new(CT_OP_RESHAPE, 2, (ct_tensor *[]){mk(CT_F32, 2, SH(2, 3), NULL), I64(1, SH(2), 4, 2)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(c.d.msg, "cannot reshape 2x3"));
  ck_assert_ptr_nonnull(strstr(c.d.msg, "node0"));
  tc_free(&c);
  c = tc_new(CT_OP_RESHAPE, 2, (ct_tensor *[]){mk(CT_F32, 2, SH(2, 3), NULL), I64(1, SH(2), -1, -1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT);
  tc_free(&c);
  c = tc_new(CT_OP_RESHAPE, 2, (ct_tensor *[]){mk(CT_F32, 2, SH(2, 3), NULL), I64(1, SH(1), 6)}, 2u, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(c.d.msg, "unsupported: non-constant shape"));
  tc_free(&c);
}
END_TEST

/* Slice of x = 0..9 with the given starts/ends/steps (1-D). */
static void slice1(double start, double end, double step, int n, const double *want) {
  ct_tensor *x = mk(CT_I32, 1, SH(10), VA(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
  ct_tensor *e = ct_tensor_new(CT_I64, 1, SH(1), NULL);
  *(int64_t *)e->data = end == 1e300 ? INT64_MAX : end == -1e300 ? INT64_MIN : (int64_t)end;
  tc c = tc_new(CT_OP_SLICE, 5, (ct_tensor *[]){x, I64(1, SH(1), start), e, I64(1, SH(1), 0), I64(1, SH(1), step)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I32, 1, (const int64_t[]){n}, want);
  tc_free(&c);
}

START_TEST(test_slice_negative_steps_and_clamping) {
  slice1(8, 1, -3, 3, VA(8, 5, 2));
  slice1(-3, 1e300, 1, 3, VA(7, 8, 9));         /* INT64_MAX end = to the end */
  slice1(-100, 3, 1, 3, VA(0, 1, 2));           /* start clamped to 0 */
  slice1(100, -1e300, -4, 3, VA(9, 5, 1));      /* start clamped to 9, INT64_MIN end */
  slice1(5, 2, 1, 0, VA(0));                    /* empty */
  /* 2-D: x 3x4 = 0..11, axes [1, -2], starts [1, 2], ends [3, 0], steps [1, -1]
   * → rows 2, 1 and cols 1, 2: [[9, 10], [5, 6]] */
  tc c = tc_new(CT_OP_SLICE, 5,
                (ct_tensor *[]){F32(2, SH(3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), I64(1, SH(2), 1, 2),
                                I64(1, SH(2), 3, 0), I64(1, SH(2), 1, -2), I64(1, SH(2), 1, -1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 2), VA(9, 10, 5, 6));
  tc_free(&c);
  c = tc_new(CT_OP_SLICE, 5, (ct_tensor *[]){F32(1, SH(2), 1, 2), I64(1, SH(1), 0), I64(1, SH(1), 1), NULL, I64(1, SH(1), 0)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT); /* step 0 */
  tc_free(&c);
}
END_TEST

START_TEST(test_transpose_concat_split) {
  tc c = tc_new(CT_OP_TRANSPOSE, 1, (ct_tensor *[]){I64(2, SH(2, 3), 1, 2, 3, 4, 5, 6)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK); /* default perm reverses the dims */
  expect(c.out[0], CT_I64, 2, SH(3, 2), VA(1, 4, 2, 5, 3, 6));
  tc_free(&c);
  c = tc_new(CT_OP_TRANSPOSE, 1, (ct_tensor *[]){F32(3, SH(1, 2, 3), 1, 2, 3, 4, 5, 6)}, 0, 1);
  ck_assert(ct_op_set_ints(c.g, c.op, "perm", 3, SH(2, 0, 1)));
  ck_assert_int_eq(tc_run(&c), CT_OK); /* y[k][0][i] = x[0][i][k] */
  expect(c.out[0], CT_F32, 3, SH(3, 1, 2), VA(1, 4, 2, 5, 3, 6));
  tc_free(&c);
  c = tc_new(CT_OP_CONCAT, 2, (ct_tensor *[]){F32(2, SH(2, 1), 1, 2), F32(2, SH(2, 2), 3, 4, 5, 6)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", -1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 3), VA(1, 3, 4, 2, 5, 6));
  tc_free(&c);
  /* Split 5 along axis 0 into 2 outputs without split: chunks ceil(5/2) = 3 and 2 */
  c = tc_new(CT_OP_SPLIT, 1, (ct_tensor *[]){I64(1, SH(5), 1, 2, 3, 4, 5)}, 0, 2);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 1, SH(3), VA(1, 2, 3));
  expect(c.out[1], CT_I64, 1, SH(2), VA(4, 5));
  tc_free(&c);
  c = tc_new(CT_OP_SPLIT, 2, (ct_tensor *[]){I64(2, SH(1, 5), 1, 2, 3, 4, 5), I64(1, SH(2), 1, 4)}, 0, 2);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 2, SH(1, 1), VA(1));
  expect(c.out[1], CT_I64, 2, SH(1, 4), VA(2, 3, 4, 5));
  tc_free(&c);
}
END_TEST

START_TEST(test_squeeze_unsqueeze_flatten_shape) {
  tc c = tc_new(CT_OP_UNSQUEEZE, 2, (ct_tensor *[]){mk(CT_F32, 2, SH(3, 4), NULL), I64(1, SH(2), -1, 0)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK); /* output rank 4: axes 3 and 0 → 1x3x4x1 */
  ck_assert(c.out[0]->ndim == 4 && c.out[0]->shape[0] == 1 && c.out[0]->shape[1] == 3 && c.out[0]->shape[3] == 1);
  tc_free(&c);
  c = tc_new(CT_OP_SQUEEZE, 1, (ct_tensor *[]){mk(CT_F32, 4, SH(1, 3, 1, 2), NULL)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  ck_assert(c.out[0]->ndim == 2 && c.out[0]->shape[0] == 3 && c.out[0]->shape[1] == 2);
  tc_free(&c);
  c = tc_new(CT_OP_SQUEEZE, 2, (ct_tensor *[]){mk(CT_F32, 2, SH(1, 3), NULL), I64(1, SH(1), 1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT); /* dim 1 has size 3 */
  tc_free(&c);
  c = tc_new(CT_OP_FLATTEN, 1, (ct_tensor *[]){mk(CT_F32, 4, SH(2, 3, 4, 5), NULL)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", -1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  ck_assert(c.out[0]->shape[0] == 24 && c.out[0]->shape[1] == 5);
  tc_free(&c);
  c = tc_new(CT_OP_SHAPE, 1, (ct_tensor *[]){mk(CT_F32, 4, SH(2, 3, 4, 5), NULL)}, 1u, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "start", -3));
  ck_assert(ct_op_set_int(c.g, c.op, "end", -1));
  ck_assert_int_eq(ct_shape_fn_of(CT_OP_SHAPE)(c.g, c.op, &c.d), CT_OK);
  ck_assert_int_eq(c.op->out[0]->shape[0], 2); /* dims 1..2 */
  tc_free(&c);
}
END_TEST

START_TEST(test_pad_modes) {
  static const char *const modes[3] = {"constant", "reflect", "edge"};
  static const double want[3][6] = {{0, 0, 1, 2, 3, 0}, {3, 2, 1, 2, 3, 2}, {1, 1, 1, 2, 3, 3}};
  for (int m = 0; m < 3; m++) {
    tc c = tc_new(CT_OP_PAD, 2, (ct_tensor *[]){F32(1, SH(3), 1, 2, 3), I64(1, SH(2), 2, 1)}, 0, 1);
    ck_assert(ct_op_set_string(c.g, c.op, "mode", modes[m]));
    ck_assert_int_eq(tc_run(&c), CT_OK);
    expect(c.out[0], CT_F32, 1, SH(6), want[m]);
    tc_free(&c);
  }
  /* negative begin pad crops; constant_value 9 fills; axes input selects dim 1 of 2x3 */
  tc c = tc_new(CT_OP_PAD, 4, (ct_tensor *[]){F32(2, SH(2, 3), 1, 2, 3, 4, 5, 6), I64(1, SH(2), -1, 1), F32(0, NULL, 9),
                                              I64(1, SH(1), -1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 3), VA(2, 3, 9, 5, 6, 9));
  tc_free(&c);
}
END_TEST

START_TEST(test_expand_tile) {
  tc c = tc_new(CT_OP_EXPAND, 2, (ct_tensor *[]){I64(2, SH(3, 1), 1, 2, 3), I64(1, SH(3), 2, 1, 2)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK); /* 3x1 with [2,1,2] → 2x3x2 */
  expect(c.out[0], CT_I64, 3, SH(2, 3, 2), VA(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  tc_free(&c);
  c = tc_new(CT_OP_TILE, 2, (ct_tensor *[]){F32(2, SH(2, 2), 1, 2, 3, 4), I64(1, SH(2), 2, 1)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(4, 2), VA(1, 2, 3, 4, 1, 2, 3, 4));
  tc_free(&c);
  c = tc_new(CT_OP_TILE, 2, (ct_tensor *[]){F32(2, SH(1, 2), 1, 2), I64(1, SH(2), 2, 2)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 4), VA(1, 2, 1, 2, 1, 2, 1, 2));
  tc_free(&c);
}
END_TEST

/* ---------------- indexing ---------------- */

START_TEST(test_gather_negative_and_out_of_range) {
  tc c = tc_new(CT_OP_GATHER, 2, (ct_tensor *[]){F32(2, SH(3, 2), 1, 2, 3, 4, 5, 6), I64(1, SH(2), -1, 0)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(2, 2), VA(5, 6, 1, 2));
  tc_free(&c);
  c = tc_new(CT_OP_GATHER, 2, (ct_tensor *[]){F32(2, SH(3, 2), 1, 2, 3, 4, 5, 6), mk(CT_I32, 2, SH(1, 1), VA(1))}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK); /* 3x1x1: column 1 */
  expect(c.out[0], CT_F32, 3, SH(3, 1, 1), VA(2, 4, 6));
  tc_free(&c);
  c = tc_new(CT_OP_GATHER, 2, (ct_tensor *[]){F32(2, SH(3, 2), 1, 2, 3, 4, 5, 6), I64(1, SH(2), 0, 3)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(c.d.msg, "index 3"));
  tc_free(&c);
  c = tc_new(CT_OP_GATHERELEMENTS, 2, (ct_tensor *[]){F32(2, SH(2, 2), 1, 2, 3, 4), I64(2, SH(2, 2), 0, 0, -1, 0)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK); /* ONNX spec example: [[1,1],[4,3]] */
  expect(c.out[0], CT_F32, 2, SH(2, 2), VA(1, 1, 4, 3));
  tc_free(&c);
}
END_TEST

START_TEST(test_gathernd_scatter) {
  /* GatherND spec example 5: batch_dims 1, data 2x2x2 = 0..7, indices [[1],[0]] → [[2,3],[4,5]] */
  tc c = tc_new(CT_OP_GATHERND, 2, (ct_tensor *[]){I64(3, SH(2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 7), I64(2, SH(2, 1), 1, 0)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "batch_dims", 1));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 2, SH(2, 2), VA(2, 3, 4, 5));
  tc_free(&c);
  /* ScatterElements spec example (reduction add): [[1,2,3,4,5]], idx [[1,1]], upd [[1.1,2.1]] */
  c = tc_new(CT_OP_SCATTERELEMENTS, 3, (ct_tensor *[]){F32(2, SH(1, 5), 1, 2, 3, 4, 5), I64(2, SH(1, 2), 1, 1),
                                                      F32(2, SH(1, 2), 1.1, 2.1)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "axis", 1));
  ck_assert(ct_op_set_string(c.g, c.op, "reduction", "add"));
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 2, SH(1, 5), VA(1, 5.2, 3, 4, 5));
  tc_free(&c);
  /* ScatterND spec example 1 */
  c = tc_new(CT_OP_SCATTERND, 3, (ct_tensor *[]){F32(1, SH(8), 1, 2, 3, 4, 5, 6, 7, 8), I64(2, SH(4, 1), 4, 3, 1, 7),
                                                 F32(1, SH(4), 9, 10, 11, 12)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_F32, 1, SH(8), VA(1, 11, 3, 10, 9, 6, 7, 12));
  tc_free(&c);
}
END_TEST

START_TEST(test_cast_generators) {
  /* float→int8 truncates toward zero and saturates; NaN → 0 */
  tc c = tc_new(CT_OP_CAST, 1, (ct_tensor *[]){F32(1, SH(5), -1.7, 2.9, 300, -300, NAN)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "to", 3)); /* INT8 */
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I8, 1, SH(5), VA(-1, 2, 127, -128, 0));
  tc_free(&c);
  c = tc_new(CT_OP_CAST, 1, (ct_tensor *[]){I64(1, SH(3), 300, -1, 7)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "to", 2)); /* UINT8: int→int wraps: 300 → 44, -1 → 255 */
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_U8, 1, SH(3), VA(44, 255, 7));
  tc_free(&c);
  c = tc_new(CT_OP_CONSTANTOFSHAPE, 1, (ct_tensor *[]){I64(1, SH(2), 2, 1)}, 0, 1);
  ck_assert(ct_op_set_int(c.g, c.op, "value", 7));
  ck_assert(ct_op_set_int(c.g, c.op, "value_dtype", 7)); /* INT64 */
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 2, SH(2, 1), VA(7, 7));
  tc_free(&c);
  c = tc_new(CT_OP_RANGE, 3, (ct_tensor *[]){I64(0, NULL, 10), I64(0, NULL, 4), I64(0, NULL, -3)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], CT_I64, 1, SH(2), VA(10, 7));
  tc_free(&c);
  c = tc_new(CT_OP_RANGE, 3, (ct_tensor *[]){F32(0, NULL, 1), F32(0, NULL, 2), F32(0, NULL, 0.3f)}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK); /* ceil(1 / 0.3) = 4 */
  expect(c.out[0], CT_F32, 1, SH(4), VA(1, 1 + 0.3f, 1 + 2 * 0.3f, 1 + 3 * 0.3f));
  tc_free(&c);
}
END_TEST


/* ---------------- reductions, sorting, generators, quantization ---------------- */

static Suite *suite(void) {
  Suite *s = suite_create("kern_tensor");
  TCase *t = tcase_create("shape");
  tcase_add_test(t, test_reshape_zero_and_minus_one);
  tcase_add_test(t, test_reshape_errors);
  tcase_add_test(t, test_slice_negative_steps_and_clamping);
  tcase_add_test(t, test_transpose_concat_split);
  tcase_add_test(t, test_squeeze_unsqueeze_flatten_shape);
  tcase_add_test(t, test_pad_modes);
  tcase_add_test(t, test_expand_tile);
  tcase_add_test(t, test_gather_negative_and_out_of_range);
  tcase_add_test(t, test_gathernd_scatter);
  tcase_add_test(t, test_cast_generators);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
