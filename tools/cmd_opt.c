/* cmd_opt.c: `ctpu opt` — loads a .top module, runs graph-optimization passes
 * (compiler/pass.h; default pipeline "canonicalize"), writes the result (MLIR's mlir-opt). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "compiler/pass.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tools/tools.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu opt IN.top [-o OUT.top] [--passes LIST] [--dump-after PASS|all] [--verify-each]\n"
          "                [--stats] [--log] [--help]\n"
          "  Runs passes over a Top module; writes OUT.top + OUT.top.h5 (without -o: the IR on stdout).\n"
          "  --passes LIST     comma-separated passes and pipelines (default: canonicalize)\n"
          "  --dump-after P    print the IR to stderr after pass P (or after every pass: all)\n"
          "  --verify-each     check the graph after every pass (always on in debug builds)\n"
          "  --stats           print `op <OpType> <before> <after>` for every op type on stdout\n"
          "  --log             print each pass's rewrite count to stderr\n"
          "  --max-memory BYTES[K|M|G]  largest tensor to allocate (default: half the physical memory)\n"
          "\npipelines:\n");
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

/* Parses argv; returns -1 to continue, else an exit code. */
static int parse_args(int argc, char **argv, opt_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    bool has_next = i + 1 < argc;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) { usage(stdout); return 0; }
    else if (!strcmp(s, "-o") && has_next) a->out = argv[++i];
    else if (!strcmp(s, "--passes") && has_next) a->passes = argv[++i];
    else if (!strcmp(s, "--dump-after") && has_next) a->po.dump_after = argv[++i];
    else if (!strcmp(s, "--verify-each")) a->po.verify_each = true;
    else if (!strcmp(s, "--stats")) a->stats = true;
    else if (!strcmp(s, "--log")) a->po.log = stderr;
    else if (s[0] == '-') return ct_tool_usage("opt", "unknown or incomplete option \"%s\"", s);
    else if (!a->in) a->in = s;
    else return ct_tool_usage("opt", "more than one input file (\"%s\")", s);
  }
  if (!a->in) return ct_tool_usage("opt", "missing input file");
  if (!a->passes[0]) return ct_tool_usage("opt", "--passes needs at least one pass");
  if (a->po.dump_after && strcmp(a->po.dump_after, "all") != 0) {
    bool known = false;
    for (int i = 0; i < ct_pass_count() && !known; i++) known = !strcmp(a->po.dump_after, ct_pass_name(i));
    if (!known) return ct_tool_usage("opt", "--dump-after: unknown pass \"%s\" (a pass name or all)", a->po.dump_after);
  }
  return -1;
}

/* OUT.top + OUT.top.h5 into an outset (common/outset.h); the inputs IN.top and IN.top.h5
 * may not be overwritten. */
static ct_status add_outputs(ct_outset *o, const opt_args *a, const char **tmp, ct_diag *d) {
  ct_outset_init(o, "opt");
  size_t ni = strlen(a->in) + 4, no = strlen(a->out) + 4;
  char *in_h5 = malloc(ni), *out_h5 = malloc(no);
  ct_status st = CT_OK;
  const char *tmp_h5;
  if (!in_h5 || !out_h5) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) {
    snprintf(in_h5, ni, "%s.h5", a->in);
    snprintf(out_h5, no, "%s.h5", a->out);
  }
  if (!st) st = ct_outset_input(o, a->in, d);
  if (!st) st = ct_outset_input(o, in_h5, d);
  if (!st) st = ct_outset_add(o, a->out, tmp, d);
  if (!st) st = ct_outset_add(o, out_h5, &tmp_h5, d);
  if (st) ct_outset_abort(o);
  free(in_h5);
  free(out_h5);
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
  if (ct_ir_load_verified(a.in, &g, &d) != CT_OK) return ct_tool_fail("opt", &d);
  int *before = malloc(sizeof *before * 2 * CT_OP_COUNT), *after = before ? before + CT_OP_COUNT : NULL;
  if (!before) {
    ct_graph_free(g);
    ct_diag_set(&d, CT_ERR_LIMIT, "out of memory");
    return ct_tool_fail("opt", &d);
  }
  count_ops(g, before);
  ct_outset o;
  const char *tmp = NULL;
  ct_status st = a.out ? add_outputs(&o, &a, &tmp, &d) : CT_OK;
  if (st == CT_OK) st = ct_pass_run_pipeline(g, a.passes, &a.po, &d);
  if (st == CT_OK && a.out) st = ct_ir_save(g, tmp, &d);
  else if (st == CT_OK) st = ct_ir_print(g, stdout, &d);
  if (a.out && st == CT_OK) st = ct_outset_commit(&o, &d);
  else if (a.out) ct_outset_abort(&o);
  if (st == CT_OK && a.stats) {
    count_ops(g, after);
    for (int k = 0; k < CT_OP_COUNT; k++)
      if (before[k] || after[k]) printf("op %s %d %d\n", ct_op_name((ct_op_kind)k), before[k], after[k]);
  }
  free(before);
  ct_graph_free(g);
  if (st != CT_OK) return ct_tool_fail("opt", &d);
  return 0;
}
