/* test_compare_quant.c: common/dequant (per-tensor and per-channel, int8/uint8/int16/int32,
 * bf16/f16 bit patterns; values worked by hand) and the cross-dialect `ctpu compare`:
 * quantized tensors with scale/zero_point attributes against float ones, --exact, --sort
 * worst, --top, the default tolerance by the dtypes compared, the one-line list of names
 * found in one file only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/dequant.h"
#include "common/h5io.h"
#include "io/compare.h"
#include "tests/testutil.h"

static ct_tensor *ints(const char *name, ct_dtype dt, int ndim, const int64_t *shape, const double *v) {
  ct_tensor *t = ct_tensor_new(dt, ndim, shape, name);
  ck_assert_ptr_nonnull(t);
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) ct_tensor_set_f64(t, i, v[i]);
  return t;
}

static float at(const ct_tensor *t, int64_t i) { return ((const float *)t->data)[i]; }

START_TEST(test_per_tensor_types) {
  int64_t n = 3;
  const double q[3] = {-128, 0, 127};
  double scale = 0.5;
  int32_t zp = 1;
  ct_dtype types[3] = {CT_I8, CT_I16, CT_I32};
  for (int k = 0; k < 3; k++) {
    ct_tensor *t = ints("t", types[k], 1, &n, q), *r;
    ck_assert(ct_tensor_set_quant(t, 1, 0, &scale, &zp));
    ck_assert(ct_dequant_is_quantized(t));
    ct_diag d;
    ck_assert_int_eq(ct_dequant(t, &r, &d), CT_OK);
    ck_assert_int_eq(r->dtype, CT_F32);
    ck_assert_str_eq(r->name, "t");
    ck_assert_int_eq(r->n_scale, 0);
    ck_assert_float_eq(at(r, 0), -64.5f); /* (−128 − 1)·0.5 */
    ck_assert_float_eq(at(r, 1), -0.5f);
    ck_assert_float_eq(at(r, 2), 63.0f);
    ct_tensor_free(t);
    ct_tensor_free(r);
  }
}
END_TEST

START_TEST(test_per_channel_u8) {
  /* 2×2×2 u8 on axis 1: channel c of element (i, c, j); zp (0, 10), scale (1, 0.25) */
  int64_t s[3] = {2, 2, 2};
  const double q[8] = {1, 2, 10, 14, 3, 4, 255, 0};
  double scale[2] = {1, 0.25};
  int32_t zp[2] = {0, 10};
  ct_tensor *t = ints("w", CT_U8, 3, s, q), *r;
  ck_assert(ct_tensor_set_quant(t, 2, 1, scale, zp));
  ct_diag d;
  ck_assert_int_eq(ct_dequant(t, &r, &d), CT_OK);
  const float want[8] = {1, 2, 0, 1, 3, 4, 61.25f, -2.5f};
  for (int i = 0; i < 8; i++) ck_assert_float_eq(at(r, i), want[i]);
  ct_tensor_free(r);
  t->quant_axis = 3;
  ck_assert_int_eq(ct_dequant(t, &r, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "quant_axis 3 outside 0..2") != NULL, "%s", d.msg);
  t->quant_axis = 0;
  t->shape[0] = 3, t->shape[2] = 1; /* same 6 ≠ 8 elements do not matter: 2 scales for 3 channels */
  ck_assert_int_eq(ct_dequant(t, &r, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "2 scales for 3 channels") != NULL, "%s", d.msg);
  ct_tensor_free(t);
}
END_TEST

START_TEST(test_float_bit_patterns) {
  int64_t n = 2;
  const double v[2] = {1.5, -0.25};
  ct_tensor *b = ints("b", CT_BF16, 1, &n, v), *h = ints("h", CT_F16, 1, &n, v), *r;
  ck_assert_uint_eq(((uint16_t *)b->data)[0], 0x3fc0); /* bf16 1.5 */
  ck_assert_uint_eq(((uint16_t *)h->data)[1], 0xb400); /* f16 −0.25 */
  ck_assert(!ct_dequant_is_quantized(b));
  ct_diag d;
  ck_assert_int_eq(ct_dequant(b, &r, &d), CT_OK);
  ck_assert_float_eq(at(r, 0), 1.5f);
  ct_tensor_free(r);
  ck_assert_int_eq(ct_dequant(h, &r, &d), CT_OK);
  ck_assert_float_eq(at(r, 1), -0.25f);
  ct_tensor_free(r);
  ct_tensor_free(b);
  ct_tensor_free(h);
}
END_TEST

/* A (f32 reference): x = 0, 0.1, ..., 0.7 and y = 1..8. B: x as i8 with scale 0.1 (exact up
 * to rounding), y as i8 at scale 1 but off by one in two places. */
static void write_pair(const char *a, const char *b) {
  int64_t n = 8;
  double xv[8], yv[8], xq[8], yq[8];
  for (int i = 0; i < 8; i++) xv[i] = 0.1 * i, yv[i] = i + 1, xq[i] = i, yq[i] = i + 1 + (i == 2 || i == 5 ? 3 : 0);
  ct_tensor *ta[2] = {ints("x", CT_F32, 1, &n, xv), ints("y", CT_F32, 1, &n, yv)};
  ct_tensor *tb[2] = {ints("x", CT_I8, 1, &n, xq), ints("y", CT_I8, 1, &n, yq)};
  double s1 = 0.1, s2 = 1;
  int32_t z = 0;
  ck_assert(ct_tensor_set_quant(tb[0], 1, 0, &s1, &z));
  ck_assert(ct_tensor_set_quant(tb[1], 1, 0, &s2, &z));
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(a, ta, 2, &d), CT_OK);
  ck_assert_int_eq(ct_h5_write(b, tb, 2, &d), CT_OK);
  for (int i = 0; i < 2; i++) ct_tensor_free(ta[i]), ct_tensor_free(tb[i]);
}

/* Runs ct_compare_files into a string (malloc). */
static char *compare(const char *a, const char *b, const ct_compare_opts *o, ct_compare_summary *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ct_diag d;
  ck_assert_int_eq(ct_compare_files(a, b, o, f, s, &d), CT_OK);
  fclose(f);
  return buf;
}

START_TEST(test_files_dequantized) {
  const char *a = ct_test_tmp_path("top.h5"), *b = ct_test_tmp_path("tpu.h5");
  write_pair(a, b);
  ct_compare_opts o = {.tol = CT_COMPARE_TOL_DEFAULT};
  ct_compare_summary s;
  char *out = compare(a, b, &o, &s);
  ck_assert_int_eq(s.n, 2);
  /* x dequantizes to exactly A's values (i·0.1 rounded to f32 both ways): equal; y is off:
   * Σa² = 204, Σb² = 276, Σ(a − b)² = 18, cosine = 231 / sqrt(204 · 276) = 0.9735 < 0.99;
   * euclid = 1 − sqrt(18) / sqrt((204 + 276 + 2·231) / 4) = 0.7235, below int8's default 0.75 */
  ck_assert_int_eq(s.passed, 1);
  ck_assert_msg(strstr(out, "x ") && strstr(out, "equal"), "%s", out);
  ck_assert_msg(strstr(out, "0.973") && strstr(out, "10.54"), "cosine 0.9735, SQNR 10·log10(204/18) = 10.54 dB expected: %s", out);
  ck_assert_msg(strstr(out, "x ") < strstr(out, "y "), "A's order: %s", out);
  free(out);
  o.tol.exact = true; /* stored values: 0..7 vs 0..0.7 */
  out = compare(a, b, &o, &s);
  ck_assert_int_eq(s.passed, 0);
  free(out);
  o.tol.exact = false;
  o.sort_worst = true;
  out = compare(a, b, &o, &s);
  ck_assert_msg(strstr(out, "y ") < strstr(out, "x "), "worst first: %s", out);
  free(out);
  o.top = 1;
  out = compare(a, b, &o, &s);
  ck_assert_int_eq(s.n, 2);
  ck_assert_msg(strstr(out, "(1 more tensor not shown)") && !strstr(out, "\nx "), "%s", out);
  free(out);
}
END_TEST

START_TEST(test_cli) {
  const char *a = ct_test_tmp_path("cli_top.h5"), *b = ct_test_tmp_path("cli_tpu.h5");
  write_pair(a, b);
  char out[4096];
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' --sort worst --top 1", a, b), 1);
  ck_assert_msg(strstr(out, "compare: 2 tensors, 1 passed, 1 failed"), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' --only x", a, b), 0);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' --sort best", a, b), 2);
  ck_assert_msg(strstr(out, "--sort takes \"worst\""), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' --top 0", a, b), 2);
}
END_TEST

/* The class of a stored tensor, and of a dump (its least precise tensor). */
START_TEST(test_precision_classes) {
  int64_t n = 2;
  const double v[2] = {1, 2};
  double sc = 0.5;
  int32_t zp = 0;
  ct_dtype types[] = {CT_F32, CT_F64, CT_F16, CT_BF16, CT_I8, CT_U8, CT_I16, CT_I32, CT_I64};
  ct_compare_prec plain[] = {CT_PREC_F32, CT_PREC_F32, CT_PREC_F16, CT_PREC_BF16, CT_PREC_F32, CT_PREC_F32,
                             CT_PREC_F32, CT_PREC_F32, CT_PREC_F32};
  ct_compare_prec quant[] = {CT_PREC_INT8, CT_PREC_INT8, CT_PREC_F16, CT_PREC_F32}; /* i8 u8 i16 i32 with a scale */
  ct_tensor *f = ints("f", CT_F32, 1, &n, v);
  for (int k = 0; k < 9; k++) {
    ct_tensor *t = ints("t", types[k], 1, &n, v);
    ck_assert_int_eq(ct_compare_prec_of(t), plain[k]);
    if (k >= 4 && k < 8) {
      ck_assert(ct_tensor_set_quant(t, 1, 0, &sc, &zp));
      ck_assert_int_eq(ct_compare_prec_of(t), quant[k - 4]);
      const ct_tensor *ft[2] = {f, t}, *tf[2] = {t, f};
      ck_assert_int_eq(ct_compare_dump_prec(ft, 2), quant[k - 4]);
      ck_assert_int_eq(ct_compare_dump_prec(tf, 2), quant[k - 4]);
    }
    ct_tensor_free(t);
  }
  ct_tensor_free(f);
  ck_assert_str_eq(ct_compare_prec_name(CT_PREC_BF16), "bf16");
  ct_compare_tol t8 = ct_compare_prec_tol(CT_PREC_INT8), t32 = ct_compare_prec_tol(CT_PREC_F32);
  ck_assert(t8.cos < t32.cos && t8.euc < t32.euc && !t8.exact);
}
END_TEST

/* ctpu compare without --tolerance: z = 1..8 (f32) against 1..7, 11 — Σab = 228, Σa² = 204,
 * Σb² = 261, Σ(a − b)² = 9, Σ((a + b)/2)² = 230.25: cosine 228 / sqrt(204 · 261) = 0.98810,
 * euclid 1 − 3 / sqrt(230.25) = 0.80229. Stored as i8 (scale 1) that is within int8's 0.97,0.75
 * and passes, and so does an f32 z in a dump that holds an i8 tensor (an INT8 dump); the same
 * values as f32 in an f32 dump (0.99,0.90) or as bf16 (0.99,0.80) fail; --tolerance 0.99,0.90
 * fails the i8 one too. A's five names missing from B are one line, or five rows with -v. */
START_TEST(test_cli_default_tolerance_by_dtype) {
  int64_t n = 8, one = 1;
  const double a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {1, 2, 3, 4, 5, 6, 7, 11};
  double sc = 1;
  int32_t zp = 0;
  const char *pa = ct_test_tmp_path("tol_a.h5"), *pb[4] = {ct_test_tmp_path("tol_i8.h5"), ct_test_tmp_path("tol_f32.h5"),
                                                           ct_test_tmp_path("tol_bf16.h5"), ct_test_tmp_path("tol_mix.h5")};
  ct_tensor *ta[6] = {ints("z", CT_F32, 1, &n, a)};
  for (int i = 1; i < 6; i++) {
    char name[16];
    snprintf(name, sizeof name, "only_a_%d", i);
    ta[i] = ints(name, CT_F32, 1, &one, a);
  }
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(pa, ta, 6, &d), CT_OK);
  ct_dtype bt[4] = {CT_I8, CT_F32, CT_BF16, CT_F32};
  for (int k = 0; k < 4; k++) {
    ct_tensor *t[2] = {ints("z", bt[k], 1, &n, b), ints("q", CT_I8, 1, &n, b)};
    if (k == 0) ck_assert(ct_tensor_set_quant(t[0], 1, 0, &sc, &zp));
    ck_assert(ct_tensor_set_quant(t[1], 1, 0, &sc, &zp));
    ck_assert_int_eq(ct_h5_write(pb[k], t, k == 3 ? 2 : 1, &d), CT_OK);
    ct_tensor_free(t[0]), ct_tensor_free(t[1]);
  }
  for (int i = 0; i < 6; i++) ct_tensor_free(ta[i]);
  char out[8192];
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s'", pa, pb[0]), 0);
  ck_assert_msg(strstr(out, "0.988") && strstr(out, "0.802"), "%s", out);
  ck_assert_msg(strstr(out, "tolerance f32 vs int8: cosine >= 0.97, euclid >= 0.75"), "%s", out);
  ck_assert_msg(strstr(out, "only in A: only_a_1, only_a_2, only_a_3, ... (5 tensors; -v lists them)\n"), "%s", out);
  ck_assert_msg(!strstr(out, "(only in A)"), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' --tolerance 0.99,0.90", pa, pb[0]), 1);
  ck_assert_msg(!strstr(out, "tolerance f32"), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s'", pa, pb[1]), 1);
  ck_assert_msg(strstr(out, "tolerance f32 vs f32: cosine >= 0.99, euclid >= 0.90"), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s'", pa, pb[3]), 0);
  ck_assert_msg(strstr(out, "tolerance f32 vs int8: cosine >= 0.97, euclid >= 0.75"), "%s", out);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "compare '%s' '%s' -v", pa, pb[2]), 1);
  const char *p = out;
  int rows = 0;
  while ((p = strstr(p, "(only in A)"))) rows++, p++;
  ck_assert_msg(rows == 5, "%d rows: %s", rows, out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("compare_quant");
  TCase *tc = tcase_create("compare_quant");
  tcase_add_test(tc, test_per_tensor_types);
  tcase_add_test(tc, test_per_channel_u8);
  tcase_add_test(tc, test_float_bit_patterns);
  tcase_add_test(tc, test_files_dequantized);
  tcase_add_test(tc, test_cli);
  tcase_add_test(tc, test_precision_classes);
  tcase_add_test(tc, test_cli_default_tolerance_by_dtype);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
