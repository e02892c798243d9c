/* cg_prefetch.c: which LOADs of the next layer group may run before the barrier that
 * separates it from the current one (cg_sched.h ct_cg_prefetch_select): the tables and
 * resident operands it loads once, when they touch no LMEM the current group uses and read
 * no GMEM it writes — TPU-MLIR's LayerGroup issues the next group's weight loads during the
 * previous group's last time steps the same way. */
#include <stdlib.h>

#include "compiler/backend/cg_sched.h"

/* Byte intervals [lo, hi) of one memory. */
typedef struct ivals {
  uint64_t *lo, *hi;
  int n, cap;
} ivals;

static bool ivals_add(ivals *s, uint64_t lo, uint64_t hi) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 256;
    uint64_t *a = realloc(s->lo, sizeof *a * (size_t)cap), *b = a ? realloc(s->hi, sizeof *b * (size_t)cap) : NULL;
    if (a) s->lo = a;
    if (!b) return false;
    s->hi = b, s->cap = cap;
  }
  s->lo[s->n] = lo, s->hi[s->n++] = hi;
  return true;
}

static bool ivals_hit(const ivals *s, uint64_t lo, uint64_t hi) {
  for (int i = 0; i < s->n; i++)
    if (s->lo[i] < hi && lo < s->hi[i]) return true;
  return false;
}

/* The LMEM every instruction of cur touches and the GMEM its STOREs write. */
static bool footprint(const cg_stage *cur, ivals *lm, ivals *gw) {
  for (int i = 0; i < cur->n; i++) {
    ct_isa_access a[CT_ISA_MAX_ACCESS];
    int n = ct_isa_accesses(&cur->v[i].in, a);
    for (int k = 0; k < n; k++) {
      if (!a[k].bytes) continue;
      bool ok = a[k].mem == CT_MEM_LMEM ? ivals_add(lm, a[k].addr, a[k].addr + a[k].bytes)
                : a[k].write          ? ivals_add(gw, a[k].addr, a[k].addr + a[k].bytes)
                                      : true;
      if (!ok) return false;
    }
  }
  return true;
}

/* May LOAD v run while cur's instructions do: it writes no LMEM they touch and reads no GMEM
 * they write. */
static bool independent(const cg_staged *v, const ivals *lm, const ivals *gw) {
  ct_isa_access a[CT_ISA_MAX_ACCESS];
  int n = ct_isa_accesses(&v->in, a);
  for (int k = 0; k < n; k++)
    if (a[k].bytes && ivals_hit(a[k].mem == CT_MEM_LMEM ? lm : gw, a[k].addr, a[k].addr + a[k].bytes)) return false;
  return true;
}

ct_status ct_cg_prefetch_select(int gi, const cg_stage *cur, cg_stage *next, cg_stage *out, ct_diag *d) {
  ivals lm = {0}, gw = {0};
  ct_status st = footprint(cur, &lm, &gw) ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  int keep = 0;
  out->n = 0;
  for (int i = 0; i < next->n && !st; i++) {
    cg_staged *v = &next->v[i];
    if (!v->early || v->in.op != CT_ISA_LOAD) next->v[keep++] = *v;
    else if (!independent(v, &lm, &gw))
      st = ct_diag_set(d, CT_ERR_INTERNAL, "group %d: the planner prefetches the LOAD of \"%s\" during group %d, whose "
                       "memory it overlaps", gi + 1, v->layer ? v->layer : "?", gi);
    else st = ct_cg_stage_add(out, &v->in, v->layer, v->tile, d);
  }
  if (!st) next->n = keep;
  free(lm.lo), free(lm.hi), free(gw.lo), free(gw.hi);
  return st;
}
