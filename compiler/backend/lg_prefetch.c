/* lg_prefetch.c: which groups load their tables and resident operands during the previous
 * group's tail (lg.h ct_lg_group.prefetched): TPU-MLIR's LayerGroup issues the next group's
 * weight loads in the previous group's last time steps the same way. The codegen
 * (cg_prefetch.c) emits those LOADs before the barrier between the two groups. */
#include "compiler/backend/lg_int.h"

bool ct_lg_group_emits(const ct_graph *g, const ct_lg_layer *layers, const ct_lg_group *gr) {
  for (int k = 0; k < gr->n_layers; k++)
    if (!ct_lg_border_cast(g, layers[gr->first + k].op) && layers[gr->first + k].trait != CT_LG_ALIAS) return true;
  return false;
}

/* Does [lo, hi) overlap any LMEM group g may touch: its buffers, and its tables and scratch
 * after them (ct_lg_group_lmem_end)? */
static bool touches(const lg_ctx *x, const ct_lg_group *g, int64_t lo, int64_t hi) {
  if (lo < ct_lg_group_lmem_end(x, g) && g->lmem_bytes < hi) return true;
  for (int i = 0; i < g->n_bufs; i++)
    if (lo < g->bufs[i].addr + g->bufs[i].bytes && g->bufs[i].addr < hi) return true;
  return false;
}

void ct_lg_group_tables_at(const lg_ctx *x, const ct_lg_group *gr, int64_t lo[2], int64_t hi[2]) {
  if (gr->dbl_mid) { /* the MXU layers' tables and the others' in banks of their own */
    int64_t at[3], tm = ct_lg_group_table_part(x, gr->first, gr->n_layers, true);
    int64_t tv = ct_lg_group_table_part(x, gr->first, gr->n_layers, false);
    ct_lg_reserve_split(x->chip, gr->lmem_bytes, tm, tv, 0, at);
    lo[0] = at[0], hi[0] = at[0] + tm, lo[1] = at[1], hi[1] = at[1] + tv;
    return;
  }
  lo[0] = (gr->lmem_bytes + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN;
  hi[0] = lo[0] + ct_lg_group_table_bytes(x, gr->first, gr->n_layers);
  lo[1] = hi[1] = 0;
}

/* Is value v written by a layer of group g? */
static bool written_by(const lg_ctx *x, const ct_lg_group *g, const ct_value *v) {
  int li = x->prod[v->id];
  return li >= g->first && li < g->first + g->n_layers;
}

/* May group h's resident LOADs run while group g (the one before it) does: every LMEM byte
 * they write (h's resident buffers and its tables) lies outside g's, and g writes none of the
 * values they read. */
static bool may_prefetch(const lg_ctx *x, const ct_lg_group *g, const ct_lg_group *h) {
  if (!ct_lg_group_emits(x->g, x->layers, g) || !ct_lg_group_emits(x->g, x->layers, h) || h->pre_cycles <= 0) return false;
  int64_t lo[2], hi[2];
  ct_lg_group_tables_at(x, h, lo, hi);
  for (int k = 0; k < 2; k++)
    if (hi[k] > lo[k] && touches(x, g, lo[k], hi[k])) return false;
  for (int i = 0; i < h->n_bufs; i++) {
    const ct_lg_buffer *b = &h->bufs[i];
    if (b->kind != CT_LG_BUF_RES) continue;
    if (touches(x, g, b->addr, b->addr + b->bytes) || written_by(x, g, x->g->values[b->value])) return false;
  }
  return true;
}

void ct_lg_prefetch(const lg_ctx *x, ct_lg_plan *p) {
  for (int k = 1; k < p->n_groups; k++) {
    ct_lg_group *g = &p->groups[k - 1], *h = &p->groups[k];
    if (h->pre_cycles > g->tail_cycles || !may_prefetch(x, g, h)) continue;
    h->prefetched = true;
    h->prefetch_cycles = h->pre_cycles;
    h->cycles -= h->prefetch_cycles;
  }
}
