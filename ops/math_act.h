/* math_act.h: activation rows on AVX-512 (math_act.c): the formulas of quant/float_fn.h
 * (ct_quant_fn_sigmoid, ct_quant_fn_silu in float, ct_quant_fn_hswish in double) in 16 / 8
 * lanes, the same IEEE operations in the same order, so every result has the bits of the
 * scalar formula. Private to ops/. */
#ifndef CT_OPS_MATH_ACT_H
#define CT_OPS_MATH_ACT_H

#include <stdbool.h>
#include <stdint.h>

/* y[i] = silu ? ct_quant_fn_silu(x[i]) : ct_quant_fn_sigmoid(x[i]) for i < n (y == x allowed,
 * otherwise apart). Returns false, y untouched, when the CPU lacks AVX-512F (callers then
 * run their own loops). */
bool ct_unary_sigm_row(const float *x, float *y, int64_t n, bool silu);
/* y[i] = (float)ct_quant_fn_hswish(x[i]) for i < n (y == x allowed, otherwise apart); false,
 * y untouched, without AVX-512F. */
bool ct_unary_hswish_row(const float *x, float *y, int64_t n);

#endif
