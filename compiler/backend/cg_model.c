/* cg_model.c: ISA instructions for a whole planned INT8 Tpu module (codegen.h,
 * ct_cg_model): every group's tiles load their inputs, run their layers (CONV, DWCONV,
 * ELTWISE, LUT, POOL, REQUANT, CAST, MATMUL, ...) with the plan's LMEM buffers and store their
 * outputs at the plan's GMEM addresses. Each group is staged tile by tile and emitted by its
 * schedule (cg_sched.h): the double-buffered load / compute / store pipeline when the plan
 * pipelines it, else in program order; a SYNC separates groups. */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/cg_int.h"

_Static_assert(CT_ENG_CTRL <= CT_CHIP_SEM_COUNT_MIN, "every chip chip.def accepts has a semaphore per engine");

/* Values the group reads from GMEM every tile (inputs) and stores (outputs). */
static bool in_group(const mg *c, const ct_value *v) {
  if (!v->def || ct_lg_border_cast(c->p->g, v->def)) return false;
  int oi = -1;
  for (int i = 0; i < c->p->g->n_ops; i++)
    if (c->p->g->ops[i] == v->def) { oi = i; break; }
  int li = oi >= 0 ? c->p->layer_of_op[oi] : -1;
  return li >= c->gr->first && li < c->gr->first + c->gr->n_layers;
}

static ct_status load_value(mg *c, const ct_op *op, const ct_value *v, int64_t t, ct_diag *d) {
  box b;
  int64_t lm = ct_cg_lmem_of(c->gr, v), gm = ct_cg_gmem_of(c->p, v);
  if (v->def && ct_lg_border_cast(c->p->g, v->def)) gm = ct_cg_io_addr(c->p, v->def);
  if (!ct_cg_box_of(c, v, &b) || lm < 0 || gm < 0)
    return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\": operand \"%s\" has no LMEM buffer or GMEM address", ct_cg_nm(op), v->name);
  if (ct_cg_is_wslice(c, v)) { /* rows of the output channels / features of this tile */
    const ct_value *y = op->out[0];
    const lg_rng *r = &c->x.rng[y->id];
    int wdim = r->set ? ct_lg_weight_dim(op, v, r->ax) : -1, wd = wdim + 4 - v->ndim;
    if (wdim < 0) return ct_cg_no_cg(op, "a weight slice without an output cut", d);
    b.off[wd] = r->lo, b.ext[wd] = r->hi - r->lo;
  }
  ct_insn in;
  ct_cg_dma_box(&in, true, v->dtype, lm, gm, &b);
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* STORE of the rows of escaping value y this tile owns: [st_lo, hi) along the cut axis (the
 * tile may hold earlier rows for the group's own readers; those were stored by the tile
 * before, and storing them twice would race between store engines). */
static ct_status store_value(mg *c, const ct_value *y, int64_t t, ct_diag *d) {
  box b;
  ct_cg_box_of(c, y, &b);
  const lg_rng *r = &c->x.rng[y->id];
  int a = r->set && r->ax >= 0 ? r->ax + 4 - y->ndim : -1;
  int64_t skip = a >= 0 && r->st_lo > r->lo ? r->st_lo - r->lo : 0;
  if (a >= 0 && skip >= r->hi - r->lo) return CT_OK; /* nothing new in this tile */
  ct_insn in;
  ct_cg_dma_box(&in, false, y->dtype, ct_cg_lmem_of(c->gr, y), ct_cg_gmem_of(c->p, y), &b);
  if (skip) {
    struct ct_insn_store *s = &in.store;
    int64_t *ext[4] = {&s->n, &s->c, &s->h, &s->w}, ss[4] = {s->src_sn, s->src_sc, s->src_sh, s->src_sw};
    int64_t ds[4] = {s->dst_sn, s->dst_sc, s->dst_sh, s->dst_sw}, eb = (int64_t)ct_dtype_size(y->dtype);
    s->src += skip * ss[a] * eb, s->dst += skip * ds[a] * eb, *ext[a] -= skip;
  }
  return ct_cg_put(c, &in, y->name, t, d);
}

/* The view of the group tile t sees: in a pipelined group, odd tiles use copy 1 of every
 * double buffer (IN, WSLICE, OUT; MID when the plan double-buffers them) (the copies' numbers swapped), so ct_cg_lmem_of's copy 0 is the tile's own. (A
 * border Cast's result is an IN buffer of its readers, loaded from its own program input.) */
static void tile_view(mg *c, const ct_lg_group *orig, int64_t t) {
  c->view = *orig, c->view.bufs = c->view_bufs, c->gr = &c->view;
  bool swap = orig->pipelined && t % 2 == 1;
  for (int i = 0; i < orig->n_bufs; i++) {
    ct_lg_buffer *b = &c->view_bufs[i];
    *b = orig->bufs[i];
    bool dbl = b->kind == CT_LG_BUF_IN || b->kind == CT_LG_BUF_WSLICE || b->kind == CT_LG_BUF_OUT ||
               (b->kind == CT_LG_BUF_MID && orig->dbl_mid);
    if (swap && dbl) b->copy = 1 - b->copy;
  }
}

static ct_status group_tile(mg *c, int64_t t, bool first_tile, ct_diag *d) {
  const ct_lg_group *gr = c->gr;
  lg_tiling tl = {gr->axis, gr->nsecs, gr->secs, gr->pipelined};
  ct_lg_tile_ranges(&c->x, gr->first, gr->n_layers, &tl, t);
  ct_status st = CT_OK;
  memset(c->seen, 0, (size_t)c->p->g->n_values);
  for (int k = 0; k < gr->n_layers && !st; k++) {
    const ct_op *op = c->p->layers[gr->first + k].op;
    if (ct_lg_border_cast(c->p->g, op)) continue;
    for (int i = 0; i < op->n_in && !st; i++) {
      const ct_value *v = op->in[i];
      if (!v || in_group(c, v) || c->seen[v->id]) continue;
      bool resident = ct_value_is_const(v) && !ct_cg_is_wslice(c, v);
      /* a border Cast's result is loaded into its float input's buffer (tile_view): that
       * buffer's kind says whether it is loaded once (RES) or every tile */
      const ct_value *bv = v->def && ct_lg_border_cast(c->p->g, v->def) ? v->def->in[0] : v;
      for (int b = 0; b < gr->n_bufs; b++)
        if ((gr->bufs[b].value == v->id || gr->bufs[b].value == bv->id) && gr->bufs[b].kind == CT_LG_BUF_RES) resident = true;
      c->seen[v->id] = 1;
      if (resident && !first_tile) continue;
      st = load_value(c, op, v, t, d);
      if (!st && resident) c->stage.v[c->stage.n - 1].early = true;
    }
  }
  for (int k = 0; k < gr->n_layers && !st; k++) st = ct_cg_emit_layer(c, gr->first + k, t, d);
  for (int k = 0; k < gr->n_layers && !st; k++) { /* every escaping result (Split has several) */
    const ct_op *op = c->p->layers[gr->first + k].op;
    for (int j = 0; j < op->n_out && !st; j++) {
      const ct_value *y = op->out[j];
      if (!y || !ct_lg_escapes(&c->x, y, gr->first, gr->n_layers) || ct_lg_border_cast(c->p->g, op)) continue;
      st = store_value(c, y, t, d);
    }
  }
  return st;
}

/* One LOAD (two when the LMEM end is not 64-aligned) of the group's tables, which ct_cg_add_table
 * laid out identically in GMEM and LMEM from (tab_gm, tab_lm): rows of 64 bytes. */
static ct_status load_tables(mg *c, ct_diag *d) {
  int64_t bytes = c->gm_extra - c->tab_gm, rows = bytes / 64, tail = bytes % 64;
  ct_status st = CT_OK;
  const char *name = ct_cg_nm(c->p->layers[c->gr->first].op);
  if (bytes <= 0) return CT_OK;
  if (bytes <= 65535) rows = 0, tail = bytes; /* one row */
  ct_insn in;
  if (rows) {
    box b = {{0, 0, 0, 0}, {1, 1, rows, 64}, {1, 1, rows, 64}};
    ct_cg_dma_box(&in, true, CT_U8, c->tab_lm, c->tab_gm, &b);
    st = ct_cg_put(c, &in, name, -1, d);
    if (!st) c->stage.v[c->stage.n - 1].early = true;
  }
  if (!st && tail) {
    box b = {{0, 0, 0, 0}, {1, 1, 1, tail}, {1, 1, 1, tail}};
    ct_cg_dma_box(&in, true, CT_U8, c->tab_lm + rows * 64, c->tab_gm + rows * 64, &b);
    st = ct_cg_put(c, &in, name, -1, d);
    if (!st) c->stage.v[c->stage.n - 1].early = true;
  }
  return st;
}

/* The tables of a group with double MIDs: the MXU layers' and the others' in banks of their
 * own (ct_lg_reserve_split, as the planner reserved them), one block LOAD each; the scratch
 * starts at the next bank after them. */
static ct_status split_tables(mg *c, ct_diag *d) {
  const ct_lg_group *gr = c->gr;
  int64_t at[3];
  ct_lg_reserve_split(&c->p->chip, gr->lmem_bytes, ct_lg_group_table_part(&c->x, gr->first, gr->n_layers, true),
                      ct_lg_group_table_part(&c->x, gr->first, gr->n_layers, false), 0, at);
  ct_status st = CT_OK;
  for (int part = 1; part <= 2 && !st; part++) {
    c->tab_part = part, c->lm_extra = at[part - 1];
    c->tab_lm = c->lm_extra, c->tab_gm = (c->gm_extra + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN;
    st = ct_cg_group_tables(c, d);
    if (!st) st = load_tables(c, d);
  }
  c->tab_part = 0, c->lm_extra = at[2];
  return st;
}

/* Stages group gi into c->stage. */
static ct_status stage_group(mg *c, int gi, ct_diag *d) {
  const ct_lg_group *gr = &c->p->groups[gi];
  c->gr = gr, c->gi = gi, c->lm_extra = gr->lmem_bytes, c->stage.n = 0;
  if (!ct_lg_group_emits(c->p->g, c->p->layers, gr)) return CT_OK;
  if (gr->nsecs > 1 && gr->axis >= 0) return ct_cg_no_cg(c->p->layers[gr->first].op, "tiles along N and another axis at once", d);
  free(c->view_bufs);
  c->view_bufs = malloc(sizeof *c->view_bufs * ((size_t)gr->n_bufs + 1));
  if (!c->view_bufs) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  c->tab_lm = (c->lm_extra + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN, c->tab_gm = (c->gm_extra + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN;
  ct_status st = gr->dbl_mid ? split_tables(c, d) : ct_cg_group_tables(c, d);
  if (!st && !gr->dbl_mid) st = load_tables(c, d);
  for (int64_t t = 0; t < gr->n_tiles && !st; t++) {
    tile_view(c, gr, t);
    st = group_tile(c, t, t == 0, d);
  }
  c->gr = gr;
  return st;
}

enum { IO_IN, IO_OUT, IO_TENSOR };

/* One IO record of kind IO_IN / IO_OUT / IO_TENSOR (a stored activation, for --dump-all). */
static ct_status add_io(mg *c, const ct_value *v, const char *name, int kind, int64_t addr, ct_diag *d) {
  ct_prog_io io;
  memset(&io, 0, sizeof io);
  io.name = (char *)name, io.is_output = kind == IO_OUT, io.is_tensor = kind == IO_TENSOR;
  io.dtype = v->dtype, io.ndim = v->ndim, io.gmem_addr = (uint64_t)addr;
  io.scale = v->n_scale == 1 ? v->scale[0] : 0, io.zero_point = ct_tq_zp(v);
  if (v->n_scale > 1) /* per-channel activation (docs/quant.md) */
    io.n_scale = v->n_scale, io.quant_axis = v->quant_axis, io.scales = v->scale, io.zero_points = v->zero_point;
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
    if (ct_lg_border_cast(p->g, op)) st = add_io(c, op->out[0], op->in[0]->name, IO_IN, ct_cg_io_addr(p, op), d);
  }
  for (int i = 0; i < p->g->n_ops && !st; i++) {
    const ct_op *op = p->g->ops[i];
    if (op->kind != CT_OP_INPUT || p->layer_of_op == NULL) continue;
    /* read by other layers than its border Casts: the input as it is, at its own address */
    int64_t gm = ct_cg_gmem_of(p, op->out[0]);
    bool stored = ct_cg_is_int(op->out[0]->dtype) || ct_dtype_is_float(op->out[0]->dtype); /* float: read by float layers */
    if (gm >= 0 && stored) st = add_io(c, op->out[0], op->out[0]->name, IO_IN, gm, d);
    else if (gm >= 0) st = ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": neither integer nor float storage", op->out[0]->name);
  }
  for (int i = 0; i < p->g->n_outputs && !st; i++) {
    const ct_value *v = p->g->outputs[i];
    if (!ct_cg_is_int(v->dtype) && !ct_dtype_is_float(v->dtype))
      return ct_diag_set(d, CT_ERR_INPUT, "output \"%s\" has neither integer nor float storage: no codegen", v->name);
    if (ct_graph_output_repeated(p->g, i)) continue; /* a value returned twice is one program output */
    st = add_io(c, v, v->name, IO_OUT, ct_cg_gmem_of(p, v), d);
  }
  /* every other activation the program stores to GMEM, described for `ctpu sim --dump-all` */
  for (int k = 0; k < p->n_gmem && !st; k++) {
    const ct_value *v = p->g->values[p->gmem[k].value];
    if (p->gmem[k].region != CT_LG_GM_ACT || !v->def || v->def->kind == CT_OP_INPUT ||
        ct_program_find_io(c->prog, v->name) || ct_program_find_const(c->prog, v->name))
      continue;
    st = add_io(c, v, v->name, IO_TENSOR, p->gmem[k].addr, d);
  }
  return st;
}

static void stage_swap(cg_stage *a, cg_stage *b) {
  cg_stage t = *a;
  *a = *b, *b = t;
}

/* Stages group gi + 1 before group gi is emitted, so that the LOADs of gi + 1's tables and
 * resident operands that gi does not conflict with are emitted after gi's instructions and
 * before the barrier (ct_cg_prefetch_select). */
static ct_status model_groups(mg *c, ct_diag *d) {
  const ct_lg_plan *p = c->p;
  cg_stage cur = {0}, pre = {0};
  ct_status st = p->n_groups ? stage_group(c, 0, d) : CT_OK;
  if (!st) stage_swap(&cur, &c->stage);
  for (int gi = 0; gi < p->n_groups && !st; gi++) {
    const ct_lg_group *gr = &p->groups[gi];
    bool more = gi + 1 < p->n_groups;
    if (more) st = stage_group(c, gi + 1, d);
    if (!st && more && p->groups[gi + 1].prefetched) st = ct_cg_prefetch_select(gi, &cur, &c->stage, &pre, d);
    if (!st) st = ct_cg_sched_group(&c->sch, gi, &cur, gr->n_tiles, gr->pipelined, gr->loads_first, gr->stream, d);
    if (!st && more && p->groups[gi + 1].prefetched) st = ct_cg_prefetch_emit(&c->sch, gi + 1, &pre, d);
    stage_swap(&cur, &c->stage);
  }
  ct_cg_stage_free(&cur), ct_cg_stage_free(&pre);
  return st;
}

ct_status ct_cg_model(const ct_lg_plan *p, ct_program *prog, ct_diag *d) {
  mg *c = calloc(1, sizeof *c);
  if (!c) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  c->p = p, c->prog = prog, c->gm_extra = p->gmem_bytes;
  c->sch.prog = prog, c->sch.chip = &p->chip;
  c->lm_attr = calloc((size_t)(p->n_layers ? p->n_layers : 1), sizeof *c->lm_attr);
  c->seen = calloc((size_t)(p->g->n_values ? p->g->n_values : 1), 1);
  ct_status st = c->lm_attr && c->seen ? ct_lg_ctx_init(&c->x, p->g, &p->chip, &p->opt, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = model_groups(c, d);
  if (!st) st = model_io(c, d); /* after the layers: an op without codegen is reported first */
  if (!st) st = ct_cg_sched_end(&c->sch, d);
  if (!st && c->gm_extra > p->chip.gmem_bytes)
    st = ct_diag_set(d, CT_ERR_LIMIT, "the program needs %lld bytes of GMEM, the chip has %lld", (long long)c->gm_extra,
                     (long long)p->chip.gmem_bytes);
  ct_lg_ctx_free(&c->x);
  free(c->lm_attr);
  free(c->seen);
  free(c->view_bufs);
  ct_cg_stage_free(&c->stage);
  free(c);
  return st;
}
