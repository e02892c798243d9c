/* dequant.c: real-valued views of stored tensors (see dequant.h). */
#include "common/dequant.h"

#include <math.h>
#include <string.h>

bool ct_dequant_is_quantized(const ct_tensor *t) {
  return t->n_scale > 0 && !ct_dtype_is_float(t->dtype) && t->dtype != CT_BOOL;
}

static ct_status check_params(const ct_tensor *t, int64_t *inner, ct_diag *d) {
  const char *name = t->name ? t->name : "";
  *inner = 1;
  for (int i = 0; i < t->n_scale; i++)
    if (!isfinite(t->scale[i])) return ct_diag_set(d, CT_ERR_INPUT, "tensor \"%s\": scale %d is not finite", name, i);
  if (t->n_scale == 1) return CT_OK;
  if (t->quant_axis < 0 || t->quant_axis >= t->ndim)
    return ct_diag_set(d, CT_ERR_INPUT, "tensor \"%s\": quant_axis %d outside 0..%d", name, t->quant_axis, t->ndim - 1);
  if (t->shape[t->quant_axis] != t->n_scale)
    return ct_diag_set(d, CT_ERR_INPUT, "tensor \"%s\": %d scales for %lld channels on axis %d", name, t->n_scale,
                       (long long)t->shape[t->quant_axis], t->quant_axis);
  for (int i = t->quant_axis + 1; i < t->ndim; i++) *inner *= t->shape[i];
  return CT_OK;
}

ct_status ct_dequant(const ct_tensor *t, ct_tensor **out, ct_diag *d) {
  *out = NULL;
  bool q = ct_dequant_is_quantized(t);
  int64_t inner = 1;
  ct_status st = q ? check_params(t, &inner, d) : CT_OK;
  if (st) return st;
  ct_tensor *r = ct_tensor_new(CT_F32, t->ndim, t->shape, t->name);
  if (!r) return ct_diag_set(d, CT_ERR_LIMIT, "tensor \"%s\": out of memory", t->name ? t->name : "");
  float *y = r->data;
  int64_t n = ct_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    double v = ct_tensor_get_f64(t, i);
    if (q) {
      int64_t c = t->n_scale == 1 ? 0 : (i / inner) % t->n_scale;
      v = (v - (t->zero_point ? (double)t->zero_point[c] : 0.0)) * t->scale[c];
    }
    y[i] = (float)v;
  }
  memcpy(r->layout, t->layout, sizeof r->layout);
  *out = r;
  return CT_OK;
}
