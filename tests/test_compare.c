/* test_compare.c: io/compare.h and `ctpu compare` — metrics against values worked
 * out by hand (sums written out below), verdicts and tolerances, NaN/zero edge cases, and
 * the command's table, summary line and exit codes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "onnx/onnx.pb-c.h"
#include "io/compare.h"
#include "tests/testutil.h"

static ct_tensor *vec(ct_dtype dt, const char *name, int n, const double *v) {
  int64_t shape[1] = {n};
  ct_tensor *t = ct_tensor_new(dt, 1, shape, name);
  for (int i = 0; i < n; i++) ct_tensor_set_f64(t, i, v[i]);
  return t;
}

#define VEC(dt, name, ...) vec(dt, name, sizeof((double[]){__VA_ARGS__}) / sizeof(double), (double[]){__VA_ARGS__})

START_TEST(test_metrics_by_hand) {
  /* a = [1,2,3], b = [1,2,4]: Σab = 17, Σa² = 14, Σb² = 21, Σ(a−b)² = 1,
   * (a+b)/2 = [1,2,3.5] → Σ = 17.25; cos = 17/√294 = 0.991460, euclid = 1 − 1/√17.25 = 0.759228,
   * SQNR = 10·log10(14) = 11.461280 dB, max |a−b| = 1 at index 2 */
  ct_tensor *a = VEC(CT_F32, "a", 1, 2, 3), *b = VEC(CT_F32, "b", 1, 2, 4);
  ct_compare_metrics m;
  ck_assert_int_eq(ct_compare_tensor(a, b, &m), CT_OK);
  ck_assert_int_eq(m.n, 3);
  ck_assert_int_eq(m.n_diff, 1);
  ck_assert_int_eq(m.first_diff, 2);
  ck_assert_double_eq_tol(m.cosine, 0.991460, 1e-6);
  ck_assert_double_eq_tol(m.euclid, 0.759228, 1e-6);
  ck_assert_double_eq_tol(m.sqnr_db, 11.461280, 1e-6);
  ck_assert_double_eq(m.max_abs, 1.0);
  ck_assert(!m.equal && !m.close && !m.bitwise);
  ct_compare_tol tol = CT_COMPARE_TOL_DEFAULT;
  ck_assert_int_eq(ct_compare_judge(&m, &tol), CT_CMP_DIFFERENT); /* euclid 0.76 < 0.90 */
  tol.euc = 0.75;
  ck_assert_int_eq(ct_compare_judge(&m, &tol), CT_CMP_SIMILAR);
  ct_tensor_free(a);
  ct_tensor_free(b);
}
END_TEST

START_TEST(test_similar_and_close) {
  /* a = [1,2,3,4], b = [1.1,2,3,4]: Σab = 30.1, Σa² = 30, Σb² = 30.21 → cos = 30.1/√906.3 = 0.999840;
   * ‖a−b‖ = 0.1, Σ((a+b)/2)² = 30.1025 → euclid = 1 − 0.1/5.486574 = 0.981774; 0.1 > 1e-3·1: not close */
  ct_tensor *a = VEC(CT_F64, "a", 1, 2, 3, 4), *b = VEC(CT_F64, "b", 1.1, 2, 3, 4);
  ct_compare_metrics m;
  ct_compare_tensor(a, b, &m);
  ck_assert_double_eq_tol(m.cosine, 0.999840, 1e-6);
  ck_assert_double_eq_tol(m.euclid, 0.981774, 1e-6);
  ct_compare_tol tol = CT_COMPARE_TOL_DEFAULT;
  ck_assert_int_eq(ct_compare_judge(&m, &tol), CT_CMP_SIMILAR);
  ck_assert(ct_compare_passes(CT_CMP_SIMILAR, &m, &tol));
  ct_tensor_free(a);
  ct_tensor_free(b);
  /* |1000.5 − 1000| = 0.5 ≤ 1e-7 + 1e-3·1000 = 1.0000001: close */
  a = VEC(CT_F64, "a", 1000, 1), b = VEC(CT_F64, "b", 1000.5, 1);
  ct_compare_tensor(a, b, &m);
  ck_assert(m.close);
  ck_assert_int_eq(ct_compare_judge(&m, &tol), CT_CMP_CLOSE);
  ct_tensor_free(a);
  ct_tensor_free(b);
}
END_TEST

START_TEST(test_equal_bitwise_and_exact) {
  ct_tensor *a = VEC(CT_I8, "a", -128, 0, 127), *b = VEC(CT_I8, "b", -128, 0, 127), *c = VEC(CT_I32, "c", -128, 0, 127);
  ct_compare_metrics m;
  ct_compare_tol exact = {0.99, 0.9, true}, dflt = CT_COMPARE_TOL_DEFAULT;
  ct_compare_tensor(a, b, &m);
  ck_assert(m.equal && m.bitwise);
  ck_assert(isinf(m.sqnr_db) && m.sqnr_db > 0);
  ck_assert_double_eq(m.cosine, 1.0);
  ck_assert(ct_compare_passes(ct_compare_judge(&m, &exact), &m, &exact));
  ct_compare_tensor(a, c, &m); /* same values, other dtype */
  ck_assert(m.equal && !m.bitwise);
  ck_assert(!ct_compare_passes(ct_compare_judge(&m, &exact), &m, &exact));
  ck_assert(ct_compare_passes(ct_compare_judge(&m, &dflt), &m, &dflt));
  ct_tensor_free(a);
  ct_tensor_free(b);
  ct_tensor_free(c);
}
END_TEST

START_TEST(test_edge_cases) {
  ct_compare_metrics m;
  ct_tensor *z = VEC(CT_F32, "z", 0, 0), *z2 = VEC(CT_F32, "z2", 0, 0), *o = VEC(CT_F32, "o", 0, 1);
  ct_compare_tensor(z, z2, &m);
  ck_assert_double_eq(m.cosine, 1.0); /* both all zero */
  ct_compare_tensor(z, o, &m);
  ck_assert_double_eq(m.cosine, 0.0); /* one all zero */
  ck_assert(isinf(m.sqnr_db) && m.sqnr_db < 0);
  ct_tensor *n1 = VEC(CT_F32, "n1", NAN, 1), *n2 = VEC(CT_F32, "n2", NAN, 1), *n3 = VEC(CT_F32, "n3", 2, 1);
  ct_compare_tensor(n1, n2, &m);
  ck_assert(m.equal);
  ct_compare_tensor(n1, n3, &m);
  ck_assert(isnan(m.cosine));
  ct_compare_tol tol = CT_COMPARE_TOL_DEFAULT;
  ck_assert_int_eq(ct_compare_judge(&m, &tol), CT_CMP_DIFFERENT);
  int64_t s2[2] = {1, 2};
  ct_tensor *r = ct_tensor_new(CT_F32, 2, s2, "r"); /* 1x2 vs 2: shapes differ */
  ck_assert_int_eq(ct_compare_tensor(z, r, &m), CT_ERR_CHECK);
  ct_tensor *all[] = {z, z2, o, n1, n2, n3, r};
  for (int i = 0; i < 7; i++) ct_tensor_free(all[i]);
}
END_TEST

/* A: t_eq, t_sim, a/b (different), t_shape, only_a;  B: the same names but only_b. */
static void write_files(const char *pa, const char *pb) {
  ct_tensor *a[] = {VEC(CT_I8, "t_eq", 1, 2, 3), VEC(CT_F32, "t_sim", 1, 2, 3, 4), VEC(CT_F32, "a/b", 1, 2, 3),
                    VEC(CT_F32, "t_shape", 1, 2), VEC(CT_F32, "only_a", 1)};
  ct_tensor *b[] = {VEC(CT_I8, "t_eq", 1, 2, 3), VEC(CT_F32, "t_sim", 1.1, 2, 3, 4), VEC(CT_F32, "a/b", 1, 2, 4),
                    VEC(CT_F32, "t_shape", 1, 2, 3), VEC(CT_F32, "only_b", 1)};
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(pa, a, 5, &d), CT_OK);
  ck_assert_int_eq(ct_h5_write(pb, b, 5, &d), CT_OK);
  for (int i = 0; i < 5; i++) ct_tensor_free(a[i]), ct_tensor_free(b[i]);
}

START_TEST(test_cli_exit_codes_and_summary) {
  const char *pa = ct_test_tmp_path("a.h5"), *pb = ct_test_tmp_path("b.h5");
  write_files(pa, pb);
  char out[8192];
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s", pa, pb), 1);
  ck_assert_ptr_nonnull(strstr(out, "compare: 4 tensors, 2 passed, 2 failed\n"));
  ck_assert_ptr_nonnull(strstr(out, "only in A"));
  ck_assert_ptr_nonnull(strstr(out, "only in B"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --only t_eq,t_sim", pa, pb), 0);
  ck_assert_ptr_nonnull(strstr(out, "compare: 2 tensors, 2 passed, 0 failed\n"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --only t_eq,t_sim --exact", pa, pb), 1);
  ck_assert_ptr_nonnull(strstr(out, "compare: 2 tensors, 1 passed, 1 failed\n"));
  /* a/b: cosine 0.991, euclid 0.759 (test_metrics_by_hand) passes at 0.99,0.75 */
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --only a/b --tolerance 0.99,0.75", pa, pb), 0);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --only a/b -v", pa, pb), 1);
  ck_assert_ptr_nonnull(strstr(out, "[2] 3 vs 4"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --only nothing", pa, pb), 1);
  ck_assert_ptr_nonnull(strstr(out, "compare: 1 tensors, 0 passed, 1 failed\n"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s", pa, ct_test_tmp_path("none.h5")), 3);
  ck_assert_ptr_nonnull(strstr(out, "none.h5"));
  ck_assert(ct_test_write_file(ct_test_tmp_path("junk.h5"), "junk", 4));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s", ct_test_tmp_path("junk.h5"), pb), 3);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s", pa), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare %s %s --tolerance x", pa, pb), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare --help"), 0);
}
END_TEST

START_TEST(test_cli_reads_tensorproto_pb) {
  /* a TensorProto written here with protobuf-c, against an HDF5 file with the same values
   * (close) and with one value changed (different) */
  float v[4] = {1, -2, 3, 4};
  int64_t dims[2] = {2, 2};
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.name = "t";
  tp.has_data_type = 1;
  tp.data_type = 1;
  tp.n_dims = 2;
  tp.dims = dims;
  tp.n_float_data = 4;
  tp.float_data = v;
  size_t n = onnx__tensor_proto__get_packed_size(&tp);
  uint8_t *buf = malloc(n);
  onnx__tensor_proto__pack(&tp, buf);
  const char *pb = ct_test_tmp_path("ref.pb");
  ck_assert(ct_test_write_file(pb, buf, n));
  free(buf);
  ct_tensor *t = ct_tensor_new(CT_F32, 2, dims, "t");
  memcpy(t->data, v, sizeof v);
  ct_diag d;
  const char *same = ct_test_tmp_path("same.h5"), *off = ct_test_tmp_path("off.h5");
  ck_assert_int_eq(ct_h5_write(same, &t, 1, &d), CT_OK);
  ((float *)t->data)[2] = -3;
  ck_assert_int_eq(ct_h5_write(off, &t, 1, &d), CT_OK);
  ct_tensor_free(t);
  char out[4096];
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s'", pb, same), 0);
  ck_assert_ptr_nonnull(strstr(out, "compare: 1 tensors, 1 passed, 0 failed"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s'", pb, off), 1);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s'", ct_test_tmp_path("none.pb"), same), 3);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("compare");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_metrics_by_hand);
  tcase_add_test(tc, test_similar_and_close);
  tcase_add_test(tc, test_equal_bitwise_and_exact);
  tcase_add_test(tc, test_edge_cases);
  tcase_add_test(tc, test_cli_exit_codes_and_summary);
  tcase_add_test(tc, test_cli_reads_tensorproto_pb);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
