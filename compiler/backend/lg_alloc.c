/* lg_alloc.c: LMEM allocation of one layer group. Buffers live for their lifetime (MID:
 * the layers between producer and last consumer within a tile; everything else the whole
 * group); offsets come from first-fit by decreasing size over lifetimes (the interval
 * colouring TPU-MLIR's LMEM allocator uses). Pipelined groups split the banks into classes
 * (load copy 0/1, store copy 0/1, compute) so buffers that different engines use in the
 * same time step never share a bank (docs/backend.md "Banks"). */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"

static int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

static bool lives_overlap(const ct_lg_buffer *a, const ct_lg_buffer *b) {
  return a->live_lo <= b->live_hi && b->live_lo <= a->live_hi;
}

typedef struct span {
  int64_t lo, hi;
} span;

static int by_lo(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int by_lo_hi(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

/* Lowest aligned offset where b fits between the placed buffers idx[0..n) alive with it:
 * their spans sorted by address, the first gap large enough (sp: scratch of n spans). */
static int64_t first_gap(const ct_lg_buffer *bufs, const int *idx, int n, const ct_lg_buffer *b, span *sp,
                         int64_t base) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    const ct_lg_buffer *p = &bufs[idx[i]];
    if (lives_overlap(p, b)) sp[k].lo = p->addr - base, sp[k++].hi = p->addr - base + align_up(p->bytes, LG_ALIGN);
  }
  qsort(sp, (size_t)k, sizeof *sp, by_lo);
  int64_t off = 0;
  for (int i = 0; i < k; i++) {
    if (sp[i].lo >= off + b->bytes) break;
    if (sp[i].hi > off) off = sp[i].hi;
  }
  return off;
}

/* First fit (by decreasing size) of the buffers of class cls at offsets from 0; returns
 * the end of the highest one, -1 when out of memory. Buffers get addr relative to the class
 * base. */
static int64_t place_class(ct_lg_group *gr, int cls, bool any_cls, int *idx) {
  int n = 0;
  for (int i = 0; i < gr->n_bufs; i++)
    if (any_cls || gr->bufs[i].cls == cls) idx[n++] = i;
  span *key = malloc(sizeof *key * ((size_t)n + 1)); /* largest first, stable: (−bytes, index) */
  if (!key) return -1;
  for (int k = 0; k < n; k++) key[k].lo = -gr->bufs[idx[k]].bytes, key[k].hi = idx[k];
  qsort(key, (size_t)n, sizeof *key, by_lo_hi);
  for (int k = 0; k < n; k++) idx[k] = (int)key[k].hi;
  free(key);
  /* buffers alive for the whole group conflict with every other: stack them first */
  int hi = 0, m = 0;
  for (int k = 0; k < n; k++)
    if (gr->bufs[idx[k]].live_hi > hi) hi = gr->bufs[idx[k]].live_hi;
  int64_t end = 0, base = 0;
  for (int k = 0; k < n; k++) {
    ct_lg_buffer *b = &gr->bufs[idx[k]];
    if (b->live_lo > 0 || b->live_hi < hi) idx[m++] = idx[k];
    else b->addr = base, end = base + b->bytes, base += align_up(b->bytes, LG_ALIGN);
  }
  span *sp = malloc(sizeof *sp * ((size_t)m + 1));
  if (!sp) return -1;
  for (int k = 0; k < m; k++) {
    ct_lg_buffer *b = &gr->bufs[idx[k]];
    b->addr = base + first_gap(gr->bufs, idx, k, b, sp, base);
    if (b->addr + b->bytes > end) end = b->addr + b->bytes;
  }
  free(sp);
  return end;
}

/* Does class cls hold the transfers of one tile that several DMA engines move at once (the
 * IN copies with two load engines or more, the OUT copies with two store engines or more)? */
static bool dma_class(const ct_chip *c, int cls) {
  if (cls == CT_LG_CLS_IN0 || cls == CT_LG_CLS_IN1) return c->dma_load_engines >= 2;
  return (cls == CT_LG_CLS_OUT0 || cls == CT_LG_CLS_OUT1) && c->dma_store_engines >= 2;
}

/* Each buffer of class cls (placed by place_class) moved to a bank range of its own, in
 * address order: transfers on different engines then drive different bank ports (the cmodel
 * grants one engine a bank at a time). Returns the class's end. sp: scratch of n_bufs spans. */
static int64_t spread_class(ct_lg_group *gr, int cls, int64_t bank, span *sp) {
  int n = 0;
  for (int i = 0; i < gr->n_bufs; i++)
    if (gr->bufs[i].cls == cls) sp[n].lo = gr->bufs[i].addr, sp[n++].hi = i;
  qsort(sp, (size_t)n, sizeof *sp, by_lo_hi);
  int64_t end = 0;
  for (int k = 0; k < n; k++) {
    ct_lg_buffer *b = &gr->bufs[sp[k].hi];
    b->addr = align_up(end, bank), end = b->addr + b->bytes;
  }
  return end;
}

/* Banks class cls takes: packed (its end) or, spread, a bank range per buffer. */
static int64_t class_banks(const ct_lg_group *gr, int cls, int64_t end, int64_t bank, bool spread) {
  if (!spread) return align_up(end, bank) / bank;
  int64_t k = 0;
  for (int i = 0; i < gr->n_bufs; i++)
    if (gr->bufs[i].cls == cls) k += align_up(gr->bufs[i].bytes, bank) / bank;
  return k;
}

/* Class ends of a pipelined group: place_class's, and spread_class's for the DMA classes when
 * spreading them all still fits the chip's banks. Buffers get class-relative addresses.
 * False when out of memory. */
static bool place_classes(const ct_chip *c, ct_lg_group *gr, int *idx, int64_t e[CT_LG_NCLS]) {
  int64_t bank = c->lmem_bytes / c->lmem_banks, packed = 0, spread = 0;
  for (int cls = 0; cls < CT_LG_NCLS; cls++) {
    if ((e[cls] = place_class(gr, cls, false, idx)) < 0) return false;
    packed += class_banks(gr, cls, e[cls], bank, false);
    spread += class_banks(gr, cls, e[cls], bank, dma_class(c, cls));
  }
  if (spread == packed || spread > c->lmem_banks) return true;
  span *sp = malloc(sizeof *sp * ((size_t)gr->n_bufs + 1));
  if (!sp) return false;
  for (int cls = 0; cls < CT_LG_NCLS; cls++)
    if (dma_class(c, cls)) e[cls] = spread_class(gr, cls, bank, sp);
  free(sp);
  return true;
}

bool ct_lg_alloc_lmem(const ct_chip *c, ct_lg_group *gr, int64_t *need) {
  int *idx = malloc(sizeof *idx * ((size_t)gr->n_bufs + 1));
  if (!idx) return *need = INT64_MAX, false;
  int64_t bank = c->lmem_bytes / c->lmem_banks;
  memset(gr->bank_lo, 0, sizeof gr->bank_lo), memset(gr->bank_hi, 0, sizeof gr->bank_hi);
  if (!gr->pipelined) {
    int64_t end = place_class(gr, 0, true, idx);
    free(idx);
    if (end < 0) return *need = INT64_MAX, false;
    gr->bank_hi[CT_LG_CLS_COMPUTE] = (int)c->lmem_banks;
    gr->lmem_bytes = end, *need = end;
    return end <= c->lmem_bytes;
  }
  int64_t nb = 0, end = 0, ends[CT_LG_NCLS];
  if (!place_classes(c, gr, idx, ends)) return free(idx), *need = INT64_MAX, false;
  for (int cls = 0; cls < CT_LG_NCLS; cls++) {
    int64_t k = (ends[cls] + bank - 1) / bank;
    gr->bank_lo[cls] = (int)(nb < INT32_MAX ? nb : INT32_MAX);
    for (int i = 0; i < gr->n_bufs; i++)
      if (gr->bufs[i].cls == cls) {
        gr->bufs[i].addr += nb * bank;
        if (gr->bufs[i].addr + gr->bufs[i].bytes > end) end = gr->bufs[i].addr + gr->bufs[i].bytes;
      }
    nb += k;
    gr->bank_hi[cls] = (int)(nb < INT32_MAX ? nb : INT32_MAX);
  }
  free(idx);
  gr->lmem_bytes = end, *need = nb * bank;
  return nb <= c->lmem_banks;
}

int64_t ct_lg_reserve_split(const ct_chip *c, int64_t end, int64_t tab_mxu, int64_t tab_vpu, int64_t scratch, int64_t at[3]) {
  int64_t bank = c->lmem_bytes / c->lmem_banks;
  at[0] = align_up(end, bank);
  at[1] = align_up(at[0] + tab_mxu, bank);
  at[2] = align_up(at[1] + tab_vpu, bank);
  return at[2] + scratch;
}

int64_t ct_lg_reserve_end(int64_t end, int64_t tables, int64_t scratch) {
  if (tables) end = align_up(end, LG_ALIGN) + tables;
  if (scratch) end = align_up(end, LG_ALIGN) + scratch;
  return end;
}

/* Addresses of the spread layout (ct_lg_spread_banks) into addr[]; returns its end. The
 * largest buffers (by idx order) each start a bank range of their own; when there are more
 * buffers than banks, the rest share the last range, packed. */
static int64_t spread_layout(const ct_chip *c, const ct_lg_group *gr, const int *idx, int64_t *addr) {
  int64_t bank = c->lmem_bytes / c->lmem_banks, nb = 0, end = 0;
  int own = gr->n_bufs <= c->lmem_banks ? gr->n_bufs : (int)c->lmem_banks - 1;
  for (int k = 0; k < gr->n_bufs; k++) {
    int64_t b = gr->bufs[idx[k]].bytes;
    addr[k] = k <= own ? nb * bank : align_up(end, LG_ALIGN);
    end = addr[k] + b;
    if (k < own) nb += (b + bank - 1) / bank;
  }
  return end;
}

bool ct_lg_spread_banks(const ct_chip *c, ct_lg_group *gr, int64_t tables, int64_t scratch, bool *oom) {
  if (gr->pipelined || gr->n_bufs < 2 || c->lmem_banks < 2) return false;
  int *idx = malloc(sizeof *idx * (size_t)gr->n_bufs);
  int64_t *addr = malloc(sizeof *addr * (size_t)gr->n_bufs);
  span *key = malloc(sizeof *key * (size_t)gr->n_bufs);
  bool ok = idx && addr && key;
  if (!ok) *oom = true;
  if (ok) { /* largest first, stable: (−bytes, index) */
    for (int k = 0; k < gr->n_bufs; k++) key[k].lo = -gr->bufs[k].bytes, key[k].hi = k;
    qsort(key, (size_t)gr->n_bufs, sizeof *key, by_lo_hi);
    for (int k = 0; k < gr->n_bufs; k++) idx[k] = (int)key[k].hi;
    int64_t end = spread_layout(c, gr, idx, addr);
    ok = ct_lg_reserve_end(end, tables, scratch) <= c->lmem_bytes;
    for (int k = 0; ok && k < gr->n_bufs; k++) gr->bufs[idx[k]].addr = addr[k];
    if (ok) gr->lmem_bytes = end;
  }
  free(idx), free(addr), free(key);
  return ok;
}

int64_t ct_lg_first_fit(ct_lg_buffer *bufs, int n) {
  int *idx = malloc(sizeof *idx * ((size_t)n + 1));
  if (!idx) return -1;
  ct_lg_group g;
  memset(&g, 0, sizeof g);
  g.bufs = bufs, g.n_bufs = n;
  int64_t end = place_class(&g, 0, true, idx);
  free(idx);
  return end;
}
