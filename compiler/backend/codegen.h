/* codegen.h: code generation from a back-end plan (lg.h) to ISA instructions (isa/program.h):
 * one layer group's time steps — LOAD of tile s, compute of tile s−1, STORE of tile s−2 —
 * ordered only by semaphores, with the debug map (layer, group, tile, time step). First
 * piece: a single INT8 Conv group (VTA's dependency tokens; TPU-MLIR's GDMA/TIU sync). */
#ifndef CT_CODEGEN_H
#define CT_CODEGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/backend/lg.h"
#include "isa/program.h"

/* The integer parameters of a quantized Conv (until the Tpu dialect carries them). */
typedef struct ct_cg_conv_q {
  const int8_t *weight;      /* OIHW int8, oc·ic·kh·kw elements (group 1) */
  int32_t multiplier, shift; /* per-tensor requant: y = sat(rshift_round(acc·m, s) + zp_out) */
  int32_t zp_in, zp_out;
  bool relu;                 /* fused ReLU: clamp below at zp_out */
  double scale_in, scale_out;/* recorded in the IO table */
} ct_cg_conv_q;

/* Semaphores the conv codegen uses (ids; sem.count must exceed CT_CG_SEM_COUNT − 1):
 * weights and requant table loaded; per buffer copy b: input tile loaded, input buffer free,
 * output tile computed, output buffer free. */
enum {
  CT_CG_SEM_W, CT_CG_SEM_RQ, CT_CG_SEM_LOADED0, CT_CG_SEM_LOADED1, CT_CG_SEM_INFREE0, CT_CG_SEM_INFREE1,
  CT_CG_SEM_DONE0, CT_CG_SEM_DONE1, CT_CG_SEM_OUTFREE0, CT_CG_SEM_OUTFREE1, CT_CG_SEM_COUNT
};

/* Emits group gi of plan p, which must be one INT8 Conv (group 1, 4-D, cut along H or not at
 * all), into prog (initialized by the caller): the weights and the requant table as
 * constants (weights at the plan's GMEM address, the table after the plan's GMEM), the IO
 * entries of the conv's input and output (named as the graph values, i8, at their GMEM
 * addresses), then per time step LOAD / CONV / STORE with the plan's LMEM buffers (double
 * buffers alternate with the tile), semaphores so that no two engines touch the same bytes
 * unordered, a debug entry per instruction, and END. Tile t covers output rows
 * [t·h, min(OH, (t+1)·h)), h = ceil(OH / secs); its input rows come from ct_lg_halo_rows and
 * the rows a tile lacks at the image edges become pad_t / pad_b.
 * Errors: CT_ERR_INPUT "unsupported" when the group is not such a conv (or is cut along
 * another axis), CT_ERR_LIMIT when the requant table does not fit LMEM or out of memory. */
ct_status ct_cg_conv_group(const ct_lg_plan *p, int gi, const ct_cg_conv_q *q, ct_program *prog, ct_diag *d);

#endif
