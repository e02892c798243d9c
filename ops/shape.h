/* shape.h: per-op shape inference. Each op kind may have a shape function (ir/ops.def's shape
 * column, ct_shape_fn_of) that, given its inputs' dtypes/shapes (and constant data where an
 * input is a constant, e.g. Reshape's shape), sets its outputs' dtypes/shapes and
 * canonicalizes attributes (auto_pad → explicit pads, negative axes → positive, defaults made
 * explicit where kernels rely on them). */
#ifndef CT_SHAPE_H
#define CT_SHAPE_H

#include "ir/ir.h"

/* The shape function of kind k, or NULL when ctpu has none. */
ct_shape_fn ct_shape_fn_of(ct_op_kind k);

#endif
