/* tpu_util.h: helpers of the integer Tpu kernels (ops/tpu_*.c): stored-value access for the
 * 8/16/32-bit integer storage types, a value's zero point, the fused activation of a Tpu op
 * and the requant attributes (docs/tpu.md). Arithmetic itself is quant/'s; which values the
 * lowering quantizes per channel is compiler/lower_policy.h's. */
#ifndef CT_OPS_TPU_UTIL_H
#define CT_OPS_TPU_UTIL_H

#include <stdint.h>

#include "ops/kernel.h"
#include "quant/quant.h"
#include "quant/quant_resize.h"

/* Element i of integer storage t (i8, u8, i16, u16, i32) as int32; other types give 0. */
static inline int32_t ct_tq_get(const ct_tensor *t, int64_t i) {
  switch (t->dtype) {
  case CT_I8: return ((const int8_t *)t->data)[i];
  case CT_U8: return ((const uint8_t *)t->data)[i];
  case CT_I16: return ((const int16_t *)t->data)[i];
  case CT_U16: return ((const uint16_t *)t->data)[i];
  case CT_I32: return ((const int32_t *)t->data)[i];
  default: return 0;
  }
}

/* Stores v (already in range of t's type) into element i of integer storage t. */
static inline void ct_tq_set(ct_tensor *t, int64_t i, int32_t v) {
  switch (t->dtype) {
  case CT_I8: ((int8_t *)t->data)[i] = (int8_t)v; break;
  case CT_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
  case CT_I16: ((int16_t *)t->data)[i] = (int16_t)v; break;
  case CT_U16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
  case CT_I32: ((int32_t *)t->data)[i] = v; break;
  default: break;
  }
}

/* Rows of stored values minus a zero point, one dtype switch per row (the MAC kernels'
 * loads): dst[i] = ct_tq_get(t, off + i) − z for i < n, as int32 (_i32) or wrapped to int16
 * as the int16 columns hold it (_i16: (int16_t)(ct_tq_get(t, off + i) − z)). Other dtypes
 * give 0 − z, as ct_tq_get. */
void ct_tq_get_row_i32(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int32_t *dst);
void ct_tq_get_row_i16(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int16_t *dst);
/* The store of a row: ct_tq_set(t, off + i, src[i]) for i < n (values already in range of
 * t's type), one dtype switch per row. */
void ct_tq_set_row(ct_tensor *t, int64_t off, int64_t n, const int32_t *src);

/* Address of element i of integer storage t (the start of a row the row helpers write). */
static inline void *ct_tq_at(ct_tensor *t, int64_t i) { return (char *)t->data + (size_t)i * ct_dtype_size(t->dtype); }

/* Zero point of value v (per-tensor; 0 without quant params). */
static inline int32_t ct_tq_zp(const ct_value *v) { return v && v->n_scale > 0 ? v->zero_point[0] : 0; }

/* Is requantizing x to y with multiplier m and right shift s (2^-s · m, quant/) the identity:
 * m = 2^s (s ≤ 30) and equal zero points? Then a Concat input only moves (the codegen emits
 * a MOVE, the planner costs one: cg_data.c, lg_eval.c). */
static inline bool ct_tq_rq_identity(const ct_value *x, const ct_value *y, int32_t m, int s) {
  return s >= 0 && s <= 30 && m == (int32_t)(1u << s) && ct_tq_zp(x) == ct_tq_zp(y);
}

/* Does MAC op store its accumulator as it is (an i32 result without requant attributes: a
 * module output kept at accumulator precision, rq_mode none; docs/quant.md)? Read from the
 * op as lowered, so here: the Tpu reference kernel (tpu_mac.c) computes by it, and the back
 * end above plans and emits the same form. */
static inline bool ct_tq_raw_out(const ct_op *op) {
  return op->out[0] && op->out[0]->dtype == CT_I32 && !ct_attr_has_rq_multiplier(op);
}

/* True for the integer storage types the Tpu kernels accept (i8, u8, i16, u16, i32). */
bool ct_tq_is_storage(ct_dtype dt);
/* Fused activation of a Tpu op from its `act` attribute ("none", "relu", "clip"/"relu6" →
 * CLAMP with upper bound qact_hi) into *act, *hi. CT_ERR_INPUT naming op for another act. */
ct_status ct_tq_act(const ct_op *op, ct_quant_act *act, int32_t *hi, ct_diag *d);
/* Reads n multiplier/rshift pairs: the attributes must hold n entries, or 1 (broadcast).
 * CT_ERR_INPUT naming op when absent, of another count, or a shift is outside 0..63. */
ct_status ct_tq_rq(const ct_op *op, int64_t n, int32_t *m, int *s, ct_diag *d);
/* Checks that every present input and output of op has integer storage. */
ct_status ct_tq_need_int(const ct_op *op, ct_tensor *const *in, ct_tensor **out, int n_in, ct_diag *d);

/* The TPU form of a linear Resize (the RESIZE instruction, docs/isa.md): coordinate mode and
 * the f32 scales of H and W (0: the op gave sizes, the scale is out / in). */
typedef struct ct_tpu_lin {
  ct_quant_ctm ctm;
  float scale_h, scale_w;
} ct_tpu_lin;
/* Is op a Resize the TPU computes as linear interpolation of H and W (mode linear, 4-D NCHW
 * with N and C kept, a coordinate mode of ct_quant_ctm)? Fills *p when it is. Here, not in
 * compiler/, because the Tpu reference kernel (ct_tpu_resize) must compute exactly the ops
 * the lowering and the back end treat as RESIZE instructions: all three ask this one test. */
bool ct_tpu_resize_lin(const ct_op *op, ct_tpu_lin *p);
/* Resize of the Tpu dialect: a ct_tpu_resize_lin Resize of i8 / u8 storage (input and output
 * sharing one scale and zero point; else CT_ERR_INPUT) or of f32 (the float path's copies)
 * through quant/quant_resize.h; any other Resize: ct_kern_resize. */
/* Input rows [*lo, *hi) a ct_tpu_resize_lin op reads for its output rows [olo, ohi)
 * (0 <= olo < ohi <= output height): the taps of the first and last row (the source
 * coordinate grows with the output index). */
void ct_tpu_resize_rows(const ct_op *op, const ct_tpu_lin *p, int64_t olo, int64_t ohi, int64_t *lo, int64_t *hi);
ct_status ct_tpu_resize(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d);
ct_status ct_kern_resize(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d);

#endif
