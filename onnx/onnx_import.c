/* onnx_import.c: ONNX ModelProto → Top IR graph (inputs, initializers, Constant nodes,
 * one op per node, attributes, outputs, preprocessing attributes). Follows the ONNX IR
 * spec (onnx/docs/IR.md: graphs, names, initializers, value info) and onnx.proto. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* ---- name → value map (FNV-1a, linear probing) ---- */

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

ct_value *ct_onnx_find(const ct_onnx_ctx *c, const char *name) {
  if (!c->cap) return NULL;
  for (size_t i = hash_str(name) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
    if (!c->slots[i]) return NULL;
    if (!strcmp(c->slots[i]->name, name)) return c->slots[i];
  }
}

static void put_slot(ct_value **slots, size_t cap, ct_value *v) {
  size_t i = hash_str(v->name) & (cap - 1);
  while (slots[i]) i = (i + 1) & (cap - 1);
  slots[i] = v;
}

bool ct_onnx_bind(ct_onnx_ctx *c, ct_value *v) {
  if (2 * (c->count + 1) > c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 256;
    ct_value **ns = calloc(nc, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < c->cap; i++)
      if (c->slots[i]) put_slot(ns, nc, c->slots[i]);
    free(c->slots);
    c->slots = ns;
    c->cap = nc;
  }
  put_slot(c->slots, c->cap, v);
  c->count++;
  return true;
}

ct_value *ct_onnx_new_value(ct_onnx_ctx *c, const char *name, ct_dtype dt, int ndim, const int64_t *shape) {
  char buf[600];
  const char *nm = name;
  for (int k = 1; ct_onnx_find(c, nm); k++) {
    snprintf(buf, sizeof buf, "%s#%d", name, k);
    nm = buf;
  }
  ct_value *v = ct_graph_add_value(c->g, nm, dt, ndim, shape);
  return v && ct_onnx_bind(c, v) ? v : NULL;
}

void ct_onnx_move_last_before(ct_onnx_ctx *c, const ct_op *before) {
  ct_op **ops = c->g->ops;
  int last = c->g->n_ops - 1, p = last;
  while (p > 0 && ops[p] != before) p--;
  if (p >= last || ops[p] != before) return;
  ct_op *moved = ops[last];
  memmove(ops + p + 1, ops + p, sizeof *ops * (size_t)(last - p));
  ops[p] = moved;
}

ct_value *ct_onnx_add_weight_before(ct_onnx_ctx *c, const ct_op *before, const char *name, ct_tensor *t) {
  ct_value *v = ct_onnx_new_value(c, name, t->dtype, t->ndim, t->shape);
  if (!v || !ct_graph_add_op(c->g, CT_OP_WEIGHT, v->name, 0, NULL, 1, &v) || !ct_tensor_set_name(t, v->name)) {
    ct_tensor_free(t);
    return NULL;
  }
  v->data = t;
  ct_onnx_move_last_before(c, before);
  return v;
}

ct_status ct_onnx_add_const_input(ct_onnx_ctx *c, ct_op *op, int idx, const char *what, ct_tensor *t,
                                  ct_diag *d) {
  char name[600];
  snprintf(name, sizeof name, "%s/%s", op->loc, what);
  int n_in = idx >= op->n_in ? idx + 1 : op->n_in;
  ct_value **in = ct_arena_alloc(&c->g->arena, sizeof *in * (size_t)(n_in + 1));
  ct_value *v = in ? ct_onnx_add_weight_before(c, op, name, t) : NULL;
  if (!v) {
    if (!in) ct_tensor_free(t);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  }
  for (int i = 0; i < op->n_in; i++) in[i] = op->in[i];
  in[idx] = v;
  op->in = in;
  op->n_in = n_in;
  return CT_OK;
}

/* ---- attributes ---- */

static int attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type) return a->type;
  /* IR version 1 attributes have no type: infer it from the field that is set */
  if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* A NUL-terminated arena copy of protobuf bytes. */
static char *bytes_str(ct_graph *g, ProtobufCBinaryData b) {
  char *s = ct_arena_alloc(&g->arena, b.len + 1);
  if (s && b.len) memcpy(s, b.data, b.len);
  return s;
}

static bool copy_list_attr(ct_graph *g, ct_op *op, const Onnx__AttributeProto *a, int ty) {
  if (ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) return ct_op_set_ints(g, op, a->name, (int)a->n_ints, a->ints);
  if (ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) {
    double *f = ct_arena_alloc(&g->arena, sizeof *f * (a->n_floats + 1));
    if (!f) return false;
    for (size_t i = 0; i < a->n_floats; i++) f[i] = a->floats[i];
    return ct_op_set_floats(g, op, a->name, (int)a->n_floats, f);
  }
  const char **s = ct_arena_alloc(&g->arena, sizeof *s * (a->n_strings + 1));
  if (!s) return false;
  for (size_t i = 0; i < a->n_strings; i++)
    if (!(s[i] = bytes_str(g, a->strings[i]))) return false;
  return ct_op_set_strings(g, op, a->name, (int)a->n_strings, s);
}

/* ConstantOfShape's TENSOR attribute `value` → `value` (FLOAT or INT) + `value_dtype`. */
static ct_status constant_of_shape_value(ct_onnx_ctx *c, ct_op *op, const Onnx__AttributeProto *a, ct_diag *d) {
  ct_tensor *t;
  ct_status st = ct_onnx_tensor_of(c, a->t, &t, d);
  if (st) return st;
  if (ct_tensor_numel(t) != 1) {
    ct_tensor_free(t);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op ConstantOfShape): attribute \"value\" must hold one element",
                       c->file, op->loc);
  }
  bool ok = ct_dtype_is_float(t->dtype) ? ct_attr_set_constantofshape_value_float(c->g, op, ct_tensor_get_f64(t, 0))
                                        : ct_attr_set_constantofshape_value_int(c->g, op, ct_tensor_get_i64(t, 0));
  ok = ok && ct_attr_set_constantofshape_value_dtype(c->g, op, ct_dtype_to_onnx(t->dtype));
  ct_tensor_free(t);
  return ok ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
}

static ct_status copy_attr(ct_onnx_ctx *c, ct_op *op, const char *onnx_type, const Onnx__AttributeProto *a,
                           ct_diag *d) {
  ct_graph *g = c->g;
  int ty = attr_type(a);
  bool ok = true;
  if (!a->name || !a->name[0])
    return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op %s): attribute without a name", c->file, op->loc, onnx_type);
  if (ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) ok = ct_op_set_int(g, op, a->name, a->i);
  else if (ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) ok = ct_op_set_float(g, op, a->name, a->f);
  else if (ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) {
    char *s = bytes_str(g, a->s);
    ok = s && ct_op_set_string(g, op, a->name, s);
  } else if (ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS ||
             ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS) {
    ok = copy_list_attr(g, op, a, ty);
  } else if (ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t && op->kind == CT_OP_CONSTANTOFSHAPE &&
             !strcmp(a->name, "value")) {
    return constant_of_shape_value(c, op, a, d);
  } else {
    const char *what = ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS
                           ? "graph" : ty == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR ? "tensor" : "this kind of";
    return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op %s): attribute \"%s\": %s attributes are unsupported",
                       c->file, op->loc, onnx_type, a->name, what);
  }
  return ok ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
}

/* ---- Constant nodes → Weight ---- */

static ct_tensor *tensor_1d(ct_dtype dt, int scalar, size_t n) {
  int64_t dim = (int64_t)n;
  return ct_tensor_new(dt, scalar ? 0 : 1, &dim, NULL);
}

/* The tensor of a Constant node (attributes value, value_float(s), value_int(s)). */
static ct_status constant_tensor(ct_onnx_ctx *c, const Onnx__NodeProto *n, const char *loc, ct_tensor **out,
                                 ct_diag *d) {
  *out = NULL;
  const Onnx__AttributeProto *a = n->n_attribute == 1 ? n->attribute[0] : NULL;
  const char *an = a && a->name ? a->name : "";
  if (!strcmp(an, "value") && a->t) return ct_onnx_tensor_of(c, a->t, out, d);
  if (!strcmp(an, "value_float") || !strcmp(an, "value_floats")) {
    int scalar = an[11] == '\0';
    size_t k = scalar ? 1 : a->n_floats;
    if ((*out = tensor_1d(CT_F32, scalar, k)))
      for (size_t i = 0; i < k; i++) ((float *)(*out)->data)[i] = scalar ? a->f : a->floats[i];
  } else if (!strcmp(an, "value_int") || !strcmp(an, "value_ints")) {
    int scalar = an[9] == '\0';
    size_t k = scalar ? 1 : a->n_ints;
    if ((*out = tensor_1d(CT_I64, scalar, k)))
      for (size_t i = 0; i < k; i++) ((int64_t *)(*out)->data)[i] = scalar ? a->i : a->ints[i];
  } else {
    return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op Constant): %s%s%s is unsupported (need exactly one of value, "
                       "value_float(s), value_int(s))", c->file, loc, a ? "attribute \"" : "no attribute",
                       a ? an : "", a ? "\"" : "");
  }
  return *out ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
}

static ct_status add_constant(ct_onnx_ctx *c, const Onnx__NodeProto *n, const char *loc, ct_diag *d) {
  if (n->n_output != 1 || !n->output[0][0])
    return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op Constant): needs exactly one named output", c->file, loc);
  if (ct_onnx_find(c, n->output[0]))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op Constant): output \"%s\" is already defined", c->file, loc,
                       n->output[0]);
  ct_tensor *t;
  ct_status st = constant_tensor(c, n, loc, &t, d);
  if (st) return st;
  ct_value *v = ct_graph_add_weight(c->g, n->output[0], t);
  if (!v || !ct_tensor_set_name(t, v->name) || !ct_onnx_bind(c, v))
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  return CT_OK;
}

/* ---- nodes ---- */

static ct_status unsupported(ct_onnx_ctx *c, const Onnx__NodeProto *n, const char *loc, ct_diag *d) {
  const char *dom = n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") ? n->domain : NULL;
  int64_t opset = dom ? 0 : c->opset;
  for (size_t i = 0; dom && i < c->model->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = c->model->opset_import[i];
    if (o->domain && !strcmp(o->domain, dom)) opset = o->version;
  }
  return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op %s%s%s, opset %lld): unsupported op", c->file, loc,
                     dom ? dom : "", dom ? "." : "", n->op_type, (long long)opset);
}

/* Resolves input names ("" = absent → NULL) into in[]. */
static ct_status node_inputs(ct_onnx_ctx *c, const Onnx__NodeProto *n, const char *loc, ct_value **in, ct_diag *d) {
  for (size_t i = 0; i < n->n_input; i++) {
    in[i] = NULL;
    if (!n->input[i][0]) continue;
    if (!(in[i] = ct_onnx_find(c, n->input[i])))
      return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op %s): input %zu (\"%s\") is not defined by any node, "
                         "initializer or graph input", c->file, loc, n->op_type, i, n->input[i]);
  }
  return CT_OK;
}

/* Creates output values; "" gives an unnamed value "<node>#out<i>". */
static ct_status node_outputs(ct_onnx_ctx *c, const Onnx__NodeProto *n, const char *loc, ct_value **out, ct_diag *d) {
  for (size_t i = 0; i < n->n_output; i++) {
    char buf[600];
    const char *nm = n->output[i];
    if (!nm[0]) {
      snprintf(buf, sizeof buf, "%s#out%zu", loc, i);
      nm = buf;
    } else if (ct_onnx_find(c, nm)) {
      return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op %s): output %zu (\"%s\") is already defined", c->file,
                         loc, n->op_type, i, nm);
    }
    if (!(out[i] = ct_onnx_new_value(c, nm, CT_F32, -1, NULL))) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  }
  return CT_OK;
}

static ct_status add_node(ct_onnx_ctx *c, const Onnx__NodeProto *n, size_t index, ct_diag *d) {
  char loc[512];
  if (n->name && n->name[0]) snprintf(loc, sizeof loc, "%s", n->name);
  else snprintf(loc, sizeof loc, "%s_%zu", n->op_type ? n->op_type : "node", index);
  if (!n->op_type || !n->op_type[0])
    return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\": empty op type", c->file, loc);
  bool default_domain = !n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx");
  if (default_domain && !strcmp(n->op_type, "Constant")) return add_constant(c, n, loc, d);
  ct_op_kind kind;
  if (!default_domain || !ct_op_lookup(ct_onnx_op_alias(n->op_type), &kind) || kind == CT_OP_INPUT ||
      kind == CT_OP_WEIGHT)
    return unsupported(c, n, loc, d);
  if (n->n_input > 4096 || n->n_output > 4096)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: node \"%s\": too many inputs or outputs", c->file, loc);
  ct_value **io = calloc(n->n_input + n->n_output + 1, sizeof *io);
  if (!io) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  ct_status st = node_inputs(c, n, loc, io, d);
  if (!st) st = node_outputs(c, n, loc, io + n->n_input, d);
  ct_op *op = NULL;
  if (!st && !(op = ct_graph_add_op(c->g, kind, loc, (int)n->n_input, io, (int)n->n_output, io + n->n_input)))
    st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  free(io);
  for (size_t i = 0; !st && i < n->n_attribute; i++) st = copy_attr(c, op, n->op_type, n->attribute[i], d);
  if (!st) st = ct_onnx_normalize(c, n->op_type, op, d);
  const ct_attr *bad;
  const char *why;
  if (!st && !ct_op_check_attrs(op, &bad, &why))
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op %s): attribute \"%s\": unsupported (%s)", c->file, loc,
                     n->op_type, bad->name, why);
  return st;
}

/* ---- graph inputs, initializers, outputs ---- */

static const ct_onnx_shape_override *find_override(const ct_onnx_options *opt, const char *name) {
  for (int i = 0; opt && i < opt->n_overrides; i++)
    if (!strcmp(opt->overrides[i].name, name)) return &opt->overrides[i];
  return NULL;
}

static ct_status input_shape(ct_onnx_ctx *c, const Onnx__ValueInfoProto *vi, const ct_onnx_shape_override *ov,
                             int *ndim, int64_t *dims, ct_diag *d) {
  const Onnx__TensorShapeProto *sp = vi->type->tensor_type->shape;
  if (ov && sp && (int)sp->n_dim != ov->ndim)
    return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: input \"%s\" has rank %zu in %s, %d dims given", vi->name,
                       sp->n_dim, c->file, ov->ndim);
  if (ov) {
    *ndim = ov->ndim;
    memcpy(dims, ov->dims, sizeof *dims * (size_t)ov->ndim);
    return CT_OK;
  }
  if (!sp)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: input \"%s\": the model gives no shape; use --input-shapes %s:DxDx...",
                       c->file, vi->name, vi->name);
  if (sp->n_dim > CT_MAX_DIMS)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: input \"%s\": %zu dims, at most %d", c->file, vi->name, sp->n_dim, CT_MAX_DIMS);
  *ndim = (int)sp->n_dim;
  for (size_t i = 0; i < sp->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *dm = sp->dim[i];
    if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dm->dim_value < 0) {
      const char *sym = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? dm->dim_param : "?";
      return ct_diag_set(d, CT_ERR_INPUT, "%s: input \"%s\": dim %zu (\"%s\") is not fixed; use --input-shapes %s:DxDx...",
                         c->file, vi->name, i, sym, vi->name);
    }
    dims[i] = dm->dim_value;
  }
  return CT_OK;
}

static bool has_name(const ct_tensor *t) { return t && t->name && t->name[0]; }

/* The constant given for the graph input `name`, the pos-th non-initializer input. */
static const ct_tensor *find_const_input(const ct_onnx_options *opt, const char *name, int pos) {
  for (int i = 0; opt && i < opt->n_const_inputs; i++)
    if (has_name(opt->const_inputs[i]) && !strcmp(opt->const_inputs[i]->name, name)) return opt->const_inputs[i];
  if (opt && pos < opt->n_const_inputs && opt->const_inputs[pos] && !has_name(opt->const_inputs[pos]))
    return opt->const_inputs[pos];
  return NULL;
}

/* A graph input given as a constant: checked against the model's type, added as a Weight. */
static ct_status add_const_graph_input(ct_onnx_ctx *c, const Onnx__ValueInfoProto *vi, ct_dtype dt, const ct_tensor *t,
                                       ct_diag *d) {
  const Onnx__TensorShapeProto *sp = vi->type->tensor_type->shape;
  bool same = t->dtype == dt && (!sp || (int)sp->n_dim == t->ndim);
  for (int i = 0; same && sp && i < t->ndim; i++)
    same = sp->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
           sp->dim[i]->dim_value == t->shape[i];
  if (!same)
    return ct_diag_set(d, CT_ERR_USAGE, "%s: constant input \"%s\": a %s tensor of rank %d does not fit the declared %s",
                       c->file, vi->name, ct_dtype_name(t->dtype), t->ndim, ct_dtype_name(dt));
  ct_tensor *copy = ct_tensor_clone(t);
  ct_value *v = copy ? ct_onnx_new_value(c, vi->name, t->dtype, t->ndim, t->shape) : NULL;
  if (!v || !ct_graph_add_op(c->g, CT_OP_WEIGHT, vi->name, 0, NULL, 1, &v)) {
    ct_tensor_free(copy);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  }
  v->data = copy;
  return CT_OK;
}

static ct_status add_input(ct_onnx_ctx *c, const Onnx__ValueInfoProto *vi, int pos, const ct_onnx_options *opt,
                           ct_diag *d) {
  const char *name = vi->name ? vi->name : "";
  if (!name[0]) return ct_diag_set(d, CT_ERR_INPUT, "%s: graph input without a name", c->file);
  if (ct_onnx_find(c, name)) return ct_diag_set(d, CT_ERR_INPUT, "%s: input \"%s\" is defined twice", c->file, name);
  if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: input \"%s\": unsupported: only tensor inputs (no sequences or optionals)",
                       c->file, name);
  ct_dtype dt;
  int et = vi->type->tensor_type->has_elem_type ? vi->type->tensor_type->elem_type : 0;
  if (!ct_dtype_from_onnx(et, &dt))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: input \"%s\": unsupported tensor type %d", c->file, name, et);
  const ct_tensor *k = find_const_input(opt, name, pos);
  if (k) return add_const_graph_input(c, vi, dt, k, d);
  int ndim = 0;
  int64_t dims[CT_MAX_DIMS];
  ct_status st = input_shape(c, vi, find_override(opt, name), &ndim, dims, d);
  if (st) return st;
  ct_value *v = ct_onnx_new_value(c, name, dt, ndim, dims);
  if (!v || !ct_graph_add_op(c->g, CT_OP_INPUT, name, 0, NULL, 1, &v))
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  return CT_OK;
}

static bool is_initializer(const Onnx__GraphProto *gp, const char *name) {
  for (size_t i = 0; i < gp->n_initializer; i++)
    if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, name)) return true;
  return false;
}

static ct_status add_inputs(ct_onnx_ctx *c, const Onnx__GraphProto *gp, const ct_onnx_options *opt, ct_diag *d) {
  for (int i = 0; opt && i < opt->n_overrides; i++) {
    bool found = false;
    for (size_t j = 0; j < gp->n_input && !found; j++)
      found = gp->input[j]->name && !strcmp(gp->input[j]->name, opt->overrides[i].name);
    if (!found || is_initializer(gp, opt->overrides[i].name))
      return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: %s has no graph input \"%s\"", c->file, opt->overrides[i].name);
  }
  for (int i = 0; opt && i < opt->n_const_inputs; i++) {
    if (!has_name(opt->const_inputs[i])) continue;
    const char *nm = opt->const_inputs[i]->name;
    bool found = false;
    for (size_t j = 0; j < gp->n_input && !found; j++) found = gp->input[j]->name && !strcmp(gp->input[j]->name, nm);
    if (!found) return ct_diag_set(d, CT_ERR_USAGE, "constant input: %s has no graph input \"%s\"", c->file, nm);
  }
  for (size_t i = 0, pos = 0; i < gp->n_input; i++) {
    if (gp->input[i]->name && is_initializer(gp, gp->input[i]->name)) continue; /* IR < 4: initializers listed too */
    ct_status st = add_input(c, gp->input[i], (int)pos++, opt, d);
    if (st) return st;
  }
  return CT_OK;
}

static ct_status add_initializers(ct_onnx_ctx *c, const Onnx__GraphProto *gp, ct_diag *d) {
  if (gp->n_sparse_initializer)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: sparse initializers are unsupported", c->file);
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *tp = gp->initializer[i];
    if (!tp->name || !tp->name[0]) return ct_diag_set(d, CT_ERR_INPUT, "%s: initializer %zu has no name", c->file, i);
    if (ct_onnx_find(c, tp->name))
      return ct_diag_set(d, CT_ERR_INPUT, "%s: initializer \"%s\" is defined twice", c->file, tp->name);
    ct_tensor *t;
    ct_status st = ct_onnx_tensor_of(c, tp, &t, d);
    if (st) return st;
    ct_value *v = ct_graph_add_weight(c->g, tp->name, t);
    if (!v || !ct_onnx_bind(c, v)) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  }
  return CT_OK;
}

static ct_status set_outputs(ct_onnx_ctx *c, const Onnx__GraphProto *gp, ct_diag *d) {
  ct_value **outs = calloc(gp->n_output + 1, sizeof *outs);
  if (!outs) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  ct_status st = CT_OK;
  for (size_t i = 0; i < gp->n_output && !st; i++) {
    const char *nm = gp->output[i]->name ? gp->output[i]->name : "";
    if (!(outs[i] = ct_onnx_find(c, nm)))
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: graph output %zu (\"%s\") is not defined by any node", c->file, i, nm);
  }
  if (!st && !ct_graph_set_outputs(c->g, (int)gp->n_output, outs))
    st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
  free(outs);
  return st;
}

/* ---- preprocessing ---- */

static bool has_preprocess(const ct_onnx_options *o) {
  return o && (o->pixel_format[0] || o->resize_dims[0] || o->keep_aspect_ratio || o->pad_type[0] || o->n_mean || o->n_scale);
}

static ct_status set_preprocess(ct_onnx_ctx *c, const ct_onnx_options *o, ct_diag *d) {
  int want_c = !strcmp(o->pixel_format, "gray") ? 1 : o->pixel_format[0] ? 3 : 0;
  int n_img = 0;
  for (int i = 0; i < c->g->n_ops; i++) {
    ct_op *op = c->g->ops[i];
    const ct_value *v = op->out[0];
    int64_t ch = v->ndim == 4 ? v->shape[1] : 0;
    if (op->kind != CT_OP_INPUT || !ct_dtype_is_float(v->dtype) || !(want_c ? ch == want_c : ch == 1 || ch == 3))
      continue;
    if ((o->n_mean > 1 && o->n_mean != ch) || (o->n_scale > 1 && o->n_scale != ch))
      return ct_diag_set(d, CT_ERR_USAGE, "--mean/--scale: input \"%s\" has %lld channels, %d/%d values given", v->name,
                         (long long)ch, o->n_mean, o->n_scale);
    bool ok = (!o->pixel_format[0] || ct_attr_set_input_pixel_format(c->g, op, o->pixel_format)) &&
              (!o->resize_dims[0] || ct_attr_set_input_resize_dims(c->g, op, 2, o->resize_dims)) &&
              ct_attr_set_input_keep_aspect_ratio(c->g, op, o->keep_aspect_ratio) &&
              (!o->pad_type[0] || (ct_attr_set_input_pad_type(c->g, op, o->pad_type) &&
                                   ct_attr_set_input_pad_value(c->g, op, o->pad_value))) &&
              (!o->n_mean || ct_attr_set_input_mean(c->g, op, o->n_mean, o->mean)) &&
              (!o->n_scale || ct_attr_set_input_scale(c->g, op, o->n_scale, o->scale));
    if (!ok) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file);
    n_img++;
  }
  if (!n_img)
    return ct_diag_set(d, CT_ERR_USAGE, "preprocessing options given but %s has no image input (float NCHW with %s)",
                       c->file, want_c == 1 ? "1 channel" : want_c == 3 ? "3 channels" : "1 or 3 channels");
  return CT_OK;
}

/* ---- the model ---- */

/* Highest default-domain opset accepted (ONNX 1.17 is at 22; room for future ones). */
#define CT_ONNX_MAX_OPSET 1000

static ct_status import_graph(ct_onnx_ctx *c, const Onnx__ModelProto *m, const ct_onnx_options *opt, ct_diag *d) {
  const Onnx__GraphProto *gp = m->graph;
  c->opset = 1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const char *dom = m->opset_import[i]->domain;
    if ((!dom || !dom[0] || !strcmp(dom, "ai.onnx")) && m->opset_import[i]->has_version)
      c->opset = m->opset_import[i]->version;
  }
  if (c->opset < 1 || c->opset > CT_ONNX_MAX_OPSET)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: opset version %lld of the default domain is not an ONNX opset (1..%d)", c->file,
                       (long long)c->opset, CT_ONNX_MAX_OPSET);
  if (gp->n_output == 0) return ct_diag_set(d, CT_ERR_INPUT, "%s: the graph has no outputs", c->file);
  ct_status st = add_inputs(c, gp, opt, d);
  if (!st) st = add_initializers(c, gp, d);
  for (size_t i = 0; !st && i < gp->n_node; i++) st = add_node(c, gp->node[i], i, d);
  if (!st) st = set_outputs(c, gp, d);
  if (!st && has_preprocess(opt)) st = set_preprocess(c, opt, d);
  return st;
}

static char *model_stem(const char *path) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t k = strlen(b);
  if (k > 5 && !strcmp(b + k - 5, ".onnx")) k -= 5;
  char *s = malloc(k + 1);
  if (s) {
    memcpy(s, b, k);
    s[k] = '\0';
  }
  return s;
}

ct_status ct_onnx_tensor_of(ct_onnx_ctx *c, const Onnx__TensorProto *tp, ct_tensor **out, ct_diag *d) {
  if (c->opt && c->opt->on_external_file) {
    char *path = ct_onnx_external_path(tp, c->dir);
    ct_status st = path ? c->opt->on_external_file(c->opt->on_external_user, path, d) : CT_OK;
    free(path);
    if (st) return st;
  }
  return ct_onnx_tensor_from_proto(tp, c->dir, c->file, out, d);
}

ct_status ct_onnx_import(const char *path, const ct_onnx_options *opt, ct_graph **out, ct_diag *d) {
  *out = NULL;
  ProtobufCMessage *msg;
  ct_status st = ct_onnx_read_message(path, &onnx__model_proto__descriptor, "model", &msg, d);
  if (st) return st;
  Onnx__ModelProto *m = (Onnx__ModelProto *)msg;
  if (!m->graph) {
    onnx__model_proto__free_unpacked(m, NULL);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: the model has no graph", path);
  }
  char *dir = ct_onnx_path_dir(path), *stem = model_stem(path);
  ct_onnx_ctx c = {.file = path, .dir = dir, .opt = opt, .model = m};
  c.g = dir && stem ? ct_graph_new(m->graph->name && m->graph->name[0] ? m->graph->name : stem, "top") : NULL;
  st = c.g ? import_graph(&c, m, opt, d) : ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  onnx__model_proto__free_unpacked(m, NULL);
  free(c.slots);
  free(dir);
  free(stem);
  if (st) {
    ct_graph_free(c.g);
    return st;
  }
  *out = c.g;
  return CT_OK;
}
