/* codegen.c: ISA instructions for a layer group that is a chain of INT8 Convs (codegen.h):
 * the double-buffered software pipeline of docs/examples/tiled_matmul.s generated from a
 * plan; intermediates stay in the plan's LMEM buffers, tile ranges come from the planner's
 * backward halo propagation (ct_lg_tile_ranges). */
#include "compiler/backend/codegen.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"

#define CG_MAX_LAYERS 32

static uint32_t bit(int k) { return 1u << k; }

typedef struct cg {
  const ct_lg_plan *p;
  const ct_lg_group *gr;
  int gi, n;                       /* group index, layers */
  const ct_op *op[CG_MAX_LAYERS];
  const ct_cg_conv_q *q;
  ct_program *prog;
  lg_ctx x;                        /* for the tile ranges */
  lg_tiling tl;
  int64_t lm_in[2], lm_out[2], lm_w[CG_MAX_LAYERS], lm_mid[CG_MAX_LAYERS], lm_rq;
  int64_t gm_in, gm_out, gm_w[CG_MAX_LAYERS], gm_rq;
  int nbuf;
} cg;

static int64_t ct_cg_gmem_of(const ct_lg_plan *p, const ct_value *v) {
  for (int k = 0; k < p->n_gmem; k++)
    if (p->gmem[k].value == v->id) return p->gmem[k].addr;
  return -1;
}

static int64_t ct_cg_lmem_of(const ct_lg_group *gr, const ct_value *v, int copy) {
  for (int i = 0; i < gr->n_bufs; i++)
    if (gr->bufs[i].value == v->id && gr->bufs[i].copy == copy) return gr->bufs[i].addr;
  return -1;
}

static ct_status emit(cg *c, ct_insn *in, int layer, int tile, int step, ct_diag *d) {
  uint32_t id;
  const char *name = c->op[layer]->loc ? c->op[layer]->loc : "conv";
  ct_status st = ct_program_add_debug(c->prog, name, c->gi, tile, step, &id, d);
  if (st) return st;
  in->debug_id = id;
  return ct_program_add_insn(c->prog, in, d);
}

/* A LOAD or STORE of 1·ch·h·w elements of type dt, dense in LMEM, GMEM strides g_sc, g_sh. */
static void dma(ct_insn *in, ct_isa_op op, ct_dtype dt, int64_t lm, int64_t gm, int64_t ch, int64_t h, int64_t w,
                int64_t g_sc, int64_t g_sh) {
  memset(in, 0, sizeof *in);
  in->op = op;
  if (op == CT_ISA_LOAD) {
    struct ct_insn_load *l = &in->load;
    l->dst = lm, l->src = gm, l->dtype = dt, l->n = 1, l->c = ch, l->h = h, l->w = w;
    l->src_sn = ch * g_sc, l->src_sc = g_sc, l->src_sh = g_sh, l->src_sw = 1;
    l->dst_sn = ch * h * w, l->dst_sc = h * w, l->dst_sh = w, l->dst_sw = 1;
  } else {
    struct ct_insn_store *s = &in->store;
    s->src = lm, s->dst = gm, s->dtype = dt, s->n = 1, s->c = ch, s->h = h, s->w = w;
    s->dst_sn = ch * g_sc, s->dst_sc = g_sc, s->dst_sh = g_sh, s->dst_sw = 1;
    s->src_sn = ch * h * w, s->src_sc = h * w, s->src_sh = w, s->src_sw = 1;
  }
}

/* Rows [lo, hi) of value v in the current tile (x.rng; whole when not cut). */
static void rows(const cg *c, const ct_value *v, int64_t *lo, int64_t *hi) {
  const lg_rng *r = &c->x.rng[v->id];
  if (r->ax == 2) *lo = r->lo, *hi = r->hi;
  else *lo = 0, *hi = v->shape[2];
}

static bool conv_ok(const ct_op *op) {
  return op->kind == CT_OP_CONV && op->n_in >= 2 && op->in[0]->ndim == 4 && op->out[0]->ndim == 4 &&
         op->in[0]->shape[0] == 1 && ct_attr_conv_group(op) == 1 && !(op->n_in > 2 && op->in[2]) &&
         ct_value_is_const(op->in[1]);
}

/* The group must be a chain: layer k reads layer k−1's output, which nothing else reads. */
static ct_status check_chain(cg *c, ct_diag *d) {
  const ct_lg_group *gr = c->gr;
  if (gr->n_layers > CG_MAX_LAYERS || (gr->axis != 2 && gr->n_tiles != 1) || gr->nsecs != 1)
    return ct_diag_set(d, CT_ERR_INPUT, "group %d: unsupported by the codegen (more than %d layers, or cut along "
                       "another axis than H)", c->gi, CG_MAX_LAYERS);
  c->n = gr->n_layers;
  for (int k = 0; k < c->n; k++) {
    const ct_op *op = c->p->layers[gr->first + k].op;
    c->op[k] = op;
    if (!conv_ok(op))
      return ct_diag_set(d, CT_ERR_INPUT, "group %d: layer \"%s\" is unsupported by the codegen (only INT8 Conv, group 1, "
                         "N = 1, no bias)", c->gi, op->loc ? op->loc : "?");
    if (k > 0 && (op->in[0] != c->op[k - 1]->out[0] || ct_lg_escapes(&c->x, op->in[0], gr->first, c->n) ||
                  c->x.cons_off[op->in[0]->id + 1] - c->x.cons_off[op->in[0]->id] != 1))
      return ct_diag_set(d, CT_ERR_INPUT, "group %d: unsupported by the codegen: not a chain of convs at \"%s\"", c->gi,
                         op->loc ? op->loc : "?");
  }
  return CT_OK;
}

/* Lowest 64-aligned LMEM offset with `bytes` bytes that no buffer of the group uses (after
 * the buffers when they are packed, in a gap when the planner spread them over the banks:
 * ct_lg_spread_banks); -1 when there is none below `lmem`. */
static int64_t free_lmem(const ct_lg_group *gr, int64_t bytes, int64_t lmem) {
  int64_t best = -1;
  for (int i = -1; i < gr->n_bufs; i++) {
    int64_t a = i < 0 ? 0 : (gr->bufs[i].addr + gr->bufs[i].bytes + 63) / 64 * 64;
    bool ok = a + bytes <= lmem && (best < 0 || a < best);
    for (int j = 0; j < gr->n_bufs && ok; j++)
      ok = gr->bufs[j].addr >= a + bytes || gr->bufs[j].addr + gr->bufs[j].bytes <= a;
    if (ok) best = a;
  }
  return best;
}

/* Finds the buffers and addresses of every operand. */
static ct_status setup(cg *c, ct_diag *d) {
  const ct_lg_group *gr = c->gr;
  const ct_value *x = c->op[0]->in[0], *y = c->op[c->n - 1]->out[0];
  c->nbuf = gr->pipelined ? 2 : 1;
  c->tl.axis = gr->axis, c->tl.nsecs = gr->nsecs, c->tl.secs = gr->secs, c->tl.pipelined = gr->pipelined;
  for (int b = 0; b < 2; b++)
    c->lm_in[b] = ct_cg_lmem_of(gr, x, b < c->nbuf ? b : 0), c->lm_out[b] = ct_cg_lmem_of(gr, y, b < c->nbuf ? b : 0);
  c->gm_in = ct_cg_gmem_of(c->p, x), c->gm_out = ct_cg_gmem_of(c->p, y);
  bool ok = c->lm_in[0] >= 0 && c->lm_out[0] >= 0 && c->gm_in >= 0 && c->gm_out >= 0;
  for (int k = 0; k < c->n; k++) {
    c->lm_w[k] = ct_cg_lmem_of(gr, c->op[k]->in[1], 0), c->gm_w[k] = ct_cg_gmem_of(c->p, c->op[k]->in[1]);
    c->lm_mid[k] = k < c->n - 1 ? ct_cg_lmem_of(gr, c->op[k]->out[0], 0) : -1;
    ok = ok && c->lm_w[k] >= 0 && c->gm_w[k] >= 0 && (k == c->n - 1 || c->lm_mid[k] >= 0);
  }
  if (!ok) return ct_diag_set(d, CT_ERR_INPUT, "group %d: the plan has no buffer or GMEM address for a conv operand", c->gi);
  c->lm_rq = free_lmem(gr, 64 * c->n, c->p->chip.lmem_bytes), c->gm_rq = (c->p->gmem_bytes + 63) / 64 * 64;
  if (c->lm_rq < 0)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: no LMEM left for the requant tables (%d bytes)", c->gi, 64 * c->n);
  if (c->p->chip.sem_count < CT_CG_SEM_COUNT)
    return ct_diag_set(d, CT_ERR_LIMIT, "group %d: the conv pipeline needs %d semaphores, the chip has %lld", c->gi,
                       CT_CG_SEM_COUNT, (long long)c->p->chip.sem_count);
  return CT_OK;
}

static int64_t numel(const ct_value *v) {
  int64_t n = 1;
  for (int i = 0; i < v->ndim; i++) n *= v->shape[i];
  return n;
}

static ct_status add_io(cg *c, const ct_value *v, bool out, double scale, int32_t zp, int64_t addr, ct_diag *d) {
  ct_prog_io io;
  memset(&io, 0, sizeof io);
  io.name = (char *)v->name, io.is_output = out, io.dtype = CT_I8, io.ndim = 4, io.gmem_addr = (uint64_t)addr;
  io.scale = scale, io.zero_point = zp;
  memcpy(io.shape, v->shape, sizeof(int64_t) * 4);
  return ct_program_add_io(c->prog, &io, d);
}

/* Constants (weights, requant tables), IO entries, and the resident LOADs of step 0: the
 * load engine runs them in order, so the last one's signal W covers them all. */
static ct_status emit_resident(cg *c, ct_diag *d) {
  ct_status st = CT_OK;
  for (int k = 0; k < c->n && !st; k++) {
    const ct_value *w = c->op[k]->in[1];
    int32_t rq[2] = {c->q[k].multiplier, c->q[k].shift};
    char name[64];
    snprintf(name, sizeof name, "rq%d", k);
    st = ct_program_add_const(c->prog, w->name, CT_I8, (uint64_t)c->gm_w[k], c->q[k].weight, (uint64_t)numel(w), d);
    if (!st) st = ct_program_add_const(c->prog, name, CT_I32, (uint64_t)(c->gm_rq + 64 * k), rq, sizeof rq, d);
  }
  const ct_cg_conv_q *q0 = &c->q[0], *ql = &c->q[c->n - 1];
  if (!st) st = add_io(c, c->op[0]->in[0], false, q0->scale_in, q0->zp_in, c->gm_in, d);
  if (!st) st = add_io(c, c->op[c->n - 1]->out[0], true, ql->scale_out, ql->zp_out, c->gm_out, d);
  ct_insn in;
  for (int k = 0; k < c->n && !st; k++) {
    int64_t wb = numel(c->op[k]->in[1]);
    dma(&in, CT_ISA_LOAD, CT_I8, c->lm_w[k], c->gm_w[k], 1, 1, wb, wb, wb);
    st = emit(c, &in, k, -1, 0, d);
    dma(&in, CT_ISA_LOAD, CT_I32, c->lm_rq + 64 * k, c->gm_rq + 64 * k, 1, 1, 2, 2, 2);
    in.signal = k == c->n - 1 ? bit(CT_CG_SEM_W) : 0;
    if (!st) st = emit(c, &in, k, -1, 0, d);
  }
  return st;
}

static ct_status emit_load(cg *c, int64_t t, int64_t step, ct_diag *d) {
  const ct_value *x = c->op[0]->in[0];
  ct_lg_tile_ranges(&c->x, c->gr->first, c->n, &c->tl, t);
  int64_t lo, hi, ih = x->shape[2], iw = x->shape[3];
  rows(c, x, &lo, &hi);
  int b = (int)(t % c->nbuf);
  ct_insn in;
  dma(&in, CT_ISA_LOAD, CT_I8, c->lm_in[b], c->gm_in + lo * iw, x->shape[1], hi - lo, iw, ih * iw, iw);
  in.wait = t >= c->nbuf ? bit(CT_CG_SEM_INFREE0 + b) : 0;
  in.signal = bit(CT_CG_SEM_LOADED0 + b);
  return emit(c, &in, 0, (int)t, (int)step, d);
}

/* The CONV of layer k in tile t (x.rng holds tile t's ranges). */
static ct_status emit_conv(cg *c, int k, int64_t t, int64_t step, ct_diag *d) {
  const ct_op *op = c->op[k];
  const ct_value *x = op->in[0], *w = op->in[1], *y = op->out[0];
  const ct_lg_layer *l = &c->p->layers[c->gr->first + k];
  int64_t olo, ohi, vlo, vhi, ilo, ihi;
  rows(c, y, &olo, &ohi);
  rows(c, x, &vlo, &vhi);
  ct_lg_halo_rows(olo, ohi, l->kh, l->sh, l->dh, l->pad_top, x->shape[2], &ilo, &ihi);
  if (ilo != vlo || ihi != vhi)
    return ct_diag_set(d, CT_ERR_INTERNAL, "group %d tile %lld: layer \"%s\" needs rows [%lld, %lld) of its input, the "
                       "buffer holds [%lld, %lld)", c->gi, (long long)t, op->loc, (long long)ilo, (long long)ihi,
                       (long long)vlo, (long long)vhi);
  int b = (int)(t % c->nbuf);
  lg_win2 wn;
  ct_lg_window2(op, &wn);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CONV;
  struct ct_insn_conv *cv = &in.conv;
  cv->in = k == 0 ? c->lm_in[b] : c->lm_mid[k - 1];
  cv->out = k == c->n - 1 ? c->lm_out[b] : c->lm_mid[k];
  cv->wt = c->lm_w[k], cv->rq = c->lm_rq + 64 * k;
  cv->n = 1, cv->ic = x->shape[1], cv->ih = ihi - ilo, cv->iw = x->shape[3];
  cv->oc = y->shape[1], cv->oh = ohi - olo, cv->ow = y->shape[3];
  cv->kh = w->shape[2], cv->kw = w->shape[3], cv->stride_h = l->sh, cv->stride_w = wn.s[1];
  cv->pad_t = ilo - (olo * l->sh - l->pad_top);
  cv->pad_b = (ohi - 1) * l->sh - l->pad_top + (l->kh - 1) * l->dh + 1 - ihi;
  cv->pad_l = wn.p[1], cv->pad_r = wn.p[3];
  cv->dil_h = l->dh, cv->dil_w = wn.d[1], cv->groups = 1;
  cv->dt_in = CT_I8, cv->dt_w = CT_I8, cv->dt_out = CT_I8, cv->rq_mode = CT_ISA_RQ_TENSOR;
  cv->act = c->q[k].relu ? CT_ISA_ACT_RELU : CT_ISA_ACT_NONE, cv->zp_in = c->q[k].zp_in, cv->zp_out = c->q[k].zp_out;
  int64_t T = c->gr->n_tiles;
  if (k == 0) {
    in.wait |= bit(CT_CG_SEM_LOADED0 + b) | (t == 0 ? bit(CT_CG_SEM_W) : 0);
    in.signal |= t + c->nbuf < T ? bit(CT_CG_SEM_INFREE0 + b) : 0;
  }
  if (k == c->n - 1) {
    in.wait |= t >= c->nbuf ? bit(CT_CG_SEM_OUTFREE0 + b) : 0;
    in.signal |= bit(CT_CG_SEM_DONE0 + b);
  }
  return emit(c, &in, k, (int)t, (int)step, d);
}

static ct_status emit_store(cg *c, int64_t t, int64_t step, ct_diag *d) {
  const ct_value *y = c->op[c->n - 1]->out[0];
  ct_lg_tile_ranges(&c->x, c->gr->first, c->n, &c->tl, t);
  int64_t lo, hi, oh = y->shape[2], ow = y->shape[3];
  rows(c, y, &lo, &hi);
  int b = (int)(t % c->nbuf);
  ct_insn in;
  dma(&in, CT_ISA_STORE, CT_I8, c->lm_out[b], c->gm_out + lo * ow, y->shape[1], hi - lo, ow, oh * ow, ow);
  in.wait = bit(CT_CG_SEM_DONE0 + b);
  in.signal = t + c->nbuf < c->gr->n_tiles ? bit(CT_CG_SEM_OUTFREE0 + b) : 0;
  return emit(c, &in, c->n - 1, (int)t, (int)step, d);
}

static ct_status emit_steps(cg *c, ct_diag *d) {
  int64_t T = c->gr->n_tiles;
  ct_status st = CT_OK;
  /* time step s: load tile s, compute tile s − 1, store tile s − 2 (program order is each
   * engine's order; semaphores alone order the engines) */
  for (int64_t s = 0; s < T + 2 && !st; s++) {
    if (s < T) st = emit_load(c, s, s, d);
    if (!st && s >= 1 && s - 1 < T) {
      ct_lg_tile_ranges(&c->x, c->gr->first, c->n, &c->tl, s - 1);
      for (int k = 0; k < c->n && !st; k++) st = emit_conv(c, k, s - 1, s, d);
    }
    if (!st && s >= 2) st = emit_store(c, s - 2, s, d);
  }
  if (!st) {
    ct_insn end;
    memset(&end, 0, sizeof end);
    end.op = CT_ISA_END;
    st = emit(c, &end, c->n - 1, -1, (int)(T + 2), d);
  }
  return st;
}

ct_status ct_cg_conv_group(const ct_lg_plan *p, int gi, const ct_cg_conv_q *q, ct_program *prog, ct_diag *d) {
  if (gi < 0 || gi >= p->n_groups) return ct_diag_set(d, CT_ERR_INPUT, "group %d does not exist", gi);
  cg *c = calloc(1, sizeof *c);
  if (!c) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  c->p = p, c->gr = &p->groups[gi], c->gi = gi, c->prog = prog, c->q = q;
  ct_status st = ct_lg_ctx_init(&c->x, p->g, &p->chip, &p->opt, d);
  if (!st) st = check_chain(c, d);
  if (!st) st = setup(c, d);
  if (!st) st = emit_resident(c, d);
  if (!st) st = emit_steps(c, d);
  ct_lg_ctx_free(&c->x);
  free(c);
  return st;
}
