/* sim.h: the cmodel entry point (`ctpu sim`, docs/architecture.md §1, §5): loads a program's
 * constants and inputs into GMEM, runs it on the clock loop (or functionally), returns the
 * outputs, optionally every stored tensor, the counters and per-layer aggregates. */
#ifndef CT_SIM_H
#define CT_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "cmodel/core.h"
#include "common/h5io.h"
#include "isa/chip.h"
#include "isa/program.h"
#include "traces/counters.h"
#include "traces/trace.h"

typedef struct ct_sim_run_options {
  bool functional;      /* skip timing; outputs are identical */
  bool no_race_check;   /* turn the vector-clock race check off (it is on by default) */
  bool dump_all;        /* collect every stored tensor (out->dumps) */
  ct_trace *trace;      /* NULL: no trace */
  uint64_t max_cycles;  /* 0: no limit */
  bool timing_only;     /* skip the functional effects (benchmarks): outputs are garbage */
  /* Called every 64 instruction starts (not with timing_only): started instructions so far
   * and the program's instruction count — for a progress line. NULL: none. */
  void (*progress)(void *user, uint32_t started, uint32_t total);
  void *progress_user;
} ct_sim_run_options;

typedef struct ct_sim_run_output {
  ct_sim_result res;             /* counters, per-instruction start/end/busy */
  ct_tensor_list outputs;        /* the IO table's outputs: raw integers (or floats) with
                                    scale/zero_point attributes when quantized */
  ct_tensor_list dumps;          /* --dump-all: per debug-map layer, what its STOREs wrote */
  ct_layer_counters *layers;     /* per debug-map layer, in order of first appearance */
  int n_layers;
} ct_sim_run_output;

/* Runs program p on chip. inputs: tensors named as the IO table's inputs; a tensor of the
 * input's dtype is copied bit for bit, a float tensor for an integer input with scale > 0 is
 * quantized (sat(round_half_away(x / scale) + zp)), a float tensor for a float input is
 * converted (round to nearest even), integer tensors for integer inputs are saturated.
 * Errors: CT_ERR_INPUT (a chip ct_chip_validate refuses, missing input "input \"x\" is
 * missing", wrong shape, bad instruction, out-of-bounds access naming the instruction),
 * CT_ERR_CHECK (race, deadlock), CT_ERR_LIMIT (out of memory, max_cycles). out is filled as far as the run got; free it
 * with ct_sim_run_output_free either way. */
ct_status ct_sim_run(const ct_chip *chip, const ct_program *p, const ct_tensor_list *inputs,
                     const ct_sim_run_options *opt, ct_sim_run_output *out, ct_diag *d);

void ct_sim_run_output_free(ct_sim_run_output *out);

/* Checks that program p is race- and deadlock-free on chip without its data: the clock loop
 * runs every instruction for one cycle with no functional effect (GMEM holds no image) and
 * the vector-clock race check on — the happens-before order it checks comes from the
 * semaphores, SYNCs and dispatch order alone, so it is the order of every run. Errors:
 * CT_ERR_CHECK naming the two instructions of a race (or a deadlock), CT_ERR_INPUT (an
 * instruction the decoder rejects), CT_ERR_LIMIT (out of memory). */
ct_status ct_sim_check_order(const ct_chip *chip, const ct_program *p, ct_diag *d);

/* The clock loop's machine parameters of a chip. Errors: CT_ERR_INPUT for a chip outside
 * chip.def's ranges (ct_chip_validate: the simulator runs every chip `ctpu chip` accepts and
 * no other). */
ct_status ct_sim_machine_of(const ct_chip *chip, ct_sim_machine *m, ct_diag *d);

#endif
