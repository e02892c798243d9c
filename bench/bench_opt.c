/* bench_opt.c: times the canonicalize pipeline (compiler/pass.h) on every real model under a
 * models folder (default ../shared/models): median of 5 runs on fresh imports, without and
 * with per-pass verification, plus op counts before/after. Usage: bench_opt [MODELS_DIR]. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnx/onnx.h"
#include "compiler/pass.h"
#include "compiler/propagate.h"

#define RUNS 5

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median canonicalize time in ms over RUNS fresh imports; ops before/after; -1 on error. */
static double time_model(const char *path, bool verify, int *before, int *after) {
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    ct_graph *g = NULL;
    ct_diag d;
    if (ct_onnx_import(path, NULL, &g, &d) != CT_OK || ct_top_propagate(g, &d) != CT_OK) {
      fprintf(stderr, "bench_opt: %s\n", d.msg);
      ct_graph_free(g);
      return -1;
    }
    *before = g->n_ops;
    ct_pass_options o;
    ct_pass_options_init(&o);
    o.verify_each = verify;
    double t0 = now_ms();
    ct_status st = ct_pass_run_pipeline(g, "canonicalize", &o, &d);
    t[r] = now_ms() - t0;
    *after = g->n_ops;
    ct_graph_free(g);
    if (st != CT_OK) {
      fprintf(stderr, "bench_opt: %s: %s\n", path, d.msg);
      return -1;
    }
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "../shared/models";
  DIR *dp = opendir(dir);
  if (!dp) {
    fprintf(stderr, "bench_opt: cannot open %s (pass the models folder)\n", dir);
    return 3;
  }
  char *names[64];
  int n = 0;
  for (struct dirent *e; (e = readdir(dp)) && n < 64;)
    if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
  closedir(dp);
  qsort(names, (size_t)n, sizeof names[0], cmp_name);
  printf("%-36s %8s %8s %14s %18s\n", "model", "ops in", "ops out", "canon ms", "canon+verify ms");
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
    FILE *f = fopen(path, "rb");
    if (!f) { free(names[i]); continue; }
    fclose(f);
    int b = 0, a = 0;
    double t = time_model(path, false, &b, &a), tv = t >= 0 ? time_model(path, true, &b, &a) : -1;
    if (t < 0 || tv < 0) rc = 1;
    else printf("%-36s %8d %8d %14.2f %18.2f\n", names[i], b, a, t, tv);
    free(names[i]);
  }
  return rc;
}
