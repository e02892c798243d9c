/* region.h: a 4-D strided byte region of LMEM or GMEM (the operand of one instruction):
 * extents, bounds, contiguous runs and exact overlap. Runs are what the DMA timing model of
 * docs/architecture.md §5 rounds up to bursts; overlap is what the race check of §5 compares. */
#ifndef CT_MEM_REGION_H
#define CT_MEM_REGION_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

typedef enum ct_mem_space { CT_SPACE_LMEM = 0, CT_SPACE_GMEM = 1 } ct_mem_space;

/* A region: element (n, c, h, w) of a dense 4-D (N, C, H, W) view lives at byte
 * addr + elem_bytes * (n*stride[0] + c*stride[1] + h*stride[2] + w*stride[3]).
 * Shapes and strides are in elements (strides ≥ 0); addr and elem_bytes in bytes. */
typedef struct ct_mem_region {
  ct_mem_space space;
  bool write;            /* the instruction writes (else reads) these bytes */
  uint64_t addr;         /* bytes */
  int64_t shape[4];      /* elements, each ≥ 1 (a 0 extent makes the region empty) */
  int64_t stride[4];     /* elements */
  uint32_t elem_bytes;   /* 1, 2, 4 or 8 */
} ct_mem_region;

/* Fills r as a dense row-major region of `shape` (strides computed). */
void ct_mem_region_dense(ct_mem_region *r, ct_mem_space space, bool write, uint64_t addr,
                         const int64_t shape[4], uint32_t elem_bytes);

/* Number of elements (0 if any extent is ≤ 0). */
int64_t ct_mem_region_numel(const ct_mem_region *r);

/* Byte span [*lo, *hi) covering every byte of r. Returns false if r is empty or the span
 * overflows 64 bits (negative strides are not allowed and also give false). */
bool ct_mem_region_span(const ct_mem_region *r, uint64_t *lo, uint64_t *hi);

/* Checks that every byte of r lies in [0, mem_bytes). Errors: CT_ERR_INPUT with a message
 * "<what>: <space> bytes [lo, hi) outside 0..mem_bytes" (what names the instruction operand),
 * or "<what>: empty or overflowing region". */
ct_status ct_mem_region_check(const ct_mem_region *r, uint64_t mem_bytes, const char *what,
                              ct_diag *d);

/* Contiguous runs of r in address order of its iteration: the innermost dimensions whose
 * strides equal the product of the inner extents merge into one run. *run_bytes gets the
 * bytes of one run, the result is the number of runs (0 for an empty region). */
int64_t ct_mem_region_runs(const ct_mem_region *r, uint64_t *run_bytes);

/* Bytes moved over a bus that transfers whole bursts: Σ over runs of
 * ceil(run_bytes / burst_bytes) · burst_bytes (docs/architecture.md §3 gmem.burst_bytes). */
uint64_t ct_mem_region_burst_bytes(const ct_mem_region *r, uint64_t burst_bytes);

/* True if a and b (same space) share at least one byte. Exact: disjoint spans return false
 * at once; otherwise the bytes of a inside the common span are marked in a bitmap and b is
 * scanned. Regions of different spaces never overlap. Returns false on allocation failure
 * only after falling back to the span test (conservative: spans overlapping → true). */
bool ct_mem_region_overlap(const ct_mem_region *a, const ct_mem_region *b);

/* Calls fn(ctx, byte_addr, run_bytes) for every contiguous run of r, in iteration order
 * (n, c, h, w outermost to innermost). Stops early and returns false if fn returns false. */
bool ct_mem_region_each_run(const ct_mem_region *r,
                            bool (*fn)(void *ctx, uint64_t addr, uint64_t bytes), void *ctx);

#endif
