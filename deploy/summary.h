/* summary.h: what one `ctpu deploy` run found, as a JSON document (--summary) and as the
 * closing lines on stderr: the plan (layers, groups, estimated cycles), the program, the
 * cmodel's counters (traces/report.h) and the comparisons. Field meanings: docs/sweep.md
 * "summary.json". */
#ifndef CT_DEPLOY_SUMMARY_H
#define CT_DEPLOY_SUMMARY_H

#include <stdio.h>

#include "compiler/backend/lg.h"
#include "deploy/flow.h"
#include "isa/program.h"

/* What the summary says besides the plan, program and run. */
typedef struct ct_deploy_summary_info {
  const char *model;  /* the model path as given */
  double compile_s;   /* wall seconds of plan + codegen (every attempt) */
  int held_banks;     /* LMEM banks held back for tables (ct_deploy_compile's *held) */
  bool compare_all;   /* --compare-all was asked for */
} ct_deploy_summary_info;

/* The summary JSON (malloc'd, cJSON-printed; NULL when out of memory): model, chip,
 * strategy, layers, groups, instructions, est_cycles, est_ddr_bytes, lmem_peak_bytes,
 * held_banks, compile_seconds, simulated; when simulated, "compare" {outputs_bad,
 * stored_compared, stored_mismatched, pass} and "sim" (the cmodel summary of
 * ct_report_summary_text). r may be NULL (not simulated). */
char *ct_deploy_summary_text(const ct_deploy_summary_info *info, const ct_lg_plan *p, const ct_program *prog,
                             const ct_deploy_run *r);

/* Prints the one-line result of a deploy run and its compile / simulation times to f. */
void ct_deploy_summary_print(FILE *f, const ct_deploy_summary_info *info, const ct_lg_plan *p, const ct_program *prog,
                             const ct_deploy_run *r);

/* Prints what ct_deploy_check found, one line each: the first output not bit-equal to the Tpu
 * reference, each output against the float reference file ref (cosine, euclid, SQNR, verdict),
 * and with compare_all the stored tensors compared and how many differ. */
void ct_deploy_check_print(FILE *f, const ct_deploy_run *r, const char *ref, bool compare_all);

#endif
