/* onnx_opset.c: opset normalization — rewrites older ONNX operator forms into the latest
 * form that ir/ops.def keeps (attributes that became inputs, renamed ops, changed
 * defaults). Each rule cites the opset where the form changed (onnx/docs/Changelog.md). */
#include <stdio.h>
#include <string.h>

#include "onnx/onnx_internal.h"

typedef struct rule rule;
typedef ct_status (*rule_fn)(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d);

/* Applies fn to nodes of type `op` ("*" = any) whose model opset is below `below`. */
struct rule {
  const char *op;
  int64_t below;
  rule_fn fn;
  const char *attr; /* the attribute the rule moves or drops */
  int idx;          /* the input it becomes */
};

static ct_status oom(ct_onnx_ctx *c, ct_diag *d) { return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", c->file); }

static ct_status reject(ct_onnx_ctx *c, const ct_op *op, const char *why, ct_diag *d) {
  return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\" (op %s, opset %lld): %s", c->file, op->loc, ct_op_name(op->kind),
                     (long long)c->opset, why);
}

/* The tensor of an attribute: INTS → i64 [n], INT → i64 [1] (TopK's k), FLOAT → f32
 * scalar (Clip's min/max, Dropout's ratio), FLOATS → f32 [n]. NULL out of memory. */
static ct_tensor *attr_tensor(const ct_attr *a) {
  int64_t n = a->kind == CT_ATTR_INTS || a->kind == CT_ATTR_FLOATS ? a->n : 1;
  bool is_float = a->kind == CT_ATTR_FLOAT || a->kind == CT_ATTR_FLOATS;
  ct_tensor *t = ct_tensor_new(is_float ? CT_F32 : CT_I64, a->kind == CT_ATTR_FLOAT ? 0 : 1, &n, NULL);
  for (int64_t i = 0; t && i < n; i++) {
    if (a->kind == CT_ATTR_INTS) ((int64_t *)t->data)[i] = a->ints[i];
    else if (a->kind == CT_ATTR_INT) ((int64_t *)t->data)[i] = a->i;
    else ((float *)t->data)[i] = (float)(a->kind == CT_ATTR_FLOATS ? a->floats[i] : a->f);
  }
  return t;
}

/* Attribute r->attr → constant input r->idx (absent attribute: input stays absent). */
static ct_status attr_input(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  const ct_attr *a = ct_op_attr(op, r->attr);
  if (!a) return CT_OK;
  if (a->kind == CT_ATTR_STRING || a->kind == CT_ATTR_STRINGS) {
    char why[160];
    snprintf(why, sizeof why, "attribute \"%s\" has the wrong kind", r->attr);
    return reject(c, op, why, d);
  }
  if (r->idx < op->n_in && op->in[r->idx]) {
    char why[160];
    snprintf(why, sizeof why, "attribute \"%s\" and input %d are both given", r->attr, r->idx);
    return reject(c, op, why, d);
  }
  ct_tensor *t = attr_tensor(a);
  if (!t) return oom(c, d);
  ct_status st = ct_onnx_add_const_input(c, op, r->idx, r->attr, t, d);
  if (!st) ct_op_del_attr(op, r->attr);
  return st;
}

static ct_status drop_attr(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)c;
  (void)d;
  ct_op_del_attr(op, r->attr);
  return CT_OK;
}

/* Pad-1 named the attribute "paddings"; Pad < 11 had pads and value as attributes. The
 * value becomes an f32 scalar input only when non-zero (0 is the default). */
static ct_status pad_legacy(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  const ct_attr *p = ct_op_attr(op, "paddings");
  if (p && !ct_op_attr(op, "pads")) {
    if (!ct_op_set_ints(c->g, op, "pads", p->n, p->ints)) return oom(c, d);
    ct_op_del_attr(op, "paddings");
  }
  rule pr = {r->op, r->below, attr_input, "pads", 1};
  ct_status st = attr_input(c, op, &pr, d);
  if (st) return st;
  if (ct_op_get_float(op, "value", 0.0) != 0.0) {
    rule vr = {r->op, r->below, attr_input, "value", 2};
    return attr_input(c, op, &vr, d);
  }
  ct_op_del_attr(op, "value");
  return CT_OK;
}

/* Softmax/LogSoftmax/Hardmax < 13: input coerced to 2-D at axis (default 1). */
static ct_status coerce_2d(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  if (!ct_attr_set_softmax_coerce_2d(c->g, op, 1) || !ct_attr_set_softmax_axis(c->g, op, ct_attr_has_softmax_axis(op) ? ct_attr_softmax_axis(op) : 1))
    return oom(c, d);
  return CT_OK;
}

/* Upsample-7..9 and Resize-10 → Resize [X, roi = none, scales]: output index i reads input
 * i / scale (asymmetric), nearest rounds down (Upsample-7 spec: floor). */
static ct_status resize_legacy(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  if (op->n_in > 2) return reject(c, op, "expected inputs X, scales", d);
  if (op->n_in == 2) { /* scales input: move to index 2 */
    ct_value **in = ct_arena_alloc(&c->g->arena, sizeof *in * 4);
    if (!in) return oom(c, d);
    in[0] = op->in[0];
    in[2] = op->in[1];
    op->in = in;
    op->n_in = 3;
  } else {
    rule sr = {"", 0, attr_input, "scales", 2};
    ct_status st = attr_input(c, op, &sr, d);
    if (st) return st;
  }
  if (op->n_in < 3 || !op->in[2]) return reject(c, op, "no scales", d);
  const char *mode = ct_attr_resize_mode(op);
  bool nearest = !strcmp(mode, "nearest");
  bool ok = ct_attr_set_resize_mode(c->g, op, nearest ? "nearest" : "linear") &&
            ct_attr_set_resize_coordinate_transformation_mode(c->g, op, "asymmetric") &&
            (!nearest || ct_attr_set_resize_nearest_mode(c->g, op, "floor"));
  if (!ok) return oom(c, d);
  ct_op_del_attr(op, "width_scale"); /* Upsample-1 experimental attributes */
  ct_op_del_attr(op, "height_scale");
  return CT_OK;
}

/* Resize-11/12 require roi and scales inputs and pass empty tensors for "not given"; the
 * latest form leaves them absent. */
static ct_status resize_empty_inputs(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)c;
  (void)r;
  (void)d;
  for (int i = 1; i < op->n_in && i <= 2; i++)
    if (op->in[i] && op->in[i]->data && ct_tensor_numel(op->in[i]->data) == 0) op->in[i] = NULL;
  return CT_OK;
}

/* BatchNormalization < 9 had `spatial` (0 = per-element statistics): only 1 is supported. */
static ct_status bn_legacy(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  if (ct_op_get_int(op, "spatial", 1) != 1) return reject(c, op, "spatial = 0 is unsupported", d);
  ct_op_del_attr(op, "spatial");
  ct_op_del_attr(op, "is_test");
  return CT_OK;
}

/* Makes input idx (rank known) of op a rank-r operand with its dims at `axis` and 1
 * elsewhere: a reshaped copy when constant, else a Reshape op in front of op. */
static ct_status place_at_axis(ct_onnx_ctx *c, ct_op *op, int idx, int r, int axis, ct_diag *d) {
  ct_value *b = op->in[idx];
  int64_t shape[CT_MAX_DIMS];
  for (int i = 0; i < r; i++) shape[i] = i >= axis && i < axis + b->ndim ? b->shape[i - axis] : 1;
  if (b->data) {
    ct_tensor *t = ct_tensor_clone(b->data);
    if (!t) return oom(c, d);
    t->ndim = r;
    memcpy(t->shape, shape, sizeof shape);
    return ct_onnx_add_const_input(c, op, idx, "broadcast", t, d);
  }
  int64_t rr = r;
  ct_tensor *st = ct_tensor_new(CT_I64, 1, &rr, NULL);
  if (!st) return oom(c, d);
  memcpy(st->data, shape, sizeof *shape * (size_t)r);
  char name[600];
  snprintf(name, sizeof name, "%s/broadcast", op->loc);
  ct_value *sv = ct_onnx_add_weight_before(c, op, name, st);
  ct_value *y = sv ? ct_onnx_new_value(c, name, b->dtype, r, shape) : NULL;
  ct_value *rin[2] = {b, sv};
  if (!y || !ct_graph_add_op(c->g, CT_OP_RESHAPE, name, 2, rin, 1, &y)) return oom(c, d);
  ct_onnx_move_last_before(c, op);
  op->in[idx] = y;
  return CT_OK;
}

/* Binary ops < 7 had legacy broadcasting: with broadcast = 1, B's dims match A's from
 * `axis` on (default: the trailing dims, which numpy broadcasting also does). With an axis
 * that is not the trailing position, B is reshaped — possible when both ranks are known at
 * import (graph inputs, initializers). */
static ct_status legacy_broadcast(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  const ct_attr *ax = ct_op_attr(op, "axis");
  bool bc = ct_op_get_int(op, "broadcast", 0) != 0;
  ct_op_del_attr(op, "broadcast");
  if (!bc || !ax) {
    ct_op_del_attr(op, "axis");
    return CT_OK;
  }
  const ct_value *a = op->n_in == 2 ? op->in[0] : NULL, *b = op->n_in == 2 ? op->in[1] : NULL;
  if (!a || !b || a->ndim < 0 || b->ndim < 0)
    return reject(c, op, "legacy broadcast with an axis needs operands of known rank", d);
  int64_t axis = ax->i < 0 ? ax->i + a->ndim : ax->i;
  if (axis < 0 || axis + b->ndim > a->ndim) return reject(c, op, "legacy broadcast axis out of range", d);
  ct_op_del_attr(op, "axis");
  return axis == a->ndim - b->ndim ? CT_OK : place_at_axis(c, op, 1, a->ndim, (int)axis, d);
}

/* PRelu < 7: a 1-D slope of C > 1 elements is per channel (axis 1); since opset 7 it
 * broadcasts numpy-style from the right. Needs the input's rank at import. */
static ct_status prelu_legacy(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  const ct_value *x = op->n_in == 2 ? op->in[0] : NULL, *s = op->n_in == 2 ? op->in[1] : NULL;
  if (!x || !s || s->ndim != 1 || s->shape[0] == 1 || x->ndim == 2) return CT_OK;
  if (x->ndim < 2) return reject(c, op, "per-channel slope of opset < 7 needs an input of known rank", d);
  return place_at_axis(c, op, 1, x->ndim, 1, d);
}

/* Split < 18 without split sizes: equal parts, one per output (Split-18's num_outputs). */
static ct_status split_outputs(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  if ((op->n_in > 1 && op->in[1]) || ct_attr_raw_split_num_outputs(op)) return CT_OK;
  return ct_attr_set_split_num_outputs(c->g, op, op->n_out) ? CT_OK : oom(c, d);
}

/* Concat < 4: axis defaulted to 1; it is required since. */
static ct_status concat_axis(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  return ct_attr_set_concat_axis(c->g, op, ct_attr_has_concat_axis(op) ? ct_attr_concat_axis(op) : 1) ? CT_OK : oom(c, d);
}

/* Cast < 6: `to` was a string ("FLOAT"); since, the TensorProto.DataType number. */
static ct_status cast_legacy(ct_onnx_ctx *c, ct_op *op, const rule *r, ct_diag *d) {
  (void)r;
  const ct_attr *a = ct_attr_raw_cast_to(op);
  if (!a || a->kind != CT_ATTR_STRING) return CT_OK;
  const ProtobufCEnumValue *ev =
      protobuf_c_enum_descriptor_get_value_by_name(&onnx__tensor_proto__data_type__descriptor, a->s);
  if (!ev) return reject(c, op, "unknown type name in attribute \"to\"", d);
  return ct_attr_set_cast_to(c->g, op, ev->value) ? CT_OK : oom(c, d);
}

#define RED(name) {name, 18, attr_input, "axes", 1}
#define BIN(name) {name, 7, legacy_broadcast, NULL, 0}
static const rule rules[] = {
    {"*", 7, drop_attr, "consumed_inputs", 0}, /* a memory hint of opsets 1..6 */
    {"Squeeze", 13, attr_input, "axes", 1},
    {"Unsqueeze", 13, attr_input, "axes", 1},
    {"Split", 13, attr_input, "split", 1},
    {"Split", 18, split_outputs, NULL, 0},
    {"ReduceSum", 13, attr_input, "axes", 1},
    RED("ReduceMean"), RED("ReduceMax"), RED("ReduceMin"), RED("ReduceProd"), RED("ReduceL1"), RED("ReduceL2"),
    RED("ReduceLogSum"), RED("ReduceLogSumExp"), RED("ReduceSumSquare"),
    {"Clip", 11, attr_input, "min", 1},
    {"Clip", 11, attr_input, "max", 2},
    {"Pad", 11, pad_legacy, NULL, 0},
    {"Slice", 10, attr_input, "starts", 1},
    {"Slice", 10, attr_input, "ends", 2},
    {"Slice", 10, attr_input, "axes", 3},
    {"Reshape", 5, attr_input, "shape", 1},
    {"Dropout", 7, drop_attr, "is_test", 0},
    {"Dropout", 12, attr_input, "ratio", 1},
    {"TopK", 10, attr_input, "k", 1},
    {"Softmax", 13, coerce_2d, NULL, 0},
    {"LogSoftmax", 13, coerce_2d, NULL, 0},
    {"Hardmax", 13, coerce_2d, NULL, 0},
    {"Upsample", INT64_MAX, resize_legacy, NULL, 0},
    {"Resize", 11, resize_legacy, NULL, 0},
    {"Resize", INT64_MAX, resize_empty_inputs, NULL, 0},
    {"BatchNormalization", 9, bn_legacy, NULL, 0},
    {"Gemm", 7, drop_attr, "broadcast", 0},
    {"PRelu", 7, prelu_legacy, NULL, 0},
    BIN("Add"), BIN("Sub"), BIN("Mul"), BIN("Div"), BIN("Pow"), BIN("And"), BIN("Or"), BIN("Xor"),
    BIN("Equal"), BIN("Greater"), BIN("Less"),
    {"Concat", 4, concat_axis, NULL, 0},
    {"Cast", 6, cast_legacy, NULL, 0},
};
#undef RED
#undef BIN

static const struct {
  const char *onnx, *ir;
} aliases[] = {
    {"Upsample", "Resize"},       /* deprecated in opset 10 */
    {"Scatter", "ScatterElements"}, /* deprecated in opset 11 */
};

const char *ct_onnx_op_alias(const char *onnx_type) {
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(aliases[i].onnx, onnx_type)) return aliases[i].ir;
  return onnx_type;
}

ct_status ct_onnx_normalize(ct_onnx_ctx *c, const char *onnx_type, ct_op *op, ct_diag *d) {
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const rule *r = &rules[i];
    if (c->opset >= r->below || (strcmp(r->op, "*") && strcmp(r->op, onnx_type))) continue;
    ct_status st = r->fn(c, op, r, d);
    if (st) return st;
  }
  return CT_OK;
}
