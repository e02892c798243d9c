/* dequant.h: real-valued views of stored tensors (docs/formats.md §2): quantized integer
 * tensors by their scale / zero_point (per tensor or per channel along quant_axis), f16 /
 * bf16 bit patterns by their dtype — what `ctpu compare` measures across dialects. */
#ifndef CT_DEQUANT_H
#define CT_DEQUANT_H

#include <stdbool.h>

#include "common/status.h"
#include "common/tensor.h"

/* True if t carries quantization parameters (n_scale > 0) on an integer dtype. */
bool ct_dequant_is_quantized(const ct_tensor *t);

/* A new f32 tensor (same shape and name, no quant params) holding the real values of t:
 *  - an integer tensor with n_scale 1: x = (q − zp)·scale (ONNX DequantizeLinear);
 *  - with n_scale C > 1: element i uses channel c = (i / inner) mod shape[axis], inner the
 *    product of the dims after quant_axis (per-channel, e.g. OIHW weights on axis 0);
 *  - any other tensor (float, f16/bf16 bit patterns, integers without params): its values
 *    converted to f32 (ct_tensor_get_f64).
 * Computed in double, rounded once to f32. Errors (CT_ERR_INPUT naming the tensor):
 * quant_axis outside 0..ndim-1 or n_scale ≠ shape[quant_axis] for n_scale > 1, a scale that is
 * not finite; CT_ERR_LIMIT out of memory. */
ct_status ct_dequant(const ct_tensor *t, ct_tensor **out, ct_diag *d);

#endif
