/* registry.c: op kind (and dialect) → shape function and kernels, built from the function
 * columns of ir/ops.def. The kernels of the Tpu dialect sit beside the float ones. */
#include "ops/kernel.h"
#include "ops/shape.h"

/* Prototypes of every function the table names (no_shape / no_kernel are never defined). */
#define OP(E, nm, dl, i0, i1, o0, o1, s1, s2, s3, shape, top, tpu, writes)                                  \
  ct_status shape(ct_graph *g, ct_op *op, ct_diag *d);                                             \
  ct_status top(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,  \
                ct_diag *d);                                                                       \
  ct_status tpu(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,  \
                ct_diag *d);
#include "ir/ops.def"

#define no_shape NULL
#define no_kernel NULL
#define FULL true
#define PART false

static const struct {
  ct_shape_fn shape;
  ct_kernel_fn kernel[2]; /* [0] Top (float), [1] Tpu (integer) */
  bool writes_all;        /* the Top kernel writes every output element */
} registry[CT_OP_COUNT] = {
#define OP(E, nm, dl, i0, i1, o0, o1, s1, s2, s3, shape, top, tpu, writes) [CT_OP_##E] = {shape, {top, tpu}, writes},
#include "ir/ops.def"
};

/* Every op's shape function as handed out: the type constraints first, then the op's own. */
static ct_status shape_checked(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st = ct_op_check_types(g, op, d);
  return st != CT_OK ? st : registry[op->kind].shape(g, op, d);
}

ct_shape_fn ct_shape_fn_of(ct_op_kind k) {
  return (unsigned)k < CT_OP_COUNT && registry[k].shape ? shape_checked : NULL;
}

ct_kernel_fn ct_kernel_for(ct_op_kind k, ct_dialect dl) {
  if ((unsigned)k >= CT_OP_COUNT || (dl != CT_DIALECT_TOP && dl != CT_DIALECT_TPU)) return NULL;
  return registry[k].kernel[dl == CT_DIALECT_TPU];
}

ct_kernel_fn ct_kernel_of(ct_op_kind k) { return ct_kernel_for(k, CT_DIALECT_TOP); }

bool ct_kernel_writes_all(ct_op_kind k) { return (unsigned)k < CT_OP_COUNT && registry[k].writes_all; }

bool ct_kernel_takes_post(ct_op_kind k) { return k == CT_OP_CONV; }
