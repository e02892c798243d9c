/* test_verify_tpu.c: the Tpu-dialect checks of the verifier (ops/verify.h): a small hand-written
 * INT8 module passes; each test edits one op line so that exactly one check fails, and the
 * verifier must refuse it with CT_ERR_INPUT and a message starting "t.tpu:LINE: " that names
 * the node and the problem. Also: ct_ir_load_verified refuses such a file (exit 3 in every
 * command that reads IR). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text.h"
#include "ops/verify.h"
#include "tests/testutil.h"

/* Line 6 is the Conv, line 7 the op under test (reads %4, the Conv's 1x4x3x3 i8 result). */
#define CONV_OK                                                                                              \
  "%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], " \
  "group = 1, multiplier = [1073741824], rshift = [31]} : tensor<1x4x3x3xi8 !quant<0.02, 0>> loc(\"conv\" -> \"c\")"
#define Q8 "tensor<1x4x3x3xi8 !quant<0.02, 0>>"

/* The module text with conv as line 6 and op as line 7 (its result %5, of type ty). */
static char *module(const char *conv, const char *op, const char *ty) {
  static const char *fmt = "module @t attributes {chip = \"ctpu-default\"} {\n"
                           "  %%0 = tpu.Input() : tensor<1x4x3x3xf32> loc(\"x\")\n"
                           "  %%1 = tpu.Cast(%%0) {to = 3} : " Q8 " loc(\"x_to_i8\")\n"
                           "  %%2 = tpu.Weight() : tensor<4x4x1x1xi8 !quant<0.01, 0>> loc(\"w\")\n"
                           "  %%3 = tpu.Weight() : tensor<4xi32> loc(\"b\")\n"
                           "  %s\n"
                           "  %%5 = %s : %s loc(\"op\" -> \"y\")\n"
                           "  return %%5 : %s\n}\n";
  size_t n = strlen(fmt) + strlen(conv) + strlen(op) + 2 * strlen(ty) + 1;
  char *t = malloc(n);
  ck_assert_ptr_nonnull(t);
  snprintf(t, n, fmt, conv, op, ty, ty);
  return t;
}

/* A Lut op text with n entries, each v (first entry first). */
static char *lut(int n, int first, int v) {
  char *s = malloc((size_t)n * 8 + 64);
  ck_assert_ptr_nonnull(s);
  int k = sprintf(s, "tpu.Lut(%%4) {table = [");
  for (int i = 0; i < n; i++) k += sprintf(s + k, "%s%d", i ? ", " : "", i ? v : first);
  sprintf(s + k, "], fn = \"relu\"}");
  return s;
}

/* Parses text as "t.tpu" and gives every Weight value zero data (a loaded module). */
static ct_graph *load(const char *text) {
  ct_graph *g;
  ct_diag d;
  ct_diag_clear(&d);
  ck_assert_msg(ct_ir_parse(text, strlen(text), "t.tpu", &g, &d) == CT_OK, "%s", d.msg);
  for (int i = 0; i < g->n_ops; i++) {
    ct_value *v = g->ops[i]->out[0];
    if (g->ops[i]->kind == CT_OP_WEIGHT) v->data = ct_tensor_new(v->dtype, v->ndim, v->shape, v->name);
  }
  return g;
}

static void expect_ok(char *text) {
  ct_graph *g = load(text);
  ct_diag d;
  ct_diag_clear(&d);
  ck_assert_msg(ct_ir_verify(g, &d) == CT_OK, "%s", d.msg);
  ct_graph_free(g);
  free(text);
}

/* The verifier refuses text at line with a message containing want. */
static void expect_refused(char *text, int line, const char *want) {
  ct_graph *g = load(text);
  ct_diag d;
  ct_diag_clear(&d);
  ck_assert_int_eq(ct_ir_verify(g, &d), CT_ERR_INPUT);
  char at[32];
  snprintf(at, sizeof at, "t.tpu:%d: ", line);
  ck_assert_msg(strncmp(d.msg, at, strlen(at)) == 0 && strstr(d.msg, want), "got \"%s\", want \"%s...%s\"", d.msg, at,
                want);
  ct_graph_free(g);
  free(text);
}

START_TEST(test_valid_module_passes) {
  char *l = lut(256, 0, 255);
  expect_ok(module(CONV_OK, l, "tensor<1x4x3x3xu8 !quant<0.004, 0>>"));
  expect_ok(module(CONV_OK, "tpu.Transpose(%4) {perm = [0, 2, 3, 1]}", "tensor<1x3x3x4xi8 !quant<0.02, 0>>"));
  free(l);
}
END_TEST

/* Result types are re-inferred on the float view: Add's broadcast, Lut's same shape. */
START_TEST(test_result_shape_vs_inference) {
  expect_refused(module(CONV_OK, "tpu.Add(%4, %4) {multiplier = [1, 1], rshift = [0, 0, 0]}",
                        "tensor<2x4x3x3xi8 !quant<0.02, 0>>"),
                 7, "node \"op\" (op Add): result 0 is 2x4x3x3, inference says 1x4x3x3");
  char *l = lut(256, 0, 255);
  expect_refused(module(CONV_OK, l, "tensor<0x4x3x3xu8 !quant<0.004, 0>>"), 7, "result 0 is 0x4x3x3, inference says 1x4x3x3");
  free(l);
}
END_TEST

START_TEST(test_conv_operands_swapped) {
  expect_refused(module("%4 = tpu.Conv(%2, %1, %3) {kernel_shape = [1, 1], strides = [1, 1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = 1, multiplier = [1073741824], rshift = [31]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "shape inference: node \"conv\"");
}
END_TEST

START_TEST(test_transpose_perm_is_a_permutation) {
  expect_refused(module(CONV_OK, "tpu.Transpose(%4) {perm = [0, 2, 3, 15]}", "tensor<1x3x3x4xi8 !quant<0.02, 0>>"), 7,
                 "perm is not a permutation of 0..3");
}
END_TEST

/* group: an int >= 1 dividing the channels; -1e400 parses as a float (-inf). */
START_TEST(test_conv_group) {
  expect_refused(module("%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], strides = [1, 1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = -1e400, multiplier = [1073741824], rshift = [31]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "attribute \"group\": expected an int attribute");
  expect_refused(module("%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], strides = [1, 1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = 3, multiplier = [1073741824], rshift = [31]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "group 3 does not divide 4 input channels");
}
END_TEST

/* Window attributes: one entry per spatial dim (pads two), explicit (canonical form). */
START_TEST(test_window_attribute_lengths) {
  expect_refused(module("%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], strides = [1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = 1, multiplier = [1073741824], rshift = [31]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "node \"conv\" (op Conv)");
  expect_refused(module("%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = 1, multiplier = [1073741824], rshift = [31]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "attribute \"strides\" is missing");
}
END_TEST

START_TEST(test_requant_counts_and_ranges) {
  expect_refused(module("%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], strides = [1, 1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = 1, multiplier = [1, 2, 3], rshift = [31, 31, 31]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "needs multiplier and rshift with 4 (or 1) entries each, has 3 and 3");
  expect_refused(module("%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], strides = [1, 1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = 1, multiplier = [1073741824], rshift = [64]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "rshift[0] = 64 is outside 0..63");
  expect_refused(module("%4 = tpu.Conv(%1, %2, %3) {kernel_shape = [1, 1], strides = [1, 1], dilations = [1, 1], "
                        "pads = [0, 0, 0, 0], group = 1, multiplier = [4294967296], rshift = [31]} : " Q8 " loc(\"conv\")",
                        "tpu.Relu(%4)", Q8),
                 6, "multiplier[0] = 4294967296 does not fit int32");
  expect_refused(module(CONV_OK, "tpu.Add(%4, %4) {multiplier = [1, 1], rshift = [0, 0]}", Q8), 7,
                 "needs multiplier [m_a, m_b] and rshift [s_a, s_b, s_out], has 2 and 2 entries");
  expect_refused(module(CONV_OK, "tpu.Requant(%4) {rshift = [3]}", Q8), 7, "needs multiplier and rshift with 1 (or 1)");
}
END_TEST

START_TEST(test_act) {
  expect_refused(module(CONV_OK, "tpu.Requant(%4) {multiplier = [1], rshift = [0], act = \"gelu\"}", Q8), 7,
                 "act \"gelu\" is not none, relu, clip or relu6");
  expect_refused(module(CONV_OK, "tpu.Requant(%4) {multiplier = [1], rshift = [0], act = \"clip\", qact_hi = 300}", Q8), 7,
                 "qact_hi 300 is not a i8 value");
}
END_TEST

START_TEST(test_lut_table) {
  char *l = lut(255, 0, 255);
  expect_refused(module(CONV_OK, l, "tensor<1x4x3x3xu8 !quant<0.004, 0>>"), 7,
                 "table has 255 entries; needs 256 (or 256 per channel for 4 channels)");
  free(l);
  l = lut(256, 300, 0);
  expect_refused(module(CONV_OK, l, "tensor<1x4x3x3xu8 !quant<0.004, 0>>"), 7, "table[0] = 300 is outside -128..255");
  free(l);
  l = lut(256, 0, 0);
  expect_refused(module(CONV_OK, l, "tensor<1x4x3x3xi32 !quant<0.004, 0>>"), 7, "a Lut reads i8, u8 or i16 and writes i8 or u8");
  free(l);
}
END_TEST

START_TEST(test_integer_op_storage_types) {
  expect_refused(module(CONV_OK, "tpu.Add(%4, %0) {multiplier = [1, 1], rshift = [0, 0, 0]}", Q8), 7,
                 "operand 1 (\"x\") is f32; the integer form reads i8, u8, i16, u16 or i32");
  expect_refused(module(CONV_OK, "tpu.Cast(%4) {to = 3}", "tensor<1x4x3x3xf32 !quant<0.02, 0>>"), 7,
                 "quant params on f32");
  expect_refused(module(CONV_OK, "tpu.Cast(%0) {to = 7}", "tensor<1x4x3x3xi64 !quant<0.02, 0>>"), 7,
                 "a quantizing cast needs an integer result with per-tensor parameters");
  /* an integer side without params holds plain values: an ONNX value conversion */
  expect_ok(module(CONV_OK, "tpu.Cast(%0) {to = 3}", "tensor<1x4x3x3xi8>"));
}
END_TEST

START_TEST(test_data_movement_keeps_type) {
  expect_refused(module(CONV_OK, "tpu.Transpose(%4) {perm = [0, 2, 3, 1]}", "tensor<1x3x3x4xi32 !quant<0.02, 0>>"), 7,
                 "result 0 is i32 but operand 0 is i8: the op moves stored values");
}
END_TEST

START_TEST(test_unknown_attribute) {
  expect_refused(module(CONV_OK, "tpu.Relu(%4) {grop = 1}", Q8), 7, "attribute \"grop\": unknown attribute");
}
END_TEST

/* The load every command uses refuses the file: CT_ERR_INPUT (exit 3) naming file and line. */
START_TEST(test_load_verified_refuses) {
  const char *t = "module @t attributes {chip = \"ctpu-default\"} {\n"
                  "  %0 = tpu.Input() : tensor<1x4x3x3xf32> loc(\"x\")\n"
                  "  %1 = tpu.Cast(%0) {to = 3} : " Q8 " loc(\"x_to_i8\")\n"
                  "  %2 = tpu.Transpose(%1) {perm = [0, 2, 3, 15]} : tensor<1x3x3x4xi8 !quant<0.02, 0>> loc(\"t\")\n"
                  "  return %2 : tensor<1x3x3x4xi8 !quant<0.02, 0>>\n}\n";
  const char *path = ct_test_tmp_path("perm.tpu");
  ck_assert(ct_test_write_file(path, t, strlen(t)));
  ct_graph *g = NULL;
  ct_diag d;
  ct_diag_clear(&d);
  ck_assert_int_eq(ct_ir_load_verified(path, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_null(g);
  ck_assert_msg(strstr(d.msg, "perm.tpu:4: shape inference: node \"t\" (op Transpose)"), "%s", d.msg);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("verify_tpu");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_valid_module_passes);
  tcase_add_test(tc, test_result_shape_vs_inference);
  tcase_add_test(tc, test_conv_operands_swapped);
  tcase_add_test(tc, test_transpose_perm_is_a_permutation);
  tcase_add_test(tc, test_conv_group);
  tcase_add_test(tc, test_window_attribute_lengths);
  tcase_add_test(tc, test_requant_counts_and_ranges);
  tcase_add_test(tc, test_act);
  tcase_add_test(tc, test_lut_table);
  tcase_add_test(tc, test_integer_op_storage_types);
  tcase_add_test(tc, test_data_movement_keeps_type);
  tcase_add_test(tc, test_unknown_attribute);
  tcase_add_test(tc, test_load_verified_refuses);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
