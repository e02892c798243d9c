/* test_onnx_tensor.c: the ONNX front end's TensorProto reading (raw, typed and external
 * storage forms, errors, .pb files) and its option parsing, on protos built in the test
 * (tests/onnx_build.c). Model import: test_onnx.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define T_INT64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

/* ---- TensorProto storage forms ---- */

static ct_tensor *from_proto(const Onnx__TensorProto *tp, const char *dir, ct_diag *d) {
  ct_tensor *t = NULL;
  ct_status st = ct_onnx_tensor_from_proto(tp, dir, "t.onnx", &t, d);
  if (st) ck_assert_ptr_null(t);
  return t;
}

START_TEST(test_raw_typed_external_give_same_tensor) {
  ob_model b;
  ob_init(&b, 13);
  const float v[6] = {1.5f, -2.0f, 0.0f, 3.25f, -0.125f, 1e30f};
  int64_t dims[2] = {2, 3};
  Onnx__TensorProto *raw = ob_tensor(&b, "w", T_FLOAT, 2, dims);
  ob_raw(&b, raw, v, sizeof v);
  Onnx__TensorProto *typed = ob_tensor(&b, "w", T_FLOAT, 2, dims);
  typed->n_float_data = 6;
  typed->float_data = (float *)v;
  /* external: 8 junk bytes, then the data, at offset 8 of "w.bin" in the model folder */
  uint8_t file[8 + sizeof v];
  memset(file, 0xAB, 8);
  memcpy(file + 8, v, sizeof v);
  ck_assert(ct_test_write_file(ct_test_tmp_path("w.bin"), file, sizeof file));
  Onnx__TensorProto *ext = ob_tensor(&b, "w", T_FLOAT, 2, dims);
  ext->has_data_location = 1;
  ext->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  const char *kv[3][2] = {{"location", "w.bin"}, {"offset", "8"}, {"length", "24"}};
  Onnx__StringStringEntryProto *e[3];
  for (int i = 0; i < 3; i++) {
    e[i] = ob_alloc(&b, sizeof *e[i]);
    onnx__string_string_entry_proto__init(e[i]);
    e[i]->key = ob_str(&b, kv[i][0]);
    e[i]->value = ob_str(&b, kv[i][1]);
  }
  ext->n_external_data = 3;
  ext->external_data = e;
  ct_diag d;
  ct_tensor *t[3] = {from_proto(raw, NULL, &d), from_proto(typed, NULL, &d), from_proto(ext, ct_test_tmpdir(), &d)};
  for (int i = 0; i < 3; i++) {
    ck_assert_msg(t[i] != NULL, "form %d: %s", i, d.msg);
    ck_assert_int_eq(t[i]->dtype, CT_F32);
    ck_assert_int_eq(t[i]->ndim, 2);
    ck_assert_int_eq(t[i]->shape[0], 2);
    ck_assert_int_eq(t[i]->shape[1], 3);
    ck_assert_str_eq(t[i]->name, "w");
    ck_assert_mem_eq(t[i]->data, v, sizeof v);
    ct_tensor_free(t[i]);
  }
  /* a length that disagrees with the dims, an offset past the end, a missing file, ".." */
  e[2]->value = ob_str(&b, "20");
  ck_assert_ptr_null(from_proto(ext, ct_test_tmpdir(), &d));
  ck_assert_ptr_nonnull(strstr(d.msg, "length 20"));
  e[2]->value = ob_str(&b, "24");
  e[1]->value = ob_str(&b, "16");
  ck_assert_ptr_null(from_proto(ext, ct_test_tmpdir(), &d));
  ck_assert_ptr_nonnull(strstr(d.msg, "shorter"));
  e[0]->value = ob_str(&b, "nope.bin");
  ck_assert_ptr_null(from_proto(ext, ct_test_tmpdir(), &d));
  ck_assert_int_eq(d.code, CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "nope.bin"));
  e[0]->value = ob_str(&b, "../w.bin");
  ck_assert_ptr_null(from_proto(ext, ct_test_tmpdir(), &d));
  ck_assert_ptr_nonnull(strstr(d.msg, "outside the model folder"));
  ob_free(&b);
}
END_TEST

/* Converts tp (3 int32_data entries) read as data_type dt; checks the bytes equal want[nbytes]. */
static void check_int32_field(Onnx__TensorProto *tp, int dt, int32_t *vals, const void *want, size_t nbytes) {
  ct_diag d;
  tp->data_type = dt;
  tp->int32_data = vals;
  ct_tensor *t = from_proto(tp, NULL, &d);
  ck_assert_msg(t != NULL, "%s", d.msg);
  ck_assert_mem_eq(t->data, want, nbytes);
  ct_tensor_free(t);
}

START_TEST(test_int32_data_holds_small_types_one_per_entry) {
  ob_model b;
  ob_init(&b, 13);
  int64_t n = 3;
  int32_t vals[3] = {-128, 127, -1};
  Onnx__TensorProto *tp = ob_tensor(&b, "a", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 1, &n);
  tp->n_int32_data = 3;
  const int8_t want8[3] = {-128, 127, -1};
  check_int32_field(tp, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, vals, want8, 3);
  /* float16 as uint16 bit patterns: 0x3c00 = 1.0, 0xc000 = -2.0, 0x3555 ≈ 0.333 */
  int32_t hv[3] = {0x3c00, 0xc000, 0x3555};
  tp->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
  tp->int32_data = hv;
  ct_diag d;
  ct_tensor *t = from_proto(tp, NULL, &d);
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(t->dtype, CT_F16);
  ck_assert_float_eq(ct_f16_to_f32(((uint16_t *)t->data)[0]), 1.0f);
  ck_assert_float_eq(ct_f16_to_f32(((uint16_t *)t->data)[1]), -2.0f);
  ck_assert_uint_eq(((uint16_t *)t->data)[2], 0x3555);
  ct_tensor_free(t);
  /* bool, uint16 */
  int32_t bv[3] = {1, 0, 1};
  const uint8_t wantb[3] = {1, 0, 1};
  check_int32_field(tp, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, bv, wantb, 3);
  int32_t uv[3] = {65535, 0, 1000};
  const uint16_t wantu[3] = {65535, 0, 1000};
  check_int32_field(tp, ONNX__TENSOR_PROTO__DATA_TYPE__UINT16, uv, wantu, 6);
  ob_free(&b);
}
END_TEST

START_TEST(test_int64_double_uint64_fields) {
  ob_model b;
  ob_init(&b, 13);
  int64_t n = 2;
  Onnx__TensorProto *tp = ob_tensor(&b, "a", T_INT64, 1, &n);
  int64_t iv[2] = {INT64_MIN, 42};
  tp->n_int64_data = 2;
  tp->int64_data = iv;
  ct_diag d;
  ct_tensor *t = from_proto(tp, NULL, &d);
  ck_assert_mem_eq(t->data, iv, sizeof iv);
  ct_tensor_free(t);
  Onnx__TensorProto *dp = ob_tensor(&b, "b", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1, &n);
  double dv[2] = {0.1, -1e300};
  dp->n_double_data = 2;
  dp->double_data = dv;
  t = from_proto(dp, NULL, &d);
  ck_assert_mem_eq(t->data, dv, sizeof dv);
  ct_tensor_free(t);
  Onnx__TensorProto *up = ob_tensor(&b, "c", ONNX__TENSOR_PROTO__DATA_TYPE__UINT32, 1, &n);
  uint64_t uv[2] = {4294967295u, 7};
  up->n_uint64_data = 2;
  up->uint64_data = uv;
  t = from_proto(up, NULL, &d);
  const uint32_t want[2] = {4294967295u, 7};
  ck_assert_int_eq(t->dtype, CT_U32);
  ck_assert_mem_eq(t->data, want, sizeof want);
  ct_tensor_free(t);
  ob_free(&b);
}
END_TEST

START_TEST(test_tensor_errors) {
  ob_model b;
  ob_init(&b, 13);
  int64_t n = 2;
  ct_diag d;
  Onnx__TensorProto *sp = ob_tensor(&b, "s", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, 1, &n);
  ck_assert_ptr_null(from_proto(sp, NULL, &d));
  ck_assert_int_eq(d.code, CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "unsupported tensor type"));
  ck_assert_ptr_nonnull(strstr(d.msg, "\"s\""));
  sp->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64;
  ck_assert_ptr_null(from_proto(sp, NULL, &d));
  ck_assert_ptr_nonnull(strstr(d.msg, "unsupported tensor type"));
  Onnx__TensorProto *fp = ob_tensor(&b, "f", T_FLOAT, 1, &n);
  float one = 1;
  ob_raw(&b, fp, &one, 4);
  ck_assert_ptr_null(from_proto(fp, NULL, &d));
  ck_assert_ptr_nonnull(strstr(d.msg, "raw_data has 4 bytes, dims need 8"));
  fp->has_raw_data = 0;
  fp->n_float_data = 1;
  fp->float_data = &one;
  ck_assert_ptr_null(from_proto(fp, NULL, &d));
  ck_assert_ptr_nonnull(strstr(d.msg, "1 elements stored, dims say 2"));
  int64_t neg = -3;
  Onnx__TensorProto *np = ob_tensor(&b, "n", T_FLOAT, 1, &neg);
  ck_assert_ptr_null(from_proto(np, NULL, &d));
  ck_assert_ptr_nonnull(strstr(d.msg, "negative"));
  ob_free(&b);
}
END_TEST

START_TEST(test_read_tensor_pb_file_and_corrupt) {
  ob_model b;
  ob_init(&b, 13);
  int64_t dims[3] = {1, 2, 2};
  const float v[4] = {1, 2, 3, 4};
  Onnx__TensorProto *tp = ob_tensor(&b, "input_x", T_FLOAT, 3, dims);
  ob_raw(&b, tp, v, sizeof v);
  const char *path = ct_test_tmp_path("in0.pb");
  ck_assert(ob_write_tensor(tp, path));
  ct_tensor *t = NULL;
  ct_diag d;
  ck_assert_int_eq(ct_onnx_read_tensor_pb(path, &t, &d), CT_OK);
  ck_assert_str_eq(t->name, "input_x");
  ck_assert_int_eq(t->ndim, 3);
  ck_assert_mem_eq(t->data, v, sizeof v);
  ct_tensor_free(t);
  ck_assert(ct_test_write_file(ct_test_tmp_path("bad.pb"), "\xff\xff\xff\xff\xff", 5));
  ck_assert_int_eq(ct_onnx_read_tensor_pb(ct_test_tmp_path("bad.pb"), &t, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "bad.pb"));
  ck_assert_int_eq(ct_onnx_read_tensor_pb(ct_test_tmp_path("missing.pb"), &t, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "cannot read"));
  ob_free(&b);
}
END_TEST

/* ---- option parsing ---- */

START_TEST(test_parse_input_shapes) {
  ct_onnx_options o = {0};
  ct_diag d;
  ck_assert_int_eq(ct_onnx_parse_input_shapes("images:1x3x640x640,t:scalar,a::b:7", &o, &d), CT_OK);
  ck_assert_int_eq(o.n_overrides, 3);
  ck_assert_str_eq(o.overrides[0].name, "images");
  ck_assert_int_eq(o.overrides[0].ndim, 4);
  ck_assert_int_eq(o.overrides[0].dims[2], 640);
  ck_assert_int_eq(o.overrides[1].ndim, 0);
  ck_assert_str_eq(o.overrides[2].name, "a::b");
  ck_assert_int_eq(o.overrides[2].dims[0], 7);
  const char *bad[] = {"x", ":1x2", "x:1xx2", "x:1x", "x:-1", "x:1x2y", "x:1,x:2", "x:1x1x1x1x1x1x1x1x1", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ct_onnx_options p = {0};
    ck_assert_msg(ct_onnx_parse_input_shapes(bad[i], &p, &d) == CT_ERR_USAGE, "accepted \"%s\"", bad[i]);
    ck_assert_ptr_nonnull(strstr(d.msg, "--input-shapes"));
  }
  double v[4];
  int n;
  ck_assert_int_eq(ct_onnx_parse_floats("--mean", "123.675,116.28,1e2", v, 4, &n, &d), CT_OK);
  ck_assert_int_eq(n, 3);
  ck_assert_double_eq(v[1], 116.28);
  ck_assert_int_eq(ct_onnx_parse_floats("--mean", "1,,2", v, 4, &n, &d), CT_ERR_USAGE);
  ck_assert_int_eq(ct_onnx_parse_floats("--mean", "1,2,3,4,5", v, 4, &n, &d), CT_ERR_USAGE);
  ck_assert_int_eq(ct_onnx_parse_floats("--scale", "nan", v, 4, &n, &d), CT_ERR_USAGE);
}
END_TEST

static Suite *onnx_tensor_suite(void) {
  Suite *s = suite_create("onnx_tensor");
  TCase *tc = tcase_create("tensor");
  tcase_add_test(tc, test_raw_typed_external_give_same_tensor);
  tcase_add_test(tc, test_int32_data_holds_small_types_one_per_entry);
  tcase_add_test(tc, test_int64_double_uint64_fields);
  tcase_add_test(tc, test_tensor_errors);
  tcase_add_test(tc, test_read_tensor_pb_file_and_corrupt);
  tcase_add_test(tc, test_parse_input_shapes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(onnx_tensor_suite()); }
