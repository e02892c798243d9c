/* cmd_deploy.c: `ctpu deploy MODEL.onnx|.top|.tpu [--quantize M [--calibration-table T]]
 * [--chip C.json] [--layer-group none|greedy|dp] -o OUT.ctpu [--test-input F...
 * [--test-reference REF.h5 [--tolerance C,E]] [--compare-all]] [--mxu-report F.csv]`: lowers the
 * model if needed (deploy_load.h), plans and generates the program of a whole Tpu module (INT8, BF16, F16, F32)
 * (compiler/backend: lg.h, codegen.h), optionally runs it
 * on the cmodel and compares it with the Tpu reference run in-process (issue 12 item 5,
 * TPU-MLIR's model_deploy; docs/backend.md "Deploy"). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmodel/sim.h"
#include "common/h5io.h"
#include "compiler/backend/codegen.h"
#include "common/dequant.h"
#include "io/compare.h"
#include "io/inputs.h"
#include "ir/text.h"
#include "reference/interp.h"
#include "tools/deploy_load.h"
#include "tools/deploy_mxu.h"
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
               "minimum cosine and euclidean similarity for --test-reference (default: by the output's dtype, as ctpu "
               "compare: 0.99,0.90 for f32, 0.99,0.85 f16, 0.99,0.80 bf16, 0.97,0.75 int8)"),
    CT_OPT_FLAG_("--compare-all", deploy_args, compare_all, "compare every tensor the program stores with the reference"),
    CT_OPT_STR_("--mxu-report", "F.csv", deploy_args, mxu,
                "per Conv/Gemm/MatMul layer: simulated MXU cycles next to SCALE-Sim's closed form for the whole layer's "
                "GEMM (sim columns need --test-input)"),
};

static const ct_cmd_spec spec = CT_CMD_SPEC1(
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
  int rc = ct_opts_parse(&spec, argc, argv, a);
  if (rc) return rc;
  if ((a->ref || a->compare_all) && !a->n_files) return ct_tool_usage(CMD, "--test-reference and --compare-all need --test-input");
  return 0;
}

/* Per-group figures of a simulation. */
typedef struct grp_sim {
  uint64_t start, end, macs, ddr;
  bool ran;
} grp_sim;

typedef struct cmp_ctx {
  const ct_tensor_list *dumps;
  int compared, mismatched;
  char first[512];
} cmp_ctx;

/* Compares a reference value with the dump of the same name (its STOREs' bytes). */
static void compare_one(cmp_ctx *c, const ct_tensor *ref, const char *name) {
  const ct_tensor *got = ct_tensor_list_find(c->dumps, name);
  if (!got || !ref) return;
  c->compared++;
  size_t n = got->nbytes < ref->nbytes ? got->nbytes : ref->nbytes;
  int64_t es = (int64_t)ct_dtype_size(ref->dtype), bad = -1;
  if (got->nbytes != ref->nbytes) bad = (int64_t)n / es;
  for (size_t i = 0; i < n && bad < 0; i++)
    if (((const uint8_t *)got->data)[i] != ((const uint8_t *)ref->data)[i]) bad = (int64_t)i / es;
  if (bad < 0) return;
  if (!c->mismatched++)
    snprintf(c->first, sizeof c->first, "\"%s\": element %lld is %g, the reference %g (%zu bytes stored, %zu in the "
             "reference)", name, (long long)bad, bad < ct_tensor_numel(got) ? ct_tensor_get_f64(got, bad) : 0.0,
             bad < ct_tensor_numel(ref) ? ct_tensor_get_f64(ref, bad) : 0.0, got->nbytes, ref->nbytes);
}

static ct_status on_op(void *user, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out, ct_diag *d) {
  (void)in, (void)d;
  for (int i = 0; i < op->n_out; i++)
    if (op->out[i] && out[i]) compare_one(user, out[i], op->out[i]->name);
  return CT_OK;
}

/* The precision class of the Tpu module g (io/compare.h): its least precise value. */
static ct_compare_prec graph_prec(const ct_graph *g) {
  ct_compare_prec p = CT_PREC_F32;
  for (int i = 0; i < g->n_values; i++) {
    ct_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = g->values[i]->dtype, t.n_scale = g->values[i]->n_scale;
    ct_compare_prec q = ct_compare_prec_of(&t);
    if (q > p) p = q;
  }
  return p;
}

/* The program's outputs (dequantized, common/dequant.h) against the tensors of the same names
 * in path, by cosine and euclidean similarity under tol (model_deploy's --tolerance; NULL: the
 * default of the less precise of the module g and the file, as ctpu compare chooses it): one
 * line per output on stderr; *bad counts the outputs below the tolerance. CT_ERR_INPUT when
 * path cannot be read or lacks an output; CT_ERR_LIMIT out of memory. */
static ct_status check_ref_file(const char *path, const ct_graph *g, const ct_tensor_list *got, const ct_compare_tol *tol,
                                int *bad, ct_diag *d) {
  ct_tensor_list ref;
  ct_tensor_list_init(&ref);
  ct_status st = ct_h5_read(path, &ref, d);
  ct_compare_tol dflt = CT_COMPARE_TOL_DEFAULT;
  if (!st && !tol) {
    ct_compare_prec a = ct_compare_dump_prec((const ct_tensor *const *)ref.items, ref.n), b = graph_prec(g);
    dflt = ct_compare_prec_tol(a > b ? a : b);
  }
  for (int i = 0; !st && i < got->n; i++) {
    const ct_tensor *r = ct_tensor_list_find(&ref, got->items[i]->name);
    ct_tensor *x = NULL;
    if (!r) st = ct_diag_set(d, CT_ERR_INPUT, "%s: no tensor \"%s\"", path, got->items[i]->name);
    else st = ct_dequant(got->items[i], &x, d);
    if (st) break;
    ct_compare_metrics m;
    const ct_compare_tol *t = tol ? tol : &dflt;
    ct_compare_verdict v = ct_compare_tensor(r, x, &m) ? CT_CMP_SHAPE : ct_compare_judge(&m, t);
    bool ok = ct_compare_passes(v, &m, t);
    fprintf(stderr, "deploy: output \"%s\" vs %s: cosine %.6f, euclid %.6f, SQNR %.2f dB: %s\n", x->name, path, m.cosine,
            m.euclid, m.sqnr_db, ok ? ct_compare_verdict_name(v) : "FAIL");
    *bad += !ok;
    ct_tensor_free(x);
  }
  ct_tensor_list_free(&ref);
  return st;
}

typedef struct deploy_run {
  ct_sim_run_output so;
  grp_sim *gs;
  bool simulated;
  double compile_s;  /* plan + codegen wall seconds (all attempts) */
} deploy_run;

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

/* Simulates the program and compares with the Tpu reference. */
static ct_status test_run(const deploy_args *a, const ct_graph *g, const ct_chip *chip, const ct_program *prog,
                          deploy_run *r, int n_groups, ct_diag *d) {
  ct_tensor_list in, ref_out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&ref_out);
  ct_status st = ct_inputs_load(g, a->files, a->n_files, &in, d);
  ct_sim_run_options so = {.dump_all = a->compare_all};
  if (ct_tool_isatty()) so.progress = sim_progress;
  if (!st) st = ct_sim_run(chip, prog, &in, &so, &r->so, d);
  if (so.progress) fprintf(stderr, "\r\033[K");
  cmp_ctx cc = {.dumps = &r->so.dumps};
  ct_ref_options ro = {.threads = 1};
  if (a->compare_all) ro.on_op = on_op, ro.on_op_user = &cc;
  if (!st) st = ct_ref_run(g, &ro, &in, &ref_out, d);
  int bad = 0;
  for (int i = 0; !st && i < r->so.outputs.n; i++) {
    const ct_tensor *s = r->so.outputs.items[i], *t = ct_tensor_list_find(&ref_out, s->name);
    if (!t || t->nbytes != s->nbytes || memcmp(t->data, s->data, s->nbytes)) {
      if (!bad++) fprintf(stderr, "deploy: output \"%s\" differs from the Tpu reference\n", s->name);
    }
  }
  if (!st && a->ref) st = check_ref_file(a->ref, g, &r->so.outputs, a->tol_given ? &a->tol : NULL, &bad, d);
  if (!st && a->compare_all)
    fprintf(stderr, "deploy: --compare-all: %d stored tensors compared, %d differ%s%s\n", cc.compared, cc.mismatched,
            cc.mismatched ? "; first: " : "", cc.mismatched ? cc.first : "");
  if (!st && (bad || cc.mismatched))
    st = ct_diag_set(d, CT_ERR_CHECK, "%d outputs and %d stored tensors differ from the reference", bad, cc.mismatched);
  if (!st) {
    r->simulated = true;
    for (uint32_t i = 0; i < r->so.res.n_ops && i < prog->n_insns; i++) {
      const ct_prog_debug *e = ct_program_debug_of(prog, &prog->insns[i]);
      if (!e || e->group < 0 || e->group >= n_groups || r->so.res.start[i] == UINT64_MAX) continue;
      grp_sim *gsim = &r->gs[e->group];
      const ct_insn *ins = &prog->insns[i];
      if (!gsim->ran || r->so.res.start[i] < gsim->start) gsim->start = r->so.res.start[i];
      if (!gsim->ran || r->so.res.end[i] > gsim->end) gsim->end = r->so.res.end[i];
      gsim->ran = true;
      gsim->macs += ct_isa_macs(ins);
    }
    for (int k = 0; k < r->so.n_layers; k++) {
      const ct_layer_counters *l = &r->so.layers[k];
      if (l->group >= 0 && l->group < n_groups) r->gs[l->group].ddr += l->ddr_bytes_read + l->ddr_bytes_written;
    }
  }
  ct_tensor_list_free(&in), ct_tensor_list_free(&ref_out);
  return st;
}

static bool write_groups(const ct_lg_plan *p, const deploy_run *r, FILE *f) {
  fprintf(f, "group,layers,first_layer,last_layer,tile_shape,tiles,lmem_bytes,est_cycles,sim_cycles,est_over_sim,"
             "mxu_util,ddr_bytes\n");
  double rc = (double)p->chip.mxu_rows * (double)p->chip.mxu_cols;
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_lg_group *gr = &p->groups[gi];
    const ct_op *a = p->layers[gr->first].op, *b = p->layers[gr->first + gr->n_layers - 1].op;
    char shape[128] = "";
    for (int i = 0, o = 0; i < gr->tile_ndim && o < (int)sizeof shape - 24; i++)
      o += snprintf(shape + o, sizeof shape - (size_t)o, "%s%lld", i ? "x" : "", (long long)gr->tile_shape[i]);
    fprintf(f, "%d,%d,\"%s\",\"%s\",%s,%lld,%lld,%lld,", gi, gr->n_layers, a->loc ? a->loc : "", b->loc ? b->loc : "", shape,
            (long long)gr->n_tiles, (long long)gr->lmem_bytes, (long long)gr->cycles);
    const grp_sim *s = r && r->simulated ? &r->gs[gi] : NULL;
    if (s && s->ran) {
      uint64_t cyc = s->end - s->start;
      fprintf(f, "%llu,%.4f,%.4f,%llu\n", (unsigned long long)cyc, cyc ? (double)gr->cycles / (double)cyc : 0.0,
              cyc ? (double)s->macs / ((double)cyc * rc) : 0.0, (unsigned long long)s->ddr);
    } else {
      fprintf(f, ",,,\n");
    }
  }
  return !ferror(f);
}

/* Temporary paths of the outputs (common/outset.h): the program, its groups CSV, the MXU
 * report (NULL when not asked for). */
typedef struct deploy_files {
  const char *prog, *csv, *mxu;
} deploy_files;

/* Registers the inputs (model and weights, table, chip, test inputs and reference) and the
 * outputs OUT, OUT.groups.csv and --mxu-report of o; fills t. */
static ct_status add_files(ct_outset *o, const deploy_args *a, deploy_files *t, ct_diag *d) {
  memset(t, 0, sizeof *t);
  size_t n = strlen(a->out) + 16;
  char *csv = malloc(n);
  ct_status st = csv ? ct_tool_in_model(o, a->model, NULL, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  const char *in[3] = {a->calib, a->chip, a->ref};
  for (int i = 0; !st && i < 3; i++) st = ct_outset_input(o, in[i], d);
  if (!st) st = ct_tool_in_files(o, a->files, a->n_files, d);
  if (!st) snprintf(csv, n, "%s.groups.csv", a->out);
  if (!st) st = ct_outset_add(o, a->out, &t->prog, d);
  if (!st) st = ct_outset_add(o, csv, &t->csv, d);
  if (!st && a->mxu) st = ct_outset_add(o, a->mxu, &t->mxu, d);
  free(csv);
  return st;
}

typedef struct groups_src {
  const ct_lg_plan *p;
  const deploy_run *r;
} groups_src;

static bool groups_text(FILE *f, const void *user) {
  const groups_src *g = user;
  return write_groups(g->p, g->r, f);
}

typedef struct mxu_src {
  const ct_lg_plan *p;
  const ct_program *prog;
  const deploy_run *r;
} mxu_src;

static bool mxu_text(FILE *f, const void *user) {
  const mxu_src *m = user;
  return ct_deploy_mxu_report(m->p, m->prog, m->r->simulated ? &m->r->so.res : NULL, f);
}

/* Writes the outputs to their temporary paths t (renamed by the outset's commit). */
static ct_status write_outputs(const deploy_files *t, const deploy_args *a, const ct_program *prog, const ct_lg_plan *p,
                               const deploy_run *r, ct_diag *d) {
  groups_src gs = {p, r};
  mxu_src ms = {p, prog, r};
  ct_status st = ct_program_write(prog, t->prog, d);
  if (!st) st = ct_tool_write_text(t->csv, a->out, groups_text, &gs, d);
  if (!st && t->mxu) st = ct_tool_write_text(t->mxu, a->mxu, mxu_text, &ms, d);
  return st;
}

static void summary(const deploy_args *a, const ct_lg_plan *p, const ct_program *prog, const deploy_run *r) {
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
                         deploy_run *r, ct_diag *d) {
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
  deploy_run r;
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
    st = r.gs ? test_run(a, g, &chip, &prog, &r, p->n_groups, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
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
  return st ? ct_tool_fail(CMD, &d) : 0;
}
