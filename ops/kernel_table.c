/* kernel_table.c: op kind → reference kernel, built from kern_nn.def, kern_misc.def and kern_ext.def. */
#include "ops/kernel.h"

#define K(E, fn) ct_status fn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, \
                              const ct_kernel_ctx *ctx, ct_diag *d);
#include "ops/kern_nn.def"
#include "ops/kern_misc.def"
#include "ops/kern_ext.def"
#undef K

static const ct_kernel_fn kernel_table[CT_OP_COUNT] = {
#define K(E, fn) [CT_OP_##E] = fn,
#include "ops/kern_nn.def"
#include "ops/kern_misc.def"
#include "ops/kern_ext.def"
#undef K
};

ct_kernel_fn ct_kernel_of(ct_op_kind k) { return k < CT_OP_COUNT ? kernel_table[k] : NULL; }
