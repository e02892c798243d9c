/* cmd_refine.c: `ctpu refine MODEL.top --calibration-table T --dataset D -o T2`: refines the
 * thresholds of a calibration table by the error of the whole INT8 model (docs/calibration.md
 * "ctpu refine"; ptq/refine.h: coordinate descent scored by the output cosine). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/heap.h"
#include "common/outset.h"
#include "common/workpool.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "ptq/refine.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "refine"

typedef struct rf_args {
  const char *model, *calib, *dataset, *out, *qtable;
  long long input_num, passes, threads;
  bool lut16;
} rf_args;

static const ct_opt opts[] = {
    CT_OPT_NEED_("--calibration-table", "T", rf_args, calib, "calibration table", "the table to refine (ctpu calibrate)"),
    CT_OPT_NEED_("--dataset", "D", rf_args, dataset, "data set", "the samples (as ctpu calibrate reads them)"),
    CT_OPT_NEED_("-o", "T2", rf_args, out, "output", "the refined table"),
    CT_OPT_LLONG_("--input-num", "N", rf_args, input_num, 1, LLONG_MAX, "samples of the data set used (default 8)"),
    CT_OPT_LLONG_("--passes", "P", rf_args, passes, 1, 8, "passes over the table, each with finer factors (default 1)"),
    CT_OPT_LLONG_("--threads", "N", rf_args, threads, 1, CT_WORKPOOL_MAX, "samples run in parallel (default 1)"),
    CT_OPT_LUT_INPUT(rf_args, lut16),
    CT_OPT_STR_("--quantize-table", "Q", rf_args, qtable, "lower as `ctpu lower --quantize-table Q` will"),
};

const ct_cmd_spec ct_cmd_refine_spec = CT_CMD_SPEC1(
    CMD, "MODEL.top --calibration-table T --dataset D -o T2 [options]",
    "refines the thresholds of T by the INT8 model's output cosine vs float on the samples (coordinate descent "
    "over every tensor's threshold; loss-aware PTQ); --lut-input as ctpu lower will be given",
    "model", rf_args, model, opts);

static int parse_args(int argc, char **argv, rf_args *a) {
  *a = (rf_args){.input_num = 8, .passes = 1, .threads = 1};
  return ct_opts_parse(&ct_cmd_refine_spec, argc, argv, a);
}

static void on_row(void *user, int pass, int64_t r, int64_t rows, double score, int changed) {
  const rf_args *a = user;
  if (ct_tool_isatty())
    fprintf(stderr, "\rctpu refine: pass %d/%lld, tensor %lld/%lld, output cosine %.6f, %d changed   ", pass + 1,
            a->passes, (long long)r + 1, (long long)rows, score, changed);
}

/* Scores the table, runs the passes and writes the refined table to tmp with comment lines
 * saying what was done. */
static ct_status refine(const rf_args *a, ct_ptq_refine *r, const char *tmp, ct_diag *d) {
  ct_status st = ct_ptq_refine_start(r, d);
  if (!st) printf("samples %lld, tensors %lld\nstart: output cosine %.6f\n", (long long)r->sm->n, (long long)r->table->n, r->start);
  int total = 0;
  for (int p = 0; !st && p < a->passes; p++) {
    int changed = 0;
    st = ct_ptq_refine_pass(r, p, &changed, d);
    if (ct_tool_isatty()) fputc('\n', stderr);
    total += changed;
    if (!st) printf("pass %d: output cosine %.6f, %d thresholds changed\n", p + 1, r->score, changed);
    fflush(stdout);
  }
  char line[2][200];
  snprintf(line[0], sizeof line[0], "refined by ctpu refine from %s: output cosine %.6f -> %.6f on %lld samples",
           a->calib, r->start, r->score, (long long)r->sm->n);
  snprintf(line[1], sizeof line[1], "%lld passes, %d thresholds changed, %lld lowerings run, %lld%s", a->passes, total,
           r->evals, r->skipped, a->lut16 ? " without effect, --lut-input 16" : " without effect");
  const char *lines[2] = {line[0], line[1]};
  if (!st) st = ct_calib_table_write(tmp, r->table, lines, 2, d);
  if (!st) printf("%s: output cosine %.6f -> %.6f (%d thresholds changed)\n", a->out, r->start, r->score, total);
  return st;
}

/* Reads the inputs and refines (refine). */
static ct_status run(const rf_args *a, ct_diag *d) {
  ct_outset os;
  ct_outset_init(&os, CMD);
  const char *tmp = NULL;
  ct_calib_table t;
  ct_qtable q;
  ct_calib_table_init(&t);
  ct_qtable_init(&q);
  ct_graph *g = NULL;
  ct_ptq_samples sm = {0};
  ct_status st = ct_tool_in_model(&os, a->model, NULL, d);
  const char *in[3] = {a->calib, a->qtable, a->dataset};
  for (int i = 0; !st && i < 3; i++) st = ct_outset_input(&os, in[i], d);
  if (!st) st = ct_outset_add(&os, a->out, &tmp, d);
  if (!st) st = ct_calib_table_read(a->calib, &t, d);
  if (!st && a->qtable) st = ct_qtable_read(a->qtable, &q, d);
  if (!st) st = ct_ptq_load_top(a->model, a->dataset, a->input_num, "refine lowers a float model", &g, &sm, d);
  if (!st) st = ct_tool_in_model(&os, a->model, g, d);
  if (!st) st = ct_tool_in_dataset_of(&os, a->dataset, g, d);
  if (!st) st = ct_outset_check(&os, d);
  ct_ptq_refine r = {.src = ct_ptq_source_file(a->model), .table = &t, .qtable = a->qtable ? &q : NULL,
                     .lut16 = a->lut16, .sm = &sm, .threads = (int)a->threads, .on_row = on_row, .user = (void *)a};
  if (!st) st = refine(a, &r, tmp, d);
  st = ct_outset_end(&os, st, d);
  ct_ptq_refine_free(&r);
  ct_ptq_samples_free(&sm);
  ct_calib_table_free(&t);
  ct_qtable_free(&q);
  ct_graph_free(g);
  return st;
}

int ct_cmd_refine(int argc, char **argv) {
  rf_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_heap_keep_freed();
  ct_status st = run(&a, &d);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
