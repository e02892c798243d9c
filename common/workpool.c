/* workpool.c: the kernels' persistent worker pool (see workpool.h).
 * A loop is a generation `gen` (even while the loop is open, odd once closed). Its chunks are
 * claimed one at a time (OpenMP schedule(dynamic) style) by the caller and by whichever
 * workers join, from `claim` = gen << 32 | next chunk, advanced by compare-and-swap only while
 * its gen is the claimer's: a worker that looked at an older loop can never take a chunk of a
 * newer one. A worker joining copies the loop's fields and checks gen is unchanged (a
 * seqlock: the fields are atomics, rewritten only while gen is odd; all accesses are
 * sequentially consistent, so a copy holding a newer field also sees the newer gen). The caller
 * returns once every chunk is finished and waits for no worker that claimed none: a worker
 * busy, parked or descheduled on a loaded machine simply does not take part.
 * Idle threads spin for at most SPIN_NS, then park on a condition variable; the caller
 * signals only when a thread is parked (sleepers), so a loop on spinning workers makes no
 * system call. Parking against posting, and the caller's parking against the last chunk's
 * end, are Dekker-style handshakes: store one variable, load the other, both sequentially
 * consistent.
 * When a loop's wait for the workers' chunks cost more than their chunks saved, by more than
 * a quarter of the caller's own time (a worker descheduled while it holds one; not a worker
 * that woke late and took one chunk), the next loops run on the caller alone, a spell that
 * doubles while this repeats (judge_loop). Results do not change: the kernels' results do not
 * depend on the split.
 * The workers are detached and the pool reference-counted: ct_workpool_free returns without
 * waiting for parked workers to be scheduled (milliseconds on a loaded machine, per inference:
 * the interpreter makes a pool per run); the last thread out frees the pool. */
#include "common/workpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define SPIN_NS 100000   /* how long an idle thread or the waiting caller polls before it parks */
#define SERIAL_MIN 4     /* loops run on the caller alone after a loop the workers slowed down */
#define SERIAL_MAX 1024  /* ... doubling while that repeats, up to this many */
#define CHUNKS_MAX ((int64_t)1 << 31) /* chunk indices fit claim's low 32 bits */

typedef struct wp_worker {
  ct_workpool *p;
  int slot;
} wp_worker;

/* One loop's fields as a thread copied them. */
typedef struct wp_loop {
  unsigned gen;
  ct_workpool_fn fn;
  void *arg;
  int64_t n, chunks;
} wp_loop;

struct ct_workpool {
  int threads;                   /* the caller plus the started workers */
  pthread_t th[CT_WORKPOOL_MAX];
  wp_worker w[CT_WORKPOOL_MAX];
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_uint gen;               /* even: the loop open for joining; odd: closed */
  atomic_bool stop;
  atomic_int refs;               /* the owner and each running worker; the last one frees */
  atomic_ullong claim;           /* gen << 32 | next chunk to claim */
  atomic_llong finished;         /* chunks of the open loop finished */
  atomic_int sleepers;           /* workers parked (or about to park) on wake */
  atomic_bool caller_parked;     /* the caller sleeps on done */
  _Atomic(ct_workpool_fn) fn;    /* the loop's fields, written while gen is odd */
  _Atomic(void *) arg;
  atomic_llong n, chunks;
  int serial_left, serial_next;  /* the caller alone: loops left, length of the next spell */
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

/* Spins up to SPIN_NS while cond(p, v) is true; returns whether it became false. */
static bool spin_while(ct_workpool *p, bool (*cond)(ct_workpool *, unsigned), unsigned v) {
  int64_t t0 = now_ns();
  for (int i = 1;; i++) {
    if (!cond(p, v)) return true;
    cpu_relax();
    if (i % 64 == 0 && now_ns() - t0 > SPIN_NS) return !cond(p, v);
  }
}

/* Claims the next chunk of loop l: its index, or -1 when none is left or l is over. */
static int64_t claim_chunk(ct_workpool *p, const wp_loop *l) {
  unsigned long long c = atomic_load(&p->claim);
  for (;;) {
    int64_t i = (int64_t)(c & 0xffffffffu);
    if ((unsigned)(c >> 32) != l->gen || i >= l->chunks) return -1;
    if (atomic_compare_exchange_weak(&p->claim, &c, c + 1)) return i;
  }
}

/* Runs chunks of loop l until none is left; the thread finishing the last one wakes a parked
 * caller. Returns how many this thread ran. */
static int64_t run_chunks(ct_workpool *p, const wp_loop *l, int slot) {
  int64_t mine = 0;
  for (int64_t c; (c = claim_chunk(p, l)) >= 0; mine++) {
    l->fn(l->arg, l->n * c / l->chunks, l->n * (c + 1) / l->chunks, slot);
    if (atomic_fetch_add(&p->finished, 1) + 1 == l->chunks && atomic_load(&p->caller_parked)) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return mine;
}

/* A worker's wait: no open loop other than `last` and no stop. */
static bool no_new_loop(ct_workpool *p, unsigned last) {
  unsigned g = atomic_load(&p->gen);
  return (g & 1 || g == last) && !atomic_load(&p->stop);
}
static bool loop_unfinished(ct_workpool *p, unsigned chunks) {
  return atomic_load(&p->finished) < (int64_t)chunks;
}

/* Waits (spin, then park) until a loop other than last opens or the pool stops. */
static void wait_loop(ct_workpool *p, unsigned last) {
  if (spin_while(p, no_new_loop, last)) return;
  atomic_fetch_add(&p->sleepers, 1);
  pthread_mutex_lock(&p->mu);
  while (no_new_loop(p, last)) pthread_cond_wait(&p->wake, &p->mu);
  pthread_mutex_unlock(&p->mu);
  atomic_fetch_sub(&p->sleepers, 1);
}

/* Copies the open loop's fields into l; false when no loop is open or it closed meanwhile. */
static bool join_loop(ct_workpool *p, wp_loop *l) {
  l->gen = atomic_load(&p->gen);
  if (l->gen & 1) return false;
  l->fn = atomic_load(&p->fn);
  l->arg = atomic_load(&p->arg);
  l->n = atomic_load(&p->n);
  l->chunks = atomic_load(&p->chunks);
  return atomic_load(&p->gen) == l->gen;
}

/* Drops one reference to p; the last one destroys it. */
static void release(ct_workpool *p) {
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

static void *worker_main(void *a) {
  wp_worker *w = a;
  ct_workpool *p = w->p;
  unsigned last = 1;
  for (;;) {
    wait_loop(p, last);
    if (atomic_load(&p->stop)) {
      release(p);
      return NULL;
    }
    wp_loop l;
    if (!join_loop(p, &l)) continue;
    run_chunks(p, &l, w->slot);
    last = l.gen;
  }
}

ct_workpool *ct_workpool_new(int threads) {
  ct_workpool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  threads = threads < 1 ? 1 : threads > CT_WORKPOOL_MAX ? CT_WORKPOOL_MAX : threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->gen, 1);
  atomic_init(&p->stop, false);
  atomic_init(&p->refs, 1);
  atomic_init(&p->claim, 0);
  atomic_init(&p->finished, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->caller_parked, false);
  atomic_init(&p->fn, NULL);
  atomic_init(&p->arg, NULL);
  atomic_init(&p->n, 0);
  atomic_init(&p->chunks, 0);
  p->serial_next = SERIAL_MIN;
  p->threads = 1;
  for (int i = 1; i < threads; i++) {
    p->w[i] = (wp_worker){p, i};
    atomic_fetch_add(&p->refs, 1);
    if (pthread_create(&p->th[i], NULL, worker_main, &p->w[i]) != 0) {
      atomic_fetch_sub(&p->refs, 1);
      break;
    }
    pthread_detach(p->th[i]);
    p->threads = i + 1;
  }
  return p;
}

void ct_workpool_free(ct_workpool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, true);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  release(p);
}

int ct_workpool_threads(const ct_workpool *p) { return p ? p->threads : 1; }

/* Opens loop l (l->gen: the next even generation) and wakes parked workers. gen is odd here:
 * the previous loop is closed, and a worker still holding its fields can claim nothing. */
static void post_loop(ct_workpool *p, const wp_loop *l) {
  atomic_store(&p->fn, l->fn);
  atomic_store(&p->arg, l->arg);
  atomic_store(&p->n, l->n);
  atomic_store(&p->chunks, l->chunks);
  atomic_store(&p->finished, 0);
  atomic_store(&p->claim, (unsigned long long)l->gen << 32);
  atomic_store(&p->gen, l->gen); /* odd → even: open */
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
  }
}

/* Waits (spin, then park) until every chunk of the open loop is finished. */
static void wait_finished(ct_workpool *p, int64_t chunks) {
  if (spin_while(p, loop_unfinished, (unsigned)chunks)) return;
  atomic_store(&p->caller_parked, true);
  pthread_mutex_lock(&p->mu);
  while (atomic_load(&p->finished) < chunks) pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
  atomic_store(&p->caller_parked, false);
}

/* After a loop of `chunks`: the caller ran `mine` of them in own_ns, then waited wait_ns for
 * the workers' last ones. Their chunks saved about own_ns / mine each; when the wait cost
 * more than that plus own_ns / 4, the next loops run on the caller alone, a spell that
 * doubles while this repeats and is back to SERIAL_MIN once the workers pay off. A loop one
 * side ran alone is not judged (a caller that took every chunk waited for nobody). */
static void judge_loop(ct_workpool *p, int64_t chunks, int64_t mine, int64_t own_ns, int64_t wait_ns) {
  if (mine == 0 || mine == chunks) return; /* one side ran it all: the workers cost no wait to judge */
  if (wait_ns <= own_ns / mine * (chunks - mine) + own_ns / 4) {
    p->serial_next = SERIAL_MIN;
    return;
  }
  p->serial_left = p->serial_next;
  p->serial_next = p->serial_next < SERIAL_MAX ? 2 * p->serial_next : SERIAL_MAX;
}

void ct_workpool_for(ct_workpool *p, int64_t n, int64_t chunks, ct_workpool_fn fn, void *arg) {
  if (n <= 0) return;
  bool par = p && p->threads > 1 && chunks > 1 && n > 1;
  if (par && p->serial_left > 0) p->serial_left--, par = false;
  if (!par) {
    fn(arg, 0, n, 0);
    return;
  }
  chunks = chunks < n ? chunks : n;
  wp_loop l = {atomic_load(&p->gen) + 1, fn, arg, n, chunks < CHUNKS_MAX ? chunks : CHUNKS_MAX};
  int64_t t0 = now_ns();
  post_loop(p, &l);
  int64_t mine = run_chunks(p, &l, 0), t1 = now_ns();
  wait_finished(p, l.chunks);
  atomic_store(&p->gen, l.gen + 1); /* even → odd: closed */
  judge_loop(p, l.chunks, mine, t1 - t0, now_ns() - t1);
}
