/* infer_shapes.c: shape inference to a fixed point — calls every op's shape function
 * (ops/shape.h) in topological order, sweeping again while any result type changes
 * (the shape functions themselves come from ONNX's per-operator inference rules). */
#include <string.h>

#include "compiler/pass.h"
#include "ops/shape.h"

typedef struct saved_type {
  ct_dtype dt;
  int ndim;
  int64_t shape[CT_MAX_DIMS];
} saved_type;

static bool inputs_known(const ct_op *op) {
  for (int j = 0; j < op->n_in; j++)
    if (op->in[j] && op->in[j]->ndim < 0) return false;
  return true;
}

/* Re-infers op's result types; *changed counts results whose type differs afterwards. */
static ct_status infer_op(ct_graph *g, ct_op *op, int *changed, ct_diag *d) {
  ct_shape_fn fn = ct_shape_fn_of(op->kind);
  if (!fn || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || !inputs_known(op)) return CT_OK;
  saved_type before[8];
  int n = op->n_out < 8 ? op->n_out : 8;
  for (int k = 0; k < n; k++)
    if (op->out[k]) {
      before[k].dt = op->out[k]->dtype;
      before[k].ndim = op->out[k]->ndim;
      memcpy(before[k].shape, op->out[k]->shape, sizeof before[k].shape);
    }
  ct_status st = fn(g, op, d);
  if (st != CT_OK) { /* keep types that are already known (e.g. a Reshape whose shape is a
                      * not-yet-folded subgraph); fail only where nothing is known */
    bool known = true;
    for (int k = 0; k < n; k++) {
      ct_value *v = op->out[k];
      if (!v) continue;
      ct_value_set_type(v, before[k].dt, before[k].ndim, before[k].shape);
      known = known && v->ndim >= 0;
    }
    if (known) ct_diag_clear(d);
    return known ? CT_OK : st;
  }
  for (int k = 0; k < n; k++) {
    const ct_value *v = op->out[k];
    if (!v) continue;
    if (v->dtype != before[k].dt || v->ndim != before[k].ndim ||
        (v->ndim > 0 && memcmp(v->shape, before[k].shape, sizeof *v->shape * (size_t)v->ndim) != 0))
      (*changed)++;
  }
  return CT_OK;
}

/* Pass "infer-shapes": sets every result type from the op's shape function, repeating
 * sweeps (at most 4) until nothing changes; ops without a shape function keep their types,
 * and so do ops whose shape function fails while their result types are already known (a
 * Reshape whose shape operand is a subgraph fold-constants has not folded yet). Counts
 * results whose type changed. Errors: the shape function's CT_ERR_INPUT naming the node
 * when it fails on an op with unknown result types. Exact (types only). */
ct_status ct_pass_infer_shapes(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  for (int sweep = 0; sweep < 4; sweep++) {
    int changed = 0;
    for (int i = 0; i < g->n_ops; i++) {
      if (g->ops[i]->dead) continue;
      ct_status st = infer_op(g, g->ops[i], &changed, d);
      if (st != CT_OK) return st;
    }
    *n_changed += changed;
    if (!changed) break;
  }
  return CT_OK;
}
