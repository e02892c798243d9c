/* verify_tpu.c: the Tpu-dialect op checks of the verifier (ops/verify.h ct_tpu_verify_op):
 * what the Tpu reference kernels (ops/tpu_*.c), the layer-group planner and the codegen
 * assume of an op beyond the shapes and canonical attributes its Top shape function checks
 * (ir/verify.c): storage types, the requant attributes, the fused activation, Lut tables, and
 * that data movement keeps its operand's type. */
#include <string.h>

#include "ops/tpu_util.h"
#include "ops/verify.h"

#define OP_FMT "node \"%s\" (op %s): "
#define OP_ARGS(op) (op)->loc, ct_op_name((op)->kind)

/* Ops the reference runs with its integer kernel when quantized (ops.def's tpu column) that
 * read the requant attributes, and how many entries those hold (RQ_CHANNELS: 1 or one per
 * output channel; RQ_INPUTS: 1 or one per operand). */
enum { RQ_NONE, RQ_ONE, RQ_CHANNELS, RQ_INPUTS, RQ_ELTWISE };

static int rq_form(const ct_op *op) {
  switch (op->kind) {
  case CT_OP_CONV: case CT_OP_CONVTRANSPOSE: case CT_OP_GEMM: case CT_OP_MATMUL: return RQ_CHANNELS;
  case CT_OP_ADD: case CT_OP_SUB: case CT_OP_MUL: case CT_OP_MAX: case CT_OP_MIN: return RQ_ELTWISE;
  case CT_OP_CONCAT: return RQ_INPUTS;
  case CT_OP_AVERAGEPOOL: case CT_OP_GLOBALAVERAGEPOOL: case CT_OP_REDUCEMEAN: case CT_OP_REQUANT: return RQ_ONE;
  case CT_OP_CAST: return RQ_ONE; /* integer → integer only (checked by the caller) */
  default: return RQ_NONE;
  }
}

/* Ops whose Tpu form moves stored values without arithmetic (the dtype-generic Top kernels,
 * GMEM aliases or MOVEs in the back end): every result has operand 0's type, but for a float
 * op reading an f32 value (the reference rounds its f32 result to bf16 / f16; docs/tpu.md). */
static bool moves_data(ct_op_kind k) {
  switch (k) {
  case CT_OP_RESHAPE: case CT_OP_FLATTEN: case CT_OP_SQUEEZE: case CT_OP_UNSQUEEZE: case CT_OP_TRANSPOSE:
  case CT_OP_SLICE: case CT_OP_SPLIT: case CT_OP_PAD: case CT_OP_GLOBALMAXPOOL: case CT_OP_RESIZE:
  case CT_OP_DEPTHTOSPACE: case CT_OP_SPACETODEPTH: case CT_OP_IDENTITY:
    return true;
  default: return false;
  }
}

static bool runs_integer(const ct_op *op) {
  if (op->kind == CT_OP_CAST) return true;
  for (int j = 0; j < op->n_in; j++)
    if (op->in[j] && op->in[j]->n_scale > 0 && !ct_value_is_const(op->in[j])) return true;
  for (int j = 0; j < op->n_out; j++)
    if (op->out[j] && op->out[j]->n_scale > 0) return true;
  return false;
}

/* Output channels of a MAC op (the per-channel requant count). */
static int64_t out_channels(const ct_op *op) {
  const ct_value *y = op->out[0];
  if (op->kind == CT_OP_CONV || op->kind == CT_OP_CONVTRANSPOSE) return y->ndim >= 2 ? y->shape[1] : 1;
  return y->ndim >= 1 ? y->shape[y->ndim - 1] : 1;
}

/* multiplier / rshift of op: counts as rq_form says (present when the integer kernel needs
 * them), shifts 0..63, multipliers within int32. */
static ct_status check_rq(const ct_op *op, int form, bool integer, ct_diag *d) {
  int nm = 0, ns = 0;
  const int64_t *mv = ct_attr_rq_multiplier(op, &nm), *sv = ct_attr_rq_rshift(op, &ns);
  bool has = ct_attr_has_rq_multiplier(op) || ct_attr_has_rq_rshift(op);
  if (form == RQ_NONE || !integer) return CT_OK;
  if (!has && form == RQ_CHANNELS && ct_tq_raw_out(op)) return CT_OK; /* accumulator kept as i32 */
  int64_t n = form == RQ_CHANNELS ? out_channels(op) : form == RQ_INPUTS ? op->n_in : 1;
  bool ok = form == RQ_ELTWISE ? nm == 2 && ns == 3 : nm == ns && (nm == 1 || nm == n);
  if (!ok && form == RQ_ELTWISE)
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "needs multiplier [m_a, m_b] and rshift [s_a, s_b, s_out], has %d and %d entries",
                       OP_ARGS(op), nm, ns);
  if (!ok)
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "needs multiplier and rshift with %lld (or 1) entries each, has %d and %d",
                       OP_ARGS(op), (long long)n, nm, ns);
  for (int i = 0; i < ns; i++)
    if (sv[i] < 0 || sv[i] > 63)
      return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "rshift[%d] = %lld is outside 0..63", OP_ARGS(op), i, (long long)sv[i]);
  for (int i = 0; i < nm; i++)
    if (mv[i] < INT32_MIN || mv[i] > INT32_MAX)
      return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "multiplier[%d] = %lld does not fit int32", OP_ARGS(op), i, (long long)mv[i]);
  return CT_OK;
}

/* act is none / relu / clip / relu6 (a float result also leaky_relu, which the Tpu reference
 * computes as the Top op does: a float Gemm the lowering keeps with its fused LeakyRelu) and
 * qact_hi a value of the result's storage type. */
static ct_status check_act(const ct_op *op, ct_diag *d) {
  const ct_attr *a = ct_attr_raw_act_act(op), *h = ct_attr_raw_act_qact_hi(op); /* rq's: the same names, defaults */
  if (!a && !h) return CT_OK;
  const char *s = ct_attr_act_act(op);
  bool leaky = !strcmp(s, "leaky_relu") && op->n_out > 0 && op->out[0] && ct_dtype_is_float(op->out[0]->dtype);
  if (strcmp(s, "none") && strcmp(s, "relu") && strcmp(s, "clip") && strcmp(s, "relu6") && !leaky)
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "act \"%s\" is not none, relu, clip or relu6%s", OP_ARGS(op), s,
                       ct_dtype_is_float(op->out[0]->dtype) ? " (or leaky_relu)" : "");
  ct_dtype dt = op->out[0]->dtype;
  if (!h || !ct_tq_is_storage(dt)) return CT_OK;
  int64_t hi = ct_attr_act_qact_hi(op);
  if (hi != ct_quant_saturate(hi, dt))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "qact_hi %lld is not a %s value", OP_ARGS(op), (long long)hi, ct_dtype_name(dt));
  return CT_OK;
}

/* The integer kernels read and write integer storage only (ct_tq_need_int); ReduceMean's
 * axes operand is an index. */
static ct_status check_storage(const ct_op *op, ct_diag *d) {
  for (int j = 0; j < op->n_in; j++) {
    const ct_value *v = op->in[j];
    if (!v || (op->kind == CT_OP_REDUCEMEAN && j > 0) || ct_tq_is_storage(v->dtype)) continue;
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "operand %d (\"%s\") is %s; the integer form reads i8, u8, i16, u16 or i32",
                       OP_ARGS(op), j, v->name, ct_dtype_name(v->dtype));
  }
  for (int j = 0; j < op->n_out; j++) {
    const ct_value *v = op->out[j];
    if (v && !ct_tq_is_storage(v->dtype))
      return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "result %d is %s; the integer form writes i8, u8, i16, u16 or i32",
                         OP_ARGS(op), j, ct_dtype_name(v->dtype));
  }
  return CT_OK;
}

/* Lut: i8 / u8 input with 256 entries (i16: the 257 of the 16-bit LUT), one table or one per
 * channel (axis 1), an 8-bit result, entries that are bytes (int16 for the 16-bit LUT). */
static ct_status check_lut(const ct_op *op, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  if ((x->dtype != CT_I8 && x->dtype != CT_U8 && x->dtype != CT_I16) || (y->dtype != CT_I8 && y->dtype != CT_U8))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "reads %s and writes %s; a Lut reads i8, u8 or i16 and writes i8 or u8",
                       OP_ARGS(op), ct_dtype_name(x->dtype), ct_dtype_name(y->dtype));
  int n = 0;
  const int64_t *tab = ct_attr_lut_table(op, &n);
  int64_t e = ct_quant_lut_entries(x->dtype), c = x->ndim >= 2 ? x->shape[1] : 1;
  if (!tab || (n != e && n != e * c))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "table has %d entries; needs %lld (or %lld per channel for %lld channels)",
                       OP_ARGS(op), n, (long long)e, (long long)e, (long long)c);
  int64_t lo = x->dtype == CT_I16 ? INT16_MIN : -128, hi = x->dtype == CT_I16 ? INT16_MAX : 255;
  for (int i = 0; i < n; i++)
    if (tab[i] < lo || tab[i] > hi)
      return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "table[%d] = %lld is outside %lld..%lld", OP_ARGS(op), i, (long long)tab[i],
                         (long long)lo, (long long)hi);
  return CT_OK;
}

/* Cast: a quantizing cast has per-tensor params on its result, a dequantizing one on its
 * operand (ct_tpu_cast); an integer or bool side without params holds plain values (a mask,
 * indices) and the cast is an ONNX value conversion. */
static ct_status check_cast(const ct_op *op, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  bool fi = ct_dtype_is_float(x->dtype), fo = ct_dtype_is_float(y->dtype);
  if ((!fi && x->n_scale == 0) || (!fo && y->n_scale == 0)) return CT_OK;
  if (fi && !fo && (y->n_scale != 1 || !ct_tq_is_storage(y->dtype)))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "a quantizing cast needs an integer result with per-tensor parameters", OP_ARGS(op));
  if (!fi && fo && (x->n_scale != 1 || !ct_tq_is_storage(x->dtype)))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "a dequantizing cast needs an integer operand with per-tensor parameters", OP_ARGS(op));
  if (!fi && !fo) return check_storage(op, d);
  if (fi && fo && (!ct_dtype_is_float(x->dtype) || x->dtype == CT_F64 || y->dtype == CT_F64))
    return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "casts %s to %s", OP_ARGS(op), ct_dtype_name(x->dtype), ct_dtype_name(y->dtype));
  return CT_OK;
}

static ct_status check_moves(const ct_op *op, ct_diag *d) {
  const ct_value *x = op->in[0];
  for (int j = 0; j < op->n_out; j++) {
    const ct_value *y = op->out[j];
    if (y && y->dtype != x->dtype && !(ct_dtype_is_float(x->dtype) && ct_dtype_is_float(y->dtype)))
      return ct_diag_set(d, CT_ERR_INPUT, OP_FMT "result %d is %s but operand 0 is %s: the op moves stored values", OP_ARGS(op),
                         j, ct_dtype_name(y->dtype), ct_dtype_name(x->dtype));
  }
  return CT_OK;
}

ct_status ct_tpu_verify_op(const ct_graph *g, const ct_op *op, ct_diag *d) {
  (void)g;
  if (op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT) return CT_OK;
  bool integer = runs_integer(op);
  int form = rq_form(op);
  ct_status st;
  if (op->kind == CT_OP_CAST) {
    if ((st = check_cast(op, d))) return st;
    if (ct_dtype_is_float(op->in[0]->dtype) || ct_dtype_is_float(op->out[0]->dtype)) form = RQ_NONE;
  } else if (integer && form != RQ_NONE) {
    if ((st = check_storage(op, d))) return st;
  }
  if (op->kind == CT_OP_LUT && (st = check_lut(op, d))) return st;
  if (moves_data(op->kind) && (st = check_moves(op, d))) return st;
  if ((st = check_rq(op, form, integer, d))) return st;
  return check_act(op, d);
}
