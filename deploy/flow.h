/* flow.h: the steps of `ctpu deploy` after loading the model (docs/backend.md "Deploy",
 * TPU-MLIR's model_deploy): plan and generate the program of a Tpu module, run it on the
 * cmodel and check it against the Tpu reference interpreter (bit for bit) and optionally a
 * float reference file, and the per-group report of the plan and the run. */
#ifndef CT_DEPLOY_FLOW_H
#define CT_DEPLOY_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmodel/sim.h"
#include "compiler/backend/lg.h"
#include "io/compare.h"
#include "ir/ir.h"
#include "isa/chip.h"
#include "isa/program.h"

/* Plans (ct_lg_plan_graph with o) and generates (ct_cg_model) the program of the Tpu module g
 * for chip into *plan (freed with ct_lg_plan_free; its chip is chip) and prog (initialized by
 * the caller for ct_chip_signature(chip)). The planner reserves LMEM for the codegen's tables
 * and scratch (lg_reserve.c); should codegen still run out of LMEM, the module is planned
 * again with whole banks held back (same bank size): 1, 2, 4, ... up to half the banks;
 * *held says how many the program was planned with (0: none). Errors: those of the planner
 * and the codegen; when no re-plan fits, the codegen's first CT_ERR_LIMIT message. *plan is
 * NULL on error. */
ct_status ct_deploy_compile(const ct_graph *g, const ct_chip *chip, const ct_lg_options *o, ct_lg_plan **plan,
                            ct_program *prog, int *held, ct_diag *d);

/* What the cmodel run of one layer group took. */
typedef struct ct_deploy_group_sim {
  uint64_t start, end; /* cycles: the group's first instruction start, last instruction end */
  uint64_t macs;       /* MXU MACs of its layers (the summary's macs) */
  uint64_t ddr;        /* DDR bytes read and written by its layers */
  uint64_t busy_mxu, busy_vpu, busy_dma; /* busy cycles of its instructions (dma: every DMA engine) */
  uint64_t stall_sem;  /* cycles its instructions waited on semaphores, Σ over engines */
  double mxu_ideal;    /* Σ MACs / (rows · cols · rate) of its MXU instructions */
  bool ran;            /* some instruction of the group ran */
} ct_deploy_group_sim;

/* One program output against the float reference file (ct_deploy_check_options.ref). */
typedef struct ct_deploy_ref_line {
  const char *name;      /* the output (a name in run.so.outputs) */
  ct_compare_metrics m;  /* its dequantized values vs the file's tensor */
  const char *verdict;   /* ct_compare_verdict_name, or "FAIL" below the tolerance */
  bool ok;
} ct_deploy_ref_line;

/* Options of ct_deploy_check. */
typedef struct ct_deploy_check_options {
  const char *const *files; /* test inputs (.h5, .pb, images; io/inputs.h) */
  int n_files;
  const char *ref;          /* optional: a file of float reference outputs (HDF5) */
  const ct_compare_tol *tol; /* cosine / euclidean tolerance against ref; NULL: the default of
                             * the less precise of the module and ref (io/compare.h) */
  bool compare_all;         /* compare every stored tensor with the Tpu reference's value */
  void (*progress)(void *user, uint32_t started, uint32_t total); /* the cmodel's (sim.h) */
  void *progress_user;
} ct_deploy_check_options;

/* A checked run: the cmodel's results, per-group figures and what the comparisons found.
 * Zero-initialize; ct_deploy_run_free releases it. */
typedef struct ct_deploy_run {
  ct_sim_run_output so;
  ct_deploy_group_sim *gs;  /* per layer group of the plan (filled when simulated) */
  bool simulated;           /* the run passed every check */
  bool done;                /* every comparison ran (whatever it found) */
  const char *first_diff;   /* the first output not bit-equal to the Tpu reference (NULL: none) */
  int bad;                  /* outputs not bit-equal, plus those below the tolerance */
  ct_deploy_ref_line *ref;  /* per output compared with o->ref, in output order */
  int n_ref;
  int compared, mismatched; /* compare_all: stored tensors compared, and not bit-equal */
  char first[512];          /* compare_all: the first mismatch, "\"name\": element i is x, ..." */
} ct_deploy_run;

/* Runs prog on the cmodel with the inputs o->files (as the Tpu module g's Input ops take them,
 * io/inputs.h) and g on the Tpu reference interpreter, and compares: every program output
 * with the reference's bit for bit; with o->ref each output, dequantized, with the file's
 * tensor of its name (cosine, euclidean similarity under o->tol); with o->compare_all every
 * tensor the program stores (dumps) with the reference's value of its name, byte for byte.
 * On success r->gs holds per-group figures of the n_groups groups (instructions by their
 * debug entry's group). Errors: those of the inputs, the cmodel and the interpreter;
 * CT_ERR_INPUT o->ref unreadable or without an output's tensor; CT_ERR_CHECK "N outputs and
 * M stored tensors differ from the reference"; CT_ERR_LIMIT out of memory. r holds what was
 * compared until then. */
ct_status ct_deploy_check(const ct_deploy_check_options *o, const ct_graph *g, const ct_chip *chip,
                          const ct_program *prog, int n_groups, ct_deploy_run *r, ct_diag *d);
/* Releases r (the cmodel's output, group figures, reference lines) and zeroes it. */
void ct_deploy_run_free(ct_deploy_run *r);

/* Writes the per-group CSV of plan p (OUT.groups.csv; docs/backend.md): group, layers, first
 * and last layer, tile shape, tiles, LMEM bytes, estimated cycles, then (r simulated, else
 * empty) simulated cycles, estimated / simulated, MXU utilization (MACs / (cycles · rows ·
 * cols)), DDR bytes. r may be NULL. false on a write error. */
bool ct_deploy_groups_csv(const ct_lg_plan *p, const ct_deploy_run *r, FILE *f);

#endif
