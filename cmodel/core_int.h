/* core_int.h: internal state of the cmodel clock loop shared by core.c (setup, run loop,
 * results) and core_step.c (dispatch, start, arbitration, accounting, completion). */
#ifndef CT_SIM_CORE_INT_H
#define CT_SIM_CORE_INT_H

#include "cmodel/core.h"
#include "cmodel/race.h"

typedef struct engine {
  ct_sim_unit unit;
  uint32_t *q;            /* ring of op indices, depth entries */
  uint32_t qhead, qlen;
  int64_t run;            /* running op, -1 none */
  uint64_t start, left;   /* start cycle; compute cycles left */
  ct_dma_xfer x;
  bool dma, granted;      /* running op is timed as a DMA; granted its banks this cycle */
  uint64_t rate;          /* DMA units per cycle this cycle */
  uint32_t pending;       /* ops of the program still to run here (race pruning) */
} engine;

typedef struct sim {
  const ct_sim_machine *m;
  const ct_sim_op *ops;
  uint32_t n;
  const ct_sim_hooks *h;
  const ct_sim_options *o;
  ct_sim_result *res;
  ct_diag *d;
  int ne;
  engine *e;
  uint32_t *sem;
  uint32_t pc;
  bool ended, blocked_full;
  int64_t ctrl;           /* running control op, -1 none */
  uint64_t ctrl_left, t;
  ct_race *race;
  uint32_t *snap;         /* per op: dispatcher clock snapshot at dispatch */
  double last_ddr, last_lmem;
} sim;

/* One phase each (core_step.c). Each returns CT_OK or an error in s->d. */
ct_status ct_sim_dispatch(sim *s, bool *active);
ct_status ct_sim_start_heads(sim *s, bool *active);
void ct_sim_arbitrate(sim *s);
uint64_t ct_sim_next_event(const sim *s);
void ct_sim_account(sim *s, uint64_t k);
void ct_sim_advance(sim *s, uint64_t k);
ct_status ct_sim_complete(sim *s);
bool ct_sim_finished(const sim *s);
ct_status ct_sim_deadlock(sim *s);
void ct_sim_describe(const sim *s, uint32_t i, char *buf, size_t n);

#endif
