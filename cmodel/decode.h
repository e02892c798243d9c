/* decode.h: maps decoded ISA instructions (isa/isa.h ct_insn) onto the clock loop's view
 * (core.h ct_sim_op): engine, semaphores, exact strided operand regions, bank mask and the
 * cost of the instruction under the chip's timing model (isa/cost.h, dma/dma.h). */
#ifndef CT_SIM_DECODE_H
#define CT_SIM_DECODE_H

#include "cmodel/core.h"
#include "isa/chip.h"
#include "isa/isa.h"
#include "memory/lmem.h"

/* Fills *op for instruction `index`. Checks the instruction (ct_isa_check with chip) and
 * every operand region against lmem.bytes / gmem.bytes. Errors (CT_ERR_INPUT, message
 * "insn <index> (<opcode>): ..."): an opcode the cmodel does not implement, a failed check,
 * an operand out of bounds, a DMA engine index beyond dma.load_engines/store_engines. */
ct_status ct_sim_decode(const ct_chip *chip, const ct_lmem *lmem, const ct_ddr *ddr,
                        const ct_insn *insn, uint32_t index, ct_sim_op *op, ct_diag *d);

/* The LMEM/GMEM regions of a DMA instruction (LOAD, STORE, MOVE): src (read) and dst
 * (write; with trans its shape is (n, c, w, h) over the dst strides). false for others. */
bool ct_sim_dma_regions(const ct_insn *insn, ct_mem_region *src, ct_mem_region *dst);

#endif
