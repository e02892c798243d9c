/* math_unary.c: ONNX math family, unary elementwise ops: shape functions (same type; bool for
 * IsInf/IsNaN/Not) and float kernels of Abs .. Tan, the activations (Elu, Selu, Celu,
 * LeakyRelu, ThresholdedRelu, HardSigmoid, HardSwish, Shrink, Mish, Gelu, SiLU), IsInf, IsNaN,
 * Not, Identity, Clip and Dropout (nn family; inference = identity). Formulas of the ONNX
 * operator spec quoted per op; float math in double, f32 results round to nearest (but the f32
 * rows of Sigmoid and SiLU: float, within 3 ulp). */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"
#include "ops/broadcast.h"
#include "common/clones.h"
#include "quant/float_fn.h"
#include "ops/math_act.h"

/* Attributes of the parameterized activations, defaults from the ONNX spec. */
typedef struct up {
  double alpha, beta, gamma, lambd, bias;
  bool tanh_gelu;
  bool det_neg, det_pos;
} up;

typedef double (*un_fn)(double x, const up *p);

static double sigm(double x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }
static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

#define F(name, expr) static double u_##name(double x, const up *p) { (void)p; return (expr); }
F(abs, fabs(x))
F(acos, acos(x))
F(acosh, acosh(x))
F(asin, asin(x))
F(asinh, asinh(x))
F(atan, atan(x))
F(atanh, atanh(x))
F(ceil, ceil(x))
F(cos, cos(x))
F(cosh, cosh(x))
F(erf, erf(x))
F(exp, exp(x))
F(floor, floor(x))
F(ident, x)
F(isinf, isinf(x) && ((x > 0 && p->det_pos) || (x < 0 && p->det_neg)))
F(isnan, isnan(x))
F(log, log(x))
F(neg, -x)
F(not, x == 0)
F(recip, 1 / x)
F(relu, x > 0 ? x : (x == x ? 0 : x))
F(round, nearbyint(x))                                   /* half to even (default FE mode) */
F(sigmoid, sigm(x))
F(sign, x > 0 ? 1 : x < 0 ? -1 : x)
F(sin, sin(x))
F(sinh, sinh(x))
F(softplus, ct_quant_fn_softplus(x))
F(softsign, ct_quant_fn_softsign(x))
F(sqrt, sqrt(x))
F(tan, tan(x))
F(tanh, tanh(x))
F(elu, ct_quant_fn_elu(x, p->alpha))                     /* Elu-6, alpha 1 */
F(selu, ct_quant_fn_selu(x, p->alpha, p->gamma))         /* Selu-6 */
F(celu, ct_quant_fn_celu(x, p->alpha))                   /* Celu-12 */
F(leaky, x < 0 ? p->alpha * x : x)                       /* LeakyRelu-16, alpha 0.01 */
F(thresh, x > p->alpha ? x : 0)                          /* ThresholdedRelu-10, alpha 1 */
F(hsigm, clamp01(p->alpha * x + p->beta))                /* HardSigmoid-6, 0.2 / 0.5 */
F(hswish, x * clamp01(x / 6 + 0.5))                      /* HardSwish-14 */
F(shrink, x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0) /* Shrink-9 */
F(mish, ct_quant_fn_mish(x))                             /* Mish-18 */
F(gelu, ct_quant_fn_gelu(x, p->tanh_gelu))                 /* Gelu-20 (quant/float_fn.h) */
F(silu, x * sigm(x))                                     /* x * Sigmoid(x) */
#undef F

static const struct {
  ct_op_kind kind;
  un_fn fn;
} un_table[] = {
    {CT_OP_ABS, u_abs}, {CT_OP_ACOS, u_acos}, {CT_OP_ACOSH, u_acosh}, {CT_OP_ASIN, u_asin},
    {CT_OP_ASINH, u_asinh}, {CT_OP_ATAN, u_atan}, {CT_OP_ATANH, u_atanh}, {CT_OP_CEIL, u_ceil},
    {CT_OP_COS, u_cos}, {CT_OP_COSH, u_cosh}, {CT_OP_ERF, u_erf}, {CT_OP_EXP, u_exp},
    {CT_OP_FLOOR, u_floor}, {CT_OP_IDENTITY, u_ident}, {CT_OP_ISINF, u_isinf},
    {CT_OP_ISNAN, u_isnan}, {CT_OP_LOG, u_log}, {CT_OP_NEG, u_neg}, {CT_OP_NOT, u_not},
    {CT_OP_RECIPROCAL, u_recip}, {CT_OP_RELU, u_relu}, {CT_OP_ROUND, u_round},
    {CT_OP_SIGMOID, u_sigmoid}, {CT_OP_SIGN, u_sign}, {CT_OP_SIN, u_sin}, {CT_OP_SINH, u_sinh},
    {CT_OP_SOFTPLUS, u_softplus}, {CT_OP_SOFTSIGN, u_softsign}, {CT_OP_SQRT, u_sqrt},
    {CT_OP_TAN, u_tan}, {CT_OP_TANH, u_tanh}, {CT_OP_ELU, u_elu}, {CT_OP_SELU, u_selu},
    {CT_OP_CELU, u_celu}, {CT_OP_LEAKYRELU, u_leaky}, {CT_OP_THRESHOLDEDRELU, u_thresh},
    {CT_OP_HARDSIGMOID, u_hsigm}, {CT_OP_HARDSWISH, u_hswish}, {CT_OP_SHRINK, u_shrink},
    {CT_OP_MISH, u_mish}, {CT_OP_GELU, u_gelu}, {CT_OP_SILU, u_silu},
};

static un_fn un_lookup(ct_op_kind k) {
  for (size_t i = 0; i < sizeof un_table / sizeof un_table[0]; i++)
    if (un_table[i].kind == k) return un_table[i].fn;
  return NULL;
}

/* The element formulas of the f32 rows: quant/float_fn.h, shared with the cmodel's function
 * unit (ISA EXP `func`) so that both give the same bits. They inline into the row loops and
 * vectorize there: the selects if-convert because the whole build has -fno-trapping-math
 * (CMakeLists.txt; a per-function optimize pragma here would stop GCC from inlining them,
 * tests/check_inline.sh). */
static inline double k_relu(double v, double al, double be) { (void)al, (void)be; return v > 0 ? v : (v == v ? 0 : v); }
static inline double k_leaky(double v, double al, double be) { (void)be; return ct_quant_fn_leaky(v, al); }
static inline double k_hsigm(double v, double al, double be) { return ct_quant_fn_hsigmoid(v, al, be); }
static inline double k_hswish(double v, double al, double be) { (void)al, (void)be; return ct_quant_fn_hswish(v); }
static inline float k_sigmoid(float v, double al, double be) { (void)al, (void)be; return ct_quant_fn_sigmoid(v); }
static inline float k_silu(float v, double al, double be) { (void)al, (void)be; return ct_quant_fn_silu(v); }

/* r_*: y = f(x) over n f32 elements, y apart from x; results equal the u_* functions' after
 * rounding to float (Sigmoid, SiLU: within the few ulp of k_sigmoid). i_*: the same formula
 * in place, as a ct_kernel_post row (same element results). Blocks of 8 so that GCC's -O2
 * (very-cheap cost model) vectorizes. */
typedef void (*un_row32)(const float *x, float *y, int64_t n, const up *p);
#define UN_ROW(name) UN_ROW_AS(name, name)
#define UN_ROW_AS(name, fn)                                                                    \
  CT_CLONES_AVX2 static void r_##name(const float *restrict x, float *restrict y, int64_t n, const up *p) { \
    const double al = p->alpha, be = p->beta;                                                  \
    int64_t m = n - n % 8, i, k;                                                               \
    for (k = 0; k < m; k += 8)                                                                 \
      for (i = k; i < k + 8; i++) y[i] = (float)k_##fn(x[i], al, be);                          \
    for (i = m; i < n; i++) y[i] = (float)k_##fn(x[i], al, be);                                \
  }                                                                                            \
  CT_CLONES_AVX2 static void i_##name(float *y, int64_t n, const ct_kernel_post *p) {               \
    const double al = p->alpha, be = p->beta;                                                  \
    int64_t m = n - n % 8, i, k;                                                               \
    for (k = 0; k < m; k += 8)                                                                 \
      for (i = k; i < k + 8; i++) y[i] = (float)k_##fn(y[i], al, be);                          \
    for (i = m; i < n; i++) y[i] = (float)k_##fn(y[i], al, be);                                \
  }
UN_ROW(relu)
UN_ROW(leaky)
UN_ROW(hsigm)
UN_ROW_AS(hswish_c, hswish)
UN_ROW_AS(sigmoid_c, sigmoid)
UN_ROW_AS(silu_c, silu)
#undef UN_ROW
#undef UN_ROW_AS
/* HardSwish, Sigmoid and SiLU: the same bits in AVX-512 where the CPU has it (math_act.c),
 * else the rows above; `row` is the AVX-512 row call, its arguments after (x, y, n) in `...`. */
#define UN_ROW_512(name, row, ...)                                                              \
  static void r_##name(const float *restrict x, float *restrict y, int64_t n, const up *p) {    \
    if (!row(x, y, n __VA_ARGS__)) r_##name##_c(x, y, n, p);                                    \
  }                                                                                             \
  static void i_##name(float *y, int64_t n, const ct_kernel_post *p) {                          \
    if (!row(y, y, n __VA_ARGS__)) i_##name##_c(y, n, p);                                       \
  }
UN_ROW_512(hswish, ct_unary_hswish_row, )
UN_ROW_512(sigmoid, ct_unary_sigm_row, , false)
UN_ROW_512(silu, ct_unary_sigm_row, , true)
#undef UN_ROW_512

/* The f32 row loop of op kind k, or NULL. */
static un_row32 un_row_of(ct_op_kind k) {
  static const struct {
    ct_op_kind kind;
    un_row32 row;
  } rows[] = {{CT_OP_RELU, r_relu}, {CT_OP_LEAKYRELU, r_leaky}, {CT_OP_HARDSIGMOID, r_hsigm},
              {CT_OP_HARDSWISH, r_hswish}, {CT_OP_SIGMOID, r_sigmoid}, {CT_OP_SILU, r_silu}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == k) return rows[i].row;
  return NULL;
}

/* A row loop split over a worker pool in blocks of UN_BLOCK elements (each element on its
 * own: results do not depend on the split). */
#define UN_BLOCK 4096
#define UN_PAR_MIN 16384 /* elements below which one thread does it all */
typedef struct un_par {
  un_row32 row;
  const float *x;
  float *y;
  int64_t n;
  const up *p;
} un_par;

static void un_par_blocks(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const un_par *j = arg;
  int64_t a = lo * UN_BLOCK, b = hi * UN_BLOCK < j->n ? hi * UN_BLOCK : j->n;
  j->row(j->x + a, j->y + a, b - a, j->p);
}

/* row(x, y, n, p) on the threads of ctx's pool when n is large enough. */
static void un_row_run(const ct_kernel_ctx *ctx, un_row32 row, const float *x, float *y, int64_t n, const up *p) {
  ct_workpool *pool = ctx ? ctx->pool : NULL;
  if (!pool || n < UN_PAR_MIN) {
    row(x, y, n, p);
    return;
  }
  un_par j = {row, x, y, n, p};
  ct_workpool_for(pool, (n + UN_BLOCK - 1) / UN_BLOCK, 4 * (int64_t)ct_workpool_threads(pool), un_par_blocks, &j);
}

/* Decodes op's attributes (defaults from ir/ops.def) into the parameters of its formula. */
static void un_params(const ct_op *op, up *p) {
  *p = (up){.alpha = 1, .beta = 0, .gamma = 1, .lambd = 0, .bias = 0};
  switch (op->kind) {
    case CT_OP_ELU: p->alpha = ct_attr_elu_alpha(op); break;
    case CT_OP_CELU: p->alpha = ct_attr_celu_alpha(op); break;
    case CT_OP_THRESHOLDEDRELU: p->alpha = ct_attr_thresholdedrelu_alpha(op); break;
    case CT_OP_LEAKYRELU: p->alpha = ct_attr_leakyrelu_alpha(op); break;
    case CT_OP_SELU: p->alpha = ct_attr_selu_alpha(op), p->gamma = ct_attr_selu_gamma(op); break;
    case CT_OP_HARDSIGMOID: p->alpha = ct_attr_hardsigmoid_alpha(op), p->beta = ct_attr_hardsigmoid_beta(op); break;
    case CT_OP_SHRINK: p->lambd = ct_attr_shrink_lambd(op), p->bias = ct_attr_shrink_bias(op); break;
    case CT_OP_GELU: p->tanh_gelu = strcmp(ct_attr_gelu_approximate(op), "tanh") == 0; break;
    case CT_OP_ISINF:
      p->det_neg = ct_attr_isinf_detect_negative(op) != 0;
      p->det_pos = ct_attr_isinf_detect_positive(op) != 0;
      break;
    default: break;
  }
}

bool ct_kernel_unary_post(const ct_op *op, ct_kernel_post *post) {
  static const struct {
    ct_op_kind kind;
    void (*row)(float *y, int64_t n, const ct_kernel_post *p);
  } rows[] = {{CT_OP_RELU, i_relu}, {CT_OP_LEAKYRELU, i_leaky}, {CT_OP_HARDSIGMOID, i_hsigm},
              {CT_OP_HARDSWISH, i_hswish}, {CT_OP_SIGMOID, i_sigmoid}, {CT_OP_SILU, i_silu}};
  up p;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    if (rows[i].kind != op->kind) continue;
    un_params(op, &p);
    *post = (ct_kernel_post){rows[i].row, p.alpha, p.beta};
    return true;
  }
  return false;
}

/* Ops that make sense on integer inputs (computed exactly in int64 where it matters). */
static bool un_int_ok(ct_op_kind k) {
  return k == CT_OP_ABS || k == CT_OP_NEG || k == CT_OP_SIGN || k == CT_OP_RELU ||
         k == CT_OP_CEIL || k == CT_OP_FLOOR || k == CT_OP_ROUND || k == CT_OP_NOT ||
         k == CT_OP_ISINF || k == CT_OP_ISNAN;
}

static int64_t un_int(ct_op_kind k, int64_t x) {
  uint64_t u = (uint64_t)x;
  if (k == CT_OP_ABS) return x < 0 ? (int64_t)(0 - u) : x;
  if (k == CT_OP_NEG) return (int64_t)(0 - u);
  if (k == CT_OP_SIGN) return x > 0 ? 1 : x < 0 ? -1 : 0;
  if (k == CT_OP_RELU) return x > 0 ? x : 0;
  if (k == CT_OP_NOT) return x == 0;
  if (k == CT_OP_ISINF || k == CT_OP_ISNAN) return 0;
  return x;
}

/* Unary ops: f32 fast path (split over ctx->pool when large), other floats through double,
 * integer dtypes exactly for the ops that make sense on them (Abs, Neg, Sign, Relu, Not...),
 * else "unsupported". */
ct_status ct_kern_unary(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  int64_t n = ct_tensor_numel(x);
  if (ct_tensor_numel(y) != n) return ct_ops_err(d, CT_ERR_INTERNAL, op, "output size mismatch");
  if (op->kind == CT_OP_IDENTITY && x->dtype == y->dtype) {
    memcpy(y->data, x->data, x->nbytes);
    return CT_OK;
  }
  un_fn fn = un_lookup(op->kind);
  if (!fn) return ct_ops_err(d, CT_ERR_INTERNAL, op, "no unary function");
  up p;
  un_params(op, &p);
  un_row32 row = x->dtype == CT_F32 && y->dtype == CT_F32 && x->data != y->data ? un_row_of(op->kind) : NULL;
  if (row) {
    un_row_run(ctx, row, x->data, y->data, n, &p);
  } else if (x->dtype == CT_F32 && y->dtype == CT_F32) {
    const float *a = x->data;
    float *b = y->data;
    for (int64_t i = 0; i < n; i++) b[i] = (float)fn(a[i], &p);
  } else if (ct_dtype_is_float(x->dtype)) {
    for (int64_t i = 0; i < n; i++) ct_tensor_set_f64(y, i, fn(ct_tensor_get_f64(x, i), &p));
  } else if (un_int_ok(op->kind)) {
    for (int64_t i = 0; i < n; i++) ct_ops_set_i64(y, i, un_int(op->kind, ct_ops_get_i64(x, i)));
  } else {
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: dtype %s", ct_dtype_name(x->dtype));
  }
  return CT_OK;
}

/* Clip-13: y = min(max(x, min), max); absent bounds are -inf/+inf (type limits for ints). */
ct_status ct_kern_clip(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  (void)ctx;
  const ct_tensor *x = in[0], *lo = op->n_in > 1 ? in[1] : NULL, *hi = op->n_in > 2 ? in[2] : NULL;
  ct_tensor *y = out[0];
  int64_t n = ct_tensor_numel(x);
  if ((lo && ct_tensor_numel(lo) != 1) || (hi && ct_tensor_numel(hi) != 1))
    return ct_ops_err(d, CT_ERR_INPUT, op, "min and max must be scalars");
  if (ct_dtype_is_float(x->dtype)) {
    double a = lo ? ct_tensor_get_f64(lo, 0) : -INFINITY, b = hi ? ct_tensor_get_f64(hi, 0) : INFINITY;
    if (x->dtype == CT_F32) {
      const float *s = x->data;
      float *t = y->data, fa = (float)a, fb = (float)b;
      for (int64_t i = 0; i < n; i++) t[i] = s[i] < fa ? fa : s[i] > fb ? fb : s[i];
      return CT_OK;
    }
    for (int64_t i = 0; i < n; i++) {
      double v = ct_tensor_get_f64(x, i);
      ct_tensor_set_f64(y, i, v < a ? a : v > b ? b : v);
    }
    return CT_OK;
  }
  int64_t a = lo ? ct_ops_get_i64(lo, 0) : INT64_MIN, b = hi ? ct_ops_get_i64(hi, 0) : INT64_MAX;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ct_ops_get_i64(x, i);
    ct_ops_set_i64(y, i, v < a ? a : v > b ? b : v);
  }
  return CT_OK;
}

/* Dropout-13 in inference: y = x; the optional mask output is all true. training_mode true
 * is supported only with ratio 0 (every element kept, scale 1/(1 − 0) = 1: y = x again, as
 * torchvision's Swin exports its attention dropout); otherwise the output is random. */
ct_status ct_kern_dropout(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  (void)ctx;
  bool zero_ratio = op->n_in > 1 && in[1] && ct_tensor_numel(in[1]) == 1 && ct_tensor_get_f64(in[1], 0) == 0;
  if (op->n_in > 2 && in[2] && ct_tensor_numel(in[2]) == 1 && ct_tensor_get_f64(in[2], 0) != 0 && !zero_ratio)
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: training_mode = true with a ratio other than 0 (random output)");
  if (out[0]->nbytes != in[0]->nbytes) return ct_ops_err(d, CT_ERR_INTERNAL, op, "output size mismatch");
  memcpy(out[0]->data, in[0]->data, in[0]->nbytes);
  if (op->n_out > 1 && out[1]) memset(out[1]->data, 1, out[1]->nbytes);
  return CT_OK;
}

/* ---- shape functions ---- */

/* out = in0 (unary math, activations, Clip, Identity...). */
ct_status ct_shape_same(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  ct_sm_out(op, 0, x->dtype, x->ndim, x->shape);
  return CT_OK;
}

/* IsInf / IsNaN / Not: same shape, bool. */
ct_status ct_shape_bool_unary(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st) return st;
  ct_sm_out(op, 0, CT_BOOL, x->ndim, x->shape);
  return CT_OK;
}

/* Dropout: output 0 like the input, optional mask (output 1) bool of the same shape. */
ct_status ct_shape_dropout(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st = ct_shape_same(g, op, d);
  if (st) return st;
  ct_sm_out(op, 1, CT_BOOL, op->in[0]->ndim, op->in[0]->shape);
  return CT_OK;
}
