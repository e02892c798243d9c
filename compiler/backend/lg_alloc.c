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

/* Is [off, off + bytes) free of every placed buffer (of idx[0..n)) alive with b? */
static bool free_at(const ct_lg_buffer *bufs, const int *idx, int n, const ct_lg_buffer *b, int64_t off) {
  for (int k = 0; k < n; k++) {
    const ct_lg_buffer *p = &bufs[idx[k]];
    if (lives_overlap(p, b) && off < p->addr + align_up(p->bytes, LG_ALIGN) && p->addr < off + b->bytes) return false;
  }
  return true;
}

/* First fit (by decreasing size) of the buffers of class cls at offsets from 0; returns
 * the end of the highest one. Buffers get addr relative to the class base. */
static int64_t place_class(ct_lg_group *gr, int cls, bool any_cls, int *idx) {
  int n = 0;
  for (int i = 0; i < gr->n_bufs; i++)
    if (any_cls || gr->bufs[i].cls == cls) idx[n++] = i;
  for (int i = 1; i < n; i++) /* insertion sort, largest first, stable */
    for (int j = i; j > 0 && gr->bufs[idx[j]].bytes > gr->bufs[idx[j - 1]].bytes; j--) {
      int t = idx[j];
      idx[j] = idx[j - 1], idx[j - 1] = t;
    }
  int64_t end = 0;
  for (int k = 0; k < n; k++) {
    ct_lg_buffer *b = &gr->bufs[idx[k]];
    int64_t best = 0;
    if (!free_at(gr->bufs, idx, k, b, 0)) {
      best = INT64_MAX;
      for (int j = 0; j < k; j++) {
        const ct_lg_buffer *p = &gr->bufs[idx[j]];
        int64_t off = p->addr + align_up(p->bytes, LG_ALIGN);
        if (off < best && free_at(gr->bufs, idx, k, b, off)) best = off;
      }
    }
    b->addr = best;
    if (best + b->bytes > end) end = best + b->bytes;
  }
  return end;
}

bool lg_alloc_lmem(const ct_chip *c, ct_lg_group *gr, int64_t *need) {
  int *idx = malloc(sizeof *idx * ((size_t)gr->n_bufs + 1));
  if (!idx) return *need = INT64_MAX, false;
  int64_t bank = c->lmem_bytes / c->lmem_banks;
  memset(gr->bank_lo, 0, sizeof gr->bank_lo), memset(gr->bank_hi, 0, sizeof gr->bank_hi);
  if (!gr->pipelined) {
    int64_t end = place_class(gr, 0, true, idx);
    gr->bank_hi[CT_LG_CLS_COMPUTE] = (int)c->lmem_banks;
    gr->lmem_bytes = end, *need = end;
    free(idx);
    return end <= c->lmem_bytes;
  }
  int64_t nb = 0, end = 0;
  for (int cls = 0; cls < CT_LG_NCLS; cls++) {
    int64_t e = place_class(gr, cls, false, idx);
    int64_t k = (e + bank - 1) / bank;
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

int64_t lg_first_fit(ct_lg_buffer *bufs, int n) {
  int *idx = malloc(sizeof *idx * ((size_t)n + 1));
  if (!idx) return -1;
  ct_lg_group g;
  memset(&g, 0, sizeof g);
  g.bufs = bufs, g.n_bufs = n;
  int64_t end = place_class(&g, 0, true, idx);
  free(idx);
  return end;
}
