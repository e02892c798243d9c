/* float_fn.c: ct_quant_fn_f32 (float_fn.h). */
#include "quant/float_fn.h"

float ct_quant_fn_f32(int f, float x, double alpha, double beta) {
  double v = x;
  switch (f) {
  case CT_QUANT_FN_EXP: return (float)exp(v);
  case CT_QUANT_FN_SIGMOID: return ct_quant_fn_sigmoid(x);
  case CT_QUANT_FN_SILU: return ct_quant_fn_silu(x);
  case CT_QUANT_FN_TANH: return (float)tanh(v);
  case CT_QUANT_FN_HSIGMOID: return (float)ct_quant_fn_hsigmoid(v, alpha, beta);
  case CT_QUANT_FN_HSWISH: return (float)ct_quant_fn_hswish(v);
  case CT_QUANT_FN_LEAKY: return (float)ct_quant_fn_leaky(v, alpha);
  case CT_QUANT_FN_GELU: return (float)(0.5 * v * (1 + erf(v / sqrt(2))));
  case CT_QUANT_FN_GELU_TANH:
    return (float)(0.5 * v * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))));
  default: return NAN;
  }
}
