/* flow.c: planning with the LMEM fallback, and the per-group report (flow.h). */
#include "deploy/flow.h"

#include <stdlib.h>

#include "compiler/backend/codegen.h"
#include "traces/report.h"

ct_status ct_deploy_compile(const ct_graph *g, const ct_chip *chip, const ct_lg_options *o, ct_lg_plan **plan,
                            ct_program *prog, int *held, ct_diag *d) {
  ct_lg_plan *p = NULL;
  ct_diag first; /* the codegen's LIMIT message, reported when a re-plan does not fit at all */
  ct_diag_clear(&first);
  ct_status st = CT_OK;
  *held = 0;
  for (int k = 0;; k = k ? 2 * k : 1) { /* 0, 1, 2, 4, ... banks held back, up to half */
    ct_chip pc = *chip;
    pc.lmem_bytes -= k * (chip->lmem_bytes / chip->lmem_banks), pc.lmem_banks -= k;
    st = ct_lg_plan_graph(g, &pc, o, &p, d);
    if (st == CT_ERR_LIMIT && k > 0) *d = first;
    if (st) break;
    p->chip = *chip; /* codegen checks against the real LMEM */
    st = ct_cg_model(p, prog, d);
    if (st != CT_ERR_LIMIT || 2 * (k ? 2 * k : 1) > chip->lmem_banks) break;
    if (k == 0) first = *d;
    ct_lg_plan_free(p), p = NULL;
    ct_program_free(prog), ct_program_init(prog, ct_chip_signature(chip));
    ct_diag_clear(d);
    *held = k ? 2 * k : 1;
  }
  if (st) ct_lg_plan_free(p), p = NULL;
  *plan = p;
  return st;
}

/* A group's busy cycles per engine kind, semaphore stalls, its bound (ct_report_limit of its
 * MXU ideal cycles and its VPU work; DMA is not bounded per group: the bytes a group moves
 * depend on the grouping) and its efficiency (the busier compute engine's busy cycles / the
 * group's span). */
static void group_bound_csv(FILE *f, const ct_deploy_group_sim *s, uint64_t cyc) {
  double bound;
  const char *limit = ct_report_limit(s->mxu_ideal, (double)s->busy_vpu, 0, &bound);
  uint64_t busiest = s->busy_mxu > s->busy_vpu ? s->busy_mxu : s->busy_vpu;
  fprintf(f, "%llu,%llu,%llu,%llu,%.0f,%s,%.4f\n", (unsigned long long)s->busy_mxu, (unsigned long long)s->busy_vpu,
          (unsigned long long)s->busy_dma, (unsigned long long)s->stall_sem, bound, limit,
          cyc ? (double)busiest / (double)cyc : 0.0);
}

bool ct_deploy_groups_csv(const ct_lg_plan *p, const ct_deploy_run *r, FILE *f) {
  fprintf(f, "group,layers,first_layer,last_layer,tile_shape,tiles,lmem_bytes,est_cycles,sim_cycles,est_over_sim,"
             "mxu_util,ddr_bytes,busy_mxu,busy_vpu,busy_dma,stall_semaphore,bound_cycles,bound_limit,"
             "schedule_efficiency\n");
  double rc = (double)p->chip.mxu_rows * (double)p->chip.mxu_cols;
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_lg_group *gr = &p->groups[gi];
    const ct_op *a = p->layers[gr->first].op, *b = p->layers[gr->first + gr->n_layers - 1].op;
    char shape[128] = "";
    for (int i = 0, o = 0; i < gr->tile_ndim && o < (int)sizeof shape - 24; i++)
      o += snprintf(shape + o, sizeof shape - (size_t)o, "%s%lld", i ? "x" : "", (long long)gr->tile_shape[i]);
    fprintf(f, "%d,%d,\"%s\",\"%s\",%s,%lld,%lld,%lld,", gi, gr->n_layers, a->loc ? a->loc : "", b->loc ? b->loc : "", shape,
            (long long)gr->n_tiles, (long long)gr->lmem_bytes, (long long)gr->cycles);
    const ct_deploy_group_sim *s = r && r->simulated ? &r->gs[gi] : NULL;
    if (s && s->ran) {
      uint64_t cyc = s->end - s->start;
      fprintf(f, "%llu,%.4f,%.4f,%llu,", (unsigned long long)cyc, cyc ? (double)gr->cycles / (double)cyc : 0.0,
              cyc ? (double)s->macs / ((double)cyc * rc) : 0.0, (unsigned long long)s->ddr);
      group_bound_csv(f, s, cyc);
    } else {
      fprintf(f, ",,,,,,,,,,\n");
    }
  }
  return !ferror(f);
}
