/* cmd_qtable.c: `ctpu qtable MODEL.top --calibration-table T --dataset D --expected-cos C -o Q`:
 * mixed precision search (TPU-MLIR's search_qtable, docs/qtable.md). Ranks the ops of an
 * INT8 lowering by the cosine each one loses (cosine of its inputs taken together minus that of its result,
 * Tpu vs Top over the samples), then finds the fewest of the worst ones to keep in BF16/F16
 * so that the output cosine reaches the target, and writes them as a quantize table. */
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "compiler/lower.h"
#include "ir/text.h"
#include "ops/tpu_util.h"
#include "ops/verify.h"
#include "reference/interp.h"
#include "tools/samples.h"
#include "tools/tools.h"

#define CMD "qtable"

typedef struct qt_args {
  const char *model, *calib, *dataset, *out;
  long long input_num, max_float, probe;
  double expected_cos;
  ct_qmode float_mode;
} qt_args;

/* Cosine accumulator over every element of every sample; seen: something was added. */
typedef struct qt_cos {
  ct_cos_sums s;
  bool seen;
} qt_cos;

/* The search state: samples, float outputs, per-value accumulators of the Top graph g. */
typedef struct qt_state {
  const qt_args *a;
  ct_graph *g;
  ct_calib_table calib;
  ct_tool_samples sm;
  qt_cos *acc;            /* per value id of g */
  ct_tensor_list floats;  /* one sample's float results (the sensitivity pass) */
} qt_state;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu qtable MODEL.top --calibration-table T --dataset D -o QTABLE [options]\n"
          "  mixed precision search (TPU-MLIR search_qtable): the fewest layers to keep in float so\n"
          "  that the INT8 model's output cosine vs the float model reaches --expected-cos\n"
          "  --input-num N            samples of the data set used (default 10)\n"
          "  --expected-cos C         target output cosine, in (0, 1] (default 0.99)\n"
          "  --max-float-layers N     at most N float layers (default no limit)\n"
          "  --float-mode BF16|F16    precision of the float layers (default BF16)\n"
          "  --probe N                re-rank the N worst layers by the output cosine each one\n"
          "                           alone in float gives (N lowerings; default 0: local ranking)\n");
}

static int parse_args(int argc, char **argv, qt_args *a) {
  memset(a, 0, sizeof *a);
  a->input_num = 10, a->max_float = -1, a->expected_cos = 0.99, a->float_mode = CT_QMODE_BF16;
  for (int i = 1; i < argc; i++) {
    const char *s, *v;
    int rc = ct_tool_arg(CMD, argc, argv, &i, usage, &a->model, &s, &v);
    if (rc) return rc;
    if (!s) continue; /* the model */
    long long x = 0;
    if (!strcmp(s, "--calibration-table")) a->calib = v;
    else if (!strcmp(s, "--dataset")) a->dataset = v;
    else if (!strcmp(s, "-o")) a->out = v;
    else if (!strcmp(s, "--input-num")) {
      if ((rc = ct_tool_int_opt(CMD, s, v, 1, LLONG_MAX, &x))) return rc;
      a->input_num = x;
    } else if (!strcmp(s, "--max-float-layers")) {
      if ((rc = ct_tool_int_opt(CMD, s, v, 0, LLONG_MAX, &x))) return rc;
      a->max_float = x;
    } else if (!strcmp(s, "--probe")) {
      if ((rc = ct_tool_int_opt(CMD, s, v, 0, LLONG_MAX, &x))) return rc;
      a->probe = x;
    } else if (!strcmp(s, "--expected-cos")) {
      char *end;
      double c = strtod(v, &end);
      if (!*v || *end || !(c > 0 && c <= 1)) return ct_tool_usage(CMD, "--expected-cos needs a number in (0, 1], not \"%s\"", v);
      a->expected_cos = c;
    } else if (!strcmp(s, "--float-mode")) {
      a->float_mode = ct_qmode_from_name(v);
      if (a->float_mode != CT_QMODE_BF16 && a->float_mode != CT_QMODE_F16)
        return ct_tool_usage(CMD, "--float-mode needs BF16 or F16, not \"%s\"", v);
    } else {
      return ct_tool_usage(CMD, "unknown option \"%s\"", s);
    }
  }
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  if (!a->calib) return ct_tool_usage(CMD, "no calibration table given (--calibration-table T)");
  if (!a->dataset) return ct_tool_usage(CMD, "no data set given (--dataset D)");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o QTABLE)");
  return 0;
}

static double cos_of(const qt_cos *c) { return c->seen ? ct_cos_of(&c->s) : 1.0; }

/* Adds the float reference ref and the (dequantized) tensor t to c. */
static ct_status cos_add(qt_cos *c, const ct_tensor *ref, const ct_tensor *t, ct_diag *d) {
  ct_status st = ct_tool_cos_add(&c->s, ref, t, d);
  c->seen |= !st && ct_tensor_numel(ref) == ct_tensor_numel(t);
  return st;
}

/* on_op of the float run: keeps a copy of every computed result of g. */
static ct_status keep_float(void *user, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                            ct_diag *d) {
  (void)in;
  qt_state *s = user;
  if (op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT) return CT_OK;
  for (int k = 0; k < op->n_out; k++) {
    if (!out[k] || !op->out[k] || op->out[k]->data) continue;
    ct_tensor *c = ct_tensor_clone(out[k]);
    if (!c || !ct_tensor_set_name(c, op->out[k]->name) || !ct_tensor_list_push(&s->floats, c)) {
      ct_tensor_free(c);
      return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    }
  }
  return CT_OK;
}

/* on_op of the Tpu run: accumulates each result against the float value of the same name. */
static ct_status cmp_tpu(void *user, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                         ct_diag *d) {
  (void)in;
  qt_state *s = user;
  for (int k = 0; k < op->n_out; k++) {
    if (!out[k] || !op->out[k]) continue;
    ct_tensor *ref = ct_tensor_list_find(&s->floats, op->out[k]->name);
    ct_value *v = ref ? ct_graph_find_value(s->g, op->out[k]->name) : NULL;
    if (!v) continue;
    ct_status st = cos_add(&s->acc[v->id], ref, out[k], d);
    if (st) return st;
  }
  return CT_OK;
}

/* Loads g, lowers it to INT8 with rows as the quantize table. */
static ct_status lower_with(const qt_state *s, const ct_qtable *rows, ct_graph **out, ct_diag *d) {
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = &s->calib, .qtable = rows};
  return ct_tool_load_lowered(s->a->model, &o, out, d);
}

/* Output cosine of the INT8 model with the first k ranked layers float: per module output,
 * accumulated over all samples; the smallest over the outputs. With sens, also fills s->acc
 * for every value (the sensitivity pass). */
static ct_status measure(qt_state *s, const ct_qtable *rows, bool sens, double *cos_out, ct_diag *d) {
  ct_graph *t = NULL;
  ct_status st = lower_with(s, rows, &t, d);
  int no = s->g->n_outputs;
  qt_cos *oc = calloc((size_t)no + 1, sizeof *oc);
  if (!st && !oc) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int64_t i = 0; !st && i < s->sm.n; i++) {
    ct_ref_options fo = {.on_op = keep_float, .on_op_user = s}, to = {.on_op = cmp_tpu, .on_op_user = s};
    ct_tensor_list tmp, outs;
    ct_tensor_list_init(&tmp), ct_tensor_list_init(&outs);
    if (sens) st = ct_ref_run(s->g, &fo, &s->sm.inputs[i], &tmp, d);
    if (!st) st = ct_ref_run(t, sens ? &to : &(ct_ref_options){0}, &s->sm.inputs[i], &outs, d);
    for (int k = 0; !st && k < no && k < outs.n && k < s->sm.ref_out[i].n; k++)
      st = cos_add(&oc[k], s->sm.ref_out[i].items[k], outs.items[k], d);
    ct_tensor_list_free(&tmp), ct_tensor_list_free(&outs), ct_tensor_list_free(&s->floats);
    ct_tensor_list_init(&s->floats);
    if (st) ct_diag_prefix(d, "sample %lld: ", (long long)i);
  }
  double c = 1.0;
  for (int k = 0; k < no; k++) c = fmin(c, cos_of(&oc[k]));
  *cos_out = c;
  free(oc);
  ct_graph_free(t);
  return st;
}

/* One candidate layer: a Top op and the cosine it loses. */
typedef struct qt_layer {
  const ct_op *op;
  double loss, cos;
} qt_layer;

static int by_loss(const void *x, const void *y) {
  const qt_layer *a = x, *b = y;
  if (a->loss != b->loss) return a->loss < b->loss ? 1 : -1;
  return a->op->id < b->op->id ? -1 : a->op->id > b->op->id;
}

/* The ops of g that lose cosine in the INT8 run (s->acc filled): loss = the cosine of the
 * op's computed operands taken together (their Σxy, Σx², Σy² summed: exact for a Concat; 1
 * with none) minus its first result's cosine. An op that gains cosine (a Relu after an Add whose requant already clamps, so the
 * Add's stored value is the Relu's) passes its gain back to the producer of its worst
 * operand, so the pair counts as one loss. Every op but Input/Weight is listed (an op whose
 * result the Tpu run does not hold, e.g. a Sigmoid fused into a SiLU Lut, has loss 0),
 * sorted worst first (graph order on ties). loss is scratch space, one entry per value of g. */
static int rank_layers(const qt_state *s, qt_layer *l, double *loss) {
  const ct_graph *g = s->g;
  for (int i = 0; i < g->n_values; i++) loss[i] = 0;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || op->n_out < 1 || !op->out[0]) continue;
    const qt_cos *c = &s->acc[op->out[0]->id];
    if (!c->seen) continue;
    qt_cos all = {{0}, false};
    const ct_value *worst = NULL;
    for (int k = 0; k < op->n_in; k++) {
      const ct_value *v = op->in[k];
      if (!v || v->data || !s->acc[v->id].seen) continue;
      const qt_cos *a = &s->acc[v->id];
      all.s.xy += a->s.xy, all.s.xx += a->s.xx, all.s.yy += a->s.yy, all.seen = true;
      if (!worst || cos_of(a) < cos_of(&s->acc[worst->id])) worst = v;
    }
    double x = cos_of(&all) - cos_of(c);
    if (x < 0 && worst && worst->def && worst->def->n_out > 0 && worst->def->out[0])
      loss[worst->def->out[0]->id] += x;
    else loss[op->out[0]->id] += x;
  }
  int n = 0;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || op->n_out < 1 || !op->out[0]) continue;
    l[n++] = (qt_layer){op, loss[op->out[0]->id], cos_of(&s->acc[op->out[0]->id])};
  }
  qsort(l, (size_t)n, sizeof *l, by_loss);
  return n;
}

/* Marks (by result value id) the ops sharing a per-channel activation with a marked op — the
 * producer and the depthwise / LUT readers of every channel activation (ct_tq_channel_act) a
 * marked op reads or computes — to a fixed point: such a chain is INT8 per channel only as a
 * whole, so it goes to float as a whole (one op of it in float leaves its neighbours per
 * tensor, and the output cosine then does not grow with the float layers). An ordinary Conv
 * that folds the scales is not a link (it would join most of a network into one chain). */
static void close_chains(const ct_graph *g, bool *mark) {
  for (bool again = true; again;) {
    again = false;
    for (int i = 0; i < g->n_ops; i++) {
      const ct_op *op = g->ops[i];
      if (op->dead || op->n_out < 1 || !op->out[0] || !mark[op->out[0]->id]) continue;
      for (int k = -1; k < op->n_in; k++) {
        const ct_value *v = k < 0 ? op->out[0] : op->in[k];
        if (!v || v->data || !ct_tq_channel_act(g, v) || (k >= 0 && ct_tq_folds_channels(op, v))) continue;
        for (int j = 0; j < g->n_ops; j++) {
          const ct_op *u = g->ops[j];
          bool link = u == v->def;
          for (int q = 0; !u->dead && !link && q < u->n_in; q++) link = u->in[q] == v && !ct_tq_folds_channels(u, v);
          if (link && !u->dead && u->n_out > 0 && u->out[0] && !mark[u->out[0]->id]) mark[u->out[0]->id] = again = true;
        }
      }
    }
  }
}

/* rows := the first k layers in float_mode, with their per-channel chains (close_chains),
 * named by their first result. */
static ct_status rows_of(const qt_state *s, const qt_layer *l, int k, ct_qtable *rows, ct_diag *d) {
  ct_qtable_free(rows);
  ct_qtable_init(rows);
  bool *mark = calloc((size_t)s->g->n_values + 1, sizeof *mark);
  if (!mark) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int i = 0; i < k; i++) mark[l[i].op->out[0]->id] = true;
  close_chains(s->g, mark);
  ct_status st = CT_OK;
  for (int i = 0; !st && i < s->g->n_ops; i++) {
    const ct_op *op = s->g->ops[i];
    if (!op->dead && op->n_out > 0 && op->out[0] && mark[op->out[0]->id])
      st = ct_qtable_add(rows, op->out[0]->name, s->a->float_mode, 0, d);
  }
  free(mark);
  return st;
}

static ct_status try_k(qt_state *s, const qt_layer *l, int k, ct_qtable *rows, double *c, ct_diag *d) {
  ct_status st = rows_of(s, l, k, rows, d);
  if (!st) st = measure(s, rows, false, c, d);
  if (!st) printf("float layers %d (%lld with their per-channel chains): cosine %.6f\n", k, (long long)rows->n, *c);
  if (!st) fflush(stdout);
  if (!st && ct_tool_isatty()) fprintf(stderr, "ctpu qtable: %d float layers, cosine %.6f\n", k, *c);
  return st;
}

static int by_gain(const void *x, const void *y) {
  const qt_layer *a = x, *b = y;
  if (a->cos != b->cos) return a->cos < b->cos ? 1 : -1;
  return a->op->id < b->op->id ? -1 : a->op->id > b->op->id;
}

/* --probe: each of the first np layers alone in float; they are re-ranked by the output
 * cosine that gives (highest first; l[i].cos then holds it), ahead of the unprobed rest. */
static ct_status probe(qt_state *s, qt_layer *l, int np, ct_diag *d) {
  ct_qtable rows;
  ct_qtable_init(&rows);
  ct_status st = CT_OK;
  for (int i = 0; !st && i < np; i++) {
    st = ct_qtable_add(&rows, l[i].op->out[0]->name, s->a->float_mode, 0, d);
    if (!st) st = measure(s, &rows, false, &l[i].cos, d);
    if (!st && ct_tool_isatty()) fprintf(stderr, "\rctpu qtable: probe %d/%d", i + 1, np);
    ct_qtable_free(&rows);
    ct_qtable_init(&rows);
  }
  if (!st && ct_tool_isatty() && np > 0) fputc('\n', stderr);
  if (!st) qsort(l, (size_t)np, sizeof *l, by_gain);
  return st;
}

/* Fewest k (in the ranked order) whose output cosine reaches the target: k = 1, 2, 4, ...
 * until it is reached or the limit, then bisection between the last miss and the first hit
 * (the cosine grows with k in practice; each probe is one lowering and n runs). */
static ct_status search(qt_state *s, const qt_layer *l, int kmax, int *best, double *best_cos, ct_diag *d) {
  ct_qtable rows;
  ct_qtable_init(&rows);
  ct_status st = CT_OK;
  int lo = 0, hi = -1;
  double c = 0;
  for (int k = 1; !st && kmax > 0; k = k * 2 > kmax ? kmax : k * 2) {
    st = try_k(s, l, k, &rows, &c, d);
    if (st) break;
    if (c >= s->a->expected_cos) {
      hi = k, *best_cos = c;
      break;
    }
    lo = k, *best_cos = c;
    if (k == kmax) break;
  }
  if (hi < 0) *best = lo;
  while (!st && hi >= 0 && hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    st = try_k(s, l, mid, &rows, &c, d);
    if (st) break;
    if (c >= s->a->expected_cos) hi = mid, *best_cos = c;
    else lo = mid;
  }
  if (hi >= 0) *best = hi;
  ct_qtable_free(&rows);
  return st;
}

static ct_status run(qt_state *s, ct_diag *d) {
  const qt_args *a = s->a;
  ct_outset os;
  ct_outset_init(&os, CMD);
  const char *tmp = NULL;
  ct_status st = ct_outset_input(&os, a->model, d);
  if (!st) st = ct_outset_add(&os, a->out, &tmp, d);
  if (!st) st = ct_calib_table_read(a->calib, &s->calib, d);
  if (!st) st = ct_ir_load_verified(a->model, &s->g, d);
  if (!st && ct_graph_dialect(s->g) != CT_DIALECT_TOP)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: not a Top module (qtable searches a float model)", a->model);
  if (!st) st = ct_tool_samples_load(a->dataset, s->g, a->input_num, &s->sm, d);
  if (!st && !(s->acc = calloc((size_t)s->g->n_values, sizeof *s->acc))) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  double c0 = 0, best_cos = 0;
  if (!st) st = measure(s, NULL, true, &c0, d);
  qt_layer *l = st ? NULL : calloc((size_t)s->g->n_ops + 1, sizeof *l);
  double *loss = st ? NULL : calloc((size_t)s->g->n_values + 1, sizeof *loss);
  if (!st && (!l || !loss)) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  int nl = st ? 0 : rank_layers(s, l, loss), best = 0;
  free(loss);
  if (!st) {
    printf("samples %lld\nint8 cosine %.6f\nworst layers (cosine lost, cosine):\n", (long long)s->sm.n, c0);
    for (int i = 0; i < nl && i < 5; i++) printf("  %s %.6f %.6f\n", l[i].op->out[0]->name, l[i].loss, l[i].cos);
    fflush(stdout);
  }
  int np = c0 >= a->expected_cos ? 0 : a->probe < nl ? (int)a->probe : nl;
  if (!st && c0 < a->expected_cos) st = probe(s, l, np, d);
  if (!st && np > 0) {
    printf("probed %d layers; best alone in float (output cosine):\n", np);
    for (int i = 0; i < np && i < 5; i++) printf("  %s %.6f\n", l[i].op->out[0]->name, l[i].cos);
  }
  int kmax = a->max_float >= 0 && a->max_float < nl ? (int)a->max_float : nl;
  best_cos = c0;
  if (!st && c0 < a->expected_cos) st = search(s, l, kmax, &best, &best_cos, d);
  ct_qtable rows;
  ct_qtable_init(&rows);
  if (!st) st = rows_of(s, l, best, &rows, d);
  if (!st) st = ct_qtable_write(tmp, &rows, d);
  if (!st) {
    printf("%s: %lld float layers (%s), cosine %.6f%s\n", a->out, (long long)rows.n, ct_qmode_name(a->float_mode), best_cos,
           best_cos >= a->expected_cos ? "" : " (target not reached)");
  }
  ct_qtable_free(&rows);
  free(l);
  if (st) ct_outset_abort(&os);
  else st = ct_outset_commit(&os, d);
  return st;
}

int ct_cmd_qtable(int argc, char **argv) {
  qt_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  qt_state s = {.a = &a};
  ct_calib_table_init(&s.calib);
  ct_tensor_list_init(&s.floats);
  ct_status st = run(&s, &d);
  ct_tool_samples_free(&s.sm);
  free(s.acc);
  ct_tensor_list_free(&s.floats);
  ct_calib_table_free(&s.calib);
  ct_graph_free(s.g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
