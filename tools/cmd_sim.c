/* cmd_sim.c: `ctpu sim PROG.ctpu --input FILE... -o OUT.h5`: runs a program on the
 * cycle-level cmodel (cmodel/sim.h) and writes outputs, stored tensors, summary, per-layer
 * report and a Chrome trace (docs/cmodel.md, docs/traces.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"
#include "common/h5io.h"
#include "common/outset.h"
#include "deploy/inputs.h"
#include "traces/report.h"
#include "tools/tools.h"

#define CMD "sim"
#define MAX_FILES 64
#define MAX_LAYERS 256

typedef struct sim_args {
  const char *prog, *out, *chip, *dump, *trace, *report, *summary;
  const char *files[MAX_FILES];
  int n_files;
  bool functional, no_race;
  uint64_t max_cycles;
  ct_trace_filter filter;
  char *layer_buf;
  char *layers[MAX_LAYERS];
} sim_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu sim PROG.ctpu --input FILE... -o OUT.h5 [--chip C.json] [--dump-all D.h5]\n"
          "                [--trace T.json] [--report R.csv] [--summary S.json] [--functional]\n"
          "  runs PROG on the cycle-level cmodel; outputs are raw integer tensors with\n"
          "  scale/zero_point attributes (see docs/cmodel.md)\n"
          "  --input FILE...        HDF5 files, datasets named as the program's inputs, or ONNX\n"
          "                         TensorProto .pb files (float data for an integer input is\n"
          "                         quantized with its scale/zero point)\n"
          "  --chip C.json          chip configuration (default: ctpu chip --dump)\n"
          "  --dump-all D.h5        every stored tensor, one per debug-map layer\n"
          "  --trace T.json         Chrome Trace Event JSON (Perfetto, chrome://tracing)\n"
          "  --trace-window S:E     only instructions overlapping cycles [S, E)\n"
          "  --trace-layers a,b     only instructions of these layers\n"
          "  --report R.csv         per-layer cycles, busy cycles per engine, MACs, DDR bytes\n"
          "  --summary S.json       total cycles, per-engine busy/stall/idle, utilization, DDR\n"
          "  --functional           no timing (same outputs, faster)\n"
          "  --no-race-check        skip the happens-before race check\n"
          "  --max-cycles N         stop with exit code 4 after N cycles\n"
          "  --max-memory BYTES[K|M|G]  largest tensor to allocate (default: half the physical memory)\n");
}

static bool parse_u64(const char *s, uint64_t *v) {
  char *end;
  if (!*s || *s == '-') return false;
  unsigned long long x = strtoull(s, &end, 10);
  *v = x;
  return *end == '\0';
}

static int parse_window(sim_args *a, const char *s) {
  const char *colon = strchr(s, ':');
  char lo[32];
  if (!colon || colon - s >= (long)sizeof lo) return ct_tool_usage(CMD, "--trace-window needs START:END, not \"%s\"", s);
  memcpy(lo, s, (size_t)(colon - s));
  lo[colon - s] = '\0';
  if (!parse_u64(lo, &a->filter.start_cycle) || !parse_u64(colon + 1, &a->filter.end_cycle) ||
      a->filter.end_cycle <= a->filter.start_cycle)
    return ct_tool_usage(CMD, "--trace-window needs START:END cycles with START < END, not \"%s\"", s);
  return 0;
}

static int parse_layers(sim_args *a, const char *s) {
  free(a->layer_buf);
  a->layer_buf = strdup(s);
  if (!a->layer_buf) return CT_ERR_LIMIT;
  a->filter.n_layers = 0;
  for (char *tok = strtok(a->layer_buf, ","); tok; tok = strtok(NULL, ",")) {
    if (a->filter.n_layers == MAX_LAYERS) return ct_tool_usage(CMD, "more than %d layers in --trace-layers", MAX_LAYERS);
    a->layers[a->filter.n_layers++] = tok;
  }
  a->filter.layers = a->layers;
  return 0;
}

/* Options with a value; returns 0, an exit code, or -2 if s is not one of them. */
static int parse_valued(sim_args *a, const char *s, const char *v) {
  const char **dst = !strcmp(s, "-o") ? &a->out : !strcmp(s, "--chip") ? &a->chip
                   : !strcmp(s, "--dump-all") ? &a->dump : !strcmp(s, "--trace") ? &a->trace
                   : !strcmp(s, "--report") ? &a->report : !strcmp(s, "--summary") ? &a->summary : NULL;
  if (dst) {
    *dst = v;
    return 0;
  }
  if (!strcmp(s, "--trace-window")) return parse_window(a, v);
  if (!strcmp(s, "--trace-layers")) return parse_layers(a, v);
  if (!strcmp(s, "--max-cycles"))
    return parse_u64(v, &a->max_cycles) && a->max_cycles ? 0
           : ct_tool_usage(CMD, "--max-cycles needs a positive number, not \"%s\"", v);
  return -2;
}

static int parse_args(int argc, char **argv, sim_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
    if (!strcmp(s, "--input")) {
      int rc = ct_tool_files(CMD, argc, argv, &i, a->files, &a->n_files, MAX_FILES);
      if (rc) return rc;
    } else if (!strcmp(s, "--functional")) {
      a->functional = true;
    } else if (!strcmp(s, "--no-race-check")) {
      a->no_race = true;
    } else if (s[0] == '-') {
      int rc = i + 1 < argc ? parse_valued(a, s, argv[i + 1]) : -2;
      if (rc == -2) return ct_tool_usage(CMD, "unknown option \"%s\" (or missing value)", s);
      if (rc) return rc;
      i++;
    } else if (!a->prog) {
      a->prog = s;
    } else {
      return ct_tool_usage(CMD, "unexpected argument \"%s\"", s);
    }
  }
  if (!a->prog) return ct_tool_usage(CMD, "no program given");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o OUT.h5)");
  return 0;
}

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
  for (int i = 0; !st && i < a->n_files; i++) st = ct_outset_input(o, a->files[i], d);
  const char *const dest[5] = {a->out, a->dump, a->trace, a->report, a->summary};
  const char **tmp[5] = {&p->out, &p->dump, &p->trace, &p->report, &p->summary};
  for (int i = 0; !st && i < 5; i++)
    if (dest[i]) st = ct_outset_add(o, dest[i], tmp[i], d);
  if (st) ct_outset_abort(o);
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
  st = ct_chip_load(a->chip, &chip, d);
  if (!st) st = ct_program_load(a->prog, &chip, &prog, d);
  for (int i = 0; !st && i < a->n_files; i++) st = ct_deploy_read_input(&prog, a->files[i], &inputs, d);
  ct_trace *trace = NULL;
  if (!st && a->trace) st = ct_trace_open(&trace, p.trace, chip.freq_mhz, &a->filter, d);
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
  if (!st) st = ct_outset_commit(&os, d);
  else ct_outset_abort(&os);
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
  int rc = parse_args(argc, argv, &a);
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
