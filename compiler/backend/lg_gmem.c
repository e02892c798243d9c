/* lg_gmem.c: GMEM allocation of a plan — a weight region (every constant a layer reads), an
 * IO region (module inputs and outputs), and an activation region for the values that cross
 * group boundaries, reused by liveness over the group order (first fit by decreasing size,
 * as for LMEM). Views (Reshape, Flatten, ...) share their input's bytes. */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"

static int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

typedef struct gm_state {
  int *entry;       /* value id → gmem entry + 1 */
  int *group_of;    /* layer → group */
} gm_state;

static ct_lg_gmem *add_entry(ct_lg_plan *p, gm_state *s, const ct_value *v, ct_lg_region r, int64_t eb) {
  if (s->entry[v->id]) return &p->gmem[s->entry[v->id] - 1];
  ct_lg_gmem *e = &p->gmem[p->n_gmem++];
  e->value = v->id, e->region = r, e->alias_of = -1, e->live_lo = e->live_hi = -1, e->addr = -1;
  e->bytes = ct_lg_numel(v) * eb;
  s->entry[v->id] = p->n_gmem;
  return e;
}

static void extend(ct_lg_gmem *e, int lo, int hi) {
  if (e->live_lo < 0 || lo < e->live_lo) e->live_lo = lo;
  if (hi > e->live_hi) e->live_hi = hi;
}

/* Entries for every value a group reads from or writes to GMEM, with lifetimes. */
static void collect(lg_ctx *x, ct_lg_plan *p, gm_state *s) {
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_lg_group *gr = &p->groups[gi];
    for (int li = gr->first; li < gr->first + gr->n_layers; li++) {
      const ct_op *op = x->layers[li].op;
      bool alias = x->layers[li].trait == CT_LG_ALIAS;
      if (ct_lg_border_cast(x->g, op)) { /* its result is a program input of its own (the float input may have other readers) */
        extend(add_entry(p, s, op->out[0], CT_LG_GM_IO, ct_lg_elem_bytes(x->opt, op->out[0])), gi, gi);
        continue;
      }
      for (int i = 0; i < op->n_in; i++) {
        const ct_value *v = op->in[i];
        if (!v) continue;
        int pl = x->prod[v->id];
        if (pl >= gr->first && pl < gr->first + gr->n_layers && !ct_lg_border_cast(x->g, x->layers[pl].op)) continue; /* in LMEM */
        ct_lg_region r = ct_lg_is_weight(v) ? CT_LG_GM_WEIGHT : pl < 0 ? CT_LG_GM_IO : CT_LG_GM_ACT;
        ct_lg_gmem *e = add_entry(p, s, v, r, ct_lg_elem_bytes(x->opt, v));
        extend(e, gi, gi);
        while (e->alias_of >= 0) { /* a view read later keeps its root alive */
          e = &p->gmem[s->entry[e->alias_of] - 1];
          extend(e, gi, gi);
        }
      }
      for (int j = 0; j < op->n_out; j++) {
        const ct_value *v = op->out[j];
        if (!ct_lg_escapes(x, v, gr->first, gr->n_layers)) continue;
        /* a border Cast's result is a program input (ct_lg_border_cast): written before the
         * program starts, so it lives in the IO region, never reused */
        ct_lg_region r = x->model_out[v->id] || ct_lg_border_cast(x->g, op) ? CT_LG_GM_IO : CT_LG_GM_ACT;
        ct_lg_gmem *e = add_entry(p, s, v, r, ct_lg_elem_bytes(x->opt, v));
        extend(e, gi, x->model_out[v->id] ? p->n_groups : gi);
        if (alias && op->in[0] && s->entry[op->in[0]->id]) {
          ct_lg_gmem *root = &p->gmem[s->entry[op->in[0]->id] - 1];
          while (root->alias_of >= 0) root = &p->gmem[s->entry[root->alias_of] - 1];
          e->alias_of = root->value;
          if (x->model_out[v->id]) extend(root, root->live_lo, p->n_groups);
        }
      }
    }
  }
}

/* Places one region's own entries (aliases later) from base; returns its size. */
static int64_t place_region(ct_lg_plan *p, ct_lg_region r, int64_t base, bool reuse) {
  int n = 0;
  for (int i = 0; i < p->n_gmem; i++) n += p->gmem[i].region == r && p->gmem[i].alias_of < 0;
  ct_lg_buffer *b = calloc((size_t)n + 1, sizeof *b);
  int *map = malloc(sizeof *map * ((size_t)n + 1));
  if (!b || !map) return free(b), free(map), -1;
  int k = 0;
  for (int i = 0; i < p->n_gmem; i++) {
    const ct_lg_gmem *e = &p->gmem[i];
    if (e->region != r || e->alias_of >= 0) continue;
    b[k].bytes = e->bytes > 0 ? e->bytes : 1;
    b[k].live_lo = reuse ? e->live_lo : 0, b[k].live_hi = reuse ? e->live_hi : 0;
    map[k++] = i;
  }
  int64_t end = ct_lg_first_fit(b, n);
  for (int i = 0; i < n && end >= 0; i++) p->gmem[map[i]].addr = base + b[i].addr;
  free(b), free(map);
  return end < 0 ? -1 : align_up(end, LG_ALIGN);
}

ct_status ct_lg_alloc_gmem(lg_ctx *x, ct_lg_plan *p, ct_diag *d) {
  gm_state s = {calloc((size_t)x->g->n_values + 1, sizeof(int)), NULL};
  int cap = 0;
  for (int li = 0; li < x->n_layers; li++) cap += x->layers[li].op->n_in + x->layers[li].op->n_out;
  cap += x->g->n_outputs;
  p->gmem = calloc((size_t)cap + 1, sizeof *p->gmem);
  if (!s.entry || !p->gmem) return free(s.entry), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  collect(x, p, &s);
  for (int k = 0; k < x->g->n_outputs; k++) { /* a module input passed through as an output */
    const ct_value *v = x->g->outputs[k];
    if (v->def && v->def->kind == CT_OP_INPUT)
      extend(add_entry(p, &s, v, CT_LG_GM_IO, ct_lg_elem_bytes(x->opt, v)), 0, p->n_groups);
  }
  int64_t base = 0;
  static const ct_lg_region order[3] = {CT_LG_GM_WEIGHT, CT_LG_GM_IO, CT_LG_GM_ACT};
  for (int k = 0; k < 3; k++) {
    int64_t sz = place_region(p, order[k], base, order[k] == CT_LG_GM_ACT);
    if (sz < 0) return free(s.entry), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    p->region_base[order[k]] = base, p->region_bytes[order[k]] = sz;
    base += sz;
  }
  for (int i = 0; i < p->n_gmem; i++) { /* views take their root's address */
    ct_lg_gmem *e = &p->gmem[i];
    if (e->alias_of >= 0) e->addr = p->gmem[s.entry[e->alias_of] - 1].addr;
  }
  free(s.entry);
  p->gmem_bytes = base;
  if (base > x->chip->gmem_bytes)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: the plan needs %lld bytes of GMEM, the chip has %lld", x->g->name,
                       (long long)base, (long long)x->chip->gmem_bytes);
  return CT_OK;
}
