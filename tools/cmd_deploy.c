/* cmd_deploy.c: `ctpu deploy MODEL.onnx|.top|.tpu [--quantize M [--calibration-table T]]
 * [--chip C.json] [--layer-group none|greedy|dp] -o OUT.ctpu [--test-input F...
 * [--test-reference REF.h5 [--tolerance C,E]] [--compare-all]] [--mxu-report F.csv]`: lowers the
 * model if needed (deploy_load.h), plans and generates the program of a whole Tpu module (INT8,
 * BF16, F16, F32; compiler/backend: lg.h, codegen.h), optionally runs it on the cmodel and
 * compares it with the Tpu reference run in-process (deploy_test.h; TPU-MLIR's model_deploy,
 * docs/backend.md "Deploy"). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmodel/sim.h"
#include "compiler/backend/codegen.h"
#include "io/compare.h"
#include "tools/deploy_load.h"
#include "tools/deploy_mxu.h"
#include "tools/deploy_test.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "deploy"
#define MAX_FILES 16

typedef struct deploy_args {
  const char *model, *out, *chip, *ref, *quantize, *calib, *input_shapes, *mxu;
  const char *files[MAX_FILES];
  int n_files;
  bool compare_all;
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
    return ct_tool_usage(cmd, "%s must be none, greedy, dp or longest, not \"%s\"", o->name, v);
  return 0;
}

static const ct_opt opts[] = {
    CT_OPT_NEED_("-o", "OUT.ctpu", deploy_args, out, "output", "the program, and OUT.ctpu.groups.csv (per group: layers, "
                 "tile shape, tiles, LMEM bytes, estimated cycles and, after simulation, simulated cycles, MXU "
                 "utilization, DDR bytes)"),
    CT_OPT_STR_("--quantize", "M", deploy_args, quantize,
                "lower an ONNX model or Top module first (INT8, BF16, F16, F32), as ctpu transform + ctpu lower do "
                "(ONNX: no image preprocessing)"),
    CT_OPT_STR_("--calibration-table", "T", deploy_args, calib, "INT8 thresholds for a float model (ctpu calibrate)"),
    CT_OPT_STR_("--input-shapes", "S", deploy_args, input_shapes, "fix an ONNX model's input shapes (as ctpu transform)"),
    CT_OPT_STR_("--chip", "C.json", deploy_args, chip, "chip configuration (default: the built-in chip)"),
    CT_OPT_FN_("--layer-group", "S", set_strategy, "none, greedy, dp (default), longest"),
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
};

const ct_cmd_spec ct_cmd_deploy_spec = CT_CMD_SPEC1(
    CMD, "MODEL.onnx|MODEL.top|MODEL.tpu [--quantize M [--calibration-table T]] [--input-shapes N:DxD..] "
    "[--chip C.json] [--layer-group none|greedy|dp] -o OUT.ctpu [--test-input FILE... [--test-reference "
    "REF.h5 [--tolerance C,E]] [--compare-all]]",
    "plans and generates the program of a Tpu module (INT8, BF16, F16 or F32); writes OUT.ctpu and "
    "OUT.ctpu.groups.csv",
    "model", deploy_args, model, opts);

static int parse_args(int argc, char **argv, deploy_args *a) {
  memset(a, 0, sizeof *a);
  a->opt.strategy = CT_LG_DP;
  a->tol = CT_COMPARE_TOL_DEFAULT;
  int rc = ct_opts_parse(&ct_cmd_deploy_spec, argc, argv, a);
  if (rc) return rc;
  if ((a->ref || a->compare_all) && !a->n_files) return ct_tool_usage(CMD, "--test-reference and --compare-all need --test-input");
  return 0;
}

/* Temporary paths of the outputs (common/outset.h): the program, its groups CSV, the MXU
 * report (NULL when not asked for). */
typedef struct deploy_files {
  const char *prog, *csv, *mxu;
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

/* Writes the outputs to their temporary paths t (renamed by the outset's commit). */
static ct_status write_outputs(const deploy_files *t, const deploy_args *a, const ct_program *prog, const ct_lg_plan *p,
                               const ct_deploy_run *r, ct_diag *d) {
  groups_src gs = {p, r};
  mxu_src ms = {p, prog, r};
  ct_status st = ct_program_write(prog, t->prog, d);
  if (!st) st = ct_tool_write_text(t->csv, t->csv_dest, groups_text, &gs, d);
  if (!st && t->mxu) st = ct_tool_write_text(t->mxu, a->mxu, mxu_text, &ms, d);
  return st;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void summary(const deploy_args *a, const ct_lg_plan *p, const ct_program *prog, const ct_deploy_run *r) {
  fprintf(stderr, "deploy %s (%s, %s): %d layers in %d groups, %zu instructions, est. %lld cycles", a->model, p->chip.name,
          ct_lg_strategy_name(a->opt.strategy), p->n_layers, p->n_groups, prog->n_insns, (long long)p->total_cycles);
  if (r->simulated) {
    const ct_sim_counters *c = &r->so.res.counters;
    double rc = (double)c->mxu_rows * (double)c->mxu_cols;
    fprintf(stderr, ", simulated %llu cycles, MXU utilization %.4f, DDR %llu bytes",
            (unsigned long long)c->total_cycles, c->total_cycles ? (double)c->macs / ((double)c->total_cycles * rc) : 0.0,
            (unsigned long long)(c->ddr_bytes_read + c->ddr_bytes_written));
  }
  fprintf(stderr, "\ndeploy: compiled (plan + codegen) in %.3f s", r->compile_s);
  if (r->simulated) {
    double w = r->so.res.counters.wall_seconds;
    fprintf(stderr, "; simulated (timing + functional) in %.3f s, %.3g simulated cycles/s", w,
            w > 0 ? (double)r->so.res.counters.total_cycles / w : 0.0);
  }
  fprintf(stderr, "\n");
}

/* Plans and generates the program of g (*p, *prog; r->compile_s). The planner reserves LMEM
 * for the codegen's tables and scratch (lg_reserve.c); a fallback should they still not fit:
 * plan again with whole banks held back (same bank size): 1, 2, 4, ... up to half. */
static ct_status compile(const deploy_args *a, const ct_chip *chip, const ct_graph *g, ct_lg_plan **p, ct_program *prog,
                         ct_deploy_run *r, ct_diag *d) {
  int held = 0;
  ct_diag first; /* the codegen's LIMIT message, reported when a re-plan does not fit at all */
  ct_diag_clear(&first);
  double t0 = now_s();
  ct_status st = CT_OK;
  for (int k = 0; !st; k = k ? 2 * k : 1) { /* 0, 1, 2, 4, ... banks held back, up to half */
    ct_chip pc = *chip;
    pc.lmem_bytes -= k * (chip->lmem_bytes / chip->lmem_banks), pc.lmem_banks -= k;
    st = ct_lg_plan_graph(g, &pc, &a->opt, p, d);
    if (st == CT_ERR_LIMIT && k > 0) *d = first;
    if (st) break;
    (*p)->chip = *chip; /* codegen checks against the real LMEM */
    st = ct_cg_model(*p, prog, d);
    if (st != CT_ERR_LIMIT || 2 * (k ? 2 * k : 1) > chip->lmem_banks) break;
    if (k == 0) first = *d;
    ct_lg_plan_free(*p), *p = NULL;
    ct_program_free(prog), ct_program_init(prog, ct_chip_signature(chip));
    ct_diag_clear(d);
    held = k ? 2 * k : 1;
    st = CT_OK;
  }
  r->compile_s = now_s() - t0;
  if (!st && held) fprintf(stderr, "deploy: planned with %d LMEM bank(s) held back for tables\n", held);
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
  if (!st) st = compile(a, &chip, g, &p, &prog, &r, d);
  if (!st) st = ct_program_validate(&prog, &chip, a->out, d);
  /* every program written is race-free: without --test-input the order alone is checked */
  if (!st && !a->n_files) st = ct_sim_check_order(&chip, &prog, d);
  if (!st && a->n_files) {
    r.gs = calloc((size_t)p->n_groups + 1, sizeof *r.gs);
    ct_deploy_test t = {a->files, a->n_files, a->ref, a->tol_given ? &a->tol : NULL, a->compare_all};
    st = r.gs ? ct_deploy_test_run(&t, g, &chip, &prog, &r, p->n_groups, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  if (!st) st = write_outputs(t, a, &prog, p, &r, d);
  if (!st) summary(a, p, &prog, &r);
  if (a->n_files) ct_sim_run_output_free(&r.so);
  free(r.gs);
  ct_program_free(&prog);
  ct_lg_plan_free(p);
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
