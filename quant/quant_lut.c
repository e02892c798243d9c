/* quant_lut.c: activation functions tabulated into the LUT instruction's 256-entry tables,
 * T[i] = q_out(f(dequant_in(min(in) + i))) (docs/architecture.md §4.1); the functions follow the
 * ONNX operator definitions (Sigmoid, Tanh, HardSigmoid, HardSwish, Gelu, Elu, ...). */
#include <math.h>

#include "quant/quant.h"

static const char *const lut_names[CT_QUANT_LUT_COUNT] = {
    "sigmoid", "tanh",       "silu",      "hardsigmoid", "hardswish", "gelu", "gelu_tanh", "exp",
    "log",     "sqrt",       "reciprocal", "leakyrelu",  "elu",       "softplus", "mish",  "abs",
    "greater", "greater_or_equal", "less", "less_or_equal"};

const char *ct_quant_lut_name(ct_quant_lut_fn fn) {
  return fn >= 0 && fn < CT_QUANT_LUT_COUNT ? lut_names[fn] : NULL;
}

ct_quant_lut_spec ct_quant_lut_default(ct_quant_lut_fn fn) {
  ct_quant_lut_spec s = {fn, 0, 0, 1, 0};
  if (fn == CT_QUANT_LUT_HARDSIGMOID) s.alpha = 0.2, s.beta = 0.5;
  if (fn == CT_QUANT_LUT_LEAKYRELU) s.alpha = 0.01;
  if (fn == CT_QUANT_LUT_ELU) s.alpha = 1.0;
  return s;
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* ln(1 + e^x) without overflow for large x. */
static double softplus(double x) { return x > 30 ? x + log1p(exp(-x)) : log1p(exp(x)); }

static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

static double lut_fn(double x, const ct_quant_lut_spec *s);

double ct_quant_lut_eval(double x, void *spec) {
  const ct_quant_lut_spec *s = spec;
  double y = lut_fn(x, s);
  return s->post_mul == 1 && s->post_add == 0 ? y : y * s->post_mul + s->post_add;
}

/* The tabulated function itself. */
static double lut_fn(double x, const ct_quant_lut_spec *s) {
  switch (s->fn) {
    case CT_QUANT_LUT_SIGMOID: return sigmoid(x);
    case CT_QUANT_LUT_TANH: return tanh(x);
    case CT_QUANT_LUT_SILU: return x * sigmoid(x);
    case CT_QUANT_LUT_HARDSIGMOID: return clamp01(s->alpha * x + s->beta);
    case CT_QUANT_LUT_HARDSWISH: return x * clamp01(x / 6.0 + 0.5);
    case CT_QUANT_LUT_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case CT_QUANT_LUT_GELU_TANH:
      return 0.5 * x * (1.0 + tanh(0.79788456080286535588 /* √(2/π) */ * (x + 0.044715 * x * x * x)));
    case CT_QUANT_LUT_EXP: return exp(x);
    case CT_QUANT_LUT_LOG: return x > 0 ? log(x) : -INFINITY;
    case CT_QUANT_LUT_SQRT: return sqrt(x);
    case CT_QUANT_LUT_RECIPROCAL: return 1.0 / x;
    case CT_QUANT_LUT_LEAKYRELU: return x >= 0 ? x : s->alpha * x;
    case CT_QUANT_LUT_ELU: return x >= 0 ? x : s->alpha * expm1(x);
    case CT_QUANT_LUT_SOFTPLUS: return softplus(x);
    case CT_QUANT_LUT_MISH: return x * tanh(softplus(x));
    case CT_QUANT_LUT_ABS: return fabs(x);
    case CT_QUANT_LUT_GREATER: return x > s->alpha;
    case CT_QUANT_LUT_GREATEREQ: return x >= s->alpha;
    case CT_QUANT_LUT_LESS: return x < s->alpha;
    case CT_QUANT_LUT_LESSEQ: return x <= s->alpha;
    default: return NAN;
  }
}

bool ct_quant_lut_make(const ct_quant_lut_spec *spec, ct_quant_param in, ct_quant_param out,
                       uint8_t table[256]) {
  if (spec->fn < 0 || spec->fn >= CT_QUANT_LUT_COUNT) return false;
  return ct_quant_lut_build(ct_quant_lut_eval, (void *)spec, in.scale, in.zp, in.dt, out.scale, out.zp,
                            out.dt, table);
}

bool ct_quant_lut16_make(const ct_quant_lut_spec *spec, ct_quant_param in, ct_quant_param out,
                         int16_t table[CT_QUANT_LUT16_ENTRIES]) {
  if (spec->fn < 0 || spec->fn >= CT_QUANT_LUT_COUNT || in.dt != CT_I16 || in.zp != 0) return false;
  return ct_quant_lut16_build(ct_quant_lut_eval, (void *)spec, in.scale, out.scale, out.zp, out.dt, table);
}
