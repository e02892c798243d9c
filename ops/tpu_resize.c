/* tpu_resize.c: Resize on the Tpu dialect. A linear Resize of H and W of an NCHW tensor
 * (ct_tpu_resize_lin) is what the RESIZE instruction computes: two taps per axis from the
 * ONNX coordinate formula, integer storage in Q0.11 fixed point or float in double, both
 * through quant/quant_resize.h; every other Resize runs ops/tensor_resize.c's kernel. */
#include <stdlib.h>
#include <string.h>

#include "ops/ops_util.h"
#include "ops/tpu_util.h"

/* Scale along axis a: the constant scales input as f32, or 0 (sizes given: out / in). */
static float scale_of(const ct_op *op, int a) {
  const ct_value *s = op->n_in > 2 ? op->in[2] : NULL;
  if (!s || !s->data || ct_tensor_numel(s->data) != 4) return 0.0f;
  return (float)ct_tensor_get_f64(s->data, a);
}

bool ct_tpu_resize_lin(const ct_op *op, ct_tpu_lin *p) {
  const ct_value *x = op->n_in > 0 ? op->in[0] : NULL, *y = op->n_out > 0 ? op->out[0] : NULL;
  if (op->kind != CT_OP_RESIZE || !x || !y || x->ndim != 4 || y->ndim != 4) return false;
  if (strcmp(ct_attr_resize_mode(op), "linear")) return false;
  int ctm = ct_quant_ctm_parse(ct_attr_resize_coordinate_transformation_mode(op));
  if (ctm < 0 || x->shape[0] != y->shape[0] || x->shape[1] != y->shape[1]) return false;
  for (int a = 0; a < 4; a++)
    if (x->shape[a] < 1 || y->shape[a] < 1) return false;
  p->ctm = (ct_quant_ctm)ctm;
  p->scale_h = scale_of(op, 2), p->scale_w = scale_of(op, 3);
  return !(p->scale_h < 0) && !(p->scale_w < 0);
}

void ct_tpu_resize_rows(const ct_op *op, const ct_tpu_lin *p, int64_t olo, int64_t ohi, int64_t *lo, int64_t *hi) {
  int64_t ih = op->in[0]->shape[2], oh = op->out[0]->shape[2];
  ct_quant_lin_tap a, b;
  ct_quant_resize_tap(p->ctm, ih, oh, p->scale_h, olo, &a);
  ct_quant_resize_tap(p->ctm, ih, oh, p->scale_h, ohi - 1, &b);
  *lo = a.i0, *hi = b.i1 + 1;
}

/* One [H, W] → [OH, OW] plane pair (integer when zp_ok, else f32), taps th / tw. */
static void plane(const ct_tensor *x, ct_tensor *y, int64_t pl, const ct_quant_lin_tap *th, const ct_quant_lin_tap *tw,
                  int32_t zp) {
  int64_t ih = x->shape[2], iw = x->shape[3], oh = y->shape[2], ow = y->shape[3], xb = pl * ih * iw, o = pl * oh * ow;
  bool fl = x->dtype == CT_F32;
  for (int64_t r = 0; r < oh; r++)
    for (int64_t q = 0; q < ow; q++, o++) {
      const ct_quant_lin_tap *h = &th[r], *w = &tw[q];
      int64_t k[4] = {xb + h->i0 * iw + w->i0, xb + h->i0 * iw + w->i1, xb + h->i1 * iw + w->i0, xb + h->i1 * iw + w->i1};
      if (fl) {
        const float *xf = x->data;
        float v[4] = {xf[k[0]], xf[k[1]], xf[k[2]], xf[k[3]]};
        ((float *)y->data)[o] = ct_quant_resize_lin_f(v, h, w);
      } else {
        int64_t v[4] = {ct_tq_get(x, k[0]), ct_tq_get(x, k[1]), ct_tq_get(x, k[2]), ct_tq_get(x, k[3])};
        ct_tq_set(y, o, (int32_t)ct_quant_resize_lin_q(v, h, w, zp, y->dtype));
      }
    }
}

ct_status ct_tpu_resize(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  ct_tpu_lin p;
  if (!ct_tpu_resize_lin(op, &p)) return ct_kern_resize(op, in, out, ctx, d);
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  bool fl = x->dtype == CT_F32 && y->dtype == CT_F32;
  bool q8 = (x->dtype == CT_I8 || x->dtype == CT_U8) && y->dtype == x->dtype;
  if (!fl && !q8) return ct_ops_err(d, CT_ERR_INPUT, op, "linear Resize of %s to %s", ct_dtype_name(x->dtype), ct_dtype_name(y->dtype));
  const ct_value *xv = op->in[0], *yv = op->out[0];
  if (q8 && (xv->n_scale != 1 || yv->n_scale != 1 || xv->scale[0] != yv->scale[0] || ct_tq_zp(xv) != ct_tq_zp(yv)))
    return ct_ops_err(d, CT_ERR_INPUT, op, "integer linear Resize needs one scale and zero point shared by input and output");
  int64_t ih = x->shape[2], iw = x->shape[3], oh = y->shape[2], ow = y->shape[3];
  ct_quant_lin_tap *t = malloc(sizeof *t * (size_t)(oh + ow));
  if (!t) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  for (int64_t r = 0; r < oh; r++) ct_quant_resize_tap(p.ctm, ih, oh, p.scale_h, r, &t[r]);
  for (int64_t q = 0; q < ow; q++) ct_quant_resize_tap(p.ctm, iw, ow, p.scale_w, q, &t[oh + q]);
  for (int64_t pl = 0; pl < x->shape[0] * x->shape[1]; pl++) plane(x, y, pl, t, t + oh, ct_tq_zp(xv));
  free(t);
  return CT_OK;
}
