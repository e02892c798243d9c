/* quant_tensor.c: whole-tensor float views of stored tensors (quant.h): dequantization by a
 * tensor's scale / zero point attributes (per tensor or per channel), bf16/f16 widening. */
#include "quant/quant.h"

ct_tensor *ct_quant_dequant_tensor(const ct_tensor *t) {
  ct_tensor *f = t ? ct_tensor_new(CT_F32, t->ndim, t->shape, t->name) : NULL;
  if (!f) return NULL;
  int64_t n = ct_tensor_numel(t), inner = 1;
  bool q = t->n_scale > 0 && !ct_dtype_is_float(t->dtype);
  int axis = t->n_scale > 1 ? t->quant_axis : 0;
  for (int k = axis + 1; q && k < t->ndim; k++) inner *= t->shape[k];
  float *y = f->data;
  for (int64_t i = 0; i < n; i++) {
    double v = ct_tensor_get_f64(t, i);
    if (q) {
      int64_t ch = t->n_scale > 1 ? (i / inner) % t->n_scale : 0;
      v = ct_quant_dequantize((int32_t)v, t->scale[ch], t->zero_point[ch]);
    }
    y[i] = (float)v;
  }
  return f;
}
