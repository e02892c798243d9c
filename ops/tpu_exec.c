/* tpu_exec.c: how the Tpu reference runs one op (docs/tpu.md): an op touching quantized
 * values (quant params on an operand or result) or a Cast runs its integer kernel (ops.def's
 * tpu column); any other op runs in float — its Top kernel on f32 copies of bf16/f16
 * operands, the results rounded to their storage type (bf16/f16: nearest even); Conv, Gemm
 * and MatMul in the ISA's float MAC order instead (ct_kern_conv_ordered …), so that the
 * cmodel's float CONV / MATMUL equal them bit for bit. A float op that computes stores any NaN
 * as the canonical NaN (quant/float_fn.h ct_quant_nan_canon), as the cmodel's arithmetic
 * instructions do; one that only moves data keeps its bits. Results get their value's quant
 * params. */
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "ops/ops_util.h"
#include "ops/tpu_util.h"
#include "quant/float_fn.h"
#include "quant/quant.h"

enum { MAX_IO = 64 };

static bool low_float(ct_dtype dt) { return dt == CT_BF16 || dt == CT_F16; }

static bool touches_quant(const ct_op *op) {
  for (int i = 0; i < op->n_in; i++)
    if (op->in[i] && op->in[i]->n_scale > 0 && !ct_value_is_const(op->in[i])) return true;
  for (int i = 0; i < op->n_out; i++)
    if (op->out[i] && op->out[i]->n_scale > 0) return true;
  return false;
}

/* Rounds the f32 values of src into dst (bf16 / f16 storage), element by element. */
static void store_rounded(const ct_tensor *src, ct_tensor *dst) {
  int64_t n = ct_tensor_numel(dst);
  const float *f = src->data;
  uint16_t *h = dst->data;
  if (dst->dtype == CT_BF16) ct_f32_to_bf16_row(f, h, n); /* ct_quant_f32_to_bf16's bits, vectorized */
  else
    for (int64_t i = 0; i < n; i++) h[i] = ct_quant_f32_to_f16(f[i]);
}

/* Does op only move (or zero-fill) elements? The back end makes these MOVEs, DMAs and GMEM
 * aliases (a nearest Resize a strided MOVE, a float Concat of mixed types a CAST), which keep
 * a NaN's bits, so the reference keeps them too. */
static bool moves_data(const ct_op *op) {
  switch (op->kind) {
  case CT_OP_IDENTITY: case CT_OP_RESHAPE: case CT_OP_FLATTEN: case CT_OP_SQUEEZE: case CT_OP_UNSQUEEZE:
  case CT_OP_TRANSPOSE: case CT_OP_SLICE: case CT_OP_PAD: case CT_OP_CONCAT: case CT_OP_SPLIT:
  case CT_OP_DEPTHTOSPACE: case CT_OP_SPACETODEPTH: case CT_OP_EXPAND: case CT_OP_TILE: case CT_OP_GATHER:
    return true;
  case CT_OP_RESIZE: return !strcmp(ct_attr_resize_mode(op), "nearest");
  default: return false;
  }
}

/* Makes every NaN of the f32 tensor t the canonical NaN. */
static void canon_nans(ct_tensor *t) {
  float *f = t->data;
  for (int64_t i = 0, n = ct_tensor_numel(t); t->dtype == CT_F32 && i < n; i++)
    if (f[i] != f[i]) f[i] = ct_quant_nan_canon(f[i]);
}

/* The float kernel of a Tpu op: the MACs in the ISA's float order (ct_kern_conv_ordered …),
 * every other op its Top kernel. */
static ct_kernel_fn float_kernel(ct_op_kind k) {
  switch (k) {
  case CT_OP_CONV: return ct_kern_conv_ordered;
  case CT_OP_GEMM: return ct_kern_gemm_ordered;
  case CT_OP_MATMUL: return ct_kern_matmul_ordered;
  case CT_OP_CONVTRANSPOSE: return ct_kern_convtranspose_ordered;
  case CT_OP_RESIZE: return ct_tpu_resize; /* linear: the RESIZE instruction's arithmetic */
  default: return ct_kernel_for(k, CT_DIALECT_TOP);
  }
}

static ct_status run_float(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  ct_kernel_fn fn = float_kernel(op->kind);
  if (!fn) return ct_ops_err(d, CT_ERR_INPUT, op, "has no float kernel");
  if (op->n_in > MAX_IO || op->n_out > MAX_IO) return ct_ops_err(d, CT_ERR_INPUT, op, "too many operands");
  ct_tensor *fin[MAX_IO] = {0}, *fout[MAX_IO] = {0};
  ct_status st = CT_OK;
  for (int i = 0; i < op->n_in; i++) {
    fin[i] = in[i];
    if (in[i] && low_float(in[i]->dtype) && !(fin[i] = ct_tensor_cast(in[i], CT_F32))) st = CT_ERR_LIMIT;
  }
  for (int i = 0; i < op->n_out; i++) {
    fout[i] = out[i];
    if (out[i] && low_float(out[i]->dtype) && !(fout[i] = ct_tensor_new(CT_F32, out[i]->ndim, out[i]->shape, NULL)))
      st = CT_ERR_LIMIT;
  }
  if (st) st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  else st = fn(op, (ct_tensor *const *)fin, fout, ctx, d);
  for (int i = 0; !st && !moves_data(op) && i < op->n_out; i++)
    if (fout[i]) canon_nans(fout[i]);
  for (int i = 0; i < op->n_out; i++)
    if (fout[i] && fout[i] != out[i]) {
      if (!st) store_rounded(fout[i], out[i]);
      ct_tensor_free(fout[i]);
    }
  for (int i = 0; i < op->n_in; i++)
    if (fin[i] != in[i]) ct_tensor_free(fin[i]);
  return st;
}

ct_status ct_tpu_exec(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  ct_status st;
  if (op->kind == CT_OP_CAST || touches_quant(op)) {
    ct_kernel_fn fn = ct_kernel_for(op->kind, CT_DIALECT_TPU);
    if (!fn) return ct_ops_err(d, CT_ERR_INPUT, op, "has no integer kernel");
    st = fn(op, in, out, ctx, d);
  } else {
    st = run_float(op, in, out, ctx, d);
  }
  for (int i = 0; !st && i < op->n_out; i++) {
    const ct_value *v = op->out[i];
    if (out[i] && v && !ct_tensor_set_quant(out[i], v->n_scale, v->quant_axis, v->scale, v->zero_point))
      st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  }
  return st;
}
