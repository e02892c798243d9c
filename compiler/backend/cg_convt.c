/* cg_convt.c: codegen of ConvTranspose whose kernel equals its stride (k × k, stride k, no
 * padding, dilation 1, one group: the usual ×k learned upsampling). Each input pixel then
 * feeds its own k × k block of output pixels, so output pixel (i·k + a, j·k + b) of channel o
 * is a 1 × 1 convolution of input pixel (i, j) with W[:, o, a, b] (ops/tpu_mac.c
 * ct_tpu_convtranspose, the scatter form). One CONV computes all k·k·OC such channels into
 * scratch LMEM (weights reordered at compile time to [(a·k + b)·OC + o][c], bias and requant
 * pairs repeated per (a, b)); k·k MOVEs scatter them to the output rows and columns. Float
 * layers the same with f32 bias and no requant (the reference's float ConvTranspose adds the
 * products in channel order: ops/kernel.h ct_kern_convtranspose_ordered). */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/cg_int.h"

typedef struct convt_geo {
  int64_t k, C, OC, Q; /* kernel = stride, input / output channels, Q = k·k·OC */
} convt_geo;

static ct_status convt_geo_of(const ct_op *op, convt_geo *g, ct_diag *d) {
  const ct_value *x = op->in[0], *w = op->in[1], *y = op->out[0];
  if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4 || ct_attr_conv_group(op) != 1)
    return ct_cg_no_cg(op, "only 2-D ConvTranspose with one group", d);
  lg_win2 wn;
  int64_t kk = w->shape[2], opad[CT_ATTR_LIST_MAX];
  int n = 0;
  bool ok = ct_lg_window2(op, &wn) && ct_attr_convt_output_padding_n(op, opad, &n) && w->shape[3] == kk && wn.s[0] == kk &&
            wn.s[1] == kk && wn.d[0] == 1 && wn.d[1] == 1 && (!wn.has_k || wn.k[0] == kk);
  for (int i = 0; ok && i < 4; i++) ok = wn.p[i] == 0;
  for (int i = 0; ok && i < n; i++) ok = opad[i] == 0;
  ok = ok && y->shape[2] == x->shape[2] * kk && y->shape[3] == x->shape[3] * kk;
  if (!ok) return ct_cg_no_cg(op, "only ConvTranspose with kernel = stride, no padding, dilation 1", d);
  g->k = kk, g->C = x->shape[1], g->OC = y->shape[1], g->Q = kk * kk * g->OC;
  if (g->Q > 65535) return ct_cg_no_cg(op, "more than 65535 output channels times kernel taps", d);
  return ct_cg_need_sym(op, w, d);
}

ct_status ct_cg_convt_tables(mg *c, const ct_op *op, int li, const lg_table *tab, ct_diag *d) {
  convt_geo g;
  ct_status st = convt_geo_of(op, &g, d);
  if (st) return st;
  const ct_value *w = op->in[1], *b = op->n_in > 2 ? op->in[2] : NULL;
  if (!w->data || (b && !b->data)) return ct_cg_no_cg(op, "weights computed at run time", d);
  bool fl = !ct_cg_is_int(op->out[0]->dtype);
  int64_t wb = (int64_t)ct_dtype_size(w->dtype), ob = tab->bias_off, ow = tab->weights_off, bytes = tab->bytes;
  if (tab->entries != g.Q) return ct_diag_set(d, CT_ERR_INTERNAL, "layer \"%s\": its table holds %lld channels, not %lld", ct_cg_nm(op),
                                              (long long)tab->entries, (long long)g.Q);
  if (bytes / 64 > 65535) return ct_cg_no_cg(op, "reordered weights above 4 MiB", d);
  if (fl ? w->dtype != op->in[0]->dtype : w->dtype != CT_I8)
    return ct_cg_no_cg(op, "ConvTranspose weights not i8 (integer) or of the input's type (float)", d);
  if (fl && b && b->dtype != CT_F32) return ct_cg_no_cg(op, "a float ConvTranspose whose bias is not f32", d);
  uint8_t *t = calloc((size_t)bytes, 1);
  int32_t *m = malloc((size_t)g.OC * sizeof *m);
  int *s = malloc((size_t)g.OC * sizeof *s);
  if (!t || !m || !s) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st && !fl) st = ct_tq_rq(op, g.OC, m, s, d);
  const uint8_t *wd = w->data ? (const uint8_t *)w->data->data : NULL;
  for (int64_t q = 0; !st && q < g.Q; q++) { /* q = (a·k + b)·OC + o */
    int64_t o = q % g.OC, ab = q / g.OC;
    int32_t pair[2] = {fl ? 0 : m[o], fl ? 0 : s[o]}, bias = b && !fl ? (int32_t)ct_tensor_get_f64(b->data, o) : 0;
    float fbias = b && fl ? (float)ct_tensor_get_f64(b->data, o) : 0.0f;
    memcpy(t + q * 8, pair, 8);
    if (fl) memcpy(t + ob + q * 4, &fbias, 4);
    else memcpy(t + ob + q * 4, &bias, 4);
    for (int64_t ci = 0; ci < g.C; ci++)
      memcpy(t + ow + (q * g.C + ci) * wb, wd + ((ci * g.OC + o) * g.k * g.k + ab) * wb, (size_t)wb);
  }
  if (!st) st = ct_cg_add_table(c, op, li, t, tab, d);
  free(t), free(m), free(s);
  return st;
}

ct_status ct_cg_emit_convt(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  convt_geo g;
  ct_status st = convt_geo_of(op, &g, d);
  if (st) return st;
  box bx, by;
  ct_cg_box_of(c, x, &bx), ct_cg_box_of(c, y, &by);
  if (by.ext[1] != g.OC) return ct_cg_no_cg(op, "ConvTranspose cut along output channels", d);
  bool fl = !ct_cg_is_int(y->dtype);
  if (x->dtype == CT_I32 || ct_dtype_is_float(x->dtype) != fl) return ct_cg_no_cg(op, "ConvTranspose input not 8-bit or float", d);
  int64_t act, hi, zo;
  if (fl && (st = ct_cg_insn_act(op, y, &act, &hi, &zo, d))) return st;
  lg_table lt;
  ct_lg_layer_table(op, &lt);
  int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y), ob = lt.bias_off, ow = lt.weights_off;
  int64_t wb = (int64_t)ct_dtype_size(op->in[1]->dtype);
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  int64_t IW = x->shape[3], OW = y->shape[3], ih = bx.ext[2], ilo = bx.off[2], olo = by.off[2], ohi = olo + by.ext[2];
  int64_t eb = (int64_t)ct_dtype_size(y->dtype), scr = 0, nb = bx.ext[0], plane = nb * ih * IW * eb;
  if ((st = ct_cg_scratch_take(c, op, LG_SCRATCH_CONVT, NULL, plane, &scr, d))) return st;
  /* the k·k·OC channels in chunks [q0, q0 + nq) whose CONV result fits the free LMEM (one
   * plane at least: the planner's reserve) */
  int64_t nq = (c->p->chip.lmem_bytes - scr) / plane;
  if (nq > g.Q) nq = g.Q;
  c->lm_scratch = scr + nq * plane;
  int64_t tab = c->lm_attr[li];
  for (int64_t q0 = 0; q0 < g.Q && !st; q0 += nq) {
    int64_t q1 = q0 + nq < g.Q ? q0 + nq : g.Q;
    ct_insn in;
    memset(&in, 0, sizeof in);
    in.op = CT_ISA_CONV;
    struct ct_insn_conv *cv = &in.conv;
    cv->in = lx, cv->out = scr, cv->wt = tab + ow + q0 * g.C * wb, cv->rq = tab + q0 * 8, cv->bias = tab + ob + q0 * 4;
    cv->has_bias = 1, cv->n = nb, cv->ic = g.C, cv->ih = ih, cv->iw = IW, cv->oc = q1 - q0, cv->oh = ih, cv->ow = IW;
    cv->kh = cv->kw = 1, cv->stride_h = cv->stride_w = 1, cv->dil_h = cv->dil_w = 1, cv->groups = 1;
    cv->dt_in = x->dtype, cv->dt_w = op->in[1]->dtype, cv->dt_out = y->dtype, cv->rq_mode = CT_ISA_RQ_CHANNEL;
    cv->act = CT_ISA_ACT_NONE, cv->zp_in = ct_tq_zp(x), cv->zp_out = ct_tq_zp(y);
    if (fl) cv->rq_mode = CT_ISA_RQ_NONE, cv->rq = 0, cv->act = act, cv->act_hi = hi, cv->zp_out = zo; /* f32 acc + bias */
    if ((st = ct_cg_put(c, &in, ct_cg_nm(op), t, d))) return st;
    for (int64_t q = q0; q < q1 && !st;) { /* one MOVE per tap (a, b) and run of output channels */
      int64_t ab = q / g.OC, o0 = q % g.OC, o1 = ab * g.OC + g.OC < q1 ? g.OC : q1 - ab * g.OC, a = ab / g.k, b = ab % g.k;
      /* input rows i of the tile with olo <= i·k + a < ohi */
      int64_t ia = olo - a < 0 ? 0 : (olo - a + g.k - 1) / g.k, ib = ohi - 1 - a < 0 ? 0 : (ohi - 1 - a) / g.k + 1;
      if (ia < ilo) ia = ilo;
      if (ib > ilo + ih) ib = ilo + ih;
      q = ab * g.OC + o1;
      if (ib <= ia) continue;
      memset(&in, 0, sizeof in);
      in.op = CT_ISA_MOVE;
      struct ct_insn_move *mv = &in.move;
      mv->src = scr + (((ab * g.OC + o0 - q0) * ih) + (ia - ilo)) * IW * eb;
      mv->dst = ly + ((o0 * by.ext[2] + ia * g.k + a - olo) * OW + b) * eb, mv->dtype = y->dtype;
      mv->n = nb, mv->c = o1 - o0, mv->h = ib - ia, mv->w = IW;
      mv->src_sn = (q1 - q0) * ih * IW, mv->src_sc = ih * IW, mv->src_sh = IW, mv->src_sw = 1;
      mv->dst_sn = g.OC * by.ext[2] * OW, mv->dst_sc = by.ext[2] * OW, mv->dst_sh = g.k * OW, mv->dst_sw = g.k;
      st = ct_cg_put(c, &in, ct_cg_nm(op), t, d);
    }
  }
  return st;
}
