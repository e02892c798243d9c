/* cg_model.c: ISA instructions for a whole planned INT8 Tpu module (codegen.h,
 * ct_cg_model): every group's tiles load their inputs, run their layers (CONV, DWCONV,
 * ELTWISE, LUT, POOL, REQUANT, CAST, MATMUL) with the plan's LMEM buffers and store their
 * outputs at the plan's GMEM addresses. The instructions run strictly in program order: at
 * every engine change the previous instruction signals semaphore e (the next engine's index),
 * which the next waits for (the overlapped pipeline is ct_cg_conv_group's). */
#include "compiler/backend/codegen.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"
#include "ops/tpu_util.h"


typedef struct box {
  int64_t off[4], ext[4], full[4]; /* canonical NCHW: leading dims padded with 1 */
} box;

typedef struct mg {
  const ct_lg_plan *p;
  ct_program *prog;
  lg_ctx x;
  const ct_lg_group *gr;
  int gi;
  ct_engine last_eng;
  bool have_last;
  int64_t lm_extra, gm_extra;  /* next free LMEM byte of the group, next free GMEM byte */
  int64_t lm_scratch;          /* next free scratch byte of the current layer (≥ lm_extra) */
  int64_t *lm_attr;            /* layer index → LMEM address of its requant / LUT table */
  uint8_t *seen;               /* value id → already loaded in this tile */
} mg;

static const char *nm(const ct_op *op) { return op->loc ? op->loc : ct_op_name(op->kind); }

static int64_t gmem_of(const ct_lg_plan *p, const ct_value *v) {
  for (int k = 0; k < p->n_gmem; k++)
    if (p->gmem[k].value == v->id) return p->gmem[k].addr;
  return -1;
}

static int64_t lmem_of(const ct_lg_group *gr, const ct_value *v) {
  for (int i = 0; i < gr->n_bufs; i++)
    if (gr->bufs[i].value == v->id && gr->bufs[i].copy == 0) return gr->bufs[i].addr;
  return -1;
}

/* Appends one instruction, chained after the previous one when the engine changes. */
static ct_status put(mg *c, ct_insn *in, const char *layer, int64_t tile, ct_diag *d) {
  ct_engine e = ct_isa_op_engine(in->op);
  if (c->have_last && e != c->last_eng && e != CT_ENG_CTRL) { /* token for engine e's queue head */
    c->prog->insns[c->prog->n_insns - 1].signal |= 1u << e;
    in->wait |= 1u << e;
  }
  uint32_t id;
  ct_status st = ct_program_add_debug(c->prog, layer, c->gi, (int32_t)tile, (int32_t)tile, &id, d);
  if (st) return st;
  in->debug_id = id;
  c->last_eng = e, c->have_last = true;
  return ct_program_add_insn(c->prog, in, d);
}

/* Tile box of value v under the current ranges (x.rng). */
static bool box_of(const mg *c, const ct_value *v, box *b) {
  if (v->ndim < 1 || v->ndim > 4) return false;
  int pad = 4 - v->ndim;
  for (int i = 0; i < 4; i++) b->off[i] = 0, b->ext[i] = b->full[i] = i < pad ? 1 : v->shape[i - pad];
  const lg_rng *r = &c->x.rng[v->id];
  if (!r->set) return true;
  if (r->ax >= 0) b->off[r->ax + pad] = r->lo, b->ext[r->ax + pad] = r->hi - r->lo;
  if (r->nax == 0) b->off[pad] = r->nlo, b->ext[pad] = r->nhi - r->nlo;
  return true;
}

/* A LOAD (load = true) or STORE of box b between dense LMEM lm and the row-major tensor at gm. */
static void dma_box(ct_insn *in, bool load, ct_dtype dt, int64_t lm, int64_t gm, const box *b) {
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

static ct_isa_act act_of(ct_quant_act a) {
  return a == CT_QUANT_ACT_RELU ? CT_ISA_ACT_RELU : a == CT_QUANT_ACT_CLAMP ? CT_ISA_ACT_CLAMP : CT_ISA_ACT_NONE;
}

static bool is_int(ct_dtype t) { return ct_tq_is_storage(t); }

/* Is layer li a border Cast (float module input → integer)? Its output is the program input. */
static bool border_cast(const ct_op *op) {
  return op->kind == CT_OP_CAST && op->in[0]->def && op->in[0]->def->kind == CT_OP_INPUT &&
         ct_dtype_is_float(op->in[0]->dtype) && is_int(op->out[0]->dtype);
}

static ct_status no_cg(const ct_op *op, const char *why, ct_diag *d) {
  return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\" (%s): no codegen yet%s%s", nm(op), ct_op_name(op->kind),
                     why ? ": " : "", why ? why : "");
}

/* GMEM address of a border Cast's integer result (the program input): its own, else the
 * float input's IO bytes (4 bytes per element, enough for the integer copy). */
static int64_t io_addr(const ct_lg_plan *p, const ct_op *cast) {
  int64_t a = gmem_of(p, cast->out[0]);
  return a >= 0 ? a : gmem_of(p, cast->in[0]);
}

/* Places a table (requant pairs or LUT bytes) after the group's buffers and in GMEM. */
static ct_status add_table(mg *c, const ct_op *op, int li, const void *data, int64_t bytes, ct_dtype dt, ct_diag *d) {
  char name[256];
  snprintf(name, sizeof name, "%s#table", nm(op));
  int64_t lm = (c->lm_extra + 63) / 64 * 64, gm = (c->gm_extra + 63) / 64 * 64;
  if (lm + bytes > c->p->chip.lmem_bytes)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: layer \"%s\": no LMEM left for its %lld-byte table (the group "
                       "uses %lld of %lld bytes)", c->gi, nm(op), (long long)bytes, (long long)c->lm_extra,
                       (long long)c->p->chip.lmem_bytes);
  ct_status st = ct_program_add_const(c->prog, name, dt, (uint64_t)gm, data, (uint64_t)bytes, d);
  if (st) return st;
  c->lm_extra = lm + bytes, c->gm_extra = gm + bytes, c->lm_attr[li] = lm;
  ct_insn in;
  box b = {{0, 0, 0, 0}, {1, 1, 1, bytes / (int64_t)ct_dtype_size(dt)}, {1, 1, 1, bytes / (int64_t)ct_dtype_size(dt)}};
  dma_box(&in, true, dt, lm, gm, &b);
  return put(c, &in, nm(op), -1, d);
}

/* The per-layer tables of the group: requant pairs of CONV/MATMUL, LUT bytes. */
static ct_status group_tables(mg *c, ct_diag *d) {
  ct_status st = CT_OK;
  for (int k = 0; k < c->gr->n_layers && !st; k++) {
    int li = c->gr->first + k;
    const ct_op *op = c->p->layers[li].op;
    if (!border_cast(op) && c->p->layers[li].trait != CT_LG_ALIAS && !is_int(op->out[0]->dtype))
      return no_cg(op, "float result (only INT8 Tpu ops have codegen)", d);
    if (op->kind == CT_OP_CONV || op->kind == CT_OP_GEMM || op->kind == CT_OP_MATMUL) {
      const ct_value *y = op->out[0];
      int64_t n = op->kind == CT_OP_CONV ? y->shape[1] : y->shape[y->ndim - 1];
      int32_t *t = malloc((size_t)n * 2 * sizeof *t), *m = malloc((size_t)n * sizeof *m);
      int *s = malloc((size_t)n * sizeof *s);
      if (!t || !m || !s) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
      if (!st) st = ct_tq_rq(op, n, m, s, d);
      for (int64_t i = 0; !st && i < n; i++) t[2 * i] = m[i], t[2 * i + 1] = s[i];
      if (!st) st = add_table(c, op, li, t, n * 8, CT_I32, d);
      free(t), free(m), free(s);
    } else if (op->kind == CT_OP_LUT) {
      int n = 0;
      const int64_t *tab = ct_op_get_ints(op, "table", &n);
      uint8_t b[256];
      if (n != 256) return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\" (Lut): needs a 256-entry table", nm(op));
      for (int i = 0; i < 256; i++) b[i] = (uint8_t)tab[i];
      st = add_table(c, op, li, b, 256, CT_U8, d);
    }
  }
  return st;
}

/* Weight zero points must be 0 (CONV and MATMUL have none). */
static ct_status need_sym(const ct_op *op, const ct_value *w, ct_diag *d) {
  for (int i = 0; i < w->n_scale; i++)
    if (w->zero_point[i])
      return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\" (%s): asymmetric weights (zero point %d) have no codegen", nm(op),
                         ct_op_name(op->kind), (int)w->zero_point[i]);
  return CT_OK;
}

/* Is v a weight slice loaded every tile (output-channel / feature cut) in the group? */
static bool is_wslice(const mg *c, const ct_value *v) {
  for (int i = 0; i < c->gr->n_bufs; i++)
    if (c->gr->bufs[i].value == v->id && c->gr->bufs[i].kind == CT_LG_BUF_WSLICE) return true;
  return false;
}


/* Window geometry of a CONV/DWCONV/POOL tile along H from the tile's rows. */
typedef struct win {
  int64_t kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, ih, oh;
} win;

/* Copies rows [ilo, ihi) of the tile box bx (held at *addr) to dense scratch LMEM after the
 * group's tables, for a window op whose input buffer holds more rows than it reads (the
 * hull of several readers); *addr becomes the scratch address. */
static ct_status gather_rows(mg *c, const ct_op *op, const ct_value *x, const box *bx, int64_t ilo, int64_t ihi,
                             int64_t *addr, int64_t t, ct_diag *d) {
  int64_t eb = (int64_t)ct_dtype_size(x->dtype), rows = ihi - ilo, w = bx->ext[3];
  int64_t lm = (c->lm_scratch + 63) / 64 * 64, bytes = bx->ext[0] * bx->ext[1] * rows * w * eb;
  if (lm + bytes > c->p->chip.lmem_bytes)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: layer \"%s\": no LMEM left for %lld bytes of input rows", c->gi, nm(op),
                       (long long)bytes);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MOVE;
  struct ct_insn_move *mv = &in.move;
  mv->src = *addr + (ilo - bx->off[2]) * w * eb, mv->dst = lm, mv->dtype = x->dtype;
  mv->n = bx->ext[0], mv->c = bx->ext[1], mv->h = rows, mv->w = w;
  mv->src_sn = bx->ext[1] * bx->ext[2] * w, mv->src_sc = bx->ext[2] * w, mv->src_sh = w, mv->src_sw = 1;
  mv->dst_sn = bx->ext[1] * rows * w, mv->dst_sc = rows * w, mv->dst_sh = w, mv->dst_sw = 1;
  *addr = lm;
  c->lm_scratch = lm + bytes;
  return put(c, &in, nm(op), t, d);
}

static ct_status window_of(mg *c, const ct_op *op, int li, const box *bx, const box *by, int64_t kh, int64_t kw,
                           win *w, int64_t *in_addr, int64_t t, ct_diag *d) {
  const ct_lg_layer *l = &c->p->layers[li];
  int n = 0;
  const int64_t *pads = ct_op_get_ints(op, "pads", &n), *st = ct_op_get_ints(op, "strides", &n);
  const int64_t *dl = ct_op_get_ints(op, "dilations", &n);
  int64_t olo = by->off[2], ohi = olo + by->ext[2], ilo, ihi;
  w->kh = kh, w->kw = kw, w->sh = l->sh, w->sw = st ? st[1] : 1, w->dh = l->dh, w->dw = dl ? dl[1] : 1;
  ct_lg_halo_rows(olo, ohi, kh, l->sh, l->dh, l->pad_top, bx->full[2], &ilo, &ihi);
  if (ilo < bx->off[2] || ihi > bx->off[2] + bx->ext[2])
    return ct_diag_set(d, CT_ERR_INTERNAL, "layer \"%s\": needs input rows [%lld, %lld), the tile holds [%lld, %lld)", nm(op),
                       (long long)ilo, (long long)ihi, (long long)bx->off[2], (long long)(bx->off[2] + bx->ext[2]));
  if (ilo != bx->off[2] || ihi != bx->off[2] + bx->ext[2]) {
    ct_status st0 = gather_rows(c, op, op->in[0], bx, ilo, ihi, in_addr, t, d);
    if (st0) return st0;
  }
  w->pt = ilo - (olo * l->sh - l->pad_top);
  w->pb = (ohi - 1) * l->sh - l->pad_top + (kh - 1) * l->dh + 1 - ihi;
  w->pl = pads ? pads[1] : 0, w->pr = pads ? pads[3] : 0;
  w->ih = ihi - ilo, w->oh = ohi - olo;
  if (w->pt < 0 || w->pb < 0) return no_cg(op, "negative padding in a tile", d);
  return CT_OK;
}

static ct_status emit_conv(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *wv = op->in[1], *y = op->out[0];
  const ct_value *bv = op->n_in > 2 ? op->in[2] : NULL;
  box bx, by;
  box_of(c, x, &bx), box_of(c, y, &by);
  int64_t G = ct_op_get_int(op, "group", 1);
  ct_status st = need_sym(op, wv, d);
  if (st) return st;
  if (x->ndim != 4 || (G != 1 && !(G == x->shape[1] && G == y->shape[1])))
    return no_cg(op, "only group 1 or depthwise NCHW convs", d);
  int64_t c0 = by.off[1];
  if (by.ext[1] != y->shape[1] && (G != 1 || bx.ext[1] != x->shape[1]))
    return no_cg(op, "an output-channel cut of a depthwise conv", d);
  win w;
  int64_t xa = lmem_of(c->gr, x);
  if (xa < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  if ((st = window_of(c, op, li, &bx, &by, wv->shape[2], wv->shape[3], &w, &xa, t, d))) return st;
  ct_quant_act a;
  int32_t hi;
  if ((st = ct_tq_act(op, &a, &hi, d))) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = G == 1 ? CT_ISA_CONV : CT_ISA_DWCONV;
  struct ct_insn_conv *cv = &in.conv;
  cv->in = xa, cv->out = lmem_of(c->gr, y), cv->wt = lmem_of(c->gr, wv), cv->rq = c->lm_attr[li] + 8 * c0;
  cv->bias = bv ? lmem_of(c->gr, bv) : 0, cv->has_bias = bv != NULL;
  if (bv && !is_wslice(c, bv)) cv->bias += 4 * c0; /* whole bias resident: index the slice */
  if (!is_wslice(c, wv)) cv->wt += c0 * wv->shape[1] * wv->shape[2] * wv->shape[3];
  cv->n = bx.ext[0], cv->ic = x->shape[1], cv->ih = w.ih, cv->iw = x->shape[3];
  cv->oc = by.ext[1], cv->oh = w.oh, cv->ow = y->shape[3];
  cv->kh = w.kh, cv->kw = w.kw, cv->stride_h = w.sh, cv->stride_w = w.sw;
  cv->pad_t = w.pt, cv->pad_b = w.pb, cv->pad_l = w.pl, cv->pad_r = w.pr, cv->dil_h = w.dh, cv->dil_w = w.dw;
  cv->groups = G, cv->dt_in = x->dtype, cv->dt_w = wv->dtype, cv->dt_out = y->dtype, cv->rq_mode = CT_ISA_RQ_CHANNEL;
  cv->act = act_of(a), cv->act_hi = a == CT_QUANT_ACT_CLAMP ? hi : 0;
  cv->zp_in = ct_tq_zp(x), cv->zp_out = ct_tq_zp(y);
  if (cv->in < 0 || cv->out < 0 || cv->wt < 0 || cv->bias < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  return put(c, &in, nm(op), t, d);
}

static ct_status emit_pool(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  box_of(c, x, &bx), box_of(c, y, &by);
  bool global = op->kind == CT_OP_GLOBALAVERAGEPOOL || op->kind == CT_OP_GLOBALMAXPOOL;
  bool avg = op->kind == CT_OP_GLOBALAVERAGEPOOL || op->kind == CT_OP_AVERAGEPOOL;
  if (x->ndim != 4) return no_cg(op, "pooling needs NCHW", d);
  win w = {.kh = x->shape[2], .kw = x->shape[3], .sh = 1, .sw = 1, .dh = 1, .dw = 1, .ih = bx.ext[2], .oh = 1};
  ct_status st = CT_OK;
  int64_t xa = lmem_of(c->gr, x);
  if (xa < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  if (!global) {
    int n = 0;
    const int64_t *k = ct_op_get_ints(op, "kernel_shape", &n);
    if (!k || n != 2) return no_cg(op, "needs a 2-D kernel_shape", d);
    if ((st = window_of(c, op, li, &bx, &by, k[0], k[1], &w, &xa, t, d))) return st;
    if (w.dh != 1 || w.dw != 1) return no_cg(op, "dilated pooling", d);
  } else if (bx.ext[2] != x->shape[2]) {
    return no_cg(op, "global pooling cut along H", d);
  }
  int32_t m = 1;
  int s = 0;
  if (avg && (st = ct_tq_rq(op, 1, &m, &s, d))) return st;
  if (m < -32768 || m > 32767) return no_cg(op, "pool multiplier does not fit 16 bits", d);
  if (!avg && ct_tq_zp(x) != ct_tq_zp(y)) return no_cg(op, "max pooling with different input and output zero points", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_POOL;
  struct ct_insn_pool *pl = &in.pool;
  pl->in = xa, pl->out = lmem_of(c->gr, y);
  pl->n = bx.ext[0], pl->c = bx.ext[1], pl->ih = w.ih, pl->iw = x->shape[3], pl->oh = w.oh, pl->ow = y->shape[3];
  pl->kh = w.kh, pl->kw = w.kw, pl->stride_h = w.sh, pl->stride_w = w.sw;
  pl->pad_t = w.pt, pl->pad_b = w.pb, pl->pad_l = w.pl, pl->pad_r = w.pr;
  pl->mode = avg ? CT_ISA_POOL_AVG : CT_ISA_POOL_MAX, pl->dt = x->dtype, pl->m = m, pl->s = s;
  pl->zp_in = ct_tq_zp(x), pl->zp_out = ct_tq_zp(y);
  if (x->dtype != y->dtype) return no_cg(op, "pooling that changes the storage type", d);
  if (pl->in < 0 || pl->out < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  return put(c, &in, nm(op), t, d);
}

static ct_status emit_eltwise(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *a = op->in[0], *b = op->in[1], *y = op->out[0];
  box ba, bb, by;
  if (!box_of(c, a, &ba) || !box_of(c, b, &bb) || !box_of(c, y, &by)) return no_cg(op, "rank above 4", d);
  int nm_ = 0, ns = 0;
  const int64_t *mv = ct_op_get_ints(op, "multiplier", &nm_), *sv = ct_op_get_ints(op, "rshift", &ns);
  if (nm_ != 2 || ns != 3) return no_cg(op, "needs multiplier [m_a, m_b] and rshift [s_a, s_b, s_out]", d);
  for (int i = 0; i < 2; i++)
    if (mv[i] < -32768 || mv[i] > 32767) return no_cg(op, "multiplier does not fit 16 bits", d);
  ct_quant_act act;
  int32_t hi;
  ct_status st = ct_tq_act(op, &act, &hi, d);
  if (st) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_ELTWISE;
  struct ct_insn_eltwise *e = &in.eltwise;
  e->a = lmem_of(c->gr, a), e->b = lmem_of(c->gr, b), e->out = lmem_of(c->gr, y);
  if (e->a < 0 || e->b < 0 || e->out < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  /* an operand tile holding more rows than the output (another reader's halo): gather them */
  box *bo[2] = {&ba, &bb};
  int64_t *ad[2] = {&e->a, &e->b};
  for (int k = 0; k < 2 && !st; k++) {
    box *q = bo[k];
    if (q->ext[2] > by.ext[2] && by.ext[2] != 1 && q->off[2] <= by.off[2] &&
        q->off[2] + q->ext[2] >= by.off[2] + by.ext[2]) {
      st = gather_rows(c, op, op->in[k], q, by.off[2], by.off[2] + by.ext[2], ad[k], t, d);
      q->off[2] = by.off[2], q->ext[2] = by.ext[2];
    }
  }
  if (st) return st;
  e->n = by.ext[0], e->c = by.ext[1], e->h = by.ext[2], e->w = by.ext[3];
  for (int i = 0; i < 4; i++) {
    if (ba.ext[i] != by.ext[i]) e->bcast_a |= ba.ext[i] == 1 ? 1 << i : 0x10;
    if (bb.ext[i] != by.ext[i]) e->bcast_b |= bb.ext[i] == 1 ? 1 << i : 0x10;
  }
  if (e->bcast_a > 15 || e->bcast_b > 15) return no_cg(op, "operand tiles that do not broadcast", d);
  e->op = op->kind == CT_OP_ADD ? CT_ISA_ELT_ADD : op->kind == CT_OP_SUB ? CT_ISA_ELT_SUB : CT_ISA_ELT_MUL;
  e->dt_a = a->dtype, e->dt_b = b->dtype, e->dt_out = y->dtype;
  e->m_a = mv[0], e->m_b = mv[1], e->s_a = sv[0], e->s_b = sv[1], e->s_out = sv[2];
  e->zp_a = ct_tq_zp(a), e->zp_b = ct_tq_zp(b), e->zp_out = ct_tq_zp(y);
  e->act = act_of(act), e->act_hi = act == CT_QUANT_ACT_CLAMP ? hi : 0;
  return put(c, &in, nm(op), t, d);
}

/* LUT, REQUANT (Requant, integer Cast) and CAST: one input, same tile shape. */
static ct_status emit_unary(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box by;
  if (!box_of(c, y, &by)) return no_cg(op, "rank above 4", d);
  int64_t lx = lmem_of(c->gr, x), ly = lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  if (op->kind == CT_OP_LUT) {
    in.op = CT_ISA_LUT;
    in.lut.in = lx, in.lut.out = ly, in.lut.table = c->lm_attr[li];
    in.lut.n = by.ext[0], in.lut.c = by.ext[1], in.lut.h = by.ext[2], in.lut.w = by.ext[3];
    in.lut.dt_in = x->dtype, in.lut.dt_out = y->dtype;
  } else if (is_int(x->dtype) && is_int(y->dtype)) {
    int32_t m;
    int s;
    ct_status st = ct_tq_rq(op, 1, &m, &s, d);
    if (st) return st;
    in.op = CT_ISA_REQUANT;
    struct ct_insn_requant *r = &in.requant;
    r->in = lx, r->out = ly, r->n = by.ext[0], r->c = by.ext[1], r->h = by.ext[2], r->w = by.ext[3];
    r->rq_mode = CT_ISA_RQ_TENSOR, r->m = m, r->s = s, r->zp_in = ct_tq_zp(x), r->zp_out = ct_tq_zp(y);
    r->dt_in = x->dtype, r->dt_out = y->dtype;
  } else {
    return no_cg(op, "float casts inside the model", d);
  }
  return put(c, &in, nm(op), t, d);
}

static ct_status emit_matmul(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *a = op->in[0], *b = op->in[1], *y = op->out[0];
  const ct_value *bias = op->kind == CT_OP_GEMM && op->n_in > 2 ? op->in[2] : NULL;
  box ba, by;
  if (!box_of(c, a, &ba) || !box_of(c, y, &by) || b->ndim != 2) return no_cg(op, "only A of rank <= 4 times a 2-D B", d);
  int64_t f0 = by.off[3], nf = by.ext[3];
  bool tb = op->kind == CT_OP_GEMM && ct_op_get_int(op, "transB", 0);
  if (nf != y->shape[y->ndim - 1] && !is_wslice(c, b) && !tb)
    return no_cg(op, "cut along output features of a resident [K, N] B", d);
  if (op->kind == CT_OP_GEMM && ct_op_get_int(op, "transA", 0)) return no_cg(op, "transA", d);
  ct_status st = need_sym(op, b, d);
  ct_quant_act act;
  int32_t hi;
  if (!st) st = ct_tq_act(op, &act, &hi, d);
  if (st) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MATMUL;
  struct ct_insn_matmul *mm = &in.matmul;
  mm->a = lmem_of(c->gr, a), mm->b = lmem_of(c->gr, b), mm->out = lmem_of(c->gr, y), mm->rq = c->lm_attr[li] + 8 * f0;
  mm->bias = bias ? lmem_of(c->gr, bias) : 0, mm->has_bias = bias != NULL;
  if (bias && !is_wslice(c, bias)) mm->bias += 4 * f0;
  if (!is_wslice(c, b)) mm->b += f0 * ba.ext[3];
  mm->batch = ba.ext[0] * ba.ext[1], mm->m = ba.ext[2], mm->k = ba.ext[3], mm->n = nf;
  mm->b_trans = tb, mm->b_bcast = 1;
  mm->dt_a = a->dtype, mm->dt_b = b->dtype, mm->dt_out = y->dtype, mm->rq_mode = CT_ISA_RQ_CHANNEL;
  mm->act = act_of(act), mm->act_hi = act == CT_QUANT_ACT_CLAMP ? hi : 0;
  mm->zp_a = ct_tq_zp(a), mm->zp_out = ct_tq_zp(y);
  if (mm->a < 0 || mm->b < 0 || mm->out < 0 || mm->bias < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  return put(c, &in, nm(op), t, d);
}

static ct_status emit_layer(mg *c, int li, int64_t t, ct_diag *d) {
  const ct_op *op = c->p->layers[li].op;
  if (border_cast(op) || c->p->layers[li].trait == CT_LG_ALIAS) return CT_OK;
  c->lm_scratch = c->lm_extra;
  for (int i = 0; i < op->n_out; i++)
    if (!is_int(op->out[i]->dtype)) return no_cg(op, "float result (only INT8 Tpu ops have codegen)", d);
  switch (op->kind) {
  case CT_OP_CONV: return emit_conv(c, op, li, t, d);
  case CT_OP_ADD:
  case CT_OP_SUB:
  case CT_OP_MUL: return emit_eltwise(c, op, t, d);
  case CT_OP_AVERAGEPOOL:
  case CT_OP_GLOBALAVERAGEPOOL:
  case CT_OP_MAXPOOL:
  case CT_OP_GLOBALMAXPOOL: return emit_pool(c, op, li, t, d);
  case CT_OP_LUT:
  case CT_OP_REQUANT:
  case CT_OP_CAST: return emit_unary(c, op, li, t, d);
  case CT_OP_GEMM:
  case CT_OP_MATMUL: return emit_matmul(c, op, li, t, d);
  default: return no_cg(op, NULL, d);
  }
}

/* Values the group reads from GMEM every tile (inputs) and stores (outputs). */
static bool in_group(const mg *c, const ct_value *v) {
  if (!v->def || border_cast(v->def)) return false;
  int oi = -1;
  for (int i = 0; i < c->p->g->n_ops; i++)
    if (c->p->g->ops[i] == v->def) { oi = i; break; }
  int li = oi >= 0 ? c->p->layer_of_op[oi] : -1;
  return li >= c->gr->first && li < c->gr->first + c->gr->n_layers;
}

static ct_status load_value(mg *c, const ct_op *op, const ct_value *v, int64_t t, ct_diag *d) {
  box b;
  int64_t lm = lmem_of(c->gr, v), gm = gmem_of(c->p, v);
  if (v->def && border_cast(v->def)) gm = io_addr(c->p, v->def);
  if (!box_of(c, v, &b) || lm < 0 || gm < 0)
    return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\": operand \"%s\" has no LMEM buffer or GMEM address", nm(op), v->name);
  if (is_wslice(c, v)) { /* rows of the output channels / features of this tile */
    const ct_value *y = op->out[0];
    const lg_rng *r = &c->x.rng[y->id];
    bool fdim = op->kind == CT_OP_GEMM && v == op->in[1] && !ct_op_get_int(op, "transB", 0);
    int wd = (fdim ? 1 : 0) + 4 - v->ndim;
    if (!r->set || r->ax < 0) return no_cg(op, "a weight slice without an output cut", d);
    b.off[wd] = r->lo, b.ext[wd] = r->hi - r->lo;
  }
  ct_insn in;
  dma_box(&in, true, v->dtype, lm, gm, &b);
  return put(c, &in, nm(op), t, d);
}

static ct_status group_tile(mg *c, int64_t t, bool first_tile, ct_diag *d) {
  const ct_lg_group *gr = c->gr;
  lg_tiling tl = {gr->axis, gr->nsecs, gr->secs, gr->pipelined};
  lg_tile_ranges(&c->x, gr->first, gr->n_layers, &tl, t);
  ct_status st = CT_OK;
  memset(c->seen, 0, (size_t)c->p->g->n_values);
  for (int k = 0; k < gr->n_layers && !st; k++) {
    const ct_op *op = c->p->layers[gr->first + k].op;
    if (border_cast(op)) continue;
    for (int i = 0; i < op->n_in && !st; i++) {
      const ct_value *v = op->in[i];
      if (!v || in_group(c, v) || c->seen[v->id]) continue;
      bool resident = ct_value_is_const(v) && !is_wslice(c, v);
      for (int b = 0; b < gr->n_bufs; b++)
        if (gr->bufs[b].value == v->id && gr->bufs[b].kind == CT_LG_BUF_RES) resident = true;
      c->seen[v->id] = 1;
      if (resident && !first_tile) continue;
      st = load_value(c, op, v, t, d);
    }
  }
  for (int k = 0; k < gr->n_layers && !st; k++) st = emit_layer(c, gr->first + k, t, d);
  for (int k = 0; k < gr->n_layers && !st; k++) {
    const ct_value *y = c->p->layers[gr->first + k].op->out[0];
    if (!lg_escapes(&c->x, y, gr->first, gr->n_layers)) continue;
    if (border_cast(c->p->layers[gr->first + k].op)) continue;
    box b;
    box_of(c, y, &b);
    int64_t lm = lmem_of(gr, y), gm = gmem_of(c->p, y);
    ct_insn in;
    dma_box(&in, false, y->dtype, lm, gm, &b);
    st = put(c, &in, y->name, t, d);
  }
  return st;
}

static ct_status add_io(mg *c, const ct_value *v, const char *name, bool out, int64_t addr, ct_diag *d) {
  ct_prog_io io;
  memset(&io, 0, sizeof io);
  io.name = (char *)name, io.is_output = out, io.dtype = v->dtype, io.ndim = v->ndim, io.gmem_addr = (uint64_t)addr;
  io.scale = v->n_scale == 1 ? v->scale[0] : 0, io.zero_point = ct_tq_zp(v);
  memcpy(io.shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  return ct_program_add_io(c->prog, &io, d);
}

/* Constants (the plan's weight region) and the IO table. */
static ct_status model_io(mg *c, ct_diag *d) {
  const ct_lg_plan *p = c->p;
  ct_status st = CT_OK;
  for (int k = 0; k < p->n_gmem && !st; k++) {
    const ct_value *v = p->g->values[p->gmem[k].value];
    if (p->gmem[k].region == CT_LG_GM_WEIGHT && v->data)
      st = ct_program_add_const(c->prog, v->name, v->dtype, (uint64_t)p->gmem[k].addr, v->data->data,
                                (uint64_t)v->data->nbytes, d);
  }
  for (int i = 0; i < p->n_layers && !st; i++) {
    const ct_op *op = p->layers[i].op;
    if (border_cast(op)) st = add_io(c, op->out[0], op->in[0]->name, false, io_addr(p, op), d);
  }
  for (int i = 0; i < p->g->n_ops && !st; i++) {
    const ct_op *op = p->g->ops[i];
    if (op->kind != CT_OP_INPUT || p->layer_of_op == NULL) continue;
    bool bordered = false;
    for (int j = 0; j < p->n_layers; j++)
      if (border_cast(p->layers[j].op) && p->layers[j].op->in[0] == op->out[0]) bordered = true;
    if (!bordered && is_int(op->out[0]->dtype)) st = add_io(c, op->out[0], op->out[0]->name, false, gmem_of(p, op->out[0]), d);
    else if (!bordered) st = ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": a float input must feed an integer Cast", op->out[0]->name);
  }
  for (int i = 0; i < p->g->n_outputs && !st; i++) {
    const ct_value *v = p->g->outputs[i];
    if (!is_int(v->dtype)) return ct_diag_set(d, CT_ERR_INPUT, "output \"%s\" is not integer: no codegen", v->name);
    st = add_io(c, v, v->name, true, gmem_of(p, v), d);
  }
  return st;
}

static bool group_is_border(const mg *c) {
  for (int k = 0; k < c->gr->n_layers; k++) {
    const ct_op *op = c->p->layers[c->gr->first + k].op;
    if (!border_cast(op) && c->p->layers[c->gr->first + k].trait != CT_LG_ALIAS) return false;
  }
  return true;
}

ct_status ct_cg_model(const ct_lg_plan *p, ct_program *prog, ct_diag *d) {
  mg *c = calloc(1, sizeof *c);
  if (!c) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  c->p = p, c->prog = prog, c->gm_extra = p->gmem_bytes;
  c->lm_attr = calloc((size_t)(p->n_layers ? p->n_layers : 1), sizeof *c->lm_attr);
  c->seen = calloc((size_t)(p->g->n_values ? p->g->n_values : 1), 1);
  ct_status st = c->lm_attr && c->seen ? lg_ctx_init(&c->x, p->g, &p->chip, &p->opt, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st && p->chip.sem_count < CT_ENG_CTRL)
    st = ct_diag_set(d, CT_ERR_LIMIT, "the program needs %d semaphores, the chip has %lld", (int)CT_ENG_CTRL,
                     (long long)p->chip.sem_count);
  for (int gi = 0; gi < p->n_groups && !st; gi++) {
    c->gr = &p->groups[gi], c->gi = gi, c->lm_extra = c->gr->lmem_bytes;
    if (group_is_border(c)) continue;
    if (c->gr->nsecs > 1 && c->gr->axis >= 0)
      st = no_cg(p->layers[c->gr->first].op, "tiles along N and another axis at once", d);
    if (!st) st = group_tables(c, d);
    for (int64_t t = 0; t < c->gr->n_tiles && !st; t++) st = group_tile(c, t, t == 0, d);
  }
  if (!st) st = model_io(c, d); /* after the layers: an op without codegen is reported first */
  if (!st) {
    ct_insn end;
    memset(&end, 0, sizeof end);
    end.op = CT_ISA_END;
    st = put(c, &end, "end", -1, d);
  }
  if (!st && c->gm_extra > p->chip.gmem_bytes)
    st = ct_diag_set(d, CT_ERR_LIMIT, "the program needs %lld bytes of GMEM, the chip has %lld", (long long)c->gm_extra,
                     (long long)p->chip.gmem_bytes);
  lg_ctx_free(&c->x);
  free(c->lm_attr);
  free(c->seen);
  free(c);
  return st;
}
