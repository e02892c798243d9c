/* float_fn.h: the float functions of the VPU's function unit (ISA EXP with `func`, docs/isa.md)
 * — one definition for the cmodel (cmodel/exec_vpu.c) and the float kernels of the reference
 * (ops/math_unary.c rows of Sigmoid, SiLU, HardSigmoid, HardSwish, LeakyRelu), so that a
 * float activation on the cmodel equals the Tpu reference bit for bit. The element formulas are
 * static inline (the reference's row loops vectorize them; same IEEE operations, no FMA, in
 * every build) and must inline into every caller: no caller may be compiled with other
 * optimize options (tests/check_inline.sh); ct_quant_fn_f32 dispatches on the function code. */
#ifndef CT_QUANT_FLOAT_FN_H
#define CT_QUANT_FLOAT_FN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Function codes of the EXP instruction's `func` field. */
typedef enum ct_quant_fn {
  CT_QUANT_FN_EXP,       /* e^x: (float) exp((double) x) */
  CT_QUANT_FN_SIGMOID,   /* ct_quant_fn_sigmoid */
  CT_QUANT_FN_SILU,      /* x · sigmoid(x), ct_quant_fn_silu */
  CT_QUANT_FN_TANH,      /* (float) tanh((double) x) */
  CT_QUANT_FN_HSIGMOID,  /* clamp(alpha · x + beta, 0, 1) in double (HardSigmoid-6) */
  CT_QUANT_FN_HSWISH,    /* x · clamp((x + 3) / 6, 0, 1) in double (HardSwish-14) */
  CT_QUANT_FN_LEAKY,     /* x < 0 ? alpha · x : x (LeakyRelu-16) */
  CT_QUANT_FN_GELU,      /* 0.5 x (1 + erf(x / √2)) in double (Gelu-20) */
  CT_QUANT_FN_GELU_TANH, /* 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))) in double */
  CT_QUANT_FN_SOFTPLUS,  /* log(1 + e^x), ct_quant_fn_softplus */
  CT_QUANT_FN_MISH,      /* x · tanh(softplus(x)) */
  CT_QUANT_FN_ELU,       /* x < 0 ? alpha (e^x − 1) : x (Elu-6) */
  CT_QUANT_FN_SELU,      /* gamma = beta: x > 0 ? gamma x : gamma (alpha e^x − alpha) (Selu-6) */
  CT_QUANT_FN_CELU,      /* max(0, x) + min(0, alpha (e^(x / alpha) − 1)) (Celu-12) */
  CT_QUANT_FN_SOFTSIGN,  /* x / (1 + |x|) */
  CT_QUANT_FN_LOG,       /* (float) log((double) x) */
  CT_QUANT_FN_SQRT,      /* (float) sqrt((double) x) */
  CT_QUANT_FN_RECIP,     /* (float) (1 / (double) x) */
  CT_QUANT_FN_ERF,       /* (float) erf((double) x) */
  CT_QUANT_FN_GT,        /* x > alpha ? 1 : 0 (NaN: 0), a comparison's mask (Greater-13) */
  CT_QUANT_FN_GE,        /* x >= alpha ? 1 : 0 (GreaterOrEqual-16) */
  CT_QUANT_FN_LT,        /* x < alpha ? 1 : 0 (Less-13) */
  CT_QUANT_FN_LE,        /* x <= alpha ? 1 : 0 (LessOrEqual-16) */
  CT_QUANT_FN_COUNT
} ct_quant_fn;

/* e^t for t <= 0 in float, branch-free so loops vectorize 8 wide: t = k ln2 + r (Cody-Waite
 * with ln2 split as in Cephes' expf: 0.693359375 - 2.12194440e-4), |r| <= ln2 / 2, e^r by its
 * Taylor series to r^7 (truncation r^8 / 8! < 6e-9, a tenth of float's ulp), written
 * 1 + (r + r^2 q(r)) so the rounding of the small part stays small, then scaled by 2^(k + 25)
 * through the exponent bits (k is read from t log2(e) + 1.5 * 2^23) and by 2^-25 in a
 * multiply, which rounds results below float's normal range (2^-126) correctly. t < -104
 * gives 0 (e^t is below half the smallest subnormal there). Error: at most 1 ulp where e^t
 * is normal (measured on every 7th float of [-104, 0], against libm's exp in double). */
static inline float ct_quant_fn_exp_nonpos(float t) {
  const float shift = 12582912.0f; /* 1.5 * 2^23 */
  float tc = t < -104.0f ? -104.0f : t;
  float kb = tc * 1.44269504f + shift, k = kb - shift;
  float r = (tc - k * 0.693359375f) + k * 2.12194440e-4f;
  float q = 1.0f / 5040 * r + 1.0f / 720;
  q = q * r + 1.0f / 120, q = q * r + 1.0f / 24, q = q * r + 1.0f / 6, q = q * r + 0.5f;
  float p = (q * r * r + r) + 1.0f;
  uint32_t kbits, pbits;
  memcpy(&kbits, &kb, sizeof kbits);
  memcpy(&pbits, &p, sizeof pbits);
  pbits += (kbits + 25) << 23;
  memcpy(&p, &pbits, sizeof p);
  return t < -104.0f ? 0.0f : p * 0x1p-25f;
}

/* The formulas below are written as selects after unconditional arithmetic (GCC if-converts
 * them). clamp to [0, 1] in double. */
static inline double ct_quant_fn_sel01(double t) {
  t = t < 0 ? 0.0 : t;
  return t > 1 ? 1.0 : t;
}
static inline double ct_quant_fn_leaky(double v, double al) {
  double t = al * v;
  return v < 0 ? t : v;
}
static inline double ct_quant_fn_hsigmoid(double v, double al, double be) { return ct_quant_fn_sel01(al * v + be); }
/* HardSwish as x (x + 3) / 6 clamped, with the division a multiply by 1/6 (a vector double
 * division costs several multiplies): x + 3 is exact in double for any float x (|x| < 2^29;
 * larger ones clamp), so the result is the spec formula's to ~2^-52 relative, the same float
 * after rounding but where that lies within that of a half-ulp tie. */
static inline double ct_quant_fn_hswish(double v) { return v * ct_quant_fn_sel01((v + 3) * (1.0 / 6)); }
/* Sigmoid and SiLU in float (8 lanes; double would halve the width and its division is the
 * slowest step): sigmoid(v) = (v >= 0 ? 1 : e) / (1 + e), e = ct_quant_fn_exp_nonpos(-|v|);
 * within 2 ulp (Sigmoid) and 3 ulp (SiLU) of the correctly rounded value (every 7th float of
 * [-104, 104]; test_unary_f32_rows), coarser only where a result or SiLU's sigmoid factor is
 * subnormal. onnxruntime's MLAS also computes them in float. NaN stays NaN. */
static inline float ct_quant_fn_sigmoid(float v) {
  float e = ct_quant_fn_exp_nonpos(-fabsf(v)), num = v >= 0 ? 1.0f : e, y = num / (1.0f + e);
  return v == v ? y : v;
}
static inline float ct_quant_fn_silu(float v) { return v * ct_quant_fn_sigmoid(v); }

/* Gelu-20 in double: the erf form 0.5 x (1 + erf(x / √2)) and the tanh approximation
 * 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))). */
static inline double ct_quant_fn_gelu(double x, int tanh_form) {
  return tanh_form ? 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)))
                   : 0.5 * x * (1 + erf(x / sqrt(2)));
}

/* The other activations in double, as the ONNX spec writes them (the reference's kernels of
 * Softplus, Mish, Elu, Selu, Celu, Softsign, ops/math_unary.c, call these). Softplus avoids
 * overflow: x + log1p(e^-x) for x > 0, log1p(e^x) otherwise. */
static inline double ct_quant_fn_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static inline double ct_quant_fn_mish(double x) { return x * tanh(ct_quant_fn_softplus(x)); }
static inline double ct_quant_fn_elu(double x, double al) { return x < 0 ? al * (exp(x) - 1) : x; }
static inline double ct_quant_fn_selu(double x, double al, double ga) { return x > 0 ? ga * x : ga * (al * exp(x) - al); }
static inline double ct_quant_fn_celu(double x, double al) { return fmax(0, x) + fmin(0, al * (exp(x / al) - 1)); }
static inline double ct_quant_fn_softsign(double x) { return x / (1 + fabs(x)); }

/* The canonical NaN (docs/quant.md, "NaN"): every float result an arithmetic instruction of the
 * cmodel or a float op of the Tpu reference computes is stored with this NaN — positive, quiet,
 * no payload (f32 0x7fc00000, bf16 0x7fc0, f16 0x7e00) — whatever NaN the arithmetic gave
 * (x86 returns one NaN operand, which one depends on the operand order a compiler picks, or
 * makes the negative "default NaN"). Conversions (bf16/f16 rounding, Cast) keep a NaN's sign
 * and leading payload bits (quieted) and data movement keeps bits, on both sides alike. */
#define CT_QUANT_NAN_BITS_F32 0x7fc00000u
static inline float ct_quant_nan_canon(float v) {
  uint32_t u = CT_QUANT_NAN_BITS_F32;
  if (v == v) return v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* One step of a float max (MaxPool, GlobalMaxPool, POOL max, REDUCE max): the running max m
 * and the next value v give v if v > m or v is NaN, else m — so a NaN anywhere in the window
 * makes the result NaN whatever the order the taps are visited in (as numpy's max and the
 * ELTWISE max: "NaN wins"). Branch-free, so row loops vectorize. */
static inline float ct_quant_max_step(float m, float v) { return v > m || v != v ? v : m; }

/* The float activation of a CONV / MATMUL / ELTWISE result (act: 0 none, 1 relu, 2 clamp, the
 * ISA's ACT numbering): relu v > 0 ? v : +0 (NaN kept, −0 → +0: the reference's Relu), clamp
 * v < 0 ? 0 : v > hi ? hi : v (−0 kept: the reference's Clip and fused clip). */
static inline float ct_quant_fn_act(float v, int act, float hi) {
  if (act == 1) return v > 0 ? v : (v == v ? 0.0f : v);
  if (act == 2) return v < 0 ? 0.0f : v > hi ? hi : v;
  return v;
}

/* f(x) of function code f (parameters alpha, beta where f takes them), as an f32: what the
 * reference's f32 kernel of the matching op computes. NaN for an unknown code. */
float ct_quant_fn_f32(int f, float x, double alpha, double beta);

#endif
