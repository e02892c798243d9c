/* lg_overlap.c: how the compute of consecutive tiles overlaps on the MXU, the VPU and load
 * engine 0 when the schedule orders compute instructions by their data (cg_deps.c) and the
 * plan double-buffers the MIDs: a list simulation of the group's layers over a few tiles,
 * each layer one job on its engine (FIFO in program order), after the previous layer of its
 * tile, after the last reader of the buffer it overwrites in an earlier tile and after tile
 * t − 2 (cg_deps.c orders tiles with the same copies so; TPU-MLIR's LayerGroup time steps
 * model the same overlap per time step). */
#include <stdlib.h>

#include "compiler/backend/cg_sched.h"
#include "compiler/backend/lg_int.h"

enum { SIM_TILES = 4 };

bool ct_lg_dep_order(const ct_chip *c) {
  return c->sem_count >= CG_SEM_DEPS_END;
}

/* Engine of layer li's compute (its MOVEs run on load engine 0): the MXU's or the VPU's. */
static int engine_of(const lg_ctx *x, int li) {
  return x->layers[li].unit == CT_LG_UNIT_MXU ? 1 : 2;
}

/* The engines as the in-order dispatcher feeds them: a job enters its engine's queue after
 * the job before it in program order did, and once the job queue.depth places ahead of it on
 * the same engine has started (its queue has room); it starts after that, with its engine
 * free. */
typedef struct engines {
  int64_t free_at[3];   /* load engine 0 (MOVEs), MXU, VPU */
  int64_t dispatched;   /* when the last job entered its queue */
  int64_t *started[3];  /* start of every job so far, per engine */
  int n[3];
  int64_t depth;
} engines;

/* Start of a job ready at s on engine e; records it. */
static int64_t job_start(engines *g, int e, int64_t s) {
  if (g->n[e] >= g->depth && g->started[e][g->n[e] - g->depth] > g->dispatched)
    g->dispatched = g->started[e][g->n[e] - g->depth];
  if (g->dispatched > s) s = g->dispatched;
  if (g->free_at[e] > s) s = g->free_at[e];
  g->started[e][g->n[e]++] = s;
  return s;
}

/* End of a layer's two jobs from s: its MOVEs (mv cycles) on load engine 0, then the rest of
 * its lc cycles on engine e (a Concat places its inputs, then requantizes them). */
static int64_t run_jobs(engines *g, int64_t s, int64_t lc, int64_t mv, int e) {
  int64_t m = mv < lc ? mv : lc, rest = lc - m;
  if (m) s = job_start(g, 0, s) + m, g->free_at[0] = s;
  if (rest) s = job_start(g, e, s) + rest, g->free_at[e] = s;
  return s;
}

/* Layer (index in the group) of the last reader in the group of layer li's results, -1 none. */
static int last_reader(const lg_ctx *x, int first, int n, int li) {
  const ct_op *op = x->layers[li].op;
  int last = -1;
  for (int j = 0; j < op->n_out; j++) {
    const ct_value *y = op->out[j];
    if (!y) continue;
    for (int k = x->cons_off[y->id]; k < x->cons_off[y->id + 1]; k++)
      if (x->cons[k] >= first && x->cons[k] < first + n && x->cons[k] - first > last) last = x->cons[k] - first;
  }
  return last;
}

/* Does layer li's result stay in the group (a MID buffer)? */
static bool is_mid(const lg_ctx *x, int first, int n, int li) {
  const ct_op *op = x->layers[li].op;
  for (int j = 0; j < op->n_out; j++)
    if (op->out[j] && ct_lg_escapes(x, op->out[j], first, n)) return false;
  return true;
}

/* Earliest start of layer k of tile t: its producers in the tile done, and the last reader of
 * its result buffer in tile t − D done (D: the buffer's copies); its engines come after. */
static int64_t start_of(const lg_ctx *x, int first, int k, int64_t *const *end, int t, int lr, int D) {
  const ct_op *op = x->layers[first + k].op;
  int64_t s = 0;
  for (int i = 0; i < op->n_in; i++) {
    int p = op->in[i] ? x->prod[op->in[i]->id] : -1;
    if (p >= first && p < first + k && end[t][p - first] > s) s = end[t][p - first];
  }
  if (lr >= 0 && t >= D && end[t - D][lr] > s) s = end[t - D][lr];
  return s;
}

/* Tile 0's spans of the layers with io bit 1 (from the first one's start to the last one's
 * end) and bit 2 (from the first one's start to the tile's end) into span[0], span[1]. */
static void io_spans(const int64_t *end0, const int64_t *lc, const uint8_t *io, int n, int64_t tile_end, int64_t span[2]) {
  int64_t lo[2] = {-1, -1}, hi = 0;
  for (int k = 0; k < n; k++)
    for (int b = 0; b < 2; b++) {
      if (!(io[k] >> b & 1)) continue;
      if (lo[b] < 0 || end0[k] - lc[k] < lo[b]) lo[b] = end0[k] - lc[k];
      if (b == 0 && end0[k] > hi) hi = end0[k];
    }
  span[0] = lo[0] < 0 ? 0 : hi - lo[0];
  span[1] = lo[1] < 0 ? 0 : tile_end - lo[1];
}

bool ct_lg_overlap(const lg_ctx *x, int first, int n, const int64_t *lc, const int64_t *mv, const uint8_t *io, bool dbl_mid,
                   int64_t *latency, int64_t *period, int64_t span[2]) {
  int64_t *buf = malloc(sizeof *buf * (size_t)(4 * SIM_TILES * n + 3)), *end[SIM_TILES], tile_end[SIM_TILES] = {0};
  int *aux = malloc(sizeof *aux * (size_t)(3 * n + 1));
  if (!buf || !aux) {
    int64_t s = 0;
    for (int k = 0; k < n; k++) s += lc[k];
    *latency = *period = span[0] = span[1] = s;
    free(buf), free(aux);
    return false;
  }
  int *eng = aux, *lr = aux + n, *D = aux + 2 * n;
  for (int k = 0; k < n; k++) {
    eng[k] = engine_of(x, first + k), lr[k] = last_reader(x, first, n, first + k);
    D[k] = is_mid(x, first, n, first + k) && !dbl_mid ? 1 : 2;
  }
  engines g = {.depth = x->chip->queue_depth};
  for (int e = 0; e < 3; e++) g.started[e] = buf + SIM_TILES * n + e * (SIM_TILES * n + 1);
  for (int t = 0; t < SIM_TILES; t++) {
    end[t] = buf + t * n;
    for (int k = 0; k < n; k++) {
      /* the layers of one tile run one after the other: their buffers share banks (one class
       * per MID copy), which the cmodel grants one engine at a time */
      int64_t s = start_of(x, first, k, end, t, lr[k], D[k]);
      if (k > 0 && end[t][k - 1] > s) s = end[t][k - 1];
      if (t >= 2 && tile_end[t - 2] > s) s = tile_end[t - 2]; /* tile t − 2: the same copies, the same banks */
      end[t][k] = run_jobs(&g, s, lc[k], mv[k], eng[k]);
      if (end[t][k] > tile_end[t]) tile_end[t] = end[t][k];
    }
    if (t > 0 && tile_end[t] < tile_end[t - 1]) tile_end[t] = tile_end[t - 1];
  }
  *latency = tile_end[0];
  io_spans(end[0], lc, io, n, tile_end[0], span);
  *period = tile_end[SIM_TILES - 1] - tile_end[SIM_TILES - 2];
  if (*period > *latency) *period = *latency;
  free(buf), free(aux);
  return true;
}
