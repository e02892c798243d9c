/* kern_misc_harness.h: one op under test for test_kern_misc / test_kern_tensor: a graph with
 * constant (or plain) inputs, the op, its shape function then its kernel, and checks of the
 * computed outputs against hand-derived values. */
#ifndef CT_KERN_MISC_HARNESS_H
#define CT_KERN_MISC_HARNESS_H

#include "ops/kernel.h"
#include "ops/shape.h"

/* One op under test: a graph with constant inputs, the op, its computed outputs. */
typedef struct tc {
  ct_graph *g;
  ct_op *op;
  ct_tensor *out[4];
  ct_diag d;
} tc;

/* A tensor of dtype dt and shape (nd dims) with values vals (NULL = zeros). */
ct_tensor *mk(ct_dtype dt, int nd, const int64_t *shape, const double *vals);
#define SH(...) (const int64_t[]){__VA_ARGS__}
#define VA(...) (const double[]){__VA_ARGS__}
#define F32(nd, shape, ...) mk(CT_F32, nd, shape, VA(__VA_ARGS__))
#define I64(nd, shape, ...) mk(CT_I64, nd, shape, VA(__VA_ARGS__))

/* Builds op kind with inputs ins (NULL = absent; a plain value of that shape when the bit of
 * nonconst_mask is set, else a constant) and n_out outputs. Takes ownership of ins. */
tc tc_new(ct_op_kind kind, int n_in, ct_tensor **ins, unsigned nonconst_mask, int n_out);
/* Runs the shape function then the kernel; returns the first failing status. */
ct_status tc_run(tc *c);
/* Frees the outputs and the graph. */
void tc_free(tc *c);
/* Asserts t has dtype dt, shape (nd dims) and values want (tolerance 1e-6 relative). */
void expect(const ct_tensor *t, ct_dtype dt, int nd, const int64_t *shape, const double *want);
/* Runs a one-input one-output op and checks the result. */
void run1(ct_op_kind k, ct_tensor *x, ct_dtype dt, int nd, const int64_t *shape, const double *want);

#endif
