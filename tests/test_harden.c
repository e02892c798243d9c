/* test_harden.c: bad input — checked size arithmetic, the memory budget, outputs all or nothing
 * (common/outset.h), HDF5 reading isolated in a child process (common/h5child.c) and the
 * command-line messages for bad inputs. Expected values are worked out by hand. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/h5io.h"
#include "common/limits.h"
#include "common/outset.h"
#include "isa/asm.h"
#include "isa/isa.h"
#include "tests/onnx_build.h"
#include "tests/testutil.h"

#include <hdf5.h>

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

START_TEST(test_checked_mul_add_detect_overflow) {
  int64_t r = 0;
  ck_assert(ct_mul_i64(3, 5, &r) && r == 15);
  ck_assert(ct_mul_i64(0, INT64_MAX, &r) && r == 0);
  ck_assert(!ct_mul_i64((int64_t)1 << 62, 2, &r));   /* 2^63 does not fit */
  ck_assert(ct_mul_i64((int64_t)1 << 31, (int64_t)1 << 31, &r) && r == (int64_t)1 << 62);
  ck_assert(!ct_mul_i64(-1, 2, &r));
  ck_assert(!ct_add_i64(INT64_MAX, 1, &r));
  ck_assert(ct_add_i64(INT64_MAX - 1, 1, &r) && r == INT64_MAX);
  size_t z = 0;
  ck_assert(!ct_mul_size(SIZE_MAX / 2 + 1, 2, &z));
  ck_assert(!ct_add_size(SIZE_MAX, 1, &z));
  /* dilated extent (k - 1) * d + 1: k = 3, d = 2 → 5; k = 2, d = 2^62 → 2^62 + 1; overflow at d = 2^63 - 1 */
  ck_assert(ct_kernel_extent(3, 2, &r) && r == 5);
  ck_assert(ct_kernel_extent(2, (int64_t)1 << 62, &r) && r == ((int64_t)1 << 62) + 1);
  ck_assert(!ct_kernel_extent(3, (int64_t)1 << 62, &r));
  ck_assert(!ct_kernel_extent(0, 1, &r));
}
END_TEST

START_TEST(test_shape_bytes_zero_dim_and_overflow) {
  int64_t b = -1, zero[3] = {(int64_t)1 << 62, 0, 4}, big[2] = {(int64_t)1 << 40, (int64_t)1 << 30};
  ck_assert(ct_shape_bytes(CT_F32, 3, zero, &b) && b == 0);   /* zero elements, no stride product */
  ck_assert(!ct_shape_bytes(CT_F32, 2, big, &b));              /* 2^70 elements */
  int64_t s[2] = {3, 5};
  ck_assert(ct_shape_bytes(CT_I16, 2, s, &b) && b == 30);
}
END_TEST

START_TEST(test_parse_bytes) {
  uint64_t v = 0;
  ck_assert(ct_parse_bytes("512M", &v) && v == (uint64_t)512 << 20);
  ck_assert(ct_parse_bytes("2g", &v) && v == (uint64_t)2 << 30);
  ck_assert(ct_parse_bytes("1KiB", &v) && v == 1024);
  ck_assert(ct_parse_bytes("100", &v) && v == 100);
  ck_assert(!ct_parse_bytes("0", &v));
  ck_assert(!ct_parse_bytes("-5M", &v));
  ck_assert(!ct_parse_bytes("12X", &v));
  ck_assert(!ct_parse_bytes("99999999999999999999T", &v));
}
END_TEST

START_TEST(test_budget_refuses_before_allocating) {
  uint64_t old = ct_mem_budget();
  ct_mem_budget_set((uint64_t)1 << 20);
  int64_t shape[2] = {1024, 1024}; /* 4 MiB of f32 */
  ct_tensor *t = (ct_tensor *)1;
  ct_diag d;
  ck_assert_int_eq(ct_tensor_alloc(&t, CT_F32, 2, shape, "w", NULL, &d), CT_ERR_LIMIT);
  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(d.msg, "tensor \"w\"") && strstr(d.msg, "1024x1024 f32 needs 4 MiB") &&
                strstr(d.msg, "budget of 1 MiB"), "%s", d.msg);
  ck_assert_ptr_null(ct_tensor_new(CT_F32, 2, shape, NULL));
  int64_t ok[2] = {256, 256}; /* 256 KiB */
  ck_assert_int_eq(ct_tensor_alloc(&t, CT_F32, 2, ok, "w", NULL, &d), CT_OK);
  ct_tensor_free(t);
  ct_mem_budget_set(old);
}
END_TEST

static bool dir_is_empty_of_temps(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -q '\\.ctpu-'", dir);
  return system(cmd) != 0;
}

START_TEST(test_outset_commit_abort_and_refusals) {
  const char *dir = ct_test_tmp_path("outset");
  mkdir(dir, 0700);
  char a[512], b[512], in[512];
  snprintf(a, sizeof a, "%s/a.txt", dir);
  snprintf(b, sizeof b, "%s/b.txt", dir);
  snprintf(in, sizeof in, "%s/in.txt", dir);
  ck_assert(ct_test_write_file(in, "input", 5));
  ct_outset o;
  ct_diag d;
  const char *ta, *tb;
  /* abort: nothing appears */
  ct_outset_init(&o, "test");
  ck_assert_int_eq(ct_outset_add(&o, a, &ta, &d), CT_OK);
  ck_assert(ct_test_write_file(ta, "A", 1));
  ct_outset_abort(&o);
  ck_assert(!ct_test_file_exists(a));
  ck_assert(dir_is_empty_of_temps(dir));
  /* commit: both appear, written one not-yet-existing output is skipped */
  ct_outset_init(&o, "test");
  ck_assert_int_eq(ct_outset_add(&o, a, &ta, &d), CT_OK);
  ck_assert_int_eq(ct_outset_add(&o, b, &tb, &d), CT_OK);
  ck_assert(ct_test_write_file(ta, "A", 1));
  ck_assert_int_eq(ct_outset_commit(&o, &d), CT_OK);
  ck_assert(ct_test_file_exists(a));
  ck_assert(!ct_test_file_exists(b));
  ck_assert(dir_is_empty_of_temps(dir));
  /* the output is an input (same inode, another spelling): refused */
  char in2[600];
  snprintf(in2, sizeof in2, "%s/./in.txt", dir);
  ct_outset_init(&o, "test");
  ck_assert_int_eq(ct_outset_input(&o, in, &d), CT_OK);
  ck_assert_int_eq(ct_outset_add(&o, in2, &ta, &d), CT_ERR_USAGE);
  ck_assert_msg(strstr(d.msg, "also an input"), "%s", d.msg);
  /* a directory, a missing directory, the same output twice */
  ck_assert_int_eq(ct_outset_add(&o, dir, &ta, &d), CT_ERR_USAGE);
  snprintf(in2, sizeof in2, "%s/no-such-dir/x", dir);
  ck_assert_int_eq(ct_outset_add(&o, in2, &ta, &d), CT_ERR_INPUT);
  ck_assert_int_eq(ct_outset_add(&o, a, &ta, &d), CT_OK);
  ck_assert_int_eq(ct_outset_add(&o, a, &ta, &d), CT_ERR_USAGE);
  ct_outset_abort(&o);
  ck_assert(dir_is_empty_of_temps(dir));
}
END_TEST

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

START_TEST(test_h5_child_round_trip_corrupt_and_cost) {
  const char *p = ct_test_tmp_path("child.h5");
  int64_t shape[2] = {2, 3};
  ct_tensor *t = ct_tensor_new(CT_I8, 2, shape, "x/y");
  for (int i = 0; i < 6; i++) ((int8_t *)t->data)[i] = (int8_t)(i * 7 - 20);
  double sc[1] = {0.5};
  int32_t zp[1] = {3};
  ck_assert(ct_tensor_set_quant(t, 1, 0, sc, zp));
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(p, &t, 1, &d), CT_OK);
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ck_assert_int_eq(ct_h5_read(p, &l, &d), CT_OK);
  ck_assert_int_eq(l.n, 1);
  ck_assert_str_eq(l.items[0]->name, "x/y");
  ck_assert_mem_eq(l.items[0]->data, t->data, 6);
  ck_assert(l.items[0]->n_scale == 1 && l.items[0]->scale[0] == 0.5 && l.items[0]->zero_point[0] == 3);
  ct_tensor *one = NULL;
  ck_assert_int_eq(ct_h5_read_one(p, "x/y", &one, &d), CT_OK);
  ck_assert_mem_eq(one->data, t->data, 6);
  ct_tensor_free(one);
  ck_assert_int_eq(ct_h5_read_one(p, "nope", &one, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "no dataset \"nope\""), "%s", d.msg);
  /* cost of the isolation: isolated vs in-process reads of the same small file */
  enum { N = 40 };
  double t0 = now_s();
  for (int i = 0; i < N; i++) ct_h5_read(p, &l, &d);
  double t1 = now_s();
  for (int i = 0; i < N; i++) ct_h5_read_direct(p, &l, &d);
  double t2 = now_s();
  printf("h5 child isolation: %.2f ms per file (isolated %.2f ms, in-process %.2f ms)\n",
         ((t1 - t0) - (t2 - t1)) * 1e3 / N, (t1 - t0) * 1e3 / N, (t2 - t1) * 1e3 / N);
  ck_assert_int_eq(l.n, 1 + 2 * N);
  ct_tensor_list_free(&l);
  /* a truncated file (HDF5 signature, broken rest): an error, never a crash */
  size_t n;
  char *bytes = ct_test_read_file(p, &n);
  const char *q = ct_test_tmp_path("trunc.h5");
  ck_assert(ct_test_write_file(q, bytes, n / 2));
  free(bytes);
  ct_tensor_list_init(&l);
  ck_assert_int_eq(ct_h5_read(q, &l, &d), CT_ERR_INPUT);
  ck_assert_int_eq(l.n, 0);
  ct_tensor_free(t);
}
END_TEST

START_TEST(test_h5_budget_names_dataset) {
  const char *p = ct_test_tmp_path("big.h5");
  int64_t shape[1] = {4096};
  ct_tensor *t = ct_tensor_new(CT_F32, 1, shape, "big");
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(p, &t, 1, &d), CT_OK);
  ct_tensor_free(t);
  char out[2048];
  int rc = ct_test_run_ctpu(out, sizeof out, "compare %s %s --max-memory 1K", p, p);
  ck_assert_int_eq(rc, 4);
  ck_assert_msg(strstr(out, "dataset \"big\": 4096 f32 needs 16 KiB, over the memory budget of 1 KiB"), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --max-memory 1Q", p, p), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --max-memory 1M", p, p), 0);
}
END_TEST


/* Runs ctpu with args, asserts exit code want and that the message contains each of the
 * NULL-terminated fragments. */
static void expect(int want, const char *args, ...) {
  char out[4096];
  int rc = ct_test_run_ctpu(out, sizeof out, "%s", args);
  ck_assert_msg(rc == want, "ctpu %s: exit %d, want %d: %s", args, rc, want, out);
  va_list ap;
  va_start(ap, args);
  for (const char *f; (f = va_arg(ap, const char *));) ck_assert_msg(strstr(out, f), "ctpu %s: no \"%s\" in: %s", args, f, out);
  va_end(ap);
}

/* x (1x3x4x4 f32) -> Relu -> y, opset 13; writes path. */
static void relu_model(const char *path, int64_t opset, bool with_output) {
  ob_model b;
  ob_init(&b, opset);
  int64_t dims[4] = {1, 3, 4, 4};
  ob_input(&b, "x", T_FLOAT, 4, dims);
  ob_node(&b, "Relu", "r", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
  if (with_output) ob_output(&b, "y");
  ck_assert(ob_write(&b, path));
  ob_free(&b);
}

START_TEST(test_msg_onnx_graph_errors) {
  char args[1024];
  const char *m = ct_test_tmp_path("cycle.onnx"), *o = ct_test_tmp_path("cycle.top");
  ob_model b;
  ob_init(&b, 13);
  int64_t dims[2] = {2, 2};
  ob_input(&b, "x", T_FLOAT, 2, dims);
  ob_node(&b, "Add", "a", (const char *[]){"x", "q", NULL}, (const char *[]){"p", NULL});
  ob_node(&b, "Relu", "r", (const char *[]){"p", NULL}, (const char *[]){"q", NULL});
  ob_output(&b, "q");
  ck_assert(ob_write(&b, m));
  ob_free(&b);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  expect(3, args, "cycle", NULL);
  /* DequantizeLinear's type constraint: x and x_zero_point are integers (here f32) */
  m = ct_test_tmp_path("dql.onnx");
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 2, dims);
  float sc = 0.5f, zp = 1e18f;
  ob_init_f32(&b, "s", 0, NULL, &sc);
  ob_init_f32(&b, "z", 0, NULL, &zp);
  ob_node(&b, "DequantizeLinear", "dq", (const char *[]){"x", "s", "z", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ck_assert(ob_write(&b, m));
  ob_free(&b);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  expect(3, args, "node \"dq\"", "must be an integer type", NULL);
  m = ct_test_tmp_path("opset.onnx");
  relu_model(m, (int64_t)1 << 62, true);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  expect(3, args, "opset", "4611686018427387904", NULL);
  m = ct_test_tmp_path("noout.onnx");
  relu_model(m, 13, false);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  expect(3, args, "no outputs", NULL);
  ck_assert(!ct_test_file_exists(o));
}
END_TEST

/* One node `op` over x (f32 2x2) and an initializer "bad" of the wrong type at operand `at`
 * (other operands as given): transform must fail naming the node, the operand and the type. */
static void type_case(const char *op, const char *const *in, int at, int bad_elem, const char *want_type) {
  char args[1024], want_in[32];
  const char *m = ct_test_tmp_path("tc.onnx"), *o = ct_test_tmp_path("tc.top");
  ob_model b;
  ob_init(&b, 18);
  int64_t dims[2] = {2, 2};
  ob_input(&b, "x", T_FLOAT, 2, dims);
  Onnx__TensorProto *t = ob_tensor(&b, "bad", bad_elem, 1, (int64_t[]){1});
  ob_raw(&b, t, (uint8_t[8]){0}, (size_t)(bad_elem == T_FLOAT ? 4 : 1));
  ob_add_init(&b, t);
  ob_node(&b, op, "n", in, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ck_assert(ob_write(&b, m));
  ob_free(&b);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  snprintf(want_in, sizeof want_in, "input %d (\"bad\")", at);
  expect(3, args, "node \"n\"", want_in, want_type, "type constraint", NULL);
  ck_assert(!ct_test_file_exists(o));
}

/* Fuzzer find (fuzz_onnx, UBSan): an int attribute given as a huge float (Hardmax axis
 * -1.05e34) was converted to int64 out of range; now it saturates and the axis is refused. */
START_TEST(test_msg_float_attr_out_of_range) {
  char args[1024];
  const char *m = ct_test_tmp_path("hardmax_axis.onnx"), *o = ct_test_tmp_path("hardmax_axis.top");
  ob_model b;
  ob_init(&b, 13);
  int64_t dims[3] = {3, 4, 5};
  ob_input(&b, "x", T_FLOAT, 3, dims);
  Onnx__NodeProto *n = ob_node(&b, "Hardmax", "hm", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
  ob_attr_f(&b, n, "axis", -1.05164e34f);
  ob_output(&b, "y");
  ck_assert(ob_write(&b, m));
  ob_free(&b);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  expect(3, args, "node \"hm\"", "axis", NULL);
  ck_assert(!ct_test_file_exists(o));
}
END_TEST

/* ir/op_types.def enforced at import: float indices, a float zero point, a u8 condition, a
 * bool Conv input, float Reshape shape. */
START_TEST(test_msg_onnx_type_constraints) {
  type_case("Gather", (const char *[]){"x", "bad", NULL}, 1, T_FLOAT, "has type f32");
  type_case("QuantizeLinear", (const char *[]){"x", "x", "bad", NULL}, 2, T_FLOAT, "has type f32");
  type_case("Where", (const char *[]){"bad", "x", "x", NULL}, 0, ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, "has type u8");
  type_case("Reshape", (const char *[]){"x", "bad", NULL}, 1, T_FLOAT, "has type f32");
  type_case("Add", (const char *[]){"x", "bad", NULL}, 1, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, "has type i1");
}
END_TEST

START_TEST(test_msg_opt_options) {
  char args[1024];
  const char *m = ct_test_tmp_path("relu.onnx"), *o = ct_test_tmp_path("relu.top");
  relu_model(m, 13, true);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  expect(0, args, NULL);
  snprintf(args, sizeof args, "opt %s --dump-after nope", o);
  expect(2, args, "--dump-after", "nope", NULL);
  snprintf(args, sizeof args, "opt %s --passes ,", o);
  expect(2, args, "empty pass name", NULL);
  /* inputs: an empty file and an unknown one say which formats are accepted */
  const char *e = ct_test_tmp_path("empty.bin"), *y = ct_test_tmp_path("y.h5");
  ck_assert(ct_test_write_file(e, "", 0));
  snprintf(args, sizeof args, "infer %s --input %s -o %s", o, e, y);
  expect(3, args, "empty.bin", "HDF5", ".pb", "JPEG", NULL);
  ck_assert(ct_test_write_file(e, "hello world, not a tensor", 25));
  expect(3, args, "HDF5", ".pb", "JPEG", NULL);
  ck_assert(!ct_test_file_exists(y));
}
END_TEST

START_TEST(test_msg_image_without_preprocessing) {
  ct_test_require_shared("test_harden");
  char args[2048];
  const char *m = ct_test_tmp_path("relu_img.onnx"), *o = ct_test_tmp_path("relu_img.top"), *y = ct_test_tmp_path("yi.h5");
  const char *img = ct_test_shared_path("images/imagenet-sample/%s", "n01440764_tench.JPEG");
  if (!ct_test_file_exists(img)) return;
  relu_model(m, 13, true);
  snprintf(args, sizeof args, "transform %s -o %s", m, o);
  expect(0, args, NULL);
  snprintf(args, sizeof args, "infer %s --input %s -o %s", o, img, y);
  expect(3, args, "image", "preprocess", NULL);
  ck_assert(!ct_test_file_exists(y));
}
END_TEST

START_TEST(test_msg_chip_json) {
  char args[1024];
  const char *c = ct_test_tmp_path("chip.json");
  static const char *const bad[][2] = {
      {"{\"mxu\": {\"rows\": 16, \"rows\": 8}}", "duplicate key"},
      {"{\"mxu\": [1, 2]}", "mxu: expected an object"},
      {"{\"mxu\": {\"rows\": {\"x\": 1}}}", "mxu.rows: expected an integer"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert(ct_test_write_file(c, bad[i][0], strlen(bad[i][0])));
    snprintf(args, sizeof args, "chip --dump --chip %s", c);
    expect(3, args, bad[i][1], NULL);
  }
  char deep[4096];
  int k = 0;
  for (int i = 0; i < 1500; i++) deep[k++] = '[';
  deep[k] = '\0';
  ck_assert(ct_test_write_file(c, deep, (size_t)k));
  snprintf(args, sizeof args, "chip --dump --chip %s", c);
  expect(3, args, "nested deeper than", NULL);
}
END_TEST

/* An HDF5 file with a float dataset "a", a string dataset "s" and a null-dataspace dataset
 * "n" (raw libhdf5, as other tools write them). */
static void odd_h5(const char *path, bool with_null) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dim = 3;
  float v[3] = {1, 2, 3};
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t ds = H5Dcreate2(f, "a", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(ds);
  H5Sclose(sp);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, 6);
  sp = H5Screate(H5S_SCALAR);
  ds = H5Dcreate2(f, "s", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, "hello");
  H5Dclose(ds);
  H5Sclose(sp);
  H5Tclose(st);
  if (with_null) {
    sp = H5Screate(H5S_NULL);
    ds = H5Dcreate2(f, "n", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(ds);
    H5Sclose(sp);
  }
  H5Fclose(f);
}

START_TEST(test_msg_compare_odd_datasets) {
  char args[1024];
  const char *p = ct_test_tmp_path("odd.h5"), *q = ct_test_tmp_path("oddnull.h5");
  odd_h5(p, false);
  odd_h5(q, true);
  snprintf(args, sizeof args, "compare %s %s", p, p);
  expect(3, args, "dataset \"s\"", "string", NULL);
  snprintf(args, sizeof args, "compare %s %s --only a", p, p);
  expect(0, args, NULL);
  snprintf(args, sizeof args, "compare %s %s --only a", q, q);
  expect(0, args, NULL);
  snprintf(args, sizeof args, "compare %s %s --only n", q, q);
  expect(3, args, "dataset \"n\"", "null dataspace", NULL);
  /* --exact: f32 [1 2 3] vs i32 [1 2 3] are equal values, not equal tensors */
  const char *f = ct_test_tmp_path("f.h5"), *i = ct_test_tmp_path("i.h5");
  int64_t n = 3;
  ct_tensor *tf = ct_tensor_new(CT_F32, 1, &n, "a"), *ti = ct_tensor_new(CT_I32, 1, &n, "a");
  for (int k = 0; k < 3; k++) ((float *)tf->data)[k] = (float)(k + 1), ((int32_t *)ti->data)[k] = k + 1;
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(f, &tf, 1, &d), CT_OK);
  ck_assert_int_eq(ct_h5_write(i, &ti, 1, &d), CT_OK);
  ct_tensor_free(tf);
  ct_tensor_free(ti);
  snprintf(args, sizeof args, "compare %s %s --exact", f, i);
  char out[4096];
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "%s", args), 1);
  ck_assert_msg(strstr(out, " dtype ") && !strstr(out, " equal "), "%s", out);
}
END_TEST

/* Found by fuzz_asm: a NaN (or huge) F32 field read as int64 was undefined behaviour (UBSan
 * "nan is outside the range of representable values"); it reads as 0 / saturates now, and
 * the disassembler prints the bits. */
START_TEST(test_fuzz_isa_f32_field_nan) {
  int found = 0;
  for (int op = 0; op < CT_ISA_OP_COUNT; op++) {
    const ct_isa_field *f;
    int nf = ct_isa_fields((ct_isa_op)op, &f);
    for (int i = 0; i < nf; i++) {
      if (f[i].kind != CT_ISA_K_F32) continue;
      ct_insn insn;
      memset(&insn, 0, sizeof insn);
      insn.op = (ct_isa_op)op;
      float v = NAN;
      memcpy((char *)&insn + f[i].offset, &v, 4);
      ck_assert_int_eq(ct_isa_field_get(&insn, &f[i]), 0);
      v = 1e30f;
      memcpy((char *)&insn + f[i].offset, &v, 4);
      ck_assert(ct_isa_field_get(&insn, &f[i]) == INT64_MAX);
      v = -2.75f;
      memcpy((char *)&insn + f[i].offset, &v, 4);
      ck_assert_int_eq(ct_isa_field_get(&insn, &f[i]), -2);
      char buf[1024];
      ck_assert_ptr_nonnull(ct_disasm_insn(&insn, buf, sizeof buf));
      found++;
    }
  }
  ck_assert_int_gt(found, 0);
}
END_TEST

/* Found by fuzz_ctpu (UBSan): a program whose shape fields are huge overflowed the dense strides
 * of the operand regions (int64 n·c·h·w) and could wrap a footprint to a small size that passes
 * the LMEM bounds check. Every opcode with every unsigned field at its largest encodable value
 * (dtypes int8) must be refused by ct_isa_check, with no arithmetic overflow on the way. */
START_TEST(test_fuzz_isa_huge_shapes) {
  ct_chip chip;
  ct_chip_default(&chip);
  int checked = 0;
  for (int op = 0; op < CT_ISA_OP_COUNT; op++) {
    const ct_isa_field *f;
    int nf = ct_isa_fields((ct_isa_op)op, &f), big = 0;
    ct_insn insn;
    memset(&insn, 0, sizeof insn);
    insn.op = (ct_isa_op)op;
    for (int i = 0; i < nf; i++) {
      if (f[i].kind == CT_ISA_K_DT) ct_isa_field_set_bits(&insn, &f[i], CT_I8);
      if (f[i].kind != CT_ISA_K_U) continue;
      ct_isa_field_set_bits(&insn, &f[i], ~UINT64_C(0));
      big++;
    }
    ct_isa_access acc[CT_ISA_MAX_ACCESS];
    int na = ct_isa_accesses(&insn, acc), huge = 0;
    if (!big || na == 0) continue; /* NOP, SYNC, END touch no memory */
    for (int k = 0; k < na; k++) huge += acc[k].bytes > (uint64_t)chip.gmem_bytes;
    ck_assert_msg(huge > 0, "%s: no footprint beyond GMEM", ct_isa_op_name((ct_isa_op)op));
    ct_diag d;
    ck_assert_msg(ct_isa_check(&insn, &chip, &d) != CT_OK, "%s accepted", ct_isa_op_name((ct_isa_op)op));
    checked++;
  }
  ck_assert_int_gt(checked, 5);
}
END_TEST

Suite *harden_suite(void);
Suite *harden_suite(void) {
  Suite *s = suite_create("harden");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_checked_mul_add_detect_overflow);
  tcase_add_test(tc, test_shape_bytes_zero_dim_and_overflow);
  tcase_add_test(tc, test_parse_bytes);
  tcase_add_test(tc, test_budget_refuses_before_allocating);
  tcase_add_test(tc, test_outset_commit_abort_and_refusals);
  tcase_add_test(tc, test_h5_child_round_trip_corrupt_and_cost);
  tcase_add_test(tc, test_h5_budget_names_dataset);
  tcase_add_test(tc, test_msg_onnx_graph_errors);
  tcase_add_test(tc, test_msg_onnx_type_constraints);
  tcase_add_test(tc, test_msg_float_attr_out_of_range);
  tcase_add_test(tc, test_msg_opt_options);
  tcase_add_test(tc, test_msg_image_without_preprocessing);
  tcase_add_test(tc, test_msg_chip_json);
  tcase_add_test(tc, test_msg_compare_odd_datasets);
  tcase_add_test(tc, test_fuzz_isa_f32_field_nan);
  tcase_add_test(tc, test_fuzz_isa_huge_shapes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(harden_suite()); }
