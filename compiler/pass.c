/* pass.c: the pass manager — pass and pipeline tables, pipeline parsing, fixed-point
 * repetition of pipelines, structural verification and dumps after each pass
 * (after MLIR's PassManager with -verify-each and -mlir-print-ir-after). */
#include "compiler/pass.h"

#include <stdlib.h>
#include <string.h>

#include "ops/verify.h"

#define P(E, name, fn, summary) ct_status fn(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d);
#include "compiler/passes.def"
#undef P

static const struct {
  const char *name;
  ct_pass_fn fn;
  const char *summary;
} pass_table[] = {
#define P(E, name, fn, summary) {name, fn, summary},
#include "compiler/passes.def"
#undef P
};

enum {
#define P(E, name, fn, summary) CT_PASS_##E,
#include "compiler/passes.def"
#undef P
  CT_PASS_COUNT
};
_Static_assert(sizeof pass_table / sizeof pass_table[0] == CT_PASS_COUNT, "pass table out of sync");

/* Pipelines: name → passes, run repeatedly until a whole round changes nothing. The order
 * puts the cleanups (constants, then shapes, identities) before the pattern folds that need
 * constants and single uses, and activation fusion after the folds that precede it. */
static const struct {
  const char *name;
  const char *passes;
} pipeline_table[] = {
    {"canonicalize",
     "fold-constants,infer-shapes,remove-identity,dce,cse,fold-pad,fold-bn,fold-affine,merge-chains,"
     "matmul-to-gemm,canonical-gemm,gather-to-slice,collapse-reshape,fold-transpose,fuse-patterns,bn-to-conv,fuse-act,dce"},
};
#define N_PIPELINES ((int)(sizeof pipeline_table / sizeof pipeline_table[0]))

int ct_pass_count(void) { return CT_PASS_COUNT; }
const char *ct_pass_name(int i) { return i >= 0 && i < CT_PASS_COUNT ? pass_table[i].name : "?"; }
const char *ct_pass_summary(int i) { return i >= 0 && i < CT_PASS_COUNT ? pass_table[i].summary : "?"; }
int ct_pipeline_count(void) { return N_PIPELINES; }
const char *ct_pipeline_name(int i) { return i >= 0 && i < N_PIPELINES ? pipeline_table[i].name : "?"; }
const char *ct_pipeline_passes(int i) { return i >= 0 && i < N_PIPELINES ? pipeline_table[i].passes : "?"; }

void ct_pass_options_init(ct_pass_options *o) {
  memset(o, 0, sizeof *o);
#ifndef NDEBUG
  o->verify_each = true;
#endif
  o->threads = 1;
  o->fold_max_elems = (int64_t)1 << 24;
  o->max_rounds = 8;
}

static int find_pass(const char *name, size_t n) {
  for (int i = 0; i < CT_PASS_COUNT; i++)
    if (strlen(pass_table[i].name) == n && strncmp(pass_table[i].name, name, n) == 0) return i;
  return -1;
}

static int find_pipeline(const char *name, size_t n) {
  for (int i = 0; i < N_PIPELINES; i++)
    if (strlen(pipeline_table[i].name) == n && strncmp(pipeline_table[i].name, name, n) == 0) return i;
  return -1;
}

/* ---- structural check ---- */

static ct_status check_op(const ct_graph *g, const ct_op *op, const char *placed, ct_diag *d) {
  int mi, ma, mo, mx;
  ct_op_arity(op->kind, &mi, &ma, &mo, &mx);
  const char *k = ct_op_name(op->kind);
  if (op->n_in < mi || (ma >= 0 && op->n_in > ma) || op->n_out < mo || (mx >= 0 && op->n_out > mx))
    return ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\" (op %s): %d operands, %d results out of range", op->loc,
                       k, op->n_in, op->n_out);
  for (int j = 0; j < op->n_in; j++) {
    const ct_value *v = op->in[j];
    if (v && (v->id < 0 || v->id >= g->n_values || g->values[v->id] != v || !placed[v->id]))
      return ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\" (op %s): operand %d (\"%s\") is not defined before it",
                         op->loc, k, j, v->name);
  }
  for (int j = 0; j < op->n_out; j++) {
    const ct_value *v = op->out[j];
    if (v && v->def != op)
      return ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\" (op %s): result %d (\"%s\") names another producer",
                         op->loc, k, j, v->name);
  }
  if (op->kind == CT_OP_WEIGHT) {
    const ct_value *v = op->out[0];
    const ct_tensor *t = v ? v->data : NULL;
    if (t && (t->dtype != v->dtype || t->ndim != v->ndim ||
              (v->ndim > 0 && memcmp(t->shape, v->shape, sizeof *t->shape * (size_t)v->ndim) != 0)))
      return ct_diag_set(d, CT_ERR_INTERNAL, "weight \"%s\": data does not match its type", v->name);
  }
  return CT_OK;
}

ct_status ct_pass_check_graph(const ct_graph *g, ct_diag *d) {
  char *placed = calloc((size_t)g->n_values + 1, 1);
  if (!placed) return ct_diag_set(d, CT_ERR_LIMIT, "verify: out of memory");
  ct_status st = CT_OK;
  for (int i = 0; i < g->n_values && st == CT_OK; i++)
    if (g->values[i]->id != i) st = ct_diag_set(d, CT_ERR_INTERNAL, "value \"%s\": id %d at index %d", g->values[i]->name, g->values[i]->id, i);
  for (int i = 0; i < g->n_ops && st == CT_OK; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead) { st = ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\": erased op left in the graph", op->loc); break; }
    st = check_op(g, op, placed, d);
    for (int j = 0; j < op->n_out && st == CT_OK; j++)
      if (op->out[j]) {
        if (placed[op->out[j]->id]) st = ct_diag_set(d, CT_ERR_INTERNAL, "value \"%s\" defined twice", op->out[j]->name);
        placed[op->out[j]->id] = 1;
      }
  }
  for (int i = 0; i < g->n_outputs && st == CT_OK; i++) {
    const ct_value *v = g->outputs[i];
    if (!v || v->id < 0 || v->id >= g->n_values || g->values[v->id] != v || !placed[v->id])
      st = ct_diag_set(d, CT_ERR_INTERNAL, "module output %d is not defined", i);
  }
  free(placed);
  return st;
}

/* ---- running ---- */

/* Run state: options and which verifier applies (full ct_ir_verify when the input graph
 * passed it, else the structural ct_pass_check_graph). */
typedef struct run_ctx {
  const ct_pass_options *o;
  bool full_verify;
} run_ctx;

static ct_status verify(ct_graph *g, const run_ctx *rc, ct_diag *d) {
  ct_status st = rc->full_verify ? ct_ir_verify(g, d) : ct_pass_check_graph(g, d);
  if (st != CT_OK && st != CT_ERR_LIMIT) d->code = st = CT_ERR_INTERNAL;
  return st;
}

static ct_status run_pass(ct_graph *g, int p, const run_ctx *rc, int *changed, ct_diag *d) {
  const ct_pass_options *o = rc->o;
  int n = 0;
  ct_status st = pass_table[p].fn(g, o, &n, d);
  if (st != CT_OK) return ct_diag_prefix(d, "pass %s: ", pass_table[p].name);
  *changed += n;
  if (o->log) fprintf(o->log, "pass %-18s %d rewrites, %d ops\n", pass_table[p].name, n, g->n_ops);
  if (o->verify_each && (st = verify(g, rc, d)) != CT_OK)
    return ct_diag_prefix(d, "verify after pass %s: ", pass_table[p].name);
  if (o->dump && o->dump_after && (!strcmp(o->dump_after, "all") || !strcmp(o->dump_after, pass_table[p].name)))
    o->dump(g, pass_table[p].name, o->dump_user);
  return CT_OK;
}

/* Runs one comma-separated list of pass names once; *changed gets the rewrites. */
static ct_status run_list(ct_graph *g, const char *list, const run_ctx *rc, int depth, int *changed, ct_diag *d);

static ct_status run_pipeline(ct_graph *g, int pi, const run_ctx *rc, int depth, ct_diag *d) {
  const ct_pass_options *o = rc->o;
  int rounds = o->max_rounds > 0 ? o->max_rounds : 1;
  for (int r = 0; r < rounds; r++) {
    int changed = 0;
    ct_status st = run_list(g, pipeline_table[pi].passes, rc, depth + 1, &changed, d);
    if (st != CT_OK) return st;
    if (o->log) fprintf(o->log, "pipeline %s round %d: %d rewrites\n", pipeline_table[pi].name, r + 1, changed);
    if (changed == 0) break;
  }
  return CT_OK;
}

static ct_status run_list(ct_graph *g, const char *list, const run_ctx *rc, int depth, int *changed, ct_diag *d) {
  if (depth > 4) return ct_diag_set(d, CT_ERR_INTERNAL, "pipelines nest too deeply");
  for (const char *s = list; *s;) {
    size_t n = strcspn(s, ",");
    while (n > 0 && *s == ' ') { s++; n--; }
    if (n > 0) {
      int p = find_pass(s, n), pi = p < 0 ? find_pipeline(s, n) : -1;
      ct_status st = CT_OK;
      if (p >= 0) st = run_pass(g, p, rc, changed, d);
      else if (pi >= 0) st = run_pipeline(g, pi, rc, depth, d);
      else return ct_diag_set(d, CT_ERR_USAGE, "unknown pass \"%.*s\" (see ctpu opt --help)", (int)n, s);
      if (st != CT_OK) return st;
    }
    s += n;
    if (*s == ',') s++;
  }
  return CT_OK;
}

ct_status ct_pass_run_pipeline(ct_graph *g, const char *passes, const ct_pass_options *o, ct_diag *d) {
  ct_pass_options def;
  if (!o) {
    ct_pass_options_init(&def);
    o = &def;
  }
  /* validate every name first so a typo fails before anything is rewritten */
  for (const char *s = passes; *s;) {
    size_t n = strcspn(s, ",");
    while (n > 0 && *s == ' ') { s++; n--; }
    if (n == 0) return ct_diag_set(d, CT_ERR_USAGE, "empty pass name in the pass list \"%s\"", passes);
    if (find_pass(s, n) < 0 && find_pipeline(s, n) < 0)
      return ct_diag_set(d, CT_ERR_USAGE, "unknown pass \"%.*s\" (see ctpu opt --help)", (int)n, s);
    s += n;
    if (*s == ',') s++;
  }
  run_ctx rc = {o, false};
  if (o->verify_each) { /* full verification only if the input already satisfies it */
    ct_status st = ct_pass_check_graph(g, d);
    if (st != CT_OK) {
      if (st != CT_ERR_LIMIT) d->code = CT_ERR_INPUT;
      return ct_diag_prefix(d, "input graph: ");
    }
    ct_status vs = ct_ir_verify(g, d);
    if (vs == CT_ERR_LIMIT) return vs; /* out of memory is not "the input does not verify" */
    rc.full_verify = vs == CT_OK;
    ct_diag_clear(d);
  }
  int changed = 0;
  return run_list(g, passes, &rc, 0, &changed, d);
}
