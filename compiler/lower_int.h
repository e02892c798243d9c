/* lower_int.h: state shared by the lowering's files (lower.c: driver, parameters, casts;
 * lower_ops*.c: the INT8 form of each op; lower_mask.c: masks and Casts). Private to
 * compiler/. */
#ifndef CT_LOWER_INT_H
#define CT_LOWER_INT_H

#include "compiler/lower.h"
#include "quant/quant.h"

/* Concat inputs whose scales differ by more than this factor stay float (lower_ops_elt.c). */
#define CT_LOWER_CONCAT_SPREAD 4.0

typedef struct ct_lower_ctx {
  ct_graph *g;
  const ct_lower_options *o;
  ct_diag *d;
  int n0;                       /* values of the Top graph (ids below it have the arrays below) */
  ct_quant_param *forced;       /* QDQ parameters by value id (has_forced) */
  bool *has_forced;
  ct_value **to_int;            /* quantizing cast cache by value id */
  ct_value **to_float[3];       /* float cast caches by value id: bf16, f16, f32 */
  ct_dtype ftype;               /* float type of ops without an integer form */
} ct_lower_ctx;

/* True when v holds quantized integer storage (a lowered activation or weight). */
bool ct_lower_is_q(const ct_value *v);
/* The parameters v has or will have when quantized: its own, the QDQ pair's, or the
 * calibration row's. CT_ERR_INPUT when v has none of them. */
ct_status ct_lower_param_of(ct_lower_ctx *c, const ct_value *v, ct_quant_param *p);

/* ct_lower_param_of as without --asymmetric: the symmetric parameters of v's table row (the
 * per-tensor cap of a per-channel activation, whose channels have zero points 0). Errors as
 * ct_lower_param_of. */
ct_status ct_lower_param_sym(ct_lower_ctx *c, const ct_value *v, ct_quant_param *p);
/* The i16 parameters of v, a Conv result read only by a LUT activation, for the 16-bit LUT
 * (INT8 mode with o->lut16, a calibration row, no QDQ pair, symmetric): the range of its
 * 8-bit parameters (ct_lower_param_of: the threshold, cut to the activation's non-constant
 * interval) at 256× the resolution, scale = range / 32767, zero point 0. False when v does
 * not qualify. */
bool ct_lower_lut16_param(ct_lower_ctx *c, const ct_value *v, ct_quant_param *p);
/* v as quantized storage: v itself, or a (cached) Cast quantizing it. *out NULL on error. */
ct_status ct_lower_ensure_int(ct_lower_ctx *c, ct_value *v, ct_value **out);
/* v as float: v itself when it already is float (any float type), else a (cached)
 * dequantizing Cast to dt (bf16, f16 or f32). */
ct_status ct_lower_ensure_float(ct_lower_ctx *c, ct_value *v, ct_dtype dt, ct_value **out);
/* v as exactly float type dt (bf16, f16 or f32): v itself, or a (cached) Cast — dequantizing
 * from quantized storage, rounding or widening (nearest even) from another float type. */
ct_status ct_lower_as_float(ct_lower_ctx *c, ct_value *v, ct_dtype dt, ct_value **out);
/* Retypes v as quantized storage with per-tensor parameters p. */
ct_status ct_lower_set_q(ct_lower_ctx *c, ct_value *v, ct_quant_param p);
/* Float data of a constant v (f32 data, or a DequantizeLinear of constants): malloc'd array
 * of *n floats, NULL when v is not such a constant. */
float *ct_lower_const_f32(const ct_value *v, int64_t *n);
/* Is y used only as module outputs (no op reads it)? */
bool ct_lower_only_output(const ct_graph *g, const ct_value *y);
/* The mode of op: a quantize-table row naming the op (its loc) or one of its results, else
 * the module's mode. */
ct_qmode ct_lower_op_mode(const ct_lower_ctx *c, const ct_op *op);
/* Is every reader of v a Cast to a float type (and v no module output)? */
bool ct_lower_read_as_float(const ct_graph *g, const ct_value *v);
/* Comparison op (Greater, GreaterOrEqual, Less, LessOrEqual) of an activation with a constant
 * scalar, read only by Casts to float (ct_lower_read_as_float): a Lut from the activation's
 * 8-bit storage to u8 0 / 1 at scale 1 (*done); *done false when op is no such comparison or
 * the activation has no parameters. Errors: out of memory, ct_lower_ensure_int's. */
ct_status ct_lower_compare_int8(ct_lower_ctx *c, ct_op *op, bool *done);
/* Cast op to a float type of quantized per-tensor storage: erased, its readers read the
 * storage (a module output keeps the Cast's name); *done false for other Casts. */
ct_status ct_lower_cast_int8(ct_lower_ctx *c, ct_op *op, bool *done);
/* Tries the INT8 form of op: true with *done when lowered, *done false when op has no
 * integer form here (left to the float path). */
ct_status ct_lower_op_int8(ct_lower_ctx *c, ct_op *op, bool *done);

/* An INT8 Add / Sub stays float when an operand's step exceeds this many steps of the result:
 * the whole result range then lies within one operand step (a cancellation such as
 * x − f32(f16(x)), whose INT8 result would be 0 or ±1 operand step). */
#define CT_LOWER_ELT_CANCEL 127.0

#endif
