/* lmem.h: the on-chip local memory (docs/architecture.md §3): a flat byte array split into
 * `banks` equal banks (bank = addr ÷ (bytes ÷ banks)), one port per bank moving at most
 * bank_port_bytes per cycle, and the per-cycle port arbitration bookkeeping. */
#ifndef CT_LMEM_H
#define CT_LMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "memory/region.h"

/* The most banks an LMEM has: isa/chip.h CT_CHIP_LMEM_BANKS_MAX, chip.def's lmem.banks
 * maximum (cmodel/sim.c asserts they agree). */
#define CT_LMEM_MAX_BANKS 1024

/* A set of banks (bank b: bit b % 64 of w[b / 64]): the banks claimed in one cycle. */
typedef struct ct_lmem_bankset {
  uint64_t w[CT_LMEM_MAX_BANKS / 64];
} ct_lmem_bankset;

typedef struct ct_lmem {
  uint8_t *data;        /* bytes, zero at start */
  uint64_t bytes;
  uint32_t banks;       /* ≤ CT_LMEM_MAX_BANKS, divides bytes */
  uint64_t bank_bytes;  /* bytes ÷ banks */
  uint32_t port_bytes;  /* bytes one bank port moves per cycle */
} ct_lmem;

/* Allocates a zeroed LMEM. Errors: CT_ERR_INPUT if banks is 0, > CT_LMEM_MAX_BANKS or does
 * not divide bytes, or port_bytes is 0; CT_ERR_LIMIT if the allocation fails. */
ct_status ct_lmem_init(ct_lmem *m, uint64_t bytes, uint32_t banks, uint32_t port_bytes,
                       ct_diag *d);
void ct_lmem_free(ct_lmem *m);

/* The banks [*b0, *b1] the byte span of r (ct_mem_region_span) touches, clipped to the
 * LMEM; false (nothing written) for an empty region or one starting past the LMEM. */
bool ct_lmem_bank_span(const ct_lmem *m, const ct_mem_region *r, uint32_t *b0, uint32_t *b1);

/* Per-bank byte counts of r added into per_bank[banks] (exact, run by run, split at bank
 * boundaries). r must be in bounds. */
void ct_lmem_bank_bytes(const ct_lmem *m, const ct_mem_region *r, uint64_t *per_bank);

/* Bytes the busiest bank holds of the given regions together (LMEM ones; bytes a region
 * touches twice count twice). Regions must be in bounds. */
uint64_t ct_lmem_busiest_bank_bytes(const ct_lmem *m, const ct_mem_region *rs, int n);

/* Port-limited cycles of an instruction moving the given regions: max over banks of
 * ceil(bytes in that bank / port_bytes) (one port per bank, §3). */
uint64_t ct_lmem_port_cycles(const ct_lmem *m, const ct_mem_region *rs, int n);

/* Copies r's elements into dst (dense, n-c-h-w order) / from src into r. r must have been
 * checked in bounds (ct_mem_region_check). Sizes: numel · elem_bytes bytes. */
void ct_lmem_gather(const ct_lmem *m, const ct_mem_region *r, void *dst);
void ct_lmem_scatter(ct_lmem *m, const ct_mem_region *r, const void *src);

/* One cycle of bank-port arbitration: requesters are offered in priority order; a request
 * (the banks lo[i] .. hi[i], inclusive, for i < n; every bank < CT_LMEM_MAX_BANKS) is granted
 * if none of its banks was claimed earlier in the cycle, and then claims them. `claimed`
 * starts empty each cycle. Returns true when granted. */
bool ct_lmem_port_claim(ct_lmem_bankset *claimed, const uint16_t *lo, const uint16_t *hi, int n);

#endif
