/* mxu.h: `ctpu deploy --mxu-report FILE.csv` — MXU cycles per Conv / Gemm / MatMul
 * layer of a deployed and simulated model next to SCALE-Sim's closed form for the layer's
 * whole GEMM (docs/backend.md "MXU cycles vs SCALE-Sim"). */
#ifndef CT_DEPLOY_MXU_H
#define CT_DEPLOY_MXU_H

#include <stdio.h>

#include "cmodel/core.h"
#include "compiler/backend/lg.h"
#include "isa/program.h"

/* Writes one CSV row per layer of plan p that runs on the MXU (a Conv with group < channels,
 * Gemm, MatMul), then a `total` row: layer, op, the whole layer's GEMM (pixels, red, filters,
 * reps: docs/cmodel.md "MXU"), SCALE-Sim's folds and cycles for it on p->chip
 * (folds · (2R + C + T − 2)), the layer's MXU instructions in prog (tiles), the sum of their
 * folds and of their closed-form cycles, the simulated cycles they occupied the MXU (res:
 * end − start, so bank-port stalls included), and sim_mxu / scalesim. Instructions belong to
 * a layer by their debug entry's layer name (the op's location). false on a write error. */
bool ct_deploy_mxu_report(const ct_lg_plan *p, const ct_program *prog, const ct_sim_result *res, FILE *f);

#endif
