/* propagate.h: Top IR shape propagation and constant folding after import: every op gets
 * its output dtypes/shapes from its shape function (ops/shape.h), and ops whose inputs
 * are all constant are evaluated with their reference kernel (ops/kernel.h). */
#ifndef CT_PROPAGATE_H
#define CT_PROPAGATE_H

#include "ir/ir.h"

/* Walks g's live ops in order (g must be topologically sorted). For each op other than
 * Input/Weight: checks its arity against ir/ops.def (required inputs non-NULL) and
 * that its inputs have shapes; calls its shape function; then, when every non-NULL input is
 * constant, runs its reference kernel (1 thread) and attaches the results as the output
 * values' `data` (the op stays; canonicalize later turns it into a Weight). Shape and Size
 * fold as soon as their input's shape is known (ONNX Shape-15: dims[start:end], negative
 * start/end count from the back, clamped; Size: element count), which makes
 * Shape→Gather→Concat→Reshape chains static. Ops without a kernel are left unfolded.
 * Errors (messages name the node and op): CT_ERR_INPUT bad arity, missing input shape,
 * `node "X" (op Foo): no shape inference`, and the errors of shape functions and kernels;
 * CT_ERR_LIMIT out of memory. */
ct_status ct_top_propagate(ct_graph *g, ct_diag *d);

#endif
