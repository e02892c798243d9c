/* cmd_sweep.c: `ctpu sweep SPEC.json -o RESULTS/ [--jobs N] [--slurm] [--compare-all]`: runs
 * a design-space sweep (sweep/sweep.h, docs/sweep.md): one ctpu deploy per point through GNU
 * parallel (one after another without it), resumable; or writes a Slurm array job of the same
 * per-point commands; then rebuilds RESULTS/results.csv from the point folders. */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep/sweep.h"
#include "tools/tools.h"

#define CMD "sweep"

extern char **environ;

typedef struct sweep_args {
  const char *spec, *out;
  int jobs;
  bool slurm, compare_all;
} sweep_args;

static const ct_opt opts[] = {
    CT_OPT_NEED_("-o", "RESULTS", sweep_args, out, "output",
                 "the results folder: points/<id>/ (chip.json, program, groups CSV, layers.csv, summary.json, "
                 "deploy.log), commands.txt, point.sh, results.csv"),
    CT_OPT_INT_("--jobs", "N", sweep_args, jobs, 1, 1024, "points run at once by GNU parallel (default 2)"),
    CT_OPT_FLAG_("--slurm", sweep_args, slurm, "write RESULTS/sweep.sbatch (a Slurm array job of the same per-point "
                 "commands) instead of running the points"),
    CT_OPT_FLAG_("--compare-all", sweep_args, compare_all, "every point compares every stored tensor (deploy "
                 "--compare-all)"),
};

const ct_cmd_spec ct_cmd_sweep_spec = CT_CMD_SPEC1(
    CMD, "SPEC.json -o RESULTS [--jobs N] [--slurm] [--compare-all]",
    "runs ctpu deploy over models × quantize modes × layer-group strategies × chip points (docs/sweep.md); "
    "finished points are skipped; RESULTS/results.csv gathers every point, group and layer",
    "spec", sweep_args, spec, opts);

/* Runs argv (PATH searched) and waits; returns its exit code, or -1 when it could not start. */
static int run(char *const argv[]) {
  pid_t pid;
  if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ)) return -1;
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* True when name is an executable in PATH. */
static bool in_path(const char *name) {
  const char *path = getenv("PATH");
  char buf[PATH_MAX];
  for (const char *p = path ? path : ""; *p;) {
    size_t n = strcspn(p, ":");
    snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, name);
    if (n && access(buf, X_OK) == 0) return true;
    p += n + (p[n] == ':');
  }
  return false;
}

/* Runs the pending points of results: GNU parallel with jobs slots, else one by one. */
static void run_points(const char *results, int jobs, int n_pending) {
  char script[PATH_MAX + 16], list[PATH_MAX + 16], jobs_s[16];
  snprintf(script, sizeof script, "%s/point.sh", results);
  snprintf(list, sizeof list, "%s/pending.txt", results);
  snprintf(jobs_s, sizeof jobs_s, "%d", jobs);
  if (in_path("parallel")) {
    fprintf(stderr, "sweep: %d point(s) to run, %d at a time (GNU parallel)\n", n_pending, jobs);
    char *argv[] = {"parallel", "--jobs", jobs_s, "--halt", "never", "sh", script, "::::", list, NULL, NULL};
    if (ct_tool_isatty()) memmove(argv + 2, argv + 1, 9 * sizeof *argv), argv[1] = "--bar"; /* progress on a terminal */
    if (run(argv) < 0) fprintf(stderr, "sweep: cannot start GNU parallel\n");
    return;
  }
  fprintf(stderr, "sweep: GNU parallel not found (Debian package parallel): running %d point(s) one after another\n",
          n_pending);
  FILE *f = fopen(list, "r");
  for (int i; f && fscanf(f, "%d", &i) == 1;) {
    char id[16];
    snprintf(id, sizeof id, "%d", i);
    char *argv[] = {"sh", script, id, NULL};
    run(argv);
  }
  if (f) fclose(f);
}

/* The absolute form of path (not resolved: the folder may not exist yet); NULL on error. */
static char *absolute(const char *path) {
  char cwd[PATH_MAX];
  if (path[0] == '/') return strdup(path);
  if (!getcwd(cwd, sizeof cwd)) return NULL;
  size_t n = strlen(cwd) + strlen(path) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", cwd, path);
  while (s && strlen(s) > 1 && s[strlen(s) - 1] == '/') s[strlen(s) - 1] = '\0';
  return s;
}

/* Prepares the folder, runs (or writes the Slurm job) and collects; *c the final counts. */
static ct_status sweep(const sweep_args *a, const ct_sweep *s, const char *results, ct_sweep_counts *c, ct_diag *d) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return ct_diag_set(d, CT_ERR_INTERNAL, "cannot find the ctpu executable (/proc/self/exe)");
  self[n] = '\0';
  int pending = 0;
  ct_status st = ct_sweep_prepare(s, self, results, a->compare_all, &pending, d);
  if (!st && a->slurm) st = ct_sweep_write_sbatch(s, results, d);
  if (!st && a->slurm)
    fprintf(stderr, "sweep: wrote %s/sweep.sbatch (%d tasks): sbatch it, then run this command again without --slurm "
                    "to rebuild results.csv\n", results, s->n_points);
  else if (!st && pending)
    run_points(results, a->jobs, pending);
  if (!st) st = ct_sweep_collect(s, results, c, d);
  return st;
}

int ct_cmd_sweep(int argc, char **argv) {
  sweep_args a = {.jobs = 2};
  int rc = ct_opts_parse(&ct_cmd_sweep_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_sweep *s = NULL;
  char *results = absolute(a.out);
  ct_sweep_counts c = {0};
  ct_status st = results ? ct_sweep_load(a.spec, &s, &d) : ct_diag_set(&d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = sweep(&a, s, results, &c, &d);
  if (!st)
    fprintf(stderr, "sweep: %d points: %d done, %d over a chip limit, %d failed, %d pending; %s/results.csv: %d rows\n",
            s->n_points, c.done, c.limit, c.failed, c.pending, results, c.rows);
  ct_sweep_free(s);
  free(results);
  if (st) return ct_tool_fail(CMD, &d);
  return c.failed || (c.pending && !a.slurm) ? 1 : 0;
}
