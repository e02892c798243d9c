/* lg_reserve.c: what a layer needs in LMEM beyond its operands' buffers — its constant table
 * and its tile's scratch (docs/backend.md "Tables and scratch") — described once: the planner
 * reserves it after a group's buffers (lg_eval.c), the codegen lays it out from it (cg_ops.c
 * ct_cg_group_tables, cg_convt.c, cg_util.c ct_cg_scratch_take), so a plan that fits always fits the
 * codegen. Tables are each LG_ALIGN-aligned after the last buffer; a layer's scratch buffers
 * each LG_ALIGN-aligned after the tables. */
#include "compiler/backend/lg_int.h"
#include "isa/isa.h"
#include "quant/quant.h"
#include "ops/tpu_util.h"

static int64_t al(int64_t v) { return (v + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN; }

/* ConvTranspose (kernel = stride, cg_convt.c): Q = k·k·OC requant pairs (8 B), Q biases
 * (4 B) and the Q × C reordered weights, each LG_ALIGN-aligned. */
static void convt_table(const ct_op *op, lg_table *t) {
  const ct_value *x = op->in[0], *w = op->n_in > 1 ? op->in[1] : NULL, *y = op->out[0];
  if (!w || x->ndim != 4 || w->ndim != 4 || y->ndim != 4) return;
  int64_t q = w->shape[2] * w->shape[2] * y->shape[1];
  t->kind = LG_TABLE_CONVT, t->entries = q, t->dtype = CT_U8;
  t->bias_off = al(q * 8), t->weights_off = t->bias_off + al(q * 4);
  t->bytes = al(t->weights_off + q * x->shape[1] * (int64_t)ct_dtype_size(w->dtype));
}

/* LayerNormalization without B (cg_float.c emit_layernorm): NORM reads a zero B table, f32
 * per normalized element. */
static void zero_b_table(const ct_op *op, lg_table *t) {
  const ct_value *y = op->out[0];
  if ((op->n_in > 2 && op->in[2]) || !y || y->ndim < 1) return;
  int64_t ax = ct_attr_layernorm_axis(op), n = 1;
  if (ax < 0) ax += y->ndim;
  for (int64_t i = ax < 0 ? 0 : ax; i < y->ndim; i++) n *= y->shape[i];
  t->kind = LG_TABLE_ZERO_B, t->entries = n, t->dtype = CT_F32, t->bytes = 4 * n;
}

void ct_lg_layer_table(const ct_op *op, lg_table *t) {
  const ct_value *y = op->out[0];
  *t = (lg_table){LG_TABLE_NONE, 0, 0, CT_U8, 0, 0};
  if (op->kind == CT_OP_LAYERNORM) return zero_b_table(op, t);
  if (op->kind == CT_OP_CONVTRANSPOSE) return convt_table(op, t); /* integer or float */
  if (!y || !ct_tq_is_storage(y->dtype) || y->ndim < 1 || ct_tq_raw_out(op)) return;
  if ((op->kind == CT_OP_CONV && y->ndim >= 2) || op->kind == CT_OP_GEMM || op->kind == CT_OP_MATMUL) {
    t->kind = LG_TABLE_RQ, t->dtype = CT_I32;
    t->entries = op->kind == CT_OP_CONV ? y->shape[1] : y->shape[y->ndim - 1];
    t->bytes = t->entries * 8;
  } else if (op->kind == CT_OP_LUT) {
    bool w16 = ct_lg_lut_stride(op) == CT_ISA_LUT16_BYTES;
    t->kind = LG_TABLE_LUT, t->dtype = w16 ? CT_I16 : CT_U8;
    t->bytes = ct_lg_lut_per_channel(op) ? ct_lg_lut_stride(op) * y->shape[1] : ct_lg_lut_stride(op);
    t->entries = t->bytes / (w16 ? 2 : 1);
  }
}

int64_t ct_lg_group_lmem_end(const lg_ctx *x, const ct_lg_group *gr) {
  for (int li = gr->first; li < gr->first + gr->n_layers; li++)
    if (x->layers[li].op->kind == CT_OP_CONVTRANSPOSE) return x->chip->lmem_bytes; /* cg_convt.c: free LMEM */
  return gr->lmem_bytes + gr->reserved_bytes;
}

int64_t ct_lg_lut_stride(const ct_op *op) {
  return op->in[0] && op->in[0]->dtype == CT_I16 ? CT_ISA_LUT16_BYTES : 256;
}

bool ct_lg_lut_per_channel(const ct_op *op) {
  int n = 0, e = ct_quant_lut_entries(op->in[0] ? op->in[0]->dtype : CT_I8);
  ct_attr_lut_table(op, &n);
  return n != e && op->out[0]->ndim >= 2 && n == e * op->out[0]->shape[1];
}

int64_t ct_lg_group_table_part(const lg_ctx *x, int first, int n, bool mxu) {
  int64_t b = 0;
  for (int li = first; li < first + n; li++) {
    lg_table t;
    ct_lg_layer_table(x->layers[li].op, &t);
    if (t.bytes && (x->layers[li].unit == CT_LG_UNIT_MXU) == mxu) b = al(b) + t.bytes;
  }
  return b;
}

int64_t ct_lg_group_table_bytes(const lg_ctx *x, int first, int n) {
  int64_t b = 0;
  for (int li = first; li < first + n; li++) {
    lg_table t;
    ct_lg_layer_table(x->layers[li].op, &t);
    if (t.bytes) b = al(b) + t.bytes;
  }
  return b;
}

bool ct_lg_gather_rows(const lg_ctx *x, int n, int li, const ct_value *v, int64_t *bytes) {
  const ct_lg_layer *l = &x->layers[li];
  const lg_rng *rv = &x->rng[v->id], *ry = &x->rng[l->op->out[0]->id];
  bool w = ct_lg_is_weight(v);
  ct_op_kind k = l->op->kind;
  *bytes = 0;
  /* a weight operand is fitted to the output's rows by the binary ELTWISE ops only (cg_ops.c
   * emit_eltwise); other layers read their weights whole (CONV kernels, MATMUL B, tables) */
  if (w && k != CT_OP_ADD && k != CT_OP_SUB && k != CT_OP_MUL && k != CT_OP_DIV && k != CT_OP_MAX && k != CT_OP_MIN)
    return false;
  /* an activation's tile is its readers' hull only in a chain; a single layer loads its rows */
  if ((!w && (n < 2 || !rv->set)) || !ry->set) return false;
  lg_rng o;
  ct_lg_input_range(l, v, ry, -1, n, &o);
  if (o.ax < 0) return false; /* the layer reads the whole axis */
  bool cut = !w && rv->ax == o.ax; /* else the tile holds the whole axis (a weight: resident) */
  if (o.lo == (cut ? rv->lo : 0) && o.hi == (cut ? rv->hi : v->shape[o.ax])) return false;
  if (w) { /* codegen (ct_cg_fit_rows) addresses a contiguous slice of a weight in place; it gathers
            * along H of the NCHW box only */
    bool contiguous = true;
    for (int i = 0; i < o.ax; i++) contiguous = contiguous && v->shape[i] == 1;
    if (v->ndim > 4 || o.ax + 4 - v->ndim != 2 || contiguous) return false;
  }
  int64_t ext[CT_MAX_DIMS];
  o.nax = rv->nax, o.nlo = rv->nlo, o.nhi = rv->nhi;
  *bytes = ct_lg_tile_extents(v, &o, ext) * (int64_t)ct_dtype_size(v->dtype);
  return true;
}

bool ct_lg_patchify(const ct_op *op) {
  if (op->kind != CT_OP_CONV || op->n_in < 2 || !op->in[1] || op->in[1]->ndim != 4 || op->in[0]->ndim != 4) return false;
  lg_win2 w;
  int64_t k = op->in[1]->shape[2];
  bool ok = ct_lg_window2(op, &w) && k > 15 && op->in[1]->shape[3] == k && w.s[0] == k && w.s[1] == k && ct_attr_conv_group(op) == 1;
  for (int i = 0; ok && i < 4; i++) ok = w.p[i] == 0;
  for (int i = 0; ok && i < 2; i++) ok = w.d[i] == 1;
  return ok;
}

int64_t ct_lg_scratch_need(const lg_ctx *x, int n, int li, lg_scratch_kind kind, const ct_value *v) {
  const ct_op *op = x->layers[li].op;
  const ct_value *y = op->out[0];
  int64_t ext[CT_MAX_DIMS], b = 0;
  if (x->layers[li].unit == CT_LG_UNIT_NONE || !y) return 0;
  switch (kind) {
  case LG_SCRATCH_SLICE: /* a float Slice that rounds: MOVE to scratch, then CAST (cg_data.c) */
    if (op->kind != CT_OP_SLICE || !op->in[0] || op->in[0]->dtype == y->dtype || !x->rng[y->id].set) return 0;
    return ct_lg_tile_extents(y, &x->rng[y->id], ext) * (int64_t)ct_dtype_size(op->in[0]->dtype);
  case LG_SCRATCH_PATCHES: /* the tile's patches as channels (cg_ops.c space_to_depth) */
    if (!ct_lg_patchify(op) || !x->rng[y->id].set) return 0;
    ct_lg_tile_extents(y, &x->rng[y->id], ext);
    return ext[0] * op->in[0]->shape[1] * op->in[1]->shape[2] * op->in[1]->shape[2] * ext[2] * ext[3] *
           (int64_t)ct_dtype_size(op->in[0]->dtype);
  case LG_SCRATCH_CONVT: /* one output-channel plane of the input tile (cg_convt.c; more when free) */
    if (op->kind != CT_OP_CONVTRANSPOSE || !op->in[0] || op->in[0]->ndim != 4 || !x->rng[op->in[0]->id].set) return 0;
    ct_lg_tile_extents(op->in[0], &x->rng[op->in[0]->id], ext);
    return ext[0] * ext[2] * ext[3] * (int64_t)ct_dtype_size(y->dtype);
  case LG_SCRATCH_GATHER: /* one per distinct operand whose tile holds other rows than it reads */
    for (int i = 0; i < op->n_in; i++)
      if (op->in[i] == v) return ct_lg_gather_rows(x, n, li, v, &b) ? b : 0;
    return 0;
  }
  return 0;
}

int64_t ct_lg_scratch_bytes(const lg_ctx *x, int n, int li) {
  const ct_op *op = x->layers[li].op;
  int64_t s = al(ct_lg_scratch_need(x, n, li, LG_SCRATCH_SLICE, NULL)) + al(ct_lg_scratch_need(x, n, li, LG_SCRATCH_PATCHES, NULL)) +
              al(ct_lg_scratch_need(x, n, li, LG_SCRATCH_CONVT, NULL));
  for (int i = 0; i < op->n_in; i++) {
    bool dup = false;
    for (int j = 0; j < i; j++) dup = dup || op->in[j] == op->in[i];
    if (op->in[i] && !dup) s += al(ct_lg_scratch_need(x, n, li, LG_SCRATCH_GATHER, op->in[i]));
  }
  return s;
}
