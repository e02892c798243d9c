/* workpool.h: a persistent pool of worker threads for the reference kernels' parallel loops
 * (a fork-join parallel-for with dynamically claimed chunks, as OpenMP's schedule(dynamic)).
 * The interpreter owns one per run and hands it to kernels through ct_kernel_ctx.pool. */
#ifndef CT_WORKPOOL_H
#define CT_WORKPOOL_H

#include <stdint.h>

typedef struct ct_workpool ct_workpool;

/* Body of a parallel loop: handles elements [lo, hi) of the range. slot (in [0, threads) of
 * the pool) names the thread running it: two calls with the same slot never overlap, so slot
 * can index per-thread scratch. */
typedef void (*ct_workpool_fn)(void *arg, int64_t lo, int64_t hi, int slot);

/* A pool running loops on the calling thread plus threads - 1 worker threads (pthreads,
 * started here). Idle workers spin for at most ~0.1 ms after a loop, then park on a condition
 * variable until the next loop posts. threads is clamped to [1, CT_WORKPOOL_MAX]. Returns
 * NULL when out of memory; if some workers cannot be started the pool has fewer threads. */
ct_workpool *ct_workpool_new(int threads);
#define CT_WORKPOOL_MAX 64

/* Stops the workers and releases p (NULL is a no-op) without waiting for them: each worker
 * exits when next scheduled, and the last thread out frees the pool. No loop may be running. */
void ct_workpool_free(ct_workpool *p);

/* Threads a loop of p runs on (the caller included); 1 for NULL. */
int ct_workpool_threads(const ct_workpool *p);

/* Runs fn over [0, n) split into `chunks` contiguous ranges of near-equal size (range i is
 * [n i / chunks, n (i + 1) / chunks)), claimed one at a time by the caller and the workers
 * that join (a worker busy elsewhere, parked or descheduled claims none and is not waited
 * for); returns when every range is done. With p NULL, one thread, or chunks <= 1: one call
 * fn(arg, 0, n, 0) on the caller's thread. Results must not depend on which slot runs a range.
 * Not reentrant: one loop at a time per pool, started from one thread. */
void ct_workpool_for(ct_workpool *p, int64_t n, int64_t chunks, ct_workpool_fn fn, void *arg);

#endif
