/* fold_constants.c: constant folding — ops whose operands are all constant are evaluated
 * with their reference kernels (ops/kernel.h) and become top.Weight values; Shape and
 * Size of statically shaped values fold too, which makes shape subgraphs static
 * (TPU-MLIR's and Grappler's constant folding). */
#include <string.h>

#include "compiler/pass.h"
#include "ops/shape.h"
#include "ops/kernel.h"

/* Shape-15 / Size-13 of a statically shaped operand (start/end clamped as the spec says). */
static ct_tensor *shape_of(const ct_op *op) {
  const ct_value *x = op->in[0];
  if (op->kind == CT_OP_SIZE) {
    ct_tensor *t = ct_tensor_new(CT_I64, 0, NULL, NULL);
    if (t) *(int64_t *)t->data = ct_value_numel(x);
    return t;
  }
  int64_t r = x->ndim, s = ct_attr_shape_start(op), e = ct_attr_has_shape_end(op) ? ct_attr_shape_end(op) : r;
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = s < 0 ? 0 : s > r ? r : s;
  e = e < 0 ? 0 : e > r ? r : e;
  int64_t n = e > s ? e - s : 0;
  ct_tensor *t = ct_tensor_new(CT_I64, 1, &n, NULL);
  for (int64_t i = 0; t && i < n; i++) ((int64_t *)t->data)[i] = x->shape[s + i];
  return t;
}

/* True if every present operand is constant and the required ones (below ops.def's
 * minimum arity) are present. */
static bool all_inputs_const(const ct_op *op) {
  int min_in, max_in, min_out, max_out;
  ct_op_arity(op->kind, &min_in, &max_in, &min_out, &max_out);
  for (int j = 0; j < op->n_in; j++) {
    if (!op->in[j] && j < min_in) return false;
    if (op->in[j] && !ct_value_is_const(op->in[j])) return false;
  }
  return true;
}

/* DequantizeLinear of an integer constant (a QDQ model's int8 weight or int32 bias) stays: the
 * lowering to the Tpu dialect uses the original integers and their scales (docs/tpu.md). */
static bool is_weight_dequant(const ct_op *op) {
  return op->kind == CT_OP_DEQUANTIZELINEAR && op->in[0] && !ct_dtype_is_float(op->in[0]->dtype);
}

/* Evaluates op with its kernel and attaches the results as data. Returns CT_OK with nothing
 * attached when op cannot be folded (no kernel, unknown or too large results). */
static ct_status evaluate(ct_graph *g, ct_op *op, const ct_pass_options *o, ct_diag *d) {
  ct_kernel_fn k = ct_kernel_of(op->kind);
  ct_shape_fn sf = ct_shape_fn_of(op->kind);
  if (!k || op->n_out > 8 || op->n_in > 64) return CT_OK;
  bool known = true;
  for (int j = 0; j < op->n_out; j++) known = known && (!op->out[j] || op->out[j]->ndim >= 0);
  if (!known && sf) {
    ct_status st = sf(g, op, d);
    if (st != CT_OK) return st;
  }
  ct_tensor *in[64] = {0}, *out[8] = {0};
  for (int j = 0; j < op->n_in; j++) in[j] = op->in[j] ? op->in[j]->data : NULL;
  bool ok = true;
  for (int j = 0; j < op->n_out && ok; j++) {
    const ct_value *v = op->out[j];
    ok = v && v->ndim >= 0 && ct_value_numel(v) <= o->fold_max_elems;
    if (ok) ok = (out[j] = ct_tensor_new(v->dtype, v->ndim, v->shape, v->name)) != NULL;
  }
  ct_status st = CT_OK;
  if (ok) {
    ct_kernel_ctx ctx = {.threads = o->threads > 0 ? o->threads : 1};
    st = k(op, in, out, &ctx, d);
    if (st != CT_OK && strstr(d->msg, "unsupported")) st = CT_OK, ok = false;
  }
  for (int j = 0; j < op->n_out; j++) {
    if (ok && st == CT_OK) op->out[j]->data = out[j];
    else ct_tensor_free(out[j]);
  }
  return st;
}

/* Turns op, whose non-NULL results all carry data, into one top.Weight per result. */
static bool to_weights(ct_rw *rw, ct_op *op) {
  for (int j = 0; j < op->n_out; j++)
    if (op->out[j] && (!op->out[j]->data || !ct_tensor_set_name(op->out[j]->data, op->out[j]->name))) return false;
  for (int j = 0; j < op->n_out; j++)
    if (op->out[j] && !ct_rw_add_op(rw, CT_OP_WEIGHT, op->out[j]->name, 0, NULL, 1, &op->out[j])) return false;
  ct_rw_erase(rw, op); /* the results now belong to the weights (add_op set their def) */
  return true;
}

/* Pass "fold-constants": every op other than Input/Weight whose operands are all constant
 * (or Shape/Size of a statically shaped value; or whose results already carry data from
 * ct_top_propagate) is evaluated once with its reference kernel and replaced by top.Weight
 * ops holding the results (same value names). Skips results larger than
 * o->fold_max_elems elements and ops without a kernel. Bit-exact with running the kernel at
 * inference time (the same kernel). Errors: a kernel's or shape function's CT_ERR_INPUT
 * naming the node (except "unsupported" ones, which leave the op), CT_ERR_LIMIT. */
ct_status ct_pass_fold_constants(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  ct_rw rw;
  ct_status st = ct_rw_init(&rw, g, d);
  if (st != CT_OK) return st;
  int n = g->n_ops;
  for (int i = 0; i < n && st == CT_OK; i++) {
    ct_op *op = g->ops[i];
    if (op->dead || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || op->n_out < 1 || !op->out[0]) continue;
    bool have = true;
    for (int j = 0; j < op->n_out; j++) have = have && (!op->out[j] || op->out[j]->data);
    if (!have && (op->kind == CT_OP_SHAPE || op->kind == CT_OP_SIZE) && op->in[0] && op->in[0]->ndim >= 0)
      op->out[0]->data = shape_of(op);
    else if (!have && all_inputs_const(op) && !is_weight_dequant(op))
      st = evaluate(g, op, o, d);
    if (st == CT_OK && op->out[0]->data && to_weights(&rw, op)) (*n_changed)++;
  }
  if (st != CT_OK) {
    ct_rw_free(&rw);
    return st;
  }
  return ct_rw_finish(&rw, d);
}
