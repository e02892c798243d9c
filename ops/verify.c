/* verify.c: the full IR verifier, ir/verify.c's checks with the result types re-inferred by
 * the shape functions of this module (ct_shape_fn_of). */
#include "ops/verify.h"

#include "ir/verify.h"
#include "ops/shape.h"

ct_status ct_ir_verify(ct_graph *g, ct_diag *d) { return ct_ir_verify_with(g, ct_shape_fn_of, d); }
