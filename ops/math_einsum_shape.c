/* math_einsum_shape.c: shape function of Einsum (ONNX Einsum-12): the output shape comes from
 * the equation plan shared with the kernel (ops/math_einsum.h). */
#include "ops/shape_util.h"
#include "ops/math_einsum.h"

/* Einsum: output dims = sizes of the output labels, dtype of input 0 (all inputs alike). */
ct_status ct_shape_einsum(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd[CT_KE_EINSUM_MAX_IN];
  const int64_t *sh[CT_KE_EINSUM_MAX_IN];
  if (op->n_in > CT_KE_EINSUM_MAX_IN) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported: %d operands", op->n_in);
  for (int k = 0; k < op->n_in; k++) {
    ct_value *v;
    ct_status st = ct_sm_in(op, k, &v, d);
    if (st) return st;
    if (v->dtype != op->in[0]->dtype) return ct_km_err(d, CT_ERR_INPUT, op, "operands have different dtypes");
    nd[k] = v->ndim, sh[k] = v->shape;
  }
  const char *eq = ct_attr_has_einsum_equation(op) ? ct_attr_einsum_equation(op) : NULL;
  if (!eq) return ct_km_err(d, CT_ERR_INPUT, op, "attribute equation is missing");
  ct_ke_einsum p;
  ct_status st = ct_ke_einsum_plan(op, eq, op->n_in, nd, sh, &p, d);
  if (st) return st;
  int64_t shape[CT_MAX_DIMS];
  for (int o = 0; o < p.out_nd; o++) shape[o] = p.size[p.out_lab[o]];
  ct_sm_out(op, 0, op->in[0]->dtype, p.out_nd, shape);
  return CT_OK;
}
