/* kernel.h: the kernels of the ops, keyed by (op, dialect): float Top kernels (the golden
 * model, ARCHITECTURE.md §7) now, integer Tpu kernels next. A kernel reads its op's attributes
 * and input tensors and fills output tensors that the caller allocated with the shapes/dtypes
 * shape inference gave the op's outputs. */
#ifndef CT_KERNEL_H
#define CT_KERNEL_H

#include <stdbool.h>

#include "common/tensor.h"
#include "ir/ir.h"
#include "common/workpool.h"

/* Execution context of a kernel call. threads: the thread count asked for (1 =
 * single-threaded). pool: NULL, or a worker pool (common/workpool.h, ct_workpool_threads
 * threads, owned by the caller, e.g. the interpreter run) that kernels split their loops over
 * with ct_workpool_for; without one kernels run on the caller's thread. OpenBLAS is kept at
 * one thread: parallel kernels call it from the pool's threads on disjoint slices. */
typedef struct ct_kernel_ctx {
  int threads;
  ct_workpool *pool;
} ct_kernel_ctx;

/* Computes op. in[i] is NULL for an absent optional input (op->n_in entries); out has
 * op->n_out preallocated tensors. Errors: CT_ERR_INPUT naming op->loc for unsupported
 * attribute values or dtypes; CT_ERR_LIMIT when out of memory. */
typedef ct_status (*ct_kernel_fn)(const ct_op *op, ct_tensor *const *in, ct_tensor **out,
                                  const ct_kernel_ctx *ctx, ct_diag *d);

/* The kernel of kind k in dialect dl (Top: float, Tpu: integer), or NULL when ctpu has none. */
ct_kernel_fn ct_kernel_for(ct_op_kind k, ct_dialect dl);
/* The Top (float) kernel of kind k, or NULL: ct_kernel_for(k, CT_DIALECT_TOP). */
ct_kernel_fn ct_kernel_of(ct_op_kind k);
/* True when kind k's Top kernel writes every element of its outputs (ops.def's writes column
 * FULL): callers may pass buffers with stale contents; otherwise outputs must be zeroed. */
bool ct_kernel_writes_all(ct_op_kind k);

/* Runs op of a Tpu module (ops/tpu_exec.c, docs/tpu.md): an op with quantized operands or
 * results, or a Cast, runs its integer kernel (ct_kernel_for(kind, CT_DIALECT_TPU)); any other
 * op runs its Top kernel on f32 copies of bf16/f16 operands and rounds the results to their
 * storage type (nearest even). Results get their values' quant params (dumps carry them).
 * Errors: CT_ERR_INPUT naming the node when the needed kernel does not exist, the kernels'
 * own errors; CT_ERR_LIMIT when out of memory. */
ct_status ct_tpu_exec(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d);

#endif
