/* region.c: 4-D strided regions: spans, runs, burst rounding and exact byte overlap
 * (bitmap over the common span). The run model is docs/architecture.md §5's DMA cost model. */
#include "memory/region.h"

#include <stdlib.h>
#include <string.h>

void ct_mem_region_dense(ct_mem_region *r, ct_mem_space space, bool write, uint64_t addr,
                         const int64_t shape[4], uint32_t elem_bytes) {
  memset(r, 0, sizeof *r);
  r->space = space;
  r->write = write;
  r->addr = addr;
  r->elem_bytes = elem_bytes;
  int64_t s = 1;
  for (int d = 3; d >= 0; d--) {
    r->shape[d] = shape[d];
    r->stride[d] = s;
    s *= shape[d] > 0 ? shape[d] : 1;
  }
}

int64_t ct_mem_region_numel(const ct_mem_region *r) {
  int64_t n = 1;
  for (int d = 0; d < 4; d++) {
    if (r->shape[d] <= 0) return 0;
    if (n > INT64_MAX / r->shape[d]) return 0;
    n *= r->shape[d];
  }
  return n;
}

bool ct_mem_region_span(const ct_mem_region *r, uint64_t *lo, uint64_t *hi) {
  if (ct_mem_region_numel(r) == 0 || r->elem_bytes == 0) return false;
  /* every term is kept below 2^62 so sums cannot overflow */
  const uint64_t cap = UINT64_C(1) << 62;
  uint64_t last = 0;
  for (int d = 0; d < 4; d++) {
    uint64_t e = (uint64_t)(r->shape[d] - 1), s = (uint64_t)r->stride[d];
    if (r->stride[d] < 0 || (s && e > cap / s)) return false;
    last += e * s;
    if (last > cap) return false;
  }
  if (last > cap / r->elem_bytes || r->addr > cap) return false;
  *lo = r->addr;
  *hi = r->addr + last * r->elem_bytes + r->elem_bytes;
  return true;
}

ct_status ct_mem_region_check(const ct_mem_region *r, uint64_t mem_bytes, const char *what,
                              ct_diag *d) {
  uint64_t lo, hi;
  const char *sp = r->space == CT_SPACE_LMEM ? "lmem" : "gmem";
  if (!ct_mem_region_span(r, &lo, &hi))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: empty or overflowing %s region at 0x%llx", what,
                       sp, (unsigned long long)r->addr);
  if (hi > mem_bytes)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s bytes [0x%llx, 0x%llx) outside 0..0x%llx",
                       what, sp, (unsigned long long)lo, (unsigned long long)hi,
                       (unsigned long long)mem_bytes);
  return CT_OK;
}

/* First dimension index m such that dims m..3 form one contiguous run; *run_elems gets the
 * elements of that run. Extents of 1 merge regardless of their stride. */
static int merged_dims(const ct_mem_region *r, int64_t *run_elems) {
  int64_t run = 1;
  int m = 4;
  for (int d = 3; d >= 0; d--) {
    if (r->shape[d] != 1 && r->stride[d] != run) break;
    run *= r->shape[d];
    m = d;
  }
  *run_elems = run;
  return m;
}

int64_t ct_mem_region_runs(const ct_mem_region *r, uint64_t *run_bytes) {
  int64_t n = ct_mem_region_numel(r);
  if (n == 0) {
    *run_bytes = 0;
    return 0;
  }
  int64_t run;
  merged_dims(r, &run);
  *run_bytes = (uint64_t)run * r->elem_bytes;
  return n / run;
}

uint64_t ct_mem_region_burst_bytes(const ct_mem_region *r, uint64_t burst_bytes) {
  uint64_t run_bytes;
  int64_t runs = ct_mem_region_runs(r, &run_bytes);
  if (burst_bytes == 0) return (uint64_t)runs * run_bytes;
  uint64_t per = (run_bytes + burst_bytes - 1) / burst_bytes * burst_bytes;
  return (uint64_t)runs * per;
}

bool ct_mem_region_each_run(const ct_mem_region *r,
                            bool (*fn)(void *ctx, uint64_t addr, uint64_t bytes), void *ctx) {
  if (ct_mem_region_numel(r) == 0) return true;
  int64_t run;
  int m = merged_dims(r, &run);
  int64_t ext[4] = {1, 1, 1, 1};
  for (int d = 0; d < m; d++) ext[d] = r->shape[d];
  uint64_t eb = r->elem_bytes, bytes = (uint64_t)run * eb;
  for (int64_t i0 = 0; i0 < ext[0]; i0++)
    for (int64_t i1 = 0; i1 < ext[1]; i1++)
      for (int64_t i2 = 0; i2 < ext[2]; i2++)
        for (int64_t i3 = 0; i3 < ext[3]; i3++) {
          int64_t off = (m > 0 ? i0 * r->stride[0] : 0) + (m > 1 ? i1 * r->stride[1] : 0) +
                        (m > 2 ? i2 * r->stride[2] : 0) + (m > 3 ? i3 * r->stride[3] : 0);
          if (!fn(ctx, r->addr + (uint64_t)off * eb, bytes)) return false;
        }
  return true;
}

typedef struct overlap_ctx {
  uint8_t *bits;
  uint64_t lo, hi;
  bool hit;
} overlap_ctx;

/* Clips [addr, addr+n) to [lo, hi); false if nothing is left. */
static bool clip(const overlap_ctx *o, uint64_t *a, uint64_t *e) {
  if (*a < o->lo) *a = o->lo;
  if (*e > o->hi) *e = o->hi;
  return *a < *e;
}

static bool mark_run(void *ctx, uint64_t addr, uint64_t n) {
  overlap_ctx *o = ctx;
  uint64_t a = addr, e = addr + n;
  if (!clip(o, &a, &e)) return true;
  for (uint64_t i = a - o->lo; i < e - o->lo; i++) o->bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  return true;
}

static bool test_run(void *ctx, uint64_t addr, uint64_t n) {
  overlap_ctx *o = ctx;
  uint64_t a = addr, e = addr + n;
  if (!clip(o, &a, &e)) return true;
  for (uint64_t i = a - o->lo; i < e - o->lo; i++)
    if (o->bits[i >> 3] & (1u << (i & 7))) {
      o->hit = true;
      return false;
    }
  return true;
}

/* A run callback that reports any byte of the run inside the common span. */
static bool any_run(void *ctx, uint64_t addr, uint64_t n) {
  overlap_ctx *o = ctx;
  uint64_t a = addr, e = addr + n;
  if (!clip(o, &a, &e)) return true;
  o->hit = true;
  return false;
}

static bool is_dense(const ct_mem_region *r, uint64_t lo, uint64_t hi) {
  uint64_t run;
  return ct_mem_region_runs(r, &run) == 1 && run == hi - lo;
}

/* Largest common span (bytes) checked exactly with a bitmap; larger spans are reported as
 * overlapping (conservative: a false race report rather than a missed one). */
#define CT_OVERLAP_BITMAP_MAX (UINT64_C(1) << 30)

bool ct_mem_region_overlap(const ct_mem_region *a, const ct_mem_region *b) {
  if (a->space != b->space) return false;
  uint64_t alo, ahi, blo, bhi;
  if (!ct_mem_region_span(a, &alo, &ahi) || !ct_mem_region_span(b, &blo, &bhi)) return false;
  overlap_ctx o = {NULL, alo > blo ? alo : blo, ahi < bhi ? ahi : bhi, false};
  if (o.lo >= o.hi) return false;
  bool da = is_dense(a, alo, ahi), db = is_dense(b, blo, bhi);
  if (da && db) return true;
  if (da || db) { /* the dense side covers the whole common span */
    ct_mem_region_each_run(da ? b : a, any_run, &o);
    return o.hit;
  }
  if (o.hi - o.lo > CT_OVERLAP_BITMAP_MAX) return true;
  o.bits = calloc((size_t)((o.hi - o.lo + 7) / 8), 1);
  if (!o.bits) return true; /* conservative */
  ct_mem_region_each_run(a, mark_run, &o);
  ct_mem_region_each_run(b, test_run, &o);
  free(o.bits);
  return o.hit;
}
