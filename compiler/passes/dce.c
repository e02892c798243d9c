/* dce.c: dead code elimination — one reverse sweep over the topologically ordered ops marks
 * values needed by module outputs; ops producing nothing needed are erased (Input ops stay:
 * they are the module's interface). Classic mark-and-sweep liveness (Cooper & Torczon §10.2). */
#include <stdlib.h>

#include "compiler/pass.h"

/* Pass "dce": erases every op (other than top.Input) none of whose results reaches a module
 * output. Errors: CT_ERR_LIMIT when out of memory. Exact (no arithmetic changes). */
ct_status ct_pass_dce(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  char *needed = calloc((size_t)g->n_values + 1, 1);
  if (!needed) return ct_diag_set(d, CT_ERR_LIMIT, "dce: out of memory");
  for (int i = 0; i < g->n_values; i++) g->values[i]->id = i;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i]) needed[g->outputs[i]->id] = 1;
  int n = 0;
  for (int i = g->n_ops - 1; i >= 0; i--) {
    ct_op *op = g->ops[i];
    if (op->dead) continue;
    bool live = op->kind == CT_OP_INPUT;
    for (int j = 0; j < op->n_out && !live; j++) live = op->out[j] && needed[op->out[j]->id];
    if (!live) {
      ct_graph_erase_op(g, op);
      n++;
      continue;
    }
    for (int j = 0; j < op->n_in; j++)
      if (op->in[j]) needed[op->in[j]->id] = 1;
  }
  free(needed);
  if (n) ct_graph_compact(g);
  *n_changed += n;
  return CT_OK;
}
