/* bench_infer.c: ctpu side of the inference benchmark: loads a Top module (ct_ir_load) and
 * its inputs (ct_inputs_load), runs the float interpreter to warm up (at least once, and until
 * WARM_MS after start-up: OpenBLAS's pthread workers spin-wait for ~0.1 s after the library
 * loads, taking a core from ctpu's pool — fmnist-rescnn at 2 threads measured 1.64 ms instead
 * of 0.71 ms inside that window; onnxruntime's numbers are steady-state too), then RUNS timed
 * runs per thread count on one worker pool (kept across the runs, as onnxruntime keeps its
 * session's; so is a ct_ref_consts, the results of ops on constants only, as its folded
 * constants); prints "THREADS MEDIAN_MS" lines (CLOCK_MONOTONIC wall time; with the
 * environment variable BENCH_CPU set, the process's CPU time instead).
 * usage: bench_infer MODEL.top RUNS THREADS[,THREADS...] INPUT... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "common/h5io.h"
#include "ir/text.h"
#include "io/inputs.h"
#include "reference/interp.h"

#define MAX_RUNS 1000
#define WARM_MS 300.0 /* warm-up lasts at least this long after start-up */

static double t_start_ms;

static clockid_t run_clock = CLOCK_MONOTONIC;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The clock of the timed runs: wall time, or with BENCH_CPU set the process's CPU time (all
 * threads; steadier than wall time on a loaded machine, at 1 thread). */
static double run_ms(void) {
  struct timespec ts;
  clock_gettime(run_clock, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One inference on pool (NULL: one thread); its wall time in ms into *ms. */
static ct_status run_once(const ct_graph *g, ct_workpool *pool, ct_ref_consts *consts, const ct_tensor_list *in,
                          double *ms, ct_diag *d) {
  ct_tensor_list out;
  ct_tensor_list_init(&out);
  ct_ref_options opt = {.threads = 1, .pool = pool, .consts = consts};
  double t0 = run_ms();
  ct_status st = ct_ref_run(g, &opt, in, &out, d);
  *ms = run_ms() - t0;
  ct_tensor_list_free(&out);
  return st;
}

/* Median of `runs` timed runs after the warm-up (one run, more until WARM_MS after start). */
static ct_status median_ms(const ct_graph *g, int threads, int runs, const ct_tensor_list *in, double *med,
                           ct_diag *d) {
  double t[MAX_RUNS];
  ct_workpool *pool = threads > 1 ? ct_workpool_new(threads) : NULL; /* one per thread count, as a session's */
  ct_ref_consts *consts = ct_ref_consts_new(); /* constant-operand results, as a session's folded constants */
  if ((threads > 1 && !pool) || !consts) {
    ct_workpool_free(pool), ct_ref_consts_free(consts);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  ct_status st = run_once(g, pool, consts, in, &t[0], d);
  while (st == CT_OK && now_ms() - t_start_ms < WARM_MS) st = run_once(g, pool, consts, in, &t[0], d);
  for (int i = 0; st == CT_OK && i < runs; i++) st = run_once(g, pool, consts, in, &t[i], d);
  ct_workpool_free(pool);
  ct_ref_consts_free(consts);
  if (st) return st;
  qsort(t, (size_t)runs, sizeof t[0], cmp_double);
  *med = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  return CT_OK;
}

static ct_status bench(const char *model, int runs, char *threads, const char *const *files, int n, ct_diag *d) {
  ct_graph *g = NULL;
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  ct_status st = ct_ir_load(model, &g, d);
  if (st == CT_OK) st = ct_inputs_load(g, files, n, &in, d);
  for (char *tok = strtok(threads, ","); st == CT_OK && tok; tok = strtok(NULL, ",")) {
    double med = 0;
    int th = atoi(tok);
    st = median_ms(g, th < 1 ? 1 : th, runs, &in, &med, d);
    if (st == CT_OK) printf("%d %.3f\n", th, med);
    fflush(stdout);
  }
  ct_tensor_list_free(&in);
  ct_graph_free(g);
  return st;
}

int main(int argc, char **argv) {
  t_start_ms = now_ms();
  if (getenv("BENCH_CPU")) run_clock = CLOCK_PROCESS_CPUTIME_ID;
  if (argc < 5) {
    fprintf(stderr, "usage: bench_infer MODEL.top RUNS THREADS[,THREADS...] INPUT...\n");
    return 2;
  }
  int runs = atoi(argv[2]);
  if (runs < 1 || runs > MAX_RUNS) {
    fprintf(stderr, "bench_infer: RUNS must be 1..%d\n", MAX_RUNS);
    return 2;
  }
#ifdef __GLIBC__
  /* keep freed tensor buffers in the heap for the next run instead of returning them to the
   * OS (onnxruntime keeps its arena too): a fresh page costs a page fault */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = bench(argv[1], runs, argv[3], (const char *const *)argv + 4, argc - 4, &d);
  if (st) fprintf(stderr, "bench_infer: %s\n", d.msg);
  return (int)st;
}
