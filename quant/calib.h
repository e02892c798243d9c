/* calib.h: calibration statistics and threshold algorithms (docs/quant.md "Calibration"):
 * per-tensor min/max, mergeable |x| histograms, thresholds by max, percentile, KL divergence
 * (TensorRT entropy calibration), MSE, and the `tune` search with its scoring primitive. */
#ifndef CT_CALIB_H
#define CT_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"

/* Running min / max of a tensor over many images. Non-finite values are counted in
 * `nonfinite` and otherwise ignored. An empty stats (count 0) has min = +inf, max = −inf. */
typedef struct ct_calib_stats {
  double min, max;
  int64_t count, nonfinite;
} ct_calib_stats;

/* An empty stats. */
ct_calib_stats ct_calib_stats_init(void);
/* Adds n values. */
void ct_calib_stats_add(ct_calib_stats *s, const float *x, int64_t n);
/* dst := dst ∪ src (min of mins, max of maxes, counts added): merging per-image or per-worker
 * stats in any order gives the same result. */
void ct_calib_stats_merge(ct_calib_stats *dst, const ct_calib_stats *src);
/* max(|min|, |max|); 0 for an empty stats. */
double ct_calib_stats_absmax(const ct_calib_stats *s);

/* Histogram of |x| over [0, range] in nbins equal bins (TensorRT / TPU-MLIR: 2048 bins over
 * [0, absmax]): bin k counts |x| in [k·w, (k+1)·w), w = range / nbins, the last bin also
 * |x| ≥ range (clamped, so no value is lost). range 0 puts every value in bin 0.
 * Non-finite values are counted in `nonfinite` only. counts is owned (malloc). */
typedef struct ct_calib_hist {
  int64_t *counts;
  int nbins;
  double range;
  int64_t total, nonfinite;
} ct_calib_hist;

/* Allocates an all-zero histogram. Errors: CT_ERR_USAGE if nbins < 1 or range is negative or
 * not finite; CT_ERR_LIMIT if out of memory. */
ct_status ct_calib_hist_init(ct_calib_hist *h, int nbins, double range, ct_diag *d);
/* Frees counts (h may be zeroed or already freed). */
void ct_calib_hist_free(ct_calib_hist *h);
/* Adds n values (their absolute values). */
void ct_calib_hist_add(ct_calib_hist *h, const float *x, int64_t n);
/* dst += src bin by bin. Errors: CT_ERR_USAGE if nbins or range differ (two-pass
 * calibration fixes the range first, so per-image histograms of one tensor always agree). */
ct_status ct_calib_hist_merge(ct_calib_hist *dst, const ct_calib_hist *src, ct_diag *d);
/* One-pass alternative to the two passes: widens the range to cover absmax by doubling it
 * (range 0 becomes absmax), merging bin pairs 2k, 2k+1 into bin k at each doubling, which
 * re-bins exactly (no interpolation) but leaves up to twice the final absmax as range.
 * Errors: CT_ERR_USAGE if nbins is odd or absmax is not finite. */
ct_status ct_calib_hist_grow(ct_calib_hist *h, double absmax, ct_diag *d);

/* KL-divergence threshold (TensorRT entropy calibration, Szymon Migacz, "8-bit Inference
 * with TensorRT", GTC 2017; TPU-MLIR kld_calibrator): for every candidate i = levels..nbins
 * (bins kept): P = counts[0, i) with the outliers counts[i, nbins) added to P[i−1]; Q =
 * counts[0, i) merged into `levels` groups of i / levels bins (integer division, the last
 * group takes the remainder), each group's sum spread evenly over the group's bins where P
 * is non-zero; P, Q normalized; KL(P‖Q) = Σ_{P>0} P ln(P/Q) (+inf if Q = 0 where P > 0).
 * The first minimal i gives threshold (i + 0.5)·bin_width. levels 128 and nbins 2048 are
 * TensorRT's; smaller ones make hand-checkable cases. Errors: CT_ERR_USAGE if levels < 1,
 * nbins < levels, bin_width not > 0, or the counts are all zero (no data). */
ct_status ct_calib_kld_threshold(const int64_t *counts, int nbins, double bin_width, int levels,
                                 double *threshold, ct_diag *d);
/* KL(P‖Q) of the single candidate i of ct_calib_kld_threshold (+inf as described; NaN if i
 * is outside levels..nbins or the counts are all zero). */
double ct_calib_kld_candidate(const int64_t *counts, int nbins, int levels, int i);

/* Percentile threshold: the upper edge (k + 1)·bin_width of the first bin k whose cumulative
 * count reaches fraction·total (fraction in (0, 1], e.g. 0.9999). Errors: CT_ERR_USAGE if
 * fraction is outside (0, 1], bin_width not > 0, or the counts are all zero. */
ct_status ct_calib_percentile_threshold(const int64_t *counts, int nbins, double bin_width,
                                        double fraction, double *threshold, ct_diag *d);

/* MSE threshold: the candidate T = k·bin_width, k = 1..nbins, minimizing Σ_j counts[j] ·
 * (c_j − qdq_T(c_j))² over bin centres c_j = (j + 0.5)·bin_width, with qdq_T(c) =
 * min(round_half_away(c·qmax/T), qmax)·T/qmax, the symmetric quantize → dequantize of
 * ctpu (qmax 127 for i8; small qmax for hand-checkable cases). First minimum wins.
 * Errors: CT_ERR_USAGE if qmax < 1, nbins < 1, bin_width not > 0, or the counts are all zero;
 * CT_ERR_LIMIT when out of memory (the list of nonempty bins). */
ct_status ct_calib_mse_threshold(const int64_t *counts, int nbins, double bin_width, int qmax,
                                 double *threshold, ct_diag *d);

/* Scoring primitive of `tune`: mean of (x − dequantize(quantize(x)))² over n values with the
 * symmetric parameters of threshold for dt (ct_quant_scale_sym, zp 0, ct_quant_quantize:
 * half away from zero, saturating). 0 for n = 0. */
double ct_calib_qdq_error(const float *x, int64_t n, double threshold, ct_dtype dt);

/* Error of a layer's quantized output for a candidate threshold, supplied by the caller
 * (e.g. runs the layer with the threshold and compares with float): smaller is better. */
typedef double (*ct_calib_error_fn)(double threshold, void *ctx);

/* `tune` (TPU-MLIR's threshold tuning): evaluates err at steps + 1 evenly spaced thresholds
 * from th_kld to th_max (both included) and returns the one with the smallest error (the
 * first on ties; NaN errors never win). Errors: CT_ERR_USAGE if steps < 1, a bound is not
 * finite and > 0, or th_kld > th_max. */
ct_status ct_calib_tune(double th_kld, double th_max, int steps, ct_calib_error_fn err, void *ctx,
                        double *threshold, ct_diag *d);

/* Threshold methods of `ctpu calibrate` (names: "max", "percentile", "kld", "mse"). `tune`
 * is not one of them: it starts from "kld" and refines with ct_calib_tune. */
typedef enum ct_calib_method {
  CT_CALIB_MAX,
  CT_CALIB_PERCENTILE,
  CT_CALIB_KLD,
  CT_CALIB_MSE,
  CT_CALIB_METHOD_COUNT
} ct_calib_method;

/* Name of m; NULL if out of range. */
const char *ct_calib_method_name(ct_calib_method m);
/* Method of a name; CT_CALIB_METHOD_COUNT if unknown. */
ct_calib_method ct_calib_method_from_name(const char *s);

/* The threshold of one tensor by method m from its statistics s and histogram h (bin width
 * h->range / h->nbins): max → ct_calib_stats_absmax(s); percentile → fraction = param
 * (e.g. 0.9999); kld → 128 levels (TensorRT; needs nbins ≥ 128), 256 for a non-negative
 * tensor (s->min ≥ 0, which the lowering stores as u8: pytorch-quantization's entropy
 * calibrator uses 1 << (bits − 1 + unsigned) levels) when nbins ≥ 256; mse → qmax 127
 * (i8; 255 for u8 tensors was measured worse on MobileNetV2: top-1 agreement 0.928 vs 0.946).
 * param is ignored except by percentile. An all-zero tensor (range 0, or max 0) gives
 * threshold 0 (scale 1 by ct_quant_scale_sym). Errors: CT_ERR_USAGE for an unknown method
 * and those of the method's function (too few bins, bad fraction, empty histogram). */
ct_status ct_calib_threshold(ct_calib_method m, const ct_calib_stats *s, const ct_calib_hist *h, double param,
                             double *threshold, ct_diag *d);

#endif
