/* lg_eval.c: evaluation of one tiling of a layer group — the LMEM buffers it needs (kinds,
 * sizes over the largest tiles, lifetimes), the per-tile load / compute / store cycles and
 * DDR bytes, the pipeline estimate — and the search for the best tiling (TPU-MLIR's
 * LayerGroup: the fewest slices that fit, then a few more if the cost model prefers them). */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/cg_sched.h"
#include "compiler/backend/lg_int.h"
#include "isa/cost.h"
#include "ops/tpu_util.h"

static int64_t cdiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

/* VPU cycles of elems element-steps of kind k at width bytes: the cmodel's table (isa/cost.h). */
static int64_t vpu_cycles(const lg_ctx *x, ct_vpu_kind k, int64_t elems, int64_t width) {
  return (int64_t)ct_vpu_cycles(x->chip, k, (uint64_t)(elems > 0 ? elems : 0), (uint32_t)width);
}

/* Cycles of an LMEM → LMEM MOVE of `bytes` (isa/cost.h ct_dma_cycles). */
static int64_t move_cycles(const lg_ctx *x, int64_t bytes) {
  return (int64_t)ct_dma_cycles(x->chip, (uint64_t)(bytes > 0 ? bytes : 0), false);
}

/* Cycles of a MOVE of `bytes` that reads a source of `src` bytes (src < bytes: some source
 * bytes are read more than once — a nearest upsample, a patchify): the cmodel counts every
 * read at its bank (ct_dma_port_cycles), so the source's busiest bank carries min(src, one
 * bank) · bytes / src; the destination's, min(bytes, one bank). */
static int64_t move_cycles_from(const lg_ctx *x, int64_t bytes, int64_t src) {
  if (src <= 0 || src >= bytes) return move_cycles(x, bytes);
  int64_t bank = x->chip->lmem_bytes / x->chip->lmem_banks, dst = bytes < bank ? bytes : bank;
  int64_t busiest = (src < bank ? src : bank) * (bytes / src);
  return (int64_t)ct_dma_port_cycles(x->chip, (uint64_t)bytes, (uint64_t)(busiest > dst ? busiest : dst));
}

/* MXU cycles of reps products of pixels × red × filters whose operand a is read as the MXU
 * reads it (isa/cost.h ct_mxu_cost_of): at its float type's rate, or at the full (int8) rate
 * when it is an integer or --assume-dtype sets the element size. */
static int64_t mxu(const lg_ctx *x, const ct_value *a, int64_t reps, int64_t pixels, int64_t red, int64_t filters) {
  bool fl = x->opt->assume_bytes == 0 && ct_dtype_is_float(a->dtype);
  ct_mxu_job job = {(uint64_t)(reps > 0 ? reps : 0), (uint64_t)(pixels > 0 ? pixels : 0), (uint64_t)(red > 0 ? red : 0),
                    (uint64_t)(filters > 0 ? filters : 0), fl ? a->dtype : CT_I8};
  ct_mxu_cost c;
  ct_mxu_cost_of(x->chip, &job, &c);
  return (int64_t)c.cycles;
}

/* Widest element (bytes) of the op's data operands — not its constants (weights, bias,
 * tables), as the cmodel counts VPU lanes (cmodel/decode.c). */
static int64_t widest(const lg_ctx *x, const ct_op *op) {
  int64_t w = 1;
  for (int i = 0; i < op->n_in + op->n_out; i++) {
    const ct_value *v = i < op->n_in ? op->in[i] : op->out[i - op->n_in];
    if (v && !ct_lg_is_weight(v) && ct_lg_elem_bytes(x->opt, v) > w) w = ct_lg_elem_bytes(x->opt, v);
  }
  return w;
}

static int64_t tile_elems(const lg_ctx *x, const ct_value *v) {
  int64_t ext[CT_MAX_DIMS];
  return ct_lg_tile_extents(v, &x->rng[v->id], ext);
}

static int64_t mxu_layer(const lg_ctx *x, const ct_op *op, const int64_t *oe) {
  const ct_value *a = op->in[0], *w = op->n_in > 1 ? op->in[1] : NULL, *o = op->out[0];
  int nd = o->ndim;
  if (op->kind == CT_OP_CONV && nd == 4 && w && w->ndim == 4) {
    int64_t g = ct_attr_conv_group(op);
    return mxu(x, a, g, oe[0] * oe[2] * oe[3], w->shape[1] * w->shape[2] * w->shape[3], cdiv(oe[1], g));
  }
  if (op->kind == CT_OP_CONVTRANSPOSE && nd == 4 && w && w->ndim == 4 && a->ndim == 4) {
    int64_t g = ct_attr_conv_group(op), pix = a->shape[0] * a->shape[2] * a->shape[3];
    pix = cdiv(pix * oe[0] * oe[2], o->shape[0] * o->shape[2]);
    return mxu(x, a, g, pix, w->shape[0] / g, w->shape[1] * w->shape[2] * w->shape[3]);
  }
  if ((op->kind == CT_OP_GEMM || op->kind == CT_OP_MATMUL) && w && nd >= 2 && a->ndim >= 1) {
    int64_t k = a->shape[a->ndim - 1];
    if (op->kind == CT_OP_GEMM && ct_attr_gemm_transA(op)) k = a->shape[0];
    int64_t batch = 1;
    for (int d = 0; d < nd - 2; d++) batch *= oe[d];
    bool shared = ct_lg_is_weight(w) || w->ndim <= 2;
    return mxu(x, a, shared ? 1 : batch, (shared ? batch : 1) * oe[nd - 2], k, oe[nd - 1]);
  }
  int64_t n = 1;
  for (int d = 0; d < nd; d++) n *= oe[d];
  return vpu_cycles(x, CT_VPU_ELTWISE, n, ct_lg_elem_bytes(x->opt, a));
}

/* Is op one the codegen moves LMEM → LMEM with MOVEs on load engine 0 (cg_data.c; a
 * ConvTranspose scatters its CONV's result to the output with one MOVE per tap, cg_convt.c)? */
static bool moved_in_lmem(const ct_op *op) {
  ct_tpu_lin lin;
  return (op->kind == CT_OP_RESIZE && !ct_tpu_resize_lin(op, &lin)) || op->kind == CT_OP_TRANSPOSE || op->kind == CT_OP_SLICE || op->kind == CT_OP_SPLIT || op->kind == CT_OP_CONCAT ||
         op->kind == CT_OP_CONVTRANSPOSE || op->kind == CT_OP_PAD || ct_lg_patchify(op);
}

/* A Concat's tile as the codegen emits it (cg_data.c emit_concat): input k's block of the
 * output tile is MOVEd when it needs no rescale (a float Concat, or an identity requant of
 * the same dtype), else REQUANTed — straight into the block when the block is contiguous
 * (nothing outside the axis is cut), else into scratch and then MOVEd. An input tile with
 * other rows than the output's (another reader's halo) is first gathered by a MOVE. Returns
 * the VPU cycles; *move gets the MOVE cycles (LMEM port bytes per cycle). */
static int64_t concat_cycles(const lg_ctx *x, const ct_op *op, int64_t *move) {
  const ct_value *y = op->out[0];
  int64_t oe[CT_MAX_DIMS], out = ct_lg_tile_extents(y, &x->rng[y->id], oe), ax = ct_attr_concat_axis(op);
  if (ax < 0) ax += y->ndim;
  *move = 0;
  if (ax < 0 || ax >= y->ndim || op->n_in > 64 || y->shape[ax] <= 0) return 0;
  int32_t m[64];
  int s[64];
  bool fl = !ct_tq_is_storage(y->dtype);
  if (fl || ct_tq_rq(op, op->n_in, m, s, NULL)) /* float: moves only */
    for (int k = 0; k < op->n_in; k++) m[k] = 1 << 30, s[k] = 30;
  int64_t outer = 1, vpu = 0;
  for (int d = 0; d < ax; d++) outer *= oe[d];
  for (int k = 0; k < op->n_in; k++) {
    const ct_value *v = op->in[k];
    if (!v || v->ndim != y->ndim) continue;
    int64_t blk = out / y->shape[ax] * v->shape[ax], eb = ct_lg_elem_bytes(x->opt, y);
    int64_t w = ct_lg_elem_bytes(x->opt, v) > eb ? ct_lg_elem_bytes(x->opt, v) : eb;
    if (tile_elems(x, v) > blk) *move += move_cycles(x, blk * ct_lg_elem_bytes(x->opt, v)); /* row gather */
    bool ident = ct_tq_rq_identity(v, y, m[k], s[k]);
    if (ident && v->dtype == y->dtype) {
      *move += move_cycles(x, blk * eb);
      continue;
    }
    int64_t rows = blk / 64, rest = blk - rows * 64; /* requant_dense: rows × 64, then the rest */
    ct_vpu_kind k = fl ? CT_VPU_CAST : CT_VPU_REQUANT;  /* requant_raw: a CAST between floats */
    vpu += (rows ? vpu_cycles(x, k, rows * 64, w) : 0) + (rest ? vpu_cycles(x, k, rest, w) : 0);
    if (outer > 1) *move += move_cycles(x, blk * eb);
  }
  return vpu;
}

int64_t ct_lg_move_cycles(const lg_ctx *x, int li) {
  const ct_op *op = x->layers[li].op;
  if (x->layers[li].unit == CT_LG_UNIT_NONE || !moved_in_lmem(op) || !op->in[0]) return 0;
  if (op->kind == CT_OP_CONCAT) {
    int64_t mv;
    concat_cycles(x, op, &mv);
    return mv;
  }
  const ct_value *v = op->kind == CT_OP_CONVTRANSPOSE ? op->out[0] : op->in[0];
  int64_t bytes = tile_elems(x, op->out[0]) * ct_lg_elem_bytes(x->opt, v);
  if (op->kind == CT_OP_CONVTRANSPOSE) /* the scatter: MOVEs of a few rows each, every byte through one bank's port */
    return (int64_t)ct_dma_port_cycles(x->chip, (uint64_t)bytes, (uint64_t)bytes);
  int64_t cy = 0;
  for (int j = 1; op->kind == CT_OP_SPLIT && j < op->n_out; j++) /* one MOVE per output */
    if (op->out[j]) cy += move_cycles(x, tile_elems(x, op->out[j]) * ct_lg_elem_bytes(x->opt, v));
  if (ct_lg_patchify(op)) /* the output tile's patches: C·k·k input elements per output pixel of one channel */
    bytes = bytes / op->out[0]->shape[1] * op->in[1]->shape[1] * op->in[1]->shape[2] * op->in[1]->shape[3];
  return cy + move_cycles_from(x, bytes, tile_elems(x, op->in[0]) * ct_lg_elem_bytes(x->opt, op->in[0]));
}

/* The LMEM port floor of a VPU layer's tile: the cmodel times a VPU instruction at least at
 * its busiest bank's bytes / lmem.bank_port_bytes (ct_lmem_port_cycles). The planner does not
 * know the banks yet; the busiest bank carries at least the largest operand (operands placed
 * in separate banks; an operand holds at most a bank's bytes of any one bank) and at least the
 * operands' total over the banks. */
static int64_t vpu_port_floor(const lg_ctx *x, const ct_op *op) {
  int64_t most = 0, total = 0, banks = x->chip->lmem_banks, bank = x->chip->lmem_bytes / banks;
  for (int i = 0; i < op->n_in + op->n_out; i++) {
    const ct_value *v = i < op->n_in ? op->in[i] : op->out[i - op->n_in];
    if (!v) continue;
    int64_t b = tile_elems(x, v) * ct_lg_elem_bytes(x->opt, v);
    total += b, b = b < bank ? b : bank;
    most = b > most ? b : most;
  }
  int64_t spread = cdiv(total, banks);
  return cdiv(most > spread ? most : spread, x->chip->lmem_bank_port_bytes);
}

static int64_t vpu_layer(const lg_ctx *x, int li, const int64_t *oe, int64_t out);

int64_t ct_lg_layer_cycles(const lg_ctx *x, int li) {
  const ct_lg_layer *l = &x->layers[li];
  const ct_op *op = l->op;
  if (l->unit == CT_LG_UNIT_NONE) return 0;
  int64_t oe[CT_MAX_DIMS];
  int64_t out = ct_lg_tile_extents(op->out[0], &x->rng[op->out[0]->id], oe);
  for (int j = 1; j < op->n_out; j++) out += tile_elems(x, op->out[j]);
  if (l->unit == CT_LG_UNIT_MXU) return mxu_layer(x, op, oe) + ct_lg_move_cycles(x, li);
  int64_t v = vpu_layer(x, li, oe, out);
  if (moved_in_lmem(op)) return v; /* MOVEs (DMA, timed by their bytes) and per-block VPU ops */
  int64_t floor = vpu_port_floor(x, op);
  return v > floor ? v : floor;
}

/* The VPU layers' cycles from the lane model (isa/cost.h), with their MOVEs. */
static int64_t vpu_layer(const lg_ctx *x, int li, const int64_t *oe, int64_t out) {
  const ct_op *op = x->layers[li].op;
  const ct_lg_layer *l = &x->layers[li];
  int64_t w = widest(x, op), in = op->n_in && op->in[0] ? tile_elems(x, op->in[0]) : out;
  int64_t win = 1;
  if (op->kind == CT_OP_CONV && op->in[1]->ndim == 4) win = op->in[1]->shape[2] * op->in[1]->shape[3];
  else if (l->trait == CT_LG_WINDOW) {
    lg_win2 wn;
    if (ct_lg_window2(op, &wn) && wn.has_k) win = wn.k[0] * wn.k[1];
  }
  bool fl = x->opt->assume_bytes == 0 && ct_dtype_is_float(op->out[0]->dtype);
  if (op->kind == CT_OP_PAD) /* a REQUANT fills the tile, a MOVE places the input (cg_data.c) */
    return ct_lg_move_cycles(x, li) + vpu_cycles(x, CT_VPU_REQUANT, out, w);
  if (moved_in_lmem(op) && op->kind != CT_OP_CONCAT) /* one MOVE, a CAST when the type changes */
    return ct_lg_move_cycles(x, li) + (op->in[0] && op->in[0]->dtype != op->out[0]->dtype
                                        ? vpu_cycles(x, CT_VPU_CAST, out, w) : 0);
  if (op->kind == CT_OP_CONCAT) {
    int64_t mv, vpu = concat_cycles(x, op, &mv);
    return vpu + mv;
  }
  switch (op->kind) {
  case CT_OP_RESIZE: return vpu_cycles(x, CT_VPU_RESIZE, out * 4, w); /* linear: RESIZE, 4 taps */
  case CT_OP_CONV: return vpu_cycles(x, CT_VPU_DWCONV, out * win, w);
  case CT_OP_MAXPOOL: case CT_OP_AVERAGEPOOL: case CT_OP_LPPOOL: return vpu_cycles(x, CT_VPU_POOL, out * win, w);
  case CT_OP_GLOBALAVERAGEPOOL: case CT_OP_GLOBALMAXPOOL: case CT_OP_REDUCEMEAN: case CT_OP_REDUCESUM:
  case CT_OP_REDUCEMAX: case CT_OP_REDUCEMIN: case CT_OP_REDUCEPROD: case CT_OP_REDUCEL1: case CT_OP_REDUCEL2:
  case CT_OP_REDUCELOGSUM: case CT_OP_REDUCELOGSUMEXP: case CT_OP_REDUCESUMSQUARE: case CT_OP_ARGMAX:
  case CT_OP_ARGMIN:
    return vpu_cycles(x, CT_VPU_REDUCE, in, w);
  case CT_OP_SOFTMAX: case CT_OP_LOGSOFTMAX: case CT_OP_HARDMAX: return vpu_cycles(x, CT_VPU_SOFTMAX, in, w);
  case CT_OP_LAYERNORM: case CT_OP_INSTANCENORM: case CT_OP_MVN: case CT_OP_LRN:
    return vpu_cycles(x, CT_VPU_NORM, in, w);
  case CT_OP_SIGMOID: case CT_OP_TANH: case CT_OP_EXP: case CT_OP_LOG: case CT_OP_ERF: case CT_OP_SQRT:
  case CT_OP_SOFTPLUS: case CT_OP_HARDSWISH: case CT_OP_HARDSIGMOID: case CT_OP_SILU: case CT_OP_GELU:
  case CT_OP_MISH: case CT_OP_ELU: case CT_OP_SELU: case CT_OP_CELU: case CT_OP_RECIPROCAL: case CT_OP_POW:
  case CT_OP_DIV: case CT_OP_SIN: case CT_OP_COS:
    return fl ? vpu_cycles(x, CT_VPU_EXP, out, w) : vpu_cycles(x, CT_VPU_LUT, out, 1);
  case CT_OP_LUT: { /* per-channel tables: the VPU reads this tile's channels' 256 bytes each, at most a bank's
                     * worth from any one bank (cmodel port limit: busiest bank / port bytes) */
    bool w16 = op->in[0]->dtype == CT_I16;
    int64_t cy = vpu_cycles(x, w16 ? CT_VPU_LUT16 : CT_VPU_LUT, out, w16 ? 2 : 1), bank = x->chip->lmem_bytes / x->chip->lmem_banks;
    int64_t tb = ct_lg_lut_per_channel(op) && op->out[0]->ndim == 4 ? ct_lg_lut_stride(op) * oe[1] : 0;
    tb = cdiv(tb < bank ? tb : bank, x->chip->lmem_bank_port_bytes);
    return cy > tb ? cy : tb;
  }
  case CT_OP_CAST: case CT_OP_CASTLIKE: case CT_OP_QUANTIZELINEAR: case CT_OP_DEQUANTIZELINEAR: {
    bool ints = ct_tq_is_storage(op->in[0]->dtype) && ct_tq_is_storage(op->out[0]->dtype); /* a REQUANT (cg_ops.c) */
    return vpu_cycles(x, ints ? CT_VPU_REQUANT : CT_VPU_CAST, out, w);
  }
  case CT_OP_REQUANT: return vpu_cycles(x, CT_VPU_REQUANT, out, w);
  default: return vpu_cycles(x, CT_VPU_ELTWISE, out, w);
  }
}

/* A value of the group being evaluated. */
typedef struct gval {
  const ct_value *v;
  ct_lg_buf_kind kind;
  int wdim;                 /* WSLICE: weight dim cut; -1 */
  int live_lo, live_hi;
  bool varies;              /* group input whose range differs between tiles */
  lg_rng r0;                /* range in tile 0 */
  int64_t bytes;            /* max over the sampled tiles */
  int64_t moved[3], cyc[3]; /* per tile type: DMA bytes moved (load or store) */
} gval;

int ct_lg_weight_dim(const ct_op *op, const ct_value *w, int a) {
  if (a < 0 || a >= op->out[0]->ndim || w->ndim < 1) return -1;
  int64_t e = op->out[0]->shape[a];
  int d;
  if (op->kind == CT_OP_CONV) d = 0;                                    /* W [OC, ...], bias [OC] */
  else if (op->kind == CT_OP_CONVTRANSPOSE) d = w == op->in[1] ? 1 : 0; /* W [C, OC/g, ...], bias [OC] */
  else if (w == op->in[0]) d = -1;                                      /* a constant A: whole */
  else if (op->kind == CT_OP_GEMM && w == op->in[1]) d = ct_attr_gemm_transB(op) ? 0 : 1; /* [N, K] / [K, N] */
  else d = w->ndim - 1; /* MatMul B [.., K, N]; Gemm C [N] or [1, N] */
  return d >= 0 && w->shape[d] == e ? d : -1;
}

static int collect(lg_ctx *x, int first, int n, const lg_tiling *tl, gval *gv) {
  int nv = 0;
  for (int li = first; li < first + n; li++) {
    const ct_op *op = x->layers[li].op;
    if (ct_lg_border_cast(x->g, op)) continue; /* its result is a program input: an IN of its readers */
    for (int i = 0; i < op->n_in + op->n_out; i++) {
      const ct_value *v = i < op->n_in ? op->in[i] : op->out[i - op->n_in];
      if (!v) continue;
      int pos = li - first;
      if (x->vbuf[v->id]) { /* seen: extend a MID's life to this consumer */
        gval *g = &gv[x->vbuf[v->id] - 1];
        if (g->kind == CT_LG_BUF_MID && pos > g->live_hi) g->live_hi = pos;
        continue;
      }
      gval *g = &gv[nv++];
      memset(g, 0, sizeof *g);
      g->v = v, g->wdim = -1, g->live_lo = 0, g->live_hi = n - 1;
      x->vbuf[v->id] = nv;
      int p = x->prod[v->id];
      if (p >= first && p < first + n && !ct_lg_border_cast(x->g, x->layers[p].op)) {
        g->kind = ct_lg_escapes(x, v, first, n) ? CT_LG_BUF_OUT : CT_LG_BUF_MID;
        if (g->kind == CT_LG_BUF_MID) g->live_lo = g->live_hi = pos;
      } else if (ct_lg_is_weight(v)) {
        g->kind = CT_LG_BUF_RES;
        if (n == 1 && tl->axis >= 0 && tl->axis == x->layers[li].wsplit_axis && tl->secs > 1 &&
            (g->wdim = ct_lg_weight_dim(op, v, tl->axis)) >= 0)
          g->kind = CT_LG_BUF_WSLICE;
      } else {
        g->kind = CT_LG_BUF_IN;
      }
    }
  }
  return nv;
}

/* Bytes, moved bytes and DMA transfer of value g in the current tile (x->rng). */
static void sample_value(lg_ctx *x, const lg_tiling *tl, gval *g, int type, bool first_sample) {
  const ct_value *v = g->v;
  int64_t eb = ct_lg_elem_bytes(x->opt, v), ext[CT_MAX_DIMS], moved = 0, cyc = 0;
  lg_rng r = x->rng[v->id];
  if (g->kind == CT_LG_BUF_RES && ct_lg_is_weight(v)) r.ax = r.nax = -1;
  if (g->kind == CT_LG_BUF_WSLICE) {
    r.ax = g->wdim, r.nax = -1, r.lo = 0, r.hi = cdiv(v->shape[g->wdim], tl->secs);
  }
  int64_t bytes = ct_lg_tile_extents(v, &r, ext) * eb;
  if (g->kind == CT_LG_BUF_OUT) { /* stored part */
    lg_rng s = r;
    if (s.ax >= 0) s.lo = s.st_lo;
    int64_t se[CT_MAX_DIMS];
    if (ct_lg_tile_extents(v, &s, se) > 0) ct_lg_dma_cost(x->chip, v->ndim, v->shape, se, eb, &moved, &cyc);
  } else if (g->kind != CT_LG_BUF_MID && bytes > 0) {
    ct_lg_dma_cost(x->chip, v->ndim, v->shape, ext, eb, &moved, &cyc);
  }
  if (first_sample) g->r0 = r;
  else if (r.ax != g->r0.ax || r.lo != g->r0.lo || r.hi != g->r0.hi) g->varies = true;
  if (r.nax >= 0 && tl->nsecs > 1) g->varies = true;
  if (bytes > g->bytes) g->bytes = bytes;
  if (type >= 0) g->moved[type] = moved, g->cyc[type] = cyc;
}

static bool push_buf(ct_lg_group *gr, int cap, const gval *g, ct_lg_buf_kind kind, int copy, int cls) {
  if (gr->n_bufs >= cap) return false;
  ct_lg_buffer *b = &gr->bufs[gr->n_bufs++];
  b->value = g->v->id, b->kind = kind, b->copy = copy, b->cls = cls;
  b->live_lo = g->live_lo, b->live_hi = g->live_hi;
  b->addr = -1, b->bytes = g->bytes;
  return true;
}

/* LMEM buffers of the group from its values (double buffers when pipelined; MIDs too when
 * gr->dbl_mid). */
/* Bank class of a resident buffer of a group with double MIDs: RESM when only MXU layers read it. */
static int res_class(const lg_ctx *x, const ct_lg_group *gr, const ct_value *v) {
  for (int k = x->cons_off[v->id]; k < x->cons_off[v->id + 1]; k++) {
    int li = x->cons[k];
    if (li >= gr->first && li < gr->first + gr->n_layers && x->layers[li].unit != CT_LG_UNIT_MXU) return CT_LG_CLS_RESV;
  }
  return CT_LG_CLS_RESM;
}

static bool make_buffers(const lg_ctx *x, ct_lg_group *gr, gval *gv, int nv) {
  int cap = 2 * nv + 1;
  gr->bufs = calloc((size_t)cap, sizeof *gr->bufs);
  if (!gr->bufs) return false;
  for (int i = 0; i < nv; i++) {
    gval *g = &gv[i];
    if (g->bytes <= 0) continue;
    bool dbl = g->kind == CT_LG_BUF_IN || g->kind == CT_LG_BUF_WSLICE || g->kind == CT_LG_BUF_OUT;
    if (gr->pipelined && gr->dbl_mid && g->kind == CT_LG_BUF_MID) {
      push_buf(gr, cap, g, g->kind, 0, CT_LG_CLS_COMPUTE);
      push_buf(gr, cap, g, g->kind, 1, CT_LG_CLS_MID1);
      continue;
    }
    if (!gr->pipelined || !dbl) {
      bool res = gr->pipelined && gr->dbl_mid && g->kind == CT_LG_BUF_RES;
      push_buf(gr, cap, g, g->kind, 0, res ? res_class(x, gr, g->v) : CT_LG_CLS_COMPUTE);
      continue;
    }
    int base = g->kind == CT_LG_BUF_OUT ? CT_LG_CLS_OUT0 : CT_LG_CLS_IN0;
    push_buf(gr, cap, g, g->kind, 0, base);
    push_buf(gr, cap, g, g->kind, 1, base + 1);
  }
  return true;
}

/* Tiles whose buffers are sized (and the three whose costs stand for their type: 0 first,
 * secs / 2 middle, secs − 1 last): every tile when x->exact or secs ≤ 7, else the 3 at each
 * end and the middle one (ranges clipped at the edges are the ones that differ). The kept
 * plan is always exact; if a sampled search was optimistic the search is redone exactly. */
static int samples(const lg_ctx *x, const lg_tiling *tl, int64_t *t, int *type) {
  int k = 0;
  int64_t S = tl->secs;
  for (int64_t i = 0; i < S; i++) {
    if (!x->exact && S > 7 && i >= 3 && i < S - 3 && i != S / 2) continue;
    t[k] = i;
    type[k++] = i == 0 ? 0 : i == S - 1 ? 2 : (i == S / 2 && S >= 3) ? 1 : -1;
  }
  return k;
}

/* Compute cycles of one tile (x->rng) of layers [first, first + n) into tc (cp, mva, mvb);
 * returns the cycles of its MOVEs. */
/* io[k] of ct_lg_overlap for layer first + k from the group's values gv[0..nv). */
static void layer_io(const lg_ctx *x, int first, int n, const gval *gv, int nv, uint8_t *io) {
  for (int k = 0; k < n; k++) io[k] = 0;
  for (int i = 0; i < nv; i++) {
    const gval *g = &gv[i];
    if (g->kind == CT_LG_BUF_OUT) {
      int p = x->prod[g->v->id];
      if (p >= first && p < first + n) io[p - first] |= 2;
    }
    if (g->kind != CT_LG_BUF_IN && g->kind != CT_LG_BUF_WSLICE) continue;
    for (int k = x->cons_off[g->v->id]; k < x->cons_off[g->v->id + 1]; k++)
      if (x->cons[k] >= first && x->cons[k] < first + n) io[x->cons[k] - first] |= 1;
  }
}

static int64_t tile_compute(lg_ctx *x, int first, int n, const gval *gv, int nv, lg_tilecost *tc) {
  int64_t acc = 0, mv = 0, first_mv = -1, last_mv = 0, *lcs = malloc(sizeof *lcs * (size_t)(2 * n + 1));
  uint8_t *io = malloc((size_t)n + 1);
  for (int li = first; li < first + n; li++) {
    int64_t lc = ct_lg_layer_cycles(x, li), m = ct_lg_move_cycles(x, li);
    if (lcs) lcs[li - first] = lc, lcs[n + li - first] = m;
    if (m > 0) { /* Concat's and ConvTranspose's MOVEs end them; other moved ops MOVE, then maybe CAST */
      ct_op_kind k = x->layers[li].op->kind;
      if (first_mv < 0) first_mv = acc + (k == CT_OP_CONVTRANSPOSE ? lc - m : 0);
      last_mv = acc + (k == CT_OP_CONCAT || k == CT_OP_CONVTRANSPOSE ? lc : m);
    }
    acc += lc, mv += m;
  }
  tc->cp = acc, tc->mva = last_mv, tc->mvb = first_mv < 0 ? 0 : acc - first_mv;
  tc->per = tc->per2 = tc->hold_in = tc->hold_out = acc;
  if (!lcs || !io) x->oom = true; /* the overlap model needs both */
  if (lcs && io && ct_lg_dep_order(x->chip)) { /* instructions wait for their data only (cg_deps.c) */
    int64_t span[2];
    layer_io(x, first, n, gv, nv, io);
    if (!ct_lg_overlap(x, first, n, lcs, lcs + n, io, true, &tc->cp, &tc->per2, span)) x->oom = true;
    tc->hold_in = span[0], tc->hold_out = span[1];
  }
  free(lcs), free(io);
  return mv;
}

/* Banks [lo, hi) of LMEM bytes [a, a + bytes). */
static void banks_of(const ct_chip *c, int64_t a, int64_t bytes, int64_t *lo, int64_t *hi) {
  int64_t bank = c->lmem_bytes / c->lmem_banks;
  *lo = a / bank, *hi = bytes > 0 ? (a + bytes - 1) / bank + 1 : *lo;
}

/* Does a buffer of value v (any copy) share a bank with [lo, hi)? */
static bool value_in_banks(const ct_lg_group *gr, const ct_chip *c, const ct_value *v, int64_t lo, int64_t hi) {
  for (int i = 0; v && i < gr->n_bufs; i++) {
    int64_t a, b;
    banks_of(c, gr->bufs[i].addr, gr->bufs[i].bytes, &a, &b);
    if (gr->bufs[i].value == v->id && a < hi && lo < b) return true;
  }
  return false;
}

/* First layer (index in the plan) of [first, first + n) that reads v; first + n − 1 when none. */
static int first_reader(const lg_ctx *x, int first, int n, const ct_value *v) {
  int f = first + n - 1;
  for (int k = x->cons_off[v->id]; k < x->cons_off[v->id + 1]; k++)
    if (x->cons[k] >= first && x->cons[k] < f) f = x->cons[k];
  return f;
}

/* One streamed LOAD: its first reader (layer index in the group), DDR latency and transfer
 * cycles, the banks [blo, bhi) it writes (when the buffers are placed), and when it holds them. */
typedef struct sload {
  int f;
  int64_t lat, xfer, blo, bhi, hs, he;
} sload;

/* By first reader, then by bank (a fixed order for LOADs of one reader, whose order does not
 * change their common arrival). */
static int by_reader(const void *a, const void *b) {
  const sload *x = a, *y = b;
  return x->f != y->f ? (x->f > y->f) - (x->f < y->f) : (x->blo > y->blo) - (x->blo < y->blo);
}

/* Does layer li of the placed group read or write a buffer in banks [lo, hi)? */
static bool layer_in_banks(const lg_ctx *x, const ct_lg_group *gr, int li, int64_t lo, int64_t hi) {
  const ct_op *op = x->layers[li].op;
  for (int k = 0; k < op->n_in + op->n_out; k++)
    if (value_in_banks(gr, x->chip, k < op->n_in ? op->in[k] : op->out[k - op->n_in], lo, hi)) return true;
  return false;
}

/* The streamed LOADs of the group (resident values and the table block) into v; their count. */
static int stream_loads(const lg_ctx *x, const ct_lg_group *gr, const gval *gv, int nv, sload *v) {
  const ct_chip *c = x->chip;
  int first = gr->first, n = gr->n_layers, m = 0;
  for (int i = -1; i < nv; i++) {
    int64_t moved, cyc, addr = -1, bytes = 0, tl[2], th[2];
    int f = first;
    if (i < 0) { /* the tables: one block, read first by the first layer with one */
      int64_t tb = ct_lg_group_table_bytes(x, first, n);
      if (!tb) continue;
      ct_lg_dma_cost(c, 1, &tb, &tb, 1, &moved, &cyc);
      for (lg_table t; f < first + n - 1; f++)
        if (ct_lg_layer_table(x->layers[f].op, &t), t.bytes) break;
      ct_lg_group_tables_at(x, gr, tl, th);
      addr = tl[0], bytes = th[0] - tl[0];
    } else {
      if (gv[i].kind != CT_LG_BUF_RES || !gv[i].moved[0]) continue;
      moved = gv[i].moved[0], cyc = (int64_t)ct_dma_cycles(c, (uint64_t)moved, true);
      f = first_reader(x, first, n, gv[i].v);
      for (int b = 0; b < gr->n_bufs; b++)
        if (gr->bufs[b].value == gv[i].v->id) addr = gr->bufs[b].addr, bytes = gr->bufs[b].bytes;
    }
    sload *l = &v[m++];
    l->f = f - first, l->lat = c->gmem_latency_cycles < cyc ? c->gmem_latency_cycles : cyc, l->xfer = cyc - l->lat;
    l->blo = l->bhi = 0;
    if (gr->bufs && addr >= 0) banks_of(c, addr, bytes, &l->blo, &l->bhi);
  }
  qsort(v, (size_t)m, sizeof *v, by_reader);
  return m;
}

/* Layer k starts at s: the start after every streamed LOAD holding a bank it uses then (the
 * cmodel grants a bank port to whoever started first); the LOADs it holds up move later. */
static int64_t layer_start(const lg_ctx *x, const ct_lg_group *gr, int li, int64_t s, int64_t lc, sload *v, int issued,
                           int64_t *tl) {
  for (int j = 0; j < issued; j++)
    if (v[j].hs <= s && s < v[j].he && layer_in_banks(x, gr, li, v[j].blo, v[j].bhi)) s = v[j].he;
  for (int j = 0; j < issued; j++)
    if (s < v[j].hs && v[j].hs < s + lc && layer_in_banks(x, gr, li, v[j].blo, v[j].bhi)) {
      int64_t d = s + lc - v[j].hs; /* this LOAD and the ones after it on the engine wait */
      for (int q = j; q < issued; q++) v[q].hs += d, v[q].he += d;
      *tl += d;
    }
  return s;
}

/* A single-tile group whose resident LOADs stream (cg_sched.h ct_cg_sched_group `stream`):
 * the LOADs run on one engine after the tile's other LOADs (ldd cycles), in the order of their
 * first readers; each layer starts when the previous one has ended and its own operands have
 * arrived, and — once the buffers are placed (gr->bufs) — a LOAD and a layer using a common
 * bank run one after the other, the one that started first going on. Returns the end of the
 * tile's compute from the start of its LOADs, or -1 when the group cannot stream (more than
 * one tile, MOVEs on the load engine, a chip without the semaphores). */
static int64_t stream_compute(lg_ctx *x, const ct_lg_group *gr, const gval *gv, int nv, int64_t moves, int64_t ldd) {
  const ct_chip *c = x->chip;
  if (gr->n_tiles != 1 || gr->pipelined || moves || !ct_cg_can_stream(c)) return -1;
  int n = gr->n_layers;
  sload *v = malloc(sizeof *v * (size_t)(nv + 2));
  if (!v) return x->oom = true, -1;
  int m = stream_loads(x, gr, gv, nv, v), li = 0;
  int64_t tl = ldd, tc = ldd, ready = ldd, le = -1, ls = -1; /* load engine free; compute free; last layer [ls, le) */
  for (int k = 0; k < n;) {
    int64_t lc = ct_lg_layer_cycles(x, gr->first + k), sc = tc > ready ? tc : ready;
    if (li < m && (v[li].f <= k || tl + v[li].lat < sc)) { /* the next LOAD, when it comes first */
      int64_t h = tl + v[li].lat;
      if (ls <= h && h < le && layer_in_banks(x, gr, gr->first + k - 1, v[li].blo, v[li].bhi)) h = le;
      v[li].hs = h, v[li].he = h + v[li].xfer, tl = v[li].he;
      if (v[li].f <= k) ready = tl;
      li++;
      continue;
    }
    ls = layer_start(x, gr, gr->first + k, sc, lc, v, li, &tl), le = tc = ls + lc;
    for (int j = 0; j < li; j++) /* held-up LOADs this layer's successors wait for */
      if (v[j].f <= k + 1 && v[j].he > ready) ready = v[j].he;
    k++;
  }
  free(v);
  return tc;
}

/* Estimated cycles, load/compute/store sums and DDR bytes of the group from its values and
 * the per-tile-type compute in tc (cp, mva, mvb) and MOVE cycles mv; chooses the order
 * within a step (gr->loads_first) that the model prefers. */
static void group_costs(lg_ctx *x, ct_lg_group *gr, const lg_tiling *tl, gval *gv, int nv, lg_tilecost tc[3],
                        const int64_t mv[3]) {
  const ct_chip *c = x->chip;
  for (int t = 0; t < 3; t++) {
    tc[t].ld = tc[t].st = tc[t].ldm = tc[t].stm = tc[t].ldd = 0;
    tc[t].per = gr->pipelined && gr->dbl_mid ? tc[t].per2 : tc[t].cp; /* single MIDs: the MXU and the VPU share banks */
  }
  /* the transfers: per tile type its LOADs and STOREs, the resident ones (issued with tile
   * 0's LOADs: first = resident + tile 0's) */
  int64_t *buf = malloc(sizeof *buf * (size_t)(8 * (nv + 2))), *ldv[3], *stv[3], *pre_v, *first;
  if (!buf) {
    gr->cycles = INT64_MAX / 4, x->oom = true;
    return;
  }
  for (int t = 0; t < 3; t++) ldv[t] = buf + t * (nv + 2), stv[t] = buf + (3 + t) * (nv + 2);
  pre_v = buf + 6 * (nv + 2), first = buf + 7 * (nv + 2);
  int pre_x = 0, ldx[3] = {0}, stx[3] = {0};
  int64_t pre_m = 0;
  for (int i = 0; i < nv; i++) {
    gval *g = &gv[i];
    if (g->kind == CT_LG_BUF_IN && !g->varies) g->kind = CT_LG_BUF_RES;
    for (int t = 0; t < 3; t++) {
      int64_t m = g->moved[t];
      if (!m) continue;
      if (g->kind == CT_LG_BUF_IN || g->kind == CT_LG_BUF_WSLICE) tc[t].ldm += m, ldv[t][ldx[t]++] = m;
      if (g->kind == CT_LG_BUF_OUT) tc[t].stm += m, stv[t][stx[t]++] = m;
    }
    if (g->kind == CT_LG_BUF_RES && g->moved[0]) pre_m += g->moved[0], pre_v[pre_x++] = g->moved[0];
  }
  int64_t tb = ct_lg_group_table_bytes(x, gr->first, gr->n_layers);
  if (tb) { /* the requant / LUT tables: one resident transfer (codegen: ct_cg_group_tables) */
    int64_t moved, cyc;
    ct_lg_dma_cost(c, 1, &tb, &tb, 1, &moved, &cyc);
    pre_m += moved, pre_v[pre_x++] = moved;
  }
  int nfirst = pre_x + ldx[0];
  memcpy(first, pre_v, sizeof *first * (size_t)pre_x), memcpy(first + pre_x, ldv[0], sizeof *first * (size_t)ldx[0]);
  int64_t cnt[3] = {tl->nsecs, tl->secs >= 3 ? tl->nsecs * (tl->secs - 2) : 0, tl->secs >= 2 ? tl->nsecs : 0};
  gr->ddr_load_bytes = pre_m, gr->ddr_store_bytes = 0;
  gr->compute_cycles = gr->load_cycles = gr->store_cycles = 0;
  /* a pipelined group's MOVEs run on load engine 0: alone there when there are two engines
   * or more, else between the LOADs; a tile's LOADs (STOREs) use at most CG_DMA_SLOTS engines
   * (cg_sched.c make_plan) */
  bool own0 = gr->pipelined && c->dma_load_engines >= 2 && (mv[0] || mv[1] || mv[2]);
  int le = ct_cg_dma_slots(c->dma_load_engines, own0), se = ct_cg_dma_slots(c->dma_store_engines, 0);
  for (int t = 0; t < 3; t++) {
    tc[t].ld = tc[t].ldd = ct_lg_dma_batch_cycles(c, ldv[t], ldx[t], le);
    tc[t].mv = gr->pipelined ? mv[t] : 0;
    if (gr->pipelined) tc[t].ld = own0 ? (mv[t] > tc[t].ldd ? mv[t] : tc[t].ldd) : tc[t].ldd + mv[t];
    tc[t].st = ct_lg_dma_batch_cycles(c, stv[t], stx[t], se);
    gr->ddr_load_bytes += cnt[t] * tc[t].ldm, gr->ddr_store_bytes += cnt[t] * tc[t].stm;
    gr->compute_cycles += cnt[t] * tc[t].per; /* overlapping tiles: their period, + the last one's rest below */
    gr->load_cycles += cnt[t] * tc[t].ld, gr->store_cycles += cnt[t] * tc[t].st;
  }
  if (tl->secs < 3) tc[1] = tc[0];
  gr->compute_cycles += tc[tl->secs == 1 ? 0 : 2].cp - tc[tl->secs == 1 ? 0 : 2].per; /* the last tile's rest */
  /* resident loads run beside tile 0's: pre = what they add to its loads */
  int64_t pre = ct_lg_dma_batch_cycles(c, first, nfirst, le) - tc[0].ldd;
  if (pre < 0) pre = 0;
  free(buf);
  /* a single tile whose resident LOADs stream instead: what they add to its compute */
  int64_t sc = stream_compute(x, gr, gv, nv, mv[0], tc[0].ldd);
  gr->stream = sc >= 0 && sc - tc[0].cp < pre + tc[0].ldd;
  if (gr->stream) pre = sc - tc[0].cp - tc[0].ldd;
  gr->load_cycles += pre;
  gr->loads_first = false;
  gr->pre_cycles = pre, gr->prefetched = false, gr->prefetch_cycles = 0;
  gr->cycles = ct_lg_pipeline_typed(c, gr->n_tiles, tl->secs, tc, pre, gr->pipelined, false);
  if (gr->pipelined && (mv[0] || mv[1] || mv[2])) {
    int64_t lf = ct_lg_pipeline_typed(c, gr->n_tiles, tl->secs, tc, pre, true, true);
    if (lf < gr->cycles) gr->cycles = lf, gr->loads_first = true;
  }
  /* without MOVEs, or with MOVEs on a load engine of their own, both orders cost the same
   * here, but the in-order dispatcher does not: with queues shorter than the group's compute
   * it holds the next tile's LOADs behind that compute */
  if (gr->pipelined && (own0 || !(mv[0] || mv[1] || mv[2])) && c->queue_depth < gr->n_layers) gr->loads_first = true;
  gr->tail_cycles = ct_lg_pipeline_tail(c, gr->n_tiles, tl->secs, tc, gr->pipelined, gr->loads_first);
  /* one load engine: a prefetch queues behind the last tile's MOVEs too (cg_sched.c) */
  int64_t mv_last = mv[tl->secs == 1 ? 0 : 2];
  if (c->dma_load_engines == 1) gr->tail_cycles = gr->tail_cycles > mv_last ? gr->tail_cycles - mv_last : 0;
}

/* The group's LMEM buffers, their addresses, and the tables and scratch after them
 * (lg_reserve.c): false when they do not fit; *need gets the LMEM they need. */
static bool place_buffers(lg_ctx *x, ct_lg_group *gr, gval *gv, int nv, int64_t scr, bool keep, int64_t *need) {
  bool ok = make_buffers(x, gr, gv, nv) && ct_lg_alloc_lmem(x->chip, gr, need);
  if (!gr->bufs || *need == INT64_MAX) x->oom = true; /* ct_lg_alloc_lmem's failure to allocate */
  if (gr->bufs) { /* the codegen's tables and scratch go after the buffers (lg_reserve.c) */
    int64_t tb = ct_lg_group_table_bytes(x, gr->first, gr->n_layers), at[3];
    if (ok && keep) ct_lg_spread_banks(x->chip, gr, tb, scr, &x->oom);
    int64_t end = gr->dbl_mid ? ct_lg_reserve_split(x->chip, gr->lmem_bytes, ct_lg_group_table_part(x, gr->first, gr->n_layers, true),
                                                    ct_lg_group_table_part(x, gr->first, gr->n_layers, false), scr, at)
                              : ct_lg_reserve_end(gr->lmem_bytes, tb, scr);
    gr->reserved_bytes = end - gr->lmem_bytes;
    if (end > *need) *need = end;
    if (end > x->chip->lmem_bytes) ok = false;
  }
  return ok;
}

bool ct_lg_eval_tiling(lg_ctx *x, int first, int n, const lg_tiling *tl, ct_lg_group *gr, bool keep, int64_t *need) {
  memset(gr, 0, sizeof *gr);
  gr->first = first, gr->n_layers = n, gr->axis = tl->axis, gr->nsecs = tl->nsecs, gr->secs = tl->secs;
  gr->n_tiles = tl->nsecs * tl->secs;
  gr->pipelined = tl->pipelined && gr->n_tiles >= 2;
  gr->n_steps = gr->pipelined ? gr->n_tiles + 2 : 3 * gr->n_tiles;
  int cap = 0;
  for (int li = first; li < first + n; li++) cap += x->layers[li].op->n_in + x->layers[li].op->n_out;
  gval *gv = malloc(sizeof *gv * (size_t)(cap + 1));
  if (!gv) return x->oom = true, *need = INT64_MAX, false;
  int nv = collect(x, first, n, tl, gv);
  lg_tilecost tc[3];
  memset(tc, 0, sizeof tc);
  int64_t scr = 0, mv[3] = {0, 0, 0}, *ts = malloc(sizeof *ts * (size_t)(tl->secs + 1));
  int *ty = malloc(sizeof *ty * (size_t)(tl->secs + 1)), ns = ts && ty ? samples(x, tl, ts, ty) : 0;
  for (int s = 0; s < ns; s++) {
    ct_lg_tile_ranges(x, first, n, tl, ts[s]);
    for (int i = 0; i < nv; i++) sample_value(x, tl, &gv[i], ty[s], s == 0);
    if (ty[s] >= 0) mv[ty[s]] = tile_compute(x, first, n, gv, nv, &tc[ty[s]]);
    for (int li = first; li < first + n; li++) {
      int64_t sb = ct_lg_scratch_bytes(x, n, li);
      if (sb > scr) scr = sb;
    }
    if (s == 0) {
      const ct_value *o = x->layers[first + n - 1].op->out[0];
      gr->tile_ndim = o->ndim;
      ct_lg_tile_extents(o, &x->rng[o->id], gr->tile_shape);
    }
  }
  free(ts), free(ty);
  if (tl->secs < 3) tc[1] = tc[0], mv[1] = mv[0];
  for (int i = 0; i < nv; i++) x->vbuf[gv[i].v->id] = 0;
  if (ns == 0) return free(gv), x->oom = true, *need = INT64_MAX, false;
  /* double MID buffers when they fit: consecutive tiles' compute overlaps (lg_overlap.c) */
  gr->dbl_mid = gr->pipelined && ct_lg_dep_order(x->chip);
  group_costs(x, gr, tl, gv, nv, tc, mv);
  bool ok = place_buffers(x, gr, gv, nv, scr, keep, need);
  if (!ok && gr->dbl_mid) {
    free(gr->bufs), gr->bufs = NULL, gr->n_bufs = 0, gr->dbl_mid = false;
    group_costs(x, gr, tl, gv, nv, tc, mv);
    ok = place_buffers(x, gr, gv, nv, scr, keep, need);
  }
  if (ok && gr->stream) group_costs(x, gr, tl, gv, nv, tc, mv); /* the stream against the placed buffers' banks */
  free(gv);
  if (!keep || !ok) free(gr->bufs), gr->bufs = NULL, gr->n_bufs = keep ? 0 : gr->n_bufs;
  return ok;
}
