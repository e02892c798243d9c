/* workpool.c: the kernels' persistent worker pool (see workpool.h): a fork-join loop whose
 * chunks are claimed from an atomic counter (OpenMP schedule(dynamic) style); idle workers
 * spin briefly on a generation counter, then sleep on a condition variable. */
#include "common/workpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define SPIN_NS 200000 /* how long an idle thread polls before it sleeps */

typedef struct wp_worker {
  ct_workpool *p;
  int slot;
} wp_worker;

struct ct_workpool {
  int threads;                   /* the caller plus the started workers */
  pthread_t th[CT_WORKPOOL_MAX];
  wp_worker w[CT_WORKPOOL_MAX];
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_uint gen;               /* bumped (under mu) when a loop is posted or on stop */
  atomic_bool stop;
  atomic_int pending;            /* workers that have not left the current loop */
  atomic_llong next;             /* next chunk to claim */
  ct_workpool_fn fn;             /* the current loop, fixed while pending > 0 */
  void *arg;
  int64_t n, chunks;
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_ia32_pause();
#endif
}

/* Runs chunks of the current loop until none is left. */
static void run_chunks(ct_workpool *p, int slot) {
  for (;;) {
    int64_t c = atomic_fetch_add(&p->next, 1);
    if (c >= p->chunks) return;
    p->fn(p->arg, p->n * c / p->chunks, p->n * (c + 1) / p->chunks, slot);
  }
}

/* Spins up to SPIN_NS while cond(p, v) is true; returns whether it became false. */
static bool spin_while(ct_workpool *p, bool (*cond)(ct_workpool *, unsigned), unsigned v) {
  int64_t t0 = now_ns();
  for (int i = 1;; i++) {
    if (!cond(p, v)) return true;
    cpu_relax();
    if (i % 256 == 0 && now_ns() - t0 > SPIN_NS) return !cond(p, v);
  }
}

static bool no_new_loop(ct_workpool *p, unsigned seen) { return atomic_load(&p->gen) == seen && !atomic_load(&p->stop); }
static bool loop_busy(ct_workpool *p, unsigned unused) { return (void)unused, atomic_load(&p->pending) != 0; }

static void *worker_main(void *a) {
  wp_worker *w = a;
  ct_workpool *p = w->p;
  unsigned seen = 0;
  for (;;) {
    if (!spin_while(p, no_new_loop, seen)) {
      pthread_mutex_lock(&p->mu);
      while (no_new_loop(p, seen)) pthread_cond_wait(&p->wake, &p->mu);
      pthread_mutex_unlock(&p->mu);
    }
    if (atomic_load(&p->stop)) return NULL;
    seen = atomic_load(&p->gen);
    run_chunks(p, w->slot);
    if (atomic_fetch_sub(&p->pending, 1) == 1) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

ct_workpool *ct_workpool_new(int threads) {
  ct_workpool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  threads = threads < 1 ? 1 : threads > CT_WORKPOOL_MAX ? CT_WORKPOOL_MAX : threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->gen, 0);
  atomic_init(&p->stop, false);
  atomic_init(&p->pending, 0);
  atomic_init(&p->next, 0);
  p->threads = 1;
  for (int i = 1; i < threads; i++) {
    p->w[i] = (wp_worker){p, i};
    if (pthread_create(&p->th[i], NULL, worker_main, &p->w[i]) != 0) break;
    p->threads = i + 1;
  }
  return p;
}

void ct_workpool_free(ct_workpool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, true);
  atomic_fetch_add(&p->gen, 1);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 1; i < p->threads; i++) pthread_join(p->th[i], NULL);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

int ct_workpool_threads(const ct_workpool *p) { return p ? p->threads : 1; }

void ct_workpool_for(ct_workpool *p, int64_t n, int64_t chunks, ct_workpool_fn fn, void *arg) {
  if (n <= 0) return;
  if (!p || p->threads <= 1 || chunks <= 1 || n == 1) {
    fn(arg, 0, n, 0);
    return;
  }
  p->fn = fn, p->arg = arg, p->n = n, p->chunks = chunks < n ? chunks : n;
  atomic_store(&p->next, 0);
  atomic_store(&p->pending, p->threads - 1);
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add(&p->gen, 1);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  run_chunks(p, 0);
  if (!spin_while(p, loop_busy, 0)) {
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->pending) != 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
}
