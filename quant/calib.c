/* calib.c: calibration statistics and thresholds (see calib.h, docs/quant.md): min/max,
 * |x| histograms (two-pass as TPU-MLIR, or one-pass with exact re-binning by doubling), and
 * the max / percentile / KL (TensorRT entropy calibration, GTC 2017) / MSE / tune thresholds. */
#include "quant/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"

ct_calib_stats ct_calib_stats_init(void) { return (ct_calib_stats){INFINITY, -INFINITY, 0, 0}; }

void ct_calib_stats_add(ct_calib_stats *s, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double v = x[i];
    if (!isfinite(v)) {
      s->nonfinite++;
      continue;
    }
    if (v < s->min) s->min = v;
    if (v > s->max) s->max = v;
    s->count++;
  }
}

void ct_calib_stats_merge(ct_calib_stats *dst, const ct_calib_stats *src) {
  if (src->min < dst->min) dst->min = src->min;
  if (src->max > dst->max) dst->max = src->max;
  dst->count += src->count;
  dst->nonfinite += src->nonfinite;
}

double ct_calib_stats_absmax(const ct_calib_stats *s) {
  if (s->count == 0) return 0;
  return fabs(s->min) > fabs(s->max) ? fabs(s->min) : fabs(s->max);
}

ct_status ct_calib_hist_init(ct_calib_hist *h, int nbins, double range, ct_diag *d) {
  memset(h, 0, sizeof *h);
  if (nbins < 1) return ct_diag_set(d, CT_ERR_USAGE, "histogram: %d bins (need at least 1)", nbins);
  if (!isfinite(range) || range < 0)
    return ct_diag_set(d, CT_ERR_USAGE, "histogram: range %g is not a finite number >= 0", range);
  h->counts = calloc((size_t)nbins, sizeof *h->counts);
  if (!h->counts) return ct_diag_set(d, CT_ERR_LIMIT, "histogram: out of memory (%d bins)", nbins);
  h->nbins = nbins;
  h->range = range;
  return CT_OK;
}

void ct_calib_hist_free(ct_calib_hist *h) {
  free(h->counts);
  h->counts = NULL;
}

void ct_calib_hist_add(ct_calib_hist *h, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double a = fabs((double)x[i]);
    if (!isfinite(a)) {
      h->nonfinite++;
      continue;
    }
    int64_t k = h->range > 0 ? (int64_t)(a * h->nbins / h->range) : 0;
    if (k >= h->nbins) k = h->nbins - 1; /* |x| = range (and above, clamped) */
    h->counts[k]++;
    h->total++;
  }
}

ct_status ct_calib_hist_merge(ct_calib_hist *dst, const ct_calib_hist *src, ct_diag *d) {
  if (dst->nbins != src->nbins || dst->range != src->range)
    return ct_diag_set(d, CT_ERR_USAGE, "histogram merge: %d bins over [0, %g] vs %d bins over [0, %g]",
                       dst->nbins, dst->range, src->nbins, src->range);
  for (int k = 0; k < dst->nbins; k++) dst->counts[k] += src->counts[k];
  dst->total += src->total;
  dst->nonfinite += src->nonfinite;
  return CT_OK;
}

ct_status ct_calib_hist_grow(ct_calib_hist *h, double absmax, ct_diag *d) {
  if (!isfinite(absmax)) return ct_diag_set(d, CT_ERR_USAGE, "histogram grow: absmax %g is not finite", absmax);
  if (absmax <= h->range) return CT_OK;
  if (h->range == 0) { /* only zeros so far: bin 0 of any range */
    h->range = absmax;
    return CT_OK;
  }
  if (h->nbins % 2) return ct_diag_set(d, CT_ERR_USAGE, "histogram grow: %d bins (need an even count)", h->nbins);
  while (h->range < absmax) {
    int half = h->nbins / 2;
    for (int k = 0; k < half; k++) h->counts[k] = h->counts[2 * k] + h->counts[2 * k + 1];
    memset(h->counts + half, 0, (size_t)half * sizeof *h->counts);
    h->range *= 2;
  }
  return CT_OK;
}

static double sum_counts(const int64_t *c, int lo, int hi) {
  double s = 0;
  for (int k = lo; k < hi; k++) s += (double)c[k];
  return s;
}

double ct_calib_kld_candidate(const int64_t *c, int nbins, int levels, int i) {
  if (levels < 1 || i < levels || i > nbins) return NAN;
  double total = sum_counts(c, 0, nbins), out = sum_counts(c, i, nbins), qtotal = total - out;
  if (total == 0) return NAN;
  if (qtotal == 0) return INFINITY; /* every value is an outlier: Q is empty */
  int merged = i / levels;
  double kl = 0;
  for (int j = 0; j < levels; j++) {
    int lo = j * merged, hi = j == levels - 1 ? i : lo + merged, nz = 0;
    double g = sum_counts(c, lo, hi);
    for (int k = lo; k < hi; k++) nz += c[k] != 0 || (k == i - 1 && out > 0);
    for (int k = lo; k < hi; k++) {
      double pk = (double)c[k] + (k == i - 1 ? out : 0);
      if (pk == 0) continue;
      double p = pk / total, q = g / nz / qtotal;
      if (q == 0) return INFINITY;
      kl += p * log(p / q);
    }
  }
  return kl;
}

ct_status ct_calib_kld_threshold(const int64_t *counts, int nbins, double bin_width, int levels,
                                 double *threshold, ct_diag *d) {
  if (levels < 1 || nbins < levels || !(bin_width > 0))
    return ct_diag_set(d, CT_ERR_USAGE, "kld: %d bins, %d levels, bin width %g (need 1 <= levels <= bins, width > 0)",
                       nbins, levels, bin_width);
  if (sum_counts(counts, 0, nbins) == 0) return ct_diag_set(d, CT_ERR_USAGE, "kld: empty histogram");
  int best = nbins;
  double best_kl = INFINITY;
  for (int i = levels; i <= nbins; i++) {
    double kl = ct_calib_kld_candidate(counts, nbins, levels, i);
    if (kl < best_kl) best_kl = kl, best = i;
  }
  *threshold = (best + 0.5) * bin_width;
  return CT_OK;
}

ct_status ct_calib_percentile_threshold(const int64_t *counts, int nbins, double bin_width,
                                        double fraction, double *threshold, ct_diag *d) {
  if (!(fraction > 0 && fraction <= 1) || !(bin_width > 0) || nbins < 1)
    return ct_diag_set(d, CT_ERR_USAGE, "percentile: fraction %g, bin width %g (need 0 < fraction <= 1, width > 0)",
                       fraction, bin_width);
  double total = sum_counts(counts, 0, nbins), cum = 0;
  if (total == 0) return ct_diag_set(d, CT_ERR_USAGE, "percentile: empty histogram");
  int k = 0;
  for (; k < nbins - 1; k++) {
    cum += (double)counts[k];
    if (cum >= fraction * total) break;
  }
  *threshold = (k + 1) * bin_width;
  return CT_OK;
}

/* Σ counts[j]·(c_j − qdq_T(c_j))² for threshold t over the nz nonempty bins nzj[] (in
 * order; the empty ones add nothing), c_j = (j + 0.5)·w. */
static double mse_at(const int64_t *counts, const int *nzj, int nz, double w, int qmax, double t) {
  double e = 0;
  for (int i = 0; i < nz; i++) {
    int j = nzj[i];
    double c = (j + 0.5) * w, q = ct_quant_round_half_away(c * qmax / t);
    q = q > qmax ? qmax : q;
    e += (double)counts[j] * (c - q * t / qmax) * (c - q * t / qmax);
  }
  return e;
}

ct_status ct_calib_mse_threshold(const int64_t *counts, int nbins, double bin_width, int qmax,
                                 double *threshold, ct_diag *d) {
  if (qmax < 1 || nbins < 1 || !(bin_width > 0))
    return ct_diag_set(d, CT_ERR_USAGE, "mse: %d bins, qmax %d, bin width %g (need >= 1, >= 1, > 0)", nbins, qmax,
                       bin_width);
  if (sum_counts(counts, 0, nbins) == 0) return ct_diag_set(d, CT_ERR_USAGE, "mse: empty histogram");
  int *nzj = malloc(sizeof *nzj * (size_t)nbins), nz = 0;
  if (!nzj) return ct_diag_set(d, CT_ERR_LIMIT, "mse: out of memory");
  for (int j = 0; j < nbins; j++)
    if (counts[j]) nzj[nz++] = j;
  double best = INFINITY;
  for (int k = 1; k <= nbins; k++) {
    double e = mse_at(counts, nzj, nz, bin_width, qmax, k * bin_width);
    if (e < best) best = e, *threshold = k * bin_width;
  }
  free(nzj);
  return CT_OK;
}

double ct_calib_qdq_error(const float *x, int64_t n, double threshold, ct_dtype dt) {
  if (n <= 0) return 0;
  double scale = ct_quant_scale_sym(threshold, dt), e = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = x[i], r = ct_quant_dequantize(ct_quant_quantize(v, scale, 0, dt), scale, 0);
    e += (v - r) * (v - r);
  }
  return e / (double)n;
}

ct_status ct_calib_tune(double th_kld, double th_max, int steps, ct_calib_error_fn err, void *ctx,
                        double *threshold, ct_diag *d) {
  if (steps < 1 || !isfinite(th_kld) || !isfinite(th_max) || !(th_kld > 0) || th_kld > th_max)
    return ct_diag_set(d, CT_ERR_USAGE, "tune: search [%g, %g] in %d steps (need 0 < kld <= max, steps >= 1)",
                       th_kld, th_max, steps);
  double best = INFINITY;
  *threshold = th_max;
  for (int k = 0; k <= steps; k++) {
    double t = k == steps ? th_max : th_kld + (th_max - th_kld) * k / steps, e = err(t, ctx);
    if (e < best) best = e, *threshold = t;
  }
  return CT_OK;
}

static const char *const method_names[CT_CALIB_METHOD_COUNT] = {"max", "percentile", "kld", "mse"};

const char *ct_calib_method_name(ct_calib_method m) {
  return m >= 0 && m < CT_CALIB_METHOD_COUNT ? method_names[m] : NULL;
}

ct_calib_method ct_calib_method_from_name(const char *s) {
  for (int m = 0; m < CT_CALIB_METHOD_COUNT; m++)
    if (!strcmp(s, method_names[m])) return (ct_calib_method)m;
  return CT_CALIB_METHOD_COUNT;
}

/* KLD levels of a tensor: 256 for a non-negative one (min ≥ 0: stored as u8, 255 steps over
 * [0, T], pytorch-quantization's `nbins = 1 << (num_bits - 1 + unsigned)`), 128 otherwise
 * (i8, 127 steps each side) or when the histogram has fewer than 256 bins. */
static int kld_levels(const ct_calib_stats *s, const ct_calib_hist *h) {
  return s->min >= 0 && h->nbins >= 256 ? 256 : 128;
}

ct_status ct_calib_threshold(ct_calib_method m, const ct_calib_stats *s, const ct_calib_hist *h, double param,
                             double *threshold, ct_diag *d) {
  double w = h->range / h->nbins;
  *threshold = 0;
  if (m < 0 || m >= CT_CALIB_METHOD_COUNT) return ct_diag_set(d, CT_ERR_USAGE, "calibration: unknown method %d", (int)m);
  if (m == CT_CALIB_MAX) {
    *threshold = ct_calib_stats_absmax(s);
    return CT_OK;
  }
  if (h->total > 0 && !(w > 0)) return CT_OK; /* all-zero tensor */
  switch (m) {
    case CT_CALIB_PERCENTILE: return ct_calib_percentile_threshold(h->counts, h->nbins, w, param, threshold, d);
    case CT_CALIB_KLD: return ct_calib_kld_threshold(h->counts, h->nbins, w, kld_levels(s, h), threshold, d);
    default: return ct_calib_mse_threshold(h->counts, h->nbins, w, 127, threshold, d);
  }
}
