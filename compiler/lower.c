/* lower.c: the Top → Tpu lowering driver (lower.h, docs/tpu.md): per op, the mode (quantize
 * table, else the --quantize mode), the INT8 form where it exists (lower_ops*.c) else float;
 * activation parameters from QDQ pairs or the calibration table; Cast ops at the borders
 * between quantized and float values (TPU-MLIR's TopToTpu with its cast insertion). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"
#include "compiler/pass.h"

bool ct_lower_is_q(const ct_value *v) {
  return v && v->n_scale > 0 && !ct_dtype_is_float(v->dtype);
}

/* The input interval outside which op's function is constant to within 0.003 (its LUT
 * saturates there): SiLU x < −8, Sigmoid |x| > 8, Tanh |x| > 4, HardSigmoid outside
 * [−beta/alpha, (1−beta)/alpha], HardSwish x < −3, Relu x < 0. False for other ops. */
static bool saturating_range(const ct_op *op, double *lo, double *hi) {
  double a, b;
  switch (op->kind) {
  case CT_OP_SILU: *lo = -8, *hi = INFINITY; return true;
  case CT_OP_SIGMOID: *lo = -8, *hi = 8; return true;
  case CT_OP_TANH: *lo = -4, *hi = 4; return true;
  case CT_OP_HARDSWISH: *lo = -3, *hi = INFINITY; return true;
  case CT_OP_RELU: *lo = 0, *hi = INFINITY; return true;
  case CT_OP_HARDSIGMOID:
    a = ct_attr_hardsigmoid_alpha(op), b = ct_attr_hardsigmoid_beta(op);
    if (!(a > 0)) return false;
    *lo = -b / a, *hi = (1 - b) / a;
    return true;
  default: return false;
  }
}

/* When every reader of v is a saturating activation (and v is no module output), the union
 * of their non-constant input intervals: calibrating v beyond it only costs resolution where
 * the LUT reads (docs/tpu.md "LUT-aware ranges"). */
static bool consumers_range(const ct_graph *g, const ct_value *v, double *lo, double *hi) {
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == v) return false;
  bool any = false;
  double l = INFINITY, h = -INFINITY;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    for (int k = 0; !op->dead && k < op->n_in; k++) {
      if (op->in[k] != v) continue;
      double a, b;
      if (k != 0 || !saturating_range(op, &a, &b)) return false;
      l = fmin(l, a), h = fmax(h, b), any = true;
    }
  }
  if (any) *lo = l, *hi = h;
  return any;
}

/* ct_lower_param_of with the asymmetric choice given (asym) instead of the options'. */
static ct_status param_of(ct_lower_ctx *c, const ct_value *v, bool asym, ct_quant_param *p) {
  if (ct_lower_is_q(v) && v->n_scale > 1 && !ct_value_is_const(v)) /* ct_lower_channel_act's readers never ask */
    return ct_diag_set(c->d, CT_ERR_INTERNAL, "lower: per-tensor parameters asked of the per-channel activation \"%s\"", v->name);
  if (ct_lower_is_q(v)) {
    *p = (ct_quant_param){v->scale[0], v->zero_point[0], v->dtype};
    return CT_OK;
  }
  if (v->id < c->n0 && c->has_forced[v->id]) {
    *p = c->forced[v->id];
    return CT_OK;
  }
  const ct_calib_row *r = c->o->calib ? ct_calib_table_find(c->o->calib, v->name) : NULL;
  if (!r) return ct_diag_set(c->d, CT_ERR_INPUT, "tensor \"%s\" is not in the calibration table", v->name);
  double lo = r->min, hi = r->max, th = r->threshold;
  if (c->o->mode == CT_QMODE_INT8 && consumers_range(c->g, v, &lo, &hi)) {
    lo = fmax(lo, r->min), hi = fmin(hi, r->max);
    if (lo > hi) lo = hi = fmax(fmin(r->max, 0), r->min);
    th = fmin(th, fmax(fabs(lo), fabs(hi)));
  }
  if (!ct_quant_param_calib(th, lo, hi, asym, !c->o->no_unsigned, p))
    return ct_diag_set(c->d, CT_ERR_INPUT, "calibration table: tensor \"%s\": invalid row", v->name);
  /* an f32 value (as QDQ models' scales are): the ISA's CAST carries its scale as f32, so a
   * Cast between the tensor and f32 is then exactly what the Tpu reference computes */
  float sf = (float)p->scale;
  if (sf > 0 && isfinite(sf)) p->scale = sf;
  return CT_OK;
}

ct_status ct_lower_param_of(ct_lower_ctx *c, const ct_value *v, ct_quant_param *p) {
  return param_of(c, v, c->o->asymmetric, p);
}

ct_status ct_lower_param_sym(ct_lower_ctx *c, const ct_value *v, ct_quant_param *p) {
  return param_of(c, v, false, p);
}

bool ct_lower_lut16_param(ct_lower_ctx *c, const ct_value *v, ct_quant_param *p) {
  if (!c->o->lut16 || c->o->mode != CT_QMODE_INT8 || (v->id < c->n0 && c->has_forced[v->id])) return false;
  const ct_calib_row *r = c->o->calib ? ct_calib_table_find(c->o->calib, v->name) : NULL;
  ct_quant_param p8;
  if (!r || ct_lower_param_of(c, v, &p8) || p8.zp != 0) return false;
  double range = p8.scale * (double)ct_quant_max(p8.dt);
  if (!(range > 0) || !isfinite(range)) return false;
  *p = (ct_quant_param){range / 32767.0, 0, CT_I16};
  return true;
}

ct_status ct_lower_set_q(ct_lower_ctx *c, ct_value *v, ct_quant_param p) {
  ct_value_set_type(v, p.dt, v->ndim, v->shape);
  if (!ct_value_set_quant(c->g, v, 1, &p.scale, &p.zp, 0)) return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory");
  return CT_OK;
}

/* A Cast of v to a new value of dtype dt named "<v>_to_<dt>". */
static ct_value *add_cast(ct_lower_ctx *c, ct_value *v, ct_dtype dt) {
  char name[512];
  snprintf(name, sizeof name, "%s_to_%s", v->name, ct_dtype_name(dt));
  ct_value *nv = ct_graph_add_value(c->g, name, dt, v->ndim, v->shape);
  ct_op *op = nv ? ct_graph_add_op(c->g, CT_OP_CAST, name, 1, &v, 1, &nv) : NULL;
  if (!op || !ct_attr_set_cast_to(c->g, op, ct_dtype_to_onnx(dt))) return NULL;
  return nv;
}

ct_status ct_lower_ensure_int(ct_lower_ctx *c, ct_value *v, ct_value **out) {
  *out = NULL;
  if (ct_lower_is_q(v)) return *out = v, CT_OK;
  if (v->id < c->n0 && c->to_int[v->id]) return *out = c->to_int[v->id], CT_OK;
  ct_quant_param p;
  ct_status st = ct_lower_param_of(c, v, &p);
  if (st) return st;
  ct_value *nv = add_cast(c, v, p.dt);
  if (!nv) return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory");
  if ((st = ct_lower_set_q(c, nv, p))) return st;
  if (v->id < c->n0) c->to_int[v->id] = nv;
  return *out = nv, CT_OK;
}

/* Slot of float type dt in the to_float caches. */
static int float_slot(ct_dtype dt) { return dt == CT_BF16 ? 0 : dt == CT_F16 ? 1 : 2; }

ct_status ct_lower_as_float(ct_lower_ctx *c, ct_value *v, ct_dtype dt, ct_value **out) {
  *out = NULL;
  if (v->dtype == dt && !ct_lower_is_q(v)) return *out = v, CT_OK;
  if (ct_lower_is_q(v) && v->n_scale > 1 && v->ndim > 0 && v->def && v->def->kind != CT_OP_WEIGHT) /* ct_lower_channel_act rules it out */
    return ct_diag_set(c->d, CT_ERR_INTERNAL, "lower: the per-channel activation \"%s\" would need a float Cast", v->name);
  ct_value **cache = v->id < c->n0 ? &c->to_float[float_slot(dt)][v->id] : NULL;
  if (cache && *cache) return *out = *cache, CT_OK;
  ct_value *nv = add_cast(c, v, dt);
  if (!nv) return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory");
  if (cache) *cache = nv;
  return *out = nv, CT_OK;
}

ct_status ct_lower_ensure_float(ct_lower_ctx *c, ct_value *v, ct_dtype dt, ct_value **out) {
  if (!ct_lower_is_q(v)) return *out = v, CT_OK;
  return ct_lower_as_float(c, v, dt, out);
}

float *ct_lower_const_f32(const ct_value *v, int64_t *n) {
  if (!v) return NULL;
  const ct_op *dq = v->def;
  bool is_dq = !v->data && dq && dq->kind == CT_OP_DEQUANTIZELINEAR && ct_value_is_const(dq->in[0]) &&
               ct_value_is_const(dq->in[1]) && (dq->n_in < 3 || !dq->in[2] || ct_value_is_const(dq->in[2]));
  if (!v->data && !is_dq) return NULL;
  const ct_tensor *t = is_dq ? dq->in[0]->data : v->data;
  *n = ct_tensor_numel(t);
  float *f = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *f);
  if (!f) return NULL;
  if (!is_dq) {
    for (int64_t i = 0; i < *n; i++) f[i] = (float)ct_tensor_get_f64(t, i);
    return f;
  }
  const ct_tensor *s = dq->in[1]->data, *z = dq->n_in > 2 && dq->in[2] ? dq->in[2]->data : NULL;
  int64_t ns = ct_tensor_numel(s), axis = ct_attr_qdq_axis(dq), inner = 1;
  if (axis < 0) axis += t->ndim;
  for (int k = (int)axis + 1; k < t->ndim; k++) inner *= t->shape[k];
  for (int64_t i = 0; i < *n; i++) {
    int64_t ch = ns > 1 ? (i / inner) % ns : 0;
    double zp = z ? ct_tensor_get_f64(z, ch) : 0;
    f[i] = (float)((ct_tensor_get_f64(t, i) - zp) * ct_tensor_get_f64(s, ch));
  }
  return f;
}

/* QDQ models (INT8): every y = DequantizeLinear(QuantizeLinear(x, s, zp), s, zp) on an
 * activation x gives x the parameters (s, zp, the Q's type); uses of y become uses of x and
 * the pair dies. x takes y's name (the first pair's, when x has several): the quantized
 * value is what y is in the float model, so `ctpu compare` of a Top dump with a Tpu dump
 * pairs it with y, not with the float x before the model's own quantization. Weight
 * DequantizeLinear ops (constant int inputs) are left for the ops that read them (their int
 * initializers are used as they are). */
static ct_status strip_qdq(ct_lower_ctx *c) {
  bool *renamed = calloc((size_t)c->n0 + 1, sizeof *renamed);
  if (!renamed) return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory");
  for (int i = 0; i < c->g->n_ops; i++) {
    ct_op *dq = c->g->ops[i];
    if (dq->dead || dq->kind != CT_OP_DEQUANTIZELINEAR) continue;
    ct_op *q = dq->in[0]->def;
    if (!q || q->kind != CT_OP_QUANTIZELINEAR || ct_value_is_const(q->in[0])) continue;
    const ct_value *sv = dq->in[1], *zv = dq->n_in > 2 ? dq->in[2] : NULL;
    if (!ct_value_is_const(sv) || ct_value_numel(sv) != 1 || (zv && !ct_value_is_const(zv))) continue;
    ct_value *x = q->in[0], *qv = dq->in[0];
    ct_quant_param p = {ct_tensor_get_f64(sv->data, 0), zv ? (int32_t)ct_tensor_get_f64(zv->data, 0) : 0, qv->dtype};
    if (!(p.scale > 0) || (p.dt != CT_I8 && p.dt != CT_U8)) continue;
    if (x->id < c->n0 && !c->has_forced[x->id]) c->forced[x->id] = p, c->has_forced[x->id] = true;
    bool out = false;
    for (int k = 0; k < c->g->n_outputs; k++) out |= c->g->outputs[k] == dq->out[0];
    if (out || (x->id < c->n0 && !renamed[x->id] && !(x->def && x->def->kind == CT_OP_INPUT))) {
      const char *nm = x->name; /* a module output keeps its name */
      x->name = dq->out[0]->name, dq->out[0]->name = nm;
      if (x->id < c->n0) renamed[x->id] = true;
    }
    ct_graph_replace_uses(c->g, dq->out[0], x);
  }
  free(renamed);
  return CT_OK;
}

/* Removes ops (not Input) none of whose results is used, to a fixed point. */
static void remove_unused(ct_graph *g) {
  for (bool again = true; again;) {
    again = false;
    for (int i = g->n_ops - 1; i >= 0; i--) {
      ct_op *op = g->ops[i];
      if (op->dead || op->kind == CT_OP_INPUT) continue;
      bool used = false;
      for (int k = 0; k < op->n_out && !used; k++) used = op->out[k] && ct_graph_count_uses(g, op->out[k]) > 0;
      if (!used) ct_graph_erase_op(g, op), again = true;
    }
  }
}

static ct_dtype mode_dtype(ct_qmode m) {
  return m == CT_QMODE_BF16 ? CT_BF16 : m == CT_QMODE_F16 ? CT_F16 : CT_F32;
}

ct_qmode ct_lower_op_mode(const ct_lower_ctx *c, const ct_op *op) {
  const ct_qtable *q = c->o->qtable;
  const ct_qtable_row *r = q && op->loc ? ct_qtable_find(q, op->loc) : NULL;
  for (int k = 0; q && !r && k < op->n_out; k++)
    if (op->out[k]) r = ct_qtable_find(q, op->out[k]->name);
  return r ? r->mode : c->o->mode;
}

static ct_status check_qtable(const ct_lower_ctx *c) {
  const ct_qtable *q = c->o->qtable;
  for (int64_t i = 0; q && i < q->n; i++) {
    bool found = ct_graph_find_value(c->g, q->rows[i].name) != NULL;
    for (int k = 0; !found && k < c->g->n_ops; k++)
      found = !c->g->ops[k]->dead && c->g->ops[k]->loc && !strcmp(c->g->ops[k]->loc, q->rows[i].name);
    if (!found)
      return ct_diag_set(c->d, CT_ERR_INPUT, "quantize table: line %d: no op or tensor named \"%s\"", q->rows[i].line,
                         q->rows[i].name);
  }
  return CT_OK;
}

static bool is_mac(ct_op_kind k) {
  return k == CT_OP_CONV || k == CT_OP_CONVTRANSPOSE || k == CT_OP_GEMM || k == CT_OP_MATMUL;
}

/* Is operand k of op data that op only moves (a constant there is stored like the result:
 * a ViT's class token concatenated with the patch embeddings)? */
static bool moved_operand(const ct_op *op, int k) {
  switch (op->kind) {
  case CT_OP_CONCAT: return true;
  case CT_OP_SLICE: case CT_OP_TRANSPOSE: case CT_OP_RESHAPE: case CT_OP_FLATTEN: case CT_OP_SQUEEZE:
  case CT_OP_UNSQUEEZE: return k == 0;
  default: return false;
  }
}

bool ct_lower_only_output(const ct_graph *g, const ct_value *y) {
  int n = 0;
  for (int i = 0; i < g->n_outputs; i++) n += g->outputs[i] == y;
  return n > 0 && ct_graph_count_uses(g, y) == n;
}

/* Does op only move the data of its input 0 (its other inputs are indices, shapes or a pad
 * value)? In a float lowering such an op keeps input 0's float type: the back end moves
 * bytes (GMEM views, MOVEs) and converts nothing (docs/tpu.md "Borders"). */
static bool keeps_type(const ct_op *op) {
  switch (op->kind) {
  case CT_OP_RESHAPE: case CT_OP_FLATTEN: case CT_OP_SQUEEZE: case CT_OP_UNSQUEEZE: case CT_OP_TRANSPOSE:
  case CT_OP_SLICE: case CT_OP_SPLIT: case CT_OP_PAD: case CT_OP_DEPTHTOSPACE: case CT_OP_SPACETODEPTH:
  case CT_OP_IDENTITY: return true;
  case CT_OP_RESIZE: return !strcmp(ct_attr_resize_mode(op), "nearest");
  default: return false;
  }
}

/* Is v the f32 module input, or data-movement ops' (keeps_type) view of it? */
static bool f32_input(const ct_value *v) {
  while (v && v->dtype == CT_F32 && v->def && keeps_type(v->def)) v = v->def->in[0];
  return v && v->dtype == CT_F32 && v->n_scale == 0 && v->def && v->def->kind == CT_OP_INPUT;
}

/* Does op read the f32 module input (or a view of it: f32_input)? In a BF16 / F16 lowering it
 * then computes in f32 (its weights stay f32) and rounds only its result to the mode's type:
 * the image is not rounded to 8 or 11 bits before the first layer (PP-OCRv4 rec BF16: cosine
 * 0.9960 with the input rounded to bf16, 0.9999 without). */
static bool reads_f32_input(const ct_op *op) {
  for (int k = 0; k < op->n_in; k++)
    if (f32_input(op->in[k])) return true;
  return false;
}

/* Operand k of a MAC op that is an activation (its data input, or a MatMul / Gemm operand
 * that is no constant). */
static bool mac_act_operand(const ct_op *op, int k) {
  return is_mac(op->kind) && (k == 0 || (k == 1 && (op->kind == CT_OP_MATMUL || op->kind == CT_OP_GEMM) && !ct_value_is_const(op->in[1]) &&
                                         !(op->in[1]->def && op->in[1]->def->kind == CT_OP_DEQUANTIZELINEAR)));
}

/* Operand k of op in float type ft (the op's compute type ct for a MAC's activations, whose
 * type must be the weights' — isa: float weights have the input type): quantized operands
 * dequantized by a Cast, a MAC activation of another float type rounded or widened by a
 * Cast; constant MAC weights and constant moved data stored as ft (rounded once, as the
 * result would be) unless op computes in f32 (at_input). */
static ct_status float_operand(ct_lower_ctx *c, ct_op *op, int k, ct_dtype ft, bool at_input, ct_value **out) {
  ct_value *v = op->in[k];
  ct_dtype ct = at_input ? CT_F32 : ft;
  ct_status st = mac_act_operand(op, k) ? ct_lower_as_float(c, v, ct, out) : ct_lower_ensure_float(c, v, ft, out);
  bool mac_weight = is_mac(op->kind) && k == 1;
  if (!st && ft != CT_F32 && !at_input && (mac_weight || moved_operand(op, k)) && v->data && v->data->dtype == CT_F32) {
    ct_tensor *t = ct_tensor_cast(v->data, ft);
    char name[512];
    snprintf(name, sizeof name, "%s_%s", v->name, ct_dtype_name(ft));
    if (!t || !(*out = ct_graph_add_weight(c->g, name, t))) return ct_diag_set(c->d, CT_ERR_LIMIT, "lower: out of memory");
  }
  return st;
}

/* Is op a comparison (Greater, GreaterOrEqual, Less, LessOrEqual) of a float or quantized
 * activation with a constant scalar, whose result only float Casts read (a mask)? Then the
 * activation becomes operand 0 (k > x is x < k) and the result, 0 or 1, takes the float type
 * (the function unit's comparison, docs/codegen_ops.md). */
static bool float_mask(ct_lower_ctx *c, ct_op *op) {
  static const ct_op_kind kind[4] = {CT_OP_GREATER, CT_OP_GREATEROREQUAL, CT_OP_LESS, CT_OP_LESSOREQUAL};
  int i = 0;
  while (i < 4 && op->kind != kind[i]) i++;
  if (i == 4 || op->n_in != 2 || !op->in[0] || !op->in[1] || !ct_lower_read_as_float(c->g, op->out[0])) return false;
  if (ct_value_is_const(op->in[0]) && !ct_value_is_const(op->in[1])) { /* mirrored: k ∘ x is x ∘' k */
    ct_value *t = op->in[0];
    op->in[0] = op->in[1], op->in[1] = t, op->kind = kind[(i + 2) % 4];
  }
  const ct_value *x = op->in[0], *k = op->in[1];
  return !ct_value_is_const(x) && (ct_dtype_is_float(x->dtype) || ct_lower_is_q(x)) && ct_value_is_const(k) &&
         ct_value_numel(k) == 1 && x->ndim == op->out[0]->ndim;
}

/* Float form of op in type ft (float_operand for its operands). f32 results become ft — a
 * data-movement op (keeps_type) reading a float activation gives its results that
 * activation's type instead; a mask (float_mask) is ft too. */
static ct_status lower_float(ct_lower_ctx *c, ct_op *op, ct_dtype ft) {
  bool mask = float_mask(c, op), at_input = reads_f32_input(op);
  for (int k = 0; k < op->n_in; k++) {
    ct_value *nv;
    if (!op->in[k]) continue;
    ct_status st = float_operand(c, op, k, ft, at_input, &nv);
    if (st) return st;
    op->in[k] = nv;
  }
  const ct_value *x = op->n_in > 0 ? op->in[0] : NULL;
  ct_dtype rt = keeps_type(op) && x && ct_dtype_is_float(x->dtype) && !ct_value_is_const(x) ? x->dtype : ft;
  /* a MAC result that only leaves the module keeps its f32 accumulator (as INT8 keeps the
   * int32 one: docs/quant.md "Module outputs at accumulator precision") */
  bool keep = (op->kind == CT_OP_GEMM || op->kind == CT_OP_MATMUL || op->kind == CT_OP_CONV) && op->n_out == 1 &&
              ct_lower_only_output(c->g, op->out[0]);
  for (int k = 0; k < op->n_out; k++) {
    ct_value *v = op->out[k];
    if (v && v->dtype == CT_F32 && rt != CT_F32 && !keep) ct_value_set_type(v, rt, v->ndim, v->shape);
  }
  if (mask) ct_value_set_type(op->out[0], ft, op->out[0]->ndim, op->out[0]->shape);
  return CT_OK;
}

static bool any_result_used(const ct_graph *g, const ct_op *op) {
  for (int k = 0; k < op->n_out; k++)
    if (op->out[k] && ct_graph_count_uses(g, op->out[k]) > 0) return true;
  return false;
}

static ct_status lower_ops(ct_lower_ctx *c) {
  int n = c->g->n_ops;
  for (int i = 0; i < n; i++) {
    ct_op *op = c->g->ops[i];
    if (op->dead || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || !any_result_used(c->g, op)) continue;
    ct_qmode m = ct_lower_op_mode(c, op);
    bool done = false;
    ct_status st = m == CT_QMODE_INT8 ? ct_lower_op_int8(c, op, &done) : CT_OK;
    if (!st && !done) st = lower_float(c, op, m == CT_QMODE_INT8 ? c->ftype : mode_dtype(m));
    if (st) return st;
  }
  return CT_OK;
}

static bool any_forced(const ct_lower_ctx *c) {
  for (int i = 0; i < c->n0; i++)
    if (c->has_forced[i]) return true;
  return false;
}

ct_status ct_lower(ct_graph *g, const ct_lower_options *o, ct_diag *d) {
  if (ct_graph_dialect(g) != CT_DIALECT_TOP) return ct_diag_set(d, CT_ERR_INPUT, "the module is not in the top dialect");
  int n_gemm = 0; /* every Gemm in the back end's form, alpha folded into a constant B (docs/tpu.md) */
  ct_status st0 = ct_gemm_canonicalize(g, true, &n_gemm, d);
  if (st0) return st0;
  ct_lower_ctx c = {.g = g, .o = o, .d = d, .n0 = g->n_values};
  c.ftype = o->mode == CT_QMODE_INT8 ? (o->float_fallback_f32 ? CT_F32 : CT_BF16) : mode_dtype(o->mode);
  size_t n = (size_t)(c.n0 > 0 ? c.n0 : 1);
  c.forced = calloc(n, sizeof *c.forced), c.has_forced = calloc(n, sizeof *c.has_forced);
  c.to_int = calloc(n, sizeof *c.to_int);
  bool ok = c.forced && c.has_forced && c.to_int;
  for (int k = 0; k < 3; k++) ok = (c.to_float[k] = calloc(n, sizeof *c.to_float[k])) && ok;
  ct_status st = ok ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "lower: out of memory");
  if (!st) st = check_qtable(&c);
  if (!st && o->mode == CT_QMODE_INT8) {
    st = strip_qdq(&c);
    if (!st && !o->calib && !any_forced(&c))
      st = ct_diag_set(d, CT_ERR_USAGE, "--quantize INT8 needs a calibration table (the model has no QDQ pairs)");
  }
  if (!st) st = lower_ops(&c);
  if (!st) {
    remove_unused(g);
    ct_graph_compact(g);
    st = ct_graph_toposort(g, d);
  }
  if (!st && !(g->dialect = ct_arena_strdup(&g->arena, "tpu"))) st = ct_diag_set(d, CT_ERR_LIMIT, "lower: out of memory");
  if (!st && o->chip && !(g->chip = ct_arena_strdup(&g->arena, o->chip))) st = ct_diag_set(d, CT_ERR_LIMIT, "lower: out of memory");
  free(c.forced), free(c.has_forced), free(c.to_int);
  for (int k = 0; k < 3; k++) free(c.to_float[k]);
  return st;
}
