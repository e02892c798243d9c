/* dma.c: DMA transfer timing with exact equal DDR-bandwidth sharing
 * (docs/architecture.md §5: latency + ceil(moved / bytes_per_cycle), moved in whole bursts). */
#include "dma/dma.h"

#include <string.h>

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

ct_status ct_ddr_init(ct_ddr *ddr, uint64_t bytes_per_cycle, uint64_t latency_cycles,
                      uint64_t burst_bytes, uint64_t port_bytes, int max_engines, ct_diag *d) {
  memset(ddr, 0, sizeof *ddr);
  if (bytes_per_cycle == 0 || port_bytes == 0)
    return ct_diag_set(d, CT_ERR_INPUT, "dma: gmem.bytes_per_cycle and lmem.bank_port_bytes "
                       "must be > 0");
  if (max_engines < 1 || max_engines > 32)
    return ct_diag_set(d, CT_ERR_INPUT, "dma: %d DMA engines (1..32 supported)", max_engines);
  uint64_t l = 1;
  for (uint64_t i = 2; i <= (uint64_t)max_engines; i++) l = l / gcd(l, i) * i;
  /* lcm(1..32) < 2^43; moved bytes up to 2^20 GiB still fit in 64-bit units */
  ddr->bytes_per_cycle = bytes_per_cycle;
  ddr->latency_cycles = latency_cycles;
  ddr->burst_bytes = burst_bytes;
  ddr->port_bytes = port_bytes;
  ddr->unit = l;
  ddr->max_engines = max_engines;
  return CT_OK;
}

uint64_t ct_dma_moved_bytes(const ct_ddr *ddr, const ct_mem_region *g) {
  return ct_mem_region_burst_bytes(g, ddr->burst_bytes);
}

void ct_dma_xfer_start(const ct_ddr *ddr, ct_dma_xfer *x, uint64_t moved, uint64_t port_cycles, bool uses_ddr) {
  x->uses_ddr = uses_ddr;
  x->latency_left = uses_ddr ? ddr->latency_cycles : 0;
  x->units_left = moved * ddr->unit;
  x->cap = ddr->port_bytes * ddr->unit;
  uint64_t striped = port_cycles ? x->units_left / port_cycles : 0;
  if (striped > x->cap) x->cap = striped;
}

uint64_t ct_dma_rate(const ct_ddr *ddr, const ct_dma_xfer *x, int n_ddr) {
  uint64_t port = x->cap;
  if (!x->uses_ddr) return port;
  if (n_ddr < 1) n_ddr = 1;
  uint64_t share = ddr->bytes_per_cycle * ddr->unit / (uint64_t)n_ddr;
  return share < port ? share : port;
}

uint64_t ct_dma_xfer_next_event(const ct_dma_xfer *x, uint64_t rate) {
  if (x->latency_left) return x->latency_left;
  if (!x->units_left || !rate) return 0;
  return (x->units_left + rate - 1) / rate;
}

uint64_t ct_dma_xfer_advance(ct_dma_xfer *x, uint64_t k, uint64_t rate) {
  if (x->latency_left) {
    x->latency_left -= k < x->latency_left ? k : x->latency_left;
    return 0;
  }
  uint64_t want = k * rate, got = want < x->units_left ? want : x->units_left;
  x->units_left -= got;
  return got;
}
