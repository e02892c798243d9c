/* test_onnx_cli.c: `ctpu transform` through the binary — a successful run (.top + .top.h5),
 * --help, usage errors (exit 2) and every bad-input path (exit 3) with its message, on
 * small ONNX models built in the test (tests/onnx_build.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

/* A valid two-node model x[2,3] → Relu → Add(bias) → y. */
static void small_model(ob_model *b) {
  ob_init(b, 13);
  ob_input(b, "x", T_FLOAT, 2, (int64_t[]){2, 3});
  ob_init_f32(b, "bias", 1, (int64_t[]){3}, (float[]){1, 2, 3});
  ob_node(b, "Relu", "relu", (const char *[]){"x", NULL}, (const char *[]){"r", NULL});
  ob_node(b, "Add", "add", (const char *[]){"r", "bias", NULL}, (const char *[]){"y", NULL});
  ob_output(b, "y");
}

/* Adds initializer "bias" (f32 [3]) whose data lives in the external file `location`. */
static void add_external_bias(ob_model *b, const char *location) {
  Onnx__TensorProto *t = ob_tensor(b, "bias", T_FLOAT, 1, (int64_t[]){3});
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  Onnx__StringStringEntryProto *e = ob_alloc(b, sizeof *e);
  onnx__string_string_entry_proto__init(e);
  e->key = ob_str(b, "location");
  e->value = ob_str(b, location);
  t->n_external_data = 1;
  t->external_data = ob_alloc(b, sizeof(void *));
  t->external_data[0] = e;
  ob_add_init(b, t);
}

/* Runs transform on a model file expecting exit code rc and a message part; checks that
 * no output was left behind on failure. */
static void expect_transform(const char *model_path, const char *extra, int rc, const char *part) {
  char out[4096], model[1024];
  snprintf(model, sizeof model, "%s", model_path); /* ct_test_tmp_path's buffers are reused */
  const char *top = ct_test_tmp_path("cli_out.top");
  remove(top);
  int got = ct_test_run_ctpu(out, sizeof out, "transform %s -o %s %s", model, top, extra);
  ck_assert_msg(got == rc, "transform %s %s: exit %d, want %d: %s", model, extra, got, rc, out);
  ck_assert_msg(strstr(out, part) != NULL, "message lacks \"%s\": %s", part, out);
  if (rc) ck_assert(!ct_test_file_exists(top));
}

START_TEST(test_cli_transform_ok_and_help) {
  ob_model b;
  small_model(&b);
  const char *path = ct_test_tmp_path("cli_ok.onnx");
  ck_assert(ob_write(&b, path));
  char out[4096];
  const char *top = ct_test_tmp_path("cli_ok.top");
  int rc = ct_test_run_ctpu(out, sizeof out, "transform %s -o %s", path, top);
  ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
  char *text = ct_test_read_file(top, NULL);
  ck_assert_ptr_nonnull(text);
  ck_assert_ptr_nonnull(strstr(text, "top.Relu"));
  ck_assert_ptr_nonnull(strstr(text, "tensor<2x3xf32>"));
  free(text);
  char h5[600];
  snprintf(h5, sizeof h5, "%s.h5", top);
  ck_assert(ct_test_file_exists(h5));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "transform --help"), 0);
  ck_assert_ptr_nonnull(strstr(out, "--input-shapes"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "transform %s", path), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "transform %s -o %s --bogus", path, top), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "transform %s -o %s --pixel-format cmyk", path, top), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "transform %s -o %s --pad-type left", path, top), 2);
  ck_assert_ptr_nonnull(strstr(out, "normal or center"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "transform %s -o %s --pad-value 114", path, top), 2);
  ck_assert_ptr_nonnull(strstr(out, "needs --pad-type"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "transform %s -o %s --pad-type normal --pad-value 256", path, top), 2);
  ob_free(&b);
}
END_TEST

START_TEST(test_cli_transform_errors) {
  ob_model b;
  small_model(&b);
  char good[1024];
  snprintf(good, sizeof good, "%s", ct_test_tmp_path("cli_good.onnx"));
  ck_assert(ob_write(&b, good));
  size_t n;
  char *bytes = ct_test_read_file(good, &n);
  ck_assert(ct_test_write_file(ct_test_tmp_path("cli_trunc.onnx"), bytes, n / 2));
  expect_transform(ct_test_tmp_path("cli_trunc.onnx"), "", 3, "not a valid ONNX model");
  for (size_t i = 0; i < n; i += 3) bytes[i] = (char)(bytes[i] ^ 0x5a);
  ck_assert(ct_test_write_file(ct_test_tmp_path("cli_corrupt.onnx"), bytes, n));
  expect_transform(ct_test_tmp_path("cli_corrupt.onnx"), "", 3, "cli_corrupt.onnx");
  free(bytes);
  expect_transform(ct_test_tmp_path("cli_absent.onnx"), "", 3, "cannot read");
  /* bad --input-shapes: syntax, unknown input, wrong rank */
  expect_transform(good, "--input-shapes x=2x3", 2, "--input-shapes");
  expect_transform(good, "--input-shapes nope:2x3", 2, "\"nope\"");
  expect_transform(good, "--input-shapes x:2x3x1", 2, "rank 2");
  /* unsupported op: names the op, the node and the opset */
  b.nodes[0]->op_type = ob_str(&b, "NotAnOp");
  ck_assert(ob_write(&b, ct_test_tmp_path("cli_op.onnx")));
  expect_transform(ct_test_tmp_path("cli_op.onnx"), "", 3, "node \"relu\" (op NotAnOp, opset 13): unsupported op");
  /* missing initializer: the Add's second input names nothing */
  b.nodes[0]->op_type = ob_str(&b, "Relu");
  b.g.n_initializer = 0;
  ck_assert(ob_write(&b, ct_test_tmp_path("cli_undef.onnx")));
  expect_transform(ct_test_tmp_path("cli_undef.onnx"), "", 3, "node \"add\" (op Add): input 1 (\"bias\") is not defined");
  /* inconsistent shapes: 3x4 + 5x6 */
  ob_model c;
  ob_init(&c, 13);
  ob_input(&c, "a", T_FLOAT, 2, (int64_t[]){3, 4});
  ob_input(&c, "b", T_FLOAT, 2, (int64_t[]){5, 6});
  ob_node(&c, "Add", "bad_add", (const char *[]){"a", "b", NULL}, (const char *[]){"y", NULL});
  ob_output(&c, "y");
  ck_assert(ob_write(&c, ct_test_tmp_path("cli_shape.onnx")));
  expect_transform(ct_test_tmp_path("cli_shape.onnx"), "", 3, "node \"bad_add\"");
  ob_free(&c);
  /* missing external data file */
  add_external_bias(&b, "cli_no_such_file.bin");
  ck_assert(ob_write(&b, ct_test_tmp_path("cli_ext.onnx")));
  expect_transform(ct_test_tmp_path("cli_ext.onnx"), "", 3, "cli_no_such_file.bin");
  ob_free(&b);
}
END_TEST

/* A model whose bias lives in an external data file: transform reads it, and refuses (exit
 * 2, the file untouched, no output) an -o that is the file or whose weights file (OUT.h5) is. */
START_TEST(test_cli_transform_external_data_is_input) {
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 2, (int64_t[]){2, 3});
  ob_node(&b, "Add", "add", (const char *[]){"x", "bias", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  add_external_bias(&b, "cli_ext_w.h5");
  char model[1024], wfile[1024], stem[1024], out[4096];
  snprintf(model, sizeof model, "%s", ct_test_tmp_path("cli_ext_ok.onnx"));
  snprintf(wfile, sizeof wfile, "%s", ct_test_tmp_path("cli_ext_w.h5"));
  snprintf(stem, sizeof stem, "%s", ct_test_tmp_path("cli_ext_w"));
  ck_assert(ob_write(&b, model));
  const float w[3] = {1, 2, 3};
  ck_assert(ct_test_write_file(wfile, (const char *)w, sizeof w));
  int rc = ct_test_run_ctpu(out, sizeof out, "transform %s -o %s", model, ct_test_tmp_path("cli_ext_ok.top"));
  ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
  const char *dests[] = {wfile, stem};
  for (int i = 0; i < 2; i++) {
    rc = ct_test_run_ctpu(out, sizeof out, "transform %s -o %s", model, dests[i]);
    ck_assert_msg(rc == 2, "-o %s: exit %d, want 2: %s", dests[i], rc, out);
    size_t n;
    char *bytes = ct_test_read_file(wfile, &n);
    ck_assert_msg(bytes && n == sizeof w && memcmp(bytes, w, sizeof w) == 0, "-o %s changed %s", dests[i], wfile);
    free(bytes);
  }
  ck_assert(!ct_test_file_exists(stem));
  ob_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("onnx_cli");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_cli_transform_ok_and_help);
  tcase_add_test(tc, test_cli_transform_errors);
  tcase_add_test(tc, test_cli_transform_external_data_is_input);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
