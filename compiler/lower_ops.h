/* lower_ops.h: what the INT8 lowerings of the op families share (lower_ops.c, lower_ops_mac.c,
 * lower_ops_elt.c, lower_ops_lut.c). Private to those files. The helpers keep the short names
 * they had as one file's static functions; the macros give the linker their ct_lower_ names
 * (every exported symbol carries the module prefix: tests/check_prefix.sh). */
#ifndef CT_LOWER_OPS_H
#define CT_LOWER_OPS_H

#include "compiler/lower_int.h"

#define oom ct_lower_oom
#define add_const ct_lower_add_const
#define mac_act ct_lower_mac_act
#define mac_int8_ok ct_lower_mac_int8_ok
#define set_rq ct_lower_set_rq
#define channel_scales ct_lower_channel_scales
#define set_out_q ct_lower_set_out_q
#define sole_reader ct_lower_sole_reader
#define elt_operand ct_lower_elt_operand
#define lower_mac ct_lower_mac
#define lower_convt ct_lower_convt
#define lower_matmul ct_lower_matmul
#define lower_eltwise ct_lower_eltwise
#define lower_concat ct_lower_concat
#define lower_avgpool ct_lower_avgpool
#define lower_reducemean ct_lower_reducemean
#define lower_clip ct_lower_clip
#define lower_move ct_lower_move
#define lower_lut ct_lower_lut

/* ---- shared helpers (lower_ops.c, except elt_operand: lower_ops_elt.c) ---- */

/* CT_ERR_LIMIT "lower: out of memory". */
ct_status oom(ct_lower_ctx *c);
/* A new constant "<base>_<suffix>" of dtype dt and shape (ndim, shape), data copied, with n
 * quant scales (0: none); NULL on failure. */
ct_value *add_const(ct_lower_ctx *c, const char *base, const char *suffix, ct_dtype dt, int ndim,
                    const int64_t *shape, const void *data, int n, const double *scale, const int32_t *zp);
/* The integer form of a Conv/Gemm's fused activation (set on op when apply); false when it
 * has none. */
bool mac_act(ct_lower_ctx *c, ct_op *op, ct_quant_param py, bool apply, bool per_channel);
/* Can op (a Conv or Gemm) take the INT8 form? */
bool mac_int8_ok(ct_lower_ctx *c, ct_op *op);
/* Sets op's requant multipliers m and shifts s (n entries); false on out of memory. */
bool set_rq(ct_lower_ctx *c, ct_op *op, int64_t n, const int32_t *m, const int *s);
/* Per-channel output scales of y (oc of them, malloc'd) when y can be a per-channel
 * activation, else NULL; under --asymmetric, *py becomes the symmetric per-tensor cap the
 * channels share (their zero points are 0). */
double *channel_scales(ct_lower_ctx *c, ct_value *y, int64_t oc, ct_quant_param *py);
/* Retypes y as quantized storage: per channel (sy, oc scales) or per tensor (py). */
ct_status set_out_q(ct_lower_ctx *c, ct_value *y, const double *sy, int64_t oc, ct_quant_param py);
/* The op reading v when that is v's only use; else NULL. */
ct_op *sole_reader(const ct_graph *g, const ct_value *v);
/* An elementwise operand as quantized storage (*out) with its parameters (*p). */
ct_status elt_operand(ct_lower_ctx *c, ct_value *v, bool reciprocal, ct_value **out, ct_quant_param *p);

/* ---- the families (*done: op was lowered) ---- */

ct_status lower_mac(ct_lower_ctx *c, ct_op *op, bool *done);         /* Conv, Gemm */
ct_status lower_convt(ct_lower_ctx *c, ct_op *op, bool *done);       /* ConvTranspose */
ct_status lower_matmul(ct_lower_ctx *c, ct_op *op, bool *done);      /* MatMul */
ct_status lower_eltwise(ct_lower_ctx *c, ct_op *op, bool *done);     /* Add Sub Mul Div Max Min */
ct_status lower_concat(ct_lower_ctx *c, ct_op *op, bool *done);      /* Concat */
ct_status lower_avgpool(ct_lower_ctx *c, ct_op *op, bool *done);     /* (Global)AveragePool */
ct_status lower_reducemean(ct_lower_ctx *c, ct_op *op, bool *done);  /* ReduceMean */
ct_status lower_clip(ct_lower_ctx *c, ct_op *op, bool *done);        /* Clip, Relu6 */
ct_status lower_move(ct_lower_ctx *c, ct_op *op, bool *done);        /* data movement */
ct_status lower_lut(ct_lower_ctx *c, ct_op *op, const ct_quant_lut_spec *sp0, bool *done); /* LUT activations */

#endif
