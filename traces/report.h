/* report.h: the architect-facing outputs built from the counters (counters.h): the summary
 * JSON (cJSON) and the per-layer CSV. Both are written to a temp file and renamed. Field
 * meanings: docs/traces.md. */
#ifndef CT_REPORT_H
#define CT_REPORT_H

#include "common/status.h"
#include "traces/counters.h"

/* Writes the summary JSON: total_cycles, freq_mhz, time_us, instructions, macs,
 * mxu_utilization = macs / (mxu_rows · mxu_cols · total_cycles), ddr_bytes_read,
 * ddr_bytes_written, bank_conflict_cycles, wall_seconds, sim_cycles_per_second, functional,
 * engines.{name}.{busy, idle, stall.{bank_conflict, ddr, semaphore, queue_full}, instructions},
 * lower_bound.{mxu_cycles, vpu_cycles, ddr_cycles, ddr_compulsory_bytes, cycles, limit,
 * total_over_bound, schedule_efficiency, busiest_engine} (the roofline bound of the run and the schedule's
 * distance from it: docs/traces.md).
 * Errors: CT_ERR_INPUT (cannot write path), CT_ERR_LIMIT (no memory). */
ct_status ct_report_summary(const char *path, const ct_sim_counters *c, ct_diag *d);

/* The roofline lower bound of a run and the schedule's distance from it (docs/traces.md):
 * mxu = Σ MACs / (rows · cols · rate), vpu = the VPU's busy cycles, ddr = compulsory DDR
 * bytes / bytes per cycle (all in cycles); cycles = the largest, limit its name ("mxu",
 * "vpu", "ddr", "none"); total_over_bound = total_cycles / cycles; efficiency = busy cycles
 * of the busiest engine (busiest, its name; NULL with no engines) / total_cycles. */
typedef struct ct_report_bound {
  double mxu, vpu, ddr, cycles, total_over_bound, efficiency;
  const char *limit, *busiest;
} ct_report_bound;

/* The bound of three resource times (cycles): *bound = the largest; returns its name ("mxu",
 * "vpu", "ddr"; ties name the VPU, then the MXU; "none" when all are 0). */
const char *ct_report_limit(double mxu, double vpu, double ddr, double *bound);

/* Fills *b from the counters of a run. */
void ct_report_bound_of(const ct_sim_counters *c, ct_report_bound *b);

/* Builds the summary as a cJSON-printed string (malloc'd; NULL on out of memory). */
char *ct_report_summary_text(const ct_sim_counters *c);

/* Writes the per-layer CSV (RFC 4180 quoting): header
 * layer,group,start,end,cycles,instructions,busy_<engine>...,macs,ddr_bytes_read,
 * ddr_bytes_written,stall_bank_conflict,stall_ddr,stall_semaphore — one row per layer in the
 * given order; cycles = end − start; stall_* = the layer's stall cycles, Σ over engines.
 * Errors: CT_ERR_INPUT (cannot write path). */
ct_status ct_report_layers(const char *path, const ct_sim_counters *c,
                           const ct_layer_counters *layers, int n_layers, ct_diag *d);

#endif
