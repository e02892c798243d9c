/* lg_cost.c: the planner's DMA and pipeline cost formulas — DMA bursts and latency, and the
 * double-buffered time-step pipeline (TPU-MLIR's LayerGroup software pipeline: load tile i+1
 * ‖ compute tile i ‖ store tile i−1). The compute engines' costs are the cmodel's own
 * (isa/cost.h), applied per layer in lg_eval.c. */
#include <stdlib.h>

#include "compiler/backend/lg_int.h"
#include "isa/cost.h"

static int64_t cdiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

void ct_lg_dma_cost(const ct_chip *c, int ndim, const int64_t *shape, const int64_t *tile, int64_t elem_bytes,
                    int64_t *moved, int64_t *cycles) {
  /* innermost dim that is cut: everything inside it is one contiguous run */
  int k = -1;
  for (int d = ndim - 1; d >= 0; d--)
    if (tile[d] < shape[d]) { k = d; break; }
  int64_t run = elem_bytes, runs = 1;
  if (k < 0) {
    for (int d = 0; d < ndim; d++) run *= shape[d];
  } else {
    run *= tile[k];
    for (int d = k + 1; d < ndim; d++) run *= shape[d];
    for (int d = 0; d < k; d++) runs *= tile[d];
  }
  int64_t b = c->gmem_burst_bytes;
  int64_t m = run > 0 ? runs * cdiv(run, b) * b : 0;
  *moved = m;
  *cycles = m > 0 ? (int64_t)ct_dma_cycles(c, (uint64_t)m, true) : 0;
}

static int by_size_desc(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x > y ? -1 : x < y;
}

int64_t ct_lg_dma_batch_cycles(const ct_chip *c, int64_t *moved, int n, int engines) {
  if (n <= 0) return 0;
  if (engines < 1) engines = 1;
  if (engines > 8) engines = 8;
  qsort(moved, (size_t)n, sizeof *moved, by_size_desc);
  int64_t busy[8] = {0}, total = 0, end = 0;
  for (int i = 0; i < n; i++) {
    int e = 0;
    for (int k = 1; k < engines; k++)
      if (busy[k] < busy[e]) e = k;
    busy[e] += (int64_t)ct_dma_cycles(c, (uint64_t)moved[i], true), total += moved[i];
    if (busy[e] > end) end = busy[e];
  }
  int64_t ports = c->dma_stripe_banks * engines; /* ports the engines drive at once: no more than the banks */
  int64_t port = c->lmem_bank_port_bytes * (ports < c->lmem_banks ? ports : c->lmem_banks);
  int64_t rate = c->gmem_bytes_per_cycle < port ? c->gmem_bytes_per_cycle : port;
  int64_t shared = c->gmem_latency_cycles + cdiv(total, rate);
  return shared > end ? shared : end;
}

static int64_t at(const int64_t *a, int64_t n, int64_t i) { return i < 0 || i >= n ? 0 : a[i]; }

int64_t ct_lg_pipeline_cycles(int64_t n, const int64_t *ld, const int64_t *cp, const int64_t *st, int64_t pre,
                              bool pipelined) {
  int64_t total = pre;
  if (!pipelined) {
    for (int64_t i = 0; i < n; i++) total += ld[i] + cp[i] + st[i];
    return total;
  }
  for (int64_t s = 0; s < n + 2; s++) {
    int64_t t = at(ld, n, s);
    if (at(cp, n, s - 1) > t) t = at(cp, n, s - 1);
    if (at(st, n, s - 2) > t) t = at(st, n, s - 2);
    total += t;
  }
  return total;
}

/* Tile type of tile i: 0 first along the axis, 2 last, 1 in between (a single slice is 0). */
static int tile_type(int64_t i, int64_t secs) {
  int64_t a = i % secs;
  return a == 0 ? 0 : a == secs - 1 ? 2 : 1;
}

static int64_t step_time(const ct_chip *c, const lg_tilecost *l, const lg_tilecost *p, const lg_tilecost *s,
                         bool loads_first) {
  /* the load engine(s): this step's LOADs and the MOVEs of the tile it computes — after each
   * other with one load engine, on engines of their own with two (cg_sched.c make_plan) */
  int64_t t = l ? l->ldd : 0, mv = p ? p->mv : 0;
  if (c->dma_load_engines == 1) t += mv;
  else if (mv > t) t = mv;
  /* load and store engines share the DDR bandwidth: transfers starting together each wait
   * the latency, then move their bytes at a share of the rate (dma/dma.h) */
  int64_t both = (l ? l->ldm : 0) + (s ? s->stm : 0);
  int64_t ddr = both ? c->gmem_latency_cycles + cdiv(both, c->gmem_bytes_per_cycle) : 0;
  int64_t pc = p ? (p->per ? p->per : p->cp) : 0; /* compute overlapping the previous tile's (lg_overlap.c) */
  if (p && pc < p->cp) { /* a tile's compute outlasts its step: two steps hold a double
      * buffer's copy for its LOAD (slowed by the step's STOREs on the DDR) and the compute
      * reading it, or for the compute writing it and its STORE (tile t + 2 reuses the copy) */
    int64_t ld = l ? (l->ldd > ddr ? l->ldd : ddr) : 0;
    if (l && cdiv(ld + p->hold_in, 2) > pc) pc = cdiv(ld + p->hold_in, 2);
    if (s && cdiv(p->hold_out + s->st, 2) > pc) pc = cdiv(p->hold_out + s->st, 2);
  }
  if (pc > t) t = pc;
  if (s && s->st > t) t = s->st;
  if (ddr > t) t = ddr;
  if (l && p && p->mv && c->dma_load_engines == 1) { /* the load engine: the next tile's LOADs and this
      * tile's MOVEs, one after the other in program order (with two engines the MOVEs have
      * engine 0 to themselves, cg_sched.c make_plan). Compute first: the LOADs start when the
      * MOVEs end, as the computed tile's STOREs do — they share the DDR */
    int64_t sh = loads_first ? ddr : cdiv(l->ldm + p->stm, c->gmem_bytes_per_cycle);
    int64_t e0 = (l->ldd > sh ? l->ldd : sh) + (loads_first ? p->mvb : p->mva);
    if (e0 > t) t = e0;
  }
  return t;
}

int64_t ct_lg_pipeline_typed(const ct_chip *c, int64_t n_tiles, int64_t secs, const lg_tilecost tc[3], int64_t pre,
                          bool pipelined, bool loads_first) {
  int64_t total = pre;
  if (!pipelined) {
    for (int64_t i = 0; i < n_tiles; i++) {
      const lg_tilecost *t = &tc[tile_type(i, secs)];
      total += t->ld + t->cp + t->st;
    }
    return total;
  }
  for (int64_t s = 0; s < n_tiles + 2; s++) {
    const lg_tilecost *l = s < n_tiles ? &tc[tile_type(s, secs)] : NULL;
    const lg_tilecost *p = s >= 1 && s - 1 < n_tiles ? &tc[tile_type(s - 1, secs)] : NULL;
    const lg_tilecost *st = s >= 2 && s - 2 < n_tiles ? &tc[tile_type(s - 2, secs)] : NULL;
    total += step_time(c, l, p, st, loads_first);
  }
  const lg_tilecost *last = &tc[tile_type(n_tiles - 1, secs)]; /* its compute alone, beyond its period */
  if (n_tiles > 0 && last->per && last->per < last->cp) total += last->cp - last->per;
  return total;
}

int64_t ct_lg_pipeline_tail(const ct_chip *c, int64_t n_tiles, int64_t secs, const lg_tilecost tc[3], bool pipelined,
                            bool loads_first) {
  if (n_tiles <= 0) return 0;
  const lg_tilecost *last = &tc[tile_type(n_tiles - 1, secs)];
  int64_t tail = last->cp + last->st, stm = last->stm;
  if (pipelined && n_tiles >= 2) {
    const lg_tilecost *prev = &tc[tile_type(n_tiles - 2, secs)];
    tail = step_time(c, NULL, last, prev, loads_first) + step_time(c, NULL, NULL, last, loads_first);
    if (last->per && last->per < last->cp) tail += last->cp - last->per;
    stm += prev->stm;
  }
  int64_t w = tail - cdiv(stm, c->gmem_bytes_per_cycle); /* the stores' share of the DDR */
  return w > 0 ? w : 0;
}
