/* gmem.h: the global memory (DDR, docs/architecture.md §3) as a sparse byte store: pages of
 * CT_GMEM_PAGE bytes allocated on first write, reads of untouched pages give zeros, every
 * access bounds-checked against the chip's gmem.bytes. */
#ifndef CT_GMEM_H
#define CT_GMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "memory/region.h"

#define CT_GMEM_PAGE (UINT64_C(1) << 16)

typedef struct ct_gmem {
  uint64_t bytes;    /* capacity */
  uint64_t n_pages;
  uint8_t **pages;   /* n_pages entries, NULL = all zero */
} ct_gmem;

/* Creates an empty GMEM of `bytes` capacity. Errors: CT_ERR_INPUT for 0 bytes; CT_ERR_LIMIT
 * when the page table cannot be allocated. */
ct_status ct_gmem_init(ct_gmem *g, uint64_t bytes, ct_diag *d);
void ct_gmem_free(ct_gmem *g);

/* Reads n bytes at addr into dst. CT_ERR_INPUT if [addr, addr+n) leaves 0..bytes. */
ct_status ct_gmem_read(const ct_gmem *g, uint64_t addr, void *dst, uint64_t n, ct_diag *d);
/* Writes n bytes. CT_ERR_INPUT when out of bounds, CT_ERR_LIMIT when a page cannot be
 * allocated. */
ct_status ct_gmem_write(ct_gmem *g, uint64_t addr, const void *src, uint64_t n, ct_diag *d);

/* Region copies (dense n-c-h-w order, numel · elem_bytes bytes). Errors as above; the region
 * is bounds-checked first. */
ct_status ct_gmem_gather(const ct_gmem *g, const ct_mem_region *r, void *dst, ct_diag *d);
ct_status ct_gmem_scatter(ct_gmem *g, const ct_mem_region *r, const void *src, ct_diag *d);

#endif
