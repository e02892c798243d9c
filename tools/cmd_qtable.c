/* cmd_qtable.c: `ctpu qtable MODEL.top --calibration-table T --dataset D --expected-cos C -o Q`:
 * mixed precision search (TPU-MLIR's search_qtable, docs/qtable.md; ptq/qtable_search.h):
 * ranks the ops of an INT8 lowering by the cosine each one loses, finds the fewest of the
 * worst ones to keep in BF16/F16 so that the output cosine reaches the target, and writes them
 * as a quantize table. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "ptq/qtable_search.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "qtable"

typedef struct qt_args {
  const char *model, *calib, *dataset, *out;
  long long input_num, max_float, probe;
  double expected_cos;
  ct_qmode float_mode;
} qt_args;

static int set_float_mode(void *args, const char *cmd, const ct_opt *o, const char *v) {
  ct_qmode m = ct_qmode_from_name(v);
  if (m != CT_QMODE_BF16 && m != CT_QMODE_F16) return ct_tool_usage(cmd, "%s needs BF16 or F16, not \"%s\"", o->name, v);
  ((qt_args *)args)->float_mode = m;
  return 0;
}

static const ct_opt opts[] = {
    CT_OPT_NEED_("--calibration-table", "T", qt_args, calib, "calibration table", "the INT8 thresholds (ctpu calibrate)"),
    CT_OPT_NEED_("--dataset", "D", qt_args, dataset, "data set", "the samples (as ctpu calibrate reads them)"),
    CT_OPT_NEED_("-o", "QTABLE", qt_args, out, "output", "the quantize table (ctpu lower --quantize-table)"),
    CT_OPT_LLONG_("--input-num", "N", qt_args, input_num, 1, LLONG_MAX, "samples of the data set used (default 10)"),
    CT_OPT_UNIT_("--expected-cos", "C", qt_args, expected_cos, "target output cosine (default 0.99)"),
    CT_OPT_LLONG_("--max-float-layers", "N", qt_args, max_float, 0, LLONG_MAX, "at most N float layers (default no limit)"),
    CT_OPT_FN_("--float-mode", "BF16|F16", set_float_mode, "precision of the float layers (default BF16)"),
    CT_OPT_LLONG_("--probe", "N", qt_args, probe, 0, LLONG_MAX,
                  "re-rank the N worst layers by the output cosine each one alone in float gives (N lowerings; default 0: "
                  "local ranking)"),
};

const ct_cmd_spec ct_cmd_qtable_spec = CT_CMD_SPEC1(
    CMD, "MODEL.top --calibration-table T --dataset D -o QTABLE [options]",
    "mixed precision search (TPU-MLIR search_qtable): the fewest layers to keep in float so that the INT8 "
    "model's output cosine vs the float model reaches --expected-cos",
    "model", qt_args, model, opts);

static int parse_args(int argc, char **argv, qt_args *a) {
  *a = (qt_args){.input_num = 10, .max_float = -1, .expected_cos = 0.99, .float_mode = CT_QMODE_BF16};
  return ct_opts_parse(&ct_cmd_qtable_spec, argc, argv, a);
}

/* on_try of the search: one line per step on stdout (and stderr on a terminal). */
static void on_try(void *user, int k, int64_t rows, double cos) {
  (void)user;
  printf("float layers %d (%lld with their per-channel chains): cosine %.6f\n", k, (long long)rows, cos);
  fflush(stdout);
  if (ct_tool_isatty()) fprintf(stderr, "ctpu qtable: %d float layers, cosine %.6f\n", k, cos);
}

static void on_probe(void *user, int done, int total) {
  (void)user;
  if (ct_tool_isatty()) fprintf(stderr, "\rctpu qtable: probe %d/%d", done, total);
}

static void print_ranking(const ct_ptq_ranking *r, int64_t n) {
  printf("samples %lld\nint8 cosine %.6f\nworst layers (cosine lost, cosine):\n", (long long)n, r->cos0);
  for (int i = 0; i < r->n && i < 5; i++)
    printf("  %s %.6f %.6f\n", r->layers[i].op->out[0]->name, r->layers[i].loss, r->layers[i].cos);
  fflush(stdout);
}

static void print_probed(const ct_ptq_ranking *r) {
  if (ct_tool_isatty() && r->probed > 0) fputc('\n', stderr);
  if (r->probed > 0) printf("probed %d layers; best alone in float (output cosine):\n", r->probed);
  for (int i = 0; i < r->probed && i < 5; i++) printf("  %s %.6f\n", r->layers[i].op->out[0]->name, r->layers[i].cos);
}

/* Ranks, probes, searches (ptq/qtable_search.h) and writes the table to tmp. */
static ct_status search(const qt_args *a, const ct_ptq_qtable_ctx *c, const char *tmp, ct_diag *d) {
  ct_ptq_ranking r = {0};
  ct_qtable rows;
  ct_qtable_init(&rows);
  int best = 0;
  double best_cos = 0;
  ct_status st = ct_ptq_qtable_rank(c, &r, d);
  if (!st) print_ranking(&r, c->sm->n);
  if (!st) st = ct_ptq_qtable_probe(c, &r, a->probe, d);
  if (!st) print_probed(&r);
  if (!st) st = ct_ptq_qtable_search(c, &r, a->max_float, &best, &best_cos, d);
  if (!st) st = ct_ptq_qtable_rows(c, &r, best, &rows, d);
  if (!st) st = ct_qtable_write(tmp, &rows, d);
  if (!st) {
    printf("%s: %lld float layers (%s), cosine %.6f%s\n", a->out, (long long)rows.n, ct_qmode_name(a->float_mode), best_cos,
           best_cos >= a->expected_cos ? "" : " (target not reached)");
  }
  ct_qtable_free(&rows);
  ct_ptq_ranking_free(&r);
  return st;
}

static ct_status run(const qt_args *a, ct_diag *d) {
  ct_outset os;
  ct_outset_init(&os, CMD);
  const char *tmp = NULL;
  ct_calib_table calib;
  ct_calib_table_init(&calib);
  ct_graph *g = NULL;
  ct_ptq_samples sm = {0};
  ct_status st = ct_tool_in_model(&os, a->model, NULL, d);
  if (!st) st = ct_outset_input(&os, a->calib, d);
  if (!st) st = ct_outset_input(&os, a->dataset, d);
  if (!st) st = ct_outset_add(&os, a->out, &tmp, d);
  if (!st) st = ct_calib_table_read(a->calib, &calib, d);
  if (!st) st = ct_ptq_load_top(a->model, a->dataset, a->input_num, "qtable searches a float model", &g, &sm, d);
  if (!st) st = ct_tool_in_model(&os, a->model, g, d);
  if (!st) st = ct_tool_in_dataset_of(&os, a->dataset, g, d);
  if (!st) st = ct_outset_check(&os, d);
  ct_ptq_qtable_ctx c = {.top = g, .src = ct_ptq_source_file(a->model), .calib = &calib, .sm = &sm,
                         .float_mode = a->float_mode, .expected_cos = a->expected_cos, .on_try = on_try,
                         .on_probe = on_probe};
  if (!st) st = search(a, &c, tmp, d);
  st = ct_outset_end(&os, st, d);
  ct_ptq_samples_free(&sm);
  ct_calib_table_free(&calib);
  ct_graph_free(g);
  return st;
}

int ct_cmd_qtable(int argc, char **argv) {
  qt_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = run(&a, &d);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
