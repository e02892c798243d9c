/* isa_access.c: operand footprints of every opcode (byte ranges in LMEM/GMEM that an
 * instruction may read or write; hulls for strided DMA) and useful MAC counts. One
 * access_<op> per opcode, tied to isa.def by an X-macro table. */
#include "isa/isa.h"

static uint64_t esz(int64_t t) { return (uint64_t)ct_dtype_size((ct_dtype)t); }

static int add(ct_isa_access *a, int n, ct_mem mem, int64_t addr, uint64_t bytes, bool write) {
  a[n].mem = mem;
  a[n].addr = (uint64_t)addr;
  a[n].bytes = bytes;
  a[n].write = write;
  return n + 1;
}

/* Hull of a strided 4-D region: (sum (dim-1)*stride + 1) elements. */
static uint64_t hull(int64_t dtype, const int64_t dim[4], const int64_t stride[4]) {
  uint64_t last = 0;
  for (int k = 0; k < 4; k++) {
    if (dim[k] <= 0) return 0;
    last += (uint64_t)(dim[k] - 1) * (uint64_t)stride[k];
  }
  return (last + 1) * esz(dtype);
}

static int access_nop(const ct_insn *i, ct_isa_access *a) { (void)i; (void)a; return 0; }
#define access_sync access_nop
#define access_end access_nop

/* LOAD, STORE and MOVE share field names and order (common initial sequence). */
static int access_dma(const ct_insn *i, ct_isa_access *a, ct_mem src_mem, ct_mem dst_mem) {
  const struct ct_insn_load *c = &i->load;
  int64_t sdim[4] = {c->n, c->c, c->h, c->w}, ddim[4] = {c->n, c->c, c->h, c->w};
  if (c->trans) { ddim[2] = c->w; ddim[3] = c->h; }
  int64_t sst[4] = {c->src_sn, c->src_sc, c->src_sh, c->src_sw}, dst[4] = {c->dst_sn, c->dst_sc, c->dst_sh, c->dst_sw};
  int n = add(a, 0, src_mem, c->src, hull(c->dtype, sdim, sst), false);
  return add(a, n, dst_mem, c->dst, hull(c->dtype, ddim, dst), true);
}
static int access_load(const ct_insn *i, ct_isa_access *a) { return access_dma(i, a, CT_MEM_GMEM, CT_MEM_LMEM); }
static int access_store(const ct_insn *i, ct_isa_access *a) { return access_dma(i, a, CT_MEM_LMEM, CT_MEM_GMEM); }
static int access_move(const ct_insn *i, ct_isa_access *a) { return access_dma(i, a, CT_MEM_LMEM, CT_MEM_LMEM); }

/* acc / bias / rq operands of the MXU ops (4-byte i32 or f32 elements; rq pairs 8 bytes). */
static int mac_tail(ct_isa_access *a, int n, int64_t acc_in, int64_t acc, uint64_t out_elems, int64_t has_bias,
                    int64_t bias, int64_t rq_mode, int64_t rq, uint64_t channels) {
  if (acc_in) n = add(a, n, CT_MEM_LMEM, acc, out_elems * 4, false);
  if (has_bias) n = add(a, n, CT_MEM_LMEM, bias, channels * 4, false);
  if (rq_mode == CT_ISA_RQ_CHANNEL) n = add(a, n, CT_MEM_LMEM, rq, channels * 8, false);
  if (rq_mode == CT_ISA_RQ_TENSOR) n = add(a, n, CT_MEM_LMEM, rq, 8, false);
  return n;
}

static int access_conv(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_conv *c = &i->conv; /* DWCONV has CONV's fields */
  uint64_t out_elems = (uint64_t)(c->n * c->oc * c->oh * c->ow);
  uint64_t icg = c->groups > 0 ? (uint64_t)(c->ic / c->groups) : 0;
  int n = add(a, 0, CT_MEM_LMEM, c->in, (uint64_t)(c->n * c->ic * c->ih * c->iw) * esz(c->dt_in), false);
  n = add(a, n, CT_MEM_LMEM, c->wt, (uint64_t)c->oc * icg * (uint64_t)(c->kh * c->kw) * esz(c->dt_w), false);
  n = mac_tail(a, n, c->acc_in, c->acc, out_elems, c->has_bias, c->bias, c->rq_mode, c->rq, (uint64_t)c->oc);
  return add(a, n, CT_MEM_LMEM, c->out, out_elems * esz(c->dt_out), true);
}
#define access_dwconv access_conv

static int access_matmul(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_matmul *c = &i->matmul;
  uint64_t out_elems = (uint64_t)(c->batch * c->m * c->n), bb = c->b_bcast ? 1 : (uint64_t)c->batch;
  int n = add(a, 0, CT_MEM_LMEM, c->a, (uint64_t)(c->batch * c->m * c->k) * esz(c->dt_a), false);
  n = add(a, n, CT_MEM_LMEM, c->b, bb * (uint64_t)(c->k * c->n) * esz(c->dt_b), false);
  n = mac_tail(a, n, c->acc_in, c->acc, out_elems, c->has_bias, c->bias, c->rq_mode, c->rq, (uint64_t)c->n);
  return add(a, n, CT_MEM_LMEM, c->out, out_elems * esz(c->dt_out), true);
}

/* Elements of an n*c*h*w operand whose dims in mask `bcast` have size 1. */
static uint64_t bcast_elems(int64_t n, int64_t c, int64_t h, int64_t w, int64_t bcast) {
  int64_t d[4] = {n, c, h, w};
  uint64_t e = 1;
  for (int k = 0; k < 4; k++) e *= (bcast >> k) & 1 ? 1 : (uint64_t)d[k];
  return e;
}

static int access_eltwise(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_eltwise *c = &i->eltwise;
  int n = add(a, 0, CT_MEM_LMEM, c->a, bcast_elems(c->n, c->c, c->h, c->w, c->bcast_a) * esz(c->dt_a), false);
  n = add(a, n, CT_MEM_LMEM, c->b, bcast_elems(c->n, c->c, c->h, c->w, c->bcast_b) * esz(c->dt_b), false);
  return add(a, n, CT_MEM_LMEM, c->out, bcast_elems(c->n, c->c, c->h, c->w, 0) * esz(c->dt_out), true);
}

static int access_lut(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_lut *c = &i->lut;
  uint64_t e = bcast_elems(c->n, c->c, c->h, c->w, 0);
  int n = add(a, 0, CT_MEM_LMEM, c->in, e * esz(c->dt_in), false);
  uint64_t tb = c->dt_in == CT_I16 ? CT_ISA_LUT16_BYTES : 256;
  n = add(a, n, CT_MEM_LMEM, c->table, c->per_channel ? tb * (uint64_t)c->c : tb, false);
  return add(a, n, CT_MEM_LMEM, c->out, e * esz(c->dt_out), true);
}

static int access_pool(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_pool *c = &i->pool;
  int n = add(a, 0, CT_MEM_LMEM, c->in, bcast_elems(c->n, c->c, c->ih, c->iw, 0) * esz(c->dt), false);
  return add(a, n, CT_MEM_LMEM, c->out, bcast_elems(c->n, c->c, c->oh, c->ow, 0) * esz(c->dt), true);
}

static int access_requant(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_requant *c = &i->requant;
  uint64_t e = bcast_elems(c->n, c->c, c->h, c->w, 0);
  int n = add(a, 0, CT_MEM_LMEM, c->in, e * esz(c->dt_in), false);
  if (c->rq_mode == CT_ISA_RQ_CHANNEL) n = add(a, n, CT_MEM_LMEM, c->rq, (uint64_t)c->c * 8, false);
  return add(a, n, CT_MEM_LMEM, c->out, e * esz(c->dt_out), true);
}

/* Ops whose operand fields start with in, out, then n c h w, dt_in, dt_out in this order
 * are handled through CAST's layout prefix (in, out, n, c, h, w). */
static int access_unary(const ct_insn *i, ct_isa_access *a, int64_t tin, int64_t tout, int64_t red_axis) {
  const struct ct_insn_cast *c = &i->cast;
  uint64_t e = bcast_elems(c->n, c->c, c->h, c->w, 0);
  uint64_t eo = red_axis >= 0 ? bcast_elems(c->n, c->c, c->h, c->w, INT64_C(1) << red_axis) : e;
  int n = add(a, 0, CT_MEM_LMEM, c->in, e * esz(tin), false);
  return add(a, n, CT_MEM_LMEM, c->out, eo * esz(tout), true);
}
static int access_cast(const ct_insn *i, ct_isa_access *a) { return access_unary(i, a, i->cast.dt_in, i->cast.dt_out, -1); }
static int access_exp(const ct_insn *i, ct_isa_access *a) { return access_unary(i, a, i->exp.dt_in, i->exp.dt_out, -1); }
static int access_softmax(const ct_insn *i, ct_isa_access *a) {
  return access_unary(i, a, i->softmax.dt_in, i->softmax.dt_out, -1);
}
static int access_reduce(const ct_insn *i, ct_isa_access *a) {
  return access_unary(i, a, i->reduce.dt_in, i->reduce.dt_out, i->reduce.axis);
}

static int access_norm(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_norm *c = &i->norm;
  uint64_t e = bcast_elems(c->n, c->c, c->h, c->w, 0);
  int64_t mask = (INT64_C(1) << c->axis) - 1; /* dims before axis collapse for gamma/beta */
  uint64_t g = bcast_elems(c->n, c->c, c->h, c->w, mask);
  int n = add(a, 0, CT_MEM_LMEM, c->in, e * esz(c->dt_in), false);
  if (c->affine) {
    n = add(a, n, CT_MEM_LMEM, c->gamma, g * 4, false);
    n = add(a, n, CT_MEM_LMEM, c->beta, g * 4, false);
  }
  return add(a, n, CT_MEM_LMEM, c->out, e * esz(c->dt_out), true);
}

static int access_resize(const ct_insn *i, ct_isa_access *a) {
  const struct ct_insn_resize *c = &i->resize;
  int n = add(a, 0, CT_MEM_LMEM, c->in, bcast_elems(c->n, c->c, c->ih, c->iw, 0) * esz(c->dt_in), false);
  return add(a, n, CT_MEM_LMEM, c->out, bcast_elems(c->n, c->c, c->oh, c->ow, 0) * esz(c->dt_out), true);
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

uint64_t ct_isa_macs(const ct_insn *insn) {
  if (insn->op == CT_ISA_CONV || insn->op == CT_ISA_DWCONV) {
    const struct ct_insn_conv *c = &insn->conv;
    if (c->groups <= 0) return 0;
    return (uint64_t)(c->n * c->oc * c->oh * c->ow) * (uint64_t)(c->ic / c->groups) * (uint64_t)(c->kh * c->kw);
  }
  if (insn->op == CT_ISA_MATMUL)
    return (uint64_t)insn->matmul.batch * (uint64_t)insn->matmul.m * (uint64_t)insn->matmul.n *
           (uint64_t)insn->matmul.k;
  return 0;
}
