/* shape_util.h: helpers of the shape functions of every family (shape_util.c): operand checks
 * with errors naming the node, and output typing. */
#ifndef CT_OPS_SHAPE_UTIL_H
#define CT_OPS_SHAPE_UTIL_H

#include "ops/shape.h"
#include "ops/ops_util.h"

/* Input i of op, checked present (not NULL, i < n_in) with an inferred shape. Errors
 * (CT_ERR_INPUT naming the node): `input i is missing` / `input i has no shape yet`. */
ct_status ct_sm_in(const ct_op *op, int i, ct_value **v, ct_diag *d);

/* Input i's constant data, or NULL when the input is absent (optional). Error when present
 * but not constant: `unsupported: non-constant <what>` naming the node. */
ct_status ct_sm_const(const ct_op *op, int i, const char *what, const ct_tensor **t, ct_diag *d);

/* Input i of op (as ct_sm_in) with a float dtype and rank ndim (any rank when ndim < 0).
 * Errors (CT_ERR_INPUT naming the node): those of ct_sm_in, `unsupported dtype D (input i)`,
 * `input i must have rank N`. */
ct_status ct_sm_float_in(const ct_op *op, int i, int ndim, ct_value **v, ct_diag *d);

/* Input 0 of op (as ct_sm_in) and the required constant integer list at input 1 (`what`:
 * "shape", "axes"...), read into vals (at most max entries, *n gets the count) by ct_ops_ints.
 * Errors (CT_ERR_INPUT naming the node): those of ct_sm_in and ct_sm_const, `input 1 (what)
 * is missing`, and ct_ops_ints's (float/bool dtype, rank > 1, more than max entries). */
ct_status ct_sm_in_ints(const ct_op *op, ct_value **x, const char *what, int max, int64_t *vals, int *n,
                        ct_diag *d);

/* Sets output k's dtype/shape when op has that output (a NULL output is skipped). */
void ct_sm_out(ct_op *op, int k, ct_dtype dt, int ndim, const int64_t *shape);

/* Formats a value's shape for messages into buf (size n). */
const char *ct_sm_shape(const ct_value *v, char *buf, size_t n);

#endif
