/* verify.c: the full IR verifier, ir/verify.c's checks with the result types re-inferred by
 * the shape functions of this module (ct_shape_fn_of) and the Tpu-dialect op checks of
 * verify_tpu.c; the verified load every command reading a .top / .tpu file uses. */
#include "ops/verify.h"

#include "ir/text.h"
#include "ir/verify.h"
#include "ops/shape.h"

ct_status ct_ir_verify(ct_graph *g, ct_diag *d) { return ct_ir_verify_with(g, ct_shape_fn_of, ct_tpu_verify_op, d); }

ct_status ct_ir_load_verified(const char *path, ct_graph **out, ct_diag *d) {
  ct_status st = ct_ir_load(path, out, d);
  if (st) return st;
  if ((st = ct_ir_verify(*out, d)) == CT_OK) return CT_OK;
  if (st != CT_ERR_LIMIT) st = d ? (d->code = CT_ERR_INPUT) : CT_ERR_INPUT;
  ct_graph_free(*out);
  *out = NULL;
  return st;
}
