/* propagate.c: shape propagation + constant folding over a freshly imported Top graph (see
 * propagate.h). Shape/Size folding follows the ONNX operator spec (Shape-15, Size-13);
 * everything else defers to the per-op shape functions and reference kernels. */
#include "compiler/propagate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "ops/shape.h"
#include "ops/kernel.h"

/* Prefixes `node "X" (op Foo): ` unless the message already names the node. */
static ct_status name_node(const ct_op *op, ct_diag *d) {
  char quoted[300];
  snprintf(quoted, sizeof quoted, "\"%s\"", op->loc);
  if (d && !strstr(d->msg, quoted)) ct_diag_prefix(d, "node %s (op %s): ", quoted, ct_op_name(op->kind));
  return d ? d->code : CT_ERR_INTERNAL;
}

static ct_status fail(const ct_op *op, ct_diag *d, ct_status code, const char *what, int idx) {
  return ct_diag_set(d, code, "node \"%s\" (op %s): %s %d", op->loc, ct_op_name(op->kind), what, idx);
}

static ct_status check_operands(const ct_op *op, ct_diag *d) {
  int min_in, max_in, min_out, max_out;
  ct_op_arity(op->kind, &min_in, &max_in, &min_out, &max_out);
  if (op->n_in < min_in || (max_in >= 0 && op->n_in > max_in) || op->n_out < min_out || (max_out >= 0 && op->n_out > max_out))
    return ct_diag_set(d, CT_ERR_INPUT, "node \"%s\" (op %s): %d inputs and %d outputs, expected %d..%d inputs and %d..%d outputs",
                       op->loc, ct_op_name(op->kind), op->n_in, op->n_out, min_in, max_in, min_out, max_out);
  for (int i = 0; i < op->n_in; i++) {
    if (!op->in[i]) {
      if (i < min_in) return fail(op, d, CT_ERR_INPUT, "missing required input", i);
      continue;
    }
    if (op->in[i]->ndim < 0) return fail(op, d, CT_ERR_INPUT, "no shape known for input", i);
  }
  for (int i = 0; i < op->n_out; i++)
    if (!op->out[i]) return fail(op, d, CT_ERR_INTERNAL, "missing output value", i);
  return CT_OK;
}

static bool foldable(const ct_op *op) {
  for (int i = 0; i < op->n_out; i++)
    if (op->out[i]->data) return false;
  for (int i = 0; i < op->n_in; i++)
    if (op->in[i] && !op->in[i]->data) return false;
  return true;
}

/* Shape (dims[start:end]) and Size (element count) from the input's shape alone. */
static ct_status fold_shape_op(ct_op *op, ct_diag *d) {
  const ct_value *x = op->in[0];
  ct_value *y = op->out[0];
  int64_t n = x->ndim, start = 0, end = n;
  if (op->kind == CT_OP_SHAPE) {
    start = ct_attr_shape_start(op);
    end = ct_attr_has_shape_end(op) ? ct_attr_shape_end(op) : n;
    start = start < 0 ? start + n : start;
    end = end < 0 ? end + n : end;
    start = start < 0 ? 0 : start > n ? n : start;
    end = end < start ? start : end > n ? n : end;
  }
  int64_t k = op->kind == CT_OP_SHAPE ? end - start : 1;
  if (y->dtype != CT_I64 || ct_value_numel(y) != k)
    return ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\" (op %s): shape function gave an unexpected output type", op->loc,
                       ct_op_name(op->kind));
  ct_tensor *t = ct_tensor_new(CT_I64, y->ndim, y->shape, y->name);
  if (!t) return ct_diag_set(d, CT_ERR_LIMIT, "node \"%s\": out of memory", op->loc);
  int64_t *p = t->data;
  if (op->kind == CT_OP_SHAPE) memcpy(p, x->shape + start, sizeof *p * (size_t)k);
  else p[0] = ct_shape_numel(x->ndim, x->shape);
  y->data = t;
  return CT_OK;
}

static ct_status fold_kernel(const ct_op *op, ct_kernel_fn kern, ct_diag *d) {
  ct_tensor **in = calloc((size_t)(op->n_in + op->n_out + 1), sizeof *in), **out = in + op->n_in;
  if (!in) return ct_diag_set(d, CT_ERR_LIMIT, "node \"%s\": out of memory folding a constant", op->loc);
  for (int i = 0; i < op->n_in; i++) in[i] = op->in[i] ? op->in[i]->data : NULL;
  int made = 0;
  ct_status st = CT_OK;
  for (; made < op->n_out && !st; made++) {
    const ct_value *v = op->out[made];
    if (v->ndim < 0) st = fail(op, d, CT_ERR_INTERNAL, "shape function left no shape for output", made);
    else {
      char what[512];
      snprintf(what, sizeof what, "node \"%.200s\": folding output \"%.200s\" to a constant", op->loc ? op->loc : "",
               v->name ? v->name : "");
      st = ct_tensor_alloc(&out[made], v->dtype, v->ndim, v->shape, v->name, what, d);
    }
    if (st) break;
  }
  const ct_kernel_ctx ctx = {.threads = 1};
  if (!st && (st = kern(op, in, out, &ctx, d)) != CT_OK) name_node(op, d);
  for (int i = 0; i < made; i++) {
    if (st) ct_tensor_free(out[i]);
    else op->out[i]->data = out[i];
  }
  free(in);
  return st;
}

static ct_status propagate_op(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st = check_operands(op, d);
  if (st) return st;
  ct_shape_fn fn = ct_shape_fn_of(op->kind);
  if (!fn) return ct_diag_set(d, CT_ERR_INPUT, "node \"%s\" (op %s): no shape inference", op->loc, ct_op_name(op->kind));
  if ((st = fn(g, op, d)) != CT_OK) return name_node(op, d);
  for (int i = 0; i < op->n_out; i++)
    if (op->out[i]->ndim < 0) return fail(op, d, CT_ERR_INTERNAL, "shape function left no shape for output", i);
  if ((op->kind == CT_OP_SHAPE || op->kind == CT_OP_SIZE) && !op->out[0]->data) return fold_shape_op(op, d);
  ct_kernel_fn kern = ct_kernel_of(op->kind);
  if (kern && foldable(op)) return fold_kernel(op, kern, d);
  return CT_OK;
}

ct_status ct_top_propagate(ct_graph *g, ct_diag *d) {
  for (int i = 0; i < g->n_ops; i++) {
    ct_op *op = g->ops[i];
    if (op->dead || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT) continue;
    ct_status st = propagate_op(g, op, d);
    if (st) return st;
  }
  return CT_OK;
}
