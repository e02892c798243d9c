/* clock.c: the monotonic clock (clock.h). */
#include "common/clock.h"

#include <time.h>

double ct_clock_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
