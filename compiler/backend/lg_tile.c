/* lg_tile.c: tiles of a layer group — the slice of the last layer's output each tile
 * computes, the ranges of every value it needs (halos propagated backwards through windows,
 * as TPU-MLIR's LayerGroup backward slice inference) and the stored part of escaping values. */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"
#include "ops/tpu_util.h"

static int64_t cdiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

void ct_lg_halo_rows(int64_t olo, int64_t ohi, int64_t kh, int64_t sh, int64_t dh, int64_t pad_top, int64_t in_h,
                     int64_t *lo, int64_t *hi) {
  int64_t l = olo * sh - pad_top, h = (ohi - 1) * sh - pad_top + (kh - 1) * dh + 1;
  if (l < 0) l = 0;
  if (h > in_h) h = in_h;
  if (h < l) h = l;
  *lo = l, *hi = h;
}

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

void ct_lg_transposed_rows(int64_t olo, int64_t ohi, int64_t kh, int64_t sh, int64_t dh, int64_t pad_top,
                           int64_t in_h, int64_t *lo, int64_t *hi) {
  /* output row o = i·sh − pad_top + j·dh (j < kh): i from ceil((olo + pad − (kh−1)·dh) / sh)
   * to floor((ohi − 1 + pad) / sh) */
  int64_t l = -floor_div(-(olo + pad_top - (kh - 1) * dh), sh), h = floor_div(ohi - 1 + pad_top, sh) + 1;
  if (l < 0) l = 0;
  if (h > in_h) h = in_h;
  if (h < l) h = l;
  *lo = l, *hi = h;
}

static void set_whole(lg_rng *r) { r->ax = -1, r->nax = -1, r->lo = r->hi = r->nlo = r->nhi = r->st_lo = 0; }

/* Unions range `in` into value v's range. */
static void merge(lg_ctx *x, const ct_value *v, const lg_rng *in) {
  lg_rng *r = &x->rng[v->id];
  if (x->mark[v->id] != x->stamp) {
    *r = *in;
    r->set = true, r->st_lo = r->lo;
    x->mark[v->id] = x->stamp;
    return;
  }
  if (r->ax != in->ax) r->ax = -1;
  else if (r->ax >= 0) r->lo = in->lo < r->lo ? in->lo : r->lo, r->hi = in->hi > r->hi ? in->hi : r->hi;
  if (r->nax != in->nax) r->nax = -1;
  else if (r->nax >= 0) r->nlo = in->nlo < r->nlo ? in->nlo : r->nlo, r->nhi = in->nhi > r->nhi ? in->nhi : r->nhi;
  r->st_lo = r->lo;
}

/* Input axis matching output axis a of op (right-aligned; Transpose through perm), -1 none. */
static int input_axis(const ct_op *op, const ct_value *in, int a) {
  int nd = op->out[0]->ndim;
  if (op->kind == CT_OP_TRANSPOSE) {
    int n = 0;
    int64_t perm[CT_ATTR_LIST_MAX];
    return ct_attr_transpose_perm_n(op, perm, &n) && n == nd ? (int)perm[a] : nd - 1 - a;
  }
  int ia = a - (nd - in->ndim);
  return ia >= 0 && ia < in->ndim ? ia : -1;
}

void ct_lg_input_range(const ct_lg_layer *l, const ct_value *in, const lg_rng *r, int gaxis, int n, lg_rng *o) {
  const ct_value *out = l->op->out[0];
  set_whole(o);
  if (r->ax >= 0 && !(n == 1 && gaxis == l->wsplit_axis && gaxis >= 0)) {
    int64_t s0, st;
    ct_tpu_lin lin;
    if (l->op->kind == CT_OP_SLICE && in == l->op->in[0] && ct_lg_slice_axis(l->op, r->ax, &s0, &st)) {
      o->ax = r->ax; /* rows start + lo·step .. start + (hi − 1)·step: a window of 1 */
      ct_lg_halo_rows(r->lo, r->hi, 1, st, 1, -s0, in->shape[r->ax], &o->lo, &o->hi);
    } else if (l->op->kind == CT_OP_RESIZE && r->ax == 2 && in == l->op->in[0] && ct_tpu_resize_lin(l->op, &lin)) {
      o->ax = 2; /* linear Resize: the taps of the first and last output row */
      ct_tpu_resize_rows(l->op, &lin, r->lo, r->hi, &o->lo, &o->hi);
    } else if (l->op->kind == CT_OP_CONVTRANSPOSE && r->ax == 2 && in->ndim == 4) {
      o->ax = 2;
      ct_lg_transposed_rows(r->lo, r->hi, l->kh, l->sh, l->dh, l->pad_top, in->shape[2], &o->lo, &o->hi);
    } else if (l->trait == CT_LG_WINDOW && r->ax == 2 && in->ndim == 4) {
      o->ax = 2;
      ct_lg_halo_rows(r->lo, r->hi, l->kh, l->sh, l->dh, l->pad_top, in->shape[2], &o->lo, &o->hi);
    } else {
      int ia = input_axis(l->op, in, r->ax);
      if (ia >= 0 && in->shape[ia] == out->shape[r->ax]) o->ax = ia, o->lo = r->lo, o->hi = r->hi;
    }
  }
  if (r->nax == 0 && in->ndim == out->ndim && in->shape[0] == out->shape[0] && !(n == 1 && l->wsplit_axis == 0))
    o->nax = 0, o->nlo = r->nlo, o->nhi = r->nhi;
}

/* One backward pass for tile t; ext: extend escaping values to store every row once. */
static void ranges_pass(lg_ctx *x, int first, int n, const lg_tiling *tl, int64_t t, bool ext) {
  x->stamp++;
  int last = first + n - 1;
  const ct_op *lop = x->layers[last].op;
  const ct_value *o0 = lop->out[0];
  int64_t ai = t % tl->secs, ni = t / tl->secs;
  lg_rng tr;
  set_whole(&tr);
  if (tl->axis >= 0) {
    int64_t e = o0->shape[tl->axis], h = cdiv(e, tl->secs);
    tr.ax = tl->axis, tr.lo = ai * h < e ? ai * h : e, tr.hi = (ai + 1) * h < e ? (ai + 1) * h : e;
  }
  if (tl->nsecs > 1 && o0->ndim >= 1) {
    int64_t e = o0->shape[0], h = cdiv(e, tl->nsecs);
    tr.nax = 0, tr.nlo = ni * h < e ? ni * h : e, tr.nhi = (ni + 1) * h < e ? (ni + 1) * h : e;
  }
  for (int j = 0; j < lop->n_out; j++) {
    lg_rng r = tr;
    if (r.ax >= 0 && (lop->out[j]->ndim != o0->ndim || lop->out[j]->shape[r.ax] != o0->shape[r.ax])) r.ax = -1;
    merge(x, lop->out[j], &r);
  }
  for (int li = last; li >= first; li--) {
    const ct_lg_layer *l = &x->layers[li];
    for (int j = 0; j < l->op->n_out && li != last; j++) {
      const ct_value *v = l->op->out[j];
      lg_rng *r = &x->rng[v->id];
      if (x->mark[v->id] != x->stamp) { /* unused output: computed whole along the axis */
        lg_rng w;
        set_whole(&w);
        if (tr.ax >= 0 && v->ndim == o0->ndim) w.ax = tr.ax, w.lo = 0, w.hi = v->shape[tr.ax];
        merge(x, v, &w);
      }
      if (ext && r->ax >= 0 && ct_lg_escapes(x, v, first, n)) {
        int64_t prev = ai == 0 ? 0 : x->prevhi[v->id];
        if (prev < r->lo) r->lo = prev;
        if (ai == tl->secs - 1) r->hi = v->shape[r->ax];
        r->st_lo = prev;
      }
    }
    const lg_rng *r = &x->rng[l->op->out[0]->id];
    for (int i = 0; i < l->op->n_in; i++) {
      const ct_value *in = l->op->in[i];
      if (!in) continue;
      lg_rng o;
      ct_lg_input_range(l, in, r, tl->axis, n, &o);
      merge(x, in, &o);
    }
  }
}

void ct_lg_tile_ranges(lg_ctx *x, int first, int n, const lg_tiling *tl, int64_t t) {
  int last = first + n - 1;
  bool esc = false; /* only escaping values of inner layers need the previous tile */
  for (int li = first; li < last && !esc; li++)
    for (int j = 0; j < x->layers[li].op->n_out && !esc; j++) esc = ct_lg_escapes(x, x->layers[li].op->out[j], first, n);
  if (t % tl->secs > 0 && n > 1 && esc) {
    ranges_pass(x, first, n, tl, t - 1, false);
    for (int li = first; li < last; li++)
      for (int j = 0; j < x->layers[li].op->n_out; j++) {
        const ct_value *v = x->layers[li].op->out[j];
        x->prevhi[v->id] = x->rng[v->id].hi;
      }
  }
  ranges_pass(x, first, n, tl, t, true);
}

/* Extents of v's tile under range r into ext[]; returns elements. */
int64_t ct_lg_tile_extents(const ct_value *v, const lg_rng *r, int64_t *ext) {
  int64_t n = 1;
  for (int d = 0; d < v->ndim; d++) {
    ext[d] = v->shape[d];
    if (d == r->ax) ext[d] = r->hi - r->lo;
    if (d == r->nax && r->nax >= 0) ext[d] = r->nhi - r->nlo;
    n *= ext[d];
  }
  return n;
}
