/* test_ops_table.c: the op table (ir/ops.def) and what is generated from it: docs/ops.md is
 * the generator's output, every op has its functions, attribute sets are consistent, and
 * kernels are keyed by (op, dialect). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/kernel.h"
#include "ops/ops_doc.h"
#include "ops/shape.h"
#include "tests/testutil.h"

START_TEST(test_docs_ops_md_is_generated_text) {
  char *text = ct_test_doc_current(ct_ops_doc, "docs/ops.md", "ctpu ops-doc");
  ck_assert_ptr_nonnull(strstr(text, "| Softmax | top, tpu | 1 | 1 | [softmax](#softmax) | yes | yes | - |"));
  ck_assert_ptr_nonnull(strstr(text, "| Lut | tpu | 1 | 1 | [lut](#lut) | yes | - | yes |"));
  ck_assert_ptr_nonnull(strstr(text, "| `axis` | int | `-1` |"));
  free(text);
}
END_TEST

/* Every op but the graph leaves has a shape function; every Top op a float kernel; every
 * Tpu-only op (Requant, Lut) an integer kernel; a kernel lookup with a bad dialect finds
 * nothing. The integer kernels of the Tpu dialect (docs/tpu.md) are keyed by (op, dialect). */
START_TEST(test_every_op_has_shape_and_top_kernel) {
  for (int k = 0; k < CT_OP_COUNT; k++) {
    if (k == CT_OP_INPUT || k == CT_OP_WEIGHT) continue;
    unsigned dl = ct_op_dialects((ct_op_kind)k);
    ck_assert_msg(ct_shape_fn_of((ct_op_kind)k), "%s", ct_op_name((ct_op_kind)k));
    ck_assert_msg(!(dl & CT_DIALECT_TOP) || ct_kernel_of((ct_op_kind)k), "%s", ct_op_name((ct_op_kind)k));
    ck_assert_msg((dl & CT_DIALECT_TOP) || ct_kernel_for((ct_op_kind)k, CT_DIALECT_TPU), "%s", ct_op_name((ct_op_kind)k));
    ck_assert_ptr_eq(ct_kernel_for((ct_op_kind)k, CT_DIALECT_TOP), ct_kernel_of((ct_op_kind)k));
    ck_assert_ptr_null(ct_kernel_for((ct_op_kind)k, (ct_dialect)0));
  }
  ck_assert_ptr_nonnull(ct_kernel_for(CT_OP_CONV, CT_DIALECT_TPU));
  ck_assert_ptr_ne(ct_kernel_for(CT_OP_CONV, CT_DIALECT_TPU), ct_kernel_of(CT_OP_CONV));
  ck_assert_ptr_null(ct_kernel_for(CT_OP_SOFTMAX, CT_DIALECT_TPU)); /* float only */
  ck_assert_ptr_null(ct_shape_fn_of(CT_OP_COUNT));
  ck_assert(ct_kernel_writes_all(CT_OP_CONV) && !ct_kernel_writes_all(CT_OP_PAD) && !ct_kernel_writes_all(CT_OP_COUNT));
}
END_TEST

/* Within one op's sets an attribute name appears once (else the accessor used would depend on
 * the set), every set is used by some op, and every set with rows is declared. */
START_TEST(test_attribute_sets_are_consistent) {
  int n;
  const ct_attr_schema *a = ct_attr_schemas(&n);
  bool used[CT_ASET_COUNT] = {false};
  for (int k = 0; k < CT_OP_COUNT; k++) {
    ct_attr_set s[3];
    ct_op_attr_sets((ct_op_kind)k, s);
    for (int i = 0; i < 3; i++) used[s[i]] = true;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) {
        bool in_i = a[i].set == s[0] || a[i].set == s[1] || a[i].set == s[2];
        bool in_j = a[j].set == s[0] || a[j].set == s[1] || a[j].set == s[2];
        ck_assert_msg(!(in_i && in_j && !strcmp(a[i].name, a[j].name)), "%s: attribute %s in two sets",
                      ct_op_name((ct_op_kind)k), a[i].name);
      }
  }
  for (int s = 0; s < CT_ASET_COUNT; s++) ck_assert_msg(used[s], "set %s is used by no op", ct_attr_set_name(s));
  for (int i = 0; i < n; i++) ck_assert_int_ne(a[i].set, CT_ASET_none);
}
END_TEST

/* The schema lookup and check: known, unknown, mistyped; NUM takes either number. */
START_TEST(test_attribute_check) {
  ct_attr a = {.name = "axis", .kind = CT_ATTR_INT};
  ck_assert_ptr_null(ct_attr_check(CT_OP_SOFTMAX, &a));
  a.kind = CT_ATTR_FLOAT;
  ck_assert_str_eq(ct_attr_check(CT_OP_SOFTMAX, &a), "expected an int attribute");
  ck_assert_str_eq(ct_attr_check(CT_OP_RELU, &a), "unknown attribute");
  a.name = "value";
  ck_assert_ptr_null(ct_attr_check(CT_OP_CONSTANTOFSHAPE, &a));
  a.kind = CT_ATTR_STRING;
  ck_assert_str_eq(ct_attr_check(CT_OP_CONSTANTOFSHAPE, &a), "expected an int or float attribute");
  const ct_attr_schema *s = ct_op_attr_schema(CT_OP_CONV, "group");
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(s->dflt, "1");
  ck_assert_ptr_nonnull(ct_op_attr_schema(CT_OP_CONV, "strides"));
  ck_assert_ptr_null(ct_op_attr_schema(CT_OP_CONV, "output_padding"));
  ck_assert_ptr_nonnull(ct_op_attr_schema(CT_OP_CONVTRANSPOSE, "output_padding"));
}
END_TEST

/* Typed accessors give the table default when absent and the value when present. A FLOAT
 * default is the f32 value ONNX means (its float attributes are float32): 0.01f, 1e-5f. */
START_TEST(test_typed_accessors) {
  ct_graph *g = ct_graph_new("t", "top");
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 1, (int64_t[]){4});
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 1, (int64_t[]){4});
  ct_op *op = ct_graph_add_op(g, CT_OP_LEAKYRELU, "l", 1, &x, 1, &y);
  ck_assert_double_eq(ct_attr_leakyrelu_alpha(op), (double)0.01f);
  ct_value *z = ct_graph_add_value(g, "z", CT_F32, 1, (int64_t[]){4});
  ct_op *ln = ct_graph_add_op(g, CT_OP_LAYERNORM, "ln", 1, &x, 1, &z);
  ck_assert_double_eq(ct_attr_layernorm_epsilon(ln), (double)1e-5f);
  ck_assert_double_eq(ct_attr_hardsigmoid_alpha(ln), (double)0.2f);
  ck_assert(!ct_attr_has_leakyrelu_alpha(op));
  ck_assert(ct_attr_set_leakyrelu_alpha(g, op, 0.5));
  ck_assert_double_eq(ct_attr_leakyrelu_alpha(op), 0.5);
  ck_assert(ct_attr_has_leakyrelu_alpha(op));
  ct_attr_del_leakyrelu_alpha(op);
  ck_assert(!ct_attr_has_leakyrelu_alpha(op));
  /* list defaults: MVN's axes default to [0, 2, 3]; Conv's strides have none */
  ct_op *mvn = ct_graph_add_op(g, CT_OP_MVN, "m", 1, &x, 1, &y);
  int n = -1;
  const int64_t *ax = ct_attr_mvn_axes(mvn, &n);
  ck_assert_int_eq(n, 3);
  ck_assert(ax[0] == 0 && ax[1] == 2 && ax[2] == 3);
  ck_assert(ct_attr_set_mvn_axes(g, mvn, 1, (int64_t[]){1}));
  ax = ct_attr_mvn_axes(mvn, &n);
  ck_assert(n == 1 && ax[0] == 1);
  n = -1;
  ck_assert_ptr_null(ct_attr_window_strides(op, &n));
  ck_assert_int_eq(n, 0);
  ct_graph_free(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_table");
  TCase *t = tcase_create("core");
  tcase_add_test(t, test_docs_ops_md_is_generated_text);
  tcase_add_test(t, test_every_op_has_shape_and_top_kernel);
  tcase_add_test(t, test_attribute_sets_are_consistent);
  tcase_add_test(t, test_attribute_check);
  tcase_add_test(t, test_typed_accessors);
  suite_add_tcase(s, t);
  return ct_test_run_suite(s);
}
