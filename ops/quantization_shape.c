/* quantization_shape.c: shape functions of the ONNX QOperator int8 ops (QLinearConv, QLinearMatMul,
 * ConvInteger, MatMulInteger, DynamicQuantizeLinear; ONNX operator spec, latest opset). Conv
 * and MatMul geometry is delegated to ct_shape_conv / ct_shape_matmul on a float view. */
#include <string.h>

#include "ops/shape_util.h"

/* Runs the float op `kind`'s shape function on a view of op whose inputs are a, b (and bias)
 * typed f32; the canonical attributes it writes land on op; output 0 then gets out_dt. */
static ct_status via_float(ct_graph *g, ct_op *op, ct_op_kind kind, const ct_value *a, const ct_value *b,
                           const ct_value *bias, ct_dtype out_dt, ct_diag *d) {
  ct_value fa = *a, fb = *b, fc;
  fa.dtype = fb.dtype = CT_F32;
  ct_value *ins[3] = {&fa, &fb, NULL};
  if (bias) {
    fc = *bias;
    fc.dtype = CT_F32;
    ins[2] = &fc;
  }
  ct_op view = *op;
  view.kind = kind;
  view.in = ins;
  view.n_in = bias ? 3 : 2;
  view.n_out = 1;
  ct_status st = ct_shape_fn_of(kind)(g, &view, d);
  op->attrs = view.attrs, op->n_attr = view.n_attr, op->cap_attr = view.cap_attr;
  if (st) return st;
  ct_value *y = op->out[0];
  ct_value_set_type(y, out_dt, y->ndim, y->shape);
  return CT_OK;
}

/* Checks that quantization parameter input i (scale or zero point), when present, has 1 or
 * n entries (per tensor or per channel/row/column). */
static ct_status qparam(const ct_op *op, int i, int64_t n, const char *what, ct_diag *d) {
  if (i >= op->n_in || !op->in[i]) return CT_OK;
  int64_t k = ct_value_numel(op->in[i]);
  if (op->in[i]->ndim > 1 || (k != 1 && k != n))
    return ct_km_err(d, CT_ERR_INPUT, op, "%s (input %d) must have 1 or %lld entries", what, i, (long long)n);
  return CT_OK;
}

/* Checks input i is an 8-bit integer tensor. */
static ct_status int8_input(const ct_op *op, int i, ct_diag *d) {
  ct_value *v;
  ct_status st = ct_sm_in(op, i, &v, d);
  if (st) return st;
  if (v->dtype != CT_I8 && v->dtype != CT_U8)
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported dtype %s for input %d (int8/uint8 expected)",
                     ct_dtype_name(v->dtype), i);
  return CT_OK;
}

/* QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B int32]; Y like Conv's
 * output, dtype of y_zero_point. w_scale/w_zp per tensor or per output channel. */
ct_status ct_shape_qlinearconv(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  ct_value *y_zp;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 3, d)) || (st = int8_input(op, 7, d))) return st;
  y_zp = op->in[7];
  int64_t oc = op->in[3]->shape[0];
  if ((st = qparam(op, 1, 1, "x_scale", d)) || (st = qparam(op, 2, 1, "x_zero_point", d)) ||
      (st = qparam(op, 4, oc, "w_scale", d)) || (st = qparam(op, 5, oc, "w_zero_point", d)) ||
      (st = qparam(op, 6, 1, "y_scale", d)) || (st = qparam(op, 7, 1, "y_zero_point", d)))
    return st;
  const ct_value *b = op->n_in > 8 ? op->in[8] : NULL;
  if (b && b->dtype != CT_I32) return ct_km_err(d, CT_ERR_INPUT, op, "bias must be int32");
  return via_float(g, op, CT_OP_CONV, op->in[0], op->in[3], b, y_zp->dtype, d);
}

/* ConvInteger: x, w[, x_zp, w_zp]; int32 Y like Conv's output. */
ct_status ct_shape_convinteger(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 1, d))) return st;
  int64_t oc = op->in[1]->shape[0];
  if ((st = qparam(op, 2, 1, "x_zero_point", d)) || (st = qparam(op, 3, oc, "w_zero_point", d))) return st;
  return via_float(g, op, CT_OP_CONV, op->in[0], op->in[1], NULL, CT_I32, d);
}

/* Rows of A (1 for 1-D A) and columns of B (1 for 1-D B) of a MatMul. */
static void mm_rows_cols(const ct_value *a, const ct_value *b, int64_t *m, int64_t *n) {
  *m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
  *n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
}

/* QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp; Y like MatMul's output,
 * dtype of y_zero_point. a params per tensor or per row, b/y params per tensor or per column. */
ct_status ct_shape_qlinearmatmul(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 3, d)) || (st = int8_input(op, 7, d))) return st;
  int64_t m, n;
  mm_rows_cols(op->in[0], op->in[3], &m, &n);
  if ((st = qparam(op, 1, m, "a_scale", d)) || (st = qparam(op, 2, m, "a_zero_point", d)) ||
      (st = qparam(op, 4, n, "b_scale", d)) || (st = qparam(op, 5, n, "b_zero_point", d)) ||
      (st = qparam(op, 6, n, "y_scale", d)) || (st = qparam(op, 7, n, "y_zero_point", d)))
    return st;
  return via_float(g, op, CT_OP_MATMUL, op->in[0], op->in[3], NULL, op->in[7]->dtype, d);
}

/* MatMulInteger: a, b[, a_zp per tensor or row, b_zp per tensor or column]; int32 Y like MatMul's. */
ct_status ct_shape_matmulinteger(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = int8_input(op, 0, d)) || (st = int8_input(op, 1, d))) return st;
  int64_t m, n;
  mm_rows_cols(op->in[0], op->in[1], &m, &n);
  if ((st = qparam(op, 2, m, "a_zero_point", d)) || (st = qparam(op, 3, n, "b_zero_point", d))) return st;
  return via_float(g, op, CT_OP_MATMUL, op->in[0], op->in[1], NULL, CT_I32, d);
}

/* DynamicQuantizeLinear: f32 x → y uint8 (x's shape), y_scale f32 scalar, y_zero_point uint8 scalar. */
ct_status ct_shape_dynquant(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  if (x->dtype != CT_F32) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported dtype %s (float32 expected)", ct_dtype_name(x->dtype));
  ct_sm_out(op, 0, CT_U8, x->ndim, x->shape);
  ct_sm_out(op, 1, CT_F32, 0, NULL);
  ct_sm_out(op, 2, CT_U8, 0, NULL);
  return CT_OK;
}
