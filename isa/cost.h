/* cost.h: the cost tables of the compute engines, the one home of their cycle formulas: the
 * cmodel times each instruction with them (cmodel/decode.c) and the layer-group planner
 * estimates layers with them (compiler/backend/lg_eval.c). MXU folds after SCALE-Sim
 * (Samajdar et al., "SCALE-Sim: Systolic CNN Accelerator Simulator", arXiv:1811.02883, and
 * scale-sim-v2's systolic_compute_{ws,os}.py); VPU lanes + fixed latency per op kind
 * (isa/vpu_cost.def). Formulas and tables: docs/cmodel.md "Timing model". */
#ifndef CT_ISA_COST_H
#define CT_ISA_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "common/tensor.h"
#include "isa/chip.h"

/* A GEMM-shaped MXU job: `reps` independent products (conv groups, unshared matmul
 * batches), each of `pixels` output rows × `filters` output columns × `red` reduction. */
typedef struct ct_mxu_job {
  uint64_t reps, pixels, red, filters;
  ct_dtype dtype;    /* operand type: i8/u8 full rate, bf16/f16 fp_rate, f32 fp_rate / 2 */
} ct_mxu_job;

/* The mapping of a job onto an R × C array and its cycle count:
 *   WS: Sr = red, Sc = filters, T = pixels;  OS: Sr = pixels, Sc = filters, T = red;
 *   folds = reps · ceil(Sr / R) · ceil(Sc / C);  fold_cycles = 2R + C + T − 2;
 *   int8 cycles = folds · fold_cycles; float: ceil(int8 cycles / rate). */
typedef struct ct_mxu_cost {
  uint64_t sr, sc, t, folds, fold_cycles, cycles;
} ct_mxu_cost;

/* Cycles of one fold: 2R + C + T − 2 (WS: R cycles to load weights, R − 1 + C − 1 of skew
 * fill/drain, T input rows; OS: R + C + T − 2 to compute plus R to shift the outputs out —
 * SCALE-Sim paper convention; the scale-sim-v2 code overlaps that drain, R + C + T − 2). */
uint64_t ct_mxu_fold_cycles(uint64_t rows, uint64_t cols, uint64_t t);

/* The MXU's MAC rate for operands of type dt relative to int8: 1 for i8/u8 (and any other
 * integer), mxu.fp_rate for bf16/f16, mxu.fp_rate / 2 for f32. */
double ct_mxu_rate(const ct_chip *chip, ct_dtype dt);

/* Maps job onto chip's MXU (rows, cols, dataflow, fp_rate) and fills *cost. */
void ct_mxu_cost_of(const ct_chip *chip, const ct_mxu_job *job, ct_mxu_cost *cost);

/* VPU op kinds (isa/vpu_cost.def) and their cost parameters: cycles = passes · ceil(elems /
 * lanes_eff) · slowdown + latency, lanes_eff = vpu.lanes / bytes of the widest element type
 * (≥ 1). */
typedef enum ct_vpu_kind {
#define X(K, passes, slowdown, latency, doc) CT_VPU_##K,
#include "isa/vpu_cost.def"
#undef X
  CT_VPU_KIND_COUNT
} ct_vpu_kind;

/* VPU cycles of `elems` element-steps of kind k whose widest type has width_bytes bytes
 * (0 counts as 1). */
uint64_t ct_vpu_cycles(const ct_chip *chip, ct_vpu_kind k, uint64_t elems, uint32_t width_bytes);

/* Cycles the LMEM side of one DMA transfer needs through the bank ports (docs/cmodel.md
 * "DMA"): a transfer stripes its `bytes` over the banks its LMEM region spans, so it takes
 * max(ceil(busiest_bank_bytes / lmem.bank_port_bytes), ceil(bytes / (lmem.bank_port_bytes ·
 * min(dma.stripe_banks, lmem.banks)))) cycles; with dma.stripe_banks = 1 that is
 * ceil(bytes / lmem.bank_port_bytes), one port per transfer. */
uint64_t ct_dma_port_cycles(const ct_chip *chip, uint64_t bytes, uint64_t busiest_bank_bytes);

/* Cycles of one DMA transfer of `moved` bytes (burst-rounded: memory/region.h) with nothing
 * else moving, its LMEM side assumed to fill min(moved, one bank) of its busiest bank (the
 * planner's view before buffers have addresses): a LOAD / STORE (uses_ddr)
 * gmem.latency_cycles + max(ceil(moved / gmem.bytes_per_cycle), ct_dma_port_cycles), an
 * LMEM → LMEM MOVE ct_dma_port_cycles — what the cmodel's DMA engine (dma/dma.c) takes for
 * it alone (docs/cmodel.md "DMA"); the planner adds the sharing of the DDR between engines. */
uint64_t ct_dma_cycles(const ct_chip *chip, uint64_t moved, bool uses_ddr);

#endif
