/* kern_nn_harness.h: test harness for one Top op: builds a graph with constant inputs, runs
 * the op's shape function, allocates outputs from the inferred values and runs its kernel;
 * plus deterministic random tensors and closeness checks. Used by tests/test_kern_nn*.c. */
#ifndef CT_KERN_NN_HARNESS_H
#define CT_KERN_NN_HARNESS_H

#include <stdint.h>

#include "ir/ir.h"
#include "ops/kernel.h"

#define KNH_MAX_IN 16  /* QLinearConv has 9 inputs */
#define KNH_MAX_OUT 4

typedef struct knh {
  ct_graph *g;
  ct_op *op;
  ct_tensor *out[KNH_MAX_OUT];
  ct_diag d;
  int threads;
  const ct_kernel_post *post; /* passed as ctx->post (NULL by default) */
} knh;

/* New single-op graph; ins[i] NULL = absent optional input; ins are cloned (caller keeps them). */
knh *knh_new(ct_op_kind kind, int n_in, ct_tensor *const *ins, int n_out);
/* Attribute setters (int list takes n int64 values as varargs of type long long). */
void knh_ints(knh *h, const char *name, int n, ...);
void knh_int(knh *h, const char *name, int64_t v);
void knh_float(knh *h, const char *name, double v);
void knh_str(knh *h, const char *name, const char *v);
/* Runs the shape function, allocates outputs and runs the kernel. Returns the status; the
 * message is in h->d.msg. */
ct_status knh_run(knh *h);
/* Runs only the shape function. */
ct_status knh_shape(knh *h);
void knh_free(knh *h);
/* f32 tensor with uniform values in [-1, 1) from a xorshift32 generator seeded by *seed. */
ct_tensor *knh_rand(int ndim, const int64_t *shape, uint32_t *seed);
/* f32 tensor from explicit values (numel of shape entries). */
ct_tensor *knh_vals(int ndim, const int64_t *shape, const float *vals);
/* Asserts (Check) that t has n elements close to want: |a - b| <= atol + rtol |b|. */
void knh_expect_close(const ct_tensor *t, const float *want, int64_t n, double atol, double rtol);
/* Asserts t has exactly this shape. */
void knh_expect_shape(const ct_tensor *t, int ndim, const int64_t *shape);

#endif
