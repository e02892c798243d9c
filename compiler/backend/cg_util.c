/* cg_util.c: helpers of the model codegen shared by the per-op emitters (cg_int.h):
 * operand addresses, instruction chaining, DMA boxes, tables and window geometry. */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/cg_int.h"

const char *ct_cg_nm(const ct_op *op) { return op->loc ? op->loc : ct_op_name(op->kind); }

int64_t ct_cg_gmem_of(const ct_lg_plan *p, const ct_value *v) {
  for (int k = 0; k < p->n_gmem; k++)
    if (p->gmem[k].value == v->id) return p->gmem[k].addr;
  return -1;
}

int64_t ct_cg_lmem_of(const ct_lg_group *gr, const ct_value *v) {
  for (int i = 0; i < gr->n_bufs; i++)
    if (gr->bufs[i].value == v->id && gr->bufs[i].copy == 0) return gr->bufs[i].addr;
  return -1;
}

/* Stages one instruction of the current group (cg_sched.h orders and emits it). */
ct_status ct_cg_put(mg *c, ct_insn *in, const char *layer, int64_t tile, ct_diag *d) {
  return ct_cg_stage_add(&c->stage, in, layer, tile, d);
}

/* Tile box of value v under the current ranges (x.rng). */
/* Rank > 4 cut on an axis the N fold cannot hold: [axis 0, axes 1 .. ax − 1, axis ax, the
 * rest] (a cut on axis 0: [axis 0, 1, 1, the rest]) — adjacent whole axes merged, so the
 * dense order of the tile is unchanged. */
static bool box_regroup(const ct_value *v, const lg_rng *r, box *b) {
  int ax = r->ax, nd = v->ndim;
  if (ax == 0 && r->nax < 0) {
    int64_t post = 1;
    for (int i = 1; i < nd; i++) post *= v->shape[i];
    int64_t full[4] = {v->shape[0], 1, 1, post};
    for (int i = 0; i < 4; i++) b->off[i] = 0, b->ext[i] = b->full[i] = full[i];
    b->off[0] = r->lo, b->ext[0] = r->hi - r->lo;
    return true;
  }
  if (ax < 1 || ax >= nd || (r->nax >= 0 && r->nax != 0)) return false;
  int64_t mid = 1, post = 1;
  for (int i = 1; i < ax; i++) mid *= v->shape[i];
  for (int i = ax + 1; i < nd; i++) post *= v->shape[i];
  int64_t full[4] = {v->shape[0], mid, v->shape[ax], post};
  for (int i = 0; i < 4; i++) b->off[i] = 0, b->ext[i] = b->full[i] = full[i];
  b->off[2] = r->lo, b->ext[2] = r->hi - r->lo;
  if (r->nax == 0) b->off[0] = r->nlo, b->ext[0] = r->nhi - r->nlo;
  return true;
}

bool ct_cg_box_of(const mg *c, const ct_value *v, box *b) {
  if (v->ndim < 0) return false;
  int pad = 4 - v->ndim, fold = v->ndim > 4 ? v->ndim - 4 : 0; /* rank > 4: leading axes folded into N */
  for (int i = 0; i < 4; i++) b->off[i] = 0, b->ext[i] = b->full[i] = i < pad ? 1 : v->shape[i - pad];
  for (int i = 0; i < fold; i++) b->ext[0] *= v->shape[i], b->full[0] = b->ext[0];
  const lg_rng *r = &c->x.rng[v->id];
  if (!r->set || ct_lg_is_weight(v)) return true; /* weights: resident whole (the planner's RES) */
  if (fold) { /* a cut on a folded axis: fine when the other folded axes are 1 */
    int cut = r->ax >= 0 && r->ax <= fold ? r->ax : -1;
    for (int i = 0; i <= fold; i++)
      if (v->shape[i] != 1 && ((cut >= 0 && i != cut) || (r->nax == 0 && i != 0))) return box_regroup(v, r, b);
    if (cut >= 0 && r->nax == 0 && cut != 0) return box_regroup(v, r, b);
    if (cut >= 0) b->off[0] = r->lo, b->ext[0] = r->hi - r->lo;
    if (r->nax == 0) b->off[0] = r->nlo, b->ext[0] = r->nhi - r->nlo;
    if (r->ax >= 0 && cut < 0) b->off[r->ax + pad] = r->lo, b->ext[r->ax + pad] = r->hi - r->lo;
    return true;
  }
  if (r->ax >= 0) b->off[r->ax + pad] = r->lo, b->ext[r->ax + pad] = r->hi - r->lo;
  if (r->nax == 0) b->off[pad] = r->nlo, b->ext[pad] = r->nhi - r->nlo;
  return true;
}

/* A LOAD (load = true) or STORE of box b between dense LMEM lm and the row-major tensor at gm. */
void ct_cg_dma_box(ct_insn *in, bool load, ct_dtype dt, int64_t lm, int64_t gm, const box *b) {
  int64_t gs[4], ls[4], eb = (int64_t)ct_dtype_size(dt), o = 0;
  gs[3] = 1, ls[3] = 1;
  for (int i = 2; i >= 0; i--) gs[i] = gs[i + 1] * b->full[i + 1], ls[i] = ls[i + 1] * b->ext[i + 1];
  for (int i = 0; i < 4; i++) o += b->off[i] * gs[i];
  memset(in, 0, sizeof *in);
  in->op = load ? CT_ISA_LOAD : CT_ISA_STORE;
  struct ct_insn_load *l = &in->load;
  if (load) {
    l->dst = lm, l->src = gm + o * eb, l->dtype = dt;
    l->n = b->ext[0], l->c = b->ext[1], l->h = b->ext[2], l->w = b->ext[3];
    l->src_sn = gs[0], l->src_sc = gs[1], l->src_sh = gs[2], l->src_sw = 1;
    l->dst_sn = ls[0], l->dst_sc = ls[1], l->dst_sh = ls[2], l->dst_sw = 1;
  } else {
    struct ct_insn_store *s = &in->store;
    s->src = lm, s->dst = gm + o * eb, s->dtype = dt;
    s->n = b->ext[0], s->c = b->ext[1], s->h = b->ext[2], s->w = b->ext[3];
    s->dst_sn = gs[0], s->dst_sc = gs[1], s->dst_sh = gs[2], s->dst_sw = 1;
    s->src_sn = ls[0], s->src_sc = ls[1], s->src_sh = ls[2], s->src_sw = 1;
  }
}

ct_isa_act ct_cg_act_of(ct_quant_act a) {
  return a == CT_QUANT_ACT_RELU ? CT_ISA_ACT_RELU : a == CT_QUANT_ACT_CLAMP ? CT_ISA_ACT_CLAMP : CT_ISA_ACT_NONE;
}

bool ct_cg_is_int(ct_dtype t) { return ct_tq_is_storage(t); }

ct_status ct_cg_no_cg(const ct_op *op, const char *why, ct_diag *d) {
  return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\" (%s): no codegen yet%s%s", ct_cg_nm(op), ct_op_name(op->kind),
                     why ? ": " : "", why ? why : "");
}

/* GMEM address of a border Cast's result (the program input): its own IO entry (lg_gmem.c),
 * apart from the float input's, which other layers may read. */
int64_t ct_cg_io_addr(const ct_lg_plan *p, const ct_op *cast) { return ct_cg_gmem_of(p, cast->out[0]); }

/* End of the LMEM the planner reserved for the current group: its buffers, tables and
 * scratch (lg_reserve.c); what the codegen places after the buffers must end there. */
static int64_t reserve_end(const mg *c) { return c->gr->lmem_bytes + c->gr->reserved_bytes; }

static int64_t al(int64_t v) { return (v + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN; }

ct_status ct_cg_add_table(mg *c, const ct_op *op, int li, const void *data, const lg_table *tab, ct_diag *d) {
  char name[256];
  snprintf(name, sizeof name, "%s#table", ct_cg_nm(op));
  int64_t lm = al(c->lm_extra), gm = al(c->gm_extra), bytes = tab->bytes;
  if (lm + bytes > c->p->chip.lmem_bytes)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: layer \"%s\": no LMEM left for its %lld-byte table (the group "
                       "uses %lld of %lld bytes)", c->gi, ct_cg_nm(op), (long long)bytes, (long long)c->lm_extra,
                       (long long)c->p->chip.lmem_bytes);
  if (lm + bytes > reserve_end(c)) /* ct_lg_group_table_bytes is this layout */
    return ct_diag_set(d, CT_ERR_INTERNAL, "group %d: layer \"%s\": its %lld-byte table ends at LMEM %lld, past the %lld "
                       "the planner reserved", c->gi, ct_cg_nm(op), (long long)bytes, (long long)(lm + bytes),
                       (long long)reserve_end(c));
  ct_status st = ct_program_add_const(c->prog, name, tab->dtype, (uint64_t)gm, data, (uint64_t)bytes, d);
  if (st) return st;
  c->lm_extra = lm + bytes, c->gm_extra = gm + bytes, c->lm_attr[li] = lm;
  return CT_OK;
}

ct_status ct_cg_scratch_take(mg *c, const ct_op *op, lg_scratch_kind kind, const ct_value *v, int64_t bytes, int64_t *addr,
                       ct_diag *d) {
  static const char *const what[] = {"Slice staging", "patch", "ConvTranspose plane", "row gather"};
  int64_t lm = al(c->lm_scratch), need = ct_lg_scratch_need(&c->x, c->gr->n_layers, c->li, kind, v);
  if (lm + bytes > c->p->chip.lmem_bytes)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: layer \"%s\": no LMEM left for its %lld-byte %s scratch", c->gi, ct_cg_nm(op),
                       (long long)bytes, what[kind]);
  if (bytes > need) /* the description (lg_reserve.c) and the codegen disagree */
    return ct_diag_set(d, CT_ERR_INTERNAL, "group %d: layer \"%s\": its %s scratch takes %lld bytes, the planner's "
                       "description %lld", c->gi, ct_cg_nm(op), what[kind], (long long)bytes, (long long)need);
  if (lm + bytes > reserve_end(c))
    return ct_diag_set(d, CT_ERR_INTERNAL, "group %d: layer \"%s\": %lld bytes of %s scratch end at LMEM %lld, past the "
                       "%lld the planner reserved", c->gi, ct_cg_nm(op), (long long)bytes, what[kind], (long long)(lm + bytes),
                       (long long)reserve_end(c));
  *addr = lm;
  c->lm_scratch = lm + bytes;
  return CT_OK;
}

/* Weight zero points must be 0 (CONV and MATMUL have none). */
ct_status ct_cg_need_sym(const ct_op *op, const ct_value *w, ct_diag *d) {
  for (int i = 0; i < w->n_scale; i++)
    if (w->zero_point[i])
      return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\" (%s): asymmetric weights (zero point %d) have no codegen", ct_cg_nm(op),
                         ct_op_name(op->kind), (int)w->zero_point[i]);
  return CT_OK;
}

/* Is v a weight slice loaded every tile (output-channel / feature cut) in the group? */
bool ct_cg_is_wslice(const mg *c, const ct_value *v) {
  for (int i = 0; i < c->gr->n_bufs; i++)
    if (c->gr->bufs[i].value == v->id && c->gr->bufs[i].kind == CT_LG_BUF_WSLICE) return true;
  return false;
}


/* Copies rows [ilo, ihi) of the tile box bx (held at *addr) to dense scratch LMEM after the
 * group's tables, for a window op whose input buffer holds more rows than it reads (the
 * hull of several readers); *addr becomes the scratch address. */
ct_status ct_cg_gather_rows(mg *c, const ct_op *op, const ct_value *x, const box *bx, int64_t ilo, int64_t ihi,
                             int64_t *addr, int64_t t, ct_diag *d) {
  int64_t eb = (int64_t)ct_dtype_size(x->dtype), rows = ihi - ilo, w = bx->ext[3], lm = 0;
  ct_status st = ct_cg_scratch_take(c, op, LG_SCRATCH_GATHER, x, bx->ext[0] * bx->ext[1] * rows * w * eb, &lm, d);
  if (st) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MOVE;
  struct ct_insn_move *mv = &in.move;
  mv->src = *addr + (ilo - bx->off[2]) * w * eb, mv->dst = lm, mv->dtype = x->dtype;
  mv->n = bx->ext[0], mv->c = bx->ext[1], mv->h = rows, mv->w = w;
  mv->src_sn = bx->ext[1] * bx->ext[2] * w, mv->src_sc = bx->ext[2] * w, mv->src_sh = w, mv->src_sw = 1;
  mv->dst_sn = bx->ext[1] * rows * w, mv->dst_sc = rows * w, mv->dst_sh = w, mv->dst_sw = 1;
  *addr = lm;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

ct_status ct_cg_fit_rows(mg *c, const ct_op *op, const ct_value *x, box *bx, const box *by, int64_t *addr, int64_t t,
                   ct_diag *d) {
  if (bx->full[2] != by->full[2] || (bx->off[2] == by->off[2] && bx->ext[2] == by->ext[2])) return CT_OK;
  if (bx->off[2] > by->off[2] || bx->off[2] + bx->ext[2] < by->off[2] + by->ext[2]) return CT_OK; /* not a cut of x */
  ct_status st = CT_OK;
  if (ct_lg_is_weight(x) && bx->ext[0] == 1 && bx->ext[1] == 1) /* a resident weight's contiguous rows: in place */
    *addr += (by->off[2] - bx->off[2]) * bx->ext[3] * (int64_t)ct_dtype_size(x->dtype);
  else
    st = ct_cg_gather_rows(c, op, x, bx, by->off[2], by->off[2] + by->ext[2], addr, t, d);
  bx->off[2] = by->off[2], bx->ext[2] = by->ext[2];
  return st;
}

ct_status ct_cg_window_of(mg *c, const ct_op *op, int li, const box *bx, const box *by, int64_t kh, int64_t kw,
                           win *w, int64_t *in_addr, int64_t t, ct_diag *d) {
  const ct_lg_layer *l = &c->p->layers[li];
  lg_win2 wn;
  ct_lg_window2(op, &wn);
  int64_t olo = by->off[2], ohi = olo + by->ext[2], ilo, ihi;
  w->kh = kh, w->kw = kw, w->sh = l->sh, w->sw = wn.s[1], w->dh = l->dh, w->dw = wn.d[1];
  ct_lg_halo_rows(olo, ohi, kh, l->sh, l->dh, l->pad_top, bx->full[2], &ilo, &ihi);
  if (ilo < bx->off[2] || ihi > bx->off[2] + bx->ext[2])
    return ct_diag_set(d, CT_ERR_INTERNAL, "layer \"%s\": needs input rows [%lld, %lld), the tile holds [%lld, %lld)", ct_cg_nm(op),
                       (long long)ilo, (long long)ihi, (long long)bx->off[2], (long long)(bx->off[2] + bx->ext[2]));
  int64_t end = bx->off[2] + bx->ext[2], pb = (ohi - 1) * l->sh - l->pad_top + (kh - 1) * l->dh + 1 - ihi;
  /* rows after the window, fewer than a stride past it: the window's floor drops them (a
   * stride-2 1×1 conv whose tile holds an even row count), so no gather */
  bool tail = ilo == bx->off[2] && end > ihi && end - ihi - pb < l->sh;
  if (tail) pb = pb > end - ihi ? pb - (end - ihi) : 0, ihi = end;
  if (ilo != bx->off[2] || ihi != end) {
    ct_status st0 = ct_cg_gather_rows(c, op, op->in[0], bx, ilo, ihi, in_addr, t, d);
    if (st0) return st0;
  }
  w->pt = ilo - (olo * l->sh - l->pad_top);
  /* the pads are the op's (clipped to the tile): a ceil_mode pool's last window reaching past
   * the end padding is not padding (POOL: not counted by count_pad, docs/isa.md) */
  int64_t pad_end = bx->full[2] + wn.p[2] - ihi;
  w->pb = pb < pad_end ? pb : pad_end > 0 ? pad_end : 0;
  w->pl = wn.p[1], w->pr = wn.p[3];
  w->ih = ihi - ilo, w->oh = ohi - olo;
  if (w->pt < 0 || w->pb < 0) return ct_cg_no_cg(op, "negative padding in a tile", d);
  return CT_OK;
}

