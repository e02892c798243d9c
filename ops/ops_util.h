/* ops_util.h: helpers shared by the kernels and shape functions of every family: node-naming
 * errors, axis normalization, reading shape-determining int inputs, typed element access that
 * wraps like C integer conversion, and the parameter resolution of Slice / Pad / reductions
 * (ONNX operator spec, latest opset) so shape inference and execution agree by construction. */
#ifndef CT_OPS_UTIL_H
#define CT_OPS_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"
#include "ir/ir.h"

/* Sets d to `node "<loc>" (op <Name>): <message>` with code; returns code. */
ct_status ct_ops_err(ct_diag *d, ct_status code, const ct_op *op, const char *fmt, ...)
    CT_PRINTF(4, 5);

/* Normalizes an ONNX axis in [-rank, rank-1] to [0, rank-1] into *out. false if outside. */
bool ct_ops_axis(int64_t axis, int rank, int *out);

/* Advances the row-major multi-index idx[ndim] over dims shape[ndim] by one element (last
 * axis fastest). Returns false when it wrapped around to all zeros (it was the last index). */
bool ct_ops_next_index(int64_t *idx, int ndim, const int64_t *shape);

/* Reads the integer tensor t (any integer dtype, 0-D or 1-D) into vals (at most max entries,
 * *n gets the count). Errors (CT_ERR_INPUT naming op and `what`): float/bool dtype, rank > 1,
 * more than max entries. */
ct_status ct_ops_ints(const ct_op *op, const ct_tensor *t, const char *what, int max, int64_t *vals,
                     int *n, ct_diag *d);

/* Element i of t as int64: integer dtypes exactly (u64 reinterpreted), floats truncated. */
int64_t ct_ops_get_i64(const ct_tensor *t, int64_t i);
/* Stores v into element i of t: integer dtypes wrap modulo 2^bits (C conversion of the
 * two's-complement value), bool stores v != 0, float dtypes store (double)v. */
void ct_ops_set_i64(ct_tensor *t, int64_t i, int64_t v);
/* v truncated toward zero to int64, saturating at the int64 limits; NaN gives 0. */
int64_t ct_ops_trunc_i64(double v);
/* True for the integer dtypes (not bool, not float). */
bool ct_ops_is_int(ct_dtype dt);

/* Slice (ONNX Slice-13): from data shape (rank dims) and the starts/ends/axes/steps tensors
 * (axes/steps may be NULL), per-dim first index start[i], step[i] and element count len[i]
 * (all rank entries; untouched dims get 0, 1, shape[i]). Negative starts/ends add the dim,
 * then clamp to [0, dim] (step > 0) or [-1, dim-1] (step < 0); INT64_MAX ends mean "to the
 * end". Errors: step 0, axis out of range or repeated, starts/ends/axes/steps lengths
 * differ, non-integer inputs. */
ct_status ct_ops_slice(const ct_op *op, int rank, const int64_t *shape, const ct_tensor *starts,
                      const ct_tensor *ends, const ct_tensor *axes, const ct_tensor *steps,
                      int64_t *start, int64_t *step, int64_t *len, ct_diag *d);

/* Pad (ONNX Pad-18): pads tensor [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over the axes
 * tensor (NULL = all dims; negative axes allowed) → before[i], after[i] for every dim (may be
 * negative = crop). Errors: wrong pads length, axis out of range, resulting dim < 0. */
ct_status ct_ops_pads(const ct_op *op, int rank, const int64_t *shape, const ct_tensor *pads,
                     const ct_tensor *axes, int64_t *before, int64_t *after, ct_diag *d);

/* Reductions (ONNX Reduce*-18): which dims are reduced. axes = NULL or empty: all dims, or
 * none when attribute noop_with_empty_axes = 1 (then *noop = true). Errors: axis out of
 * range. reduce[] gets rank entries. */
ct_status ct_ops_reduce_axes(const ct_op *op, int rank, const ct_tensor *axes, bool *reduce,
                            bool *noop, ct_diag *d);

/* Copies src into dst broadcasting src to dst's shape (numpy rules; byte copies, so any
 * dtype; dtypes must match). Errors: CT_ERR_INPUT when src does not broadcast to dst or the
 * dtypes differ. */
ct_status ct_ops_bcast_copy(const ct_op *op, const ct_tensor *src, ct_tensor *dst, ct_diag *d);

/* A (value, index) pair and its qsort comparator ordering by descending value, then ascending
 * index (TopK's largest, NonMaxSuppression's candidate order). */
typedef struct ct_ops_vi {
  double v;
  int64_t i;
} ct_ops_vi;
int ct_ops_cmp_large(const void *a, const void *b);

/* Row-major strides (elements) of shape (rank dims) into strides. */
void ct_ops_strides(int rank, const int64_t *shape, int64_t *strides);

#endif
