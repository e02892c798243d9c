/* race.c: vector-clock happens-before tracking (Lamport / Mattern vector clocks; access
 * records checked as in FastTrack, Flanagan & Freund 2009, without read sharing). Overlap
 * of strided regions is exact (memory/region.c). */
#include "cmodel/race.h"

#include <stdlib.h>
#include <string.h>

typedef struct token_fifo {
  uint32_t *vcs;       /* cap × n_agents */
  uint32_t head, len, cap;
} token_fifo;

typedef struct record {
  int agent;
  uint32_t epoch, insn;
  ct_mem_region reg;
} record;

struct ct_race {
  int n;                 /* agents */
  uint32_t *vc;          /* n × n: vc[a*n + b] = what a knows of b */
  uint32_t n_sems;
  token_fifo *sems;
  uint32_t *snaps;       /* snapshots × n */
  uint32_t n_snaps, cap_snaps;
  uint32_t *last_snap;   /* per agent: id of its last snapshot, UINT32_MAX none */
  bool *dirty;           /* per agent: clock changed since its last snapshot */
  record *recs;
  uint32_t n_recs, cap_recs, prune_at;
};

ct_race *ct_race_new(int n_agents, uint32_t n_sems) {
  ct_race *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->n = n_agents;
  r->n_sems = n_sems;
  r->vc = calloc((size_t)n_agents * (size_t)n_agents, sizeof *r->vc);
  r->sems = calloc(n_sems ? n_sems : 1, sizeof *r->sems);
  r->last_snap = malloc((size_t)n_agents * sizeof *r->last_snap);
  r->dirty = malloc((size_t)n_agents * sizeof *r->dirty);
  if (!r->vc || !r->sems || !r->last_snap || !r->dirty) {
    ct_race_free(r);
    return NULL;
  }
  for (int a = 0; a < n_agents; a++) {
    r->last_snap[a] = UINT32_MAX;
    r->dirty[a] = true;
  }
  r->prune_at = 256;
  return r;
}

void ct_race_free(ct_race *r) {
  if (!r) return;
  for (uint32_t s = 0; r->sems && s < r->n_sems; s++) free(r->sems[s].vcs);
  free(r->sems);
  free(r->vc);
  free(r->snaps);
  free(r->last_snap);
  free(r->dirty);
  free(r->recs);
  free(r);
}

static uint32_t *clock_of(ct_race *r, int a) { return r->vc + (size_t)a * (size_t)r->n; }

static void join_into(ct_race *r, int a, const uint32_t *v) {
  uint32_t *c = clock_of(r, a);
  for (int b = 0; b < r->n; b++)
    if (v[b] > c[b]) {
      c[b] = v[b];
      r->dirty[a] = true;
    }
}

void ct_race_tick(ct_race *r, int a) {
  clock_of(r, a)[a]++;
  r->dirty[a] = true;
}

bool ct_race_signal(ct_race *r, int a, uint32_t s) {
  token_fifo *f = &r->sems[s];
  size_t n = (size_t)r->n;
  if (f->len == f->cap) {
    uint32_t cap = f->cap ? f->cap * 2 : 4;
    uint32_t *v = malloc((size_t)cap * n * sizeof *v);
    if (!v) return false;
    for (uint32_t i = 0; i < f->len; i++)
      memcpy(v + i * n, f->vcs + ((f->head + i) % f->cap) * n, n * sizeof *v);
    free(f->vcs);
    f->vcs = v;
    f->head = 0;
    f->cap = cap;
  }
  memcpy(f->vcs + ((f->head + f->len) % f->cap) * n, clock_of(r, a), n * sizeof *f->vcs);
  f->len++;
  return true;
}

void ct_race_take(ct_race *r, int a, uint32_t s) {
  token_fifo *f = &r->sems[s];
  if (!f->len) return;
  join_into(r, a, f->vcs + (size_t)f->head * (size_t)r->n);
  f->head = (f->head + 1) % f->cap;
  f->len--;
}

void ct_race_join(ct_race *r, int a, int b) { join_into(r, a, clock_of(r, b)); }

uint32_t ct_race_snapshot(ct_race *r, int a) {
  if (!r->dirty[a] && r->last_snap[a] != UINT32_MAX) return r->last_snap[a];
  size_t n = (size_t)r->n;
  if (r->n_snaps == r->cap_snaps) {
    uint32_t cap = r->cap_snaps ? r->cap_snaps * 2 : 16;
    uint32_t *p = realloc(r->snaps, (size_t)cap * n * sizeof *p);
    if (!p) return UINT32_MAX;
    r->snaps = p;
    r->cap_snaps = cap;
  }
  memcpy(r->snaps + (size_t)r->n_snaps * n, clock_of(r, a), n * sizeof *r->snaps);
  r->last_snap[a] = r->n_snaps++;
  r->dirty[a] = false;
  return r->last_snap[a];
}

void ct_race_join_snapshot(ct_race *r, int a, uint32_t id) {
  if (id < r->n_snaps) join_into(r, a, r->snaps + (size_t)id * (size_t)r->n);
}

/* True if record rec is not ordered before agent a's current clock. */
static bool unordered(ct_race *r, const record *rec, int a) {
  return rec->agent != a && rec->epoch > clock_of(r, a)[rec->agent];
}

static bool check(ct_race *r, int a, const ct_mem_region *regs, int n, ct_race_hit *hit) {
  for (uint32_t i = 0; i < r->n_recs; i++) {
    const record *rec = &r->recs[i];
    if (!unordered(r, rec, a)) continue;
    for (int k = 0; k < n; k++)
      if ((rec->reg.write || regs[k].write) && ct_mem_region_overlap(&rec->reg, &regs[k])) {
        hit->insn_a = rec->insn;
        hit->region_a = rec->reg;
        hit->region_b = regs[k];
        return true;
      }
  }
  return false;
}

bool ct_race_access(ct_race *r, int a, uint32_t insn, const ct_mem_region *regs, int n,
                    ct_race_hit *hit, bool *oom) {
  *oom = false;
  if (check(r, a, regs, n, hit)) {
    hit->insn_b = insn;
    return true;
  }
  if (r->n_recs + (uint32_t)n > r->cap_recs) {
    uint32_t cap = r->cap_recs ? r->cap_recs * 2 : 64;
    while (cap < r->n_recs + (uint32_t)n) cap *= 2;
    record *p = realloc(r->recs, (size_t)cap * sizeof *p);
    if (!p) {
      *oom = true;
      return false;
    }
    r->recs = p;
    r->cap_recs = cap;
  }
  uint32_t epoch = clock_of(r, a)[a];
  for (int k = 0; k < n; k++) r->recs[r->n_recs++] = (record){a, epoch, insn, regs[k]};
  return false;
}

void ct_race_prune(ct_race *r, uint64_t live) {
  if (r->n_recs < r->prune_at) return;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < r->n_recs; i++) {
    bool needed = false;
    for (int g = 0; g < r->n && !needed; g++)
      if ((live >> g) & 1) needed = unordered(r, &r->recs[i], g);
    if (needed) r->recs[kept++] = r->recs[i];
  }
  r->n_recs = kept;
  r->prune_at = kept * 2 > 256 ? kept * 2 : 256;
}
