/* cosine.h: the cosine similarity of two sequences of real values, the one definition used by
 * `ctpu compare`, eval, calibration and the quantize-table searches. Sums in double; formula
 * as TPU-MLIR's tensor_compare.py: Σxy / (‖x‖·‖y‖).
 *
 * Non-finite values: a pair that agrees — both NaN, or the same infinity — is left out of the
 * sums (the two sides match there); any other pair with a NaN or an infinity on either side
 * is a disagreement the sums cannot measure, and makes the cosine NaN. A NaN cosine compares
 * false with every bound, so it never passes a `cos >= floor` test. */
#ifndef CT_COSINE_H
#define CT_COSINE_H

#include <stdint.h>

/* The sums behind a cosine, accumulated over element pairs, tensors and samples.
 * Zero-initialize ({0}) to start. */
typedef struct ct_cos_sums {
  double xy, xx, yy;  /* Σxy, Σx², Σy² over the finite pairs */
  int64_t nonfinite;  /* pairs that disagree with a NaN or an infinity on a side */
} ct_cos_sums;

/* Adds the pair (x, y) to s, by the rule above. */
void ct_cos_add(ct_cos_sums *s, double x, double y);
/* Adds the sums of b into a (a cosine over both sets of pairs). */
void ct_cos_merge(ct_cos_sums *a, const ct_cos_sums *b);
/* The cosine of s: NaN when a pair disagreed non-finitely; 1 when Σx² and Σy² are both 0
 * (no pair, or all zeros on both sides); 0 when only one of them is 0; else
 * Σxy / (sqrt(Σx²)·sqrt(Σy²)). */
double ct_cos_of(const ct_cos_sums *s);

#endif
