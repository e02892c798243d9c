/* race.h: happens-before race detection with vector clocks (FastTrack-style epochs without
 * the read-share optimization): one clock per engine plus one for the dispatcher, carried
 * through semaphore tokens (FIFO per semaphore), SYNC drains and dispatch order. */
#ifndef CT_SIM_RACE_H
#define CT_SIM_RACE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "memory/region.h"

typedef struct ct_race ct_race;

/* A detected race: the earlier access (insn a) and the current one (insn b). */
typedef struct ct_race_hit {
  uint32_t insn_a, insn_b;
  ct_mem_region region_a, region_b;
} ct_race_hit;

/* n_agents clocks (engines + dispatcher), n_sems semaphores. NULL on out of memory. */
ct_race *ct_race_new(int n_agents, uint32_t n_sems);
void ct_race_free(ct_race *r);

/* Starts a new epoch of agent a (called when it starts an instruction). */
void ct_race_tick(ct_race *r, int a);
/* Agent a signals semaphore s: a token carrying a's clock joins s's FIFO. false on OOM. */
bool ct_race_signal(ct_race *r, int a, uint32_t s);
/* Agent a consumes the oldest token of s and joins its clock. */
void ct_race_take(ct_race *r, int a, uint32_t s);
/* Agent a joins agent b's clock (a waited until b finished its earlier work). */
void ct_race_join(ct_race *r, int a, int b);
/* Id of a snapshot of agent a's current clock (reused while unchanged); UINT32_MAX on OOM. */
uint32_t ct_race_snapshot(ct_race *r, int a);
/* Agent a joins snapshot id. */
void ct_race_join_snapshot(ct_race *r, int a, uint32_t id);

/* Records the accesses of instruction insn by agent a (in its current epoch) after checking
 * them against unordered earlier accesses of other agents. Returns true and fills hit on a
 * race (nothing recorded), false otherwise. *oom is set when records could not be stored. */
bool ct_race_access(ct_race *r, int a, uint32_t insn, const ct_mem_region *regs, int n,
                    ct_race_hit *hit, bool *oom);

/* Drops records ordered before every agent in `live` (bit a: agent a may still access
 * memory); called by the clock loop now and then to keep the record list short. */
void ct_race_prune(ct_race *r, uint64_t live);

#endif
