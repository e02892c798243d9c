/* cg_float.c: codegen of float layers (cg_int.h): Casts between integer and float storage
 * (CAST), Softmax (SOFTMAX), LayerNormalization (NORM), standalone Relu / Clip (ELTWISE max
 * of the input with itself, clamped) in bf16 / f16 / f32, and the activation fields of float
 * CONV / MATMUL / ELTWISE (ct_cg_insn_act). Float MACs follow the ISA's order, which the Tpu
 * reference uses (ops/kernel.h ct_kern_conv_ordered), so they are bit-exact too.
 *
 * The ISA's CAST carries its scale as f32 while the Tpu reference (ops/tpu_elt.c
 * ct_tpu_cast) uses the value's double scale. A cast is emitted only when that makes no
 * difference: the f32 nearest the scale, or one a few ulps away, is taken when every
 * possible input (all 2^8 / 2^16 integers, or all 2^16 bf16 / f16 bit patterns) converts to
 * the same result through quant/ with it as with the double; f32 inputs need a scale that
 * f32 holds exactly. Otherwise the layer fails with "no codegen" naming it. */
#include <math.h>
#include <string.h>

#include "compiler/backend/cg_int.h"
#include "ops/nn_util.h"
#include "quant/float_fn.h"
#include "quant/quant.h"

static bool low_float(ct_dtype t) { return t == CT_BF16 || t == CT_F16; }

/* Does int → float with the f32 scale sf give every result the double scale gives? */
static bool dequant_exact(ct_dtype in, ct_dtype out, double scale, double sf, int32_t zp) {
  int64_t lo = in == CT_I8 ? -128 : in == CT_U8 ? 0 : in == CT_I16 ? -32768 : in == CT_U16 ? 0 : 1;
  int64_t hi = in == CT_I8 ? 127 : in == CT_U8 ? 255 : in == CT_I16 ? 32767 : in == CT_U16 ? 65535 : 0;
  for (int64_t q = lo; q <= hi; q++) {
    float a = ct_quant_round_float((float)ct_quant_dequantize((int32_t)q, scale, zp), out);
    float b = ct_quant_round_float((float)ct_quant_dequantize((int32_t)q, sf, zp), out);
    if (memcmp(&a, &b, sizeof a)) return false;
  }
  return lo <= hi;
}

/* Does float → int with the f32 scale sf give every result the double scale gives? */
static bool quant_exact(ct_dtype in, ct_dtype out, double scale, double sf, int32_t zp) {
  if (!low_float(in)) return sf == scale;
  for (uint32_t h = 0; h < 65536; h++) {
    float x = in == CT_BF16 ? ct_quant_bf16_to_f32((uint16_t)h) : ct_quant_f16_to_f32((uint16_t)h);
    if (isnan(x)) continue;
    if (ct_quant_quantize(x, scale, zp, out) != ct_quant_quantize(x, sf, zp, out)) return false;
  }
  return true;
}

static ct_status emit_cast(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box by;
  if (!ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "rank above 4", d);
  bool fi = ct_dtype_is_float(x->dtype), fo = ct_dtype_is_float(y->dtype);
  const ct_value *q = fi ? y : x;
  double scale = 1;
  int32_t zp = 0;
  ct_dtype dt_in = x->dtype == CT_BOOL ? CT_U8 : x->dtype; /* a mask: bytes 0 / 1 */
  if (fi != fo && q->n_scale == 0) { /* plain values (ct_tpu_cast): exact through scale 1 */
    if (fi) return ct_cg_no_cg(op, "a float to integer Cast without parameters (it truncates; CAST rounds)", d);
    if (ct_dtype_size(x->dtype) > 2) return ct_cg_no_cg(op, "an integer Cast wider than 16 bits to float", d);
  } else if (fi != fo) {
    if (q->n_scale != 1) return ct_cg_no_cg(op, "a cast without per-tensor quant parameters", d);
    scale = q->scale[0], zp = q->zero_point[0];
    /* the f32 nearest the scale, else a neighbour a few ulps away, that reproduces every result */
    float f = (float)scale, cand = f;
    bool ok = false;
    for (int k = 0; k < 9 && !ok; k++) {
      cand = f;
      for (int j = 0; j < (k + 1) / 2; j++) cand = nextafterf(cand, k % 2 ? INFINITY : 0.0f);
      ok = cand > 0 && (fi ? quant_exact(x->dtype, y->dtype, scale, cand, zp)
                           : dequant_exact(x->dtype, y->dtype, scale, cand, zp));
    }
    if (!ok) return ct_cg_no_cg(op, "no f32 scale (the CAST field) reproduces every result of its double scale", d);
    scale = cand;
  }
  int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  box bx;
  ct_status st = ct_cg_box_of(c, x, &bx) ? ct_cg_fit_rows(c, op, x, &bx, &by, &lx, t, d) : ct_cg_no_cg(op, "rank above 4", d);
  if (st) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CAST;
  struct ct_insn_cast *k = &in.cast;
  k->in = lx, k->out = ly, k->n = by.ext[0], k->c = by.ext[1], k->h = by.ext[2], k->w = by.ext[3];
  k->dt_in = dt_in, k->dt_out = y->dtype, k->scale = (float)scale, k->zp = zp;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* Softmax along `axis` (coerce_2d: over axis..end flattened) as SOFTMAX over the tile viewed
 * as [outer, len, inner] (axis 2 of n = 1, c = outer, h = len, w = inner). */
static ct_status emit_softmax(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box by;
  if (!ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "rank above 4", d);
  int64_t ax = ct_attr_softmax_axis(op);
  if (ax < 0) ax += y->ndim;
  bool coerce = ct_attr_softmax_coerce_2d(op) != 0;
  int cax = (int)ax + 4 - y->ndim;
  if (ax < 0 || ax >= y->ndim) return ct_cg_no_cg(op, "bad axis", d);
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < 4; i++) {
    if (i < cax) outer *= by.ext[i];
    else if (i == cax || coerce) len *= by.ext[i];
    else inner *= by.ext[i];
    if (i >= cax && (i == cax || coerce) && by.ext[i] != by.full[i]) return ct_cg_no_cg(op, "Softmax cut along its axis", d);
  }
  if (outer > 65535 || len > 65535 || inner > 65535) return ct_cg_no_cg(op, "a Softmax view above 65535 along a dim", d);
  if (!ct_dtype_is_float(x->dtype) || !ct_dtype_is_float(y->dtype)) return ct_cg_no_cg(op, "integer Softmax", d);
  int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_SOFTMAX;
  struct ct_insn_softmax *s = &in.softmax;
  s->in = lx, s->out = ly, s->n = 1, s->c = outer, s->h = len, s->w = inner, s->axis = 2;
  s->dt_in = x->dtype, s->dt_out = y->dtype;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* LayerNormalization over dims axis..end (whole in the tile) as NORM layer mode with the
 * f32 Scale and B weights resident in LMEM; epsilon must be an f32 value (the NORM field). */
static ct_status emit_layernorm(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0], *g = op->n_in > 1 ? op->in[1] : NULL, *b = op->n_in > 2 ? op->in[2] : NULL;
  box by;
  if (!ct_cg_box_of(c, y, &by) || y->ndim > 4) return ct_cg_no_cg(op, "rank above 4", d);
  int64_t ax = ct_attr_layernorm_axis(op);
  if (ax < 0) ax += y->ndim;
  int cax = (int)ax + 4 - y->ndim;
  if (ax < 0 || ax >= y->ndim) return ct_cg_no_cg(op, "bad axis", d);
  int64_t S = 1;
  for (int i = cax; i < 4; i++) {
    if (by.ext[i] != by.full[i]) return ct_cg_no_cg(op, "LayerNormalization cut along a normalized axis", d);
    S *= by.ext[i];
  }
  for (int i = 1; i < op->n_out; i++)
    if (op->out[i]) return ct_cg_no_cg(op, "Mean / InvStdDev outputs", d);
  if (!g || g->dtype != CT_F32 || ct_lg_numel(g) != S || (b && (b->dtype != CT_F32 || ct_lg_numel(b) != S)))
    return ct_cg_no_cg(op, "Scale and B must be f32 with one value per normalized element", d);
  double eps = ct_attr_layernorm_epsilon(op);
  if ((double)(float)eps != eps) return ct_cg_no_cg(op, "epsilon is not an f32 value (the NORM field)", d);
  /* without B: the zero table ct_cg_group_tables put at the layer's table (+0.0 as the reference's) */
  int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y), lg = ct_cg_lmem_of(c->gr, g), lb = b ? ct_cg_lmem_of(c->gr, b) : c->lm_attr[li];
  if (lx < 0 || ly < 0 || lg < 0 || lb < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_NORM;
  struct ct_insn_norm *k = &in.norm;
  k->in = lx, k->out = ly, k->gamma = lg, k->beta = lb, k->n = by.ext[0], k->c = by.ext[1], k->h = by.ext[2], k->w = by.ext[3];
  k->axis = cax, k->mode = CT_ISA_NORM_LAYER, k->affine = 1, k->eps = (float)eps, k->dt_in = x->dtype, k->dt_out = y->dtype;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* act / act_hi / zp_out of a float result in [lo, hi] (ct_nn_act: relu [0, inf), relu6, clip):
 * the ISA clamps below at 0 only; hi is held as an f32 in act_hi:zp_out, rounded to the
 * result type (quant/ ct_quant_float_act_hi). */
static ct_status float_act(const ct_op *op, bool none, float lo, float hi, ct_dtype dt, int64_t *act, int64_t *act_hi,
                           int64_t *zp_out, ct_diag *d) {
  *act = CT_ISA_ACT_NONE, *act_hi = 0, *zp_out = 0;
  if (none) return CT_OK;
  if (lo != 0.0f) return ct_cg_no_cg(op, "a float activation whose lower bound is not 0", d);
  if (isinf(hi) && hi > 0) return *act = CT_ISA_ACT_RELU, CT_OK;
  if (!ct_quant_float_act_hi_bits(hi, dt, act_hi, zp_out)) return ct_cg_no_cg(op, "a clamp bound that is not finite", d);
  *act = CT_ISA_ACT_CLAMP;
  return CT_OK;
}

ct_status ct_cg_insn_act(const ct_op *op, const ct_value *y, int64_t *act, int64_t *act_hi, int64_t *zp_out, ct_diag *d) {
  *zp_out = ct_tq_zp(y);
  if (ct_cg_is_int(y->dtype)) {
    ct_quant_act a;
    int32_t hi;
    ct_status st = ct_tq_act(op, &a, &hi, d);
    if (st) return st;
    *act = ct_cg_act_of(a), *act_hi = a == CT_QUANT_ACT_CLAMP ? hi : 0;
    return CT_OK;
  }
  ct_nn_act a;
  if (ct_nn_act_parse(op, &a, d)) return ct_cg_no_cg(op, "an unknown fused activation", d);
  if (a.leaky) return ct_cg_no_cg(op, "a leaky fused activation on a float result", d);
  return float_act(op, a.none, a.lo, a.hi, y->dtype, act, act_hi, zp_out, d);
}

/* The constant scalar operand k of op (a Clip's min / max), or dflt when absent. */
static bool const_scalar(const ct_op *op, int k, float dflt, float *v) {
  *v = dflt;
  if (op->n_in <= k || !op->in[k]) return true;
  const ct_value *x = op->in[k];
  if (!x->data || ct_tensor_numel(x->data) != 1) return false;
  *v = (float)ct_tensor_get_f64(x->data, 0);
  return true;
}

/* Relu / Clip on a float tile: ELTWISE max(x, x) with the clamp of the activation fields
 * (from x's float type to y's). */
static ct_status emit_clamp(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box by;
  if (!ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "rank above 4", d);
  float lo = 0.0f, hi = INFINITY;
  if (op->kind == CT_OP_CLIP && (!const_scalar(op, 1, -INFINITY, &lo) || !const_scalar(op, 2, INFINITY, &hi)))
    return ct_cg_no_cg(op, "a Clip whose bounds are not constant scalars", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_ELTWISE;
  struct ct_insn_eltwise *e = &in.eltwise;
  ct_status st = float_act(op, false, lo, hi, y->dtype, &e->act, &e->act_hi, &e->zp_out, d);
  if (st) return st;
  e->a = e->b = ct_cg_lmem_of(c->gr, x), e->out = ct_cg_lmem_of(c->gr, y);
  if (e->a < 0 || e->out < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  box bx;
  st = ct_cg_box_of(c, x, &bx) ? ct_cg_fit_rows(c, op, x, &bx, &by, &e->a, t, d) : ct_cg_no_cg(op, "rank above 4", d);
  if (st) return st;
  e->b = e->a;
  e->n = by.ext[0], e->c = by.ext[1], e->h = by.ext[2], e->w = by.ext[3];
  /* from the f32 module input to the mode's type: rounded once at the end, as the reference
   * rounds its f32 result; the bounds rounded to that type clamp alike (rounding is monotonic) */
  e->op = CT_ISA_ELT_MAX, e->dt_a = e->dt_b = x->dtype, e->dt_out = y->dtype;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* A comparison of input 0, a float activation, with input 1, a constant scalar, into a
 * float result of input 0's shape (the lowering's mask, docs/tpu.md): the function unit's
 * x ∘ alpha, 1 or 0 — the comparison the reference makes in f32 (ops/math_binary.c). */
static bool compare_fn(const ct_op *op, int *f, double *al) {
  const ct_value *x = op->n_in == 2 ? op->in[0] : NULL, *k = x ? op->in[1] : NULL, *y = op->out[0];
  if (!x || !k || !k->data || ct_tensor_numel(k->data) != 1 || ct_value_is_const(x) || !ct_dtype_is_float(x->dtype) ||
      !ct_dtype_is_float(y->dtype) || x->ndim != y->ndim || memcmp(x->shape, y->shape, sizeof *x->shape * (size_t)x->ndim))
    return false;
  *al = ct_tensor_get_f64(k->data, 0);
  *f = op->kind == CT_OP_GREATER ? CT_QUANT_FN_GT : op->kind == CT_OP_GREATEROREQUAL ? CT_QUANT_FN_GE
       : op->kind == CT_OP_LESS ? CT_QUANT_FN_LT : CT_QUANT_FN_LE;
  return true;
}

/* The function-unit code of a float activation op and its parameters (those of the Top
 * kernel, ops/math_unary.c un_params); false for other ops. */
static bool fn_of(const ct_op *op, int *f, double *al, double *be) {
  *al = 0, *be = 0;
  switch (op->kind) {
  case CT_OP_GREATER: case CT_OP_GREATEROREQUAL: case CT_OP_LESS: case CT_OP_LESSOREQUAL: return compare_fn(op, f, al);
  case CT_OP_EXP: *f = CT_QUANT_FN_EXP; return true;
  case CT_OP_SIGMOID: *f = CT_QUANT_FN_SIGMOID; return true;
  case CT_OP_SILU: *f = CT_QUANT_FN_SILU; return true;
  case CT_OP_TANH: *f = CT_QUANT_FN_TANH; return true;
  case CT_OP_HARDSWISH: *f = CT_QUANT_FN_HSWISH; return true;
  case CT_OP_HARDSIGMOID:
    *f = CT_QUANT_FN_HSIGMOID, *al = ct_attr_hardsigmoid_alpha(op), *be = ct_attr_hardsigmoid_beta(op);
    return true;
  case CT_OP_LEAKYRELU: *f = CT_QUANT_FN_LEAKY, *al = ct_attr_leakyrelu_alpha(op); return true;
  case CT_OP_GELU: *f = strcmp(ct_attr_gelu_approximate(op), "tanh") ? CT_QUANT_FN_GELU : CT_QUANT_FN_GELU_TANH; return true;
  case CT_OP_SOFTPLUS: *f = CT_QUANT_FN_SOFTPLUS; return true;
  case CT_OP_MISH: *f = CT_QUANT_FN_MISH; return true;
  case CT_OP_ELU: *f = CT_QUANT_FN_ELU, *al = ct_attr_elu_alpha(op); return true;
  case CT_OP_SELU: *f = CT_QUANT_FN_SELU, *al = ct_attr_selu_alpha(op), *be = ct_attr_selu_gamma(op); return true;
  case CT_OP_CELU: *f = CT_QUANT_FN_CELU, *al = ct_attr_celu_alpha(op); return true;
  case CT_OP_SOFTSIGN: *f = CT_QUANT_FN_SOFTSIGN; return true;
  case CT_OP_LOG: *f = CT_QUANT_FN_LOG; return true;
  case CT_OP_SQRT: *f = CT_QUANT_FN_SQRT; return true;
  case CT_OP_RECIPROCAL: *f = CT_QUANT_FN_RECIP; return true;
  case CT_OP_ERF: *f = CT_QUANT_FN_ERF; return true;
  default: return false;
  }
}

/* A float activation: one EXP (the function unit) with its code; parameters must be f32
 * values (the instruction holds f32, the reference computes with the attribute's double). */
static ct_status emit_fn(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box by;
  int f;
  double al, be;
  if (!ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "rank above 4", d);
  if (!fn_of(op, &f, &al, &be)) return ct_cg_no_cg(op, NULL, d);
  if ((double)(float)al != al || (double)(float)be != be) return ct_cg_no_cg(op, "an activation parameter that is not an f32 value", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_EXP;
  in.exp.in = ct_cg_lmem_of(c->gr, x), in.exp.out = ct_cg_lmem_of(c->gr, y);
  if (in.exp.in < 0 || in.exp.out < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  box bx;
  ct_status st = ct_cg_box_of(c, x, &bx) ? ct_cg_fit_rows(c, op, x, &bx, &by, &in.exp.in, t, d) : ct_cg_no_cg(op, "rank above 4", d);
  if (st) return st;
  in.exp.n = by.ext[0], in.exp.c = by.ext[1], in.exp.h = by.ext[2], in.exp.w = by.ext[3];
  in.exp.dt_in = x->dtype, in.exp.dt_out = y->dtype, in.exp.func = f, in.exp.alpha = (float)al, in.exp.beta = (float)be;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

bool ct_cg_float_ok(const ct_op *op) {
  switch (op->kind) {
  case CT_OP_CAST:
  case CT_OP_SOFTMAX:
  case CT_OP_LAYERNORM:
  case CT_OP_TRANSPOSE:
  case CT_OP_CONCAT:
  case CT_OP_SLICE:
  case CT_OP_SPLIT:
  case CT_OP_PAD: /* zero bytes, then a MOVE (cg_data.c emit_pad) */
  case CT_OP_MAXPOOL: /* a float POOL (max: a selection, exact in any float type) */
  case CT_OP_GLOBALMAXPOOL:
  case CT_OP_AVERAGEPOOL: /* float POOL mean: summed in double, as the reference */
  case CT_OP_GLOBALAVERAGEPOOL:
  case CT_OP_REDUCEMEAN:
  case CT_OP_CONV: /* float CONV / DWCONV / MATMUL in the ISA's order (ops/kernel.h) */
  case CT_OP_CONVTRANSPOSE:
  case CT_OP_GEMM:
  case CT_OP_MATMUL:
  case CT_OP_ADD: /* float ELTWISE: one f32 operation, rounded once */
  case CT_OP_SUB:
  case CT_OP_MUL:
  case CT_OP_DIV:
  case CT_OP_MAX: /* NaN wins on both sides */
  case CT_OP_MIN:
  case CT_OP_RELU:
  case CT_OP_CLIP:
  case CT_OP_RESIZE: return true;
  default: return ct_cg_float_fn(op); /* the function unit (EXP func) */
  }
}

bool ct_cg_float_fn(const ct_op *op) {
  int f;
  double al, be;
  return fn_of(op, &f, &al, &be);
}

ct_status ct_cg_emit_float(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  (void)li;
  switch (op->kind) {
  case CT_OP_CAST: return emit_cast(c, op, t, d);
  case CT_OP_SOFTMAX: return emit_softmax(c, op, t, d);
  case CT_OP_LAYERNORM: return emit_layernorm(c, op, li, t, d);
  case CT_OP_RELU:
  case CT_OP_CLIP: return emit_clamp(c, op, t, d);
  default: return emit_fn(c, op, t, d);
  }
}
