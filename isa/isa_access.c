/* isa_access.c: the operand regions of every opcode (exact strided 4-D regions of LMEM/GMEM an
 * instruction reads or writes, with their byte hulls) and useful MAC counts: the one
 * description the checks, the cmodel (decode, race check) and the compiler's schedule use. One
 * access_<op> per opcode, tied to isa.def by an X-macro table. */
#include "isa/isa.h"

static uint32_t esz(int64_t t) { return (uint32_t)ct_dtype_size((ct_dtype)t); }

/* Saturation value of footprints and dense strides: far beyond any memory a chip can have, so a
 * region whose arithmetic would overflow is reported as exceeding LMEM/GMEM instead of wrapping
 * to a small footprint that passes the bounds check. */
#define SAT ((uint64_t)1 << 62)

/* a·b + c saturated at SAT (a, b, c ≤ SAT). */
static uint64_t sat_madd(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t p;
  if (__builtin_mul_overflow(a, b, &p) || p > SAT || c > SAT - p) return SAT;
  return p + c;
}

/* Hull of a strided 4-D region in bytes: (Σ (dim − 1)·stride + 1) elements, saturated at SAT;
 * 0 when a dim is ≤ 0. Negative strides count as SAT (the checks refuse them). */
static uint64_t hull(uint32_t eb, const int64_t dim[4], const int64_t stride[4]) {
  uint64_t last = 0;
  for (int k = 0; k < 4; k++) {
    if (dim[k] <= 0) return 0;
    uint64_t s = stride[k] < 0 ? SAT : (uint64_t)stride[k];
    last = sat_madd((uint64_t)(dim[k] - 1), s > SAT ? SAT : s, last);
  }
  return sat_madd(last + (last < SAT), eb, 0);
}

/* Appends the region of a (n, c, h, w) view with element strides st (NULL: dense row-major,
 * strides saturated at SAT). */
static int add(ct_isa_access *a, int n, ct_mem mem, int64_t addr, const int64_t dim[4], const int64_t *st, uint32_t eb,
               bool write) {
  ct_isa_access *r = &a[n];
  r->mem = mem, r->addr = (uint64_t)addr, r->write = write, r->elem_bytes = eb;
  uint64_t inner = 1;
  for (int k = 3; k >= 0; k--) {
    r->shape[k] = dim[k];
    r->stride[k] = st ? st[k] : (int64_t)inner;
    inner = sat_madd(inner, dim[k] > 0 ? (uint64_t)dim[k] : 1, 0);
  }
  r->bytes = hull(eb, r->shape, r->stride);
  return n + 1;
}

/* Appends a dense LMEM region of n·c·h·w elements of eb bytes. */
static int lm(ct_isa_access *a, int k, int64_t addr, int64_t n, int64_t c, int64_t h, int64_t w, uint32_t eb, bool write) {
  int64_t dim[4] = {n, c, h, w};
  return add(a, k, CT_MEM_LMEM, addr, dim, NULL, eb, write);
}

static int access_nop(const ct_insn *i, ct_isa_access *a) { (void)i; (void)a; return 0; }
#define access_sync access_nop
#define access_end access_nop

/* LOAD, STORE and MOVE share field names and order (common initial sequence): the source
 * (n, c, h, w) over the src strides, the destination (n, c, w, h when trans) over the dst
 * strides. */
static int access_dma(const ct_insn *i, ct_isa_access *a, ct_mem src_mem, ct_mem dst_mem) {
  const struct ct_insn_load *c = &i->load;
  int64_t sdim[4] = {c->n, c->c, c->h, c->w}, ddim[4] = {c->n, c->c, c->h, c->w};
  if (c->trans) { ddim[2] = c->w; ddim[3] = c->h; }
  int64_t sst[4] = {c->src_sn, c->src_sc, c->src_sh, c->src_sw}, dst[4] = {c->dst_sn, c->dst_sc, c->dst_sh, c->dst_sw};
  int n = add(a, 0, src_mem, c->src, sdim, sst, esz(c->dtype), false);
  return add(a, n, dst_mem, c->dst, ddim, dst, esz(c->dtype), true);
}
static int access_load(const ct_insn *i, ct_isa_access *a) { return access_dma(i, a, CT_MEM_GMEM, CT_MEM_LMEM); }
static int access_store(const ct_insn *i, ct_isa_access *a) { return access_dma(i, a, CT_MEM_LMEM, CT_MEM_GMEM); }
static int access_move(const ct_insn *i, ct_isa_access *a) { return access_dma(i, a, CT_MEM_LMEM, CT_MEM_LMEM); }

/* acc / bias / rq operands of the MXU ops (4-byte i32 or f32 elements; rq (m, s) pairs of i32). */
static int mac_tail(ct_isa_access *a, int n, int64_t acc_in, int64_t acc, const int64_t out[4], int64_t has_bias,
                    int64_t bias, int64_t rq_mode, int64_t rq, int64_t channels) {
  if (acc_in) n = lm(a, n, acc, out[0], out[1], out[2], out[3], 4, false);
  if (has_bias) n = lm(a, n, bias, 1, 1, 1, channels, 4, false);
  if (rq_mode == CT_ISA_RQ_CHANNEL) n = lm(a, n, rq, 1, 1, channels, 2, 4, false);
  if (rq_mode == CT_ISA_RQ_TENSOR) n = lm(a, n, rq, 1, 1, 1, 2, 4, false);
  return n;
}

static int access_conv(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_conv *c = &i->conv; /* DWCONV has CONV's fields */
  int64_t out[4] = {c->n, c->oc, c->oh, c->ow}, icg = c->groups > 0 ? c->ic / c->groups : 0;
  int n = lm(a, 0, c->in, c->n, c->ic, c->ih, c->iw, esz(c->dt_in), false);
  n = lm(a, n, c->wt, c->oc, icg, c->kh, c->kw, esz(c->dt_w), false);
  n = mac_tail(a, n, c->acc_in, c->acc, out, c->has_bias, c->bias, c->rq_mode, c->rq, c->oc);
  return add(a, n, CT_MEM_LMEM, c->out, out, NULL, esz(c->dt_out), true);
}
#define access_dwconv access_conv

static int access_matmul(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_matmul *c = &i->matmul;
  int64_t out[4] = {1, c->batch, c->m, c->n}, bb = c->b_bcast ? 1 : c->batch;
  int n = lm(a, 0, c->a, 1, c->batch, c->m, c->k, esz(c->dt_a), false);
  n = lm(a, n, c->b, 1, bb, c->b_trans ? c->n : c->k, c->b_trans ? c->k : c->n, esz(c->dt_b), false);
  n = mac_tail(a, n, c->acc_in, c->acc, out, c->has_bias, c->bias, c->rq_mode, c->rq, c->n);
  return add(a, n, CT_MEM_LMEM, c->out, out, NULL, esz(c->dt_out), true);
}

/* Appends the dense n·c·h·w operand whose dims in mask `bcast` have size 1. */
static int bcast(ct_isa_access *a, int k, int64_t addr, int64_t n, int64_t c, int64_t h, int64_t w, int64_t mask,
                 uint32_t eb, bool write) {
  int64_t d[4] = {n, c, h, w};
  for (int j = 0; j < 4; j++) d[j] = (mask >> j) & 1 ? 1 : d[j];
  return add(a, k, CT_MEM_LMEM, addr, d, NULL, eb, write);
}

static int access_eltwise(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_eltwise *c = &i->eltwise;
  int n = bcast(a, 0, c->a, c->n, c->c, c->h, c->w, c->bcast_a, esz(c->dt_a), false);
  n = bcast(a, n, c->b, c->n, c->c, c->h, c->w, c->bcast_b, esz(c->dt_b), false);
  return lm(a, n, c->out, c->n, c->c, c->h, c->w, esz(c->dt_out), true);
}

static int access_lut(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_lut *c = &i->lut;
  int n = lm(a, 0, c->in, c->n, c->c, c->h, c->w, esz(c->dt_in), false);
  n = lm(a, n, c->table, 1, c->per_channel ? c->c : 1, 1, c->dt_in == CT_I16 ? CT_ISA_LUT16_BYTES : 256, 1, false);
  return lm(a, n, c->out, c->n, c->c, c->h, c->w, esz(c->dt_out), true);
}

static int access_pool(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_pool *c = &i->pool;
  int n = lm(a, 0, c->in, c->n, c->c, c->ih, c->iw, esz(c->dt), false);
  return lm(a, n, c->out, c->n, c->c, c->oh, c->ow, esz(c->dt), true);
}

static int access_requant(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_requant *c = &i->requant;
  int n = lm(a, 0, c->in, c->n, c->c, c->h, c->w, esz(c->dt_in), false);
  if (c->rq_mode == CT_ISA_RQ_CHANNEL) n = lm(a, n, c->rq, 1, 1, c->c, 2, 4, false);
  return lm(a, n, c->out, c->n, c->c, c->h, c->w, esz(c->dt_out), true);
}

/* Ops whose operand fields start with in, out, then n c h w, dt_in, dt_out in this order
 * are handled through CAST's layout prefix (in, out, n, c, h, w); REDUCE's result has
 * extent 1 along its axis. */
static int access_unary(const ct_insn *i, ct_isa_access *a, int64_t tin, int64_t tout, int64_t red_axis) {
  const struct ct_insn_cast *c = &i->cast;
  int n = lm(a, 0, c->in, c->n, c->c, c->h, c->w, esz(tin), false);
  return bcast(a, n, c->out, c->n, c->c, c->h, c->w, red_axis >= 0 ? INT64_C(1) << (red_axis & 3) : 0, esz(tout), true);
}
static int access_cast(const ct_insn *i, ct_isa_access *a) { return access_unary(i, a, i->cast.dt_in, i->cast.dt_out, -1); }
static int access_exp(const ct_insn *i, ct_isa_access *a) { return access_unary(i, a, i->exp.dt_in, i->exp.dt_out, -1); }
static int access_softmax(const ct_insn *i, ct_isa_access *a) {
  return access_unary(i, a, i->softmax.dt_in, i->softmax.dt_out, -1);
}
static int access_reduce(const ct_insn *i, ct_isa_access *a) {
  return access_unary(i, a, i->reduce.dt_in, i->reduce.dt_out, i->reduce.axis);
}

/* NORM: gamma / beta are f32 over the dims from `axis` on. */
static int access_norm(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_norm *c = &i->norm;
  int64_t d[4] = {c->n, c->c, c->h, c->w};
  uint64_t inner = 1;
  for (int k = (int)(c->axis & 3); k < 4; k++) inner = sat_madd(inner, d[k] > 0 ? (uint64_t)d[k] : 0, 0);
  int n = lm(a, 0, c->in, c->n, c->c, c->h, c->w, esz(c->dt_in), false);
  if (c->affine) {
    n = lm(a, n, c->gamma, 1, 1, 1, (int64_t)inner, 4, false);
    n = lm(a, n, c->beta, 1, 1, 1, (int64_t)inner, 4, false);
  }
  return lm(a, n, c->out, c->n, c->c, c->h, c->w, esz(c->dt_out), true);
}

static int access_resize(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_resize *c = &i->resize;
  int n = lm(a, 0, c->in, c->n, c->c, c->ih, c->iw, esz(c->dt_in), false);
  return lm(a, n, c->out, c->n, c->c, c->oh, c->ow, esz(c->dt_out), true);
}

typedef int (*access_fn)(const ct_insn *, ct_isa_access *);
static const access_fn accessors[CT_ISA_OP_COUNT] = {
#define CT_ISA_OP(E, name, eng, FIELDS, sem) access_##name,
#include "isa/isa.def"
};

int ct_isa_accesses(const ct_insn *insn, ct_isa_access acc[CT_ISA_MAX_ACCESS]) {
  if ((unsigned)insn->op >= CT_ISA_OP_COUNT) return 0;
  return accessors[insn->op](insn, acc);
}

/* Product of the non-negative values v[0..n-1], saturated at SAT (0 when one is ≤ 0). */
static uint64_t sat_prod(const int64_t *v, int n) {
  uint64_t p = 1;
  for (int k = 0; k < n; k++) p = sat_madd(p, v[k] > 0 ? (uint64_t)v[k] : 0, 0);
  return p;
}

uint64_t ct_isa_macs(const ct_insn *insn) {
  if (insn->op == CT_ISA_CONV || insn->op == CT_ISA_DWCONV) {
    const struct ct_insn_conv *c = &insn->conv;
    if (c->groups <= 0) return 0;
    int64_t f[7] = {c->n, c->oc, c->oh, c->ow, c->ic / c->groups, c->kh, c->kw};
    return sat_prod(f, 7);
  }
  if (insn->op == CT_ISA_MATMUL) {
    int64_t f[4] = {insn->matmul.batch, insn->matmul.m, insn->matmul.n, insn->matmul.k};
    return sat_prod(f, 4);
  }
  return 0;
}
