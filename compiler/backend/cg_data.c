/* cg_data.c: codegen of the data-movement layers (cg_int.h), LMEM to LMEM on the load
 * engine: Resize (nearest, whole factors) as one strided MOVE per tile that repeats rows
 * and columns; Concat as a REQUANT per input (the Tpu reference rescales every input to
 * the output's scale, ops/tpu_elt.c) and a MOVE into its block; Transpose and Slice as one
 * MOVE whose source strides permute or step through the input tile; Split as one MOVE per
 * output from its block of the input tile. */
#include <math.h>
#include <string.h>

#include "compiler/backend/cg_int.h"
#include "ops/ops_util.h"
#include "ops/tpu_util.h"

#define AL(x) (((x) + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN)

/* Does the nearest-neighbour mapping of op send output index o to input index o / f along
 * an axis enlarged f times? asymmetric + floor: x = o / f, floor → o / f. half_pixel (and
 * pytorch_half_pixel, out > 1): x = (o + 0.5) / f − 0.5 lies in (k − 0.5, k + 0.5) for o in
 * [k·f, (k + 1)·f) and is never a tie, so either round_prefer_* gives k. */
static bool nearest_is_div(const ct_op *op) {
  const char *mode = ct_attr_resize_mode(op), *ctm = ct_attr_resize_coordinate_transformation_mode(op);
  const char *nm_ = ct_attr_resize_nearest_mode(op);
  if (strcmp(mode, "nearest")) return false;
  if (!strcmp(ctm, "asymmetric")) return !strcmp(nm_, "floor");
  if (!strcmp(ctm, "half_pixel") || !strcmp(ctm, "pytorch_half_pixel"))
    return !strcmp(nm_, "round_prefer_floor") || !strcmp(nm_, "round_prefer_ceil");
  return false;
}

/* Resize, linear (ct_tpu_resize_lin): one RESIZE per tile over the tile's n·c planes, the
 * rows of the tile's output box (whole-output rows by.off[2] on) from the input box's rows
 * (whole-input rows bx.off[2] on); W is never cut. */
static ct_status emit_resize_lin(mg *c, const ct_op *op, const ct_tpu_lin *lin, const box *bx, const box *by, int64_t t,
                                 ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  if (bx->ext[0] != by->ext[0] || bx->ext[1] != by->ext[1] || bx->ext[3] != x->shape[3] || by->ext[3] != y->shape[3])
    return ct_cg_no_cg(op, "linear Resize cut along W or differently along N, C", d);
  bool q8 = (x->dtype == CT_I8 || x->dtype == CT_U8) && y->dtype == x->dtype;
  if (!q8 && !(ct_dtype_is_float(x->dtype) && ct_dtype_is_float(y->dtype)))
    return ct_cg_no_cg(op, "linear Resize other than i8 / u8 or float", d);
  if (q8 && (x->n_scale != 1 || y->n_scale != 1 || x->scale[0] != y->scale[0] || ct_tq_zp(x) != ct_tq_zp(y)))
    return ct_cg_no_cg(op, "integer linear Resize whose input and output quant params differ", d);
  for (int i = 0; i < 4; i++)
    if (x->shape[i] > 65535 || y->shape[i] > 65535) return ct_cg_no_cg(op, "Resize dims above 65535", d);
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_RESIZE;
  struct ct_insn_resize *r = &in.resize;
  r->in = lx, r->out = ly, r->n = bx->ext[0], r->c = bx->ext[1];
  r->ih = bx->ext[2], r->iw = x->shape[3], r->oh = by->ext[2], r->ow = y->shape[3];
  r->full_ih = x->shape[2], r->full_oh = y->shape[2], r->ih0 = bx->off[2], r->oh0 = by->off[2];
  r->ctm = lin->ctm, r->dt_in = x->dtype, r->dt_out = y->dtype, r->zp = q8 ? ct_tq_zp(x) : 0;
  r->scale_h = lin->scale_h, r->scale_w = lin->scale_w;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* Resize, nearest, NCHW, H and W enlarged by whole factors fh, fw (N, C unchanged): the
 * tile's rows r = n·c·IH of the input are copied with a MOVE whose n axis repeats each
 * element fw times (source stride 0, destination stride 1), c runs over the rows (source IW,
 * destination fh·OW), h repeats each row fh times (source 0, destination OW) and w runs
 * over the columns (source 1, destination fw). */
static ct_status emit_resize(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  if (x->ndim != 4 || y->ndim != 4 || !ct_cg_box_of(c, x, &bx) || !ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "Resize of a non-NCHW tensor", d);
  ct_tpu_lin lin;
  if (ct_tpu_resize_lin(op, &lin)) return emit_resize_lin(c, op, &lin, &bx, &by, t, d);
  if (!nearest_is_div(op)) return ct_cg_no_cg(op, "only nearest Resize whose index map is o / factor, or linear Resize of H and W (docs/codegen_ops.md)", d);
  int64_t ih = x->shape[2], iw = x->shape[3], oh = y->shape[2], ow = y->shape[3];
  if (x->shape[0] != y->shape[0] || x->shape[1] != y->shape[1] || oh % ih || ow % iw)
    return ct_cg_no_cg(op, "Resize other than a whole-factor enlargement of H and W", d);
  if (bx.ext[2] != ih || by.ext[2] != oh || bx.ext[0] != by.ext[0] || bx.ext[1] != by.ext[1])
    return ct_cg_no_cg(op, "Resize cut along H", d);
  if (x->dtype != y->dtype) return ct_cg_no_cg(op, "Resize that changes the storage type", d);
  int64_t fh = oh / ih, fw = ow / iw, lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  if (fw > 65535 || fh > 65535 || iw > 65535) return ct_cg_no_cg(op, "Resize dims above 65535", d);
  int64_t eb = (int64_t)ct_dtype_size(x->dtype), rows = bx.ext[0] * bx.ext[1] * ih;
  ct_status st = CT_OK;
  for (int64_t r0 = 0; r0 < rows && !st; r0 += 65535) {
    int64_t nr = rows - r0 < 65535 ? rows - r0 : 65535;
    ct_insn in;
    memset(&in, 0, sizeof in);
    in.op = CT_ISA_MOVE;
    struct ct_insn_move *mv = &in.move;
    mv->src = lx + r0 * iw * eb, mv->dst = ly + r0 * fh * ow * eb, mv->dtype = x->dtype;
    mv->n = fw, mv->c = nr, mv->h = fh, mv->w = iw;
    mv->src_sn = 0, mv->src_sc = iw, mv->src_sh = 0, mv->src_sw = 1;
    mv->dst_sn = 1, mv->dst_sc = fh * ow, mv->dst_sh = ow, mv->dst_sw = fw;
    st = ct_cg_put(c, &in, ct_cg_nm(op), t, d);
  }
  return st;
}

/* Dense strides (elements) of a box's extents. */
static void dense_strides(const box *b, int64_t st[4]) {
  st[3] = 1;
  for (int i = 2; i >= 0; i--) st[i] = st[i + 1] * b->ext[i + 1];
}

ct_status ct_cg_move4(mg *c, const ct_op *op, ct_dtype dt, int64_t src, const int64_t ss[4], int64_t dst,
                       const int64_t ds[4], const int64_t e[4], int64_t t, ct_diag *d) {
  for (int i = 0; i < 4; i++)
    if (e[i] > 65535) return ct_cg_no_cg(op, "a tile dimension above 65535", d);
  if (e[0] * e[1] * e[2] * e[3] == 0) return CT_OK;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_MOVE;
  struct ct_insn_move *mv = &in.move;
  mv->src = src, mv->dst = dst, mv->dtype = dt;
  mv->n = e[0], mv->c = e[1], mv->h = e[2], mv->w = e[3];
  mv->src_sn = ss[0], mv->src_sc = ss[1], mv->src_sh = ss[2], mv->src_sw = ss[3];
  mv->dst_sn = ds[0], mv->dst_sc = ds[1], mv->dst_sh = ds[2], mv->dst_sw = ds[3];
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* A MOVE of an nd-axis block (extents e, strides in elements): axes of extent 1 dropped,
 * neighbours merged where both sides are contiguous across them; more than 4 axes left: one
 * MOVE per index of the leading ones. */
static ct_status move_nd(mg *c, const ct_op *op, ct_dtype dt, int64_t src, const int64_t *ss0, int64_t dst,
                         const int64_t *ds0, const int64_t *e0, int nd, int64_t t, ct_diag *d) {
  int64_t e[CT_MAX_DIMS], ss[CT_MAX_DIMS], ds[CT_MAX_DIMS], eb = (int64_t)ct_dtype_size(dt);
  int n = 0;
  for (int i = 0; i < nd; i++) {
    if (e0[i] == 0) return CT_OK;
    if (e0[i] == 1) continue;
    if (n > 0 && ss[n - 1] == ss0[i] * e0[i] && ds[n - 1] == ds0[i] * e0[i]) {
      e[n - 1] *= e0[i], ss[n - 1] = ss0[i], ds[n - 1] = ds0[i];
      continue;
    }
    e[n] = e0[i], ss[n] = ss0[i], ds[n] = ds0[i], n++;
  }
  if (n <= 4) {
    int64_t E[4] = {1, 1, 1, 1}, S[4] = {0, 0, 0, 1}, D[4] = {0, 0, 0, 1};
    for (int i = 0; i < n; i++) E[4 - n + i] = e[i], S[4 - n + i] = ss[i], D[4 - n + i] = ds[i];
    return ct_cg_move4(c, op, dt, src, S, dst, D, E, t, d);
  }
  ct_status st = CT_OK;
  for (int64_t i = 0; i < e[0] && !st; i++)
    st = move_nd(c, op, dt, src + i * ss[0] * eb, ss + 1, dst + i * ds[0] * eb, ds + 1, e + 1, n - 1, t, d);
  return st;
}

/* Offsets and extents of value v's tile along each of its axes (any rank). */
static void tile_of(const mg *c, const ct_value *v, int64_t *off, int64_t *ext) {
  const lg_rng *r = &c->x.rng[v->id];
  for (int i = 0; i < v->ndim; i++) off[i] = 0, ext[i] = v->shape[i];
  if (!r->set || ct_lg_is_weight(v)) return;
  if (r->ax >= 0 && r->ax < v->ndim) off[r->ax] = r->lo, ext[r->ax] = r->hi - r->lo;
  if (r->nax == 0 && v->ndim > 0) off[0] = r->nlo, ext[0] = r->nhi - r->nlo;
}

/* Dense strides (elements) of extents e. */
static void ext_strides(const int64_t *e, int nd, int64_t *st) {
  int64_t k = 1;
  for (int i = nd - 1; i >= 0; i--) st[i] = k, k *= e[i];
}

/* Storage type and zero point of one side of a REQUANT. */
typedef struct rq_side {
  ct_dtype dt;
  int32_t zp;
} rq_side;

/* A tensor-wide REQUANT of `count` dense elements (as 1 × 1 × rows × 64 or 1 × 1 × 1 × count);
 * between two float types a CAST instead (nearest even: the reference's storage rounding). */
static ct_status requant_raw(mg *c, const ct_op *op, rq_side x, rq_side y, int64_t src, int64_t dst, int64_t count, int32_t m,
                             int s, int64_t t, ct_diag *d) {
  ct_status st = CT_OK;
  int64_t ex = (int64_t)ct_dtype_size(x.dt), ey = (int64_t)ct_dtype_size(y.dt);
  for (int64_t o = 0; o < count && !st; o += 65535 * 64) {
    int64_t k = count - o < 65535 * 64 ? count - o : 65535 * 64, rows = k >= 64 ? k / 64 : 0, rest = k - rows * 64;
    for (int part = 0; part < 2 && !st; part++) {
      int64_t h = part ? 1 : rows, w = part ? rest : 64, off = o + (part ? rows * 64 : 0);
      if (h * w == 0) continue;
      ct_insn in;
      memset(&in, 0, sizeof in);
      if (ct_dtype_is_float(x.dt) && ct_dtype_is_float(y.dt)) {
        in.op = CT_ISA_CAST;
        struct ct_insn_cast *k = &in.cast;
        k->in = src + off * ex, k->out = dst + off * ey, k->n = 1, k->c = 1, k->h = h, k->w = w;
        k->dt_in = x.dt, k->dt_out = y.dt, k->scale = 1;
        st = ct_cg_put(c, &in, ct_cg_nm(op), t, d);
        continue;
      }
      in.op = CT_ISA_REQUANT;
      struct ct_insn_requant *r = &in.requant;
      r->in = src + off * ex, r->out = dst + off * ey, r->n = 1, r->c = 1, r->h = h, r->w = w;
      r->rq_mode = CT_ISA_RQ_TENSOR, r->m = m, r->s = s, r->zp_in = x.zp, r->zp_out = y.zp;
      r->dt_in = x.dt, r->dt_out = y.dt;
      st = ct_cg_put(c, &in, ct_cg_nm(op), t, d);
    }
  }
  return st;
}

static ct_status requant_dense(mg *c, const ct_op *op, const ct_value *x, const ct_value *y, int64_t src, int64_t dst,
                               int64_t count, int32_t m, int s, int64_t t, ct_diag *d) {
  rq_side a = {x->dtype, ct_tq_zp(x)}, b = {y->dtype, ct_tq_zp(y)};
  return requant_raw(c, op, a, b, src, dst, count, m, s, t, d);
}

/* Input k of a Concat whose output block is not contiguous: [outer, row] elements at lx
 * (dense) go to rows of stride `ostride` elements at dst, requantized. Through scratch LMEM
 * in chunks of rows (REQUANT, then one MOVE per chunk); when not even one row fits, one
 * REQUANT per row straight into the output. */
static ct_status requant_blocks(mg *c, const ct_op *op, const ct_value *x, const ct_value *y, int64_t lx, int64_t dst,
                                int64_t outer, int64_t row, int64_t ostride, int32_t m, int s, int64_t t, ct_diag *d) {
  int64_t ex = (int64_t)ct_dtype_size(x->dtype), ey = (int64_t)ct_dtype_size(y->dtype), scr = AL(c->lm_scratch);
  int64_t fit = scr < c->p->chip.lmem_bytes ? (c->p->chip.lmem_bytes - scr) / (row * ey) : 0;
  ct_status st = CT_OK;
  if (fit < 1) {
    for (int64_t o = 0; o < outer && !st; o++)
      st = requant_dense(c, op, x, y, lx + o * row * ex, dst + o * ostride * ey, row, m, s, t, d);
    return st;
  }
  if (fit > outer) fit = outer;
  if (fit > 65535) fit = 65535;
  int64_t w = row, h = 1; /* a row as h × w with w <= 65535 */
  while (w > 65535 && w % 2 == 0) w /= 2, h *= 2;
  if (w > 65535 || h > 65535) return ct_cg_no_cg(op, "a Concat block row above 65535 elements", d);
  c->lm_scratch = scr + fit * row * ey;
  for (int64_t o = 0; o < outer && !st; o += fit) {
    int64_t n = outer - o < fit ? outer - o : fit;
    st = requant_dense(c, op, x, y, lx + o * row * ex, scr, n * row, m, s, t, d);
    int64_t e[4] = {1, n, h, w}, ss[4] = {0, row, w, 1}, dd[4] = {0, ostride, w, 1};
    if (!st) st = ct_cg_move4(c, op, y->dtype, scr, ss, dst + o * ostride * ey, dd, e, t, d);
  }
  /* the chunks are free once their MOVEs ran (the compute chain orders what follows): the
   * next input's row gather reuses the scratch the planner reserved */
  c->lm_scratch = scr;
  return st;
}

/* Concat along any axis: input k is requantized to the output (ct_tq_rq pair k; skipped
 * when it is the identity, and for a float Concat of inputs of its own dtype; a CAST for a
 * float input of another float type) and moved into its block [c_k, c_k + C_k) of the output tile
 * along the axis. Input tiles holding more rows along H than the output (another reader's
 * halo) are gathered first. */
static ct_status emit_concat(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *y = op->out[0];
  box by;
  int64_t ax = ct_attr_concat_axis(op);
  if (ax < 0) ax += y->ndim;
  if (!ct_cg_box_of(c, y, &by) || ax < 0 || ax >= y->ndim) return ct_cg_no_cg(op, "rank above 4", d);
  int cax = (int)ax + 4 - y->ndim;
  if (op->n_in > 64) return ct_cg_no_cg(op, "more than 64 inputs", d);
  int32_t m[64];
  int s[64];
  bool fl = !ct_cg_is_int(y->dtype); /* a float Concat moves data (an input of another float type: CAST) */
  for (int k = 0; fl && k < op->n_in; k++) {
    if (!ct_dtype_is_float(op->in[k]->dtype)) return ct_cg_no_cg(op, "a float Concat of an integer input", d);
    m[k] = 1 << 30, s[k] = 30;
  }
  ct_status st = fl ? CT_OK : ct_tq_rq(op, op->n_in, m, s, d);
  if (st) return st;
  int64_t ly = ct_cg_lmem_of(c->gr, y), eb = (int64_t)ct_dtype_size(y->dtype), c0 = 0, ds[4];
  if (ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  if (by.ext[cax] != by.full[cax]) return ct_cg_no_cg(op, "Concat cut along its axis", d);
  dense_strides(&by, ds);
  for (int k = 0; k < op->n_in && !st; k++) {
    const ct_value *x = op->in[k];
    box bx;
    int64_t lx = ct_cg_lmem_of(c->gr, x), ss[4];
    if (x->ndim != y->ndim || !ct_cg_box_of(c, x, &bx) || lx < 0) return ct_cg_no_cg(op, "an input without an LMEM tile", d);
    if (bx.ext[2] != by.ext[2] && cax != 2 && bx.off[2] <= by.off[2] && bx.off[2] + bx.ext[2] >= by.off[2] + by.ext[2]) {
      st = ct_cg_gather_rows(c, op, x, &bx, by.off[2], by.off[2] + by.ext[2], &lx, t, d);
      bx.off[2] = by.off[2], bx.ext[2] = by.ext[2];
    }
    for (int i = 0; i < 4 && !st; i++)
      if (i != cax && bx.ext[i] != by.ext[i]) return ct_cg_no_cg(op, "input and output tiles of different extents", d);
    int64_t count = bx.ext[0] * bx.ext[1] * bx.ext[2] * bx.ext[3], outer = 1;
    for (int i = 0; i < cax; i++) outer *= bx.ext[i];
    bool ident = fl || ct_tq_rq_identity(x, y, m[k], s[k]);
    int64_t dst = ly + c0 * ds[cax] * eb, src = lx;
    if (!st && !(ident && x->dtype == y->dtype)) {
      if (outer == 1) { /* the block is contiguous: requantize straight into it */
        st = requant_dense(c, op, x, y, lx, dst, count, m[k], s[k], t, d);
        c0 += bx.ext[cax];
        continue;
      }
      st = requant_blocks(c, op, x, y, lx, dst, outer, count / outer, ds[cax] * by.ext[cax], m[k], s[k], t, d);
      c0 += bx.ext[cax];
      continue;
    }
    dense_strides(&bx, ss);
    if (!st) st = ct_cg_move4(c, op, y->dtype, src, ss, dst, ds, bx.ext, t, d);
    c0 += bx.ext[cax];
  }
  return st;
}

/* Transpose of rank <= 4: one MOVE over the output tile's axes, reading input axis perm[j]
 * of the input tile for output axis j. */
static ct_status emit_transpose(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  int n = 0, pad = 4 - y->ndim;
  int64_t pv[CT_ATTR_LIST_MAX];
  const int64_t *perm = ct_attr_transpose_perm_n(op, pv, &n) ? pv : NULL; /* absent: reversed */
  if (y->ndim > 4 || x->ndim > 4) { /* any rank: the tiles' own extents */
    int64_t xo[CT_MAX_DIMS], xe[CT_MAX_DIMS], yo[CT_MAX_DIMS], ye[CT_MAX_DIMS], xs[CT_MAX_DIMS], ss[CT_MAX_DIMS], ds[CT_MAX_DIMS];
    int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y);
    if (lx < 0 || ly < 0 || !perm || n != y->ndim || x->ndim != y->ndim) return ct_cg_no_cg(op, "a Transpose without a full perm", d);
    tile_of(c, x, xo, xe), tile_of(c, y, yo, ye), ext_strides(xe, x->ndim, xs), ext_strides(ye, y->ndim, ds);
    for (int j = 0; j < y->ndim; j++) {
      if (xe[perm[j]] != ye[j] || xo[perm[j]] != yo[j]) return ct_cg_no_cg(op, "input and output tiles that do not correspond", d);
      ss[j] = xs[perm[j]];
    }
    return move_nd(c, op, y->dtype, lx, ss, ly, ds, ye, y->ndim, t, d);
  }
  if (!ct_cg_box_of(c, x, &bx) || !ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "rank above 4", d);
  int64_t xs[4], ss[4], ds[4], lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  dense_strides(&bx, xs), dense_strides(&by, ds);
  for (int j = 0; j < 4; j++) {
    int ia = j < pad ? j : (perm && n == y->ndim ? (int)perm[j - pad] : y->ndim - 1 - (j - pad)) + pad;
    if (ia < 0 || ia > 3 || bx.ext[ia] != by.ext[j] || bx.off[ia] != by.off[j])
      return ct_cg_no_cg(op, "input and output tiles that do not correspond", d);
    ss[j] = xs[ia];
  }
  return ct_cg_move4(c, op, y->dtype, lx, ss, ly, ds, by.ext, t, d);
}

/* Slice with constant starts / steps: output index i along an axis reads input index
 * start + i·step; one MOVE from the input tile. */
static ct_status emit_slice(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  if (y->ndim > 4 && x->ndim == y->ndim && x->dtype == y->dtype) { /* any rank: the tiles' own extents */
    int64_t xo[CT_MAX_DIMS], xe[CT_MAX_DIMS], yo[CT_MAX_DIMS], ye[CT_MAX_DIMS], xs[CT_MAX_DIMS], ss[CT_MAX_DIMS], ds[CT_MAX_DIMS];
    int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y), off = 0;
    if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
    tile_of(c, x, xo, xe), tile_of(c, y, yo, ye), ext_strides(xe, x->ndim, xs), ext_strides(ye, y->ndim, ds);
    for (int j = 0; j < y->ndim; j++) {
      int64_t s0 = 0, step = 1;
      if (!ct_lg_slice_axis(op, j, &s0, &step)) return ct_cg_no_cg(op, "a Slice with run-time or negative steps", d);
      int64_t first = s0 + yo[j] * step - xo[j];
      if (first < 0 || first + (ye[j] - 1) * step >= xe[j]) return ct_cg_no_cg(op, "a Slice tile outside its input tile", d);
      off += first * xs[j], ss[j] = xs[j] * step;
    }
    return move_nd(c, op, y->dtype, lx + off * (int64_t)ct_dtype_size(x->dtype), ss, ly, ds, ye, y->ndim, t, d);
  }
  if (x->ndim != y->ndim || !ct_cg_box_of(c, x, &bx) || !ct_cg_box_of(c, y, &by)) return ct_cg_no_cg(op, "rank above 4", d);
  int pad = 4 - y->ndim;
  int64_t xs[4], ss[4], ds[4], lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y), off = 0;
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  dense_strides(&bx, xs), dense_strides(&by, ds);
  for (int j = 0; j < 4; j++) {
    int64_t s0 = 0, step = 1;
    if (j >= pad && !ct_lg_slice_axis(op, j - pad, &s0, &step)) return ct_cg_no_cg(op, "a Slice with run-time or negative steps", d);
    int64_t first = s0 + by.off[j] * step - bx.off[j], last = first + (by.ext[j] - 1) * step;
    if (first < 0 || last >= bx.ext[j]) return ct_cg_no_cg(op, "a Slice tile outside its input tile", d);
    off += first * xs[j], ss[j] = xs[j] * step;
  }
  int64_t src = lx + off * (int64_t)ct_dtype_size(x->dtype);
  if (x->dtype == y->dtype) return ct_cg_move4(c, op, y->dtype, src, ss, ly, ds, by.ext, t, d);
  /* a float Slice that also rounds (f32 → bf16 / f16, the Tpu reference's storage
   * rounding): MOVE to scratch, then CAST float → float (nearest even) */
  if (!ct_dtype_is_float(x->dtype) || !ct_dtype_is_float(y->dtype)) return ct_cg_no_cg(op, "a Slice that changes an integer type", d);
  int64_t count = by.ext[0] * by.ext[1] * by.ext[2] * by.ext[3], scr = 0;
  ct_status st = ct_cg_scratch_take(c, op, LG_SCRATCH_SLICE, NULL, count * (int64_t)ct_dtype_size(x->dtype), &scr, d);
  if (!st) st = ct_cg_move4(c, op, x->dtype, src, ss, scr, ds, by.ext, t, d);
  if (st) return st;
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CAST;
  struct ct_insn_cast *k = &in.cast;
  k->in = scr, k->out = ly, k->n = by.ext[0], k->c = by.ext[1], k->h = by.ext[2], k->w = by.ext[3];
  k->dt_in = x->dtype, k->dt_out = y->dtype, k->scale = 1;
  return ct_cg_put(c, &in, ct_cg_nm(op), t, d);
}

/* Split along `axis` (any rank): output k is the block [c_k, c_k + C_k) of the input along
 * the axis, which the planner never cuts (lg_layers.c axis_ops), so each output tile is one
 * MOVE from the input tile at offset c_k (plus the tile's offsets along the other axes). The
 * Tpu reference (ops/tensor_movement.c) copies the same bytes: outputs keep the input's type
 * and quant parameters (the lowering's lower_move). Empty outputs and outputs nothing reads
 * (nor the module returns) get no MOVE. */
static ct_status emit_split(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0];
  int ax;
  if (!ct_ops_axis(ct_attr_concat_axis(op), x->ndim, &ax)) return ct_cg_no_cg(op, "a Split axis out of range", d);
  int64_t xo[CT_MAX_DIMS], xe[CT_MAX_DIMS], xs[CT_MAX_DIMS], lx = ct_cg_lmem_of(c->gr, x), eb = (int64_t)ct_dtype_size(x->dtype);
  if (lx < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  tile_of(c, x, xo, xe), ext_strides(xe, x->ndim, xs);
  if (xe[ax] != x->shape[ax]) return ct_cg_no_cg(op, "a Split cut along its axis", d);
  ct_status st = CT_OK;
  for (int k = 0, c0 = 0; k < op->n_out && !st; k++) {
    const ct_value *y = op->out[k];
    if (!y || y->ndim != x->ndim || y->dtype != x->dtype) return ct_cg_no_cg(op, "a Split output of another rank or type", d);
    int64_t yo[CT_MAX_DIMS], ye[CT_MAX_DIMS], ds[CT_MAX_DIMS], ly = ct_cg_lmem_of(c->gr, y), off = c0 * xs[ax];
    c0 += (int)y->shape[ax];
    if (ct_lg_numel(y) == 0 || (!c->x.model_out[y->id] && c->x.cons_off[y->id] == c->x.cons_off[y->id + 1]))
      continue; /* empty, or read by nobody */
    if (ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
    tile_of(c, y, yo, ye), ext_strides(ye, y->ndim, ds);
    for (int j = 0; j < x->ndim; j++) {
      if (j == ax ? ye[j] != y->shape[j] : (yo[j] < xo[j] || yo[j] + ye[j] > xo[j] + xe[j]))
        return ct_cg_no_cg(op, "a Split output tile outside its input tile", d);
      if (j != ax) off += (yo[j] - xo[j]) * xs[j];
    }
    st = move_nd(c, op, x->dtype, lx + off * eb, xs, ly, ds, ye, x->ndim, t, d);
  }
  return st;
}

/* Constant Pad (rank ≤ 4; the lowering pads an integer tensor with the zero point): the
 * output tile is filled with the pad value by a REQUANT with multiplier 0 (out = zp_out for
 * any input; it reads the tile itself), then one MOVE puts the input tile at its offsets. A
 * dim the tile cuts must have no padding. A float Pad (zeros) fills the tile's bytes as i8
 * zeros: +0.0 in every float type. */
static ct_status emit_pad(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  if (y->ndim > 4 || x->ndim != y->ndim || !ct_cg_box_of(c, x, &bx) || !ct_cg_box_of(c, y, &by) || x->dtype != y->dtype)
    return ct_cg_no_cg(op, "a Pad other than rank ≤ 4, same type", d);
  int64_t bef[CT_MAX_DIMS], aft[CT_MAX_DIMS], b4[4] = {0, 0, 0, 0};
  bool padded = false;
  const ct_tensor *pads = op->n_in > 1 && op->in[1] ? op->in[1]->data : NULL, *axes = op->n_in > 3 && op->in[3] ? op->in[3]->data : NULL;
  if (!pads || ct_ops_pads(op, x->ndim, x->shape, pads, axes, bef, aft, NULL)) return ct_cg_no_cg(op, "pads computed at run time", d);
  for (int i = 0; i < x->ndim; i++) {
    int k = i + 4 - x->ndim;
    if (bef[i] < 0 || aft[i] < 0) return ct_cg_no_cg(op, "negative pads (cropping)", d);
    if ((bef[i] || aft[i]) && by.ext[k] != by.full[k]) return ct_cg_no_cg(op, "a Pad cut along a padded axis", d);
    b4[k] = bef[i], padded = padded || bef[i] || aft[i];
  }
  if (strcmp(ct_attr_pad_mode(op), "constant")) return ct_cg_no_cg(op, "a Pad mode other than constant", d);
  const ct_value *pv = op->n_in > 2 ? op->in[2] : NULL;
  bool zero_value = !pv || (pv->data && ct_tensor_numel(pv->data) == 1 && ct_tensor_get_f64(pv->data, 0) == 0 &&
                            !signbit(ct_tensor_get_f64(pv->data, 0)));
  if (padded && !ct_cg_is_int(y->dtype) && !zero_value) return ct_cg_no_cg(op, "a float Pad with a value other than +0", d);
  int64_t lx = ct_cg_lmem_of(c->gr, x), ly = ct_cg_lmem_of(c->gr, y), n = by.ext[0] * by.ext[1] * by.ext[2] * by.ext[3];
  if (lx < 0 || ly < 0) return ct_cg_no_cg(op, "the plan has no buffer for an operand", d);
  /* float: the tile's bytes as i8 set to 0 — +0.0, the value a float Pad pads with */
  rq_side fill = ct_cg_is_int(y->dtype) ? (rq_side){y->dtype, ct_tq_zp(y)} : (rq_side){CT_I8, 0};
  int64_t cnt = ct_cg_is_int(y->dtype) ? n : n * (int64_t)ct_dtype_size(y->dtype);
  ct_status st = padded ? requant_raw(c, op, fill, fill, ly, ly, cnt, 0, 0, t, d) : CT_OK;
  int64_t ss[4], ds[4], eb = (int64_t)ct_dtype_size(y->dtype), dst = ly;
  dense_strides(&bx, ss), dense_strides(&by, ds);
  for (int k = 0; k < 4; k++) dst += b4[k] * ds[k] * eb;
  return st ? st : ct_cg_move4(c, op, y->dtype, lx, ss, dst, ds, bx.ext, t, d);
}

ct_status ct_cg_emit_data(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  (void)li;
  switch (op->kind) {
  case CT_OP_PAD: return emit_pad(c, op, t, d);
  case CT_OP_RESIZE: return emit_resize(c, op, t, d);
  case CT_OP_CONCAT: return emit_concat(c, op, t, d);
  case CT_OP_TRANSPOSE: return emit_transpose(c, op, t, d);
  case CT_OP_SLICE: return emit_slice(c, op, t, d);
  case CT_OP_SPLIT: return emit_split(c, op, t, d);
  default: return ct_cg_no_cg(op, NULL, d);
  }
}
