/* qtable_search.c: the mixed precision search (qtable_search.h, docs/qtable.md; TPU-MLIR's
 * search_qtable). Every candidate table is one lowering of a fresh copy of the Top module and
 * one Tpu reference run per sample, scored by the output cosine against the float outputs. */
#include "ptq/qtable_search.h"

#include <math.h>
#include <stdlib.h>

#include "compiler/lower.h"
#include "compiler/lower_policy.h"
#include "reference/interp.h"

/* Cosine accumulator over every element of every sample; seen: something was added. */
typedef struct qt_cos {
  ct_cos_sums s;
  bool seen;
} qt_cos;

/* One measurement: with acc (one per value of the Top graph), the sensitivity pass. */
typedef struct qt_run {
  const ct_ptq_qtable_ctx *c;
  qt_cos *acc;
  ct_tensor_list floats; /* one sample's float results (the sensitivity pass) */
} qt_run;

static double cos_of(const qt_cos *c) { return c->seen ? ct_cos_of(&c->s) : 1.0; }

/* Adds the float reference ref and the (dequantized) tensor t to c. */
static ct_status cos_add(qt_cos *c, const ct_tensor *ref, const ct_tensor *t, ct_diag *d) {
  ct_status st = ct_ptq_cos_add(&c->s, ref, t, d);
  c->seen |= !st && ct_tensor_numel(ref) == ct_tensor_numel(t);
  return st;
}

/* on_op of the float run: keeps a copy of every computed result of the Top graph. */
static ct_status keep_float(void *user, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                            ct_diag *d) {
  (void)in;
  qt_run *r = user;
  if (op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT) return CT_OK;
  for (int k = 0; k < op->n_out; k++) {
    if (!out[k] || !op->out[k] || op->out[k]->data) continue;
    ct_tensor *c = ct_tensor_clone(out[k]);
    if (!c || !ct_tensor_set_name(c, op->out[k]->name) || !ct_tensor_list_push(&r->floats, c)) {
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
  qt_run *r = user;
  for (int k = 0; k < op->n_out; k++) {
    if (!out[k] || !op->out[k]) continue;
    ct_tensor *ref = ct_tensor_list_find(&r->floats, op->out[k]->name);
    ct_value *v = ref ? ct_graph_find_value(r->c->top, op->out[k]->name) : NULL;
    if (!v) continue;
    ct_status st = cos_add(&r->acc[v->id], ref, out[k], d);
    if (st) return st;
  }
  return CT_OK;
}

/* Output cosine of the INT8 lowering with rows (ct_ptq_qtable_cosine); with r->acc, also
 * every value's cosine (the sensitivity pass). */
static ct_status measure(qt_run *r, const ct_qtable *rows, double *cos_out, ct_diag *d) {
  const ct_ptq_qtable_ctx *c = r->c;
  const ct_ptq_samples *sm = c->sm;
  ct_lower_options lo = {.mode = CT_QMODE_INT8, .calib = c->calib, .qtable = rows};
  ct_graph *t = NULL;
  ct_status st = ct_ptq_lower(&c->src, &lo, &t, d);
  int no = c->top->n_outputs;
  qt_cos *oc = calloc((size_t)no + 1, sizeof *oc);
  if (!st && !oc) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  bool sens = r->acc != NULL;
  for (int64_t i = 0; !st && i < sm->n; i++) {
    ct_ref_options fo = {.on_op = keep_float, .on_op_user = r}, to = {.on_op = cmp_tpu, .on_op_user = r};
    ct_tensor_list tmp, outs;
    ct_tensor_list_init(&tmp), ct_tensor_list_init(&outs);
    if (sens) st = ct_ref_run(c->top, &fo, &sm->inputs[i], &tmp, d);
    if (!st) st = ct_ref_run(t, sens ? &to : &(ct_ref_options){0}, &sm->inputs[i], &outs, d);
    for (int k = 0; !st && k < no && k < outs.n && k < sm->ref_out[i].n; k++)
      st = cos_add(&oc[k], sm->ref_out[i].items[k], outs.items[k], d);
    ct_tensor_list_free(&tmp), ct_tensor_list_free(&outs), ct_tensor_list_free(&r->floats);
    ct_tensor_list_init(&r->floats);
    if (st) ct_diag_prefix(d, "sample %lld: ", (long long)i);
  }
  double cs = 1.0;
  for (int k = 0; k < no; k++) cs = fmin(cs, cos_of(&oc[k]));
  *cos_out = cs;
  free(oc);
  ct_graph_free(t);
  return st;
}

ct_status ct_ptq_qtable_cosine(const ct_ptq_qtable_ctx *c, const ct_qtable *rows, double *cos, ct_diag *d) {
  qt_run r = {.c = c};
  ct_tensor_list_init(&r.floats);
  return measure(&r, rows, cos, d);
}

static int by_loss(const void *x, const void *y) {
  const ct_ptq_layer *a = x, *b = y;
  if (a->loss != b->loss) return a->loss < b->loss ? 1 : -1;
  return a->op->id < b->op->id ? -1 : a->op->id > b->op->id;
}

/* A candidate: a live op with a first result, not Input / Weight. */
static bool candidate(const ct_op *op) {
  return !op->dead && op->kind != CT_OP_INPUT && op->kind != CT_OP_WEIGHT && op->n_out >= 1 && op->out[0];
}

/* loss[value id of an op's first result] := the cosine the op loses (ct_ptq_qtable_rank),
 * from the per-value accumulators acc. */
static void losses(const ct_graph *g, const qt_cos *acc, double *loss) {
  for (int i = 0; i < g->n_values; i++) loss[i] = 0;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (!candidate(op) || !acc[op->out[0]->id].seen) continue;
    qt_cos all = {{0}, false};
    const ct_value *worst = NULL;
    for (int k = 0; k < op->n_in; k++) {
      const ct_value *v = op->in[k];
      if (!v || v->data || !acc[v->id].seen) continue;
      const qt_cos *a = &acc[v->id];
      all.s.xy += a->s.xy, all.s.xx += a->s.xx, all.s.yy += a->s.yy, all.seen = true;
      if (!worst || cos_of(a) < cos_of(&acc[worst->id])) worst = v;
    }
    double x = cos_of(&all) - cos_of(&acc[op->out[0]->id]);
    if (x < 0 && worst && worst->def && worst->def->n_out > 0 && worst->def->out[0])
      loss[worst->def->out[0]->id] += x;
    else loss[op->out[0]->id] += x;
  }
}

/* The candidates of g with their losses, sorted worst first, into r (layers allocated). */
static ct_status rank_layers(const ct_graph *g, const qt_cos *acc, ct_ptq_ranking *r, ct_diag *d) {
  double *loss = calloc((size_t)g->n_values + 1, sizeof *loss);
  r->layers = calloc((size_t)g->n_ops + 1, sizeof *r->layers);
  if (!loss || !r->layers) {
    free(loss);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  losses(g, acc, loss);
  r->n = 0;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (candidate(op)) r->layers[r->n++] = (ct_ptq_layer){op, loss[op->out[0]->id], cos_of(&acc[op->out[0]->id])};
  }
  qsort(r->layers, (size_t)r->n, sizeof *r->layers, by_loss);
  free(loss);
  return CT_OK;
}

void ct_ptq_ranking_free(ct_ptq_ranking *r) {
  free(r->layers);
  *r = (ct_ptq_ranking){0};
}

ct_status ct_ptq_qtable_rank(const ct_ptq_qtable_ctx *c, ct_ptq_ranking *r, ct_diag *d) {
  *r = (ct_ptq_ranking){0};
  qt_run run = {.c = c, .acc = calloc((size_t)c->top->n_values + 1, sizeof *run.acc)};
  ct_tensor_list_init(&run.floats);
  ct_status st = run.acc ? measure(&run, NULL, &r->cos0, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = rank_layers(c->top, run.acc, r, d);
  ct_tensor_list_free(&run.floats);
  free(run.acc);
  if (st) ct_ptq_ranking_free(r);
  return st;
}

/* Marks (by result value id) the ops sharing a per-channel activation with a marked op — the
 * producer and the depthwise / LUT readers of every channel activation (ct_lower_channel_act)
 * a marked op reads or computes — to a fixed point: such a chain is INT8 per channel only as
 * a whole, so it goes to float as a whole (one op of it in float leaves its neighbours per
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
        if (!v || v->data || !ct_lower_channel_act(g, v) || (k >= 0 && ct_lower_folds_channels(op, v))) continue;
        for (int j = 0; j < g->n_ops; j++) {
          const ct_op *u = g->ops[j];
          bool link = u == v->def;
          for (int q = 0; !u->dead && !link && q < u->n_in; q++) link = u->in[q] == v && !ct_lower_folds_channels(u, v);
          if (link && !u->dead && u->n_out > 0 && u->out[0] && !mark[u->out[0]->id]) mark[u->out[0]->id] = again = true;
        }
      }
    }
  }
}

ct_status ct_ptq_qtable_rows(const ct_ptq_qtable_ctx *c, const ct_ptq_ranking *r, int k, ct_qtable *rows, ct_diag *d) {
  const ct_graph *g = c->top;
  ct_qtable_free(rows);
  ct_qtable_init(rows);
  bool *mark = calloc((size_t)g->n_values + 1, sizeof *mark);
  if (!mark) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int i = 0; i < k && i < r->n; i++) mark[r->layers[i].op->out[0]->id] = true;
  close_chains(g, mark);
  ct_status st = CT_OK;
  for (int i = 0; !st && i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (!op->dead && op->n_out > 0 && op->out[0] && mark[op->out[0]->id])
      st = ct_qtable_add(rows, op->out[0]->name, c->float_mode, 0, d);
  }
  free(mark);
  return st;
}

static int by_gain(const void *x, const void *y) {
  const ct_ptq_layer *a = x, *b = y;
  if (a->cos != b->cos) return a->cos < b->cos ? 1 : -1;
  return a->op->id < b->op->id ? -1 : a->op->id > b->op->id;
}

ct_status ct_ptq_qtable_probe(const ct_ptq_qtable_ctx *c, ct_ptq_ranking *r, int64_t max_probe, ct_diag *d) {
  r->probed = 0;
  if (r->cos0 >= c->expected_cos) return CT_OK;
  int np = max_probe < r->n ? (int)max_probe : r->n;
  ct_qtable rows;
  ct_qtable_init(&rows);
  ct_status st = CT_OK;
  for (int i = 0; !st && i < np; i++) {
    st = ct_qtable_add(&rows, r->layers[i].op->out[0]->name, c->float_mode, 0, d);
    if (!st) st = ct_ptq_qtable_cosine(c, &rows, &r->layers[i].cos, d);
    if (!st && c->on_probe) c->on_probe(c->user, i + 1, np);
    ct_qtable_free(&rows);
    ct_qtable_init(&rows);
  }
  if (st) return st;
  qsort(r->layers, (size_t)np, sizeof *r->layers, by_gain);
  r->probed = np;
  return CT_OK;
}

/* One search step: the first k candidates (with their chains) in float; *cos its output cosine. */
static ct_status try_k(const ct_ptq_qtable_ctx *c, const ct_ptq_ranking *r, int k, ct_qtable *rows, double *cos,
                       ct_diag *d) {
  ct_status st = ct_ptq_qtable_rows(c, r, k, rows, d);
  if (!st) st = ct_ptq_qtable_cosine(c, rows, cos, d);
  if (!st && c->on_try) c->on_try(c->user, k, rows->n, *cos);
  return st;
}

ct_status ct_ptq_qtable_search(const ct_ptq_qtable_ctx *c, const ct_ptq_ranking *r, int64_t max_float, int *best,
                               double *best_cos, ct_diag *d) {
  *best = 0, *best_cos = r->cos0;
  if (r->cos0 >= c->expected_cos) return CT_OK;
  int kmax = max_float >= 0 && max_float < r->n ? (int)max_float : r->n;
  ct_qtable rows;
  ct_qtable_init(&rows);
  ct_status st = CT_OK;
  int lo = 0, hi = -1;
  double cs = 0;
  for (int k = 1; !st && kmax > 0; k = k * 2 > kmax ? kmax : k * 2) {
    st = try_k(c, r, k, &rows, &cs, d);
    if (st) break;
    if (cs >= c->expected_cos) {
      hi = k, *best_cos = cs;
      break;
    }
    lo = k, *best_cos = cs;
    if (k == kmax) break;
  }
  while (!st && hi >= 0 && hi - lo > 1) { /* bisection: lo misses, hi reaches */
    int mid = lo + (hi - lo) / 2;
    st = try_k(c, r, mid, &rows, &cs, d);
    if (st) break;
    if (cs >= c->expected_cos) hi = mid, *best_cos = cs;
    else lo = mid;
  }
  *best = hi >= 0 ? hi : lo;
  ct_qtable_free(&rows);
  return st;
}
