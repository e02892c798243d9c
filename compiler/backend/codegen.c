/* codegen.c: ISA instructions for one INT8 Conv layer group (codegen.h): the double-buffered
 * software pipeline of docs/examples/tiled_matmul.s generated from a plan. */
#include "compiler/backend/codegen.h"

#include <stdlib.h>
#include <string.h>

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static uint32_t bit(int k) { return 1u << k; }
static int64_t numel(const ct_value *v) {
  int64_t n = 1;
  for (int i = 0; i < v->ndim; i++) n *= v->shape[i];
  return n;
}

typedef struct cg {
  const ct_lg_plan *p;
  const ct_lg_group *gr;
  int gi;
  const ct_op *op;
  ct_program *prog;
  int64_t lm_in[2], lm_out[2], lm_w, lm_rq;
  int64_t gm_in, gm_out, gm_w, gm_rq;
  int nbuf;
} cg;

static int64_t gmem_of(const ct_lg_plan *p, const ct_value *v) {
  for (int k = 0; k < p->n_gmem; k++)
    if (p->gmem[k].value == v->id) return p->gmem[k].addr;
  return -1;
}

static int64_t lmem_of(const ct_lg_group *gr, const ct_value *v, int copy) {
  for (int i = 0; i < gr->n_bufs; i++)
    if (gr->bufs[i].value == v->id && gr->bufs[i].copy == copy) return gr->bufs[i].addr;
  return -1;
}

static ct_status emit(cg *c, ct_insn *in, int tile, int step, ct_diag *d) {
  uint32_t id;
  ct_status st = ct_program_add_debug(c->prog, c->op->loc ? c->op->loc : "conv", c->gi, tile, step, &id, d);
  if (st) return st;
  in->debug_id = id;
  return ct_program_add_insn(c->prog, in, d);
}

/* A dense LOAD (or STORE) of n·c·h·w i8 elements with the given GMEM strides. */
static void dma(ct_insn *in, ct_isa_op op, int64_t lm, int64_t gm, int64_t c_, int64_t h, int64_t w, int64_t g_sc,
                int64_t g_sh) {
  memset(in, 0, sizeof *in);
  in->op = op;
  struct ct_insn_load *l = &in->load; /* LOAD and STORE share the field names */
  struct ct_insn_store *s = &in->store;
  if (op == CT_ISA_LOAD) {
    l->dst = lm, l->src = gm, l->dtype = CT_I8, l->n = 1, l->c = c_, l->h = h, l->w = w;
    l->src_sn = c_ * g_sc, l->src_sc = g_sc, l->src_sh = g_sh, l->src_sw = 1;
    l->dst_sn = c_ * h * w, l->dst_sc = h * w, l->dst_sh = w, l->dst_sw = 1;
  } else {
    s->src = lm, s->dst = gm, s->dtype = CT_I8, s->n = 1, s->c = c_, s->h = h, s->w = w;
    s->dst_sn = c_ * g_sc, s->dst_sc = g_sc, s->dst_sh = g_sh, s->dst_sw = 1;
    s->src_sn = c_ * h * w, s->src_sc = h * w, s->src_sh = w, s->src_sw = 1;
  }
}

typedef struct tile_geo {
  int64_t olo, ohi, ilo, ihi, pad_t, pad_b;
} tile_geo;

static void geometry(const cg *c, int64_t t, tile_geo *g) {
  const ct_op *op = c->op;
  const ct_lg_layer *l = &c->p->layers[c->gr->first];
  int64_t oh = op->out[0]->shape[2], ih = op->in[0]->shape[2];
  int64_t h = c->gr->axis == 2 ? cdiv(oh, c->gr->secs) : oh;
  g->olo = t * h, g->ohi = g->olo + h < oh ? g->olo + h : oh;
  ct_lg_halo_rows(g->olo, g->ohi, l->kh, l->sh, l->dh, l->pad_top, ih, &g->ilo, &g->ihi);
  int64_t want_lo = g->olo * l->sh - l->pad_top, want_hi = (g->ohi - 1) * l->sh - l->pad_top + (l->kh - 1) * l->dh + 1;
  g->pad_t = g->ilo - want_lo, g->pad_b = want_hi - g->ihi;
}

/* Checks the group is a supported conv and finds its buffers and addresses. */
static ct_status setup(cg *c, ct_diag *d) {
  const ct_lg_group *gr = c->gr;
  const ct_op *op = gr->n_layers == 1 ? c->p->layers[gr->first].op : NULL;
  if (!op || op->kind != CT_OP_CONV || op->n_in < 2 || op->in[0]->ndim != 4 || op->out[0]->ndim != 4 ||
      op->in[0]->shape[0] != 1 || ct_op_get_int(op, "group", 1) != 1 || (op->n_in > 2 && op->in[2]) ||
      (gr->axis != 2 && gr->n_tiles != 1) || gr->nsecs != 1)
    return ct_diag_set(d, CT_ERR_INPUT, "group %d: codegen supports a single Conv (group 1, N = 1, no bias, cut along H); "
                       "this group is unsupported", c->gi);
  c->op = op;
  c->nbuf = gr->pipelined ? 2 : 1;
  for (int b = 0; b < 2; b++) {
    c->lm_in[b] = lmem_of(gr, op->in[0], b < c->nbuf ? b : 0);
    c->lm_out[b] = lmem_of(gr, op->out[0], b < c->nbuf ? b : 0);
  }
  c->lm_w = lmem_of(gr, op->in[1], 0);
  c->lm_rq = (gr->lmem_bytes + 63) / 64 * 64;
  c->gm_in = gmem_of(c->p, op->in[0]), c->gm_out = gmem_of(c->p, op->out[0]), c->gm_w = gmem_of(c->p, op->in[1]);
  c->gm_rq = (c->p->gmem_bytes + 63) / 64 * 64;
  if (c->lm_in[0] < 0 || c->lm_out[0] < 0 || c->lm_w < 0 || c->gm_in < 0 || c->gm_out < 0 || c->gm_w < 0)
    return ct_diag_set(d, CT_ERR_INPUT, "group %d: the plan has no buffer or GMEM address for a conv operand", c->gi);
  if (c->lm_rq + 8 > c->p->chip.lmem_bytes)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: no LMEM left for the requant table (needs 8 bytes at %lld)", c->gi,
                       (long long)c->lm_rq);
  if (c->p->chip.sem_count < CT_CG_SEM_COUNT)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: the conv pipeline needs %d semaphores, the chip has %lld", c->gi,
                       CT_CG_SEM_COUNT, (long long)c->p->chip.sem_count);
  return CT_OK;
}

static ct_status add_tables(cg *c, const ct_cg_conv_q *q, ct_diag *d) {
  const ct_value *x = c->op->in[0], *w = c->op->in[1], *y = c->op->out[0];
  int32_t rq[2] = {q->multiplier, q->shift};
  ct_status st = ct_program_add_const(c->prog, w->name, CT_I8, (uint64_t)c->gm_w, q->weight, (uint64_t)numel(w), d);
  if (!st) st = ct_program_add_const(c->prog, "conv.rq", CT_I32, (uint64_t)c->gm_rq, rq, sizeof rq, d);
  ct_prog_io io;
  memset(&io, 0, sizeof io);
  io.name = (char *)x->name, io.dtype = CT_I8, io.ndim = 4, io.gmem_addr = (uint64_t)c->gm_in;
  io.scale = q->scale_in, io.zero_point = q->zp_in;
  memcpy(io.shape, x->shape, sizeof(int64_t) * 4);
  if (!st) st = ct_program_add_io(c->prog, &io, d);
  io.name = (char *)y->name, io.is_output = true, io.gmem_addr = (uint64_t)c->gm_out;
  io.scale = q->scale_out, io.zero_point = q->zp_out;
  memcpy(io.shape, y->shape, sizeof(int64_t) * 4);
  if (!st) st = ct_program_add_io(c->prog, &io, d);
  return st;
}

/* LOAD of the weights and the requant table (step 0, before the first tile). */
static ct_status emit_resident(cg *c, ct_diag *d) {
  ct_insn in;
  int64_t wb = numel(c->op->in[1]);
  dma(&in, CT_ISA_LOAD, c->lm_w, c->gm_w, 1, 1, wb, wb, wb);
  in.signal = bit(CT_CG_SEM_W);
  ct_status st = emit(c, &in, -1, 0, d);
  if (st) return st;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_LOAD;
  in.load.dst = c->lm_rq, in.load.src = c->gm_rq, in.load.dtype = CT_I32, in.load.n = in.load.c = in.load.h = 1;
  in.load.w = 2, in.load.src_sn = in.load.src_sc = in.load.src_sh = 2, in.load.src_sw = 1;
  in.load.dst_sn = in.load.dst_sc = in.load.dst_sh = 2, in.load.dst_sw = 1;
  in.signal = bit(CT_CG_SEM_RQ);
  return emit(c, &in, -1, 0, d);
}

static ct_status emit_load(cg *c, int64_t t, int64_t step, ct_diag *d) {
  const ct_value *x = c->op->in[0];
  tile_geo g;
  geometry(c, t, &g);
  int b = (int)(t % c->nbuf);
  ct_insn in;
  int64_t ih = x->shape[2], iw = x->shape[3];
  dma(&in, CT_ISA_LOAD, c->lm_in[b], c->gm_in + g.ilo * iw, x->shape[1], g.ihi - g.ilo, iw, ih * iw, iw);
  in.wait = t >= c->nbuf ? bit(CT_CG_SEM_INFREE0 + b) : 0;
  in.signal = bit(CT_CG_SEM_LOADED0 + b);
  return emit(c, &in, (int)t, (int)step, d);
}

static ct_status emit_conv(cg *c, const ct_cg_conv_q *q, int64_t t, int64_t step, ct_diag *d) {
  const ct_op *op = c->op;
  const ct_value *x = op->in[0], *w = op->in[1], *y = op->out[0];
  const ct_lg_layer *l = &c->p->layers[c->gr->first];
  tile_geo g;
  geometry(c, t, &g);
  int b = (int)(t % c->nbuf);
  int n = 0;
  const int64_t *pads = ct_op_get_ints(op, "pads", &n), *st = ct_op_get_ints(op, "strides", &n);
  int64_t sw = st ? st[1] : 1, pl = pads ? pads[1] : 0, pr = pads ? pads[3] : 0;
  const int64_t *dl = ct_op_get_ints(op, "dilations", &n);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CONV;
  struct ct_insn_conv *cv = &in.conv;
  cv->in = c->lm_in[b], cv->wt = c->lm_w, cv->out = c->lm_out[b], cv->rq = c->lm_rq;
  cv->n = 1, cv->ic = x->shape[1], cv->ih = g.ihi - g.ilo, cv->iw = x->shape[3];
  cv->oc = y->shape[1], cv->oh = g.ohi - g.olo, cv->ow = y->shape[3];
  cv->kh = w->shape[2], cv->kw = w->shape[3], cv->stride_h = l->sh, cv->stride_w = sw;
  cv->pad_t = g.pad_t, cv->pad_b = g.pad_b, cv->pad_l = pl, cv->pad_r = pr;
  cv->dil_h = l->dh, cv->dil_w = dl ? dl[1] : 1, cv->groups = 1;
  cv->dt_in = CT_I8, cv->dt_w = CT_I8, cv->dt_out = CT_I8, cv->rq_mode = CT_ISA_RQ_TENSOR;
  cv->act = q->relu ? CT_ISA_ACT_RELU : CT_ISA_ACT_NONE, cv->zp_in = q->zp_in, cv->zp_out = q->zp_out;
  in.wait = bit(CT_CG_SEM_LOADED0 + b) | (t == 0 ? bit(CT_CG_SEM_W) | bit(CT_CG_SEM_RQ) : 0) |
            (t >= c->nbuf ? bit(CT_CG_SEM_OUTFREE0 + b) : 0);
  in.signal = bit(CT_CG_SEM_DONE0 + b) | (t + c->nbuf < c->gr->n_tiles ? bit(CT_CG_SEM_INFREE0 + b) : 0);
  return emit(c, &in, (int)t, (int)step, d);
}

static ct_status emit_store(cg *c, int64_t t, int64_t step, ct_diag *d) {
  const ct_value *y = c->op->out[0];
  tile_geo g;
  geometry(c, t, &g);
  int b = (int)(t % c->nbuf);
  int64_t oh = y->shape[2], ow = y->shape[3];
  ct_insn in;
  dma(&in, CT_ISA_STORE, c->lm_out[b], c->gm_out + g.olo * ow, y->shape[1], g.ohi - g.olo, ow, oh * ow, ow);
  in.wait = bit(CT_CG_SEM_DONE0 + b);
  in.signal = t + c->nbuf < c->gr->n_tiles ? bit(CT_CG_SEM_OUTFREE0 + b) : 0;
  return emit(c, &in, (int)t, (int)step, d);
}

ct_status ct_cg_conv_group(const ct_lg_plan *p, int gi, const ct_cg_conv_q *q, ct_program *prog, ct_diag *d) {
  if (gi < 0 || gi >= p->n_groups) return ct_diag_set(d, CT_ERR_INPUT, "group %d does not exist", gi);
  cg c;
  memset(&c, 0, sizeof c);
  c.p = p, c.gr = &p->groups[gi], c.gi = gi, c.prog = prog;
  ct_status st = setup(&c, d);
  if (!st) st = add_tables(&c, q, d);
  if (!st) st = emit_resident(&c, d);
  int64_t T = c.gr->n_tiles;
  /* time step s: load tile s, compute tile s − 1, store tile s − 2 (program order = the
   * order each engine runs them; semaphores alone order the engines) */
  for (int64_t s = 0; s < T + 2 && !st; s++) {
    if (s < T) st = emit_load(&c, s, s, d);
    if (!st && s >= 1 && s - 1 < T) st = emit_conv(&c, q, s - 1, s, d);
    if (!st && s >= 2) st = emit_store(&c, s - 2, s, d);
  }
  if (!st) {
    ct_insn end;
    memset(&end, 0, sizeof end);
    end.op = CT_ISA_END;
    st = emit(&c, &end, -1, (int)(T + 2), d);
  }
  return st;
}
