/* nn_util.h: helpers of the nn-family kernels (nn_util.c): dtype/shape checks, window geometry
 * read from the canonical attributes the shape functions write, fused activations, a
 * parallel-for over the kernel context's worker pool. */
#ifndef CT_OPS_NN_UTIL_H
#define CT_OPS_NN_UTIL_H

#include <stdbool.h>

#include "ops/nn_shape_util.h"
#include "ops/kernel.h"

/* Window geometry of conv/pool ops, with 1-D and 2-D cases mapped onto 3-D (D, H, W) by
 * giving the missing leading spatial dims size 1, kernel 1, stride 1, no pads. Sizes in
 * elements; pb/pe are the begin/end pads. */
typedef struct ct_nn_geo {
  int nsp;                                  /* spatial dims of the op (1..3) */
  int64_t in[3], out[3], k[3], s[3], dl[3], pb[3], pe[3];
} ct_nn_geo;

/* Fused activation of Conv/Gemm (attribute act): y = leaky ? (x < 0 ? alpha x : x) : x, then
 * clamped to [lo, hi]. relu = [0, inf), relu6 = [0, 6], clip = [act_min, act_max]. */
typedef struct ct_nn_act {
  bool none, leaky;
  float alpha, lo, hi;
} ct_nn_act;

/* Checks that tensor t (input/output `what`) is present and has dtype dt; CT_ERR_INPUT
 * ("unsupported dtype") otherwise. */
ct_status ct_nn_need(const ct_op *op, const ct_tensor *t, ct_dtype dt, const char *what, ct_diag *d);
/* Checks that out has exactly the given shape; CT_ERR_INPUT naming both shapes otherwise. */
ct_status ct_nn_check_shape(const ct_op *op, const ct_tensor *out, int ndim, const int64_t *shape, ct_diag *d);
/* Reads the canonical spatial attributes (kernel_shape, or wk[2..] of a weight when wk is
 * non-NULL and the attribute is absent; strides; dilations; pads) of an op on input x (N, C,
 * spatial...) into g, with g->out from y's shape. CT_ERR_INPUT for more than 3 spatial dims
 * ("unsupported"), an unresolved auto_pad or malformed attributes. */
ct_status ct_nn_geo_read(const ct_op *op, const ct_tensor *x, const ct_tensor *wk, const ct_tensor *y,
                         ct_nn_geo *g, ct_diag *d);
/* Parses attributes act/act_alpha/act_min/act_max; CT_ERR_INPUT for an unknown act. */
ct_status ct_nn_act_parse(const ct_op *op, ct_nn_act *a, ct_diag *d);
/* Applies a to n floats in place (no-op when a->none). */
void ct_nn_act_apply(const ct_nn_act *a, float *x, int64_t n);
/* y[i] = act(y[i] + b) for n floats in place (bias of one output channel, then a). */
void ct_nn_bias_act(const ct_nn_act *a, float b, float *y, int64_t n);
/* Keeps OpenBLAS at one thread (its own threads would fight the pool's; parallel kernels
 * split their GEMMs over ctx->pool instead). */
void ct_nn_blas_threads(const ct_kernel_ctx *ctx);
#define CT_NN_MIN_WORK ((int64_t)1 << 16) /* operations worth handing to another thread */
/* The work of n elements of a memory-bound row loop (a copy, an element-wise add) for
 * ct_nn_parallel: a quarter of an operation each, so that such a loop takes the threads from
 * 2^18 elements on (below, waking a worker costs more than it saves). */
#define CT_NN_STREAM_WORK(n) ((n) / 4)
/* Threads ct_nn_parallel(ctx, n, work, ...) uses: those of ctx->pool (1 without a pool) when
 * n >= 2 and the estimated total `work` (operations) is at least CT_NN_MIN_WORK, else 1.
 * Per-thread scratch indexed by the slot argument needs this many entries. */
int ct_nn_parallel_parts(const ct_kernel_ctx *ctx, int64_t n, int64_t work);
/* Runs fn(arg, lo, hi, slot) over [0, n) on ctx->pool (ct_workpool_for, 4 chunks per
 * thread), or as one call fn(arg, 0, n, 0) when ct_nn_parallel_parts gives 1. fn's results
 * must not depend on how [0, n) is split. */
void ct_nn_parallel(const ct_kernel_ctx *ctx, int64_t n, int64_t work, ct_workpool_fn fn, void *arg);
/* Runs kernel fn on f32 copies of a non-f32 input 0 and converts f32 outputs back to the
 * output dtypes (other outputs, e.g. int64 indices, are passed through). For data-moving ops
 * (max pooling, nearest resize) whose integer results are exact in f32 (|v| < 2^24). */
ct_status ct_nn_via_f32(ct_kernel_fn fn, const ct_op *op, ct_tensor *const *in, ct_tensor **out,
                        const ct_kernel_ctx *ctx, ct_diag *d);

#endif
