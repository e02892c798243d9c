/* cmd_deploy.c: `ctpu deploy MODEL.onnx|.top|.tpu [--quantize M [--calibration-table T]]
 * [--chip C.json] [--layer-group none|greedy|dp] -o OUT.ctpu [--test-input F...
 * [--test-reference REF.h5 [--tolerance C,E]] [--compare-all]] [--mxu-report F.csv]`: lowers the
 * model if needed (deploy/load.h), plans and generates the program of a whole Tpu module (INT8,
 * BF16, F16, F32), optionally runs it on the cmodel and compares it with the Tpu reference run
 * in-process (deploy/flow.h; TPU-MLIR's model_deploy; docs/backend.md "Deploy"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmodel/sim.h"
#include "compiler/backend/lg.h"
#include "deploy/flow.h"
#include "deploy/load.h"
#include "deploy/mxu.h"
#include "io/compare.h"
#include "tools/tools.h"

#define CMD "deploy"
#define MAX_FILES 16

typedef struct deploy_args {
  const char *model, *out, *chip, *ref, *quantize, *calib, *input_shapes, *mxu;
  const char *files[MAX_FILES];
  int n_files;
  bool compare_all;
  ct_compare_tol tol; /* --tolerance for --test-reference */
  ct_lg_options opt;
} deploy_args;

static void usage(FILE *f) {
  fprintf(f, "usage: ctpu deploy MODEL.onnx|MODEL.top|MODEL.tpu [--quantize M [--calibration-table T]]\n"
             "                   [--input-shapes N:DxD..] [--chip C.json] [--layer-group none|greedy|dp] -o OUT.ctpu\n"
             "                   [--test-input FILE... [--test-reference REF.h5 [--tolerance C,E]] [--compare-all]]\n"
             "  plans and generates the program of a Tpu module (INT8, BF16, F16 or F32); writes OUT.ctpu and\n"
             "  OUT.groups.csv (per group: layers, tile shape, tiles, LMEM bytes, estimated cycles and,\n"
             "  after simulation, simulated cycles, MXU utilization, DDR bytes)\n"
             "  --quantize M        lower an ONNX model or Top module first (INT8, BF16, F16, F32), as\n"
             "                      ctpu transform + ctpu lower do (ONNX: no image preprocessing)\n"
             "  --calibration-table T  INT8 thresholds for a float model (ctpu calibrate)\n"
             "  --input-shapes S    fix an ONNX model's input shapes (as ctpu transform)\n"
             "  --layer-group S     none, greedy, dp (default), longest\n"
             "  --test-input F...   run the program on the cmodel with these inputs (.h5/.pb/image) and\n"
             "                      compare its outputs with the Tpu reference, bit for bit\n"
             "  --test-reference R  also compare the outputs (dequantized) with R's tensors (e.g. the\n"
             "                      float Top inference) by cosine / euclidean similarity\n"
             "  --tolerance C,E     minimum cosine and euclidean similarity for --test-reference\n"
             "                      (default 0.99,0.90, as TPU-MLIR's model_deploy)\n"
             "  --compare-all       compare every tensor the program stores with the reference\n"

             "  --mxu-report F.csv  per Conv/Gemm/MatMul layer: simulated MXU cycles next to SCALE-Sim's closed\n"
             "                      form for the whole layer's GEMM (sim columns need --test-input)\n");
}

static int parse_args(int argc, char **argv, deploy_args *a) {
  memset(a, 0, sizeof *a);
  a->opt.strategy = CT_LG_DP;
  a->tol = CT_COMPARE_TOL_DEFAULT;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
    if (!strcmp(s, "--compare-all")) a->compare_all = true;
    else if (!strcmp(s, "--tolerance")) {
      if (i + 1 >= argc || !ct_tool_parse_tol(argv[++i], &a->tol))
        return ct_tool_usage(CMD, "--tolerance wants COS,EUC (e.g. 0.99,0.90)");
    } else if (!strcmp(s, "--test-input")) {
      int rc = ct_tool_files(CMD, argc, argv, &i, a->files, &a->n_files, MAX_FILES);
      if (rc) return rc;
    } else if (!strcmp(s, "-o") || !strcmp(s, "--chip") || !strcmp(s, "--layer-group") || !strcmp(s, "--test-reference") ||
               !strcmp(s, "--quantize") || !strcmp(s, "--calibration-table") || !strcmp(s, "--input-shapes") ||
               !strcmp(s, "--mxu-report")) {
      if (i + 1 >= argc) return ct_tool_usage(CMD, "%s needs a value", s);
      const char *v = argv[++i];
      if (!strcmp(s, "-o")) a->out = v;
      else if (!strcmp(s, "--quantize")) a->quantize = v;
      else if (!strcmp(s, "--calibration-table")) a->calib = v;
      else if (!strcmp(s, "--input-shapes")) a->input_shapes = v;
      else if (!strcmp(s, "--chip")) a->chip = v;
      else if (!strcmp(s, "--test-reference")) a->ref = v;
      else if (!strcmp(s, "--mxu-report")) a->mxu = v;
      else if (!ct_lg_strategy_parse(v, &a->opt.strategy))
        return ct_tool_usage(CMD, "--layer-group must be none, greedy, dp or longest, not \"%s\"", v);
    } else if (s[0] == '-' && s[1]) return ct_tool_usage(CMD, "unknown option \"%s\"", s);
    else if (!a->model) a->model = s;
    else return ct_tool_usage(CMD, "unexpected argument \"%s\"", s);
  }
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o OUT.ctpu)");
  if ((a->ref || a->compare_all) && !a->n_files) return ct_tool_usage(CMD, "--test-reference and --compare-all need --test-input");
  return 0;
}

typedef struct deploy_times {
  double compile_s; /* plan + codegen wall seconds (all attempts) */
} deploy_times;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
  ct_deploy_check_options o = {.files = a->files, .n_files = a->n_files, .ref = a->ref, .tol = a->tol,
                               .compare_all = a->compare_all};
  if (ct_tool_isatty()) o.progress = sim_progress;
  ct_status st = ct_deploy_check(&o, g, chip, prog, n_groups, r, d);
  if (o.progress) fprintf(stderr, "\r\033[K");
  if (r->first_diff) fprintf(stderr, "deploy: output \"%s\" differs from the Tpu reference\n", r->first_diff);
  for (int i = 0; i < r->n_ref; i++) {
    const ct_deploy_ref_line *l = &r->ref[i];
    fprintf(stderr, "deploy: output \"%s\" vs %s: cosine %.6f, euclid %.6f, SQNR %.2f dB: %s\n", l->name, a->ref,
            l->m.cosine, l->m.euclid, l->m.sqnr_db, l->verdict);
  }
  if (r->done && a->compare_all)
    fprintf(stderr, "deploy: --compare-all: %d stored tensors compared, %d differ%s%s\n", r->compared, r->mismatched,
            r->mismatched ? "; first: " : "", r->mismatched ? r->first : "");
  return st;
}

/* Writes OUT and OUT.groups.csv under temporary names, renamed when both are complete. */
static ct_status write_outputs(const char *out, const char *mxu, const ct_program *prog, const ct_lg_plan *p,
                               const ct_deploy_run *r, ct_diag *d) {
  size_t n = strlen(out) + 16, nm = (mxu ? strlen(mxu) : 0) + 8;
  char *tp = malloc(n), *csv = malloc(n), *tc = malloc(n), *tm = malloc(nm);
  ct_status st = tp && csv && tc && tm ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st && mxu) {
    snprintf(tm, nm, "%s.tmp", mxu);
    FILE *f = fopen(tm, "w");
    bool ok = f && ct_deploy_mxu_report(p, prog, r->simulated ? &r->so.res : NULL, f);
    if (f && fclose(f)) ok = false;
    if (!ok) st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write", mxu);
  }
  if (!st) {
    snprintf(tp, n, "%s.tmp", out), snprintf(csv, n, "%s.groups.csv", out), snprintf(tc, n, "%s.tmp", csv);
    st = ct_program_write(prog, tp, d);
  }
  if (!st) {
    FILE *f = fopen(tc, "w");
    bool ok = f && ct_deploy_groups_csv(p, r, f);
    if (f && fclose(f)) ok = false;
    if (!ok) st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write", csv);
  }
  if (!st && (rename(tp, out) || rename(tc, csv) || (mxu && rename(tm, mxu))))
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write", out);
  if (st && tp) remove(tp);
  if (st && tc) remove(tc);
  if (st && tm && mxu) remove(tm);
  free(tp), free(csv), free(tc), free(tm);
  return st;
}

static void summary(const deploy_args *a, const ct_lg_plan *p, const ct_program *prog, const ct_deploy_run *r,
                    const deploy_times *t) {
  fprintf(stderr, "deploy %s (%s, %s): %d layers in %d groups, %zu instructions, est. %lld cycles", a->model, p->chip.name,
          ct_lg_strategy_name(a->opt.strategy), p->n_layers, p->n_groups, prog->n_insns, (long long)p->total_cycles);
  if (r->simulated) {
    const ct_sim_counters *c = &r->so.res.counters;
    double rc = (double)c->mxu_rows * (double)c->mxu_cols;
    fprintf(stderr, ", simulated %llu cycles, MXU utilization %.4f, DDR %llu bytes",
            (unsigned long long)c->total_cycles, c->total_cycles ? (double)c->macs / ((double)c->total_cycles * rc) : 0.0,
            (unsigned long long)(c->ddr_bytes_read + c->ddr_bytes_written));
  }
  fprintf(stderr, "\ndeploy: compiled (plan + codegen) in %.3f s", t->compile_s);
  if (r->simulated) {
    double w = r->so.res.counters.wall_seconds;
    fprintf(stderr, "; simulated (timing + functional) in %.3f s, %.3g simulated cycles/s", w,
            w > 0 ? (double)r->so.res.counters.total_cycles / w : 0.0);
  }
  fprintf(stderr, "\n");
}

int ct_cmd_deploy(int argc, char **argv) {
  deploy_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_chip chip;
  ct_graph *g = NULL;
  ct_lg_plan *p = NULL;
  ct_program prog;
  ct_deploy_run r;
  memset(&r, 0, sizeof r);
  deploy_times t = {0};
  ct_status st = ct_chip_load(a.chip, &chip, &d);
  ct_program_init(&prog, ct_chip_signature(&chip));
  ct_deploy_src src = {a.model, a.quantize, a.calib, a.input_shapes, chip.name};
  if (!st) st = ct_deploy_load(&src, &g, &d);
  int held = 0;
  double t0 = now_s();
  if (!st) st = ct_deploy_compile(g, &chip, &a.opt, &p, &prog, &held, &d);
  t.compile_s = now_s() - t0;
  if (!st && held) fprintf(stderr, "deploy: planned with %d LMEM bank(s) held back for tables\n", held);
  if (!st) st = ct_program_validate(&prog, &chip, a.out, &d);
  /* every program written is race-free: without --test-input the order alone is checked */
  if (!st && !a.n_files) st = ct_sim_check_order(&chip, &prog, &d);
  if (!st && a.n_files) st = test_run(&a, g, &chip, &prog, p->n_groups, &r, &d);
  if (!st) st = write_outputs(a.out, a.mxu, &prog, p, &r, &d);
  if (!st) summary(&a, p, &prog, &r, &t);
  ct_deploy_run_free(&r);
  ct_program_free(&prog);
  ct_lg_plan_free(p);
  ct_graph_free(g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
