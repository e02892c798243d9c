/* cost.c: the engines' cost formulas (cost.h) — MXU fold model (SCALE-Sim, arXiv:1811.02883
 * §III; scale-sim-v2 systolic_compute_ws.py / _os.py), the VPU lane model (vpu_cost.def) and
 * a DMA transfer alone (latency + bytes / rate). */
#include "isa/cost.h"

#include <math.h>

static uint64_t ceil_div(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

uint64_t ct_mxu_fold_cycles(uint64_t rows, uint64_t cols, uint64_t t) {
  return 2 * rows + cols + t - 2;
}

double ct_mxu_rate(const ct_chip *chip, ct_dtype dt) {
  if (dt == CT_BF16 || dt == CT_F16) return chip->mxu_fp_rate;
  if (dt == CT_F32) return chip->mxu_fp_rate / 2;
  return 1.0;
}

void ct_mxu_cost_of(const ct_chip *chip, const ct_mxu_job *job, ct_mxu_cost *c) {
  uint64_t r = (uint64_t)chip->mxu_rows, k = (uint64_t)chip->mxu_cols;
  bool os = chip->mxu_dataflow == CT_DATAFLOW_OS;
  c->sr = os ? job->pixels : job->red;
  c->sc = job->filters;
  c->t = os ? job->red : job->pixels;
  c->folds = job->reps * ceil_div(c->sr, r) * ceil_div(c->sc, k);
  c->fold_cycles = ct_mxu_fold_cycles(r, k, c->t);
  uint64_t cyc = c->folds * c->fold_cycles;
  double rate = ct_mxu_rate(chip, job->dtype);
  if (rate < 1.0) cyc = (uint64_t)ceil((double)cyc / rate - 1e-9);
  c->cycles = cyc;
}

uint64_t ct_vpu_cycles(const ct_chip *chip, ct_vpu_kind k, uint64_t elems, uint32_t width_bytes) {
  static const struct {
    uint64_t passes, slow, latency;
  } cost[] = {
#define X(K, passes, slowdown, latency, doc) {passes, slowdown, latency},
#include "isa/vpu_cost.def"
#undef X
  };
  _Static_assert(sizeof cost / sizeof cost[0] == CT_VPU_KIND_COUNT, "vpu_cost.def drift");
  uint64_t lanes = (uint64_t)chip->vpu_lanes / (width_bytes ? width_bytes : 1);
  if (lanes == 0) lanes = 1;
  return cost[k].passes * ceil_div(elems, lanes) * cost[k].slow + cost[k].latency;
}

uint64_t ct_dma_port_cycles(const ct_chip *chip, uint64_t bytes, uint64_t busiest_bank_bytes) {
  uint64_t port = (uint64_t)chip->lmem_bank_port_bytes, stripe = (uint64_t)chip->dma_stripe_banks;
  if (stripe > (uint64_t)chip->lmem_banks) stripe = (uint64_t)chip->lmem_banks;
  uint64_t bank = ceil_div(busiest_bank_bytes, port), all = ceil_div(bytes, port * stripe);
  return bank > all ? bank : all;
}

uint64_t ct_dma_cycles(const ct_chip *chip, uint64_t moved, bool uses_ddr) {
  uint64_t bank = (uint64_t)(chip->lmem_bytes / chip->lmem_banks);
  uint64_t port = ct_dma_port_cycles(chip, moved, moved < bank ? moved : bank);
  if (!uses_ddr) return port;
  uint64_t ddr = ceil_div(moved, (uint64_t)chip->gmem_bytes_per_cycle);
  return (uint64_t)chip->gmem_latency_cycles + (ddr > port ? ddr : port);
}
