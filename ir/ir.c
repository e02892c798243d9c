/* ir.c: graph building, use lists, compaction and topological sort (see ir.h). */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ct_graph *ct_graph_new(const char *name, const char *dialect) {
  ct_graph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  ct_arena_init(&g->arena, 0);
  g->name = ct_arena_strdup(&g->arena, name ? name : "main");
  g->dialect = ct_arena_strdup(&g->arena, dialect ? dialect : "top");
  g->chip = ct_arena_strdup(&g->arena, "");
  g->weights = ct_arena_strdup(&g->arena, "");
  if (!g->name || !g->dialect || !g->chip || !g->weights) {
    ct_graph_free(g);
    return NULL;
  }
  return g;
}

void ct_graph_free(ct_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_values; i++) ct_tensor_free(g->values[i]->data);
  free(g->ops);
  free(g->values);
  free(g->outputs);
  ct_arena_free(&g->arena);
  free(g);
}

static bool grow(void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int nc = *cap ? *cap * 2 : 64;
  while (nc < need) nc *= 2;
  void *p = realloc(*arr, (size_t)nc * elem);
  if (!p) return false;
  *arr = p;
  *cap = nc;
  return true;
}

ct_value *ct_graph_add_value(ct_graph *g, const char *name, ct_dtype dt, int ndim, const int64_t *shape) {
  if (!grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values)) return NULL;
  ct_value *v = ct_arena_alloc(&g->arena, sizeof *v);
  if (!v) return NULL;
  v->id = g->n_values;
  if (name) {
    v->name = ct_arena_strdup(&g->arena, name);
  } else {
    char buf[32];
    snprintf(buf, sizeof buf, "v%d", v->id);
    v->name = ct_arena_strdup(&g->arena, buf);
  }
  if (!v->name) return NULL;
  ct_value_set_type(v, dt, ndim, shape);
  v->annot = (ct_value_annot){-1, -1, -1};
  g->values[g->n_values++] = v;
  return v;
}

ct_op *ct_graph_add_op(ct_graph *g, ct_op_kind kind, const char *loc, int n_in, ct_value *const *in,
                       int n_out, ct_value *const *out) {
  if (!grow((void **)&g->ops, &g->cap_ops, g->n_ops + 1, sizeof *g->ops)) return NULL;
  ct_op *op = ct_arena_alloc(&g->arena, sizeof *op);
  if (!op) return NULL;
  op->id = g->next_op_id++;
  op->kind = kind;
  op->annot = (ct_op_annot){-1, -1, -1};
  op->loc = ct_arena_strdup(&g->arena, loc ? loc : "");
  op->in = ct_arena_alloc(&g->arena, sizeof *op->in * (size_t)(n_in + 1));
  op->out = ct_arena_alloc(&g->arena, sizeof *op->out * (size_t)(n_out + 1));
  if (!op->loc || !op->in || !op->out) return NULL;
  op->n_in = n_in;
  op->n_out = n_out;
  for (int i = 0; i < n_in; i++) op->in[i] = in[i];
  for (int i = 0; i < n_out; i++) {
    op->out[i] = out[i];
    if (out[i]) out[i]->def = op;
  }
  g->ops[g->n_ops++] = op;
  return op;
}

ct_value *ct_graph_add_weight(ct_graph *g, const char *name, ct_tensor *t) {
  const char *nm = name ? name : t->name;
  ct_value *v = ct_graph_add_value(g, nm, t->dtype, t->ndim, t->shape);
  if (!v || !ct_graph_add_op(g, CT_OP_WEIGHT, nm, 0, NULL, 1, &v)) {
    ct_tensor_free(t);
    return NULL;
  }
  v->data = t;
  return v;
}

void ct_graph_erase_op(ct_graph *g, ct_op *op) {
  (void)g;
  op->dead = true;
}

int ct_graph_replace_uses(ct_graph *g, ct_value *from, ct_value *to) {
  int n = 0;
  for (int i = 0; i < g->n_ops; i++) {
    ct_op *op = g->ops[i];
    if (op->dead) continue;
    for (int j = 0; j < op->n_in; j++)
      if (op->in[j] == from) { op->in[j] = to; n++; }
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == from) { g->outputs[i] = to; n++; }
  return n;
}

bool ct_graph_output_repeated(const ct_graph *g, int i) {
  for (int j = 0; j < i && j < g->n_outputs; j++)
    if (g->outputs[j] == g->outputs[i]) return true;
  return false;
}

int ct_graph_count_uses(const ct_graph *g, const ct_value *v) {
  int n = 0;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead) continue;
    for (int j = 0; j < op->n_in; j++) n += op->in[j] == v;
  }
  for (int i = 0; i < g->n_outputs; i++) n += g->outputs[i] == v;
  return n;
}

void ct_graph_compact(ct_graph *g) {
  int k = 0;
  for (int i = 0; i < g->n_ops; i++)
    if (!g->ops[i]->dead) g->ops[k++] = g->ops[i];
  g->n_ops = k;
  k = 0;
  for (int i = 0; i < g->n_values; i++) {
    ct_value *v = g->values[i];
    if (v->def && !v->def->dead) {
      v->id = k;
      g->values[k++] = v;
    } else {
      ct_tensor_free(v->data);
      v->data = NULL;
    }
  }
  g->n_values = k;
}

ct_status ct_graph_toposort(ct_graph *g, ct_diag *d) {
  /* Kahn's algorithm over live ops, picking the earliest ready op to keep the order stable. */
  int n = g->n_ops;
  char *placed = calloc((size_t)g->n_values + 1, 1);
  ct_op **out = malloc(sizeof *out * (size_t)(n + 1));
  char *done = calloc((size_t)n + 1, 1);
  if (!placed || !out || !done) {
    free(placed); free(out); free(done);
    return ct_diag_set(d, CT_ERR_LIMIT, "toposort: out of memory");
  }
  for (int i = 0; i < g->n_values; i++) g->values[i]->id = i;
  int k = 0, start = 0;
  while (k < n) {
    int picked = -1;
    for (int i = start; i < n && picked < 0; i++) {
      ct_op *op = g->ops[i];
      if (done[i]) continue;
      bool ready = true;
      for (int j = 0; j < op->n_in && ready; j++)
        if (op->in[j] && op->in[j]->def && !op->in[j]->def->dead && !placed[op->in[j]->id]) ready = false;
      if (ready) picked = i;
    }
    if (picked < 0) {
      free(placed); free(out); free(done);
      return ct_diag_set(d, CT_ERR_INPUT, "graph \"%s\": cycle among ops", g->name);
    }
    done[picked] = 1;
    ct_op *op = g->ops[picked];
    for (int j = 0; j < op->n_out; j++)
      if (op->out[j]) placed[op->out[j]->id] = 1;
    out[k++] = op;
    while (start < n && done[start]) start++;
  }
  memcpy(g->ops, out, sizeof *out * (size_t)n);
  free(placed); free(out); free(done);
  return CT_OK;
}

bool ct_graph_set_outputs(ct_graph *g, int n, ct_value *const *outs) {
  ct_value **p = malloc(sizeof *p * (size_t)(n + 1));
  if (!p) return false;
  for (int i = 0; i < n; i++) p[i] = outs[i];
  free(g->outputs);
  g->outputs = p;
  g->n_outputs = n;
  return true;
}

ct_value *ct_graph_find_value(const ct_graph *g, const char *name) {
  for (int i = 0; i < g->n_values; i++)
    if (strcmp(g->values[i]->name, name) == 0) return g->values[i];
  return NULL;
}

int ct_graph_inputs(const ct_graph *g, ct_value **out, int cap) {
  int n = 0;
  for (int i = 0; i < g->n_ops; i++) {
    ct_op *op = g->ops[i];
    if (op->dead || op->kind != CT_OP_INPUT) continue;
    if (n < cap) out[n] = op->out[0];
    n++;
  }
  return n;
}

int64_t ct_value_numel(const ct_value *v) { return v->ndim < 0 ? -1 : ct_shape_numel(v->ndim, v->shape); }

void ct_value_set_type(ct_value *v, ct_dtype dt, int ndim, const int64_t *shape) {
  v->dtype = dt;
  v->ndim = ndim;
  for (int i = 0; i < ndim && i < CT_MAX_DIMS; i++) v->shape[i] = shape[i];
}

bool ct_value_set_quant(ct_graph *g, ct_value *v, int n, const double *scale, const int32_t *zero_point, int axis) {
  if (n <= 0) {
    v->n_scale = 0, v->scale = NULL, v->zero_point = NULL, v->quant_axis = 0;
    return true;
  }
  double *s = ct_arena_memdup(&g->arena, scale, sizeof *s * (size_t)n);
  int32_t *z = ct_arena_memdup(&g->arena, zero_point, sizeof *z * (size_t)n);
  if (!s || !z) return false;
  v->n_scale = n, v->scale = s, v->zero_point = z, v->quant_axis = axis;
  return true;
}

/* ---- attributes ---- */

const ct_attr *ct_op_attr(const ct_op *op, const char *name) {
  for (int i = 0; i < op->n_attr; i++)
    if (strcmp(op->attrs[i].name, name) == 0) return &op->attrs[i];
  return NULL;
}

int64_t ct_op_get_int(const ct_op *op, const char *name, int64_t dflt) {
  const ct_attr *a = ct_op_attr(op, name);
  if (a && a->kind == CT_ATTR_INT) return a->i;
  if (a && a->kind == CT_ATTR_FLOAT) { /* truncated, saturating at the int64 limits; NaN: dflt */
    if (a->f != a->f) return dflt;
    if (a->f >= 9223372036854775808.0) return INT64_MAX;
    if (a->f <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)a->f;
  }
  return dflt;
}

double ct_op_get_float(const ct_op *op, const char *name, double dflt) {
  const ct_attr *a = ct_op_attr(op, name);
  if (a && a->kind == CT_ATTR_FLOAT) return a->f;
  if (a && a->kind == CT_ATTR_INT) return (double)a->i;
  return dflt;
}

const char *ct_op_get_string(const ct_op *op, const char *name, const char *dflt) {
  const ct_attr *a = ct_op_attr(op, name);
  return a && a->kind == CT_ATTR_STRING ? a->s : dflt;
}

const int64_t *ct_op_get_ints(const ct_op *op, const char *name, int *n) {
  const ct_attr *a = ct_op_attr(op, name);
  if (a && a->kind == CT_ATTR_INTS) { *n = a->n; return a->ints; }
  *n = 0;
  return NULL;
}

const double *ct_op_get_floats(const ct_op *op, const char *name, int *n) {
  const ct_attr *a = ct_op_attr(op, name);
  if (a && a->kind == CT_ATTR_FLOATS) { *n = a->n; return a->floats; }
  *n = 0;
  return NULL;
}

/* Finds or appends the attribute slot for name, cleared to the given kind. */
static ct_attr *attr_slot(ct_graph *g, ct_op *op, const char *name, ct_attr_kind kind) {
  ct_attr *a = (ct_attr *)ct_op_attr(op, name);
  if (!a) {
    if (op->n_attr == op->cap_attr) {
      int nc = op->cap_attr ? op->cap_attr * 2 : 4;
      ct_attr *p = ct_arena_alloc(&g->arena, sizeof *p * (size_t)nc);
      if (!p) return NULL;
      if (op->n_attr) memcpy(p, op->attrs, sizeof *p * (size_t)op->n_attr);
      op->attrs = p;
      op->cap_attr = nc;
    }
    a = &op->attrs[op->n_attr];
    const char *nm = ct_arena_strdup(&g->arena, name);
    if (!nm) return NULL;
    op->n_attr++;
    memset(a, 0, sizeof *a);
    a->name = nm;
  } else {
    const char *nm = a->name;
    memset(a, 0, sizeof *a);
    a->name = nm;
  }
  a->kind = kind;
  return a;
}

bool ct_op_set_int(ct_graph *g, ct_op *op, const char *name, int64_t v) {
  ct_attr *a = attr_slot(g, op, name, CT_ATTR_INT);
  if (a) a->i = v;
  return a != NULL;
}

bool ct_op_set_float(ct_graph *g, ct_op *op, const char *name, double v) {
  ct_attr *a = attr_slot(g, op, name, CT_ATTR_FLOAT);
  if (a) a->f = v;
  return a != NULL;
}

bool ct_op_set_string(ct_graph *g, ct_op *op, const char *name, const char *v) {
  const char *s = ct_arena_strdup(&g->arena, v);
  ct_attr *a = s ? attr_slot(g, op, name, CT_ATTR_STRING) : NULL;
  if (a) a->s = s;
  return a != NULL;
}

bool ct_op_set_ints(ct_graph *g, ct_op *op, const char *name, int n, const int64_t *v) {
  int64_t *p = ct_arena_memdup(&g->arena, v, sizeof *p * (size_t)n);
  ct_attr *a = p ? attr_slot(g, op, name, CT_ATTR_INTS) : NULL;
  if (a) { a->n = n; a->ints = p; }
  return a != NULL;
}

bool ct_op_set_floats(ct_graph *g, ct_op *op, const char *name, int n, const double *v) {
  double *p = ct_arena_memdup(&g->arena, v, sizeof *p * (size_t)n);
  ct_attr *a = p ? attr_slot(g, op, name, CT_ATTR_FLOATS) : NULL;
  if (a) { a->n = n; a->floats = p; }
  return a != NULL;
}

bool ct_op_set_strings(ct_graph *g, ct_op *op, const char *name, int n, const char *const *v) {
  const char **p = ct_arena_alloc(&g->arena, sizeof *p * (size_t)(n + 1));
  if (!p) return false;
  for (int i = 0; i < n; i++)
    if (!(p[i] = ct_arena_strdup(&g->arena, v[i]))) return false;
  ct_attr *a = attr_slot(g, op, name, CT_ATTR_STRINGS);
  if (a) { a->n = n; a->strs = p; }
  return a != NULL;
}

void ct_op_del_attr(ct_op *op, const char *name) {
  for (int i = 0; i < op->n_attr; i++) {
    if (strcmp(op->attrs[i].name, name) != 0) continue;
    memmove(&op->attrs[i], &op->attrs[i + 1], sizeof *op->attrs * (size_t)(op->n_attr - i - 1));
    op->n_attr--;
    return;
  }
}
