/* gmem.c: sparse paged GMEM store with bounds checks on every access (pages allocated on
 * first write; untouched pages read as zeros). */
#include "memory/gmem.h"

#include <stdlib.h>
#include <string.h>

ct_status ct_gmem_init(ct_gmem *g, uint64_t bytes, ct_diag *d) {
  memset(g, 0, sizeof *g);
  if (bytes == 0) return ct_diag_set(d, CT_ERR_INPUT, "gmem: size is 0 bytes");
  g->n_pages = (bytes + CT_GMEM_PAGE - 1) / CT_GMEM_PAGE;
  g->pages = calloc((size_t)g->n_pages, sizeof *g->pages);
  if (!g->pages)
    return ct_diag_set(d, CT_ERR_LIMIT, "gmem: out of memory for the page table of %llu bytes",
                       (unsigned long long)bytes);
  g->bytes = bytes;
  return CT_OK;
}

void ct_gmem_free(ct_gmem *g) {
  for (uint64_t i = 0; g->pages && i < g->n_pages; i++) free(g->pages[i]);
  free(g->pages);
  memset(g, 0, sizeof *g);
}

static ct_status bounds(const ct_gmem *g, uint64_t addr, uint64_t n, ct_diag *d) {
  if (addr > g->bytes || n > g->bytes - addr)
    return ct_diag_set(d, CT_ERR_INPUT, "gmem: bytes [0x%llx, 0x%llx) outside 0..0x%llx",
                       (unsigned long long)addr, (unsigned long long)(addr + n),
                       (unsigned long long)g->bytes);
  return CT_OK;
}

ct_status ct_gmem_read(const ct_gmem *g, uint64_t addr, void *dst, uint64_t n, ct_diag *d) {
  ct_status st = bounds(g, addr, n, d);
  if (st) return st;
  uint8_t *out = dst;
  while (n > 0) {
    uint64_t p = addr / CT_GMEM_PAGE, off = addr % CT_GMEM_PAGE;
    uint64_t k = CT_GMEM_PAGE - off < n ? CT_GMEM_PAGE - off : n;
    if (g->pages[p])
      memcpy(out, g->pages[p] + off, (size_t)k);
    else
      memset(out, 0, (size_t)k);
    out += k;
    addr += k;
    n -= k;
  }
  return CT_OK;
}

ct_status ct_gmem_write(ct_gmem *g, uint64_t addr, const void *src, uint64_t n, ct_diag *d) {
  ct_status st = bounds(g, addr, n, d);
  if (st) return st;
  const uint8_t *in = src;
  while (n > 0) {
    uint64_t p = addr / CT_GMEM_PAGE, off = addr % CT_GMEM_PAGE;
    uint64_t k = CT_GMEM_PAGE - off < n ? CT_GMEM_PAGE - off : n;
    if (!g->pages[p] && !(g->pages[p] = calloc(CT_GMEM_PAGE, 1)))
      return ct_diag_set(d, CT_ERR_LIMIT, "gmem: out of memory for page %llu",
                         (unsigned long long)p);
    memcpy(g->pages[p] + off, in, (size_t)k);
    in += k;
    addr += k;
    n -= k;
  }
  return CT_OK;
}

typedef struct run_ctx {
  ct_gmem *g;
  uint8_t *buf;
  bool write;
  ct_diag *d;
  ct_status st;
} run_ctx;

static bool gmem_run(void *ctx, uint64_t addr, uint64_t n) {
  run_ctx *c = ctx;
  c->st = c->write ? ct_gmem_write(c->g, addr, c->buf, n, c->d)
                   : ct_gmem_read(c->g, addr, c->buf, n, c->d);
  c->buf += n;
  return c->st == CT_OK;
}

ct_status ct_gmem_gather(const ct_gmem *g, const ct_mem_region *r, void *dst, ct_diag *d) {
  ct_status st = ct_mem_region_check(r, g->bytes, "gmem read", d);
  if (st) return st;
  run_ctx c = {(ct_gmem *)(uintptr_t)g, dst, false, d, CT_OK};
  ct_mem_region_each_run(r, gmem_run, &c);
  return c.st;
}

ct_status ct_gmem_scatter(ct_gmem *g, const ct_mem_region *r, const void *src, ct_diag *d) {
  ct_status st = ct_mem_region_check(r, g->bytes, "gmem write", d);
  if (st) return st;
  run_ctx c = {g, (uint8_t *)(uintptr_t)src, true, d, CT_OK};
  ct_mem_region_each_run(r, gmem_run, &c);
  return c.st;
}
