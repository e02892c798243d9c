/* codegen.h: code generation from a back-end plan (lg.h) to ISA instructions (isa/program.h):
 * one layer group's time steps — LOAD of tile s, compute of tile s−1, STORE of tile s−2 —
 * ordered only by semaphores, with the debug map (layer, group, tile, time step). First
 * piece: groups that are chains of INT8 Convs (VTA's dependency tokens; TPU-MLIR's GDMA/TIU sync). */
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

/* Semaphores the conv codegen uses (ids; sem.count ≥ CT_CG_SEM_COUNT): weights and requant
 * tables loaded; per buffer copy b: input tile loaded, input buffer free, output tile
 * computed, output buffer free. */
enum {
  CT_CG_SEM_W, CT_CG_SEM_LOADED0, CT_CG_SEM_LOADED1, CT_CG_SEM_INFREE0, CT_CG_SEM_INFREE1,
  CT_CG_SEM_DONE0, CT_CG_SEM_DONE1, CT_CG_SEM_OUTFREE0, CT_CG_SEM_OUTFREE1, CT_CG_SEM_COUNT
};

/* Emits group gi of plan p — a chain of INT8 Convs (group 1, N = 1, no bias; layer k reads
 * only layer k−1's output, which nothing else reads), cut along H or not at all — into prog
 * (initialized by the caller). q has one entry per layer of the group. Emits: the weights
 * as constants at the plan's GMEM addresses and the requant tables after the plan's GMEM;
 * the IO entries of the chain's input and output (named as the graph values, i8); step 0:
 * the resident LOADs (weights, tables; the last signals W); then per time step s: LOAD of
 * input tile s into IN copy s mod 2, the CONVs of tile s − 1 (the first waits for its tile
 * and W on tile 0, the last for its OUT copy to be stored; intermediates go to the plan's MID
 * buffers), STORE of tile s − 2; END. Tile ranges are the planner's (ct_lg_tile_ranges): a
 * conv's input rows are ct_lg_halo_rows of its output rows, rows missing at the image edges
 * become pad_t / pad_b. One debug entry (layer, group, tile, step) per instruction.
 * Errors: CT_ERR_INPUT "unsupported" when the group is not such a chain; CT_ERR_LIMIT when
 * the requant tables do not fit LMEM, too few semaphores, or out of memory. */
ct_status ct_cg_conv_group(const ct_lg_plan *p, int gi, const ct_cg_conv_q *q, ct_program *prog, ct_diag *d);

/* Emits a whole planned INT8 Tpu module (plan p of a Tpu graph) into prog (initialized by
 * the caller): constants (the plan's weight region as stored: OIHW conv weights, [N,K] or
 * [K,N] Gemm B — the MXU reads them as they are — plus per-layer requant pairs and LUT
 * tables after the plan's GMEM), the IO table (a float module input feeding an integer
 * Cast becomes an integer program input with that Cast's scale and zero point, named as the
 * module input), then every group's tiles in order: LOAD of each group input tile (resident
 * constants on the first tile), the layers (Conv → CONV or DWCONV with per-channel requant,
 * Add/Sub/Mul → ELTWISE, pools → POOL, Lut → LUT, Requant and integer Cast → REQUANT,
 * Gemm/MatMul → MATMUL; views emit nothing), STORE of each group output tile; END. Each
 * group is staged and emitted by its schedule (cg_sched.h): the double-buffered load /
 * compute / store pipeline when the plan pipelines it (semaphores only), else tile by tile;
 * a SYNC between groups; debug entries name the op's location, STOREs the stored value (so `--dump-all` dumps are
 * named as the reference's values). Errors: CT_ERR_INPUT naming the layer and op when an op
 * or a tiling has no codegen (float ops, channel cuts, asymmetric weights, ...);
 * CT_ERR_LIMIT when the tables do not fit LMEM or GMEM, or out of memory. */
ct_status ct_cg_model(const ct_lg_plan *p, ct_program *prog, ct_diag *d);

#endif
