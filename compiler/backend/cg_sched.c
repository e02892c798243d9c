/* cg_sched.c: the time-step schedule of one layer group (cg_sched.h): staged instructions
 * emitted serially or as the double-buffered load / compute / store pipeline. */
#include "compiler/backend/cg_sched.h"

#include <stdlib.h>
#include <string.h>

#include "isa/cost.h"

ct_status ct_cg_stage_add(cg_stage *s, const ct_insn *in, const char *layer, int64_t tile, ct_diag *d) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    cg_staged *v = realloc(s->v, sizeof *v * (size_t)cap);
    if (!v) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    s->v = v, s->cap = cap;
  }
  cg_staged *e = &s->v[s->n++];
  e->in = *in, e->layer = layer, e->tile = tile, e->role = 0, e->early = false, e->stream = false, e->skey = 0;
  return CT_OK;
}

void ct_cg_stage_free(cg_stage *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

enum { PH_LOAD, PH_COMPUTE, PH_STORE };

static int phase_of(const ct_insn *in) {
  return in->op == CT_ISA_LOAD ? PH_LOAD : in->op == CT_ISA_STORE ? PH_STORE : PH_COMPUTE;
}

static uint32_t bit(int k) { return 1u << k; }

/* Cycles a LOAD or STORE takes alone (for spreading transfers over the engines): the DDR
 * latency + its bytes through the DDR and the bank ports (isa/cost.h, bursts aside) — small
 * transfers cost mostly latency, so spreading by bytes alone would queue them on one engine. */
static int64_t dma_cost(const ct_chip *c, const ct_insn *in) {
  int64_t bytes = in->op == CT_ISA_LOAD
                      ? in->load.n * in->load.c * in->load.h * in->load.w * (int64_t)ct_dtype_size(in->load.dtype)
                      : in->store.n * in->store.c * in->store.h * in->store.w * (int64_t)ct_dtype_size(in->store.dtype);
  return (int64_t)ct_dma_cycles(c, (uint64_t)bytes, true);
}

static ct_status emit(cg_sched *s, ct_insn *in, const char *layer, int gi, int64_t tile, int64_t step, ct_diag *d) {
  uint32_t id = 0;
  ct_status st = layer ? ct_program_add_debug(s->prog, layer, gi, (int32_t)tile, (int32_t)step, &id, d) : CT_OK;
  if (st) return st;
  in->debug_id = id;
  s->any = true;
  return ct_program_add_insn(s->prog, in, d);
}

/* Emits in as the next link of the chain: when its engine differs from the previous link's,
 * that one signals semaphore e (the new engine's index) and in waits for it, so only engine
 * e's queue head can take the token. */
static ct_status link(cg_sched *s, size_t *last, ct_insn *in, const char *layer, int gi, int64_t tile, int64_t step,
                      ct_diag *d) {
  ct_engine e = ct_isa_op_engine(in->op);
  if (s->have_last && e != s->last_eng && e != CT_ENG_CTRL) {
    s->prog->insns[*last].signal |= bit(e);
    in->wait |= bit(e);
  }
  s->last_eng = e, s->have_last = true;
  *last = s->prog->n_insns;
  return emit(s, in, layer, gi, tile, step, d);
}

static ct_status serial(cg_sched *s, int gi, cg_stage *st, ct_diag *d) {
  size_t last = 0;
  ct_status rc = CT_OK;
  for (int i = 0; i < st->n && !rc; i++) {
    cg_staged *v = &st->v[i];
    rc = link(s, &last, &v->in, v->layer, gi, v->tile, v->tile < 0 ? 0 : v->tile, d);
  }
  return rc;
}

/* Per-tile lists of the staged instructions and the DMA engines each tile uses. */
typedef struct plan {
  int64_t T;
  bool tiles_serial;       /* one tile at a time (SYNC between tiles): no cross-tile tokens */
  bool deps;               /* compute ordered by dependency tokens (dep_tokens), not the chain */
  int *off[3], *idx[3];   /* CSR per phase: tile t's instructions idx[ph][off[ph][t] .. off[ph][t+1]) */
  uint32_t *lmask, *smask; /* load / store engine slots used by tile t (CG_DMA_SLOTS) */
  int lbase;               /* load slot k is engine lbase + k (stores: engine k) */
} plan;

static void plan_free(plan *p) {
  for (int k = 0; k < 3; k++) free(p->off[k]), free(p->idx[k]);
  free(p->lmask), free(p->smask);
}

static int64_t tile_of(const cg_staged *v) { return v->tile < 0 ? 0 : v->tile; }

/* Builds the lists and spreads the transfers over the engine slots (least busy so far;
 * ct_cg_dma_slots: in a pipelined group whose compute has MOVEs, which run on load engine 0,
 * the LOADs use the engines after it when there are any). False when some tile has no compute
 * or a tile index is out of range (then: serial). */
static bool make_plan(const cg_sched *s, cg_stage *st, int64_t T, bool pipelined, plan *p, bool *oom) {
  memset(p, 0, sizeof *p);
  p->T = T;
  for (int k = 0; k < 3; k++) {
    p->off[k] = calloc((size_t)T + 1, sizeof *p->off[k]);
    p->idx[k] = malloc(sizeof *p->idx[k] * ((size_t)st->n + 1));
  }
  p->lmask = calloc((size_t)T, sizeof *p->lmask), p->smask = calloc((size_t)T, sizeof *p->smask);
  for (int k = 0; k < 3; k++) *oom = *oom || !p->off[k] || !p->idx[k];
  if (*oom || !p->lmask || !p->smask) return *oom = true, false;
  for (int i = 0; i < st->n; i++) {
    int64_t t = tile_of(&st->v[i]);
    if (t >= T) return false;
    p->off[phase_of(&st->v[i].in)][t + 1]++;
  }
  for (int k = 0; k < 3; k++)
    for (int64_t t = 0; t < T; t++) p->off[k][t + 1] += p->off[k][t];
  for (int64_t t = 0; t < T; t++)
    if (p->off[PH_COMPUTE][t + 1] == p->off[PH_COMPUTE][t]) return false;
  int *fill[3];
  for (int k = 0; k < 3; k++) fill[k] = p->off[k];
  int64_t lb[2] = {0, 0}, sb[2] = {0, 0};
  int nl = (int)s->chip->dma_load_engines, ns = (int)s->chip->dma_store_engines;
  bool moves = false;
  for (int i = 0; i < st->n; i++) moves = moves || st->v[i].in.op == CT_ISA_MOVE;
  p->lbase = pipelined && moves && nl >= 2;
  nl = ct_cg_dma_slots(nl, p->lbase), ns = ct_cg_dma_slots(ns, 0);
  int *pos = calloc((size_t)T * 3 + 1, sizeof *pos);
  if (!pos) return *oom = true, false;
  for (int i = 0; i < st->n; i++) {
    cg_staged *v = &st->v[i];
    int ph = phase_of(&v->in);
    int64_t t = tile_of(v);
    p->idx[ph][fill[ph][t] + pos[3 * t + ph]++] = i;
    int64_t *b = ph == PH_LOAD ? lb : sb;
    int n = ph == PH_LOAD ? nl : ns, e = n > 1 && b[1] < b[0] ? 1 : 0;
    if (ph == PH_LOAD && v->stream) v->in.load.eng = p->lbase, lb[0] += dma_cost(s->chip, &v->in); /* one engine: FIFO */
    else if (ph == PH_LOAD) v->in.load.eng = p->lbase + e, p->lmask[t] |= bit(e), lb[e] += dma_cost(s->chip, &v->in);
    else if (ph == PH_STORE) v->in.store.eng = e, p->smask[t] |= bit(e), sb[e] += dma_cost(s->chip, &v->in);
    else if (v->in.op == CT_ISA_MOVE) v->in.move.eng = 0; /* the compute chain's load-engine link */
  }
  free(pos);
  return true;
}

/* The engine slot of a LOAD or STORE (plan.lbase). */
static int slot_of(const plan *p, const ct_insn *in) {
  return in->op == CT_ISA_LOAD ? (int)in->load.eng - p->lbase : (int)in->store.eng;
}

/* sem(base, b, e) = base + 2b + e */
static int sem(int base, int64_t b, int e) { return base + 2 * (int)b + e; }

/* The DMA phase ph of tile t at step: the first transfer on engine e waits `wait_base`
 * (when wait_on) and the previous tile's transfers on the other engine (seq_base), the last
 * signals `sig_base` (when sig_on) and the next tile's first transfer on the other engine. */
static ct_status dma_phase(cg_sched *s, int gi, cg_stage *st, const plan *p, int ph, int64_t t, int64_t step, int wait_base,
                           bool wait_on, int sig_base, bool sig_on, ct_diag *d) {
  int lo = p->off[ph][t], hi = p->off[ph][t + 1], seq = ph == PH_LOAD ? CG_SEM_LSEQ : CG_SEM_SSEQ;
  const uint32_t *mask = ph == PH_LOAD ? p->lmask : p->smask;
  ct_status rc = CT_OK;
  for (int k = lo; k < hi && !rc; k++) {
    cg_staged *v = &st->v[p->idx[ph][k]];
    if (v->stream) continue; /* emitted with the compute (compute_phase) */
    int e = slot_of(p, &v->in);
    bool first = true, last = true;
    for (int j = lo; j < k; j++) first = first && (st->v[p->idx[ph][j]].stream || slot_of(p, &st->v[p->idx[ph][j]].in) != e);
    for (int j = k + 1; j < hi; j++) last = last && (st->v[p->idx[ph][j]].stream || slot_of(p, &st->v[p->idx[ph][j]].in) != e);
    if (first && wait_on) v->in.wait |= bit(sem(wait_base, t % 2, e));
    if (last && sig_on) v->in.signal |= bit(sem(sig_base, t % 2, e));
    if (first && t > 0 && (mask[t - 1] & bit(1 - e))) v->in.wait |= bit(seq + (1 - e)); /* (1 − e) → e */
    if (last && t + 1 < p->T && (mask[t + 1] & bit(1 - e))) v->in.signal |= bit(seq + e); /* e → 1 − e */
    rc = emit(s, &v->in, v->layer, gi, v->tile, step, d);
  }
  return rc;
}

/* The smallest first-reader key above `after` among tile t's stream LOADs; INT32_MAX when none. */
static int32_t next_key(const cg_stage *st, const plan *p, int64_t t, int32_t after) {
  int32_t key = INT32_MAX;
  for (int k = p->off[PH_LOAD][t]; k < p->off[PH_LOAD][t + 1]; k++) {
    const cg_staged *v = &st->v[p->idx[PH_LOAD][k]];
    if (v->stream && v->skey > after && v->skey < key) key = v->skey;
  }
  return key;
}

/* Tile t's stream LOADs of first reader `key`, in staging order (their semaphores are set:
 * ct_cg_dep_tokens). */
static ct_status stream_loads(cg_sched *s, int gi, cg_stage *st, const plan *p, int64_t t, int32_t key, int64_t step,
                              ct_diag *d) {
  ct_status rc = CT_OK;
  for (int k = p->off[PH_LOAD][t]; k < p->off[PH_LOAD][t + 1] && !rc && key != INT32_MAX; k++) {
    cg_staged *v = &st->v[p->idx[PH_LOAD][k]];
    if (v->stream && v->skey == key) rc = emit(s, &v->in, v->layer, gi, v->tile, step, d);
  }
  return rc;
}

/* The compute of tile t. Stream LOADs (cg_staged.stream) are interleaved one first reader
 * ahead: those of the first key come before the compute, those of key k_{i+1} just before the
 * instruction k_i — each signaller precedes its waiter, and the in-order dispatcher of a chip
 * with short queues still reaches the next layer's operands while the current layer runs. */
static ct_status compute_phase(cg_sched *s, int gi, cg_stage *st, const plan *p, int64_t t, int64_t step, size_t *last,
                               ct_diag *d) {
  int lo = p->off[PH_COMPUTE][t], hi = p->off[PH_COMPUTE][t + 1];
  int64_t b = t % 2;
  int32_t key = next_key(st, p, t, INT32_MIN);
  ct_status rc = stream_loads(s, gi, st, p, t, key, step - 1, d);
  for (int k = lo; k < hi && !rc; k++) {
    cg_staged *v = &st->v[p->idx[PH_COMPUTE][k]];
    if (k == key) key = next_key(st, p, t, key), rc = stream_loads(s, gi, st, p, t, key, step - 1, d);
    if (rc) break;
    if (!p->deps) v->role = (uint8_t)((k == lo ? CG_ROLE_LD | CG_ROLE_OUTFREE : 0) | (k == hi - 1 ? CG_ROLE_INFREE | CG_ROLE_DONE : 0));
    for (int e = 0; e < 2; e++) {
      if ((v->role & CG_ROLE_LD) && (p->lmask[t] & bit(e))) v->in.wait |= bit(sem(CG_SEM_LD, b, e));
      if ((v->role & CG_ROLE_OUTFREE) && !p->tiles_serial && t >= 2 && (p->smask[t - 2] & bit(e)))
        v->in.wait |= bit(sem(CG_SEM_OUTFREE, b, e));
      if ((v->role & CG_ROLE_INFREE) && !p->tiles_serial && t + 2 < p->T && (p->lmask[t + 2] & bit(e)))
        v->in.signal |= bit(sem(CG_SEM_INFREE, b, e));
      if ((v->role & CG_ROLE_DONE) && (p->smask[t] & bit(e))) v->in.signal |= bit(sem(CG_SEM_DONE, b, e));
    }
    rc = p->deps ? emit(s, &v->in, v->layer, gi, v->tile, step, d) : link(s, last, &v->in, v->layer, gi, v->tile, step, d);
  }
  return rc;
}

static ct_status pipeline(cg_sched *s, int gi, cg_stage *st, const plan *p, bool loads_first, ct_diag *d) {
  int64_t T = p->T;
  size_t last = 0;
  ct_status rc = CT_OK;
  for (int64_t step = 0; step < T + 2 && !rc; step++) {
    /* the compute's MOVEs run on load engine 0, in program order with the LOADs; either order
     * keeps every wait's signaller in an earlier step */
    bool ld = step < T, cp = step >= 1 && step - 1 < T;
    if (ld && loads_first) rc = dma_phase(s, gi, st, p, PH_LOAD, step, step, CG_SEM_INFREE, step >= 2, CG_SEM_LD, true, d);
    if (!rc && cp) rc = compute_phase(s, gi, st, p, step - 1, step, &last, d);
    if (!rc && ld && !loads_first)
      rc = dma_phase(s, gi, st, p, PH_LOAD, step, step, CG_SEM_INFREE, step >= 2, CG_SEM_LD, true, d);
    if (!rc && step >= 2)
      rc = dma_phase(s, gi, st, p, PH_STORE, step - 2, step, CG_SEM_DONE, true, CG_SEM_OUTFREE, step < T, d);
  }
  return rc;
}

static ct_status sync_all(cg_sched *s, int gi, ct_diag *d) {
  ct_insn sync;
  memset(&sync, 0, sizeof sync);
  sync.op = CT_ISA_SYNC, sync.sync.engines = 0xF;
  return emit(s, &sync, NULL, gi, -1, -1, d);
}

/* One tile after the other, each with its transfers spread over the DMA engines: LOADs of
 * tile t (the last on engine e signals LD(b, e), b = t mod 2), its compute (a chain; the
 * first waits LD, the last signals DONE(b, e)), its STOREs (the first on e waits DONE(b, e)),
 * then SYNC before the next tile. */
static ct_status tiles_serial(cg_sched *s, int gi, cg_stage *st, plan *p, ct_diag *d) {
  size_t last = 0;
  ct_status rc = CT_OK;
  p->tiles_serial = true;
  for (int64_t t = 0; t < p->T && !rc; t++) {
    if (t > 0) rc = sync_all(s, gi, d), s->have_last = false;
    if (!rc) rc = dma_phase(s, gi, st, p, PH_LOAD, t, 3 * t, 0, false, CG_SEM_LD, true, d);
    if (!rc) rc = compute_phase(s, gi, st, p, t, 3 * t + 1, &last, d);
    if (!rc) rc = dma_phase(s, gi, st, p, PH_STORE, t, 3 * t + 2, CG_SEM_DONE, true, 0, false, d);
  }
  return rc;
}

/* Marks the early LOADs of a single-tile group as stream LOADs (on = true), or none. */
static void mark_stream(cg_stage *st, bool on) {
  for (int i = 0; i < st->n; i++) st->v[i].stream = on && st->v[i].early && st->v[i].in.op == CT_ISA_LOAD;
}

ct_status ct_cg_sched_group(cg_sched *s, int gi, cg_stage *st, int64_t n_tiles, bool pipelined, bool loads_first,
                         bool stream, ct_diag *d) {
  if (!st->n) return CT_OK;
  ct_status rc = CT_OK;
  if (s->any) rc = sync_all(s, gi, d); /* the previous group drains before this one touches memory */
  s->have_last = false;
  if (rc) return rc;
  bool oom = false;
  plan p;
  memset(&p, 0, sizeof p);
  stream = stream && n_tiles == 1 && ct_cg_can_stream(s->chip);
  mark_stream(st, stream);
  bool ok = s->chip->sem_count >= CG_SEM_PIPELINE && make_plan(s, st, n_tiles, pipelined && n_tiles >= 2, &p, &oom);
  if (ok && s->chip->sem_count >= CG_SEM_DEPS_END) {
    _Static_assert(PH_LOAD == 0 && PH_COMPUTE == 1 && PH_STORE == 2, "ct_cg_dep_tokens' phase order");
    p.deps = ct_cg_dep_tokens(st, (const int *const *)p.off, (const int *const *)p.idx, p.T, &oom);
  }
  if (ok && stream && !p.deps && !oom) { /* the chain: every LOAD before the tile's compute */
    mark_stream(st, false), plan_free(&p), memset(&p, 0, sizeof p);
    ok = make_plan(s, st, n_tiles, false, &p, &oom);
  }
  if (!ok) mark_stream(st, false); /* serial: program order */
  if (oom) rc = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  else if (ok && pipelined && n_tiles >= 2) rc = pipeline(s, gi, st, &p, loads_first, d), s->pipelined_groups++;
  else if (ok) rc = tiles_serial(s, gi, st, &p, d), s->serial_groups++;
  else rc = serial(s, gi, st, d), s->serial_groups++;
  plan_free(&p);
  s->have_last = false;
  return rc;
}

ct_status ct_cg_sched_end(cg_sched *s, ct_diag *d) {
  ct_insn end;
  memset(&end, 0, sizeof end);
  end.op = CT_ISA_END;
  return emit(s, &end, "end", -1, -1, -1, d);
}

/* Where the prefetch of the group just emitted goes: the load engine of its last LOAD, so it
 * starts when the group's loads are done, as the planner's tail assumes (ct_lg_pipeline_tail)
 * — unless the group's MOVEs run there and another engine with LOADs of the group has none:
 * there it does not wait for the compute the MOVEs follow. *at: right after that last LOAD in
 * program order (the in-order dispatcher then issues the prefetch before the group's later
 * compute), or the program's end when MOVEs follow on the engine (they must not wait for it). */
static uint8_t prefetch_place(const ct_program *prog, size_t *at) {
  uint8_t eng = 0;
  size_t last = 0;
  uint32_t moves = 0, loads = 0, later = 0; /* load engines with MOVEs, LOADs, MOVEs after the last LOAD */
  for (size_t i = prog->n_insns; i-- > 0 && prog->insns[i].op != CT_ISA_SYNC;) {
    const ct_insn *in = &prog->insns[i];
    if (in->op == CT_ISA_MOVE) moves |= 1u << in->move.eng, later |= last ? 0 : 1u << in->move.eng;
    if (in->op == CT_ISA_LOAD) loads |= 1u << in->load.eng;
    if (in->op == CT_ISA_LOAD && !last) eng = in->load.eng, last = i + 1;
  }
  for (uint8_t e = 0; (moves >> eng & 1) && e < 16; e++)
    if ((loads & ~moves) >> e & 1) eng = e;
  *at = last && !(later >> eng & 1) ? last : prog->n_insns;
  return eng;
}

/* Moves the last k instructions of the program to position at (a rotation of [at, n)). */
static void rotate_in(ct_program *prog, size_t at, size_t k) {
  size_t n = prog->n_insns;
  for (size_t r = 0; r < k; r++) { /* k is a handful of LOADs: one step at a time */
    ct_insn t = prog->insns[n - 1];
    memmove(&prog->insns[at + 1], &prog->insns[at], sizeof t * (n - 1 - at));
    prog->insns[at] = t;
  }
}

ct_status ct_cg_prefetch_emit(cg_sched *s, int gi, cg_stage *pre, ct_diag *d) {
  size_t at;
  uint8_t eng = prefetch_place(s->prog, &at);
  ct_status rc = CT_OK;
  for (int i = 0; i < pre->n && !rc; i++) {
    cg_staged *v = &pre->v[i];
    v->in.load.eng = eng, v->in.wait = 0, v->in.signal = 0;
    rc = emit(s, &v->in, v->layer, gi, -1, -1, d);
  }
  if (!rc && at < s->prog->n_insns - (size_t)pre->n) rotate_in(s->prog, at, (size_t)pre->n);
  return rc;
}
