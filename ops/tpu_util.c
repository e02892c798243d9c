/* tpu_util.c: attribute and type helpers of the integer Tpu kernels, the LUT form of Top
 * activations and the per-channel activation test shared by calibration and lowering (tpu_util.h). */
#include <string.h>

#include "ops/ops_util.h"
#include "ops/tpu_util.h"
#include "common/clones.h"

bool ct_tq_is_storage(ct_dtype dt) {
  return dt == CT_I8 || dt == CT_U8 || dt == CT_I16 || dt == CT_U16 || dt == CT_I32;
}

/* One loop per storage type: the loads are then plain typed arrays that compilers vectorize
 * (CT_CLONES_V3). */
#define GET_ROW(D)                                                                      \
  switch (t->dtype) {                                                                   \
  case CT_I8: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const int8_t *)t->data)[off + i] - z); break;    \
  case CT_U8: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const uint8_t *)t->data)[off + i] - z); break;   \
  case CT_I16: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const int16_t *)t->data)[off + i] - z); break;  \
  case CT_U16: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const uint16_t *)t->data)[off + i] - z); break; \
  case CT_I32: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const int32_t *)t->data)[off + i] - z); break;  \
  default: for (int64_t i = 0; i < n; i++) dst[i] = (D)(0 - z); break;                 \
  }

CT_CLONES_V3 static void ct_tq_get_row_i32_clones(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int32_t *dst) {
  GET_ROW(int32_t)
}

void ct_tq_get_row_i32(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int32_t *dst) {
  ct_tq_get_row_i32_clones(t, off, n, z, dst);
}

CT_CLONES_V3 static void ct_tq_get_row_i16_clones(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int16_t *dst) {
  GET_ROW(int16_t)
}

void ct_tq_get_row_i16(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int16_t *dst) {
  ct_tq_get_row_i16_clones(t, off, n, z, dst);
}
#undef GET_ROW

ct_status ct_tq_act(const ct_op *op, ct_quant_act *act, int32_t *hi, ct_diag *d) {
  const char *a = ct_op_get_string(op, "act", "none");
  *hi = (int32_t)ct_op_get_int(op, "qact_hi", 127);
  if (!strcmp(a, "none")) *act = CT_QUANT_ACT_NONE;
  else if (!strcmp(a, "relu")) *act = CT_QUANT_ACT_RELU;
  else if (!strcmp(a, "clip") || !strcmp(a, "relu6")) *act = CT_QUANT_ACT_CLAMP;
  else return ct_ops_err(d, CT_ERR_INPUT, op, "fused activation \"%s\" has no integer form", a);
  return CT_OK;
}

ct_status ct_tq_rq(const ct_op *op, int64_t n, int32_t *m, int *s, ct_diag *d) {
  int nm = 0, ns = 0;
  const int64_t *mv = ct_op_get_ints(op, "multiplier", &nm);
  const int64_t *sv = ct_op_get_ints(op, "rshift", &ns);
  if (!mv || !sv || nm != ns || (nm != n && nm != 1))
    return ct_ops_err(d, CT_ERR_INPUT, op, "needs multiplier and rshift with %lld (or 1) entries, has %d and %d",
                     (long long)n, nm, ns);
  for (int64_t i = 0; i < n; i++) {
    int64_t mm = mv[nm == 1 ? 0 : i], ss = sv[nm == 1 ? 0 : i];
    if (ss < 0 || ss > 63 || mm < INT32_MIN || mm > INT32_MAX)
      return ct_ops_err(d, CT_ERR_INPUT, op, "requant entry %lld (%lld, %lld) out of range", (long long)i,
                       (long long)mm, (long long)ss);
    m[i] = (int32_t)mm;
    s[i] = (int)ss;
  }
  return CT_OK;
}

ct_status ct_tq_need_int(const ct_op *op, ct_tensor *const *in, ct_tensor **out, int n_in, ct_diag *d) {
  for (int i = 0; i < n_in; i++)
    if (in[i] && !ct_tq_is_storage(in[i]->dtype))
      return ct_ops_err(d, CT_ERR_INPUT, op, "input %d is %s, the integer kernel needs integer storage", i,
                       ct_dtype_name(in[i]->dtype));
  for (int i = 0; i < op->n_out; i++)
    if (out[i] && !ct_tq_is_storage(out[i]->dtype))
      return ct_ops_err(d, CT_ERR_INPUT, op, "output %d is %s, the integer kernel needs integer storage", i,
                       ct_dtype_name(out[i]->dtype));
  return CT_OK;
}

/* Per-channel LUT tables are read whole by every LUT instruction (256 bytes per channel):
 * worth it only where a channel has at least as many elements per image. */
#define CHANNEL_LUT_MIN_PLANE 256
/* Folding channel scales into an ordinary Conv's weights trades weight precision for
 * channel ranges measured per channel: only where a channel has this many elements per
 * image, so that its calibrated max is a statistic (an SE block's 1×1 tensors have one
 * sample per image: PP-OCRv4 det 0.977 → 0.935 with them folded; MobileNetV2's 14×14 and
 * 7×7 projections gain, agreement 0.966 → 0.970). */
#define CHANNEL_FOLD_MIN_PLANE 16

/* Is op a LUT activation that may use one table per channel of its 4-D input v? */
static bool channel_lut(const ct_op *op, const ct_value *v) {
  ct_quant_lut_spec sp;
  return op->n_in == 1 && op->n_out == 1 && op->in[0] == v && v->shape[2] * v->shape[3] >= CHANNEL_LUT_MIN_PLANE &&
         ct_tq_lut_spec(op, &sp);
}

/* A reader of v that takes it per channel: a depthwise Conv reading v as its data input
 * only (group = C_in = C_out), an ordinary Conv (group 1) with constant f32 weights reading
 * v as its data input only (the lowering folds the channel scales into the weights), or a
 * LUT activation of v (one table per channel). */
static bool channel_reader(const ct_op *op, const ct_value *v) {
  if (op->n_in < 1 || op->in[0] != v || op->n_out < 1 || !op->out[0] || op->out[0]->ndim != 4) return false;
  if (channel_lut(op, v)) return true;
  if (op->kind != CT_OP_CONV) return false;
  for (int k = 1; k < op->n_in; k++)
    if (op->in[k] == v) return false;
  int64_t c = v->shape[1];
  if (ct_op_get_int(op, "group", 1) == 1) return v->shape[2] * v->shape[3] >= CHANNEL_FOLD_MIN_PLANE && ct_tq_folds_channels(op, v);
  return ct_op_get_int(op, "group", 1) == c && op->out[0]->shape[1] == c && c > 1;
}

bool ct_tq_folds_channels(const ct_op *op, const ct_value *v) {
  if (op->kind != CT_OP_CONV || op->n_in < 2 || op->in[0] != v || v->ndim != 4 || v->shape[1] < 2 ||
      ct_op_get_int(op, "group", 1) != 1)
    return false;
  for (int k = 1; k < op->n_in; k++)
    if (op->in[k] == v) return false;
  const ct_value *w = op->in[1];
  return ct_value_is_const(w) && w->data && w->data->dtype == CT_F32 && w->ndim == 4 && w->shape[1] == v->shape[1];
}

bool ct_tq_channel_act(const ct_graph *g, const ct_value *v) {
  const ct_op *p = v ? v->def : NULL;
  if (!p || v->ndim != 4 || p->out[0] != v) return false;
  if (p->kind != CT_OP_CONV && !(p->in[0] && p->in[0]->ndim == 4 && channel_lut(p, p->in[0]) && ct_tq_channel_act(g, p->in[0])))
    return false;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return false;
  int readers = 0;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    bool reads = false;
    for (int k = 0; !op->dead && k < op->n_in; k++) reads = reads || op->in[k] == v;
    if (reads && !channel_reader(op, v)) return false;
    readers += reads;
  }
  return readers > 0;
}

bool ct_tq_lut_spec(const ct_op *op, ct_quant_lut_spec *sp) {
  static const struct { ct_op_kind k; ct_quant_lut_fn fn; } map[] = {
    {CT_OP_SIGMOID, CT_QUANT_LUT_SIGMOID}, {CT_OP_TANH, CT_QUANT_LUT_TANH}, {CT_OP_SILU, CT_QUANT_LUT_SILU},
    {CT_OP_HARDSIGMOID, CT_QUANT_LUT_HARDSIGMOID}, {CT_OP_HARDSWISH, CT_QUANT_LUT_HARDSWISH}, {CT_OP_GELU, CT_QUANT_LUT_GELU},
    {CT_OP_EXP, CT_QUANT_LUT_EXP}, {CT_OP_LOG, CT_QUANT_LUT_LOG}, {CT_OP_SQRT, CT_QUANT_LUT_SQRT},
    {CT_OP_RECIPROCAL, CT_QUANT_LUT_RECIPROCAL}, {CT_OP_LEAKYRELU, CT_QUANT_LUT_LEAKYRELU}, {CT_OP_ELU, CT_QUANT_LUT_ELU},
    {CT_OP_SOFTPLUS, CT_QUANT_LUT_SOFTPLUS}, {CT_OP_MISH, CT_QUANT_LUT_MISH}, {CT_OP_ABS, CT_QUANT_LUT_ABS},
    {CT_OP_RELU, CT_QUANT_LUT_LEAKYRELU},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
    if (map[i].k != op->kind) continue;
    *sp = ct_quant_lut_default(map[i].fn);
    if (op->kind == CT_OP_RELU) sp->alpha = 0;
    else if (op->kind == CT_OP_HARDSIGMOID) sp->alpha = ct_attr_hardsigmoid_alpha(op), sp->beta = ct_attr_hardsigmoid_beta(op);
    else if (op->kind == CT_OP_LEAKYRELU) sp->alpha = ct_attr_leakyrelu_alpha(op);
    else if (op->kind == CT_OP_ELU) sp->alpha = ct_attr_elu_alpha(op);
    else if (op->kind == CT_OP_GELU && !strcmp(ct_op_get_string(op, "approximate", "none"), "tanh")) sp->fn = CT_QUANT_LUT_GELU_TANH;
    return true;
  }
  return false;
}

