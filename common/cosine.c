/* cosine.c: cosine similarity sums (see cosine.h). */
#include "common/cosine.h"

#include <math.h>
#include <stdbool.h>

void ct_cos_add(ct_cos_sums *s, double x, double y) {
  if (isfinite(x) && isfinite(y)) {
    s->xy += x * y, s->xx += x * x, s->yy += y * y;
    return;
  }
  bool agree = (isnan(x) && isnan(y)) || x == y; /* x == y: the same infinity */
  if (!agree) s->nonfinite++;
}

void ct_cos_merge(ct_cos_sums *a, const ct_cos_sums *b) {
  a->xy += b->xy, a->xx += b->xx, a->yy += b->yy;
  a->nonfinite += b->nonfinite;
}

double ct_cos_of(const ct_cos_sums *s) {
  if (s->nonfinite) return NAN;
  if (s->xx == 0 || s->yy == 0) return s->xx == 0 && s->yy == 0 ? 1.0 : 0.0;
  return s->xy / (sqrt(s->xx) * sqrt(s->yy));
}
