/* deploy_test.h: what `ctpu deploy --test-input` checks: the program run on the cmodel against
 * the Tpu reference run in-process on the same inputs, bit for bit (outputs; with
 * --compare-all every tensor the program stores), the outputs against a reference file by
 * cosine / euclid (--test-reference), and the per-group figures of OUT.ctpu.groups.csv. */
#ifndef CT_TOOLS_DEPLOY_TEST_H
#define CT_TOOLS_DEPLOY_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmodel/sim.h"
#include "compiler/backend/lg.h"
#include "io/compare.h"
#include "isa/program.h"

/* Per-group figures of a simulation: first start and last end cycle of the group's
 * instructions, their MACs, its layers' DDR bytes; ran: any instruction of it ran. */
typedef struct ct_deploy_grp_sim {
  uint64_t start, end, macs, ddr;
  bool ran;
} ct_deploy_grp_sim;

/* A deploy's run: the cmodel's result, per-group figures (gs: one per plan group, the
 * caller's), whether it was simulated, the compile time. */
typedef struct ct_deploy_run {
  ct_sim_run_output so;
  ct_deploy_grp_sim *gs;
  bool simulated;
  double compile_s; /* plan + codegen wall seconds (all attempts) */
} ct_deploy_run;

/* What to test: the input files, the reference file (NULL: none) and its tolerance (NULL: the
 * default of the less precise of the module and the file, io/compare.h), --compare-all. */
typedef struct ct_deploy_test {
  const char *const *files;
  int n_files;
  const char *ref;
  const ct_compare_tol *tol;
  bool compare_all;
} ct_deploy_test;

/* Loads t's inputs for the Tpu module g (io/inputs.h), runs prog on chip (timing + functional,
 * race check; a progress line on a terminal) and g on the reference interpreter, and compares:
 * every output bit for bit, with compare_all every stored tensor (one summary line on stderr:
 * "deploy: --compare-all: N stored tensors compared, M differ"), with ref the dequantized
 * outputs by cosine / euclid (a line per output). On success fills r (so, simulated, gs for
 * n_groups groups). Errors: CT_ERR_CHECK "<n> outputs and <m> stored tensors differ from the
 * reference"; those of ct_inputs_load, ct_sim_run, ct_ref_run, reading ref (CT_ERR_INPUT, also
 * for an output ref lacks); CT_ERR_LIMIT out of memory. r->so is the caller's to free. */
ct_status ct_deploy_test_run(const ct_deploy_test *t, const ct_graph *g, const ct_chip *chip, const ct_program *prog,
                             ct_deploy_run *r, int n_groups, ct_diag *d);

/* Writes OUT.ctpu.groups.csv: per plan group its layers, tile shape, tiles, LMEM bytes and
 * estimated cycles, and when r was simulated the simulated cycles, estimated / simulated,
 * MXU utilization and DDR bytes. false on a write error. */
bool ct_deploy_groups_csv(const ct_lg_plan *p, const ct_deploy_run *r, FILE *f);

#endif
