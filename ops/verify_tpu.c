/* verify_tpu.c: the Tpu-dialect op checks of the verifier (ops/verify.h ct_tpu_verify_op):
 * what the Tpu reference kernels (ops/tpu_*.c), the layer-group planner and the codegen
 * assume of an op beyond the shapes its Top shape function checks. */
#include "ops/verify.h"

ct_status ct_tpu_verify_op(const ct_graph *g, const ct_op *op, ct_diag *d) {
  (void)g, (void)op, (void)d;
  return CT_OK;
}
