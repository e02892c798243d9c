/* math_einsum.h: the Einsum equation plan (ONNX Einsum-12, numpy einsum conventions) shared
 * by Einsum's shape function and kernel (math_einsum.c), so shape inference and execution
 * agree by construction. */
#ifndef CT_OPS_MATH_EINSUM_H
#define CT_OPS_MATH_EINSUM_H

#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"
#include "ir/ir.h"

#define CT_KE_EINSUM_MAX_IN 8
#define CT_KE_EINSUM_LABELS (52 + CT_MAX_DIMS) /* a-z, A-Z, then the ellipsis dims */

/* An Einsum equation resolved against operand shapes: every operand dim and output dim
 * carries a label id (letters 0..51, ellipsis dim i = 52 + i counted from the left of the
 * broadcast ellipsis); size[label] is the label's extent (ellipsis dims broadcast numpy-style). */
typedef struct ct_ke_einsum {
  int n_in, n_labels_used;
  int64_t size[CT_KE_EINSUM_LABELS];
  int in_nd[CT_KE_EINSUM_MAX_IN], in_lab[CT_KE_EINSUM_MAX_IN][CT_MAX_DIMS];
  int out_nd, out_lab[CT_MAX_DIMS];
  int sum_n, sum_lab[CT_KE_EINSUM_LABELS]; /* labels summed over (in no output dim) */
} ct_ke_einsum;

/* Parses equation eq ("ij,jk->ik", "...ii", spaces ignored; implicit output = ellipsis dims
 * then the letters used once, in ASCII order) for n_in operands of ranks ndims and shapes
 * shapes into p. Errors (CT_ERR_INPUT naming the node): malformed equation, term/rank count
 * mismatch, more than CT_KE_EINSUM_MAX_IN operands, inconsistent label sizes, output label
 * not in any input or repeated, output rank > CT_MAX_DIMS. */
ct_status ct_ke_einsum_plan(const ct_op *op, const char *eq, int n_in, const int *ndims,
                            const int64_t *const *shapes, ct_ke_einsum *p, ct_diag *d);

#endif
