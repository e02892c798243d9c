/* summary.c: the deploy summary, as JSON (cJSON, --summary) and as stderr lines; every
 * number is a plan figure or a cmodel counter (traces/report.h), none is recomputed here. */
#include "deploy/summary.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "traces/report.h"

static double mxu_util(const ct_sim_counters *c) {
  double peak = (double)c->mxu_rows * (double)c->mxu_cols * (double)c->total_cycles;
  return peak > 0 ? (double)c->macs / peak : 0.0;
}

/* Adds "compare" and "sim" of a simulated run r to root; false when out of memory. */
static bool add_run(cJSON *root, const ct_deploy_run *r) {
  cJSON *cmp = cJSON_AddObjectToObject(root, "compare");
  char *sim_text = ct_report_summary_text(&r->so.res.counters);
  cJSON *sim = sim_text ? cJSON_Parse(sim_text) : NULL;
  free(sim_text);
  if (!cmp || !sim) {
    cJSON_Delete(sim);
    return false;
  }
  cJSON_AddNumberToObject(cmp, "outputs_bad", r->bad);
  cJSON_AddNumberToObject(cmp, "stored_compared", r->compared);
  cJSON_AddNumberToObject(cmp, "stored_mismatched", r->mismatched);
  cJSON_AddBoolToObject(cmp, "pass", r->done && !r->bad && !r->mismatched);
  cJSON_AddItemToObject(root, "sim", sim);
  return true;
}

char *ct_deploy_summary_text(const ct_deploy_summary_info *info, const ct_lg_plan *p, const ct_program *prog,
                             const ct_deploy_run *r) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  bool sim = r && r->simulated;
  cJSON_AddStringToObject(root, "model", info->model);
  cJSON_AddStringToObject(root, "chip", p->chip.name);
  cJSON_AddStringToObject(root, "strategy", ct_lg_strategy_name(p->opt.strategy));
  cJSON_AddNumberToObject(root, "layers", p->n_layers);
  cJSON_AddNumberToObject(root, "groups", p->n_groups);
  cJSON_AddNumberToObject(root, "instructions", (double)prog->n_insns);
  cJSON_AddNumberToObject(root, "est_cycles", (double)p->total_cycles);
  cJSON_AddNumberToObject(root, "est_ddr_bytes", (double)p->ddr_bytes);
  cJSON_AddNumberToObject(root, "lmem_peak_bytes", (double)p->lmem_peak);
  cJSON_AddNumberToObject(root, "held_banks", info->held_banks);
  cJSON_AddNumberToObject(root, "compile_seconds", info->compile_s);
  cJSON_AddBoolToObject(root, "compare_all", info->compare_all);
  cJSON_AddBoolToObject(root, "simulated", sim);
  char *s = NULL;
  if (!sim || add_run(root, r)) s = cJSON_Print(root);
  cJSON_Delete(root);
  return s;
}

void ct_deploy_summary_print(FILE *f, const ct_deploy_summary_info *info, const ct_lg_plan *p, const ct_program *prog,
                             const ct_deploy_run *r) {
  fprintf(f, "deploy %s (%s, %s): %d layers in %d groups, %zu instructions, est. %lld cycles", info->model,
          p->chip.name, ct_lg_strategy_name(p->opt.strategy), p->n_layers, p->n_groups, prog->n_insns,
          (long long)p->total_cycles);
  const ct_sim_counters *c = r && r->simulated ? &r->so.res.counters : NULL;
  if (c)
    fprintf(f, ", simulated %llu cycles, MXU utilization %.4f, DDR %llu bytes", (unsigned long long)c->total_cycles,
            mxu_util(c), (unsigned long long)(c->ddr_bytes_read + c->ddr_bytes_written));
  if (c) {
    ct_report_bound b;
    ct_report_bound_of(c, &b);
    fprintf(f, "\ndeploy: lower bound %.0f cycles (%s); total / bound %.2f; schedule efficiency %.3f (%s busy %.0f%% of the run)",
            b.cycles, b.limit, b.total_over_bound, b.efficiency, b.busiest ? b.busiest : "none", 100 * b.efficiency);
  }
  fprintf(f, "\ndeploy: compiled (plan + codegen) in %.3f s", info->compile_s); /* all attempts */
  if (c) {
    double w = c->wall_seconds;
    fprintf(f, "; simulated (timing + functional) in %.3f s, %.3g simulated cycles/s", w,
            w > 0 ? (double)c->total_cycles / w : 0.0);
  }
  fprintf(f, "\n");
}

void ct_deploy_check_print(FILE *f, const ct_deploy_run *r, const char *ref, bool compare_all) {
  if (r->first_diff) fprintf(f, "deploy: output \"%s\" differs from the Tpu reference\n", r->first_diff);
  for (int i = 0; i < r->n_ref; i++) {
    const ct_deploy_ref_line *l = &r->ref[i];
    fprintf(f, "deploy: output \"%s\" vs %s: cosine %.6f, euclid %.6f, SQNR %.2f dB: %s\n", l->name, ref, l->m.cosine,
            l->m.euclid, l->m.sqnr_db, l->verdict);
  }
  if (r->done && compare_all)
    fprintf(f, "deploy: --compare-all: %d stored tensors compared, %d differ%s%s\n", r->compared, r->mismatched,
            r->mismatched ? "; first: " : "", r->mismatched ? r->first : "");
}
