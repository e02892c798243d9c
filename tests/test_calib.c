/* test_calib.c: quant/calib.c — min/max statistics, |x| histograms (binning, merge, exact
 * re-binning by doubling), and the KL / percentile / MSE / tune thresholds on small
 * histograms worked by hand in the comments. */
#include <math.h>

#include "quant/calib.h"
#include "tests/testutil.h"

START_TEST(test_stats_merge_and_nonfinite) {
  float a[] = {1.5f, -0.25f, NAN}, b[] = {-4.0f, 2.0f, INFINITY};
  ct_calib_stats s = ct_calib_stats_init(), t = ct_calib_stats_init();
  ck_assert_double_eq(ct_calib_stats_absmax(&s), 0.0);
  ct_calib_stats_add(&s, a, 3);
  ct_calib_stats_add(&t, b, 3);
  ck_assert_double_eq(s.min, -0.25);
  ck_assert_double_eq(s.max, 1.5);
  ct_calib_stats_merge(&s, &t);
  ck_assert_double_eq(s.min, -4.0);
  ck_assert_double_eq(s.max, 2.0);
  ck_assert_int_eq(s.count, 4);
  ck_assert_int_eq(s.nonfinite, 2);
  ck_assert_double_eq(ct_calib_stats_absmax(&s), 4.0);
}
END_TEST

/* 4 bins over [0, 8] (width 2): |x| = 0.5, 1.9 → bin 0; −2 → bin 1; 7.9, 8 and 100
 * (clamped) → bin 3. Merging two such histograms adds the bins. */
START_TEST(test_hist_binning_and_merge) {
  ct_calib_hist h, g, bad;
  ck_assert_int_eq(ct_calib_hist_init(&h, 4, 8.0, NULL), CT_OK);
  ck_assert_int_eq(ct_calib_hist_init(&g, 4, 8.0, NULL), CT_OK);
  float x[] = {0.5f, 1.9f, -2.0f, 7.9f, 8.0f, 100.0f, NAN};
  ct_calib_hist_add(&h, x, 7);
  const int64_t want[4] = {2, 1, 0, 3};
  for (int k = 0; k < 4; k++) ck_assert_int_eq(h.counts[k], want[k]);
  ck_assert_int_eq(h.total, 6);
  ck_assert_int_eq(h.nonfinite, 1);
  ct_calib_hist_add(&g, x, 3);
  ck_assert_int_eq(ct_calib_hist_merge(&h, &g, NULL), CT_OK);
  ck_assert_int_eq(h.counts[0], 4);
  ck_assert_int_eq(h.counts[1], 2);
  ck_assert_int_eq(h.total, 9);
  ck_assert_int_eq(ct_calib_hist_init(&bad, 4, 16.0, NULL), CT_OK);
  ct_diag d;
  ck_assert_int_eq(ct_calib_hist_merge(&h, &bad, &d), CT_ERR_USAGE);
  ck_assert_str_eq(d.msg, "histogram merge: 4 bins over [0, 8] vs 4 bins over [0, 16]");
  ct_calib_hist_free(&bad);
  ck_assert_int_eq(ct_calib_hist_init(&bad, 0, 1.0, &d), CT_ERR_USAGE);
  ck_assert_int_eq(ct_calib_hist_init(&bad, 4, -1.0, &d), CT_ERR_USAGE);
  ct_calib_hist_free(&h);
  ct_calib_hist_free(&g);
  ct_calib_hist_free(&bad);
}
END_TEST

/* One pass: 4 bins over [0, 4] with counts {1, 2, 3, 4}; growing to absmax 10 doubles twice
 * (range 16): {1+2, 3+4, 0, 0} → {3+7, 0, 0, 0}. Adding 9 then lands in bin 2 ([8, 12)).
 * A histogram of zeros only (range 0) just takes the new range. */
START_TEST(test_hist_grow_rebins_exactly) {
  ct_calib_hist h;
  ck_assert_int_eq(ct_calib_hist_init(&h, 4, 4.0, NULL), CT_OK);
  float x[] = {0.5f, 1.5f, 1.5f, 2.5f, 2.5f, 2.5f, 3.5f, 3.5f, 3.5f, 3.5f};
  ct_calib_hist_add(&h, x, 10);
  ck_assert_int_eq(ct_calib_hist_grow(&h, 10.0, NULL), CT_OK);
  ck_assert_double_eq(h.range, 16.0);
  ck_assert_int_eq(h.counts[0], 10);
  ck_assert_int_eq(h.counts[1], 0);
  float y = 9.0f;
  ct_calib_hist_add(&h, &y, 1);
  ck_assert_int_eq(h.counts[2], 1);
  ct_calib_hist_free(&h);
  ck_assert_int_eq(ct_calib_hist_init(&h, 4, 0.0, NULL), CT_OK);
  float z[] = {0.0f, -0.0f};
  ct_calib_hist_add(&h, z, 2);
  ck_assert_int_eq(h.counts[0], 2);
  ck_assert_int_eq(ct_calib_hist_grow(&h, 3.0, NULL), CT_OK);
  ck_assert_double_eq(h.range, 3.0);
  ck_assert_int_eq(h.counts[0], 2);
  ct_calib_hist_free(&h);
  ck_assert_int_eq(ct_calib_hist_init(&h, 3, 1.0, NULL), CT_OK);
  ck_assert_int_eq(ct_calib_hist_grow(&h, 3.0, NULL), CT_ERR_USAGE);
  ct_calib_hist_free(&h);
}
END_TEST

/* KL on 8 bins (width 1), 2 levels, counts {6, 2, 2, 0, 0, 0, 0, 1} (total 11):
 * i = 2: P = {6, 2+2+1} / 11, Q = {6, 2} / 8:
 *        6/11 ln((6/11)/0.75) + 5/11 ln((5/11)/0.25) = −0.17370 + 0.27175 = 0.09805
 * i = 3: P = {6, 2, 2+1} / 11; groups {0}, {1, 2}: sums 6, 4 → Q = {6, 2, 2} / 10:
 *        6/11 ln(0.54545/0.6) + 2/11 ln(0.18182/0.2) + 3/11 ln(0.27273/0.2) = 0.01527
 * i = 4: P = {6, 2, 2, 1}; groups {0,1}, {2,3}: 8, 2 → Q = {4, 4, 1, 1} / 10: 0.12585
 * i = 5: P = {6, 2, 2, 0, 1}; groups {0,1}, {2,3,4}: 8, 2, non-zero P at 2, 4 → Q = {4, 4,
 *        1, 0, 1} / 10: 0.12585
 * i = 6, 7: groups of 3: {0,1,2} = 10, the rest 0 but P[i−1] = 1 → Q = 0 there: +inf
 * i = 8: groups {0..3} = 10 over 3 non-zero bins, {4..7} = 1 → Q = {10/3, 10/3, 10/3, 0,
 *        0, 0, 0, 1} / 11: 6/11 ln(1.8) + 4/11 ln(0.6) = 0.32061 − 0.18576 = 0.13485
 * Minimum at i = 3 → threshold (3 + 0.5)·1 = 3.5. */
START_TEST(test_kld_small_hand_case) {
  const int64_t c[8] = {6, 2, 2, 0, 0, 0, 0, 1};
  ck_assert_double_eq_tol(ct_calib_kld_candidate(c, 8, 2, 2), 0.09805, 1e-5);
  ck_assert_double_eq_tol(ct_calib_kld_candidate(c, 8, 2, 3), 0.01527, 1e-5);
  ck_assert_double_eq_tol(ct_calib_kld_candidate(c, 8, 2, 4), 0.12585, 1e-5);
  ck_assert_double_eq_tol(ct_calib_kld_candidate(c, 8, 2, 5), 0.12585, 1e-5);
  ck_assert(isinf(ct_calib_kld_candidate(c, 8, 2, 6)));
  ck_assert(isinf(ct_calib_kld_candidate(c, 8, 2, 7)));
  ck_assert_double_eq_tol(ct_calib_kld_candidate(c, 8, 2, 8), 0.13485, 1e-5);
  ck_assert(isnan(ct_calib_kld_candidate(c, 8, 2, 1)));
  double t = 0;
  ck_assert_int_eq(ct_calib_kld_threshold(c, 8, 1.0, 2, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 3.5);
  ck_assert_int_eq(ct_calib_kld_threshold(c, 8, 0.25, 2, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 3.5 * 0.25);
  const int64_t zero[8] = {0};
  ct_diag d;
  ck_assert_int_eq(ct_calib_kld_threshold(zero, 8, 1.0, 2, &t, &d), CT_ERR_USAGE);
  ck_assert_int_eq(ct_calib_kld_threshold(c, 8, 1.0, 9, &t, &d), CT_ERR_USAGE);
}
END_TEST

/* A histogram whose 4 first bins hold everything: i = 4 keeps it exactly (KL 0), so with 4
 * levels on 16 bins the threshold is 4.5 bins (the first of the zero-divergence ties). */
START_TEST(test_kld_exact_distribution_is_kept) {
  int64_t c[16] = {5, 1, 7, 3};
  double t = 0;
  ck_assert_double_eq_tol(ct_calib_kld_candidate(c, 16, 4, 4), 0.0, 1e-15);
  ck_assert_int_eq(ct_calib_kld_threshold(c, 16, 0.5, 4, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 4.5 * 0.5);
}
END_TEST

/* Production size (2048 bins, 128 levels): a bulk decaying over the first 256 bins plus one
 * lone outlier in the last bin. Keeping the outlier (threshold ≈ absmax) would spend 7/8 of
 * the 128 levels on empty bins, so KL must clip: threshold below 512 bins (and, as every
 * candidate, at least 128.5). */
START_TEST(test_kld_production_size_clips_outlier) {
  static int64_t c[2048];
  for (int k = 0; k < 256; k++) c[k] = (int64_t)(100000.0 * exp(-k / 40.0)) + 1;
  c[2047] = 1;
  double t = 0, w = 1.0 / 2048;
  ck_assert_int_eq(ct_calib_kld_threshold(c, 2048, w, 128, &t, NULL), CT_OK);
  ck_assert_double_lt(t, 512 * w);
  ck_assert_double_ge(t, 128.5 * w);
}
END_TEST

/* Percentile, counts {5, 3, 1, 1} width 0.5, cumulative {5, 8, 9, 10}: 50% → bin 0 → 0.5;
 * 80% (8) → bin 1 → 1.0; 85% (8.5) → bin 2 → 1.5; 95% and 100% → bin 3 → 2.0. */
START_TEST(test_percentile_hand) {
  const int64_t c[4] = {5, 3, 1, 1};
  const double f[] = {0.5, 0.8, 0.85, 0.95, 1.0}, want[] = {0.5, 1.0, 1.5, 2.0, 2.0};
  for (int i = 0; i < 5; i++) {
    double t = 0;
    ck_assert_int_eq(ct_calib_percentile_threshold(c, 4, 0.5, f[i], &t, NULL), CT_OK);
    ck_assert_double_eq(t, want[i]);
  }
  double t;
  ck_assert_int_eq(ct_calib_percentile_threshold(c, 4, 0.5, 0.0, &t, NULL), CT_ERR_USAGE);
  ck_assert_int_eq(ct_calib_percentile_threshold(c, 4, 0.5, 1.5, &t, NULL), CT_ERR_USAGE);
}
END_TEST

/* MSE with qmax 1 (levels −T, 0, T), counts {4, 2, 0, 1} at centres 0.5, 1.5, 2.5, 3.5:
 * T = 1: 0.5 → 1 (0.25·4), 1.5 → 1 (0.25·2), 3.5 → 1 (6.25): 7.75
 * T = 2: 0.5/2 → 0 (0.25·4), 1.5/2 = 0.75 → 2 (0.25·2), 3.5/2 → 2 (2.25): 3.75
 * T = 3: 0.5 → 0 (1), 1.5/3 = 0.5 → 1 (half away) → 3 (2.25·2), 3.5 → 3 (0.25): 5.75
 * T = 4: 1 + 1.5/4 → 0 (4.5) + 3.5 → 4 (0.25): 5.75.  Best T = 2. */
START_TEST(test_mse_hand) {
  const int64_t c[4] = {4, 2, 0, 1};
  double t = 0;
  ck_assert_int_eq(ct_calib_mse_threshold(c, 4, 1.0, 1, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 2.0);
  ck_assert_int_eq(ct_calib_mse_threshold(c, 4, 1.0, 0, &t, NULL), CT_ERR_USAGE);
}
END_TEST

/* qdq error, threshold 1.27 (i8 scale 0.01): 0.2 and 1.0 exact, −3 → −300 saturates to the
 * i8 minimum −128 → −1.28 (error 1.72² = 2.9584): mean 0.986133. */
START_TEST(test_qdq_error_hand) {
  float x[] = {0.2f, 1.0f, -3.0f};
  double e = ct_calib_qdq_error(x, 3, 1.27, CT_I8);
  ck_assert_double_eq_tol(e, 2.9584 / 3, 1e-6);
  ck_assert_double_eq(ct_calib_qdq_error(x, 0, 1.27, CT_I8), 0.0);
}
END_TEST

static double err_parabola(double t, void *ctx) {
  (void)ctx;
  return (t - 2.3) * (t - 2.3);
}

static double err_nan_above(double t, void *ctx) {
  (void)ctx;
  return t >= 2.4 ? NAN : (t - 5) * (t - 5);
}

/* tune over [1, 5] in 8 steps (1, 1.5, ..., 5): (t − 2.3)² is least at 2.5 (0.04 < 0.09 at
 * 2); NaN scores never win: with NaN from 2.4 up, 2 is best of {1, 1.5, 2}. */
START_TEST(test_tune_search) {
  double t = 0;
  ck_assert_int_eq(ct_calib_tune(1.0, 5.0, 8, err_parabola, NULL, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 2.5);
  ck_assert_int_eq(ct_calib_tune(1.0, 5.0, 8, err_nan_above, NULL, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 2.0);
  ck_assert_int_eq(ct_calib_tune(3.0, 1.0, 8, err_parabola, NULL, &t, NULL), CT_ERR_USAGE);
  ck_assert_int_eq(ct_calib_tune(1.0, 5.0, 0, err_parabola, NULL, &t, NULL), CT_ERR_USAGE);
}
END_TEST

/* Dispatch by method name: max is the stats' absmax (−4 of {0.5, −4, 3}); percentile 0.5
 * of 8 bins over [0, 4] with |x| in bins 1, 7, 6 (cumulative 1, 2, 3 of 3 → bin 6 reaches
 * 1.5 → (6 + 1)·0.5 = 3.5); kld needs 128 bins; an all-zero tensor gives 0 everywhere. */
START_TEST(test_threshold_by_method) {
  ck_assert_int_eq(ct_calib_method_from_name("kld"), CT_CALIB_KLD);
  ck_assert_int_eq(ct_calib_method_from_name("entropy"), CT_CALIB_METHOD_COUNT);
  ck_assert_str_eq(ct_calib_method_name(CT_CALIB_MSE), "mse");
  float x[] = {0.5f, -4.0f, 3.0f};
  ct_calib_stats s = ct_calib_stats_init();
  ct_calib_stats_add(&s, x, 3);
  ct_calib_hist h;
  ck_assert_int_eq(ct_calib_hist_init(&h, 8, 4.0, NULL), CT_OK);
  ct_calib_hist_add(&h, x, 3);
  double t;
  ck_assert_int_eq(ct_calib_threshold(CT_CALIB_MAX, &s, &h, 0, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 4.0);
  ck_assert_int_eq(ct_calib_threshold(CT_CALIB_PERCENTILE, &s, &h, 0.5, &t, NULL), CT_OK);
  ck_assert_double_eq(t, 3.5);
  ck_assert_int_eq(ct_calib_threshold(CT_CALIB_KLD, &s, &h, 0, &t, NULL), CT_ERR_USAGE);
  ck_assert_int_eq(ct_calib_threshold(CT_CALIB_METHOD_COUNT, &s, &h, 0, &t, NULL), CT_ERR_USAGE);
  ct_calib_hist_free(&h);
  float z[] = {0.0f, 0.0f};
  ct_calib_stats zs = ct_calib_stats_init();
  ct_calib_stats_add(&zs, z, 2);
  ck_assert_int_eq(ct_calib_hist_init(&h, 2048, 0.0, NULL), CT_OK);
  ct_calib_hist_add(&h, z, 2);
  for (int m = 0; m < CT_CALIB_METHOD_COUNT; m++) {
    t = -1;
    ck_assert_int_eq(ct_calib_threshold((ct_calib_method)m, &zs, &h, 0.99, &t, NULL), CT_OK);
    ck_assert_double_eq(t, 0.0);
  }
  ct_calib_hist_free(&h);
}
END_TEST

int main(void) {
  Suite *s = suite_create("calib");
  TCase *tc = tcase_create("calib");
  tcase_add_test(tc, test_stats_merge_and_nonfinite);
  tcase_add_test(tc, test_hist_binning_and_merge);
  tcase_add_test(tc, test_hist_grow_rebins_exactly);
  tcase_add_test(tc, test_kld_small_hand_case);
  tcase_add_test(tc, test_kld_exact_distribution_is_kept);
  tcase_add_test(tc, test_kld_production_size_clips_outlier);
  tcase_add_test(tc, test_percentile_hand);
  tcase_add_test(tc, test_mse_hand);
  tcase_add_test(tc, test_qdq_error_hand);
  tcase_add_test(tc, test_tune_search);
  tcase_add_test(tc, test_threshold_by_method);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
