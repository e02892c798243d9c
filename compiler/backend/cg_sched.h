/* cg_sched.h: the time-step schedule of one layer group (docs/pipeline.md; docs/backend.md
 * "Pipeline and cost model"). The group's instructions are staged tile by tile (its loads, its compute, its
 * stores) and emitted either in program order (serial) or as the software pipeline the
 * planner costs (lg_cost.c): time step s runs the LOADs of tile s, the compute of tile s − 1
 * and the STOREs of tile s − 2 on different engines, with double-buffered LMEM, ordered only
 * by semaphores. Internal to compiler/backend (TPU-MLIR's GDMA/TIU time steps; VTA's
 * dependency tokens). */
#ifndef CT_CG_SCHED_H
#define CT_CG_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "isa/chip.h"
#include "isa/program.h"

/* One staged instruction: its phase follows from the opcode (LOAD: load; STORE: store;
 * MOVE, MXU and VPU ops: compute). */
typedef struct cg_staged {
  ct_insn in;          /* wait / signal / DMA engine instance are set by the scheduler */
  const char *layer;   /* debug-map layer name (borrowed: must outlive the emission) */
  int64_t tile;        /* tile index; -1 = group tables (loaded with tile 0) */
  uint8_t role;        /* compute: CG_ROLE_* bits, set by the scheduler */
  bool early;          /* a LOAD of the group's tables or resident operands: the previous
                        * group may issue it (ct_cg_prefetch) */
  bool stream;         /* an early LOAD of a single-tile group that streams: its first reader
                        * waits for it alone (CG_SEM_STREAM), not for the tile's LD */
  int32_t skey;        /* stream LOADs: their first reader's position in the compute order */
} cg_staged;

/* The compute instruction of a tile that waits LD (its loads done) / OUTFREE (tile t − 2's
 * stores done), signals INFREE (tile t + 2 may load) / DONE (the tile may be stored). */
enum { CG_ROLE_LD = 1, CG_ROLE_OUTFREE = 2, CG_ROLE_INFREE = 4, CG_ROLE_DONE = 8 };

typedef struct cg_stage {
  cg_staged *v;
  int n, cap;
} cg_stage;

/* The chain state across groups (one per program). */
typedef struct cg_sched {
  ct_program *prog;
  const ct_chip *chip;
  bool have_last, any;  /* an instruction emitted since the last barrier / at all */
  ct_engine last_eng;
  int64_t pipelined_groups, serial_groups; /* how each group was emitted (reports) */
} cg_sched;

/* Semaphores of the pipeline: 0..3 the compute chain (the receiving engine's index, as in
 * serial order), then per buffer copy b and DMA engine instance e: tile loaded (LD), input
 * copy free (INFREE), output tile computed (DONE), output copy free (OUTFREE); then per
 * ordered pair of different engine instances (e → e'): tile t's transfers on e are done
 * before tile t + 1's on e' start (LSEQ for loads, SSEQ for stores: the time steps' order,
 * so a later tile's transfer never takes DDR bandwidth from an earlier one's). */
enum { CG_SEM_LD = 4, CG_SEM_INFREE = 8, CG_SEM_DONE = 12, CG_SEM_OUTFREE = 16, CG_SEM_LSEQ = 20, CG_SEM_SSEQ = 22,
       CG_SEM_PIPELINE = 24, CG_SEM_DEP = 24, CG_SEM_DEPS_END = 30, CG_SEM_STREAM = 30 };

/* DMA engine slots of one phase (loads or stores) of a tile: the semaphores above name two per
 * kind and copy, so a tile's LOADs (STOREs) use at most two engines. Slot k is engine
 * base + k: base 1 for the LOADs of a pipelined group whose compute has MOVEs when the chip
 * has two load engines or more (the MOVEs have engine 0 to themselves), else 0. */
enum { CG_DMA_SLOTS = 2 };

/* The slots a phase spreads its transfers over: min(engines − base, CG_DMA_SLOTS), ≥ 1. */
static inline int ct_cg_dma_slots(int64_t engines, int base) {
  int64_t n = engines - base;
  return n < 1 ? 1 : n > CG_DMA_SLOTS ? CG_DMA_SLOTS : (int)n;
}

/* Can a single tile stream its resident LOADs on this chip: the dependency tokens
 * (CG_SEM_DEPS_END semaphores) and semaphore CG_SEM_STREAM besides them. One rule for the
 * planner (lg_eval.c stream_compute) and the schedule (ct_cg_sched_group). */
static inline bool ct_cg_can_stream(const ct_chip *c) { return c->sem_count > CG_SEM_STREAM; }

/* Semaphores CG_SEM_DEP .. CG_SEM_DEPS_END − 1 order the compute instructions of a group by
 * their data (cg_deps.c) instead of the chain 0..3: one counting semaphore per ordered pair
 * (producer engine → consumer engine) of the compute engines (load engine 0 for MOVEs, MXU,
 * VPU). */

/* Sets the roles (CG_ROLE_*) and the wait / signal bits that order the compute instructions of
 * a group by their data instead of one chain. Phase p (0 LOAD, 1 compute, 2 STORE) of tile t
 * is st->v[idx[p][k]], k = off[p][t] .. off[p][t + 1] − 1, t = 0 .. T − 1, compute in program
 * order. Roles per tile: the first compute instruction touching the LMEM its LOADs write waits
 * LD; the first writing what tile t − 2's STOREs read waits OUTFREE; the last touching what
 * tile t + 2's LOADs write signals INFREE; the last writing what its STOREs read signals
 * DONE (defaults: the tile's first / last instruction). Instruction i waits for the latest
 * earlier instruction j on each other compute engine that it must follow: one whose LMEM
 * regions (ct_isa_accesses, hulls) i reads after j wrote them (RAW) or writes over j's reads
 * or writes (WAR, WAW); an MXU / VPU instruction the last MXU / VPU instruction of tile t − 2
 * (the same buffer copies and banks);
 * its tile's LD (OUTFREE) waiter when i touches the same transfers'
 * regions; tile 0's LD waiter (tables, resident weights); and an INFREE (DONE) signaller
 * follows the instructions of its tile before it that touch those regions. Same-engine
 * order is the engine queue's FIFO order. The tokens use one counting semaphore per
 * (producer engine → consumer engine) pair: the k-th signal meets the k-th wait, a wait is
 * added only when no earlier wait of the consumer engine on that pair already covers the
 * producer (queues are FIFO), so every signal has exactly one waiter, later in program
 * order. Returns false (nothing set: the chain) when a compute instruction is on no compute
 * engine, or *oom. */
bool ct_cg_dep_tokens(cg_stage *st, const int *const off[3], const int *const idx[3], int64_t T, bool *oom);

/* Appends a copy of *in to s. Errors: CT_ERR_LIMIT when out of memory. */
ct_status ct_cg_stage_add(cg_stage *s, const ct_insn *in, const char *layer, int64_t tile, ct_diag *d);
void ct_cg_stage_free(cg_stage *s);

/* Emits group gi's staged instructions (tile-major: for each tile its loads, compute and
 * stores, the tables first) into s->prog, after a SYNC of every engine when an earlier group
 * emitted instructions (groups share LMEM and GMEM: the barrier orders them). Pipelined when
 * `pipelined`, n_tiles ≥ 2, every tile has compute and the chip has CG_SEM_PIPELINE
 * semaphores: program order is step s = 0 .. n_tiles + 1: the compute of tile s − 1
 * (ordered by dependency tokens, ct_cg_dep_tokens, when the chip has CG_SEM_DEPS_END
 * semaphores, else a chain: each waits for the previous one when the engine changes; its
 * LD / OUTFREE waiters wait LD of its tile and OUTFREE of tile s − 3's stores, its INFREE /
 * DONE signallers signal INFREE for tile s + 1's loads and DONE for its stores), LOADs of tile s (spread over the load engine slots by time,
 * CG_DMA_SLOTS; the first on slot e waits INFREE(b, e) from tile s − 2's compute, the last
 * signals LD(b, e); b = s mod 2) — or, with `loads_first`, these LOADs before that compute (the compute's MOVEs share
 * load engine 0 with them: first the compute when its MOVEs come early in its chain, first
 * the LOADs when they come late; the planner chooses, lg_eval.c group_costs), the
 * STOREs of tile s − 2 (the first on slot e waits DONE(b, e), the last signals
 * OUTFREE(b, e) when tile s has compute). Every wait's signaller precedes it in program order
 * and every signal has exactly one waiter, so no deadlock for any queue depth and every
 * semaphore is 0 when the group ends. Otherwise serial: program order, one chain token at
 * every engine change. With `stream` (a single tile ordered by dependency tokens, a chip with
 * more than CG_SEM_STREAM semaphores; the planner's ct_lg_group.stream), the tile's early
 * LOADs (tables, resident operands) come after its other LOADs on load engine 0, in the order
 * of their first readers, interleaved with the compute one first reader ahead (program order);
 * the last LOAD for each first reader signals CG_SEM_STREAM and that reader waits for it, so
 * the layers start while later layers' operands still load (every other reader of such a LOAD
 * follows its first reader; first readers follow each other).
 * Debug entries: (layer, gi, tile, step). Errors: CT_ERR_LIMIT (out of
 * memory). */
ct_status ct_cg_sched_group(cg_sched *s, int gi, cg_stage *st, int64_t n_tiles, bool pipelined, bool loads_first,
                         bool stream, ct_diag *d);

/* Cross-group prefetch (cg_prefetch.c): moves the LOADs of group gi + 1's tables and resident
 * operands (cg_staged.early) out of `next` into `out` (next keeps its other entries, in
 * order), for a group the planner marked ct_lg_group.prefetched. They are emitted after group
 * gi's instructions (`cur`) and before the barrier of gi + 1 (ct_cg_prefetch_emit), so they
 * run during gi's tail; the barrier orders them before gi + 1's compute. Errors: CT_ERR_LIMIT
 * (out of memory); CT_ERR_INTERNAL when such a LOAD writes LMEM an instruction of cur touches
 * or reads GMEM one of its STOREs writes (ct_isa_accesses hulls): the planner's check
 * (lg_prefetch.c) rules that out. */
ct_status ct_cg_prefetch_select(int gi, const cg_stage *cur, cg_stage *next, cg_stage *out, ct_diag *d);

/* Emits the prefetched LOADs of `pre` (group gi's) without semaphores, on the load engine of
 * the last LOAD emitted since the last barrier (engine 0 when there is none; another engine
 * with LOADs of that group when MOVEs of it run there), so they start after it, and places
 * them right after that LOAD in program order unless MOVEs follow it on their engine.
 * Errors: CT_ERR_LIMIT. */
ct_status ct_cg_prefetch_emit(cg_sched *s, int gi, cg_stage *pre, ct_diag *d);

/* Appends END (after the chain). */
ct_status ct_cg_sched_end(cg_sched *s, ct_diag *d);

#endif
