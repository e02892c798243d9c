/* cmd_deploy.c: `ctpu deploy MODEL.onnx|.top|.tpu [--quantize M [--calibration-table T]]
 * [--chip C.json] [--layer-group S] -o OUT.ctpu [--test-input F...
 * [--test-reference REF.h5 [--tolerance C,E]] [--compare-all]] [--mxu-report F.csv]`: lowers the
 * model if needed (deploy/load.h), plans and generates the program of a whole Tpu module (INT8,
 * BF16, F16, F32), optionally runs it on the cmodel and compares it with the Tpu reference run
 * in-process (deploy/flow.h; TPU-MLIR's model_deploy; docs/backend.md "Deploy"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"
#include "common/clock.h"
#include "compiler/backend/lg.h"
#include "deploy/flow.h"
#include "deploy/load.h"
#include "deploy/mxu.h"
#include "deploy/search.h"
#include "deploy/summary.h"
#include "traces/report.h"
#include "io/compare.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "deploy"
#define MAX_FILES 16

typedef struct deploy_args {
  const char *model, *out, *chip, *ref, *quantize, *calib, *input_shapes, *mxu, *summary, *report;
  const char *files[MAX_FILES];
  int n_files;
  bool compare_all;
  int search_evals, search_seconds; /* --layer-group search's budget */
  bool tol_given;     /* --tolerance given; else by the dtypes compared (io/compare.h) */
  ct_compare_tol tol; /* --tolerance for --test-reference */
  ct_lg_options opt;
} deploy_args;

static int set_tol(void *args, const char *cmd, const ct_opt *o, const char *v) {
  deploy_args *a = args;
  if (!ct_tool_parse_tol(v, &a->tol)) return ct_tool_usage(cmd, "%s wants COS,EUC (e.g. 0.99,0.90), not \"%s\"", o->name, v);
  a->tol_given = true;
  return 0;
}

static int set_strategy(void *args, const char *cmd, const ct_opt *o, const char *v) {
  if (!ct_lg_strategy_parse(v, &((deploy_args *)args)->opt.strategy))
    return ct_tool_usage(cmd, "%s must be none, greedy, dp, longest, max or search, not \"%s\"", o->name, v);
  return 0;
}

static const ct_opt opts[] = {
    CT_OPT_NEED_("-o", "OUT.ctpu", deploy_args, out, "output", "the program, and OUT.ctpu.groups.csv (per group: layers, "
                 "tile shape, tiles, LMEM bytes, estimated cycles and, after simulation, simulated cycles, MXU "
                 "utilization, DDR bytes, busy cycles per engine kind, bound, schedule efficiency)"),
    CT_OPT_STR_("--quantize", "M", deploy_args, quantize,
                "lower an ONNX model or Top module first (INT8, BF16, F16, F32), as ctpu transform + ctpu lower do "
                "(ONNX: no image preprocessing)"),
    CT_OPT_STR_("--calibration-table", "T", deploy_args, calib, "INT8 thresholds for a float model (ctpu calibrate)"),
    CT_OPT_STR_("--input-shapes", "S", deploy_args, input_shapes, "fix an ONNX model's input shapes (as ctpu transform)"),
    CT_OPT_STR_("--chip", "C.json", deploy_args, chip, "chip configuration (default: the built-in chip)"),
    CT_OPT_FN_("--layer-group", "S", set_strategy,
               "none, greedy, dp (default), longest, max, or search: groupings measured on the cmodel (from the "
               "strategies' plans, local moves while the cycles fall; docs/backend.md)"),
    CT_OPT_INT_("--search-evals", "N", deploy_args, search_evals, 1, 1000000, "search: candidates at most (default 200)"),
    CT_OPT_INT_("--search-seconds", "S", deploy_args, search_seconds, 0, 1000000,
                "search: wall-clock budget (default 300; 0: none, then deterministic)"),
    CT_OPT_FILES_("--test-input", "F...", deploy_args, files, n_files, MAX_FILES,
                  "run the program on the cmodel with these inputs (.h5/.pb/image) and compare its outputs with the Tpu "
                  "reference, bit for bit"),
    CT_OPT_STR_("--test-reference", "R", deploy_args, ref,
                "also compare the outputs (dequantized) with R's tensors (e.g. the float Top inference) by cosine / "
                "euclidean similarity"),
    CT_OPT_FN_("--tolerance", "C,E", set_tol,
               "minimum cosine and euclidean similarity for --test-reference (default: by the precision of the module "
               "and the file, as ctpu compare chooses it: 0.99,0.90 f32, 0.99,0.85 f16, 0.99,0.80 bf16, 0.97,0.75 int8)"),
    CT_OPT_FLAG_("--compare-all", deploy_args, compare_all, "compare every tensor the program stores with the reference"),
    CT_OPT_STR_("--mxu-report", "F.csv", deploy_args, mxu,
                "per Conv/Gemm/MatMul layer: simulated MXU cycles next to SCALE-Sim's closed form for the whole layer's "
                "GEMM (sim columns need --test-input)"),
    CT_OPT_STR_("--summary", "S.json", deploy_args, summary,
                "the run as JSON: plan, program, cmodel summary and comparisons (docs/sweep.md); written last"),
    CT_OPT_STR_("--report", "R.csv", deploy_args, report, "per-layer simulated cycles, busy cycles, MACs, DDR bytes "
                "(as ctpu sim --report; needs --test-input)"),
};

const ct_cmd_spec ct_cmd_deploy_spec = CT_CMD_SPEC1(
    CMD, "MODEL.onnx|MODEL.top|MODEL.tpu [--quantize M [--calibration-table T]] [--input-shapes N:DxD..] "
    "[--chip C.json] [--layer-group S] -o OUT.ctpu [--test-input FILE... [--test-reference "
    "REF.h5 [--tolerance C,E]] [--compare-all]]",
    "plans and generates the program of a Tpu module (INT8, BF16, F16 or F32); writes OUT.ctpu and "
    "OUT.ctpu.groups.csv",
    "model", deploy_args, model, opts);

static int parse_args(int argc, char **argv, deploy_args *a) {
  memset(a, 0, sizeof *a);
  a->opt.strategy = CT_LG_DP;
  a->search_evals = 200, a->search_seconds = 300;
  a->tol = CT_COMPARE_TOL_DEFAULT;
  int rc = ct_opts_parse(&ct_cmd_deploy_spec, argc, argv, a);
  if (rc) return rc;
  if ((a->ref || a->compare_all || a->report) && !a->n_files)
    return ct_tool_usage(CMD, "--test-reference, --compare-all and --report need --test-input");
  return 0;
}

/* Temporary paths of the outputs (common/outset.h): the program, its groups CSV, the MXU
 * report (NULL when not asked for). */
typedef struct deploy_files {
  const char *prog, *csv, *mxu, *summary, *report;
  char *csv_dest; /* OUT.ctpu.groups.csv (owned) */
} deploy_files;

/* Registers the inputs (model and weights, table, chip, test inputs and reference) and the
 * outputs OUT, OUT.groups.csv and --mxu-report of o; fills t. */
static ct_status add_files(ct_outset *o, const deploy_args *a, deploy_files *t, ct_diag *d) {
  memset(t, 0, sizeof *t);
  size_t n = strlen(a->out) + 16;
  char *csv = t->csv_dest = malloc(n);
  ct_status st = csv ? ct_tool_in_model(o, a->model, NULL, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  const char *in[3] = {a->calib, a->chip, a->ref};
  for (int i = 0; !st && i < 3; i++) st = ct_outset_input(o, in[i], d);
  if (!st) st = ct_tool_in_files(o, a->files, a->n_files, d);
  if (!st) snprintf(csv, n, "%s.groups.csv", a->out);
  if (!st) st = ct_outset_add(o, a->out, &t->prog, d);
  if (!st) st = ct_outset_add(o, csv, &t->csv, d);
  if (!st && a->mxu) st = ct_outset_add(o, a->mxu, &t->mxu, d);
  if (!st && a->report) st = ct_outset_add(o, a->report, &t->report, d);
  if (!st && a->summary) st = ct_outset_add(o, a->summary, &t->summary, d); /* last: renamed last */
  return st;
}

typedef struct groups_src {
  const ct_lg_plan *p;
  const ct_deploy_run *r;
} groups_src;

static bool groups_text(FILE *f, const void *user) {
  const groups_src *g = user;
  return ct_deploy_groups_csv(g->p, g->r, f);
}

typedef struct mxu_src {
  const ct_lg_plan *p;
  const ct_program *prog;
  const ct_deploy_run *r;
} mxu_src;

static bool mxu_text(FILE *f, const void *user) {
  const mxu_src *m = user;
  return ct_deploy_mxu_report(m->p, m->prog, m->r->simulated ? &m->r->so.res : NULL, f);
}

static bool summary_text(FILE *f, const void *user) {
  char *js = (char *)user;
  return fprintf(f, "%s\n", js) > 0;
}

/* Writes the outputs to their temporary paths t (renamed by the outset's commit). */
static ct_status write_outputs(const deploy_files *t, const deploy_args *a, const ct_program *prog, const ct_lg_plan *p,
                               const ct_deploy_run *r, const ct_deploy_summary_info *info, ct_diag *d) {
  groups_src gs = {p, r};
  mxu_src ms = {p, prog, r};
  ct_status st = ct_program_write(prog, t->prog, d);
  if (!st) st = ct_tool_write_text(t->csv, t->csv_dest, groups_text, &gs, d);
  if (!st && t->mxu) st = ct_tool_write_text(t->mxu, a->mxu, mxu_text, &ms, d);
  if (!st && t->report) st = ct_report_layers(t->report, &r->so.res.counters, r->so.layers, r->so.n_layers, d);
  if (!st && t->summary) {
    char *js = ct_deploy_summary_text(info, p, prog, r);
    st = js ? ct_tool_write_text(t->summary, a->summary, summary_text, js, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    free(js);
  }
  return st;
}

/* The progress line while the cmodel runs (a terminal only: ct_tool_isatty). */
static void sim_progress(void *user, uint32_t started, uint32_t total) {
  (void)user;
  fprintf(stderr, "\rdeploy: simulating: %u / %u instructions started (%u %%)", started, total,
          total ? (unsigned)(100.0 * started / total) : 100u);
}

/* Simulates the program and compares it with the references (ct_deploy_check); prints what
 * the comparisons found. */
static ct_status test_run(const deploy_args *a, const ct_graph *g, const ct_chip *chip, const ct_program *prog,
                          int n_groups, ct_deploy_run *r, ct_diag *d) {
  ct_deploy_check_options o = {.files = a->files, .n_files = a->n_files, .ref = a->ref, .tol = a->tol_given ? &a->tol : NULL,
                               .compare_all = a->compare_all};
  if (ct_tool_isatty()) o.progress = sim_progress;
  ct_status st = ct_deploy_check(&o, g, chip, prog, n_groups, r, d);
  if (o.progress) fprintf(stderr, "\r\033[K");
  ct_deploy_check_print(stderr, r, a->ref, a->compare_all);
  return st;
}

/* Loads, compiles, checks (or tests) the program and writes the outputs to t's paths. */
static ct_status run(const deploy_args *a, ct_outset *os, const deploy_files *t, ct_diag *d) {
  ct_chip chip;
  ct_graph *g = NULL;
  ct_lg_plan *p = NULL;
  ct_program prog;
  ct_deploy_run r;
  memset(&r, 0, sizeof r);
  ct_status st = ct_chip_load(a->chip, &chip, d);
  ct_program_init(&prog, st ? 0 : ct_chip_signature(&chip));
  ct_deploy_src src = {a->model, a->quantize, a->calib, a->input_shapes, chip.name};
  if (!st) st = ct_deploy_load(&src, &g, d);
  if (!st) st = ct_tool_in_model(os, a->model, g, d);
  if (!st) st = ct_outset_check(os, d);
  int held = 0;
  double t0 = ct_clock_seconds();
  ct_lg_options lo = a->opt;
  ct_deploy_search_result sr = {0};
  ct_deploy_search_options so = {a->search_evals, a->search_seconds};
  if (!st && lo.strategy == CT_LG_SEARCH && !(st = ct_deploy_search(g, &chip, &a->opt, &so, &sr, d)))
    ct_deploy_search_print(stderr, &sr), lo.group_len = sr.group_len, lo.n_group_len = sr.n_groups;
  if (!st) st = ct_deploy_compile(g, &chip, &lo, &p, &prog, &held, d);
  double compile_s = ct_clock_seconds() - t0;
  if (!st && held) fprintf(stderr, "deploy: planned with %d LMEM bank(s) held back for tables\n", held);
  if (!st) st = ct_program_validate(&prog, &chip, a->out, d);
  /* every program written is race-free: without --test-input the order alone is checked */
  if (!st && !a->n_files) st = ct_sim_check_order(&chip, &prog, d);
  if (!st && a->n_files) st = test_run(a, g, &chip, &prog, p->n_groups, &r, d);
  ct_deploy_summary_info info = {a->model, compile_s, held, a->compare_all};
  if (!st) st = write_outputs(t, a, &prog, p, &r, &info, d);
  if (!st) ct_deploy_summary_print(stderr, &info, p, &prog, &r);
  ct_deploy_run_free(&r);
  ct_program_free(&prog);
  ct_lg_plan_free(p);
  ct_deploy_search_result_free(&sr);
  ct_graph_free(g);
  return st;
}

int ct_cmd_deploy(int argc, char **argv) {
  deploy_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_outset os;
  deploy_files t;
  ct_outset_init(&os, CMD);
  ct_status st = add_files(&os, &a, &t, &d);
  if (!st) st = run(&a, &os, &t, &d);
  st = ct_outset_end(&os, st, &d);
  free(t.csv_dest);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
