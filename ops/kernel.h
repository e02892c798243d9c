/* kernel.h: the kernels of the ops, keyed by (op, dialect): float Top kernels and integer
 * Tpu kernels (the golden models, docs/architecture.md §7). A kernel reads its op's attributes
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
typedef struct ct_kernel_post ct_kernel_post;
/* A kernel's data derived from its op's constant operands alone (a Tpu Conv's weights
 * converted and bounded, its requant multipliers), kept across runs of one graph by the
 * interpreter (ct_ref_consts), as onnxruntime prepacks weights once per session: data is NULL
 * until the kernel stores it with free_fn, which frees it with the cache. The kernel must
 * compute the same results with it as without it. */
typedef struct ct_kernel_memo {
  void *data;
  void (*free_fn)(void *data);
} ct_kernel_memo;

typedef struct ct_kernel_ctx {
  int threads;
  ct_workpool *pool;
  const ct_kernel_post *post; /* NULL, or an epilogue for the kernels ct_kernel_takes_post
                               * names (the interpreter's run-time fusion of an activation) */
  ct_kernel_memo *memo;       /* NULL, or the op's slot of derived constant data (above) */
} ct_kernel_ctx;

/* The data a kernel keeps in ctx's memo; NULL without a memo or before it keeps any. */
static inline void *ct_kernel_memo_data(const ct_kernel_ctx *ctx) { return ctx->memo ? ctx->memo->data : NULL; }

/* Keeps data (freed by free_fn with the cache) in ctx's memo; false, nothing kept, without a
 * memo (the caller then frees data itself). */
static inline bool ct_kernel_memo_keep(const ct_kernel_ctx *ctx, void *data, void (*free_fn)(void *data)) {
  if (!ctx->memo) return false;
  ctx->memo->data = data, ctx->memo->free_fn = free_fn;
  return true;
}

/* An elementwise f32 epilogue: row(y, n, p) replaces y[i] by f(y[i]) for i < n, in place;
 * alpha and beta are f's attributes. A kernel given one in ctx->post applies it to every
 * element of its (single, f32) output after its own result, fused act included, while the
 * data is still in cache: the output then holds f(op's result), bit for bit what running the
 * activation op on op's result gives. */
struct ct_kernel_post {
  void (*row)(float *y, int64_t n, const ct_kernel_post *p);
  double alpha, beta;
};

/* True when kind k's Top kernel honours ctx->post (Conv); others must get post == NULL. */
bool ct_kernel_takes_post(ct_op_kind k);
/* Fills *post with the f32 row of unary op `op` (Relu, LeakyRelu, HardSigmoid, HardSwish,
 * Sigmoid, SiLU: exactly the f32 results of its Top kernel) and returns true; false (post
 * untouched) for any other op. */
bool ct_kernel_unary_post(const ct_op *op, ct_kernel_post *post);

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

/* Conv, Gemm and MatMul (f32 tensors, the Top kernels' attributes and checks) in the order of
 * the ISA's float CONV / DWCONV / MATMUL (docs/isa.md, cmodel/exec_mxu.c), which the Tpu
 * reference uses for float MACs so that the cmodel equals it bit for bit: every output starts
 * at +0.0 and adds the f32 products in (c, kd, kh, kw) order (Conv, within the output's
 * group) or k order (Gemm, MatMul), each product and sum rounded to f32 (no FMA); then, in
 * f32, Gemm's alpha · acc + beta · C, the bias, the fused act (relu / relu6 / clip; leaky is
 * CT_ERR_INPUT). Same errors as the Top kernels. ctx->post is ignored (must be NULL). */
ct_status ct_kern_conv_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d);
ct_status ct_kern_gemm_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d);
ct_status ct_kern_matmul_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                 ct_diag *d);
/* ConvTranspose the same way: products added in (c, kd, kh, kw) order per output, then bias. */
ct_status ct_kern_convtranspose_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out,
                                        const ct_kernel_ctx *ctx, ct_diag *d);

/* Runs op of a Tpu module (ops/tpu_exec.c, docs/tpu.md): an op with quantized operands or
 * results, or a Cast, runs its integer kernel (ct_kernel_for(kind, CT_DIALECT_TPU)); any other
 * op runs its Top kernel on f32 copies of bf16/f16 operands and rounds the results to their
 * storage type (nearest even). Results get their values' quant params (dumps carry them).
 * Errors: CT_ERR_INPUT naming the node when the needed kernel does not exist, the kernels'
 * own errors; CT_ERR_LIMIT when out of memory. */
ct_status ct_tpu_exec(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d);

#endif
