/* shape.h: per-op shape inference for the Top IR. Each op kind may have a shape function
 * (listed in compiler/shape_nn.def and compiler/shape_misc.def) that, given its inputs'
 * dtypes/shapes (and constant data where an input is a constant, e.g. Reshape's shape),
 * sets its outputs' dtypes/shapes and canonicalizes attributes (auto_pad → explicit pads,
 * negative axes → positive, defaults made explicit where kernels rely on them). */
#ifndef CT_SHAPE_H
#define CT_SHAPE_H

#include "compiler/ir.h"

/* Sets op's output types. Errors: CT_ERR_INPUT naming the op's loc and the field when the
 * inputs are inconsistent (e.g. `node "Conv_3": input 1 has 3 channels, expected 4`) or a
 * shape-determining input is not constant. */
typedef ct_status (*ct_shape_fn)(ct_graph *g, ct_op *op, ct_diag *d);

/* The shape function of kind k, or NULL when ctpu has none. */
ct_shape_fn ct_shape_fn_of(ct_op_kind k);

#endif
