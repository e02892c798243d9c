/* test_verify.c: ops/verify.h — a valid graph passes and is left unchanged; each
 * verifier error is produced by a graph built to break exactly one rule, and its message
 * names the node, the op and the problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/shape.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tests/testutil.h"

static const int64_t S4[4] = {1, 8, 4, 4}, S1[4] = {1, 8, 1, 1};

/* x (Input 1x8x4x4), b (Weight 1x8x1x1 with data), y = Add(x, b), z = Relu(y); returns z. */
typedef struct fixture {
  ct_graph *g;
  ct_value *x, *b, *y, *z;
  ct_op *add, *relu;
} fixture;

static fixture make(void) {
  fixture f;
  f.g = ct_graph_new("m", "top");
  f.x = ct_graph_add_value(f.g, "x", CT_F32, 4, S4);
  ct_graph_add_op(f.g, CT_OP_INPUT, "x", 0, NULL, 1, &f.x);
  f.b = ct_graph_add_weight(f.g, NULL, ct_tensor_new(CT_F32, 4, S1, "b"));
  f.y = ct_graph_add_value(f.g, "y", CT_F32, 4, S4);
  ct_value *in[2] = {f.x, f.b};
  f.add = ct_graph_add_op(f.g, CT_OP_ADD, "add", 2, in, 1, &f.y);
  f.z = ct_graph_add_value(f.g, "z", CT_F32, 4, S4);
  f.relu = ct_graph_add_op(f.g, CT_OP_RELU, "relu", 1, &f.y, 1, &f.z);
  ct_graph_set_outputs(f.g, 1, &f.z);
  return f;
}

static void expect_error(fixture *f, const char *want) {
  ct_diag d;
  ct_diag_clear(&d);
  ck_assert_int_eq(ct_ir_verify(f->g, &d), CT_ERR_INPUT);
  ck_assert_msg(strcmp(d.msg, want) == 0, "got \"%s\", want \"%s\"", d.msg, want);
  ct_graph_free(f->g);
}

START_TEST(test_valid_graph_passes_unchanged) {
  fixture f = make();
  char *before, *after;
  ct_diag d;
  ck_assert_int_eq(ct_ir_print_string(f.g, &before, NULL, &d), CT_OK);
  ck_assert_msg(ct_ir_verify(f.g, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(ct_ir_print_string(f.g, &after, NULL, &d), CT_OK);
  ck_assert_str_eq(before, after);
  free(before);
  free(after);
  ct_graph_free(f.g);
}
END_TEST

START_TEST(test_arity) {
  fixture f = make();
  f.add->n_in = 1;
  expect_error(&f, "node \"add\" (op Add): 1 operands, ops.def allows 2..2");
  f = make();
  f.add->in[1] = NULL;
  expect_error(&f, "node \"add\" (op Add): required operand 1 is absent");
}
END_TEST

START_TEST(test_use_before_definition) {
  fixture f = make();
  ct_op *t = f.g->ops[2];
  f.g->ops[2] = f.g->ops[3];
  f.g->ops[3] = t;
  expect_error(&f, "node \"relu\" (op Relu): operand 0 (\"y\") is not defined before its use");
}
END_TEST

START_TEST(test_operand_of_another_graph) {
  fixture f = make(), o = make();
  f.relu->in[0] = o.y;
  expect_error(&f, "node \"relu\" (op Relu): operand 0 is not a value of this graph");
  ct_graph_free(o.g);
}
END_TEST

START_TEST(test_dangling_output) {
  fixture f = make();
  ct_value *v = ct_graph_add_value(f.g, "orphan", CT_F32, 4, S4);
  ct_graph_set_outputs(f.g, 1, &v);
  expect_error(&f, "module output 0 (\"orphan\") is not defined by an op of the graph");
  f = make();
  ct_graph_erase_op(f.g, f.relu);
  expect_error(&f, "module output 0 (\"z\") is not defined by an op of the graph");
}
END_TEST

START_TEST(test_names_and_types) {
  fixture f = make();
  f.z->name = "y";
  expect_error(&f, "node \"relu\" (op Relu): value name \"y\" is used twice");
  f = make();
  f.z->name = "";
  expect_error(&f, "node \"relu\" (op Relu): result 0 has no name");
  f = make();
  f.y->ndim = -1;
  expect_error(&f, "node \"add\" (op Add): result 0 (\"y\") has no known shape");
  f = make();
  f.y->dtype = (ct_dtype)99;
  expect_error(&f, "node \"add\" (op Add): result 0 (\"y\") has an invalid dtype");
  f = make();
  static double zero = 0;
  static int32_t zp = 0;
  f.y->dtype = CT_I8;
  f.y->n_scale = 1, f.y->scale = &zero, f.y->zero_point = &zp;
  expect_error(&f, "node \"add\" (op Add): result 0 (\"y\"): scale 0 is 0, not a positive number");
}
END_TEST

/* Quant params: only on integer storage types, one scale per element of the axis dim, zero
 * points inside the storage type (docs/architecture.md §6). */
START_TEST(test_quant_params) {
  static const double s2[2] = {0.5, 0.25}, s1[1] = {0.5};
  static const int32_t z2[2] = {0, -3}, z1[1] = {128}, zbad[1] = {-129};
  fixture f = make();
  ck_assert(ct_value_set_quant(f.g, f.y, 1, s1, z1, 0));
  expect_error(&f, "node \"add\" (op Add): result 0 (\"y\"): quant params on f32, not an integer type");
  f = make();
  f.y->dtype = CT_I8;
  ck_assert(ct_value_set_quant(f.g, f.y, 1, s1, zbad, 0));
  expect_error(&f, "node \"add\" (op Add): result 0 (\"y\"): zero point 0 is -129, outside i8");
  f = make();
  f.y->dtype = CT_U8;
  ck_assert(ct_value_set_quant(f.g, f.y, 1, s1, z1, 0));
  ck_assert(ct_value_set_quant(f.g, f.y, 2, s2, z2, 1)); /* y is 1x8x...: axis 1 has 8 elements */
  expect_error(&f, "node \"add\" (op Add): result 0 (\"y\"): 2 scales do not match axis 1 of a rank-4 value");
  f = make();
  f.y->dtype = CT_I8;
  ck_assert(ct_value_set_quant(f.g, f.y, 2, s2, z2, 7));
  expect_error(&f, "node \"add\" (op Add): result 0 (\"y\"): 2 scales do not match axis 7 of a rank-4 value");
}
END_TEST

/* Back-end annotations start unassigned and survive erasing other ops and compaction. */
START_TEST(test_annotations_survive_compact) {
  fixture f = make();
  ck_assert_int_eq(f.y->annot.gmem_addr, -1);
  ck_assert_int_eq(f.relu->annot.group, -1);
  ct_value *w = ct_graph_add_value(f.g, "w", CT_F32, 4, S4);
  ct_op *dead = ct_graph_add_op(f.g, CT_OP_RELU, "dead", 1, &f.z, 1, &w);
  f.z->annot = (ct_value_annot){4096, 128, 512};
  f.relu->annot = (ct_op_annot){2, 3, 5};
  dead->annot = (ct_op_annot){9, 9, 9};
  ct_graph_erase_op(f.g, dead);
  int before = f.g->n_ops;
  ct_graph_compact(f.g);
  ck_assert_int_eq(f.g->n_ops, before - 1);
  ck_assert_ptr_eq(f.g->ops[f.g->n_ops - 1], f.relu);
  ck_assert_ptr_eq(f.g->values[f.z->id], f.z);
  ck_assert_int_eq(f.z->annot.gmem_addr, 4096);
  ck_assert_int_eq(f.z->annot.lmem_addr, 128);
  ck_assert_int_eq(f.z->annot.bytes, 512);
  ck_assert_int_eq(f.relu->annot.group, 2);
  ck_assert_int_eq(f.relu->annot.tile, 3);
  ck_assert_int_eq(f.relu->annot.step, 5);
  ct_graph_free(f.g);
}
END_TEST

START_TEST(test_weight_data_must_match) {
  fixture f = make();
  f.b->shape[1] = 4;
  expect_error(&f, "node \"b\" (op Weight): value \"b\" is 1x4x1x1xf32 but its data is 1x8x1x1xf32");
  f = make();
  f.b->dtype = CT_F16;
  expect_error(&f, "node \"b\" (op Weight): value \"b\" is 1x8x1x1xf16 but its data is 1x8x1x1xf32");
}
END_TEST

START_TEST(test_inference_mismatch) {
  ck_assert_ptr_nonnull(ct_shape_fn_of(CT_OP_ADD));
  fixture f = make();
  f.y->shape[2] = f.y->shape[3] = 3;
  /* stored 1x8x3x3; broadcasting 1x8x4x4 with 1x8x1x1 gives 1x8x4x4 (ONNX Broadcasting.md) */
  expect_error(&f, "node \"add\" (op Add): result 0 is 1x8x3x3, inference says 1x8x4x4");
  f = make();
  f.z->dtype = CT_I32;
  expect_error(&f, "node \"relu\" (op Relu): result 0 is 1x8x4x4xi32, inference says 1x8x4x4xf32");
  /* the tpu dialect stores other dtypes: only shapes are compared there */
  f = make();
  f.g->dialect = "tpu";
  f.z->dtype = CT_I8;
  ct_diag d;
  ck_assert_msg(ct_ir_verify(f.g, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(f.z->dtype, CT_I8);
  ct_graph_free(f.g);
}
END_TEST

/* Conv's shape function canonicalizes attributes; verify must leave them as they were. */
START_TEST(test_conv_inference_does_not_mutate) {
  if (!ct_shape_fn_of(CT_OP_CONV)) return; /* shape function not in the tree yet */
  ct_graph *g = ct_graph_new("c", "top");
  int64_t xs[4] = {1, 3, 5, 5}, ws[4] = {8, 3, 3, 3}, ys[4] = {1, 8, 4, 4};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 4, xs);
  ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x);
  ct_value *w = ct_graph_add_weight(g, NULL, ct_tensor_new(CT_F32, 4, ws, "w"));
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 4, ys), *in[3] = {x, w, NULL};
  ct_graph_add_op(g, CT_OP_CONV, "conv", 3, in, 1, &y);
  ct_graph_set_outputs(g, 1, &y);
  char *before, *after;
  ct_diag d;
  ck_assert_int_eq(ct_ir_print_string(g, &before, NULL, &d), CT_OK);
  /* 5x5 input, 3x3 kernel, no pads, stride 1: (5 - 3) / 1 + 1 = 3 (ONNX Conv) */
  ck_assert_int_eq(ct_ir_verify(g, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "node \"conv\" (op Conv): result 0 is 1x8x4x4, inference says 1x8x3x3");
  ck_assert_int_eq(ct_ir_print_string(g, &after, NULL, &d), CT_OK);
  ck_assert_str_eq(before, after);
  free(before);
  free(after);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_parsed_unloaded_weights_skip_inference) {
  const char *t = "module @m {\n  %0 = top.Input() : tensor<2x3xf32> loc(\"x\")\n"
                  "  %1 = top.Weight() : tensor<1x3xf32> loc(\"w\")\n"
                  "  %2 = top.Add(%0, %1) : tensor<2x3xf32> loc(\"add\" -> \"y\")\n  return %2 : tensor<2x3xf32>\n}\n";
  ct_graph *g;
  ct_diag d;
  ck_assert_int_eq(ct_ir_parse(t, strlen(t), "m.top", &g, &d), CT_OK);
  ck_assert_msg(ct_ir_verify(g, &d) == CT_OK, "%s", d.msg);
  ct_graph_free(g);
}
END_TEST

/* A list attribute whose count the schema fixes (ops.def LEN): a 2-D Conv's strides with one
 * value is refused naming the node and the attribute — by the verifier (no second stride read
 * from past the list) and by a command loading the module (exit 3); pads of 4 on a 1-D pool
 * and a perm of the wrong rank too; the right counts pass. */
START_TEST(test_attribute_lengths) {
  static const char *fmt = "module @m {\n  %%0 = top.Input() : tensor<1x2x5x5xf32> loc(\"x\")\n"
                           "  %%1 = top.Input() : tensor<3x2x3x3xf32> loc(\"w\")\n"
                           "  %%2 = top.Conv(%%0, %%1) {strides = %s} : tensor<1x3x3x3xf32> loc(\"conv1\")\n"
                           "  return %%2 : tensor<1x3x3x3xf32>\n}\n";
  char text[1024];
  ct_graph *g;
  ct_diag d;
  snprintf(text, sizeof text, fmt, "[1]");
  ck_assert_int_eq(ct_ir_parse(text, strlen(text), "bad.top", &g, &d), CT_OK);
  ck_assert_int_eq(ct_ir_verify(g, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "bad.top:4: node \"conv1\" (op Conv): attribute \"strides\" has 1 value, expected 2 (one per spatial axis)");
  ct_graph_free(g);
  const char *path = ct_test_tmp_path("bad_strides.top");
  ck_assert(ct_test_write_file(path, text, strlen(text)));
  char out[2048];
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "opt %s -o %s", path, ct_test_tmp_path("o.top")), 3);
  ck_assert_msg(strstr(out, "node \"conv1\" (op Conv): attribute \"strides\" has 1 value, expected 2"), "%s", out);
  snprintf(text, sizeof text, fmt, "[1, 1]");
  ck_assert_int_eq(ct_ir_parse(text, strlen(text), "ok.top", &g, &d), CT_OK);
  ck_assert_msg(ct_ir_verify(g, &d) == CT_OK, "%s", d.msg);
  ct_graph_free(g);
  static const char *others[][3] = {
      {"top.MaxPool(%0) {kernel_shape = [2], pads = [0, 0, 0, 0]}", "1x2x4",
       "node \"pool\" (op MaxPool): attribute \"pads\" has 4 values, expected 2 (two per spatial axis)"},
      {"top.Transpose(%0) {perm = [0, 2, 1, 3]}", "1x5x2",
       "node \"pool\" (op Transpose): attribute \"perm\" has 4 values, expected 3 (one per axis)"}};
  for (int i = 0; i < 2; i++) {
    snprintf(text, sizeof text, "module @m {\n  %%0 = top.Input() : tensor<1x2x5xf32> loc(\"x\")\n  %%1 = %s : "
             "tensor<%sxf32> loc(\"pool\")\n  return %%1 : tensor<%sxf32>\n}\n", others[i][0], others[i][1], others[i][1]);
    ck_assert_int_eq(ct_ir_parse(text, strlen(text), "m.top", &g, &d), CT_OK);
    ck_assert_int_eq(ct_ir_verify(g, &d), CT_ERR_INPUT);
    ck_assert_msg(strstr(d.msg, others[i][2]), "got \"%s\"", d.msg);
    ct_graph_free(g);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("verify");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_valid_graph_passes_unchanged);
  tcase_add_test(tc, test_arity);
  tcase_add_test(tc, test_use_before_definition);
  tcase_add_test(tc, test_operand_of_another_graph);
  tcase_add_test(tc, test_dangling_output);
  tcase_add_test(tc, test_names_and_types);
  tcase_add_test(tc, test_weight_data_must_match);
  tcase_add_test(tc, test_inference_mismatch);
  tcase_add_test(tc, test_conv_inference_does_not_mutate);
  tcase_add_test(tc, test_parsed_unloaded_weights_skip_inference);
  tcase_add_test(tc, test_quant_params);
  tcase_add_test(tc, test_annotations_survive_compact);
  tcase_add_test(tc, test_attribute_lengths);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
