/* optable.c: the ir/ side of the op table (ir/ops.def): names, arity, dialects, attribute
 * sets, and the attribute schemas the verifier, text parser and importer check against. */
#include "ir/ir.h"

#include <string.h>

#define TOP CT_DIALECT_TOP
#define TPU CT_DIALECT_TPU
static const struct {
  const char *name;
  unsigned dialects;
  int min_in, max_in, min_out, max_out;
  ct_attr_set sets[3];
} op_info[CT_OP_COUNT] = {
#define OP(E, name, dl, a, b, c, d, s1, s2, s3, shape, top, tpu, writes) \
  {name, dl, a, b, c, d, {CT_ASET_##s1, CT_ASET_##s2, CT_ASET_##s3}},
#include "ir/ops.def"
};
#undef TOP
#undef TPU

static const char *const set_names[CT_ASET_COUNT] = {
#define ASET(set) #set,
#include "ir/ops.def"
};

static const ct_attr_schema schemas[] = {
#define A(set, name, type, dflt, len, doc) {CT_ASET_##set, #name, CT_AT_##type, #dflt, CT_ALEN_##len, doc},
#include "ir/ops.def"
};
#define N_SCHEMAS ((int)(sizeof schemas / sizeof schemas[0]))

const char *ct_op_name(ct_op_kind k) { return (unsigned)k < CT_OP_COUNT ? op_info[k].name : "?"; }

bool ct_op_lookup(const char *name, ct_op_kind *out) {
  for (int i = 0; i < CT_OP_COUNT; i++)
    if (strcmp(op_info[i].name, name) == 0) { *out = (ct_op_kind)i; return true; }
  return false;
}

void ct_op_arity(ct_op_kind k, int *min_in, int *max_in, int *min_out, int *max_out) {
  *min_in = op_info[k].min_in;
  *max_in = op_info[k].max_in;
  *min_out = op_info[k].min_out;
  *max_out = op_info[k].max_out;
}

unsigned ct_op_dialects(ct_op_kind k) { return (unsigned)k < CT_OP_COUNT ? op_info[k].dialects : 0; }

ct_dialect ct_graph_dialect(const ct_graph *g) {
  return g->dialect && strcmp(g->dialect, "tpu") == 0 ? CT_DIALECT_TPU : CT_DIALECT_TOP;
}

void ct_op_attr_sets(ct_op_kind k, ct_attr_set sets[3]) {
  for (int i = 0; i < 3; i++) sets[i] = (unsigned)k < CT_OP_COUNT ? op_info[k].sets[i] : CT_ASET_none;
}

const ct_attr_schema *ct_attr_schemas(int *n) {
  *n = N_SCHEMAS;
  return schemas;
}

const char *ct_attr_set_name(ct_attr_set s) { return (unsigned)s < CT_ASET_COUNT ? set_names[s] : "?"; }

const char *ct_attr_type_name(ct_attr_type t) {
  static const char *const names[] = {"int", "float", "string", "ints", "floats", "strings", "int|float"};
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

const ct_attr_schema *ct_op_attr_schema(ct_op_kind k, const char *name) {
  if ((unsigned)k >= CT_OP_COUNT || !name) return NULL;
  for (int i = 0; i < N_SCHEMAS; i++) {
    const ct_attr_set s = schemas[i].set;
    if (s != CT_ASET_none && (s == op_info[k].sets[0] || s == op_info[k].sets[1] || s == op_info[k].sets[2]) &&
        strcmp(schemas[i].name, name) == 0)
      return &schemas[i];
  }
  return NULL;
}

const char *ct_attr_check(ct_op_kind k, const ct_attr *a) {
  const ct_attr_schema *s = ct_op_attr_schema(k, a->name);
  if (!s) return "unknown attribute";
  static const ct_attr_kind kind_of[] = {[CT_AT_INT] = CT_ATTR_INT,       [CT_AT_FLOAT] = CT_ATTR_FLOAT,
                                         [CT_AT_STRING] = CT_ATTR_STRING, [CT_AT_INTS] = CT_ATTR_INTS,
                                         [CT_AT_FLOATS] = CT_ATTR_FLOATS, [CT_AT_STRINGS] = CT_ATTR_STRINGS};
  static const char *const want[] = {"expected an int attribute",    "expected a float attribute",
                                     "expected a string attribute",  "expected an int list attribute",
                                     "expected a float list attribute", "expected a string list attribute",
                                     "expected an int or float attribute"};
  if (s->type == CT_AT_NUM) return a->kind == CT_ATTR_INT || a->kind == CT_ATTR_FLOAT ? NULL : want[s->type];
  return a->kind == kind_of[s->type] ? NULL : want[s->type];
}

bool ct_op_check_attrs(const ct_op *op, const ct_attr **bad, const char **why) {
  for (int i = 0; i < op->n_attr; i++) {
    const char *w = ct_attr_check(op->kind, &op->attrs[i]);
    if (w) {
      *bad = &op->attrs[i];
      *why = w;
      return false;
    }
  }
  return true;
}

int ct_attr_len_want(const ct_op *op, ct_attr_len len) {
  int r = op->n_in > 0 && op->in[0] ? op->in[0]->ndim : -1;
  switch (len) {
  case CT_ALEN_ONE: return 1;
  case CT_ALEN_TWO: return 2;
  case CT_ALEN_RANK: return r;
  case CT_ALEN_SPATIAL: return r >= 2 ? r - 2 : -1;
  case CT_ALEN_PADS: return r >= 2 ? 2 * (r - 2) : -1;
  case CT_ALEN_ANY: break;
  }
  return -1;
}

const char *ct_attr_len_name(ct_attr_len len) {
  static const char *const names[] = {"one", "any", "one per spatial axis", "two per spatial axis", "one per axis", "two"};
  return (unsigned)len < sizeof names / sizeof names[0] ? names[len] : "?";
}

/* Values an attribute holds (scalars: 1). */
static int attr_count(const ct_attr *a) {
  return a->kind == CT_ATTR_INTS || a->kind == CT_ATTR_FLOATS || a->kind == CT_ATTR_STRINGS ? a->n : 1;
}

bool ct_op_check_attr_lens(const ct_op *op, const ct_attr **bad, int *got, int *want) {
  for (int i = 0; i < op->n_attr; i++) {
    const ct_attr_schema *s = ct_op_attr_schema(op->kind, op->attrs[i].name);
    int w = s && s->len != CT_ALEN_ONE ? ct_attr_len_want(op, s->len) : -1;
    if (w >= 0 && attr_count(&op->attrs[i]) != w) {
      *bad = &op->attrs[i], *got = attr_count(&op->attrs[i]), *want = w;
      return false;
    }
  }
  return true;
}

bool ct_attr_ints_fixed(const ct_op *op, const char *name, ct_attr_len len, bool has_fill, int64_t fill,
                        int64_t out[CT_ATTR_LIST_MAX], int *n) {
  int want = ct_attr_len_want(op, len), got = 0;
  *n = 0;
  if (want < 0 || want > CT_ATTR_LIST_MAX) return false;
  const int64_t *v = ct_op_get_ints(op, name, &got);
  if (v ? got != want : ct_op_attr(op, name) || !has_fill) return false;
  for (int i = 0; i < want; i++) out[i] = v ? v[i] : fill;
  *n = want;
  return true;
}
