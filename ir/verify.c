/* verify.c: the graph verifier (see verify.h). SSA dominance is checked in the op order as
 * MLIR's verifier does for a single block; result types are re-inferred with the op's shape
 * function on a snapshot that is restored afterwards. Value names go through an FNV-1a hash set. */
#include "ir/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vctx {
  ct_shape_lookup shape_of;      /* NULL: no re-inference */
  ct_op_check tpu_check;         /* NULL: no Tpu-dialect op checks */
  ct_graph *g;
  ct_diag *d;
  int *pos;            /* value id → index of its defining op in g->ops, -1 = not yet */
  const char **names;  /* hash set of value names (open addressing) */
  size_t cap_names;
} vctx;

#define OP_FMT "node \"%s\" (op %s): "
#define OP_ARGS(op) (op)->loc, ct_op_name((op)->kind)

static bool is_value_of(const ct_graph *g, const ct_value *v) {
  return v && v->id >= 0 && v->id < g->n_values && g->values[v->id] == v;
}

static size_t fnv1a(const char *s) {
  size_t h = 1469598103934665603u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

/* Inserts name; false if already present. */
static bool name_insert(vctx *c, const char *name) {
  size_t i = fnv1a(name) & (c->cap_names - 1);
  while (c->names[i]) {
    if (strcmp(c->names[i], name) == 0) return false;
    i = (i + 1) & (c->cap_names - 1);
  }
  c->names[i] = name;
  return true;
}

/* Range of an integer storage type; false for float and bool types (no quant params). */
static bool storage_range(ct_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case CT_I8: *lo = INT8_MIN, *hi = INT8_MAX; return true;
    case CT_U8: *lo = 0, *hi = UINT8_MAX; return true;
    case CT_I16: *lo = INT16_MIN, *hi = INT16_MAX; return true;
    case CT_U16: *lo = 0, *hi = UINT16_MAX; return true;
    case CT_I32: case CT_I64: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    case CT_U32: case CT_U64: *lo = 0, *hi = INT32_MAX; return true;
    default: return false;
  }
}

/* Quant params (n_scale > 0): integer storage type, per-channel count = shape[axis], scales
 * finite and positive, zero points in the storage type's range. */
static ct_status check_quant(vctx *c, const ct_op *op, int j, const ct_value *v) {
  int64_t lo, hi;
  if (!storage_range(v->dtype, &lo, &hi))
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\"): quant params on %s, not an integer type",
                       OP_ARGS(op), j, v->name, ct_dtype_name(v->dtype));
  if (v->n_scale > 1 && (v->quant_axis < 0 || v->quant_axis >= v->ndim || v->shape[v->quant_axis] != v->n_scale))
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\"): %d scales do not match axis %d of a rank-%d value",
                       OP_ARGS(op), j, v->name, v->n_scale, v->quant_axis, v->ndim);
  for (int k = 0; k < v->n_scale; k++) {
    if (!(isfinite(v->scale[k]) && v->scale[k] > 0))
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\"): scale %d is %g, not a positive number",
                         OP_ARGS(op), j, v->name, k, v->scale[k]);
    if (v->zero_point[k] < lo || v->zero_point[k] > hi)
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\"): zero point %d is %d, outside %s",
                         OP_ARGS(op), j, v->name, k, (int)v->zero_point[k], ct_dtype_name(v->dtype));
  }
  return CT_OK;
}

static ct_status check_type(vctx *c, const ct_op *op, int j, const ct_value *v) {
  if ((unsigned)v->dtype >= CT_DTYPE_COUNT)
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\") has an invalid dtype", OP_ARGS(op), j, v->name);
  if (v->ndim < 0 || v->ndim > CT_MAX_DIMS)
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\") has no known shape", OP_ARGS(op), j, v->name);
  for (int k = 0; k < v->ndim; k++)
    if (v->shape[k] < 0)
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\"): dimension %d is unknown", OP_ARGS(op), j,
                         v->name, k);
  if (v->n_scale < 0 || (v->n_scale > 0 && (!v->scale || !v->zero_point)))
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\"): malformed quant params", OP_ARGS(op), j, v->name);
  return v->n_scale > 0 ? check_quant(c, op, j, v) : CT_OK;
}

static ct_status check_data(vctx *c, const ct_op *op, const ct_value *v) {
  const ct_tensor *t = v->data;
  bool same = t->dtype == v->dtype && t->ndim == v->ndim;
  for (int k = 0; same && k < v->ndim; k++) same = t->shape[k] == v->shape[k];
  if (same && t->nbytes == (size_t)ct_tensor_numel(t) * ct_dtype_size(t->dtype)) return CT_OK;
  char a[160], b[160];
  return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "value \"%s\" is %sx%s but its data is %sx%s", OP_ARGS(op), v->name,
                     ct_shape_str(v->ndim, v->shape, a, sizeof a), ct_dtype_name(v->dtype),
                     ct_shape_str(t->ndim, t->shape, b, sizeof b), ct_dtype_name(t->dtype));
}

static ct_status check_operands(vctx *c, int at, const ct_op *op) {
  for (int j = 0; j < op->n_in; j++) {
    const ct_value *v = op->in[j];
    if (!v) continue;
    if (!is_value_of(c->g, v))
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "operand %d is not a value of this graph", OP_ARGS(op), j);
    if (c->pos[v->id] < 0 || c->pos[v->id] >= at)
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "operand %d (\"%s\") is not defined before its use", OP_ARGS(op),
                         j, v->name);
  }
  return CT_OK;
}

static ct_status check_results(vctx *c, int at, const ct_op *op) {
  for (int j = 0; j < op->n_out; j++) {
    const ct_value *v = op->out[j];
    if (!is_value_of(c->g, v))
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d is not a value of this graph", OP_ARGS(op), j);
    if (v->def != op || c->pos[v->id] >= 0)
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d (\"%s\") is defined by another op too", OP_ARGS(op), j,
                         v->name);
    c->pos[v->id] = at;
    if (!v->name || !v->name[0])
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d has no name", OP_ARGS(op), j);
    if (!name_insert(c, v->name))
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "value name \"%s\" is used twice", OP_ARGS(op), v->name);
    ct_status st = check_type(c, op, j, v);
    if (!st && v->data) st = check_data(c, op, v);
    if (st) return st;
  }
  return CT_OK;
}

/* "FILE:LINE: " of op when g was parsed from a file, else "". */
static void op_where(const ct_graph *g, const ct_op *op, char *at, size_t n) {
  at[0] = 0;
  if (g->source && op->line > 0) snprintf(at, n, "%s:%d: ", g->source, op->line);
}

/* Graph leaves the text format writes in both dialects (tpu.Input, tpu.Weight). */
static bool is_leaf(ct_op_kind k) { return k == CT_OP_INPUT || k == CT_OP_WEIGHT; }

/* The dialect and attribute checks of one op: the op exists in the graph's dialect and every
 * attribute conforms to its schema in ops.def: its type, and the count of a list whose length
 * the schema fixes (ct_op_check_attr_lens). */
static ct_status check_op_attrs(const ct_graph *g, const ct_op *op, ct_diag *d) {
  ct_dialect dl = ct_graph_dialect(g);
  if (!(ct_op_dialects(op->kind) & dl) && !is_leaf(op->kind))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "not an op of the %s dialect", OP_ARGS(op),
                       dl == CT_DIALECT_TPU ? "tpu" : "top");
  const ct_attr *bad;
  const char *why;
  if (!ct_op_check_attrs(op, &bad, &why))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "attribute \"%s\": %s", OP_ARGS(op), bad->name, why);
  int got, want;
  if (ct_op_check_attr_lens(op, &bad, &got, &want)) return CT_OK;
  const ct_attr_schema *s = ct_op_attr_schema(op->kind, bad->name);
  return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "attribute \"%s\" has %d value%s, expected %d (%s)", OP_ARGS(op), bad->name, got,
                     got == 1 ? "" : "s", want, ct_attr_len_name(s->len));
}

ct_status ct_ir_check_attrs(const ct_graph *g, ct_diag *d) {
  ct_status st = CT_OK;
  for (int i = 0; i < g->n_ops && !st; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead || !(st = check_op_attrs(g, op, d))) continue;
    char at[CT_DIAG_MAX / 2];
    op_where(g, op, at, sizeof at);
    if (at[0]) ct_diag_prefix(d, "%s", at);
  }
  return st;
}

static ct_status check_arity(vctx *c, const ct_op *op) {
  int mi, xi, mo, xo;
  if ((unsigned)op->kind >= CT_OP_COUNT)
    return ct_diag_set(c->d, CT_ERR_INPUT, "node \"%s\": unknown op kind %d", op->loc, (int)op->kind);
  ct_op_arity(op->kind, &mi, &xi, &mo, &xo);
  if (op->n_in < mi || (xi >= 0 && op->n_in > xi))
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "%d operands, ops.def allows %d..%d", OP_ARGS(op), op->n_in, mi, xi);
  if (op->n_out < mo || (xo >= 0 && op->n_out > xo))
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "%d results, ops.def allows %d..%d", OP_ARGS(op), op->n_out, mo, xo);
  for (int j = 0; j < mi; j++)
    if (!op->in[j]) return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "required operand %d is absent", OP_ARGS(op), j);
  return check_op_attrs(c->g, op, c->d);
}

/* ---- re-inference ---- */

/* What a shape function may change, saved so it can be put back. */
typedef struct snapshot {
  ct_value *saved;      /* copies of the result values */
  ct_attr *attrs;       /* copy of the attribute array's contents */
  ct_attr *attrs_ptr;
  int n_attr, cap_attr;
} snapshot;

static bool snap_take(snapshot *s, const ct_op *op) {
  s->saved = malloc(sizeof *s->saved * (size_t)(op->n_out + 1));
  s->attrs = malloc(sizeof *s->attrs * (size_t)(op->n_attr + 1));
  if (!s->saved || !s->attrs) {
    free(s->saved);
    free(s->attrs);
    return false;
  }
  for (int j = 0; j < op->n_out; j++) s->saved[j] = *op->out[j];
  if (op->n_attr) memcpy(s->attrs, op->attrs, sizeof *s->attrs * (size_t)op->n_attr);
  s->attrs_ptr = op->attrs;
  s->n_attr = op->n_attr;
  s->cap_attr = op->cap_attr;
  return true;
}

/* Restores op (attribute arrays live in the graph arena, so the old one is still valid). */
static void snap_restore(snapshot *s, ct_op *op) {
  for (int j = 0; j < op->n_out; j++) {
    if (op->out[j]->data != s->saved[j].data) ct_tensor_free(op->out[j]->data);
    *op->out[j] = s->saved[j];
  }
  op->attrs = s->attrs_ptr;
  op->n_attr = s->n_attr;
  op->cap_attr = s->cap_attr;
  if (op->n_attr) memcpy(op->attrs, s->attrs, sizeof *s->attrs * (size_t)op->n_attr);
  free(s->saved);
  free(s->attrs);
}

/* Inference is meaningful only when no input is an unloaded weight. */
static bool inferable(const ct_op *op) {
  for (int j = 0; j < op->n_in; j++) {
    const ct_value *v = op->in[j];
    if (v && !v->data && v->def && v->def->kind == CT_OP_WEIGHT) return false;
  }
  return true;
}

static ct_status compare_inferred(vctx *c, const ct_op *op, const snapshot *s, bool top) {
  char a[200], b[200];
  for (int j = 0; j < op->n_out; j++) {
    const ct_value *was = &s->saved[j], *now = op->out[j];
    bool same = was->ndim == now->ndim && (!top || was->dtype == now->dtype);
    for (int k = 0; same && k < was->ndim; k++) same = was->shape[k] == now->shape[k];
    if (same) continue;
    ct_shape_str(was->ndim, was->shape, a, sizeof a);
    ct_shape_str(now->ndim, now->shape, b, sizeof b);
    if (top && was->dtype != now->dtype)
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d is %sx%s, inference says %sx%s", OP_ARGS(op), j, a,
                         ct_dtype_name(was->dtype), b, ct_dtype_name(now->dtype));
    return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "result %d is %s, inference says %s", OP_ARGS(op), j, a, b);
  }
  return CT_OK;
}

/* Does the Tpu reference run op's integer kernel (ops/tpu_exec.c): a Cast, or an op with a
 * quantized result or a quantized non-constant operand? */
static bool runs_integer(const ct_op *op) {
  if (op->kind == CT_OP_CAST) return true;
  for (int j = 0; j < op->n_in; j++)
    if (op->in[j] && op->in[j]->n_scale > 0 && !op->in[j]->data) return true;
  for (int j = 0; j < op->n_out; j++)
    if (op->out[j] && op->out[j]->n_scale > 0) return true;
  return false;
}

/* The type a Tpu operand has for the Top shape functions, as the Tpu reference sees it
 * (docs/tpu.md): an integer op's storage operands as f32 (a Tpu op has its Top op's shapes),
 * index operands (i64, unquantized i32 constants) as they are; a float op's bf16 / f16
 * operands as f32 (its Top kernel runs on f32 copies), the others as they are. */
static ct_dtype float_view_dtype(const ct_value *v, bool integer) {
  switch (v->dtype) {
  case CT_BF16: case CT_F16: return CT_F32;
  case CT_I8: case CT_U8: case CT_I16: case CT_U16: return integer ? CT_F32 : v->dtype;
  case CT_I32: return integer && (v->n_scale > 0 || !v->data) ? CT_F32 : CT_I32;
  default: return v->dtype;
  }
}

static bool attr_equal(const ct_attr *a, const ct_attr *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case CT_ATTR_INT: return a->i == b->i;
  case CT_ATTR_FLOAT: return a->f == b->f || (a->f != a->f && b->f != b->f);
  case CT_ATTR_STRING: return !strcmp(a->s ? a->s : "", b->s ? b->s : "");
  default: break;
  }
  if (a->n != b->n) return false;
  for (int k = 0; k < a->n; k++) {
    bool same = a->kind == CT_ATTR_INTS     ? a->ints[k] == b->ints[k]
                : a->kind == CT_ATTR_FLOATS ? a->floats[k] == b->floats[k] || (a->floats[k] != a->floats[k] && b->floats[k] != b->floats[k])
                                            : !strcmp(a->strs[k], b->strs[k]);
    if (!same) return false;
  }
  return true;
}

static const ct_attr *find_attr(const ct_attr *a, int n, const char *name) {
  for (int k = 0; k < n; k++)
    if (!strcmp(a[k].name, name)) return &a[k];
  return NULL;
}

/* Tpu dialect: the attributes are in the canonical form the shape function writes (explicit
 * kernel_shape / strides / dilations / pads / group, resolved auto_pad, normalized axes...),
 * which the planner and the codegen read as they are. */
static ct_status compare_attrs(vctx *c, const ct_op *op, const snapshot *s) {
  for (int k = 0; k < op->n_attr; k++) {
    const ct_attr *now = &op->attrs[k], *was = find_attr(s->attrs, s->n_attr, now->name);
    if (!was) return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "attribute \"%s\" is missing (a Tpu op states it)", OP_ARGS(op), now->name);
    if (!attr_equal(was, now))
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "attribute \"%s\" is not in its canonical form (shape inference rewrites it)",
                         OP_ARGS(op), now->name);
  }
  for (int k = 0; k < s->n_attr; k++)
    if (!find_attr(op->attrs, op->n_attr, s->attrs[k].name))
      return ct_diag_set(c->d, CT_ERR_INPUT, OP_FMT "attribute \"%s\" must be resolved (shape inference removes it)", OP_ARGS(op),
                         s->attrs[k].name);
  return CT_OK;
}

/* Runs fn on op; in the Tpu dialect on a view whose operands have their float_view_dtype. */
static ct_status run_shape_fn(vctx *c, ct_op *op, ct_shape_fn fn, bool top, ct_diag *sub) {
  if (top) return fn(c->g, op, sub);
  size_t n = (size_t)op->n_in + 1;
  ct_value *vals = malloc(sizeof *vals * n);
  ct_value **ins = malloc(sizeof *ins * n);
  if (!vals || !ins) {
    free(vals), free(ins);
    return ct_diag_set(sub, CT_ERR_LIMIT, "verify: out of memory");
  }
  bool integer = runs_integer(op);
  for (int j = 0; j < op->n_in; j++) {
    ins[j] = NULL;
    if (!op->in[j]) continue;
    vals[j] = *op->in[j];
    vals[j].dtype = float_view_dtype(op->in[j], integer);
    ins[j] = &vals[j];
  }
  ct_op view = *op;
  view.in = ins;
  ct_status st = fn(c->g, &view, sub);
  op->attrs = view.attrs, op->n_attr = view.n_attr, op->cap_attr = view.cap_attr;
  free(vals), free(ins);
  return st;
}

static ct_status check_inference(vctx *c, ct_op *op) {
  ct_shape_fn fn = c->shape_of ? c->shape_of(op->kind) : NULL;
  if (!fn || !inferable(op)) return CT_OK;
  snapshot s;
  if (!snap_take(&s, op)) return ct_diag_set(c->d, CT_ERR_LIMIT, "verify: out of memory");
  bool top = ct_graph_dialect(c->g) != CT_DIALECT_TPU;
  ct_diag sub;
  ct_diag_clear(&sub);
  ct_status st = run_shape_fn(c, op, fn, top, &sub);
  if (st == CT_ERR_LIMIT) st = ct_diag_set(c->d, CT_ERR_LIMIT, "%s", sub.msg);
  else if (st) st = ct_diag_set(c->d, CT_ERR_INPUT, "shape inference: %s", sub.msg);
  else if (!(st = compare_inferred(c, op, &s, top)) && !top) st = compare_attrs(c, op, &s);
  snap_restore(&s, op);
  return st;
}

/* ---- driver ---- */

static ct_status check_outputs(vctx *c) {
  for (int i = 0; i < c->g->n_outputs; i++) {
    const ct_value *v = c->g->outputs[i];
    if (!is_value_of(c->g, v) || c->pos[v->id] < 0)
      return ct_diag_set(c->d, CT_ERR_INPUT, "module output %d%s%s%s is not defined by an op of the graph", i,
                         v && v->name ? " (\"" : "", v && v->name ? v->name : "", v && v->name ? "\")" : "");
  }
  return CT_OK;
}

static ct_status verify_op(vctx *c, int at, ct_op *op) {
  ct_status st;
  if ((st = check_arity(c, op)) || (st = check_operands(c, at, op)) || (st = check_results(c, at, op)) ||
      (st = check_inference(c, op)))
    return st;
  return c->tpu_check && ct_graph_dialect(c->g) == CT_DIALECT_TPU ? c->tpu_check(c->g, op, c->d) : CT_OK;
}

static ct_status verify_ops(vctx *c) {
  ct_status st = CT_OK;
  for (int i = 0; i < c->g->n_ops && !st; i++) {
    ct_op *op = c->g->ops[i];
    if (op->dead || !(st = verify_op(c, i, op)) || st == CT_ERR_LIMIT) continue;
    char at[CT_DIAG_MAX / 2];
    op_where(c->g, op, at, sizeof at);
    if (at[0]) ct_diag_prefix(c->d, "%s", at);
  }
  return st ? st : check_outputs(c);
}

ct_status ct_ir_verify_with(ct_graph *g, ct_shape_lookup shape_of, ct_op_check tpu_check, ct_diag *d) {
  vctx c = {.shape_of = shape_of, .tpu_check = tpu_check, .g = g, .d = d};
  c.cap_names = 16;
  while (c.cap_names < 2 * (size_t)g->n_values + 2) c.cap_names *= 2;
  c.pos = malloc(sizeof *c.pos * (size_t)(g->n_values + 1));
  c.names = calloc(c.cap_names, sizeof *c.names);
  ct_status st;
  if (!c.pos || !c.names) {
    st = ct_diag_set(d, CT_ERR_LIMIT, "verify: out of memory");
  } else {
    for (int i = 0; i < g->n_values; i++) c.pos[i] = -1;
    st = verify_ops(&c);
  }
  free(c.pos);
  free(c.names);
  return st;
}
