/* lg_search.c: the best tiling of one layer group: for every axis the group may slice, the
 * fewest slices that fit LMEM (binary search; sizes shrink as slices grow), then 2× and 4×
 * that many if the pipeline estimate prefers them (more overlap against more latency and
 * halo). Pipelined (double-buffered) when the chip has a bank per class, else serial. */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"

/* Evaluates (axis, nsecs, secs): pipelined if possible, else serial. */
static bool try_tiling(lg_ctx *x, int first, int n, int axis, int64_t nsecs, int64_t secs, ct_lg_group *gr,
                       int64_t *need) {
  if (axis >= 0) { /* no empty tiles: as many slices as the slice height needs */
    int64_t e = x->layers[first + n - 1].op->out[0]->shape[axis], h = (e + secs - 1) / secs;
    secs = (e + h - 1) / h;
  }
  lg_tiling tl = {axis, nsecs, secs, x->chip->lmem_banks >= CT_LG_CLS_MID1};
  int64_t nd = INT64_MAX;
  if (tl.pipelined && nsecs * secs >= 2 && ct_lg_eval_tiling(x, first, n, &tl, gr, false, &nd)) return true;
  if (nd < *need) *need = nd;
  tl.pipelined = false;
  if (ct_lg_eval_tiling(x, first, n, &tl, gr, false, &nd)) return true;
  if (nd < *need) *need = nd;
  return false;
}

typedef struct best {
  bool found;
  int axis;
  int64_t nsecs, secs, cycles;
} best;

static void consider(best *b, int axis, int64_t nsecs, int64_t secs, const ct_lg_group *gr) {
  if (!b->found || gr->cycles < b->cycles) b->found = true, b->axis = axis, b->nsecs = nsecs, b->secs = secs, b->cycles = gr->cycles;
}

static void search_axis(lg_ctx *x, int first, int n, int axis, int64_t nsecs, best *b, int64_t *need) {
  ct_lg_group gr;
  const ct_value *o = x->layers[first + n - 1].op->out[0];
  int64_t e = o->shape[axis];
  if (e < 2 || !try_tiling(x, first, n, axis, nsecs, e, &gr, need)) return;
  int64_t lo = 2, hi = e; /* hi fits */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (try_tiling(x, first, n, axis, nsecs, mid, &gr, need)) hi = mid;
    else lo = mid + 1;
  }
  for (int64_t s = hi, k = 0; s <= e && k < 3; s *= 2, k++)
    if (try_tiling(x, first, n, axis, nsecs, s, &gr, need)) consider(b, axis, nsecs, gr.secs, &gr);
}

static bool best_once(lg_ctx *x, int first, int n, ct_lg_group *gr, bool keep, int64_t *need) {
  const ct_lg_layer *l = &x->layers[first + n - 1];
  best b = {0};
  ct_lg_group tmp;
  if (try_tiling(x, first, n, -1, 1, 1, &tmp, need)) consider(&b, -1, 1, 1, &tmp);
  const ct_value *o = l->op->out[0];
  if (n > 1) {
    search_axis(x, first, n, 2, 1, &b, need);
    if (o->shape[0] > 1) search_axis(x, first, n, 0, 1, &b, need); /* not N and H at once: the codegen has one cut axis */
  } else {
    for (int i = 0; i < l->n_axes; i++) search_axis(x, first, n, l->axes[i], 1, &b, need);
  }
  if (!b.found) return false;
  int64_t nd;
  bool save = x->exact;
  x->exact = keep || save; /* the kept plan sizes every tile */
  lg_tiling tl = {b.axis, b.nsecs, b.secs, x->chip->lmem_banks >= CT_LG_CLS_MID1};
  bool ok = tl.pipelined && b.nsecs * b.secs >= 2 && ct_lg_eval_tiling(x, first, n, &tl, gr, keep, &nd) &&
            gr->cycles == b.cycles;
  if (!ok) {
    free(gr->bufs), gr->bufs = NULL;
    tl.pipelined = false;
    ok = ct_lg_eval_tiling(x, first, n, &tl, gr, keep, &nd);
  }
  x->exact = save;
  return ok;
}

bool ct_lg_best_tiling(lg_ctx *x, int first, int n, ct_lg_group *gr, bool keep, int64_t *need) {
  *need = INT64_MAX;
  const ct_lg_layer *l = &x->layers[first + n - 1];
  memset(gr, 0, sizeof *gr);
  if (n == 1 && l->trait == CT_LG_ALIAS) { /* a GMEM view: no tiles, no cycles */
    gr->first = first, gr->n_layers = 1, gr->axis = -1, gr->nsecs = gr->secs = 1;
    *need = 0;
    return true;
  }
  if (best_once(x, first, n, gr, keep, need)) return true;
  if (!keep || x->exact) return false;
  x->exact = true; /* a sampled size was optimistic: search again sizing every tile */
  bool ok = best_once(x, first, n, gr, keep, need);
  x->exact = false;
  return ok;
}
