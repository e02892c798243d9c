/* cg_ops.c: ISA instructions of one layer of one tile (cg_int.h ct_cg_emit_layer): CONV, DWCONV,
 * POOL, ELTWISE, LUT, REQUANT and MATMUL, and the group's per-layer tables. */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/cg_int.h"
#include "ops/ops_util.h"

/* The refusal of a float op without codegen (the list is docs/codegen_ops.md). */
static ct_status no_float_cg(const ct_op *op, ct_diag *d) {
  return ct_cg_no_cg(op, "a float op outside docs/codegen_ops.md \"Float programs\"", d);
}

/* The requant pairs of a Conv / Gemm / MatMul with an integer result (ct_tq_rq), t->entries. */
static ct_status rq_table(mg *c, const ct_op *op, int li, const lg_table *tab, ct_diag *d) {
  int64_t n = tab->entries;
  int32_t *t = malloc((size_t)n * 2 * sizeof *t), *m = malloc((size_t)n * sizeof *m);
  int *s = malloc((size_t)n * sizeof *s);
  ct_status st = !t || !m || !s ? ct_diag_set(d, CT_ERR_LIMIT, "out of memory") : CT_OK;
  if (!st) st = ct_tq_rq(op, n, m, s, d);
  for (int64_t i = 0; !st && i < n; i++) t[2 * i] = m[i], t[2 * i + 1] = s[i];
  if (!st) st = ct_cg_add_table(c, op, li, t, tab, d);
  free(t), free(m), free(s);
  return st;
}

/* A Lut's table attribute as bytes (int16 little-endian entries for the 16-bit LUT). */
static ct_status lut_table(mg *c, const ct_op *op, int li, const lg_table *tab, ct_diag *d) {
  int n = 0;
  const int64_t *v = ct_attr_lut_table(op, &n);
  bool w16 = tab->dtype == CT_I16;
  if (n != tab->entries)
    return ct_diag_set(d, CT_ERR_INPUT, "layer \"%s\" (Lut): needs a %d-entry table (or one per channel)", ct_cg_nm(op),
                       w16 ? CT_QUANT_LUT16_ENTRIES : 256);
  uint8_t *b = malloc((size_t)tab->bytes);
  for (int i = 0; b && i < n; i++) {
    if (w16) b[2 * i] = (uint8_t)((uint64_t)v[i] & 0xff), b[2 * i + 1] = (uint8_t)(((uint64_t)v[i] >> 8) & 0xff);
    else b[i] = (uint8_t)v[i];
  }
  ct_status st = b ? ct_cg_add_table(c, op, li, b, tab, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  free(b);
  return st;
}

/* The per-layer tables of the group, as ct_lg_layer_table describes them (the planner reserved
 * the same): requant pairs, LUT bytes, ConvTranspose's reordered weights, a zero B. */
ct_status ct_cg_group_tables(mg *c, ct_diag *d) {
  ct_status st = CT_OK;
  for (int k = 0; k < c->gr->n_layers && !st; k++) {
    int li = c->gr->first + k;
    const ct_op *op = c->p->layers[li].op;
    if (!ct_lg_border_cast(c->p->g, op) && c->p->layers[li].trait != CT_LG_ALIAS && !ct_cg_is_int(op->out[0]->dtype) && !ct_cg_float_ok(op))
      return no_float_cg(op, d);
    lg_table tab;
    ct_lg_layer_table(op, &tab);
    if (c->tab_part && (c->p->layers[li].unit == CT_LG_UNIT_MXU) != (c->tab_part == 1)) continue;
    if (tab.kind == LG_TABLE_RQ) st = rq_table(c, op, li, &tab, d);
    else if (tab.kind == LG_TABLE_CONVT) st = ct_cg_convt_tables(c, op, li, &tab, d);
    else if (tab.kind == LG_TABLE_LUT) st = lut_table(c, op, li, &tab, d);
    else if (tab.kind == LG_TABLE_ZERO_B) {
      void *z = calloc((size_t)tab.bytes, 1);
      st = z ? ct_cg_add_table(c, op, li, z, &tab, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
      free(z);
    }
  }
  return st;
}

/* The space-to-depth of a patchify conv's tile (ct_lg_patchify): input rows [olo·k, ohi·k) at xa
 * → scratch [n, C·k·k, oh, ow], channel (c·k + a)·k + b = pixel (a, b) of each patch; one
 * MOVE per (n, c, a). Returns the scratch address in *scr. */
static ct_status space_to_depth(mg *c, const ct_op *op, const box *bx, int64_t xa, int64_t oh, int64_t *scr, int64_t t,
                                ct_diag *d) {
  const ct_value *x = op->in[0];
  int64_t k = op->in[1]->shape[2], C = x->shape[1], IW = x->shape[3], ow = op->out[0]->shape[3];
  int64_t eb = (int64_t)ct_dtype_size(x->dtype), ih = bx->ext[2];
  ct_status st = ct_cg_scratch_take(c, op, LG_SCRATCH_PATCHES, NULL, bx->ext[0] * C * k * k * oh * ow * eb, scr, d);
  for (int64_t n = 0; n < bx->ext[0] && !st; n++)
    for (int64_t ch = 0; ch < C && !st; ch++)
      for (int64_t a = 0; a < k && !st; a++) {
        int64_t src = xa + ((n * C + ch) * ih + a) * IW * eb, dst = *scr + ((n * C + ch) * k + a) * k * oh * ow * eb;
        int64_t e[4] = {1, k, oh, ow}, ss[4] = {0, 1, k * IW, k}, ds[4] = {0, oh * ow, ow, 1};
        st = ct_cg_move4(c, op, x->dtype, src, ss, dst, ds, e, t, d);
      }
  return st;
}

static ct_status emit_conv(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *wv = op->in[1], *y = op->out[0];
  const ct_value *bv = op->n_in > 2 ? op->in[2] : NULL;
  box bx, by;
  ct_cg_box_of(c, x, &bx), ct_cg_box_of(c, y, &by);
  int64_t G = ct_attr_conv_group(op);
  ct_status st = ct_cg_need_sym(op, wv, d);
  if (st) return st;
  bool dw = G != 1 && G == x->shape[1] && G == y->shape[1];
  if (x->ndim != 4 || G < 1 || x->shape[1] % G || y->shape[1] % G) return ct_cg_no_cg(op, "a conv whose groups do not divide its NCHW channels", d);
  int64_t c0 = by.off[1];
  if (by.ext[1] != y->shape[1] && (G != 1 || bx.ext[1] != x->shape[1]))
    return ct_cg_no_cg(op, dw ? "an output-channel cut of a depthwise conv" : "an output-channel cut of a grouped conv", d);
  win w;
  int64_t xa = ct_cg_lmem_of(c->gr, x);
  if (xa < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  if ((st = ct_cg_window_of(c, op, li, &bx, &by, wv->shape[2], wv->shape[3], &w, &xa, t, d))) return st;
  bool patches = ct_lg_patchify(op);
  if (patches) { /* patches → channels, then a 1 × 1 CONV */
    if ((st = space_to_depth(c, op, &bx, xa, w.oh, &xa, t, d))) return st;
    bx.ext[2] = w.ih = w.oh, w.kh = w.kw = w.sh = w.sw = 1, w.pt = w.pb = w.pl = w.pr = 0;
  }
  if (w.sh > 15 || w.sw > 15 || w.dh > 15 || w.dw > 15)
    return ct_cg_no_cg(op, "stride or dilation above 15 (the CONV fields are 4 bits)", d);
  int64_t act, hi, zo;
  if ((st = ct_cg_insn_act(op, y, &act, &hi, &zo, d))) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = dw ? CT_ISA_DWCONV : CT_ISA_CONV; /* grouped: one CONV with `groups` (cmodel/exec_mxu.c) */
  struct ct_insn_conv *cv = &in.conv;
  cv->in = xa, cv->out = ct_cg_lmem_of(c->gr, y), cv->wt = ct_cg_lmem_of(c->gr, wv), cv->rq = c->lm_attr[li] + 8 * c0;
  cv->bias = bv ? ct_cg_lmem_of(c->gr, bv) : 0, cv->has_bias = bv != NULL;
  if (bv && !ct_cg_is_wslice(c, bv)) cv->bias += 4 * c0; /* whole bias resident: index the slice */
  if (!ct_cg_is_wslice(c, wv)) cv->wt += c0 * wv->shape[1] * wv->shape[2] * wv->shape[3] * (int64_t)ct_dtype_size(wv->dtype);
  cv->n = bx.ext[0], cv->ic = patches ? wv->shape[1] * wv->shape[2] * wv->shape[3] : x->shape[1], cv->ih = w.ih;
  cv->iw = patches ? y->shape[3] : x->shape[3];
  cv->oc = by.ext[1], cv->oh = w.oh, cv->ow = y->shape[3];
  cv->kh = w.kh, cv->kw = w.kw, cv->stride_h = w.sh, cv->stride_w = w.sw;
  cv->pad_t = w.pt, cv->pad_b = w.pb, cv->pad_l = w.pl, cv->pad_r = w.pr, cv->dil_h = w.dh, cv->dil_w = w.dw;
  cv->groups = G, cv->dt_in = x->dtype, cv->dt_w = wv->dtype, cv->dt_out = y->dtype, cv->rq_mode = CT_ISA_RQ_CHANNEL;
  if (!ct_cg_is_int(y->dtype)) cv->rq_mode = CT_ISA_RQ_NONE, cv->rq = 0; /* float: the f32 accumulator, rounded */
  cv->act = act, cv->act_hi = hi;
  cv->zp_in = ct_tq_zp(x), cv->zp_out = zo;
  if (cv->in < 0 || cv->out < 0 || cv->wt < 0 || cv->bias < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* Is op a ReduceMean of an NCHW tensor over exactly H and W? Its integer form (Tpu
 * ReduceMean: Σ (x − zp) requantized, ops/tpu_elt.c) is then GlobalAveragePool's, whatever
 * keepdims (the [N, C] result has the bytes of [N, C, 1, 1]). */
static bool spatial_mean(const ct_op *op) {
  bool red[CT_MAX_DIMS] = {false}, noop = false;
  const ct_tensor *axes = op->n_in > 1 && op->in[1] ? op->in[1]->data : NULL;
  if (op->in[0]->ndim != 4 || (op->n_in > 1 && op->in[1] && !axes) || ct_ops_reduce_axes(op, 4, axes, red, &noop, NULL))
    return false;
  return !noop && !red[0] && !red[1] && red[2] && red[3];
}

static ct_status emit_pool(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  ct_cg_box_of(c, x, &bx), ct_cg_box_of(c, y, &by);
  bool mean = op->kind == CT_OP_REDUCEMEAN;
  if (mean && !spatial_mean(op)) return ct_cg_no_cg(op, "ReduceMean other than over H and W of an NCHW tensor", d);
  bool global = op->kind == CT_OP_GLOBALAVERAGEPOOL || op->kind == CT_OP_GLOBALMAXPOOL || mean;
  bool avg = op->kind == CT_OP_GLOBALAVERAGEPOOL || op->kind == CT_OP_AVERAGEPOOL || mean;
  if (x->ndim != 4) return ct_cg_no_cg(op, "pooling needs NCHW", d);
  win w = {.kh = x->shape[2], .kw = x->shape[3], .sh = 1, .sw = 1, .dh = 1, .dw = 1, .ih = bx.ext[2], .oh = 1};
  ct_status st = CT_OK;
  int64_t xa = ct_cg_lmem_of(c->gr, x);
  if (xa < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  if (!global) {
    lg_win2 wn;
    if (!ct_lg_window2(op, &wn) || !wn.has_k) return ct_cg_no_cg(op, "needs a 2-D kernel_shape", d);
    if ((st = ct_cg_window_of(c, op, li, &bx, &by, wn.k[0], wn.k[1], &w, &xa, t, d))) return st;
    if (w.dh != 1 || w.dw != 1) return ct_cg_no_cg(op, "dilated pooling", d);
  } else if (bx.ext[2] != x->shape[2]) {
    return ct_cg_no_cg(op, "global pooling cut along H", d);
  }
  int32_t m = 1;
  int s = 0;
  bool fl = !ct_cg_is_int(x->dtype);
  if (avg && !fl && (st = ct_tq_rq(op, 1, &m, &s, d))) return st;
  if (m < -32768 || m > 32767) return ct_cg_no_cg(op, "pool multiplier does not fit 16 bits", d);
  if (!avg && ct_tq_zp(x) != ct_tq_zp(y)) return ct_cg_no_cg(op, "max pooling with different input and output zero points", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_POOL;
  struct ct_insn_pool *pl = &in.pool;
  pl->in = xa, pl->out = ct_cg_lmem_of(c->gr, y);
  pl->n = bx.ext[0], pl->c = bx.ext[1], pl->ih = w.ih, pl->iw = x->shape[3], pl->oh = w.oh, pl->ow = global ? 1 : y->shape[3];
  pl->kh = w.kh, pl->kw = w.kw, pl->stride_h = w.sh, pl->stride_w = w.sw;
  pl->pad_t = w.pt, pl->pad_b = w.pb, pl->pad_l = w.pl, pl->pad_r = w.pr;
  pl->mode = avg ? CT_ISA_POOL_AVG : CT_ISA_POOL_MAX, pl->dt = x->dtype, pl->m = m, pl->s = s;
  pl->zp_in = ct_tq_zp(x), pl->zp_out = ct_tq_zp(y);
  pl->count_pad = fl && op->kind == CT_OP_AVERAGEPOOL && ct_attr_pool_count_include_pad(op); /* float mean */
  if (x->dtype != y->dtype) return ct_cg_no_cg(op, "pooling that changes the storage type", d);
  if (pl->in < 0 || pl->out < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

static ct_status emit_eltwise(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  if (op->n_in != 2) return ct_cg_no_cg(op, "an elementwise op of other than two inputs", d);
  const ct_value *a = op->in[0], *b = op->in[1], *y = op->out[0];
  box ba, bb, by;
  if (!ct_cg_box_of(c, a, &ba) || !ct_cg_box_of(c, b, &bb) || !ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "rank above 4", d);
  if (op->kind == CT_OP_DIV && ct_cg_is_int(y->dtype)) return ct_cg_no_cg(op, "an integer Div", d);
  int nm_ = 0, ns = 0;
  const int64_t *mv = ct_attr_rq_multiplier(op, &nm_), *sv = ct_attr_rq_rshift(op, &ns);
  const int64_t zero[3] = {0, 0, 0};
  if (!ct_cg_is_int(y->dtype)) mv = sv = zero; /* float: a op b in f32, rounded once */
  else if (nm_ != 2 || ns != 3) return ct_cg_no_cg(op, "needs multiplier [m_a, m_b] and rshift [s_a, s_b, s_out]", d);
  for (int i = 0; i < 2; i++)
    if (mv[i] < -32768 || mv[i] > 32767) return ct_cg_no_cg(op, "multiplier does not fit 16 bits", d);
  int64_t act, hi, zo;
  ct_status st = ct_cg_insn_act(op, y, &act, &hi, &zo, d);
  if (st) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_ELTWISE;
  struct ct_insn_eltwise *e = &in.eltwise;
  e->a = ct_cg_lmem_of(c->gr, a), e->b = ct_cg_lmem_of(c->gr, b), e->out = ct_cg_lmem_of(c->gr, y);
  if (e->a < 0 || e->b < 0 || e->out < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  /* an operand tile holding more rows than the output (another reader's halo): gather them */
  box *bo[2] = {&ba, &bb};
  int64_t *ad[2] = {&e->a, &e->b};
  st = ct_cg_fit_rows(c, op, a, &ba, &by, &e->a, t, d);
  if (!st && b == a) bb = ba, e->b = e->a; /* one gather serves both operands (ct_lg_scratch_bytes) */
  else if (!st) st = ct_cg_fit_rows(c, op, b, &bb, &by, &e->b, t, d);
  if (st) return st;
  /* a resident constant operand whole along the output's cut dim: its slice of the tile, when
   * that slice is contiguous (every outer dim 1) — Swin's shifted-window mask */
  for (int k = 0; k < 2; k++) {
    box *q = bo[k];
    if (!ct_lg_is_weight(op->in[k])) continue;
    for (int i = 0; i < 4; i++) {
      bool outer1 = true;
      for (int j = 0; j < i; j++) outer1 = outer1 && q->ext[j] == 1;
      if (q->ext[i] != by.full[i] || by.ext[i] == by.full[i] || !outer1) continue;
      int64_t stride = (int64_t)ct_dtype_size(op->in[k]->dtype);
      for (int j = i + 1; j < 4; j++) stride *= q->ext[j];
      *ad[k] += by.off[i] * stride, q->off[i] = by.off[i], q->ext[i] = by.ext[i];
    }
  }
  e->n = by.ext[0], e->c = by.ext[1], e->h = by.ext[2], e->w = by.ext[3];
  for (int i = 0; i < 4; i++) {
    if (ba.ext[i] != by.ext[i]) e->bcast_a |= ba.ext[i] == 1 ? 1 << i : 0x10;
    if (bb.ext[i] != by.ext[i]) e->bcast_b |= bb.ext[i] == 1 ? 1 << i : 0x10;
  }
  if (e->bcast_a > 15 || e->bcast_b > 15) return ct_cg_no_cg(op, "operand tiles that do not broadcast", d);
  e->op = op->kind == CT_OP_ADD ? CT_ISA_ELT_ADD : op->kind == CT_OP_SUB ? CT_ISA_ELT_SUB
          : op->kind == CT_OP_DIV ? CT_ISA_ELT_DIV : op->kind == CT_OP_MAX ? CT_ISA_ELT_MAX
          : op->kind == CT_OP_MIN ? CT_ISA_ELT_MIN : CT_ISA_ELT_MUL;
  e->dt_a = a->dtype, e->dt_b = b->dtype, e->dt_out = y->dtype;
  e->m_a = mv[0], e->m_b = mv[1], e->s_a = sv[0], e->s_b = sv[1], e->s_out = sv[2];
  e->zp_a = ct_tq_zp(a), e->zp_b = ct_tq_zp(b), e->zp_out = zo;
  e->act = act, e->act_hi = hi;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* LUT, REQUANT (Requant, integer Cast) and CAST: one input, same tile shape. */
static ct_status emit_unary(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  if (!ct_cg_box_of(c, y, &by) || !ct_cg_box_of(c, x, &bx)) return ct_cg_no_cg(op, "rank above 4", d);
  int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  ct_status st0 = ct_cg_fit_rows(c, op, x, &bx, &by, &lx, t, d);
  if (st0) return st0;
  ct_insn in;
  memset(&in, 0, sizeof in);
  if (op->kind == CT_OP_LUT) {
    in.op = CT_ISA_LUT;
    bool pc = ct_lg_lut_per_channel(op); /* one table per channel: this tile's channels' tables */
    in.lut.in = lx, in.lut.out = ly, in.lut.table = c->lm_attr[li] + (pc ? ct_lg_lut_stride(op) * by.off[1] : 0);
    in.lut.n = by.ext[0], in.lut.c = by.ext[1], in.lut.h = by.ext[2], in.lut.w = by.ext[3];
    in.lut.dt_in = x->dtype, in.lut.dt_out = y->dtype, in.lut.per_channel = pc;
  } else if (ct_cg_is_int(x->dtype) && ct_cg_is_int(y->dtype)) {
    int32_t m;
    int s;
    ct_quant_act act = CT_QUANT_ACT_NONE;
    int32_t hi = 0;
    ct_status st = ct_tq_rq(op, 1, &m, &s, d);
    if (!st && op->kind == CT_OP_REQUANT) st = ct_tq_act(op, &act, &hi, d); /* fused relu / clip */
    if (st) return st;
    in.op = CT_ISA_REQUANT;
    struct ct_insn_requant *r = &in.requant;
    r->in = lx, r->out = ly, r->n = by.ext[0], r->c = by.ext[1], r->h = by.ext[2], r->w = by.ext[3];
    r->rq_mode = CT_ISA_RQ_TENSOR, r->m = m, r->s = s, r->zp_in = ct_tq_zp(x), r->zp_out = ct_tq_zp(y);
    r->dt_in = x->dtype, r->dt_out = y->dtype;
    r->act = ct_cg_act_of(act), r->act_hi = act == CT_QUANT_ACT_CLAMP ? hi : 0;
  } else {
    return ct_cg_no_cg(op, "float casts inside the model", d);
  }
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

static ct_status emit_matmul(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *a = op->in[0], *b = op->in[1], *y = op->out[0];
  const ct_value *bias = op->kind == CT_OP_GEMM && op->n_in > 2 ? op->in[2] : NULL;
  box ba, bb, by;
  if (!ct_cg_box_of(c, a, &ba) || !ct_cg_box_of(c, y, &by) || !ct_cg_box_of(c, b, &bb) || b->ndim < 2 || a->ndim > 4)
    return ct_cg_no_cg(op, "only A of rank <= 4 times a B of rank 2..4", d);
  bool bbat = b->ndim > 2 && bb.ext[0] * bb.ext[1] > 1; /* a batch of Bs (activations), one per A */
  if (b->ndim > 2 && (ct_lg_is_weight(b) || (bbat && (bb.ext[0] != ba.ext[0] || bb.ext[1] != ba.ext[1]))))
    return ct_cg_no_cg(op, "a batched B that is a weight or does not match A's batch", d);
  if (b->ndim > 2 && by.ext[3] != y->shape[y->ndim - 1]) return ct_cg_no_cg(op, "a batched B cut along output features", d);
  int64_t f0 = by.off[3], nf = by.ext[3];
  bool tb = op->kind == CT_OP_GEMM && ct_attr_gemm_transB(op);
  if (nf != y->shape[y->ndim - 1] && !ct_cg_is_wslice(c, b) && !tb)
    return ct_cg_no_cg(op, "cut along output features of a resident [K, N] B", d);
  if (op->kind == CT_OP_GEMM && ct_attr_gemm_transA(op)) return ct_cg_no_cg(op, "transA", d);
  if (op->kind == CT_OP_GEMM && (ct_attr_gemm_alpha(op) != 1 || (bias && ct_attr_gemm_beta(op) != 1)))
    return ct_cg_no_cg(op, "alpha or beta other than 1 (lowering folds them: canonical-gemm)", d);
  if (bias && (ct_lg_numel(bias) != y->shape[y->ndim - 1] || bias->ndim > 2 || (bias->ndim == 2 && bias->shape[0] != 1)))
    return ct_cg_no_cg(op, "a C other than one value per column ([N] or [1, N])", d);
  ct_status st = ct_cg_need_sym(op, b, d);
  int64_t act, hi, zo;
  if (!st) st = ct_cg_insn_act(op, y, &act, &hi, &zo, d);
  if (st) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MATMUL;
  struct ct_insn_matmul *mm = &in.matmul;
  mm->a = ct_cg_lmem_of(c->gr, a), mm->b = ct_cg_lmem_of(c->gr, b), mm->out = ct_cg_lmem_of(c->gr, y), mm->rq = c->lm_attr[li] + 8 * f0;
  mm->bias = bias ? ct_cg_lmem_of(c->gr, bias) : 0, mm->has_bias = bias != NULL;
  if (bias && !ct_cg_is_wslice(c, bias)) mm->bias += 4 * f0;
  if (!ct_cg_is_wslice(c, b)) mm->b += f0 * ba.ext[3] * (int64_t)ct_dtype_size(b->dtype); /* rows f0.. of a resident [N, K] B */
  mm->batch = ba.ext[0] * ba.ext[1], mm->m = ba.ext[2], mm->k = ba.ext[3], mm->n = nf;
  mm->b_trans = tb, mm->b_bcast = !bbat;
  mm->dt_a = a->dtype, mm->dt_b = b->dtype, mm->dt_out = y->dtype, mm->rq_mode = CT_ISA_RQ_CHANNEL;
  if (ct_tq_raw_out(op) || !ct_cg_is_int(y->dtype)) mm->rq_mode = CT_ISA_RQ_NONE, mm->rq = 0; /* the accumulator itself */
  mm->act = act, mm->act_hi = hi;
  mm->zp_a = ct_tq_zp(a), mm->zp_out = zo;
  if (mm->a < 0 || mm->b < 0 || mm->out < 0 || mm->bias < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

ct_status ct_cg_emit_layer(mg *c, int li, int64_t t, ct_diag *d) {
  const ct_op *op = c->p->layers[li].op;
  if (ct_lg_border_cast(c->p->g, op) || c->p->layers[li].trait == CT_LG_ALIAS) return CT_OK;
  c->lm_scratch = c->lm_extra, c->li = li;
  for (int i = 0; i < op->n_out; i++)
    if (!ct_cg_is_int(op->out[i]->dtype) && !ct_cg_float_ok(op)) return no_float_cg(op, d);
  bool float_cast = op->kind == CT_OP_CAST && (!ct_cg_is_int(op->in[0]->dtype) || !ct_cg_is_int(op->out[0]->dtype));
  if (op->kind == CT_OP_SOFTMAX || op->kind == CT_OP_LAYERNORM || float_cast ||
      ((op->kind == CT_OP_RELU || op->kind == CT_OP_CLIP || ct_cg_float_fn(op)) && !ct_cg_is_int(op->out[0]->dtype)))
    return ct_cg_emit_float(c, op, li, t, d);
  switch (op->kind) {
  case CT_OP_CONV: return emit_conv(c, op, li, t, d);
  case CT_OP_ADD:
  case CT_OP_SUB:
  case CT_OP_DIV:
  case CT_OP_MAX:
  case CT_OP_MIN:
  case CT_OP_MUL: return emit_eltwise(c, op, t, d);
  case CT_OP_AVERAGEPOOL:
  case CT_OP_GLOBALAVERAGEPOOL:
  case CT_OP_MAXPOOL:
  case CT_OP_REDUCEMEAN:
  case CT_OP_GLOBALMAXPOOL: return emit_pool(c, op, li, t, d);
  case CT_OP_LUT:
  case CT_OP_REQUANT:
  case CT_OP_CAST: return emit_unary(c, op, li, t, d);
  case CT_OP_GEMM:
  case CT_OP_MATMUL: return emit_matmul(c, op, li, t, d);
  case CT_OP_RESIZE:
  case CT_OP_PAD:
  case CT_OP_CONCAT:
  case CT_OP_TRANSPOSE:
  case CT_OP_SLICE:
  case CT_OP_SPLIT: return ct_cg_emit_data(c, op, li, t, d);
  case CT_OP_CONVTRANSPOSE: return ct_cg_emit_convt(c, op, li, t, d);
  default: return ct_cg_no_cg(op, NULL, d);
  }
}

