/* interp.h: the float Top interpreter (docs/architecture.md §1 "float inference", §7): runs a
 * graph's ops in order with the reference kernels of ops/kernel.h, freeing every
 * intermediate after its last use so big models run in little memory. */
#ifndef CT_INTERP_H
#define CT_INTERP_H

#include "common/h5io.h"
#include "common/status.h"
#include "common/workpool.h"
#include "ir/ir.h"

/* Progress callback: called after op number `done` (1-based, counting live ops) of `total`
 * has run; `op` is that op. */
typedef void (*ct_ref_progress_fn)(void *user, int done, int total, const ct_op *op);

/* Op callback (calibration statistics, tuning): called after every live op has run or bound
 * its outputs (Input and Weight ops too), before any tensor is freed. in[k] / out[k] are the
 * op's operand and result tensors (in[k] NULL for an absent optional operand; weights and
 * folded values are their constant data), valid only during the call and not to be
 * modified. A non-CT_OK return stops the run with that status (the callback sets d). */
typedef ct_status (*ct_ref_op_fn)(void *user, const ct_op *op, const ct_tensor *const *in,
                                  const ct_tensor *const *out, ct_diag *d);

/* Rewrite callback (fake-quantization experiments: calibration's channel scores): called
 * after every live op that ran a kernel (not Input, Weight or constant-folded ops), before
 * on_op and before any reader runs. It may overwrite the elements of the op's result
 * tensors out[k] in place (same dtype and shape); later ops then read those values. in[k]
 * as for ct_ref_op_fn. A non-CT_OK return stops the run with that status. */
typedef ct_status (*ct_ref_rewrite_fn)(void *user, const ct_op *op, const ct_tensor *const *in, ct_tensor *const *out,
                                       ct_diag *d);

/* Results of the ops whose operands are all constant (e.g. a DequantizeLinear of weights)
 * kept across runs of one graph (ct_ref_options.consts): the first run computes them, later
 * runs use them as they are, as onnxruntime folds constants when it opens a session; and
 * the kernels' data derived from constant operands (ct_kernel_memo). Bound to
 * the first graph it runs with (another graph clears it); the graph must not change between
 * runs. Not thread-safe: one per thread of runs. */
typedef struct ct_ref_consts ct_ref_consts;
/* An empty cache, or NULL when out of memory. */
ct_ref_consts *ct_ref_consts_new(void);
/* Frees c and its tensors; NULL is fine. */
void ct_ref_consts_free(ct_ref_consts *c);

/* Options of ct_ref_run. Zero-initialize, then set what is needed. */
typedef struct ct_ref_options {
  int threads;                  /* kernel threads: > 1 starts a worker pool (common/workpool.h)
                                 * for the run, shared by the kernels; < 1 means 1 */
  ct_h5_writer *dump;           /* optional: every input and computed value is written here
                                 * under its value name (--dump-all); weights are not */
  ct_ref_progress_fn progress;  /* optional */
  void *progress_user;
  ct_ref_op_fn on_op;           /* optional: see ct_ref_op_fn */
  void *on_op_user;
  ct_ref_rewrite_fn rewrite;    /* optional: see ct_ref_rewrite_fn */
  void *rewrite_user;
  ct_workpool *pool;            /* optional: a caller-owned pool the kernels share instead of a
                                 * pool started for the run (threads is then ignored): callers
                                 * that run many inferences keep one, as onnxruntime keeps its
                                 * thread pool per session; results do not depend on it */
  ct_ref_consts *consts;        /* optional: see ct_ref_consts; unused with rewrite (which may
                                 * change results); results do not depend on it */
} ct_ref_options;

/* Runs g (ops in topological order; every value shape-inferred) on `inputs` and appends the
 * module outputs (g->outputs, in order; each named by its value name, row-major, dtype and
 * shape of the value) to `outputs` (owned by the caller's list).
 * Inputs are matched to the Input ops' values by name; their dtype and shape must equal the
 * value's. Constant values (v->data: weights, folded values) are used directly; an op whose
 * outputs are all constant is not run. Intermediates are freed after their last use.
 * Without dump, on_op and rewrite, a Conv whose result only the next op, an activation
 * (Relu, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, SiLU), reads runs fused with it
 * (ct_kernel_ctx.post): same bits, the Conv result is never allocated.
 * Errors (outputs is left as it was):
 *   CT_ERR_USAGE  input count differs from the graph's Input ops, or an input is missing
 *                 (`no input tensor for input "x"`);
 *   CT_ERR_INPUT  input dtype/shape mismatch naming the input and both shapes; a value
 *                 without inferred shape; a Weight without data; an op with no reference
 *                 kernel (`node "n": op Foo has no reference kernel`); errors of kernels
 *                 (prefixed with nothing: kernels name their node);
 *   CT_ERR_LIMIT  out of memory; errors writing the dump file. */
ct_status ct_ref_run(const ct_graph *g, const ct_ref_options *opt, const ct_tensor_list *inputs,
                     ct_tensor_list *outputs, ct_diag *d);

#endif
