/* lower_policy.h: which values the INT8 lowering may quantize per channel and which Top
 * activations it lowers to a lookup table (docs/quant.md "Per-channel activations"). The
 * lowering (compiler/lower_ops.c) applies these rules; calibration (ptq/calibrate.c), which
 * writes the #channel_threshold rows they consume, and the mixed precision search
 * (ptq/qtable_search.c), which keeps per-channel chains together, ask the same questions
 * here, above which they sit — so the rule exists once and the reference interpreter and
 * the kernels (ops/) need not know it. */
#ifndef CT_LOWER_POLICY_H
#define CT_LOWER_POLICY_H

#include <stdbool.h>

#include "ir/ir.h"
#include "quant/quant.h"

/* Can activation v carry per-channel quant params (scale per channel along axis 1, zero
 * point 0; docs/quant.md "Per-channel activations")? True when v is a 4-D NCHW value, not a
 * module output, computed by a Conv (whose requant is per output channel anyway) or by a LUT
 * activation (ct_lower_lut_spec) of such a value, and every live reader takes v as its input 0
 * and is either a depthwise Conv (group = C_in = C_out: channel c's input scale goes into its
 * own multiplier of channel c), an ordinary Conv (group 1, constant f32 weights, planes
 * H·W ≥ 16: the lowering folds channel c's scale into the weights of input channel c), or a LUT
 * activation (one table per channel; only where a channel has ≥ 256 elements per image, as
 * the LUT reads its whole table). So no instruction ever combines two channels of different
 * scales. The same test in calibration (which tensors get per-channel thresholds), the
 * mixed precision search (which ops go to float together) and lowering (which may use them). */
bool ct_lower_channel_act(const ct_graph *g, const ct_value *v);
/* Does op read v as an ordinary Conv that can fold v's channel scales into its weights: a
 * Conv with group 1 reading v (NCHW, C > 1) as its input 0 only, with constant f32 weights
 * OIHW whose I = C? (The channel-activation test adds the plane size rule; the lowering folds
 * W[o, c]·s_c; calibration scores the migration strength of such tensors.) */
bool ct_lower_folds_channels(const ct_op *op, const ct_value *v);
/* The LUT form of a Top activation op (Sigmoid, Tanh, SiLU, HardSigmoid, HardSwish, Gelu,
 * Exp, Log, Sqrt, Reciprocal, LeakyRelu, Elu, Softplus, Mish, Abs, Relu) with its ONNX
 * attributes into *sp; false (sp untouched) for any other op. */
bool ct_lower_lut_spec(const ct_op *op, ct_quant_lut_spec *sp);

#endif
