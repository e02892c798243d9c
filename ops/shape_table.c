/* shape_table.c: op kind → shape function, built from shape_nn.def, shape_misc.def and shape_ext.def. */
#include "ops/shape.h"

#define S(E, fn) ct_status fn(ct_graph *g, ct_op *op, ct_diag *d);
#include "ops/shape_nn.def"
#include "ops/shape_misc.def"
#include "ops/shape_ext.def"
#undef S

static const ct_shape_fn shape_table[CT_OP_COUNT] = {
#define S(E, fn) [CT_OP_##E] = fn,
#include "ops/shape_nn.def"
#include "ops/shape_misc.def"
#include "ops/shape_ext.def"
#undef S
};

ct_shape_fn ct_shape_fn_of(ct_op_kind k) { return k < CT_OP_COUNT ? shape_table[k] : NULL; }
