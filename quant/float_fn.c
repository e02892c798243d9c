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
  case CT_QUANT_FN_GELU: return (float)ct_quant_fn_gelu(v, 0);
  case CT_QUANT_FN_GELU_TANH: return (float)ct_quant_fn_gelu(v, 1);
  case CT_QUANT_FN_SOFTPLUS: return (float)ct_quant_fn_softplus(v);
  case CT_QUANT_FN_MISH: return (float)ct_quant_fn_mish(v);
  case CT_QUANT_FN_ELU: return (float)ct_quant_fn_elu(v, alpha);
  case CT_QUANT_FN_SELU: return (float)ct_quant_fn_selu(v, alpha, beta);
  case CT_QUANT_FN_CELU: return (float)ct_quant_fn_celu(v, alpha);
  case CT_QUANT_FN_SOFTSIGN: return (float)ct_quant_fn_softsign(v);
  case CT_QUANT_FN_LOG: return (float)log(v);
  case CT_QUANT_FN_SQRT: return (float)sqrt(v);
  case CT_QUANT_FN_RECIP: return (float)(1 / v);
  case CT_QUANT_FN_ERF: return (float)erf(v);
  case CT_QUANT_FN_GT: return v > alpha ? 1.0f : 0.0f;
  case CT_QUANT_FN_GE: return v >= alpha ? 1.0f : 0.0f;
  case CT_QUANT_FN_LT: return v < alpha ? 1.0f : 0.0f;
  case CT_QUANT_FN_LE: return v <= alpha ? 1.0f : 0.0f;
  default: return NAN;
  }
}
