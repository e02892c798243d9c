/* dma.h: DMA transfer timing (docs/architecture.md §5): a transfer costs
 * latency + ceil(moved / bytes_per_cycle) cycles in isolation, moved = Σ runs rounded up to
 * burst_bytes; the DMA engines moving data in the same cycle share the DDR bandwidth equally.
 * Progress is kept in exact integer units of 1/L byte, L = lcm(1..max_engines), so an equal
 * share bytes_per_cycle / n is an integer number of units for every n ≤ max_engines. */
#ifndef CT_DMA_H
#define CT_DMA_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "memory/region.h"

/* The DDR channel shared by all DMA engines. */
typedef struct ct_ddr {
  uint64_t bytes_per_cycle;  /* gmem.bytes_per_cycle */
  uint64_t latency_cycles;   /* gmem.latency_cycles */
  uint64_t burst_bytes;      /* gmem.burst_bytes */
  uint64_t port_bytes;       /* lmem.bank_port_bytes: the LMEM side moves at most this */
  uint64_t unit;             /* L: units per byte */
  int max_engines;
} ct_ddr;

/* One transfer in flight. */
typedef struct ct_dma_xfer {
  uint64_t latency_left;  /* cycles before the first byte moves */
  uint64_t units_left;    /* remaining moved bytes × unit */
  uint64_t cap;           /* units per cycle the LMEM bank ports allow it */
  bool uses_ddr;          /* false for LMEM→LMEM moves (no DDR latency or sharing) */
} ct_dma_xfer;

/* Sets up the channel. Errors: CT_ERR_INPUT when bytes_per_cycle or port_bytes is 0 or
 * max_engines is outside 1..32 (the lcm must fit the unit arithmetic). */
ct_status ct_ddr_init(ct_ddr *ddr, uint64_t bytes_per_cycle, uint64_t latency_cycles,
                      uint64_t burst_bytes, uint64_t port_bytes, int max_engines, ct_diag *d);

/* Bytes a DMA moves over DDR for the GMEM side region g: Σ runs rounded up to bursts. */
uint64_t ct_dma_moved_bytes(const ct_ddr *ddr, const ct_mem_region *g);

/* Starts a transfer of `moved` bytes whose LMEM side needs `port_cycles` cycles through the
 * bank ports (isa/cost.h ct_dma_port_cycles; 0: one port, moved / port_bytes): its rate is
 * capped at max(port_bytes, moved / port_cycles) bytes per cycle. */
void ct_dma_xfer_start(const ct_ddr *ddr, ct_dma_xfer *x, uint64_t moved, uint64_t port_cycles, bool uses_ddr);

/* Units per cycle a transfer in its data phase gets when n_ddr DDR transfers move data in
 * the same cycle: min(bytes_per_cycle·L / n_ddr, its port cap) for DDR transfers, its port
 * cap for moves (ct_dma_xfer_start). n_ddr ≥ 1 and ≤ max_engines. */
uint64_t ct_dma_rate(const ct_ddr *ddr, const ct_dma_xfer *x, int n_ddr);

/* Cycles until x's next state change at `rate` units/cycle: the rest of its latency, else
 * ceil(units_left / rate). 0 when finished. */
uint64_t ct_dma_xfer_next_event(const ct_dma_xfer *x, uint64_t rate);

/* Advances x by k cycles (k ≤ ct_dma_xfer_next_event): spends latency first (then k must not
 * cross into the data phase), else moves k·rate units. Returns the units moved. */
uint64_t ct_dma_xfer_advance(ct_dma_xfer *x, uint64_t k, uint64_t rate);

/* True while the transfer waits for its latency (it moves no data, holds no LMEM port). */
static inline bool ct_dma_xfer_in_latency(const ct_dma_xfer *x) { return x->latency_left > 0; }
/* True once the latency is spent and every unit has moved. */
static inline bool ct_dma_xfer_done(const ct_dma_xfer *x) {
  return x->latency_left == 0 && x->units_left == 0;
}

#endif
