/* decode.c: ct_insn → ct_sim_op: operand regions per opcode (layouts of isa/isa.def), costs
 * (SCALE-Sim MXU folds, VPU lanes, DMA bursts: docs/cmodel.md) and bounds checks. */
#include "cmodel/decode.h"

#include <stdio.h>
#include <string.h>

#include "isa/cost.h"

typedef struct dctx {
  const ct_chip *chip;
  const ct_lmem *lmem;
  const ct_ddr *ddr;
  const ct_insn *in;
  ct_sim_op *op;
} dctx;

static ct_mem_region region_of(const ct_isa_access *a) {
  ct_mem_region r = {a->mem == CT_MEM_GMEM ? CT_SPACE_GMEM : CT_SPACE_LMEM, a->write, a->addr,
                     {a->shape[0], a->shape[1], a->shape[2], a->shape[3]},
                     {a->stride[0], a->stride[1], a->stride[2], a->stride[3]}, a->elem_bytes};
  return r;
}

/* The operand regions of insn (ct_isa_accesses, the ISA's one description of them). */
static int regions_of(const ct_insn *insn, ct_mem_region r[CT_SIM_MAX_REGIONS]) {
  _Static_assert(CT_ISA_MAX_ACCESS <= CT_SIM_MAX_REGIONS, "every operand region fits a ct_sim_op");
  ct_isa_access acc[CT_ISA_MAX_ACCESS];
  int n = ct_isa_accesses(insn, acc);
  for (int k = 0; k < n; k++) r[k] = region_of(&acc[k]);
  return n;
}

bool ct_sim_dma_regions(const ct_insn *in, ct_mem_region *src, ct_mem_region *dst) {
  if (in->op != CT_ISA_LOAD && in->op != CT_ISA_STORE && in->op != CT_ISA_MOVE) return false;
  ct_mem_region r[CT_SIM_MAX_REGIONS];
  regions_of(in, r);
  *src = r[0], *dst = r[1];
  return true;
}

/* DMA engine instance: the optional `eng` field (docs/isa.md), else 0. */
static int dma_instance(const ct_insn *in) {
  const ct_isa_field *f = ct_isa_field_find(in->op, "eng");
  return f ? (int)ct_isa_field_get(in, f) : 0;
}

static ct_status dec_dma(dctx *x) {
  ct_sim_op *op = x->op;
  const ct_mem_region src = op->regions[0], dst = op->regions[1];
  op->is_dma = true;
  op->dma_index = dma_instance(x->in);
  op->dma_ddr = x->in->op != CT_ISA_MOVE;
  if (x->in->op == CT_ISA_LOAD) op->ddr_read = op->dma_moved = ct_dma_moved_bytes(x->ddr, &src);
  if (x->in->op == CT_ISA_STORE) op->ddr_written = op->dma_moved = ct_dma_moved_bytes(x->ddr, &dst);
  if (x->in->op == CT_ISA_MOVE)
    op->dma_moved = (uint64_t)ct_mem_region_numel(&src) * src.elem_bytes;
  return CT_OK;
}

/* Cycles of an MXU job (CONV, MATMUL) from the MXU cost model, MACs from the instruction. */
static ct_status mxu_timing(dctx *x, const ct_mxu_job *job) {
  ct_mxu_cost cost;
  ct_mxu_cost_of(x->chip, job, &cost);
  x->op->cycles = cost.cycles;
  x->op->macs = ct_isa_macs(x->in);
  double peak = (double)x->chip->mxu_rows * (double)x->chip->mxu_cols * ct_mxu_rate(x->chip, job->dtype);
  if (x->op->unit == CT_SIM_MXU && peak > 0) x->op->mxu_ideal = (double)x->op->macs / peak;
  return CT_OK;
}

#define C (x->in->conv) /* CONV and DWCONV (isa.def CT_ISA_FIELDS_CONV) */
static ct_status dec_conv(dctx *x) {
  int64_t g = C.groups ? C.groups : 1;
  ct_mxu_job job = {(uint64_t)g, (uint64_t)(C.n * C.oh * C.ow), (uint64_t)(C.ic / g * C.kh * C.kw),
                    (uint64_t)(C.oc / g), (ct_dtype)C.dt_in};
  return mxu_timing(x, &job);
}

static uint32_t width_of(int64_t a, int64_t b) {
  size_t wa = ct_dtype_size((ct_dtype)a), wb = ct_dtype_size((ct_dtype)b);
  return (uint32_t)(wa > wb ? wa : wb);
}

static ct_status dec_dwconv(dctx *x) {
  uint64_t elems = (uint64_t)(C.n * C.oc * C.oh * C.ow * C.kh * C.kw);
  x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_DWCONV, elems, width_of(C.dt_in, C.dt_out));
  return CT_OK;
}
#undef C

static ct_status dec_matmul(dctx *x) {
#define M (x->in->matmul)
  ct_mxu_job job = {(uint64_t)(M.b_bcast ? 1 : M.batch), (uint64_t)(M.b_bcast ? M.batch * M.m : M.m),
                    (uint64_t)M.k, (uint64_t)M.n, (ct_dtype)M.dt_a};
  return mxu_timing(x, &job);
#undef M
}

static ct_status dec_eltwise(dctx *x) {
#define E (x->in->eltwise)
  uint32_t wd = width_of(width_of(E.dt_a, E.dt_b) > 2 ? CT_I32 : E.dt_a, E.dt_out);
  x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_ELTWISE, (uint64_t)(E.n * E.c * E.h * E.w), wd);
  return CT_OK;
#undef E
}

static ct_status dec_lut(dctx *x) {
#define L (x->in->lut)
  bool w16 = L.dt_in == CT_I16;
  x->op->cycles = ct_vpu_cycles(x->chip, w16 ? CT_VPU_LUT16 : CT_VPU_LUT, (uint64_t)(L.n * L.c * L.h * L.w), w16 ? 2 : 1);
  return CT_OK;
#undef L
}

static ct_status dec_pool(dctx *x) {
#define P (x->in->pool)
  uint64_t elems = (uint64_t)(P.n * P.c * P.oh * P.ow * P.kh * P.kw);
  x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_POOL, elems, width_of(P.dt, P.dt));
  return CT_OK;
#undef P
}

static ct_status dec_requant(dctx *x) {
#define R (x->in->requant)
  x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_REQUANT, (uint64_t)(R.n * R.c * R.h * R.w),
                                width_of(R.dt_in, R.dt_out));
  return CT_OK;
#undef R
}

/* Opcodes with in, out, n, c, h, w, dt_in, dt_out fields and one cost kind. */
#define SIMPLE_VPU(name, KIND)                                                              \
  static ct_status dec_##name(dctx *x) {                                                    \
    uint64_t e = (uint64_t)(x->in->name.n * x->in->name.c * x->in->name.h * x->in->name.w);  \
    x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_##KIND, e,                                \
                                  width_of(x->in->name.dt_in, x->in->name.dt_out));         \
    return CT_OK;                                                                           \
  }
SIMPLE_VPU(cast, CAST)
SIMPLE_VPU(exp, EXP)
SIMPLE_VPU(softmax, SOFTMAX)

static ct_status dec_reduce(dctx *x) {
#define R (x->in->reduce)
  x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_REDUCE, (uint64_t)(R.n * R.c * R.h * R.w),
                                width_of(R.dt_in, R.dt_out));
  return CT_OK;
#undef R
}

static ct_status dec_norm(dctx *x) {
#define N (x->in->norm)
  x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_NORM, (uint64_t)(N.n * N.c * N.h * N.w),
                                width_of(N.dt_in, N.dt_out));
  return CT_OK;
#undef N
}

static ct_status dec_resize(dctx *x) {
#define R (x->in->resize)
  x->op->cycles = ct_vpu_cycles(x->chip, CT_VPU_RESIZE, (uint64_t)(R.n * R.c * R.oh * R.ow) * 4, width_of(R.dt_in, R.dt_out));
  return CT_OK;
#undef R
}

static ct_status dec_ctrl(dctx *x) {
  ct_sim_op *op = x->op;
  op->unit = CT_SIM_CTRL;
  if (x->in->op == CT_ISA_NOP) {
    op->ctrl = CT_SIM_CTRL_NOP;
    op->cycles = (uint64_t)x->in->nop.cycles;
  } else if (x->in->op == CT_ISA_SYNC) {
    op->ctrl = CT_SIM_CTRL_SYNC;
    op->drain_mask = (uint32_t)x->in->sync.engines;
  } else
    op->ctrl = CT_SIM_CTRL_END;
  return CT_OK;
}

typedef ct_status (*dec_fn)(dctx *x);

static const dec_fn decoders[CT_ISA_OP_COUNT] = {
    [CT_ISA_NOP] = dec_ctrl,       [CT_ISA_SYNC] = dec_ctrl,     [CT_ISA_END] = dec_ctrl,
    [CT_ISA_LOAD] = dec_dma,       [CT_ISA_STORE] = dec_dma,     [CT_ISA_MOVE] = dec_dma,
    [CT_ISA_CONV] = dec_conv,      [CT_ISA_MATMUL] = dec_matmul, [CT_ISA_DWCONV] = dec_dwconv,
    [CT_ISA_ELTWISE] = dec_eltwise, [CT_ISA_LUT] = dec_lut,      [CT_ISA_POOL] = dec_pool,
    [CT_ISA_REQUANT] = dec_requant, [CT_ISA_CAST] = dec_cast,    [CT_ISA_REDUCE] = dec_reduce,
    [CT_ISA_EXP] = dec_exp,        [CT_ISA_SOFTMAX] = dec_softmax, [CT_ISA_NORM] = dec_norm,
    [CT_ISA_RESIZE] = dec_resize,
};

static const char *region_name(const ct_insn *in, int k) {
  static const char *dma[] = {"src", "dst"};
  if (in->op == CT_ISA_LOAD || in->op == CT_ISA_STORE || in->op == CT_ISA_MOVE) return dma[k & 1];
  return "operand";
}

/* Cycles a DMA's LMEM side needs through the bank ports: the slowest of its LMEM regions
 * (a MOVE reads one and writes the other at once), each striped over the banks it spans. */
static uint64_t dma_port_cycles(const dctx *x) {
  uint64_t worst = 0;
  for (int k = 0; k < x->op->n_regions; k++) {
    const ct_mem_region *r = &x->op->regions[k];
    if (r->space != CT_SPACE_LMEM) continue;
    uint64_t c = ct_dma_port_cycles(x->chip, (uint64_t)ct_mem_region_numel(r) * r->elem_bytes,
                                    ct_lmem_busiest_bank_bytes(x->lmem, r, 1));
    worst = c > worst ? c : worst;
  }
  return worst;
}

/* Bounds of every region, bank mask, LMEM footprint, VPU port limit. */
static ct_status finish(dctx *x, uint32_t index, ct_diag *d) {
  ct_sim_op *op = x->op;
  for (int k = 0; k < op->n_regions; k++) {
    const ct_mem_region *r = &op->regions[k];
    char what[96];
    snprintf(what, sizeof what, "insn %u (%s): %s %d", index, op->name, region_name(x->in, k), k);
    uint64_t lim = r->space == CT_SPACE_LMEM ? (uint64_t)x->chip->lmem_bytes : (uint64_t)x->chip->gmem_bytes;
    ct_status st = ct_mem_region_check(r, lim, what, d);
    if (st) return st;
    if (r->space != CT_SPACE_LMEM) continue;
    uint64_t lo, hi;
    ct_mem_region_span(r, &lo, &hi);
    uint32_t b0, b1;
    if (ct_lmem_bank_span(x->lmem, r, &b0, &b1))
      op->bank_lo[op->n_bank_spans] = (uint16_t)b0, op->bank_hi[op->n_bank_spans++] = (uint16_t)b1;
    op->lmem_bytes += hi - lo;
  }
  if (op->is_dma) op->dma_port_cycles = dma_port_cycles(x);
  if (op->unit == CT_SIM_VPU) {
    uint64_t port = ct_lmem_port_cycles(x->lmem, op->regions, op->n_regions);
    if (port > op->cycles) op->cycles = port;
  }
  return CT_OK;
}

ct_status ct_sim_decode(const ct_chip *chip, const ct_lmem *lmem, const ct_ddr *ddr,
                        const ct_insn *insn, uint32_t index, ct_sim_op *op, ct_diag *d) {
  memset(op, 0, sizeof *op);
  op->opcode = (int)insn->op;
  op->name = ct_isa_op_name(insn->op);
  if ((unsigned)insn->op >= CT_ISA_OP_COUNT || !decoders[insn->op])
    return ct_diag_set(d, CT_ERR_INPUT, "insn %u: illegal opcode %d", index, (int)insn->op);
  ct_diag sub;
  if (ct_isa_check(insn, chip, &sub))
    return ct_diag_set(d, CT_ERR_INPUT, "insn %u (%s): %s", index, op->name, sub.msg);
  op->wait = insn->wait;
  op->signal = insn->signal;
  op->debug_id = insn->debug_id;
  op->unit = (ct_sim_unit)ct_isa_op_engine(insn->op);
  op->n_regions = regions_of(insn, op->regions);
  dctx x = {chip, lmem, ddr, insn, op};
  ct_status st = decoders[insn->op](&x);
  if (st) return st;
  int64_t max = op->unit == CT_SIM_LOAD ? chip->dma_load_engines : chip->dma_store_engines;
  if (op->is_dma && (op->dma_index < 0 || op->dma_index >= max))
    return ct_diag_set(d, CT_ERR_INPUT, "insn %u (%s): eng %d: the chip has %lld %s engine(s)",
                       index, op->name, op->dma_index, (long long)max,
                       op->unit == CT_SIM_LOAD ? "load" : "store");
  return finish(&x, index, d);
}
