/* bad.c: check_inline.sh's planted violation: a row loop under an optimize pragma that differs
 * from the header's float options, so GCC leaves bad_twice_plus_one out of line (a call per element). */
#include "bad.h"

#pragma GCC push_options
#pragma GCC optimize("fast-math")
void ct_bad_row(const float *x, float *y, long n) {
  for (long i = 0; i < n; i++) y[i] = bad_twice_plus_one(x[i]);
}
#pragma GCC pop_options
