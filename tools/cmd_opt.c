/* cmd_opt.c: `ctpu opt` — loads a .top module, runs graph-optimization passes
 * (compiler/pass.h; default pipeline "canonicalize"), writes the result (MLIR's mlir-opt). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "compiler/pass.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "opt"

/* The pipelines and passes, after the options in --help. */
static void list_passes(FILE *f) {
  fprintf(f, "\npipelines:\n");
  for (int i = 0; i < ct_pipeline_count(); i++) fprintf(f, "  %-18s %s\n", ct_pipeline_name(i), ct_pipeline_passes(i));
  fprintf(f, "passes:\n");
  for (int i = 0; i < ct_pass_count(); i++) fprintf(f, "  %-18s %s\n", ct_pass_name(i), ct_pass_summary(i));
}

static void dump_ir(const ct_graph *g, const char *pass, void *user) {
  (void)user;
  ct_diag d;
  fprintf(stderr, "// -----// IR Dump After %s //----- //\n", pass);
  if (ct_ir_print(g, stderr, &d) != CT_OK) fprintf(stderr, "// (print failed: %s)\n", d.msg);
}

static void count_ops(const ct_graph *g, int *counts) {
  for (int k = 0; k < CT_OP_COUNT; k++) counts[k] = 0;
  for (int i = 0; i < g->n_ops; i++)
    if (!g->ops[i]->dead) counts[g->ops[i]->kind]++;
}

typedef struct opt_args {
  const char *in, *out, *passes;
  bool stats;
  ct_pass_options po;
} opt_args;

static int set_log(void *args, const char *cmd, const ct_opt *o, const char *v) {
  (void)cmd, (void)o, (void)v;
  ((opt_args *)args)->po.log = stderr;
  return 0;
}

static const ct_opt opts[] = {
    CT_OPT_STR_("-o", "OUT.top", opt_args, out, "write OUT.top + OUT.top.h5 (default: the IR on stdout)"),
    CT_OPT_STR_("--passes", "LIST", opt_args, passes, "comma-separated passes and pipelines (default: canonicalize)"),
    CT_OPT_STR_("--dump-after", "P", opt_args, po.dump_after, "print the IR to stderr after pass P (or after every pass: all)"),
    CT_OPT_FLAG_("--verify-each", opt_args, po.verify_each, "check the graph after every pass (always on in debug builds)"),
    CT_OPT_FLAG_("--stats", opt_args, stats, "print `op <OpType> <before> <after>` for every op type on stdout"),
    CT_OPT_FN_FLAG_("--log", set_log, "print each pass's rewrite count to stderr"),
    CT_OPT_MAX_MEMORY,
};

const ct_cmd_spec ct_cmd_opt_spec = {.cmd = CMD,
                                 .synopsis = "IN.top [-o OUT.top] [--passes LIST] [--dump-after PASS|all] [--verify-each] "
                                             "[--stats] [--log]",
                                 .about = "runs passes over a Top module; writes OUT.top + OUT.top.h5 (without -o: the IR "
                                          "on stdout)",
                                 .pos_noun = "input file",
                                 .pos_off = offsetof(opt_args, in),
                                 .pos_max = 1,
                                 .pos_required = true,
                                 .opts = opts,
                                 .n_opts = CT_OPTS_COUNT(opts),
                                 .more = list_passes};

/* Parses argv; returns -1 to continue, else an exit code. */
static int parse_args(int argc, char **argv, opt_args *a) {
  int rc = ct_opts_parse(&ct_cmd_opt_spec, argc, argv, a);
  if (rc) return rc < 0 ? 0 : rc;
  if (!a->passes[0]) return ct_tool_usage(CMD, "--passes needs at least one pass");
  if (a->po.dump_after && strcmp(a->po.dump_after, "all") != 0) {
    bool known = false;
    for (int i = 0; i < ct_pass_count() && !known; i++) known = !strcmp(a->po.dump_after, ct_pass_name(i));
    if (!known) return ct_tool_usage(CMD, "--dump-after: unknown pass \"%s\" (a pass name or all)", a->po.dump_after);
  }
  return -1;
}

/* OUT.top + OUT.top.h5 into an outset (common/outset.h); the inputs IN.top and its weights
 * (g loaded) may not be overwritten. */
static ct_status add_outputs(ct_outset *o, const opt_args *a, const ct_graph *g, const char **tmp, ct_diag *d) {
  ct_outset_init(o, CMD);
  ct_status st = ct_tool_in_model(o, a->in, g, d);
  if (!st) st = ct_tool_out_model(o, a->out, tmp, d);
  if (st) ct_outset_abort(o);
  return st;
}

int ct_cmd_opt(int argc, char **argv) {
  opt_args a = {0};
  ct_pass_options_init(&a.po);
  a.passes = "canonicalize";
  a.po.dump = dump_ir;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_graph *g = NULL;
  if (ct_ir_load_verified(a.in, &g, &d) != CT_OK) return ct_tool_fail(CMD, &d);
  int *before = malloc(sizeof *before * 2 * CT_OP_COUNT), *after = before ? before + CT_OP_COUNT : NULL;
  if (!before) {
    ct_graph_free(g);
    ct_diag_set(&d, CT_ERR_LIMIT, "out of memory");
    return ct_tool_fail(CMD, &d);
  }
  count_ops(g, before);
  ct_outset o;
  const char *tmp = NULL;
  ct_status st = a.out ? add_outputs(&o, &a, g, &tmp, &d) : CT_OK;
  if (st == CT_OK) st = ct_pass_run_pipeline(g, a.passes, &a.po, &d);
  if (st == CT_OK && a.out) st = ct_ir_save(g, tmp, &d);
  else if (st == CT_OK) st = ct_ir_print(g, stdout, &d);
  if (a.out) st = ct_outset_end(&o, st, &d);
  if (st == CT_OK && a.stats) {
    count_ops(g, after);
    for (int k = 0; k < CT_OP_COUNT; k++)
      if (before[k] || after[k]) printf("op %s %d %d\n", ct_op_name((ct_op_kind)k), before[k], after[k]);
  }
  free(before);
  ct_graph_free(g);
  if (st != CT_OK) return ct_tool_fail(CMD, &d);
  return 0;
}
