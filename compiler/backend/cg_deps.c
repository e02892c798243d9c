/* cg_deps.c: the dependency tokens between a layer group's compute instructions (cg_sched.h
 * ct_cg_dep_tokens): each instruction waits only for the instructions on other engines whose
 * LMEM it reads or overwrites (the regions of ct_isa_accesses), as VTA's dependency tokens
 * and TPU-MLIR's TIU/GDMA sync IDs order one engine's queue against another's. */
#include <stdlib.h>

#include "compiler/backend/cg_sched.h"

enum { N_CLS = 3, MAX_REG = CT_ISA_MAX_ACCESS, MAX_DMA_REG = 32 };

/* Compute engine class of an opcode: 0 load engine 0 (MOVE), 1 MXU, 2 VPU; -1 other. */
static int cls_of(const ct_insn *in) {
  ct_engine e = ct_isa_op_engine(in->op);
  return e == CT_ENG_LOAD ? 0 : e == CT_ENG_MXU ? 1 : e == CT_ENG_VPU ? 2 : -1;
}

/* One compute instruction's LMEM hulls. */
typedef struct node {
  int cls, n;
  uint64_t lo[MAX_REG], hi[MAX_REG];
  bool write[MAX_REG];
} node;

static void node_of(const ct_insn *in, node *x) {
  ct_isa_access a[CT_ISA_MAX_ACCESS];
  int n = ct_isa_accesses(in, a);
  x->cls = cls_of(in), x->n = 0;
  for (int k = 0; k < n; k++)
    if (a[k].mem == CT_MEM_LMEM && a[k].bytes)
      x->lo[x->n] = a[k].addr, x->hi[x->n] = a[k].addr + a[k].bytes, x->write[x->n++] = a[k].write;
}

/* Must b (later) follow a: a region of one overlaps a region of the other and one of them writes it. */
static bool conflict(const node *a, const node *b) {
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if ((a->write[i] || b->write[j]) && a->lo[i] < b->hi[j] && b->lo[j] < a->hi[i]) return true;
  return false;
}

/* sem(producer class p → consumer class c), p ≠ c */
static int pair_sem(int p, int c) { return CG_SEM_DEP + 2 * p + (c > p ? c - 1 : c); }

/* dep[c] = max(dep[c], j) unless class c is k's own. */
static void need(const node *nd, int k, int j, int dep[N_CLS]) {
  if (j < 0 || j >= k) return; /* none (−1), or not before k */
  int c = nd[j].cls;
  if (c != nd[k].cls && j > dep[c]) dep[c] = j;
}

/* The LMEM hulls of one tile's transfers of one phase. */
typedef struct dnode {
  int n;
  uint64_t lo[MAX_DMA_REG], hi[MAX_DMA_REG];
} dnode;

/* The hulls of the LMEM side of tile t's transfers of phase ph (LOAD: destinations, STORE:
 * sources); false when there are more than MAX_DMA_REG. */
static bool dma_node(const cg_stage *st, const int *off, const int *idx, int64_t t, dnode *x) {
  x->n = 0;
  for (int k = off[t]; k < off[t + 1]; k++) {
    if (st->v[idx[k]].stream) continue; /* ordered by their own tokens (stream_tokens) */
    ct_isa_access a[CT_ISA_MAX_ACCESS];
    int n = ct_isa_accesses(&st->v[idx[k]].in, a);
    for (int j = 0; j < n; j++) {
      if (a[j].mem != CT_MEM_LMEM || !a[j].bytes) continue;
      if (x->n == MAX_DMA_REG) return false; /* too many: every compute instruction counts as touching them */
      x->lo[x->n] = a[j].addr, x->hi[x->n++] = a[j].addr + a[j].bytes;
    }
  }
  return true;
}

/* Does compute node c touch (writes_only: write) a region of transfer node m? Unknown m: yes. */
static bool touches(const node *c, const dnode *m, bool known, bool writes_only) {
  if (!known) return true;
  for (int i = 0; i < c->n; i++)
    for (int j = 0; j < m->n; j++)
      if ((!writes_only || c->write[i]) && c->lo[i] < m->hi[j] && m->lo[j] < c->hi[i]) return true;
  return false;
}

/* Per tile: which compute instructions touch its loads' regions (bit 0), tile t + 2's loads'
 * (bit 1), write its stores' (bit 2), write tile t − 2's stores' (bit 3). */
static void dma_touch(const cg_stage *st, const int *const off[3], const int *const idx[3], int64_t T, const node *nd,
                      uint8_t *tb) {
  for (int64_t t = 0; t < T; t++) {
    dnode l0, l2, s0, s2;
    bool k0 = dma_node(st, off[0], idx[0], t, &l0), k2 = t + 2 < T && dma_node(st, off[0], idx[0], t + 2, &l2);
    bool q0 = dma_node(st, off[2], idx[2], t, &s0), q2 = t >= 2 && dma_node(st, off[2], idx[2], t - 2, &s2);
    for (int k = off[1][t]; k < off[1][t + 1]; k++)
      tb[k] = (uint8_t)(touches(&nd[k], &l0, k0, false) | (t + 2 < T && touches(&nd[k], &l2, k2, false)) << 1 |
                        touches(&nd[k], &s0, q0, true) << 2 | (t >= 2 && touches(&nd[k], &s2, q2, true)) << 3);
  }
}

/* First (last) instruction of [lo, hi) with bit b of tb, else dflt. */
static int find(const uint8_t *tb, int lo, int hi, int b, bool last, int dflt) {
  for (int k = last ? hi - 1 : lo; k >= lo && k < hi; k += last ? -1 : 1)
    if (tb[k] & b) return k;
  return dflt;
}

/* The LMEM hull of one staged LOAD. */
static void load_node(const cg_staged *v, dnode *x) {
  ct_isa_access a[CT_ISA_MAX_ACCESS];
  int n = ct_isa_accesses(&v->in, a);
  x->n = 0;
  for (int j = 0; j < n && x->n < MAX_DMA_REG; j++)
    if (a[j].mem == CT_MEM_LMEM && a[j].bytes) x->lo[x->n] = a[j].addr, x->hi[x->n++] = a[j].addr + a[j].bytes;
}

/* Tokens of tile 0's stream LOADs (cg_staged.stream): each one's first reader f (the first
 * compute instruction of tile 0 touching its LMEM; the tile's last when none) becomes its key;
 * per key the last of its LOADs in staging order signals CG_SEM_STREAM and f waits for it
 * (compute_phase emits them by key, on one engine, so the k-th signal is the k-th waiter's).
 * sdep[k][c] gets the latest class-c instruction k must follow: the first reader of every
 * stream LOAD whose region k touches, and for a first reader the previous one (waiters take
 * the tokens in order). */
static void stream_tokens(cg_stage *st, const int *loff, const int *lidx, int clo, int chi, const int *cidx,
                          const node *nd, int (*sdep)[N_CLS]) {
  for (int i = loff[0]; i < loff[1]; i++) { /* first readers */
    cg_staged *v = &st->v[lidx[i]];
    if (!v->stream) continue;
    dnode h;
    load_node(v, &h);
    int f = -1;
    for (int k = clo; k < chi; k++) {
      if (!touches(&nd[k], &h, true, false)) continue;
      if (f < 0) f = k; /* the first reader */
      else if (f > sdep[k][nd[f].cls]) sdep[k][nd[f].cls] = f; /* the others follow it */
    }
    v->skey = f < 0 ? chi - 1 : f;
  }
  int prev = -1;
  for (int k = clo; k < chi; k++) { /* per first reader: its LOADs' last signals, it waits */
    int last = -1;
    for (int i = loff[0]; i < loff[1]; i++)
      if (st->v[lidx[i]].stream && st->v[lidx[i]].skey == k) last = i;
    if (last < 0) continue;
    st->v[lidx[last]].in.signal |= 1u << CG_SEM_STREAM;
    st->v[cidx[k]].in.wait |= 1u << CG_SEM_STREAM;
    if (prev >= 0 && prev > sdep[k][nd[prev].cls]) sdep[k][nd[prev].cls] = prev;
    prev = k;
  }
}

/* The latest instruction per other class that k must follow (indices into the compute order):
 * its data, an MXU / VPU instruction tile t − 2's last MXU and VPU instructions (back2: the
 * tile with the same buffer copies, whose banks the cmodel would grant one engine at a time
 * anyway; not the MOVEs, which would hold up the LOADs queued behind them), and the roles of
 * its tile r (cg_staged.role) — the instructions after the LD (OUTFREE) waiter that read the
 * loads' (write the stores') regions follow it, the INFREE (DONE) signaller follows those
 * before it, everything follows tile 0's LD waiter. */
static void deps_of(const node *nd, const uint8_t *tb, int k, int lo, const int r[4], int ldw0, const int back2[N_CLS],
                    const int sig[N_CLS][N_CLS], const int sdep[N_CLS], int dep[N_CLS]) {
  int e = nd[k].cls, open = 0;
  for (int c = 0; c < N_CLS; c++) dep[c] = -1, open += c != e;
  bool done[N_CLS] = {false};
  done[e] = true;
  for (int j = k - 1; j >= 0 && open; j--) { /* data: the latest conflicting instruction per class */
    int c = nd[j].cls;
    if (done[c]) continue;
    if (j <= sig[c][e]) { done[c] = true, open--; continue; } /* an earlier wait covers the rest */
    if (conflict(&nd[j], &nd[k])) dep[c] = j, done[c] = true, open--;
  }
  need(nd, k, ldw0, dep); /* tile 0's loads hold the tables and resident weights */
  for (int c = 0; c < N_CLS; c++) need(nd, k, sdep[c], dep); /* stream LOADs' first readers */
  for (int c = 1; c < N_CLS && nd[k].cls > 0; c++) /* MXU / VPU: tile t − 2 used the same copies and banks */
    need(nd, k, back2[c], dep);
  if (tb[k] & 1) need(nd, k, r[0], dep);
  if (tb[k] & 8) need(nd, k, r[1], dep);
  for (int j = lo; j < k && k == r[2]; j++)
    if (tb[j] & 2) need(nd, k, j, dep);
  for (int j = lo; j < k && k == r[3]; j++)
    if (tb[j] & 4) need(nd, k, j, dep);
}

bool ct_cg_dep_tokens(cg_stage *st, const int *const off[3], const int *const idx[3], int64_t T, bool *oom) {
  const int *coff = off[1], *cidx = idx[1];
  int n = coff[T];
  node *nd = malloc(sizeof *nd * (size_t)(n ? n : 1));
  uint8_t *tb = malloc((size_t)(n ? n : 1));
  if (!nd || !tb) return free(nd), free(tb), *oom = true, false;
  for (int k = 0; k < n; k++) {
    node_of(&st->v[cidx[k]].in, &nd[k]);
    if (nd[k].cls < 0) return free(nd), free(tb), false;
  }
  int (*sdep)[N_CLS] = malloc(sizeof *sdep * (size_t)(n ? n : 1));
  if (!sdep) return free(nd), free(tb), *oom = true, false;
  for (int k = 0; k < n; k++)
    for (int c = 0; c < N_CLS; c++) sdep[k][c] = -1;
  if (T > 0) stream_tokens(st, off[0], idx[0], coff[0], coff[1], cidx, nd, sdep);
  dma_touch(st, off, idx, T, nd, tb);
  int sig[N_CLS][N_CLS]; /* sig[p][c]: the latest class-p instruction signalling class c */
  for (int p = 0; p < N_CLS; p++)
    for (int c = 0; c < N_CLS; c++) sig[p][c] = -1;
  int ldw0 = T > 0 ? find(tb, coff[0], coff[1], 1, false, coff[0]) : 0;
  for (int64_t t = 0; t < T; t++) {
    int lo = coff[t], hi = coff[t + 1], back2[N_CLS] = {-1, -1, -1}; /* tile t − 2's last instruction per class */
    for (int k = t >= 2 ? coff[t - 2] : 0; t >= 2 && k < coff[t - 1]; k++) back2[nd[k].cls] = k;
    /* roles: LD waiter, OUTFREE waiter, INFREE signaller, DONE signaller */
    int r[4] = {find(tb, lo, hi, 1, false, lo), find(tb, lo, hi, 8, false, lo), 0, find(tb, lo, hi, 4, true, hi - 1)};
    r[2] = find(tb, lo, hi, 2, true, r[0]);
    if (!(tb[r[3]] & 4)) /* no instruction writes what the tile stores: the last follows all */
      for (int k = lo; k < hi; k++) tb[k] |= 4;
    st->v[cidx[r[0]]].role |= CG_ROLE_LD, st->v[cidx[r[1]]].role |= CG_ROLE_OUTFREE;
    st->v[cidx[r[2]]].role |= CG_ROLE_INFREE, st->v[cidx[r[3]]].role |= CG_ROLE_DONE;
    for (int k = lo; k < hi; k++) {
      int dep[N_CLS], e = nd[k].cls;
      deps_of(nd, tb, k, lo, r, ldw0, back2, sig, sdep[k], dep);
      for (int c = 0; c < N_CLS; c++) {
        if (dep[c] < 0 || dep[c] <= sig[c][e]) continue;
        st->v[cidx[dep[c]]].in.signal |= 1u << pair_sem(c, e);
        st->v[cidx[k]].in.wait |= 1u << pair_sem(c, e);
        sig[c][e] = dep[c];
      }
    }
  }
  free(nd), free(tb), free(sdep);
  return true;
}
