/* cse.c: common subexpression elimination — global value numbering by hashing (kind,
 * operands, attributes) over ops in topological order (Click 1995, "Global code motion /
 * global value numbering"); small equal constants are merged too. */
#include <stdlib.h>
#include <string.h>

#include "compiler/pass.h"

#define CSE_MAX_CONST_ELEMS 64

static uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; }

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = mix(h, b[i]);
  return h;
}

static uint64_t hash_attr(uint64_t h, const ct_attr *a) {
  h = hash_bytes(mix(h, (uint64_t)a->kind), a->name, strlen(a->name));
  switch (a->kind) {
    case CT_ATTR_INT: return mix(h, (uint64_t)a->i);
    case CT_ATTR_FLOAT: return hash_bytes(h, &a->f, sizeof a->f);
    case CT_ATTR_STRING: return hash_bytes(h, a->s, strlen(a->s));
    case CT_ATTR_INTS: return hash_bytes(h, a->ints, sizeof *a->ints * (size_t)a->n);
    case CT_ATTR_FLOATS: return hash_bytes(h, a->floats, sizeof *a->floats * (size_t)a->n);
    case CT_ATTR_STRINGS:
      for (int i = 0; i < a->n; i++) h = hash_bytes(h, a->strs[i], strlen(a->strs[i]) + 1);
      return h;
  }
  return h;
}

static bool attr_eq(const ct_attr *a, const ct_attr *b) {
  if (strcmp(a->name, b->name) || a->kind != b->kind) return false;
  switch (a->kind) {
    case CT_ATTR_INT: return a->i == b->i;
    case CT_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case CT_ATTR_STRING: return strcmp(a->s, b->s) == 0;
    case CT_ATTR_INTS: return a->n == b->n && !memcmp(a->ints, b->ints, sizeof *a->ints * (size_t)a->n);
    case CT_ATTR_FLOATS: return a->n == b->n && !memcmp(a->floats, b->floats, sizeof *a->floats * (size_t)a->n);
    case CT_ATTR_STRINGS:
      if (a->n != b->n) return false;
      for (int i = 0; i < a->n; i++)
        if (strcmp(a->strs[i], b->strs[i])) return false;
      return true;
  }
  return false;
}

/* Small constants take part with their bytes; other Weights and Inputs never merge. */
static bool is_small_const(const ct_op *op) {
  const ct_tensor *t = op->out[0] ? op->out[0]->data : NULL;
  return op->kind == CT_OP_WEIGHT && t && ct_tensor_numel(t) <= CSE_MAX_CONST_ELEMS;
}

static uint64_t hash_op(const ct_op *op) {
  uint64_t h = mix(mix(mix(1469598103934665603ull, (uint64_t)op->kind), (uint64_t)op->n_in), (uint64_t)op->n_out);
  for (int j = 0; j < op->n_in; j++) h = mix(h, op->in[j] ? (uint64_t)op->in[j]->id + 1 : 0);
  for (int j = 0; j < op->n_attr; j++) h = hash_attr(h, &op->attrs[j]);
  if (op->kind == CT_OP_WEIGHT) {
    const ct_tensor *t = op->out[0]->data;
    h = mix(mix(h, (uint64_t)t->dtype), (uint64_t)t->ndim);
    h = hash_bytes(hash_bytes(h, t->shape, sizeof *t->shape * (size_t)t->ndim), t->data, t->nbytes);
  }
  return h;
}

static bool op_eq(const ct_op *a, const ct_op *b) {
  if (a->kind != b->kind || a->n_in != b->n_in || a->n_out != b->n_out || a->n_attr != b->n_attr) return false;
  for (int j = 0; j < a->n_in; j++)
    if (a->in[j] != b->in[j]) return false;
  for (int j = 0; j < a->n_attr; j++)
    if (!attr_eq(&a->attrs[j], &b->attrs[j])) return false;
  for (int j = 0; j < a->n_out; j++)
    if (!a->out[j] != !b->out[j] || (a->out[j] && a->out[j]->dtype != b->out[j]->dtype)) return false;
  if (a->kind == CT_OP_WEIGHT) {
    const ct_tensor *s = a->out[0]->data, *t = b->out[0]->data;
    return s->dtype == t->dtype && s->ndim == t->ndim && s->nbytes == t->nbytes &&
           !memcmp(s->shape, t->shape, sizeof *s->shape * (size_t)s->ndim) && !memcmp(s->data, t->data, s->nbytes);
  }
  return true;
}

/* Replaces b's results by a's when every replacement is allowed; true if done. */
static bool merge(ct_rw *rw, ct_op *a, ct_op *b) {
  for (int j = 0; j < b->n_out; j++)
    if (b->out[j] && !ct_rw_can_replace(rw, b->out[j], a->out[j])) return false;
  for (int j = 0; j < b->n_out; j++)
    if (b->out[j]) ct_rw_replace(rw, b->out[j], a->out[j]);
  ct_rw_erase(rw, b);
  return true;
}

/* Open-addressing table of the first op of each equivalence class seen so far. */
typedef struct cse_table {
  ct_op **slot;
  size_t cap; /* a power of two, at least twice the op count */
} cse_table;

/* Merges op into an earlier equal op of the table, or enters it; the number of rewrites. */
static int cse_one(ct_rw *rw, ct_op *op, void *user) {
  cse_table *t = user;
  if (op->kind == CT_OP_INPUT || (op->kind == CT_OP_WEIGHT && !is_small_const(op))) return 0;
  size_t k = hash_op(op) & (t->cap - 1);
  while (t->slot[k] && !op_eq(t->slot[k], op)) k = (k + 1) & (t->cap - 1);
  if (!t->slot[k]) {
    t->slot[k] = op;
    return 0;
  }
  return merge(rw, t->slot[k], op) ? 1 : 0;
}

/* Pass "cse": merges each op into an earlier op of the same kind with the same operands (in
 * order) and attributes (in order, bit-equal floats), and top.Weight values of at most 64
 * elements with equal dtype, shape and bytes. top.Input ops never merge. Exact (the merged
 * ops compute the same function of the same operands). Errors: CT_ERR_LIMIT. */
ct_status ct_pass_cse(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  cse_table t = {NULL, 64};
  while (t.cap < 2 * (size_t)g->n_ops) t.cap *= 2;
  t.slot = calloc(t.cap, sizeof *t.slot);
  if (!t.slot) return ct_diag_set(d, CT_ERR_LIMIT, "cse: out of memory");
  ct_status st = ct_rw_for_each(g, NULL, 0, cse_one, &t, n_changed, d);
  free(t.slot);
  return st;
}
