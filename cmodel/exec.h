/* exec.h: the functional effect of every opcode (isa/isa.def semantics), applied once per
 * instruction when it starts (docs/cmodel.md). All integer arithmetic goes through quant/.
 * Operands were bounds-checked by ct_sim_decode. */
#ifndef CT_SIM_EXEC_H
#define CT_SIM_EXEC_H

#include "common/status.h"
#include "isa/isa.h"
#include "memory/gmem.h"
#include "memory/lmem.h"

typedef struct ct_sim_mem {
  ct_lmem *lmem;
  ct_gmem *gmem;
} ct_sim_mem;

/* Applies insn (index `index` for messages). Errors: CT_ERR_LIMIT (scratch allocation),
 * CT_ERR_INPUT (a value the opcode cannot use, e.g. CAST scale ≤ 0, an unimplemented
 * dtype combination), each naming "insn <index> (<opcode>)". */
ct_status ct_sim_exec(ct_sim_mem *m, const ct_insn *insn, uint32_t index, ct_diag *d);

/* Per-class executors (exec_dma.c, exec_mxu.c, exec_vpu.c); same contract. */
ct_status ct_sim_exec_dma(ct_sim_mem *m, const ct_insn *insn, uint32_t index, ct_diag *d);
ct_status ct_sim_exec_conv(ct_sim_mem *m, const ct_insn *insn, uint32_t index, ct_diag *d);
ct_status ct_sim_exec_matmul(ct_sim_mem *m, const ct_insn *insn, uint32_t index, ct_diag *d);
ct_status ct_sim_exec_vpu(ct_sim_mem *m, const ct_insn *insn, uint32_t index, ct_diag *d);

#endif
