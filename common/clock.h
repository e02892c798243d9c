/* clock.h: wall-clock time for the tools' own measurements (compile and search times). */
#ifndef CT_CLOCK_H
#define CT_CLOCK_H

/* Seconds on the monotonic clock (CLOCK_MONOTONIC: unaffected by changes of the date) from
 * an arbitrary origin; differences of two calls are elapsed wall time. */
double ct_clock_seconds(void);

#endif
