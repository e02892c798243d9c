/* cg_data.c: codegen of the data-movement layers (cg_int.h): Resize (nearest, integer
 * factors) as one strided MOVE per tile that repeats rows and columns, and Concat as one
 * REQUANT per input (and batch) into its channel block of the output tile — the Tpu
 * reference's Concat rescales every input to the output's scale (ops/tpu_elt.c). */
#include <string.h>

#include "compiler/backend/cg_int.h"

/* Does the nearest-neighbour mapping of op send output index o to input index o / f along
 * an axis enlarged f times? asymmetric + floor: x = o / f, floor → o / f. half_pixel (and
 * pytorch_half_pixel, out > 1): x = (o + 0.5) / f − 0.5 lies in (k − 0.5, k + 0.5) for o in
 * [k·f, (k + 1)·f) and is never a tie, so either round_prefer_* gives k. */
static bool nearest_is_div(const ct_op *op) {
  const char *mode = ct_op_get_string(op, "mode", "nearest");
  const char *ctm = ct_op_get_string(op, "coordinate_transformation_mode", "half_pixel");
  const char *nm_ = ct_op_get_string(op, "nearest_mode", "round_prefer_floor");
  if (strcmp(mode, "nearest")) return false;
  if (!strcmp(ctm, "asymmetric")) return !strcmp(nm_, "floor");
  if (!strcmp(ctm, "half_pixel") || !strcmp(ctm, "pytorch_half_pixel"))
    return !strcmp(nm_, "round_prefer_floor") || !strcmp(nm_, "round_prefer_ceil");
  return false;
}

/* Resize, nearest, NCHW, H and W enlarged by whole factors fh, fw (N, C unchanged): the
 * tile's rows r = n·c·IH of the input are copied with a MOVE whose n axis repeats each
 * element fw times (source stride 0, destination stride 1), c runs over the rows (source IW,
 * destination fh·OW), h repeats each row fh times (source 0, destination OW) and w runs
 * over the columns (source 1, destination fw). */
static ct_status emit_resize(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *x = op->in[0], *y = op->out[0];
  box bx, by;
  if (x->ndim != 4 || y->ndim != 4 || !box_of(c, x, &bx) || !box_of(c, y, &by)) return no_cg(op, "Resize of a non-NCHW tensor", d);
  if (!nearest_is_div(op)) return no_cg(op, "only nearest Resize whose index map is o / factor", d);
  int64_t ih = x->shape[2], iw = x->shape[3], oh = y->shape[2], ow = y->shape[3];
  if (x->shape[0] != y->shape[0] || x->shape[1] != y->shape[1] || oh % ih || ow % iw)
    return no_cg(op, "Resize other than a whole-factor enlargement of H and W", d);
  if (bx.ext[2] != ih || by.ext[2] != oh || bx.ext[0] != by.ext[0] || bx.ext[1] != by.ext[1])
    return no_cg(op, "Resize cut along H", d);
  if (x->dtype != y->dtype) return no_cg(op, "Resize that changes the storage type", d);
  int64_t fh = oh / ih, fw = ow / iw, lx = lmem_of(c->gr, x), ly = lmem_of(c->gr, y);
  if (lx < 0 || ly < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  if (fw > 65535 || fh > 65535 || iw > 65535) return no_cg(op, "Resize dims above 65535", d);
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
    st = put(c, &in, nm(op), t, d);
  }
  return st;
}

/* Concat along C of NCHW tiles (the planner's ELTWISE trait): input k is requantized to the
 * output (ct_tq_rq pair k) into channels [c_k, c_k + C_k) of the output tile, one REQUANT
 * per batch element of the tile; input tiles holding more rows (another reader's halo)
 * are gathered first. */
static ct_status emit_concat(mg *c, const ct_op *op, int64_t t, ct_diag *d) {
  const ct_value *y = op->out[0];
  box by;
  int64_t ax = ct_op_get_int(op, "axis", 0);
  if (y->ndim != 4 || (ax != 1 && ax != -3) || !box_of(c, y, &by)) return no_cg(op, "only Concat along C of NCHW tensors", d);
  if (op->n_in > 64) return no_cg(op, "more than 64 inputs", d);
  int32_t m[64];
  int s[64];
  ct_status st = ct_tq_rq(op, op->n_in, m, s, d);
  if (st) return st;
  int64_t ly = lmem_of(c->gr, y), eb = (int64_t)ct_dtype_size(y->dtype), plane = by.ext[2] * by.ext[3], c0 = 0;
  if (ly < 0) return no_cg(op, "the plan has no buffer for an operand", d);
  if (by.ext[1] != y->shape[1]) return no_cg(op, "Concat cut along C", d);
  for (int k = 0; k < op->n_in && !st; k++) {
    const ct_value *x = op->in[k];
    box bx;
    int64_t lx = lmem_of(c->gr, x), ex = (int64_t)ct_dtype_size(x->dtype);
    if (x->ndim != 4 || !box_of(c, x, &bx) || lx < 0) return no_cg(op, "an input without an LMEM tile", d);
    if (bx.ext[2] != by.ext[2] && bx.off[2] <= by.off[2] && bx.off[2] + bx.ext[2] >= by.off[2] + by.ext[2]) {
      st = gather_rows(c, op, x, &bx, by.off[2], by.off[2] + by.ext[2], &lx, t, d);
      bx.off[2] = by.off[2], bx.ext[2] = by.ext[2];
    }
    if (!st && (bx.ext[2] != by.ext[2] || bx.ext[3] != by.ext[3] || bx.ext[0] != by.ext[0]))
      return no_cg(op, "input and output tiles of different extents", d);
    for (int64_t n = 0; n < by.ext[0] && !st; n++) {
      ct_insn in;
      memset(&in, 0, sizeof in);
      in.op = CT_ISA_REQUANT;
      struct ct_insn_requant *r = &in.requant;
      r->in = lx + n * bx.ext[1] * plane * ex, r->out = ly + (n * by.ext[1] + c0) * plane * eb;
      r->n = 1, r->c = bx.ext[1], r->h = by.ext[2], r->w = by.ext[3];
      r->rq_mode = CT_ISA_RQ_TENSOR, r->m = m[k], r->s = s[k], r->zp_in = ct_tq_zp(x), r->zp_out = ct_tq_zp(y);
      r->dt_in = x->dtype, r->dt_out = y->dtype;
      st = put(c, &in, nm(op), t, d);
    }
    c0 += bx.ext[1];
  }
  return st;
}

ct_status cg_emit_data(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d) {
  (void)li;
  switch (op->kind) {
  case CT_OP_RESIZE: return emit_resize(c, op, t, d);
  case CT_OP_CONCAT: return emit_concat(c, op, t, d);
  default: return no_cg(op, NULL, d);
  }
}
