/* cmd_sim.c: `ctpu sim PROG.ctpu --input FILE... -o OUT.h5`: runs a program on the
 * cycle-level cmodel (cmodel/sim.h) and writes outputs, stored tensors, summary, per-layer
 * report and a timeline trace (JSON or Perfetto; docs/cmodel.md, docs/traces.md). */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"
#include "common/h5io.h"
#include "common/outset.h"
#include "io/inputs.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "traces/report.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "sim"
#define MAX_FILES 64
#define MAX_LAYERS 256

typedef struct sim_args {
  const char *prog, *out, *chip, *dump, *trace, *report, *summary, *model;
  const char *files[MAX_FILES];
  int n_files;
  bool functional, no_race;
  uint64_t max_cycles;
  ct_trace_filter filter;
  char *layer_buf;
  char *layers[MAX_LAYERS];
} sim_args;

static bool parse_u64(const char *s, uint64_t *v) {
  char *end;
  if (!*s || *s == '-') return false;
  unsigned long long x = strtoull(s, &end, 10);
  *v = x;
  return *end == '\0';
}

static int set_window(void *args, const char *cmd, const ct_opt *o, const char *s) {
  sim_args *a = args;
  const char *colon = strchr(s, ':');
  char lo[32];
  if (!colon || colon - s >= (long)sizeof lo) return ct_tool_usage(cmd, "%s needs START:END, not \"%s\"", o->name, s);
  memcpy(lo, s, (size_t)(colon - s));
  lo[colon - s] = '\0';
  if (!parse_u64(lo, &a->filter.start_cycle) || !parse_u64(colon + 1, &a->filter.end_cycle) ||
      a->filter.end_cycle <= a->filter.start_cycle)
    return ct_tool_usage(cmd, "%s needs START:END cycles with START < END, not \"%s\"", o->name, s);
  return 0;
}

static int set_layers(void *args, const char *cmd, const ct_opt *o, const char *s) {
  sim_args *a = args;
  free(a->layer_buf);
  a->layer_buf = strdup(s);
  if (!a->layer_buf) return fprintf(stderr, "ctpu %s: out of memory\n", cmd), CT_ERR_LIMIT;
  a->filter.n_layers = 0;
  for (char *tok = strtok(a->layer_buf, ","); tok; tok = strtok(NULL, ",")) {
    if (a->filter.n_layers == MAX_LAYERS) return ct_tool_usage(cmd, "more than %d layers in %s", MAX_LAYERS, o->name);
    a->layers[a->filter.n_layers++] = tok;
  }
  a->filter.layers = a->layers;
  return 0;
}

static int set_max_cycles(void *args, const char *cmd, const ct_opt *o, const char *v) {
  sim_args *a = args;
  return parse_u64(v, &a->max_cycles) && a->max_cycles ? 0
         : ct_tool_usage(cmd, "%s needs a positive number, not \"%s\"", o->name, v);
}

static const ct_opt opts[] = {
    CT_OPT_FILES_("--input", "FILE...", sim_args, files, n_files, MAX_FILES,
                  "HDF5 files (datasets named as the program's inputs), ONNX TensorProto .pb files (the input their "
                  "tensor is named after, else in input order) or JPEG/PNG images (with --model); float data for an "
                  "integer input is quantized with its scale/zero point"),
    CT_OPT_NEED_("-o", "OUT.h5", sim_args, out, "output", "the program's outputs"),
    CT_OPT_STR_("--model", "MODEL.tpu", sim_args, model,
                "the module the program was compiled from: images given to --input are preprocessed as its Input ops "
                "say (as ctpu deploy --test-input and ctpu infer do)"),
    CT_OPT_STR_("--chip", "C.json", sim_args, chip, "chip configuration (default: ctpu chip --dump)"),
    CT_OPT_STR_("--dump-all", "D.h5", sim_args, dump, "every stored tensor, one per debug-map layer"),
    CT_OPT_STR_("--trace", "T.json", sim_args, trace,
                "timeline trace: Perfetto's protobuf format when T ends in .perfetto-trace or .pftrace, else "
                "Chrome Trace Event JSON (both open in ui.perfetto.dev)"),
    CT_OPT_FN_("--trace-window", "S:E", set_window, "only instructions overlapping cycles [S, E)"),
    CT_OPT_FN_("--trace-layers", "a,b", set_layers, "only instructions of these layers"),
    CT_OPT_STR_("--report", "R.csv", sim_args, report, "per-layer cycles, busy cycles per engine, MACs, DDR bytes"),
    CT_OPT_STR_("--summary", "S.json", sim_args, summary, "total cycles, per-engine busy/stall/idle, utilization, DDR"),
    CT_OPT_FLAG_("--functional", sim_args, functional, "no timing (same outputs, faster)"),
    CT_OPT_FLAG_("--no-race-check", sim_args, no_race, "skip the happens-before race check"),
    CT_OPT_FN_("--max-cycles", "N", set_max_cycles, "stop with exit code 4 after N cycles"),
    CT_OPT_MAX_MEMORY,
};

const ct_cmd_spec ct_cmd_sim_spec = CT_CMD_SPEC1(
    CMD, "PROG.ctpu --input FILE... -o OUT.h5 [--model MODEL.tpu] [--chip C.json] [--dump-all D.h5] "
    "[--trace T.json|T.perfetto-trace] [--report R.csv] [--summary S.json] [--functional]",
    "runs PROG on the cycle-level cmodel; outputs are raw integer tensors with scale/zero_point attributes "
    "(see docs/cmodel.md)",
    "program", sim_args, prog, opts);

static ct_status write_list(const char *path, const ct_tensor_list *l, ct_diag *d) {
  return ct_h5_write(path, l->items, l->n, d);
}

/* Temporary paths of the outputs (common/outset.h); NULL when not requested. */
typedef struct sim_paths {
  const char *out, *dump, *trace, *report, *summary;
} sim_paths;

/* Writes every requested output file. */
static ct_status write_outputs(const sim_paths *p, const ct_sim_run_output *o, ct_diag *d) {
  ct_status st = write_list(p->out, &o->outputs, d);
  if (!st && p->dump) st = write_list(p->dump, &o->dumps, d);
  if (!st && p->summary) st = ct_report_summary(p->summary, &o->res.counters, d);
  if (!st && p->report) st = ct_report_layers(p->report, &o->res.counters, o->layers, o->n_layers, d);
  return st;
}

/* Registers inputs (program, chip, input files) and outputs in o; fills p. */
static ct_status add_outputs(ct_outset *o, const sim_args *a, sim_paths *p, ct_diag *d) {
  memset(p, 0, sizeof *p);
  ct_outset_init(o, CMD);
  ct_status st = ct_outset_input(o, a->prog, d);
  if (!st) st = ct_outset_input(o, a->chip, d);
  if (!st && a->model) st = ct_tool_in_model(o, a->model, NULL, d);
  if (!st) st = ct_tool_in_files(o, a->files, a->n_files, d);
  const char *const dest[5] = {a->out, a->dump, a->trace, a->report, a->summary};
  const char **tmp[5] = {&p->out, &p->dump, &p->trace, &p->report, &p->summary};
  for (int i = 0; !st && i < 5; i++)
    if (dest[i]) st = ct_outset_add(o, dest[i], tmp[i], d);
  if (st) ct_outset_abort(o);
  return st;
}

/* The --input files through the one input loader (io/inputs.h): a slot per program input
 * (any dtype of its shape: ct_sim_run converts), images preprocessed as the Input op of the
 * same name in model (--model) says. */
static ct_status read_inputs(const sim_args *a, const ct_program *prog, const ct_graph *model, ct_tensor_list *in,
                             ct_diag *d) {
  ct_input_slot *slots = calloc(prog->n_io + 1, sizeof *slots);
  if (!slots) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  int n = 0;
  for (size_t i = 0; i < prog->n_io; i++) {
    const ct_prog_io *io = &prog->io[i];
    if (io->is_output || io->is_tensor) continue;
    const ct_value *v = model ? ct_graph_find_value(model, io->name) : NULL;
    const ct_op *op = v && v->def && v->def->kind == CT_OP_INPUT ? v->def : NULL;
    slots[n++] = (ct_input_slot){io->name, io->dtype, io->ndim, io->shape, op, true,
                                 model ? "--model has no Input op of that name" : "give --model MODEL.tpu"};
  }
  ct_status st = ct_inputs_load_slots(slots, n, a->files, a->n_files, in, d);
  free(slots);
  return st;
}

static ct_status run(const sim_args *a, ct_diag *d) {
  ct_outset os;
  sim_paths p;
  ct_status st = add_outputs(&os, a, &p, d);
  if (st) return st;
  ct_chip chip;
  ct_program prog;
  ct_tensor_list inputs;
  ct_tensor_list_init(&inputs);
  ct_program_init(&prog, 0);
  ct_graph *model = NULL;
  st = ct_chip_load(a->chip, &chip, d);
  if (!st) st = ct_program_load(a->prog, &chip, &prog, d);
  if (!st && a->model) st = ct_ir_load_verified(a->model, &model, d);
  if (!st && a->model) st = ct_tool_in_model(&os, a->model, model, d);
  if (!st) st = ct_outset_check(&os, d);
  if (!st) st = read_inputs(a, &prog, model, &inputs, d);
  ct_graph_free(model);
  ct_trace *trace = NULL;
  if (!st && a->trace) st = ct_trace_open(&trace, p.trace, ct_trace_format_of(a->trace), chip.freq_mhz, &a->filter, d);
  ct_sim_run_output out;
  memset(&out, 0, sizeof out);
  if (!st) {
    ct_sim_run_options opt = {.functional = a->functional, .no_race_check = a->no_race, .dump_all = a->dump != NULL,
                              .trace = trace, .max_cycles = a->max_cycles};
    st = ct_sim_run(&chip, &prog, &inputs, &opt, &out, d);
    if (st && st != CT_ERR_LIMIT && st != CT_ERR_CHECK) ct_diag_prefix(d, "%s: ", a->prog);
  }
  if (!st) st = write_outputs(&p, &out, d);
  if (trace) {
    if (!st)
      st = ct_trace_commit(trace, d);
    else
      ct_trace_abort(trace);
  }
  st = ct_outset_end(&os, st, d);
  if (!st && out.res.end_code)
    fprintf(stderr, "ctpu sim: END code %d\n", out.res.end_code);
  ct_sim_run_output_free(&out);
  ct_tensor_list_free(&inputs);
  ct_program_free(&prog);
  return st;
}

int ct_cmd_sim(int argc, char **argv) {
  sim_args a;
  memset(&a, 0, sizeof a);
  int rc = ct_opts_parse(&ct_cmd_sim_spec, argc, argv, &a);
  if (rc) {
    free(a.layer_buf);
    return rc < 0 ? 0 : rc;
  }
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = run(&a, &d);
  free(a.layer_buf);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
