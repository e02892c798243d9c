/* text_parse.c: the text IR parser (see text.h; grammar in docs/formats.md): recursive
 * descent over the scanner of text_lex.c, building a ct_graph op by op, checking value
 * definitions, uses and arities against ir/ops.def as it goes (MLIR's parser style). */
#include "ir/text.h"

#include <stdlib.h>
#include <string.h>

#include "ir/text_lex.h"

typedef struct parser {
  ct_lex lx;
  ct_graph *g;
  ct_value **byid;   /* text number → value */
  int cap_byid, max_id;
  bool have_dialect;
  ct_value **tmp;    /* operand scratch */
  int cap_tmp;
  int *ids;          /* result-number scratch */
  int cap_ids;
  const char *line_at; /* line counting: position line_at is on line line_no */
  int line_no;
} parser;

/* Line (1-based) of position at; positions must come in increasing order. */
static int line_of(parser *ps, const char *at) {
  for (; ps->line_at < at; ps->line_at++)
    if (*ps->line_at == '\n') ps->line_no++;
  return ps->line_no;
}

static bool grow(void **p, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int nc = *cap ? *cap : 16;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, (size_t)nc * elem);
  if (!q) return false;
  *p = q;
  *cap = nc;
  return true;
}

/* ---- attributes ---- */

typedef struct list_acc {
  int n, cap;
  int64_t *ints;
  double *floats;
  char **strs;
  bool any_float, any_string, any_number;
} list_acc;

static void list_free(list_acc *l) {
  for (int i = 0; i < l->n && l->strs; i++) free(l->strs[i]);
  free(l->ints);
  free(l->floats);
  free(l->strs);
}

static ct_status list_item(parser *ps, list_acc *l) {
  ct_lex *lx = &ps->lx;
  int cap = l->cap;
  if (!grow((void **)&l->ints, &cap, l->n + 1, sizeof *l->ints)) return ct_lex_oom(lx);
  cap = l->cap;
  if (!grow((void **)&l->floats, &cap, l->n + 1, sizeof *l->floats)) return ct_lex_oom(lx);
  cap = l->cap;
  if (!grow((void **)&l->strs, &cap, l->n + 1, sizeof *l->strs)) return ct_lex_oom(lx);
  l->cap = cap;
  const char *at = (ct_lex_skip(lx), lx->p);
  l->strs[l->n] = NULL;
  if (ct_lex_peek(lx, "\"")) {
    if (l->any_number) return ct_lex_error(lx, at, "list mixes strings and numbers");
    ct_status st = ct_lex_string(lx);
    if (st) return st;
    if (!(l->strs[l->n] = strdup(lx->buf))) return ct_lex_oom(lx);
    l->any_string = true;
  } else {
    if (l->any_string) return ct_lex_error(lx, at, "list mixes strings and numbers");
    ct_lex_num num;
    ct_status st = ct_lex_number(lx, &num);
    if (st) return st;
    l->ints[l->n] = num.is_float ? 0 : num.i;
    l->floats[l->n] = num.is_float ? num.f : (double)num.i;
    l->any_float |= num.is_float;
    l->any_number = true;
  }
  l->n++;
  return CT_OK;
}

/* `[] : i64|f64|str` or `[a, b, ...]` → a list attribute on op. */
static ct_status parse_list(parser *ps, ct_op *op, const char *name) {
  ct_lex *lx = &ps->lx;
  list_acc l = {0};
  ct_status st = CT_OK;
  bool ok = true;
  if (ct_lex_accept(lx, "]")) {
    if ((st = ct_lex_expect(lx, ":"))) return st;
    const char *at = (ct_lex_skip(lx), lx->p);
    if (ct_lex_accept_kw(lx, "i64")) ok = ct_op_set_ints(ps->g, op, name, 0, NULL);
    else if (ct_lex_accept_kw(lx, "f64")) ok = ct_op_set_floats(ps->g, op, name, 0, NULL);
    else if (ct_lex_accept_kw(lx, "str")) ok = ct_op_set_strings(ps->g, op, name, 0, NULL);
    else return ct_lex_error(lx, at, "expected the kind of an empty list (i64, f64 or str)");
    return ok ? CT_OK : ct_lex_oom(lx);
  }
  do {
    if ((st = list_item(ps, &l))) break;
  } while (ct_lex_accept(lx, ","));
  if (!st) st = ct_lex_expect(lx, "]");
  if (!st) {
    if (l.any_string) ok = ct_op_set_strings(ps->g, op, name, l.n, (const char *const *)l.strs);
    else if (l.any_float) ok = ct_op_set_floats(ps->g, op, name, l.n, l.floats);
    else ok = ct_op_set_ints(ps->g, op, name, l.n, l.ints);
    if (!ok) st = ct_lex_oom(lx);
  }
  list_free(&l);
  return st;
}

/* Types attribute name of op by the op table's schema: a number written without a fraction
 * where the schema wants a float (`alpha = 1`, `mean = [0, 0, 0]`) is taken as that float.
 * Unknown and mistyped attributes are left for ct_ir_check_attrs (ct_ir_load, the verifier):
 * the parser itself reads any well-formed attribute. */
static ct_status type_attr(parser *ps, ct_op *op, const char *name) {
  ct_attr *a = (ct_attr *)ct_op_attr(op, name);
  const ct_attr_schema *s = ct_op_attr_schema(op->kind, name);
  if (a && s && s->type == CT_AT_FLOAT && a->kind == CT_ATTR_INT) {
    a->kind = CT_ATTR_FLOAT;
    a->f = (double)a->i;
  } else if (a && s && s->type == CT_AT_FLOATS && a->kind == CT_ATTR_INTS) {
    double *f = ct_arena_alloc(&ps->g->arena, sizeof *f * (size_t)(a->n ? a->n : 1));
    if (!f) return ct_lex_oom(&ps->lx);
    for (int i = 0; i < a->n; i++) f[i] = (double)a->ints[i];
    a->kind = CT_ATTR_FLOATS;
    a->floats = f;
  }
  return CT_OK;
}

static ct_status parse_attr(parser *ps, ct_op *op) {
  ct_lex *lx = &ps->lx;
  const char *at = (ct_lex_skip(lx), lx->p);
  ct_status st = ct_lex_name(lx, "an attribute name");
  if (st) return st;
  char *name = strdup(lx->buf);
  if (!name) return ct_lex_oom(lx);
  bool ok = true;
  if (ct_op_attr(op, name)) st = ct_lex_error(lx, at, "duplicate attribute \"%s\"", name);
  else st = ct_lex_expect(lx, "=");
  if (!st && ct_lex_accept(lx, "[")) {
    st = parse_list(ps, op, name);
  } else if (!st && ct_lex_peek(lx, "\"")) {
    if (!(st = ct_lex_string(lx))) ok = ct_op_set_string(ps->g, op, name, lx->buf);
  } else if (!st) {
    ct_lex_num num;
    if (!(st = ct_lex_number(lx, &num)))
      ok = num.is_float ? ct_op_set_float(ps->g, op, name, num.f) : ct_op_set_int(ps->g, op, name, num.i);
  }
  if (!st && !ok) st = ct_lex_oom(lx);
  if (!st) st = type_attr(ps, op, name);
  free(name);
  return st;
}

static ct_status parse_attr_dict(parser *ps, ct_op *op) {
  ct_lex *lx = &ps->lx;
  if (!ct_lex_accept(lx, "{")) return CT_OK;
  if (ct_lex_accept(lx, "}")) return CT_OK;
  ct_status st;
  do {
    if ((st = parse_attr(ps, op))) return st;
  } while (ct_lex_accept(lx, ","));
  return ct_lex_expect(lx, "}");
}

/* ---- types ---- */

/* `!quant<s, zp>` or `!quant<[s...], [zp...]>` after "!quant<" was consumed. */
/* `axis = K` after per-channel quant params (0 <= K < CT_MAX_DIMS). */
static ct_status parse_quant_axis(parser *ps, int64_t *axis) {
  ct_lex *lx = &ps->lx;
  const char *at = (ct_lex_skip(lx), lx->p);
  ct_lex_num num;
  ct_status st = ct_lex_accept_kw(lx, "axis") ? ct_lex_expect(lx, "=") : ct_lex_error(lx, at, "expected axis = N");
  if (!st) st = ct_lex_number(lx, &num);
  if (!st && (num.is_float || num.i < 0 || num.i >= CT_MAX_DIMS)) st = ct_lex_error(lx, at, "bad quant axis");
  if (!st) *axis = num.i;
  return st;
}

static ct_status parse_quant(parser *ps, ct_value *v) {
  ct_lex *lx = &ps->lx;
  list_acc sc = {0}, zp = {0};
  bool lists = ct_lex_accept(lx, "[");
  ct_status st = CT_OK;
  do {
    if ((st = list_item(ps, &sc))) break;
  } while (lists && ct_lex_accept(lx, ","));
  if (!st && lists) st = ct_lex_expect(lx, "]");
  if (!st) st = ct_lex_expect(lx, ",");
  const char *zat = (ct_lex_skip(lx), lx->p);
  if (!st && lists) st = ct_lex_expect(lx, "[");
  do {
    if (!st) st = list_item(ps, &zp);
  } while (!st && lists && ct_lex_accept(lx, ","));
  if (!st && lists) st = ct_lex_expect(lx, "]");
  if (!st && (sc.any_string || zp.any_string)) st = ct_lex_error(lx, zat, "quant parameters must be numbers");
  if (!st && (zp.any_float || zp.n != sc.n)) st = ct_lex_error(lx, zat, "expected %d integer zero point(s)", sc.n);
  for (int i = 0; !st && i < zp.n; i++)
    if (zp.ints[i] < INT32_MIN || zp.ints[i] > INT32_MAX) st = ct_lex_error(lx, zat, "zero point out of range");
  int64_t axis = 0;
  if (!st && lists && ct_lex_accept(lx, ",")) st = parse_quant_axis(ps, &axis);
  if (!st) st = ct_lex_expect(lx, ">");
  if (!st) {
    v->quant_axis = (int)axis;
    v->n_scale = sc.n;
    v->scale = ct_arena_memdup(&ps->g->arena, sc.floats, sizeof(double) * (size_t)sc.n);
    v->zero_point = ct_arena_alloc(&ps->g->arena, sizeof(int32_t) * (size_t)sc.n);
    if (!v->scale || !v->zero_point) st = ct_lex_oom(lx);
    for (int i = 0; !st && i < zp.n; i++) v->zero_point[i] = (int32_t)zp.ints[i];
  }
  list_free(&sc);
  list_free(&zp);
  return st;
}

static ct_status parse_dims(parser *ps, int *ndim, int64_t *shape) {
  ct_lex *lx = &ps->lx;
  *ndim = 0;
  if (lx->end - lx->p >= 2 && lx->p[0] == '*' && lx->p[1] == 'x') {
    lx->p += 2;
    *ndim = -1;
    return CT_OK;
  }
  while (lx->p < lx->end && ((*lx->p >= '0' && *lx->p <= '9') || *lx->p == '?')) {
    const char *at = lx->p;
    int64_t dim = -1;
    if (*lx->p == '?') {
      lx->p++;
    } else {
      dim = 0;
      for (; lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9'; lx->p++) {
        if (dim > (INT64_MAX - 9) / 10) return ct_lex_error(lx, at, "dimension out of range");
        dim = dim * 10 + (*lx->p - '0');
      }
    }
    if (*ndim == CT_MAX_DIMS) return ct_lex_error(lx, at, "more than %d dimensions", CT_MAX_DIMS);
    shape[(*ndim)++] = dim;
    if (lx->p >= lx->end || *lx->p != 'x') return ct_lex_error(lx, lx->p, "expected 'x' after a dimension");
    lx->p++;
  }
  return CT_OK;
}

/* tensor<DIMSxDTYPE [!quant<...>]> into v. */
static ct_status parse_type(parser *ps, ct_value *v) {
  ct_lex *lx = &ps->lx;
  ct_status st;
  if ((st = ct_lex_expect(lx, "tensor")) || (st = ct_lex_expect(lx, "<"))) return st;
  int ndim;
  int64_t shape[CT_MAX_DIMS];
  if ((st = parse_dims(ps, &ndim, shape))) return st;
  const char *at = lx->p;
  const char *q = lx->p;
  while (q < lx->end && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9'))) q++;
  char dt_name[16];
  ct_dtype dt;
  if (q == at || q - at >= (long)sizeof dt_name) return ct_lex_error(lx, at, "expected an element type");
  memcpy(dt_name, at, (size_t)(q - at));
  dt_name[q - at] = '\0';
  if (!ct_dtype_parse(dt_name, &dt)) return ct_lex_error(lx, at, "unknown element type \"%s\"", dt_name);
  lx->p = q;
  ct_value_set_type(v, dt, ndim, shape);
  if (ct_lex_accept(lx, "!quant<") && (st = parse_quant(ps, v))) return st;
  return ct_lex_expect(lx, ">");
}

/* ---- values ---- */

static ct_status lookup_ref(parser *ps, ct_value **out) {
  ct_lex *lx = &ps->lx;
  const char *at = (ct_lex_skip(lx), lx->p);
  int id;
  ct_status st = ct_lex_ref(lx, &id);
  if (st) return st;
  if (id < 0) {
    *out = NULL;
    return CT_OK;
  }
  if (id >= ps->cap_byid || !ps->byid[id]) return ct_lex_error(lx, at, "use of undefined value %%%d", id);
  *out = ps->byid[id];
  return CT_OK;
}

static ct_status parse_operands(parser *ps, int *n) {
  ct_lex *lx = &ps->lx;
  ct_status st;
  *n = 0;
  if ((st = ct_lex_expect(lx, "("))) return st;
  if (ct_lex_accept(lx, ")")) return CT_OK;
  do {
    if (!grow((void **)&ps->tmp, &ps->cap_tmp, *n + 1, sizeof *ps->tmp)) return ct_lex_oom(lx);
    if ((st = lookup_ref(ps, &ps->tmp[*n]))) return st;
    (*n)++;
  } while (ct_lex_accept(lx, ","));
  return ct_lex_expect(lx, ")");
}

/* %a, %b, ... = : result numbers (defined here; duplicates are errors). */
static ct_status parse_results(parser *ps, int *n) {
  ct_lex *lx = &ps->lx;
  *n = 0;
  do {
    if (!grow((void **)&ps->ids, &ps->cap_ids, *n + 1, sizeof *ps->ids)) return ct_lex_oom(lx);
    const char *at = (ct_lex_skip(lx), lx->p);
    int id;
    ct_status st = ct_lex_ref(lx, &id);
    if (st) return st;
    if (id < 0) return ct_lex_error(lx, at, "%%none cannot be a result");
    bool dup = id < ps->cap_byid && ps->byid[id];
    for (int i = 0; i < *n; i++) dup |= ps->ids[i] == id;
    if (dup) return ct_lex_error(lx, at, "duplicate definition of %%%d", id);
    ps->ids[(*n)++] = id;
  } while (ct_lex_accept(lx, ","));
  return ct_lex_expect(lx, "=");
}

/* Creates the result values (names come later from loc) and registers their numbers. */
static ct_status define_results(parser *ps, int n, ct_value **vals) {
  for (int i = 0; i < n; i++) {
    int id = ps->ids[i];
    int cap = ps->cap_byid;
    if (!grow((void **)&ps->byid, &cap, id + 1, sizeof *ps->byid)) return ct_lex_oom(&ps->lx);
    memset(ps->byid + ps->cap_byid, 0, sizeof *ps->byid * (size_t)(cap - ps->cap_byid));
    ps->cap_byid = cap;
    if (!(vals[i] = ct_graph_add_value(ps->g, "", CT_F32, -1, NULL))) return ct_lex_oom(&ps->lx);
    ps->byid[id] = vals[i];
    if (id > ps->max_id) ps->max_id = id;
  }
  return CT_OK;
}

/* ---- ops ---- */

/* dialect.Op → kind; the first op fixes the module's dialect. */
static ct_status parse_op_name(parser *ps, ct_op_kind *kind) {
  ct_lex *lx = &ps->lx;
  const char *at = (ct_lex_skip(lx), lx->p);
  ct_status st = ct_lex_ident(lx, "an op name (top.Op or tpu.Op)");
  if (st) return st;
  char *dot = strchr(lx->buf, '.');
  if (!dot) return ct_lex_error(lx, at, "op name \"%s\" has no dialect prefix", lx->buf);
  *dot = '\0';
  if (strcmp(lx->buf, "top") != 0 && strcmp(lx->buf, "tpu") != 0) {
    *dot = '.';
    return ct_lex_error(lx, at, "unknown dialect in op \"%s\"", lx->buf);
  }
  if (!ps->have_dialect) {
    if (!(ps->g->dialect = ct_arena_strdup(&ps->g->arena, lx->buf))) return ct_lex_oom(lx);
    ps->have_dialect = true;
  } else if (strcmp(ps->g->dialect, lx->buf) != 0) {
    *dot = '.';
    return ct_lex_error(lx, at, "op \"%s\" in a \"%s\" module", lx->buf, ps->g->dialect);
  }
  *dot = '.';
  if (!ct_op_lookup(dot + 1, kind)) return ct_lex_error(lx, at, "unknown op \"%s\"", lx->buf);
  return CT_OK;
}

static ct_status check_arity(parser *ps, const char *at, ct_op_kind k, int n_in, int n_out) {
  int mi, xi, mo, xo;
  ct_op_arity(k, &mi, &xi, &mo, &xo);
  if (n_in < mi || (xi >= 0 && n_in > xi))
    return ct_lex_error(&ps->lx, at, "op %s takes %d..%d operands, got %d", ct_op_name(k), mi, xi, n_in);
  if (n_out < mo || (xo >= 0 && n_out > xo))
    return ct_lex_error(&ps->lx, at, "op %s has %d..%d results, got %d", ct_op_name(k), mo, xo, n_out);
  return CT_OK;
}

static ct_status set_name(parser *ps, ct_value *v) {
  return (v->name = ct_arena_strdup(&ps->g->arena, ps->lx.buf)) ? CT_OK : ct_lex_oom(&ps->lx);
}

/* loc("op") or loc("op" -> "r") or loc("op" -> ["r0", ...]); names op and its results. */
static ct_status parse_loc(parser *ps, ct_op *op) {
  ct_lex *lx = &ps->lx;
  ct_status st;
  if ((st = ct_lex_expect(lx, "loc")) || (st = ct_lex_expect(lx, "(")) || (st = ct_lex_string(lx))) return st;
  if (!(op->loc = ct_arena_strdup(&ps->g->arena, lx->buf))) return ct_lex_oom(lx);
  const char *at = (ct_lex_skip(lx), lx->p);
  if (!ct_lex_accept(lx, "->")) {
    if (op->n_out != 1) return ct_lex_error(lx, at, "expected '->' and %d result names", op->n_out);
    if ((st = set_name(ps, op->out[0]))) return st;
    return ct_lex_expect(lx, ")");
  }
  bool list = ct_lex_accept(lx, "[");
  int n = 0;
  do {
    at = (ct_lex_skip(lx), lx->p);
    if ((st = ct_lex_string(lx))) return st;
    if (n >= op->n_out) return ct_lex_error(lx, at, "more result names than the %d results", op->n_out);
    if ((st = set_name(ps, op->out[n++]))) return st;
  } while (list && ct_lex_accept(lx, ","));
  if (list && (st = ct_lex_expect(lx, "]"))) return st;
  if (n != op->n_out) return ct_lex_error(lx, lx->p, "%d result names for %d results", n, op->n_out);
  return ct_lex_expect(lx, ")");
}

static ct_status parse_types(parser *ps, int n, ct_value **vals) {
  ct_status st;
  for (int i = 0; i < n; i++) {
    if (i && (st = ct_lex_expect(&ps->lx, ","))) return st;
    if ((st = parse_type(ps, vals[i]))) return st;
  }
  if (ct_lex_peek(&ps->lx, ",")) return ct_lex_error(&ps->lx, ps->lx.p, "more types than the %d results", n);
  return CT_OK;
}

static ct_status parse_op(parser *ps) {
  ct_lex *lx = &ps->lx;
  int n_out, n_in;
  ct_op_kind kind;
  ct_status st;
  if ((st = parse_results(ps, &n_out))) return st;
  const char *at = (ct_lex_skip(lx), lx->p);
  if ((st = parse_op_name(ps, &kind)) || (st = parse_operands(ps, &n_in))) return st;
  if ((st = check_arity(ps, at, kind, n_in, n_out))) return st;
  ct_value **vals = calloc((size_t)n_out, sizeof *vals);
  if (!vals) return ct_lex_oom(lx);
  ct_op *op = NULL;
  if (!(st = define_results(ps, n_out, vals)) &&
      !(op = ct_graph_add_op(ps->g, kind, "", n_in, ps->tmp, n_out, vals)))
    st = ct_lex_oom(lx);
  if (op) op->line = line_of(ps, at);
  if (!st) st = parse_attr_dict(ps, op);
  if (!st) st = ct_lex_expect(lx, ":");
  if (!st) st = parse_types(ps, n_out, vals);
  if (!st) st = parse_loc(ps, op);
  free(vals);
  return st;
}

static bool same_type(const ct_value *a, const ct_value *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim || a->n_scale != b->n_scale) return false;
  if (a->n_scale > 1 && a->quant_axis != b->quant_axis) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  for (int i = 0; i < a->n_scale; i++)
    if (a->scale[i] != b->scale[i] || a->zero_point[i] != b->zero_point[i]) return false;
  return true;
}

/* return [%a, ... : type, ...] — the module outputs; types must match the definitions. */
static ct_status parse_return(parser *ps) {
  ct_lex *lx = &ps->lx;
  int n = 0;
  ct_status st;
  if (ct_lex_peek(lx, "%")) {
    do {
      if (!grow((void **)&ps->tmp, &ps->cap_tmp, n + 1, sizeof *ps->tmp)) return ct_lex_oom(lx);
      const char *at = (ct_lex_skip(lx), lx->p);
      if ((st = lookup_ref(ps, &ps->tmp[n]))) return st;
      if (!ps->tmp[n]) return ct_lex_error(lx, at, "%%none cannot be returned");
      n++;
    } while (ct_lex_accept(lx, ","));
    if ((st = ct_lex_expect(lx, ":"))) return st;
    for (int i = 0; i < n; i++) {
      if (i && (st = ct_lex_expect(lx, ","))) return st;
      ct_value tv = {0};
      const char *at = (ct_lex_skip(lx), lx->p);
      if ((st = parse_type(ps, &tv))) return st;
      if (!same_type(&tv, ps->tmp[i]))
        return ct_lex_error(lx, at, "return type %d differs from the type of value \"%s\"", i, ps->tmp[i]->name);
    }
  }
  return ct_graph_set_outputs(ps->g, n, ps->tmp) ? CT_OK : ct_lex_oom(lx);
}

/* ---- module ---- */

static ct_status parse_module_attrs(parser *ps) {
  ct_lex *lx = &ps->lx;
  ct_status st;
  if (!ct_lex_accept_kw(lx, "attributes")) return CT_OK;
  if ((st = ct_lex_expect(lx, "{"))) return st;
  if (ct_lex_accept(lx, "}")) return CT_OK;
  do {
    const char *at = (ct_lex_skip(lx), lx->p);
    if ((st = ct_lex_name(lx, "a module attribute name"))) return st;
    const char **slot = !strcmp(lx->buf, "chip") ? &ps->g->chip : !strcmp(lx->buf, "weights") ? &ps->g->weights : NULL;
    if (!slot) return ct_lex_error(lx, at, "unknown module attribute \"%s\"", lx->buf);
    if ((st = ct_lex_expect(lx, "=")) || (st = ct_lex_string(lx))) return st;
    if (!(*slot = ct_arena_strdup(&ps->g->arena, lx->buf))) return ct_lex_oom(lx);
  } while (ct_lex_accept(lx, ","));
  return ct_lex_expect(lx, "}");
}

static ct_status parse_module(parser *ps) {
  ct_lex *lx = &ps->lx;
  ct_status st;
  if (!ct_lex_accept_kw(lx, "module")) return ct_lex_error(lx, lx->p, "expected 'module'");
  if ((st = ct_lex_expect(lx, "@")) || (st = ct_lex_name(lx, "a module name"))) return st;
  if (!(ps->g->name = ct_arena_strdup(&ps->g->arena, lx->buf))) return ct_lex_oom(lx);
  if ((st = parse_module_attrs(ps)) || (st = ct_lex_expect(lx, "{"))) return st;
  for (;;) {
    ct_lex_skip(lx);
    if (ct_lex_accept_kw(lx, "return")) break;
    if (!ct_lex_peek(lx, "%")) return ct_lex_error(lx, lx->p, "expected an op or 'return'");
    if ((st = parse_op(ps))) return st;
  }
  if ((st = parse_return(ps)) || (st = ct_lex_expect(lx, "}"))) return st;
  ct_lex_skip(lx);
  if (lx->p < lx->end) return ct_lex_error(lx, lx->p, "expected end of file after the module");
  return CT_OK;
}

/* Value ids follow the text's numbers when those are 0..n-1; else definition order. */
static void number_values(parser *ps) {
  ct_graph *g = ps->g;
  if (g->n_values != ps->max_id + 1) return;
  for (int i = 0; i < g->n_values; i++) {
    g->values[i] = ps->byid[i];
    g->values[i]->id = i;
  }
}

ct_status ct_ir_parse(const char *text, size_t len, const char *filename, ct_graph **out, ct_diag *d) {
  parser ps;
  memset(&ps, 0, sizeof ps);
  ps.max_id = -1;
  ps.line_at = text;
  ps.line_no = 1;
  *out = NULL;
  ct_lex_init(&ps.lx, text, len, filename, d);
  ps.g = ct_graph_new("main", "top");
  ct_status st = ps.g ? CT_OK : ct_lex_oom(&ps.lx);
  if (!st && filename && !(ps.g->source = ct_arena_strdup(&ps.g->arena, filename))) st = ct_lex_oom(&ps.lx);
  if (!st) st = parse_module(&ps);
  if (!st) number_values(&ps);
  ct_lex_free(&ps.lx);
  free(ps.byid);
  free(ps.tmp);
  free(ps.ids);
  if (st) {
    ct_graph_free(ps.g);
    return st;
  }
  *out = ps.g;
  return CT_OK;
}
