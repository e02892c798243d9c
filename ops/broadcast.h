/* broadcast.h: numpy-style multidirectional broadcasting ("Broadcasting in ONNX",
 * onnx/docs/Broadcasting.md): result shapes, unidirectional checks, and a row iterator that
 * walks an output shape while tracking each input's element offset (stride 0 on broadcast
 * dims). Used by the elementwise kernels, Where, Expand, PRelu and Gemm's C. */
#ifndef CT_BROADCAST_H
#define CT_BROADCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "common/tensor.h"

/* Most inputs one iterator tracks (variadic ops fold pairwise into an accumulator). */
#define CT_BCAST_MAX_IN 4

/* Multidirectional broadcast of shapes a (na dims) and b (nb dims): shapes are aligned on
 * their last dims; each aligned pair must be equal or contain a 1 (a 0-sized dim against 1
 * gives 0). Writes max(na, nb) dims to out (CT_MAX_DIMS entries) and *nout.
 * Returns false when the shapes are incompatible (out is then unspecified). */
bool ct_bcast_shape(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out);

/* Unidirectional broadcast (ONNX: "B broadcastable to A"): true when shape from (nfrom dims)
 * can be broadcast to shape to (nto dims) without changing `to`. */
bool ct_bcast_to(int nfrom, const int64_t *from, int nto, const int64_t *to);

/* Element strides of an input of shape in (nin dims, row-major contiguous) aligned to the
 * nout output dims: stride 0 on dims the input broadcasts (size 1 or missing). Writes nout
 * entries to strides. Requires ct_bcast_to(nin, in, nout, out). */
void ct_bcast_strides(int nin, const int64_t *in, int nout, const int64_t *out, int64_t *strides);

/* Row iterator over an output shape. After ct_bcast_iter_init, each step exposes one row of
 * `inner` output elements (the last dim after merging dims that are contiguous for every
 * input): output elements [row * inner, (row+1) * inner), input k elements
 * off[k] + j * istride[k] for j < inner. Usage:
 *   ct_bcast_iter it; if (ct_bcast_iter_init(&it, ...)) do { ... } while (ct_bcast_iter_next(&it));
 */
typedef struct ct_bcast_iter {
  int ndim;                                  /* after merging, >= 1 */
  int n_in;
  int64_t inner;                             /* elements per row */
  int64_t shape[CT_MAX_DIMS];
  int64_t stride[CT_BCAST_MAX_IN][CT_MAX_DIMS];
  int64_t idx[CT_MAX_DIMS];
  int64_t off[CT_BCAST_MAX_IN];              /* element offset of row start, per input */
  int64_t istride[CT_BCAST_MAX_IN];          /* element stride along the row, per input */
} ct_bcast_iter;

/* Prepares the iterator for output shape out (nout dims, 0 = scalar) and n_in (1 ..
 * CT_BCAST_MAX_IN) inputs of shapes in_shapes[k] (in_ndims[k] dims), each broadcastable to
 * out. Returns false when the output is empty (nothing to iterate) or the arguments are
 * invalid (n_in out of range, an input not broadcastable to out). */
bool ct_bcast_iter_init(ct_bcast_iter *it, int nout, const int64_t *out, int n_in,
                        const int *in_ndims, const int64_t *const *in_shapes);

/* Advances to the next row; false after the last row. */
bool ct_bcast_iter_next(ct_bcast_iter *it);
/* Moves an initialized iterator to row `row` (0 ≤ row < the output's elements / inner), as
 * `row` calls of ct_bcast_iter_next from the start would: threads can each start at their
 * own row. */
void ct_bcast_iter_seek(ct_bcast_iter *it, int64_t row);

#endif
