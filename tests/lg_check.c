/* lg_check.c: the independent plan checker (lg_check.h). It re-derives what it checks from
 * the graph and the chip, not from the planner's helpers: rows needed per tile by marking
 * every input row each output row's window touches, engine use per time step from the
 * double-buffering schedule, overlaps by brute force. */
#include "tests/lg_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) return snprintf(msg, n, __VA_ARGS__), false

static bool overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 < b1 && b0 < a1; }

/* Engines using buffer b in step s of a pipelined group of T tiles: bit 0 load, 1 compute,
 * 2 store. */
static unsigned engines(const ct_lg_buffer *b, int64_t s, int64_t T) {
  unsigned e = 0;
  bool comp = s >= 1 && s <= T;
  switch (b->kind) {
  case CT_LG_BUF_IN: case CT_LG_BUF_WSLICE:
    if (s < T && s % 2 == b->copy) e |= 1;
    if (comp && (s - 1) % 2 == b->copy) e |= 2;
    break;
  case CT_LG_BUF_RES: if (s == 0) e |= 1; if (comp) e |= 2; break;
  case CT_LG_BUF_MID: if (comp) e |= 2; break;
  case CT_LG_BUF_OUT:
    if (comp && (s - 1) % 2 == b->copy) e |= 2;
    if (s >= 2 && s <= T + 1 && (s - 2) % 2 == b->copy) e |= 4;
    break;
  }
  return e;
}

static bool check_banks(const ct_lg_plan *p, int gi, char *msg, size_t n) {
  const ct_lg_group *g = &p->groups[gi];
  int64_t bank = p->chip.lmem_bytes / p->chip.lmem_banks, T = g->n_tiles;
  for (int64_t s = 0; s < T + 2; s++) {
    if (s > 6 && s < T - 3) continue; /* the schedule repeats every 2 steps */
    for (int i = 0; i < g->n_bufs; i++)
      for (int j = i + 1; j < g->n_bufs; j++) {
        const ct_lg_buffer *a = &g->bufs[i], *b = &g->bufs[j];
        unsigned ea = engines(a, s, T), eb = engines(b, s, T);
        if (!ea || !eb || ea == eb) continue; /* one engine at a time needs no separation */
        if (overlap(a->addr / bank, (a->addr + a->bytes - 1) / bank + 1, b->addr / bank,
                    (b->addr + b->bytes - 1) / bank + 1))
          FAIL("group %d step %lld: buffers of values %d and %d are used by different engines and share a bank", gi,
               (long long)s, a->value, b->value);
      }
  }
  return true;
}

static bool check_lmem(const ct_lg_plan *p, int gi, char *msg, size_t n) {
  const ct_lg_group *g = &p->groups[gi];
  for (int i = 0; i < g->n_bufs; i++) {
    const ct_lg_buffer *a = &g->bufs[i];
    if (a->addr < 0 || a->bytes <= 0 || a->addr + a->bytes > p->chip.lmem_bytes)
      FAIL("group %d: buffer of value %d [%lld, +%lld) outside LMEM", gi, a->value, (long long)a->addr,
           (long long)a->bytes);
    if (a->addr % 64) FAIL("group %d: buffer of value %d at %lld not 64-byte aligned", gi, a->value, (long long)a->addr);
    for (int j = i + 1; j < g->n_bufs; j++) {
      const ct_lg_buffer *b = &g->bufs[j];
      if (overlap(a->live_lo, a->live_hi + 1, b->live_lo, b->live_hi + 1) &&
          overlap(a->addr, a->addr + a->bytes, b->addr, b->addr + b->bytes))
        FAIL("group %d: live buffers of values %d and %d overlap in LMEM", gi, a->value, b->value);
    }
  }
  return !g->pipelined || check_banks(p, gi, msg, n);
}

static bool is_window(const ct_op *op) {
  return (op->kind == CT_OP_CONV || op->kind == CT_OP_CONVTRANSPOSE || op->kind == CT_OP_MAXPOOL || op->kind == CT_OP_AVERAGEPOOL) &&
         op->in[0]->ndim == 4 && op->out[0]->ndim == 4;
}

/* Slice: input row of output row r along H (axis 2), by the ONNX rule start + r·step. */
static int64_t slice_row(const ct_op *op, int64_t r) {
  const ct_tensor *st = op->in[1]->data, *ax = op->n_in > 3 && op->in[3] ? op->in[3]->data : NULL;
  const ct_tensor *sp = op->n_in > 4 && op->in[4] ? op->in[4]->data : NULL;
  int64_t start = 0, step = 1, dim = op->in[0]->shape[2];
  for (int64_t i = 0; st && i < ct_tensor_numel(st); i++) {
    int64_t a = ax ? (int64_t)ct_tensor_get_f64(ax, i) : i;
    if (a == 2 || a == 2 - op->in[0]->ndim) {
      start = (int64_t)ct_tensor_get_f64(st, i), step = sp ? (int64_t)ct_tensor_get_f64(sp, i) : 1;
      if (start < 0) start += dim;
      if (start > dim) start = dim;
    }
  }
  return start + r * step;
}

/* Marks in need[in] the input rows of op's window for the output rows marked in need[out]. */
static void mark_inputs(const ct_op *op, unsigned char **need) {
  const ct_value *o = op->out[0];
  int k = 0;
  const int64_t *ks = ct_op_get_ints(op, "kernel_shape", &k), *st = ct_op_get_ints(op, "strides", &k);
  bool tr = op->kind == CT_OP_CONVTRANSPOSE;
  int64_t kh = ks ? ks[0] : (op->kind == CT_OP_CONV || tr ? op->in[1]->shape[2] : 1), sh = st ? st[0] : 1;
  const int64_t *dl = ct_op_get_ints(op, "dilations", &k), *pd = ct_op_get_ints(op, "pads", &k);
  int64_t dh = dl ? dl[0] : 1, ph = pd ? pd[0] : 0;
  for (int i = 0; i < op->n_in; i++) {
    const ct_value *v = op->in[i];
    if (!v || ct_value_is_const(v) || v->ndim != 4) continue;
    for (int64_t r = 0; r < o->shape[2]; r++) {
      if (!need[o->id][r]) continue;
      if (tr && i == 0) { /* every input row whose kernel reaches output row r */
        for (int64_t ir = 0; ir < v->shape[2]; ir++)
          for (int64_t j = 0; j < kh; j++)
            if (ir * sh - ph + j * dh == r) need[v->id][ir] = 1;
      } else if (op->kind == CT_OP_SLICE && i == 0) {
        int64_t ir = slice_row(op, r);
        if (ir >= 0 && ir < v->shape[2]) need[v->id][ir] = 1;
      } else if (is_window(op) && i == 0) {
        for (int64_t j = 0; j < kh; j++) {
          int64_t ir = r * sh - ph + j * dh;
          if (ir >= 0 && ir < v->shape[2]) need[v->id][ir] = 1;
        }
      } else {
        need[v->id][v->shape[2] == o->shape[2] ? r : 0] = 1;
      }
    }
  }
}

static int64_t bytes_of(const ct_lg_plan *p, const ct_value *v, int64_t rows) {
  return v->shape[0] * v->shape[1] * rows * v->shape[3] * ct_lg_elem_bytes(&p->opt, v);
}

static const ct_lg_buffer *buf_of(const ct_lg_group *g, int value) {
  for (int i = 0; i < g->n_bufs; i++)
    if (g->bufs[i].value == value) return &g->bufs[i];
  return NULL;
}

/* For H-tiled groups: every tile's rows of every value, by brute force, fit its buffer. */
static bool check_halos(const ct_lg_plan *p, int gi, char *msg, size_t n) {
  const ct_lg_group *g = &p->groups[gi];
  const ct_graph *gr = p->g;
  const ct_value *lo = p->layers[g->first + g->n_layers - 1].op->out[0];
  if (g->axis != 2 || g->nsecs != 1 || lo->ndim != 4) return true;
  unsigned char **need = calloc((size_t)gr->n_values, sizeof *need);
  bool ok = true;
  int64_t h = (lo->shape[2] + g->secs - 1) / g->secs;
  for (int64_t t = 0; t < g->secs && ok; t++) {
    for (int li = g->first; li < g->first + g->n_layers; li++) {
      const ct_op *op = p->layers[li].op;
      for (int i = 0; i < op->n_in + op->n_out; i++) {
        const ct_value *v = i < op->n_in ? op->in[i] : op->out[i - op->n_in];
        if (v && v->ndim == 4 && !need[v->id]) need[v->id] = calloc((size_t)v->shape[2], 1);
        else if (v && v->ndim == 4) memset(need[v->id], 0, (size_t)v->shape[2]);
      }
    }
    for (int64_t r = t * h; r < (t + 1) * h && r < lo->shape[2]; r++) need[lo->id][r] = 1;
    for (int li = g->first + g->n_layers - 1; li >= g->first; li--) mark_inputs(p->layers[li].op, need);
    for (int v = 0; v < gr->n_values && ok; v++) {
      if (!need[v] || ct_value_is_const(gr->values[v])) continue;
      int64_t a = -1, b = -1;
      for (int64_t r = 0; r < gr->values[v]->shape[2]; r++)
        if (need[v][r]) b = r, a = a < 0 ? r : a;
      const ct_lg_buffer *bf = buf_of(g, v);
      if (a < 0) continue;
      if (!bf) ok = false, snprintf(msg, n, "group %d: value %d has no LMEM buffer", gi, v);
      else if (bf->bytes < bytes_of(p, gr->values[v], b - a + 1))
        ok = false, snprintf(msg, n, "group %d tile %lld: value %d needs rows [%lld, %lld] (%lld bytes), buffer has %lld",
                             gi, (long long)t, v, (long long)a, (long long)b,
                             (long long)bytes_of(p, gr->values[v], b - a + 1), (long long)bf->bytes);
    }
  }
  for (int v = 0; v < gr->n_values; v++) free(need[v]);
  free(need);
  return ok;
}

static bool check_gmem(const ct_lg_plan *p, char *msg, size_t n) {
  if (p->gmem_bytes > p->chip.gmem_bytes) FAIL("GMEM %lld bytes > chip %lld", (long long)p->gmem_bytes, (long long)p->chip.gmem_bytes);
  for (int i = 0; i < p->n_gmem; i++) {
    const ct_lg_gmem *a = &p->gmem[i];
    if (a->addr < 0 || a->addr + a->bytes > p->gmem_bytes) FAIL("value %d outside GMEM", a->value);
    if (a->alias_of >= 0) continue;
    for (int j = i + 1; j < p->n_gmem; j++) {
      const ct_lg_gmem *b = &p->gmem[j];
      if (b->alias_of >= 0 || !overlap(a->addr, a->addr + a->bytes, b->addr, b->addr + b->bytes)) continue;
      bool both_act = a->region == CT_LG_GM_ACT && b->region == CT_LG_GM_ACT;
      if (!both_act || overlap(a->live_lo, a->live_hi + 1, b->live_lo, b->live_hi + 1))
        FAIL("GMEM bytes of values %d and %d overlap while both are live", a->value, b->value);
    }
  }
  /* every value a group reads from outside has GMEM bytes, live during the group */
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_lg_group *g = &p->groups[gi];
    for (int li = g->first; li < g->first + g->n_layers; li++) {
      const ct_op *op = p->layers[li].op;
      /* a layer on no unit that is no view is a border Cast: its result is the program input */
      if (p->layers[li].unit == CT_LG_UNIT_NONE && p->layers[li].trait != CT_LG_ALIAS) continue;
      for (int i = 0; i < op->n_in; i++) {
        const ct_value *v = op->in[i];
        if (!v) continue;
        int pl = -1;
        for (int k = g->first; k < g->first + g->n_layers; k++)
          for (int j = 0; j < p->layers[k].op->n_out; j++)
            if (p->layers[k].op->out[j] == v) pl = k;
        if (pl >= 0) continue;
        int e = -1;
        for (int k = 0; k < p->n_gmem; k++)
          if (p->gmem[k].value == v->id) e = k;
        if (e < 0) FAIL("group %d reads value \"%s\" which has no GMEM bytes", gi, v->name);
        const ct_lg_gmem *m = &p->gmem[e];
        while (m->alias_of >= 0) {
          int r = -1;
          for (int k = 0; k < p->n_gmem; k++)
            if (p->gmem[k].value == m->alias_of) r = k;
          if (r < 0) FAIL("alias of value %d has no root", m->value);
          m = &p->gmem[r];
        }
        if (m->region == CT_LG_GM_ACT && (gi < m->live_lo || gi > m->live_hi))
          FAIL("group %d reads value \"%s\" outside its GMEM lifetime [%d, %d]", gi, v->name, m->live_lo, m->live_hi);
      }
    }
  }
  return true;
}

bool lg_check_plan(const ct_lg_plan *p, char *msg, size_t n) {
  int next = 0;
  int64_t total = 0, peak = 0;
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_lg_group *g = &p->groups[gi];
    if (g->first != next || g->n_layers < 1) FAIL("group %d does not continue the partition at layer %d", gi, next);
    next += g->n_layers;
    bool view = g->n_tiles == 0 && g->n_bufs == 0 && g->cycles == 0; /* GMEM views */
    if (g->n_tiles != g->nsecs * g->secs && !view) FAIL("group %d: tiles %lld != %lld x %lld", gi, (long long)g->n_tiles,
                                                (long long)g->nsecs, (long long)g->secs);
    if (g->pipelined && p->chip.lmem_banks < CT_LG_CLS_MID1) FAIL("group %d pipelined with %lld banks", gi, (long long)p->chip.lmem_banks);
    if (g->cycles < g->compute_cycles || g->cycles > g->compute_cycles + g->load_cycles + g->store_cycles)
      FAIL("group %d: %lld cycles outside [compute %lld, serial %lld]", gi, (long long)g->cycles,
           (long long)g->compute_cycles, (long long)(g->compute_cycles + g->load_cycles + g->store_cycles));
    if (g->lmem_bytes > p->chip.lmem_bytes) FAIL("group %d: LMEM %lld > chip", gi, (long long)g->lmem_bytes);
    if (!check_lmem(p, gi, msg, n) || !check_halos(p, gi, msg, n)) return false;
    total += g->cycles;
    if (g->lmem_bytes > peak) peak = g->lmem_bytes;
  }
  if (next != p->n_layers) FAIL("groups cover %d of %d layers", next, p->n_layers);
  if (total != p->total_cycles || peak != p->lmem_peak) FAIL("totals do not add up");
  return check_gmem(p, msg, n);
}
