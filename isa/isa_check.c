/* isa_check.c: semantic checks of decoded instructions (dtypes, shapes, ONNX Conv/Pool
 * output-size formula), operand footprints (for bounds and race checks) and MAC counts.
 * One check_<op> and access_<op> per opcode, tied to isa.def by X-macro tables. */
#include <string.h>

#include "isa/isa.h"
#include "quant/float_fn.h"

#define FAIL(...) ct_diag_set(d, CT_ERR_INPUT, __VA_ARGS__)
#define REQ(cond, ...) \
  do {                 \
    if (!(cond)) return FAIL(__VA_ARGS__); \
  } while (0)

/* dtype sets used by the checks */
static bool is_int8(int64_t t) { return t == CT_I8 || t == CT_U8; }
static bool is_qint(int64_t t) { return t == CT_I8 || t == CT_U8 || t == CT_I16; }
static bool is_int(int64_t t) { return is_qint(t) || t == CT_I32; }
static bool is_flt(int64_t t) { return t == CT_F32 || t == CT_F16 || t == CT_BF16; }
static const char *dt(int64_t t) { return ct_dtype_name((ct_dtype)t); }
static uint64_t esz(int64_t t) { return (uint64_t)ct_dtype_size((ct_dtype)t); }

/* ONNX Conv/Pool output size: floor((i + p0 + p1 - dil*(k-1) - 1) / stride) + 1, or -1. */
static int64_t out_size(int64_t i, int64_t p0, int64_t p1, int64_t k, int64_t dil, int64_t stride) {
  int64_t num = i + p0 + p1 - dil * (k - 1) - 1;
  return num < 0 || stride <= 0 ? -1 : num / stride + 1;
}

static ct_status check_shape4(const char *op, int64_t n, int64_t c, int64_t h, int64_t w, ct_diag *d) {
  REQ(n > 0 && c > 0 && h > 0 && w > 0, "%s: shape %lldx%lldx%lldx%lld has a zero dimension", op, (long long)n,
      (long long)c, (long long)h, (long long)w);
  return CT_OK;
}

/* MXU/VPU accumulate-and-requantize tail shared by CONV, DWCONV and MATMUL. */
static ct_status check_mac_types(const char *op, int64_t tin, int64_t tw, int64_t tout, int64_t rq, ct_diag *d) {
  if (is_flt(tin)) {
    REQ(tw == tin, "%s: float weights must have the input type %s, not %s", op, dt(tin), dt(tw));
    REQ(rq == CT_ISA_RQ_NONE, "%s: rq_mode must be none for float inputs", op);
    REQ(is_flt(tout), "%s: dt_out %s must be a float type for float inputs", op, dt(tout));
    return CT_OK;
  }
  REQ(is_int8(tin), "%s: input type %s is not i8, u8, bf16, f16 or f32", op, dt(tin));
  REQ(tw == CT_I8, "%s: integer weights must be i8, not %s", op, dt(tw));
  if (rq == CT_ISA_RQ_NONE) REQ(tout == CT_I32, "%s: rq_mode=none needs dt_out i32, not %s", op, dt(tout));
  else REQ(is_qint(tout), "%s: requantized dt_out must be i8, u8 or i16, not %s", op, dt(tout));
  return CT_OK;
}

static ct_status check_conv_common(const char *op, const ct_insn *i, ct_diag *d) {
  const struct ct_insn_conv *c = &i->conv;
  ct_status st = check_shape4(op, c->n, c->ic, c->ih, c->iw, d);
  if (st) return st;
  REQ(c->oc > 0 && c->oh > 0 && c->ow > 0, "%s: output shape has a zero dimension", op);
  REQ(c->kh > 0 && c->kw > 0, "%s: kernel %lldx%lld has a zero dimension", op, (long long)c->kh, (long long)c->kw);
  REQ(c->stride_h > 0 && c->stride_w > 0, "%s: stride must be >= 1", op);
  REQ(c->dil_h > 0 && c->dil_w > 0, "%s: dilation must be >= 1", op);
  REQ(c->groups > 0 && c->ic % c->groups == 0 && c->oc % c->groups == 0,
      "%s: groups %lld does not divide ic %lld and oc %lld", op, (long long)c->groups, (long long)c->ic, (long long)c->oc);
  int64_t oh = out_size(c->ih, c->pad_t, c->pad_b, c->kh, c->dil_h, c->stride_h);
  int64_t ow = out_size(c->iw, c->pad_l, c->pad_r, c->kw, c->dil_w, c->stride_w);
  REQ(oh == c->oh && ow == c->ow, "%s: output %lldx%lld does not match the input, kernel, pads, strides (%lldx%lld)", op,
      (long long)c->oh, (long long)c->ow, (long long)oh, (long long)ow);
  return check_mac_types(op, c->dt_in, c->dt_w, c->dt_out, c->rq_mode, d);
}

static ct_status check_nop(const ct_insn *i, ct_diag *d) { (void)i; (void)d; return CT_OK; }
#define check_sync check_nop
#define check_end check_nop

static ct_status check_dma(const char *op, const ct_insn *i, ct_diag *d) {
  const struct ct_insn_load *c = &i->load; /* LOAD, STORE and MOVE share names and order */
  REQ(esz(c->dtype) > 0 && c->dtype != CT_BOOL, "%s: dtype %s cannot be moved", op, dt(c->dtype));
  return check_shape4(op, c->n, c->c, c->h, c->w, d);
}
static ct_status check_load(const ct_insn *i, ct_diag *d) { return check_dma("load", i, d); }
static ct_status check_store(const ct_insn *i, ct_diag *d) { return check_dma("store", i, d); }
static ct_status check_move(const ct_insn *i, ct_diag *d) { return check_dma("move", i, d); }

static ct_status check_conv(const ct_insn *i, ct_diag *d) { return check_conv_common("conv", i, d); }

static ct_status check_dwconv(const ct_insn *i, ct_diag *d) {
  ct_status st = check_conv_common("dwconv", i, d);
  if (st) return st;
  REQ(i->dwconv.groups == i->dwconv.ic, "dwconv: groups %lld must equal ic %lld", (long long)i->dwconv.groups,
      (long long)i->dwconv.ic);
  return CT_OK;
}

static ct_status check_matmul(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_matmul *c = &i->matmul;
  ct_status st = check_shape4("matmul", c->batch, c->m, c->k, c->n, d);
  return st ? st : check_mac_types("matmul", c->dt_a, c->dt_b, c->dt_out, c->rq_mode, d);
}

static ct_status check_eltwise(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_eltwise *c = &i->eltwise;
  ct_status st = check_shape4("eltwise", c->n, c->c, c->h, c->w, d);
  if (st) return st;
  bool f = is_flt(c->dt_a) && is_flt(c->dt_b) && is_flt(c->dt_out);
  bool q = is_qint(c->dt_a) && is_qint(c->dt_b) && is_int(c->dt_out);
  REQ(f || q, "eltwise: types %s, %s -> %s are not all float or all integer (i8 u8 i16 in, i32 out allowed)",
      dt(c->dt_a), dt(c->dt_b), dt(c->dt_out));
  REQ(f || c->op != CT_ISA_ELT_DIV, "eltwise: div needs float operands, not %s", dt(c->dt_a));
  return CT_OK;
}

static ct_status check_lut(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_lut *c = &i->lut;
  REQ((is_int8(c->dt_in) || c->dt_in == CT_I16) && is_int8(c->dt_out), "lut: types %s -> %s must be i8, u8 or i16 -> i8 or u8",
      dt(c->dt_in), dt(c->dt_out));
  return check_shape4("lut", c->n, c->c, c->h, c->w, d);
}

/* A POOL output size o along a dim: the floor-mode size fl = ⌊(in + p0 + p1 − k) / stride⌋ + 1,
 * or one more (ceil mode) when that last window still starts inside the input or its begin
 * padding: (o − 1)·stride < in + p0 (ONNX's ceil_mode with PyTorch's rule, ops/nn_shape.c).
 * fl may be 0 there: a tile holding only the last ceil-mode window, whose rows the window
 * overhangs, has fewer input rows than the window. */
static bool pool_out_ok(int64_t o, int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t stride) {
  int64_t num = in + p0 + p1 - k;
  int64_t fl = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  return o >= 1 && ((o == fl && fl >= 1) || (o == fl + 1 && (o - 1) * stride < in + p0));
}

static ct_status check_pool(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_pool *c = &i->pool;
  ct_status st = check_shape4("pool", c->n, c->c, c->ih, c->iw, d);
  if (st) return st;
  REQ(c->kh > 0 && c->kw > 0 && c->stride_h > 0 && c->stride_w > 0, "pool: window and stride must be >= 1");
  REQ(c->pad_t < c->kh && c->pad_b < c->kh && c->pad_l < c->kw && c->pad_r < c->kw, "pool: pads must be smaller than the window");
  int64_t oh = out_size(c->ih, c->pad_t, c->pad_b, c->kh, 1, c->stride_h);
  int64_t ow = out_size(c->iw, c->pad_l, c->pad_r, c->kw, 1, c->stride_w);
  REQ(pool_out_ok(c->oh, c->ih, c->pad_t, c->pad_b, c->kh, c->stride_h) &&
          pool_out_ok(c->ow, c->iw, c->pad_l, c->pad_r, c->kw, c->stride_w),
      "pool: output %lldx%lld does not match the input, window, pads, strides (%lldx%lld, or one more in ceil mode)",
      (long long)c->oh, (long long)c->ow, (long long)oh, (long long)ow);
  REQ(is_qint(c->dt) || is_flt(c->dt), "pool: type %s is not i8, u8, i16, bf16, f16 or f32", dt(c->dt));
  return CT_OK;
}

static ct_status check_requant(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_requant *c = &i->requant;
  REQ(c->rq_mode != CT_ISA_RQ_NONE, "requant: rq_mode must be tensor or channel");
  REQ(is_int(c->dt_in) && is_int(c->dt_out), "requant: types %s -> %s must be i8 u8 i16 i32", dt(c->dt_in), dt(c->dt_out));
  return check_shape4("requant", c->n, c->c, c->h, c->w, d);
}

static ct_status check_cast(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_cast *c = &i->cast;
  bool ok_in = is_int(c->dt_in) || is_flt(c->dt_in), ok_out = is_int(c->dt_out) || is_flt(c->dt_out);
  REQ(ok_in && ok_out, "cast: types %s -> %s must be i8 u8 i16 i32 bf16 f16 f32", dt(c->dt_in), dt(c->dt_out));
  if (is_flt(c->dt_in) != is_flt(c->dt_out))
    REQ(c->scale > 0 && c->scale < 3.4e38f, "cast: int<->float needs a finite scale > 0, not %g", (double)c->scale);
  return check_shape4("cast", c->n, c->c, c->h, c->w, d);
}

static ct_status check_reduce(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_reduce *c = &i->reduce;
  bool f = is_flt(c->dt_in) && is_flt(c->dt_out), q = is_qint(c->dt_in) && is_int(c->dt_out);
  REQ(f || q, "reduce: types %s -> %s are not float -> float or i8/u8/i16 -> integer", dt(c->dt_in), dt(c->dt_out));
  return check_shape4("reduce", c->n, c->c, c->h, c->w, d);
}

static ct_status check_float_unary(const char *op, int64_t tin, int64_t tout, ct_diag *d) {
  REQ(is_flt(tin) && is_flt(tout), "%s: types %s -> %s must be bf16, f16 or f32", op, dt(tin), dt(tout));
  return CT_OK;
}

static ct_status check_exp(const ct_insn *i, ct_diag *d) {
  ct_status st = check_float_unary("exp", i->exp.dt_in, i->exp.dt_out, d);
  if (st) return st;
  REQ(i->exp.func < CT_QUANT_FN_COUNT, "exp: func %lld: the function unit has codes 0..%d", (long long)i->exp.func,
      CT_QUANT_FN_COUNT - 1);
  return check_shape4("exp", i->exp.n, i->exp.c, i->exp.h, i->exp.w, d);
}

static ct_status check_softmax(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_softmax *c = &i->softmax;
  ct_status st = check_float_unary("softmax", c->dt_in, c->dt_out, d);
  return st ? st : check_shape4("softmax", c->n, c->c, c->h, c->w, d);
}

static ct_status check_norm(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_norm *c = &i->norm;
  ct_status st = check_float_unary("norm", c->dt_in, c->dt_out, d);
  if (st) return st;
  REQ(c->eps >= 0 && c->eps < 3.4e38f, "norm: eps %g must be finite and >= 0", (double)c->eps);
  return check_shape4("norm", c->n, c->c, c->h, c->w, d);
}

static ct_status check_resize(const ct_insn *i, ct_diag *d) {
  const struct ct_insn_resize *c = &i->resize;
  ct_status st = check_shape4("resize", c->n, c->c, c->ih, c->iw, d);
  if (st) return st;
  REQ(c->oh > 0 && c->ow > 0, "resize: output shape has a zero dimension");
  REQ(c->ih0 + c->ih <= c->full_ih && c->oh0 + c->oh <= c->full_oh,
      "resize: rows %lld+%lld of %lld in, %lld+%lld of %lld out exceed the whole tensor", (long long)c->ih0,
      (long long)c->ih, (long long)c->full_ih, (long long)c->oh0, (long long)c->oh, (long long)c->full_oh);
  REQ(c->ctm < CT_ISA_CTM_COUNT, "resize: ctm %lld: the coordinate transformations are 0..%d", (long long)c->ctm,
      CT_ISA_CTM_COUNT - 1);
  if (is_int8(c->dt_in)) REQ(c->dt_out == c->dt_in, "resize: integer dt_out %s must be dt_in %s", dt(c->dt_out), dt(c->dt_in));
  else REQ(is_flt(c->dt_in) && is_flt(c->dt_out), "resize: types %s -> %s are not i8, u8 or float", dt(c->dt_in), dt(c->dt_out));
  REQ(c->scale_h >= 0 && c->scale_w >= 0 && c->scale_h < 3.4e38f && c->scale_w < 3.4e38f,
      "resize: scales %g, %g must be finite and >= 0", (double)c->scale_h, (double)c->scale_w);
  return CT_OK;
}

typedef ct_status (*check_fn)(const ct_insn *, ct_diag *);
static const check_fn checks[CT_ISA_OP_COUNT] = {
#define CT_ISA_OP(E, name, eng, FIELDS, sem) check_##name,
#include "isa/isa.def"
};

ct_status ct_isa_check(const ct_insn *insn, const ct_chip *chip, ct_diag *d) {
  if ((unsigned)insn->op >= CT_ISA_OP_COUNT) return FAIL("opcode %d is not an instruction", (int)insn->op);
  ct_status st = checks[insn->op](insn, d);
  if (st || !chip) return st;
  uint32_t sems = chip->sem_count >= 32 ? ~0u : (1u << chip->sem_count) - 1;
  REQ(!(insn->wait & ~sems) && !(insn->signal & ~sems), "%s: wait/signal names a semaphore >= sem.count %lld",
      ct_isa_op_name(insn->op), (long long)chip->sem_count);
  if (insn->op == CT_ISA_LOAD || insn->op == CT_ISA_STORE || insn->op == CT_ISA_MOVE) {
    int64_t engines = insn->op == CT_ISA_STORE ? chip->dma_store_engines : chip->dma_load_engines;
    REQ(insn->load.eng < engines, "%s: eng %lld >= dma.%s_engines %lld", ct_isa_op_name(insn->op),
        (long long)insn->load.eng, insn->op == CT_ISA_STORE ? "store" : "load", (long long)engines);
  }
  ct_isa_access acc[CT_ISA_MAX_ACCESS];
  int n = ct_isa_accesses(insn, acc);
  for (int k = 0; k < n; k++) {
    uint64_t size = acc[k].mem == CT_MEM_LMEM ? (uint64_t)chip->lmem_bytes : (uint64_t)chip->gmem_bytes;
    REQ(acc[k].addr <= size && acc[k].bytes <= size - acc[k].addr,
        "%s: operand %d (%s 0x%llx, %llu bytes) exceeds %s of %llu bytes", ct_isa_op_name(insn->op), k,
        acc[k].mem == CT_MEM_LMEM ? "LMEM" : "GMEM", (unsigned long long)acc[k].addr,
        (unsigned long long)acc[k].bytes, acc[k].mem == CT_MEM_LMEM ? "lmem.bytes" : "gmem.bytes",
        (unsigned long long)size);
  }
  return CT_OK;
}
