/* rewrite.c: the rewriting toolkit of compiler/pass.h — use lists, value replacement, a name
 * set for unique names, and a linear stable topological sort (iterative depth-first
 * post-order, Tarjan 1976) used after every pass. */
#include <stdlib.h>
#include <string.h>

#include "compiler/pass.h"

/* ---- name set: open addressing, FNV-1a ---- */

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool names_has(const ct_rw *rw, const char *s) {
  uint64_t m = (uint64_t)rw->names_cap - 1;
  for (uint64_t i = name_hash(s) & m;; i = (i + 1) & m) {
    if (!rw->names[i]) return false;
    if (strcmp(rw->names[i], s) == 0) return true;
  }
}

static bool names_add(ct_rw *rw, const char *s) {
  if (2 * (rw->names_n + 1) > rw->names_cap) {
    int nc = rw->names_cap ? rw->names_cap * 2 : 256;
    const char **old = rw->names;
    int oc = rw->names_cap;
    rw->names = calloc((size_t)nc, sizeof *rw->names);
    if (!rw->names) { rw->names = old; return false; }
    rw->names_cap = nc;
    rw->names_n = 0;
    for (int i = 0; i < oc; i++)
      if (old[i]) names_add(rw, old[i]);
    free(old);
  }
  uint64_t m = (uint64_t)rw->names_cap - 1;
  uint64_t i = name_hash(s) & m;
  while (rw->names[i]) {
    if (strcmp(rw->names[i], s) == 0) return true;
    i = (i + 1) & m;
  }
  rw->names[i] = s;
  rw->names_n++;
  return true;
}

/* ---- use lists ---- */

static ct_rw_uses *uses_slot(ct_rw *rw, const ct_value *v) {
  if (v->id >= rw->n_uses_cap) {
    int nc = rw->n_uses_cap ? rw->n_uses_cap : 64;
    while (nc <= v->id) nc *= 2;
    ct_rw_uses *p = realloc(rw->uses, sizeof *p * (size_t)nc);
    if (!p) return NULL;
    memset(p + rw->n_uses_cap, 0, sizeof *p * (size_t)(nc - rw->n_uses_cap));
    rw->uses = p;
    rw->n_uses_cap = nc;
  }
  return &rw->uses[v->id];
}

static void use_add(ct_rw *rw, ct_value *v, ct_op *op) {
  if (!v) return;
  ct_rw_uses *u = uses_slot(rw, v);
  if (!u) { rw->oom = true; return; }
  if (u->n == u->cap) {
    int nc = u->cap ? u->cap * 2 : 4;
    ct_op **p = realloc(u->op, sizeof *p * (size_t)nc);
    if (!p) { rw->oom = true; return; }
    u->op = p;
    u->cap = nc;
  }
  u->op[u->n++] = op;
}

static void use_del(ct_rw *rw, ct_value *v, ct_op *op) {
  if (!v) return;
  ct_rw_uses *u = uses_slot(rw, v);
  if (!u) return;
  for (int i = 0; i < u->n; i++)
    if (u->op[i] == op) {
      u->op[i] = u->op[--u->n];
      return;
    }
}

ct_status ct_rw_init(ct_rw *rw, ct_graph *g, ct_diag *d) {
  memset(rw, 0, sizeof *rw);
  rw->g = g;
  for (int i = 0; i < g->n_values; i++) {
    g->values[i]->id = i;
    if (!names_add(rw, g->values[i]->name)) rw->oom = true;
  }
  for (int i = 0; i < g->n_ops; i++) {
    ct_op *op = g->ops[i];
    if (op->dead) continue;
    for (int j = 0; j < op->n_in; j++) use_add(rw, op->in[j], op);
  }
  if (rw->oom) {
    ct_rw_free(rw);
    return ct_diag_set(d, CT_ERR_LIMIT, "graph \"%s\": out of memory building use lists", g->name);
  }
  return CT_OK;
}

void ct_rw_free(ct_rw *rw) {
  for (int i = 0; i < rw->n_uses_cap; i++) free(rw->uses[i].op);
  free(rw->uses);
  free(rw->names);
  rw->uses = NULL;
  rw->names = NULL;
  rw->n_uses_cap = rw->names_cap = rw->names_n = 0;
}

/* Renumbers values in the order their ops define them (the printed %N then read in order).
 * After ct_graph_compact every value has a live producer, so the count is unchanged. */
static void renumber(ct_graph *g) {
  int k = 0;
  for (int i = 0; i < g->n_ops; i++)
    for (int j = 0; j < g->ops[i]->n_out; j++) {
      ct_value *v = g->ops[i]->out[j];
      if (v && k < g->n_values) {
        v->id = k;
        g->values[k++] = v;
      }
    }
}

/* Iterative depth-first post-order over operands, visiting ops in their current order:
 * keeps the existing order wherever it is already legal. state: 0 new, 1 open, 2 placed. */
static ct_status toposort(ct_graph *g, ct_diag *d) {
  int n = g->n_ops, nid = g->next_op_id;
  char *state = calloc((size_t)nid + 1, 1);
  ct_op **out = malloc(sizeof *out * (size_t)(n + 1));
  ct_op **stack = malloc(sizeof *stack * (size_t)(n + 1));
  int *next = malloc(sizeof *next * (size_t)(n + 1));
  ct_status st = CT_OK;
  if (!state || !out || !stack || !next) st = ct_diag_set(d, CT_ERR_LIMIT, "toposort: out of memory");
  int k = 0;
  for (int i = 0; i < n && st == CT_OK; i++) {
    if (state[g->ops[i]->id]) continue;
    int sp = 0;
    stack[sp] = g->ops[i];
    next[sp++] = 0;
    state[g->ops[i]->id] = 1;
    while (sp > 0 && st == CT_OK) {
      ct_op *op = stack[sp - 1];
      if (next[sp - 1] < op->n_in) {
        ct_value *v = op->in[next[sp - 1]++];
        ct_op *p = v ? v->def : NULL;
        if (!p || p->dead) continue;
        if (state[p->id] == 1)
          st = ct_diag_set(d, CT_ERR_INTERNAL, "graph \"%s\": cycle through node \"%s\"", g->name, p->loc);
        else if (state[p->id] == 0) {
          state[p->id] = 1;
          stack[sp] = p;
          next[sp++] = 0;
        }
        continue;
      }
      state[op->id] = 2;
      out[k++] = op;
      sp--;
    }
  }
  if (st == CT_OK && k == n) memcpy(g->ops, out, sizeof *out * (size_t)n);
  else if (st == CT_OK) st = ct_diag_set(d, CT_ERR_INTERNAL, "toposort: lost ops (%d of %d)", k, n);
  if (st == CT_OK) renumber(g);
  free(state); free(out); free(stack); free(next);
  return st;
}

ct_status ct_rw_finish(ct_rw *rw, ct_diag *d) {
  ct_graph *g = rw->g;
  bool oom = rw->oom;
  ct_rw_free(rw);
  if (oom) return ct_diag_set(d, CT_ERR_LIMIT, "graph \"%s\": out of memory while rewriting", g->name);
  ct_graph_compact(g);
  return toposort(g, d);
}

const ct_rw_uses *ct_rw_users(ct_rw *rw, const ct_value *v) {
  static const ct_rw_uses none = {NULL, 0, 0};
  ct_rw_uses *u = uses_slot(rw, v);
  return u ? u : &none;
}

bool ct_rw_is_output(const ct_rw *rw, const ct_value *v) {
  for (int i = 0; i < rw->g->n_outputs; i++)
    if (rw->g->outputs[i] == v) return true;
  return false;
}

int ct_rw_num_uses(ct_rw *rw, const ct_value *v) {
  int n = ct_rw_users(rw, v)->n;
  for (int i = 0; i < rw->g->n_outputs; i++) n += rw->g->outputs[i] == v;
  return n;
}

ct_op *ct_rw_only_user(ct_rw *rw, const ct_value *v) {
  const ct_rw_uses *u = ct_rw_users(rw, v);
  if (u->n != 1 || ct_rw_is_output(rw, v)) return NULL;
  return u->op[0];
}

void ct_rw_set_input(ct_rw *rw, ct_op *op, int i, ct_value *v) {
  if (op->in[i] == v) return;
  use_del(rw, op->in[i], op);
  op->in[i] = v;
  use_add(rw, v, op);
}

static bool is_leaf(const ct_value *v) {
  return v->def && (v->def->kind == CT_OP_INPUT || v->def->kind == CT_OP_WEIGHT);
}

bool ct_rw_can_replace(const ct_rw *rw, const ct_value *from, const ct_value *to) {
  if (from == to || !ct_rw_is_output(rw, from)) return true;
  return !is_leaf(to) && !ct_rw_is_output(rw, to);
}

bool ct_rw_replace(ct_rw *rw, ct_value *from, ct_value *to) {
  if (from == to) return true;
  if (!ct_rw_can_replace(rw, from, to)) return false;
  ct_graph *g = rw->g;
  if (ct_rw_is_output(rw, from)) {
    const char *name = to->name; /* swap names: outputs keep theirs, names stay unique */
    to->name = from->name;
    from->name = name;
    for (int i = 0; i < g->n_outputs; i++)
      if (g->outputs[i] == from) g->outputs[i] = to;
  }
  ct_rw_uses *u = uses_slot(rw, from);
  if (!u) { rw->oom = true; return true; }
  while (u->n > 0) {
    ct_op *op = u->op[u->n - 1];
    for (int j = 0; j < op->n_in; j++)
      if (op->in[j] == from) ct_rw_set_input(rw, op, j, to);
    u = uses_slot(rw, from); /* set_input may have grown the table */
  }
  return true;
}

void ct_rw_erase(ct_rw *rw, ct_op *op) {
  if (op->dead) return;
  for (int j = 0; j < op->n_in; j++) use_del(rw, op->in[j], op);
  ct_graph_erase_op(rw->g, op);
}

void ct_rw_take_result(ct_rw *rw, ct_op *op, int k, ct_value *v) {
  (void)rw;
  ct_value *old = op->out[k];
  if (old == v) return;
  if (old && old->def == op) old->def = NULL;
  op->out[k] = v;
  v->def = op;
}

void ct_rw_absorb(ct_rw *rw, ct_op *p, ct_op *op) {
  ct_value *y = op->out[0];
  ct_rw_erase(rw, op);
  ct_rw_take_result(rw, p, 0, y);
}

ct_op *ct_rw_add_op(ct_rw *rw, ct_op_kind kind, const char *loc, int n_in, ct_value *const *in,
                    int n_out, ct_value *const *out) {
  ct_op *op = ct_graph_add_op(rw->g, kind, loc, n_in, in, n_out, out);
  if (!op) { rw->oom = true; return NULL; }
  for (int j = 0; j < n_in; j++) use_add(rw, in[j], op);
  return op;
}

ct_value *ct_rw_add_value(ct_rw *rw, const char *base, ct_dtype dt, int ndim, const int64_t *shape) {
  size_t n = strlen(base) + 24;
  char *buf = malloc(n);
  if (!buf) { rw->oom = true; return NULL; }
  snprintf(buf, n, "%s", base);
  for (int k = 1; names_has(rw, buf); k++) snprintf(buf, n, "%s_%d", base, k);
  ct_value *v = ct_graph_add_value(rw->g, buf, dt, ndim, shape);
  free(buf);
  if (!v || !names_add(rw, v->name) || !uses_slot(rw, v)) { rw->oom = true; return NULL; }
  return v;
}

ct_value *ct_rw_add_weight(ct_rw *rw, const char *base, ct_tensor *t) {
  ct_value *v = ct_rw_add_value(rw, base, t->dtype, t->ndim, t->shape);
  if (!v || !ct_tensor_set_name(t, v->name) || !ct_rw_add_op(rw, CT_OP_WEIGHT, v->name, 0, NULL, 1, &v)) {
    rw->oom = true;
    ct_tensor_free(t);
    return NULL;
  }
  v->data = t;
  return v;
}

ct_value *ct_rw_weight_f32(ct_rw *rw, const char *base, int ndim, const int64_t *shape, const double *v) {
  ct_tensor *t = ct_tensor_new(CT_F32, ndim, shape, NULL);
  if (!t) { rw->oom = true; return NULL; }
  float *p = t->data;
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) p[i] = (float)v[i];
  return ct_rw_add_weight(rw, base, t);
}

ct_value *ct_rw_weight_i64(ct_rw *rw, const char *base, int ndim, const int64_t *shape, const int64_t *v) {
  ct_tensor *t = ct_tensor_new(CT_I64, ndim, shape, NULL);
  if (!t) { rw->oom = true; return NULL; }
  memcpy(t->data, v, sizeof *v * (size_t)ct_tensor_numel(t));
  return ct_rw_add_weight(rw, base, t);
}

/* ---- the driver loop ---- */

static bool kind_in(ct_op_kind k, const ct_op_kind *kinds, int n_kinds) {
  if (n_kinds == 0) return true;
  for (int j = 0; j < n_kinds; j++)
    if (kinds[j] == k) return true;
  return false;
}

int ct_rw_visit(ct_rw *rw, const ct_op_kind *kinds, int n_kinds, ct_rw_op_fn fn, void *user) {
  int n = rw->g->n_ops, changed = 0;
  for (int i = 0; i < n && !rw->oom; i++) {
    ct_op *op = rw->g->ops[i];
    if (!op->dead && kind_in(op->kind, kinds, n_kinds)) changed += fn(rw, op, user);
  }
  return changed;
}

ct_status ct_rw_for_each(ct_graph *g, const ct_op_kind *kinds, int n_kinds, ct_rw_op_fn fn, void *user,
                         int *n_changed, ct_diag *d) {
  ct_rw rw;
  ct_status st = ct_rw_init(&rw, g, d);
  if (st != CT_OK) return st;
  *n_changed += ct_rw_visit(&rw, kinds, n_kinds, fn, user);
  return ct_rw_finish(&rw, d);
}

/* ---- queries ---- */

bool ct_rw_const_all(const ct_value *v, double x) {
  if (!ct_value_is_const(v)) return false;
  int64_t n = ct_tensor_numel(v->data);
  for (int64_t i = 0; i < n; i++)
    if (ct_tensor_get_f64(v->data, i) != x) return false;
  return n > 0;
}

bool ct_rw_per_channel(const ct_value *v, int rank, int64_t C, double *out) {
  if (!ct_value_is_const(v) || rank < 2) return false;
  const ct_tensor *t = v->data;
  if (t->ndim > rank) return false;
  int64_t nc = 1;
  for (int i = 0; i < t->ndim; i++) {
    int axis = rank - t->ndim + i;
    int64_t dim = t->shape[i];
    if (axis == 1 && (dim == C || dim == 1)) nc = dim;
    else if (dim != 1) return false;
  }
  for (int64_t c = 0; c < C; c++) out[c] = ct_tensor_get_f64(t, nc == 1 ? 0 : c);
  return true;
}

bool ct_rw_same_shape(const ct_value *a, const ct_value *b) {
  if (a->ndim < 0 || a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}
