/* lg_reserve.c: the LMEM the codegen adds after a group's buffers, reserved by the planner
 * so a plan it returns always fits the codegen (docs/backend.md "Tables and scratch"):
 * the group's constant tables (cg_ops.c ct_cg_group_tables — requant pairs, LUTs, ConvTranspose's
 * reordered weights, a zero B for a LayerNormalization without one — laid out by ct_cg_add_table: each 64-aligned
 * after the last buffer) and the largest per-layer scratch (cg_util.c ct_cg_gather_rows, cg_data.c
 * float Slice, cg_convt.c one output plane; each 64-aligned after the tables). */
#include "compiler/backend/lg_int.h"
#include "isa/isa.h"
#include "quant/quant.h"
#include "ops/tpu_util.h"

static int64_t al(int64_t v) { return (v + LG_ALIGN - 1) / LG_ALIGN * LG_ALIGN; }

/* ConvTranspose (kernel = stride, cg_convt.c convt_layout): Q = k·k·OC requant pairs (8 B),
 * Q int32 biases and the Q × C reordered int8 weights, each 64-aligned. */
static int64_t convt_table_bytes(const ct_op *op) {
  const ct_value *x = op->in[0], *w = op->n_in > 1 ? op->in[1] : NULL, *y = op->out[0];
  if (!w || x->ndim != 4 || w->ndim != 4 || y->ndim != 4) return 0;
  int64_t q = w->shape[2] * w->shape[2] * y->shape[1];
  return al(al(q * 8) + al(q * 4) + q * x->shape[1] * (int64_t)ct_dtype_size(w->dtype));
}

/* LayerNormalization without B (cg_float.c emit_layernorm): NORM reads a zero B table, f32
 * per normalized element. */
static int64_t layernorm_table_bytes(const ct_op *op) {
  const ct_value *y = op->out[0];
  if ((op->n_in > 2 && op->in[2]) || !y || y->ndim < 1) return 0;
  int64_t ax = ct_op_get_int(op, "axis", -1), s = 4;
  if (ax < 0) ax += y->ndim;
  for (int64_t i = ax < 0 ? 0 : ax; i < y->ndim; i++) s *= y->shape[i];
  return s;
}

int64_t ct_lg_table_bytes(const ct_op *op) {
  const ct_value *y = op->out[0];
  if (op->kind == CT_OP_LAYERNORM) return layernorm_table_bytes(op);
  if (op->kind == CT_OP_CONVTRANSPOSE && y && y->ndim == 4) return convt_table_bytes(op); /* integer or float */
  if (!y || !ct_tq_is_storage(y->dtype) || y->ndim < 1 || ct_tq_raw_out(op)) return 0;
  if (op->kind == CT_OP_CONV && y->ndim >= 2) return y->shape[1] * 8;
  if (op->kind == CT_OP_GEMM || op->kind == CT_OP_MATMUL) return y->shape[y->ndim - 1] * 8;
  if (op->kind == CT_OP_CONVTRANSPOSE) return convt_table_bytes(op);
  if (op->kind != CT_OP_LUT) return 0;
  return ct_lg_lut_per_channel(op) ? ct_lg_lut_stride(op) * y->shape[1] : ct_lg_lut_stride(op);
}

int64_t ct_lg_lut_stride(const ct_op *op) {
  return op->in[0] && op->in[0]->dtype == CT_I16 ? CT_ISA_LUT16_BYTES : 256;
}

bool ct_lg_lut_per_channel(const ct_op *op) {
  int n = 0, e = ct_quant_lut_entries(op->in[0] ? op->in[0]->dtype : CT_I8);
  ct_op_get_ints(op, "table", &n);
  return n != e && op->out[0]->ndim >= 2 && n == e * op->out[0]->shape[1];
}

int64_t ct_lg_group_table_bytes(const lg_ctx *x, int first, int n) {
  int64_t b = 0;
  for (int li = first; li < first + n; li++) {
    int64_t t = ct_lg_table_bytes(x->layers[li].op);
    if (t) b = al(b) + t;
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
  int n = 0;
  const int64_t *st = ct_op_get_ints(op, "strides", &n), *p = ct_op_get_ints(op, "pads", &n), *dl = ct_op_get_ints(op, "dilations", &n);
  int64_t k = op->in[1]->shape[2];
  bool ok = k > 15 && op->in[1]->shape[3] == k && st && st[0] == k && st[1] == k && ct_op_get_int(op, "group", 1) == 1;
  for (int i = 0; ok && p && i < 4; i++) ok = p[i] == 0;
  for (int i = 0; ok && dl && i < 2; i++) ok = dl[i] == 1;
  return ok;
}

int64_t ct_lg_scratch_bytes(const lg_ctx *x, int first, int n, int li) {
  const ct_op *op = x->layers[li].op;
  const ct_value *y = op->out[0];
  if (x->layers[li].unit == CT_LG_UNIT_NONE || !y) return 0;
  int64_t s = 0;
  if (op->kind == CT_OP_SLICE && op->in[0] && op->in[0]->dtype != y->dtype) { /* MOVE to scratch, then CAST */
    int64_t ext[CT_MAX_DIMS];
    if (x->rng[y->id].set) s += al(ct_lg_tile_extents(y, &x->rng[y->id], ext) * (int64_t)ct_dtype_size(op->in[0]->dtype));
  }
  if (ct_lg_patchify(op) && x->rng[y->id].set) { /* the tile's patches as channels */
    int64_t ext[CT_MAX_DIMS], k = op->in[1]->shape[2];
    ct_lg_tile_extents(y, &x->rng[y->id], ext);
    s += al(ext[0] * op->in[0]->shape[1] * k * k * ext[2] * ext[3] * (int64_t)ct_dtype_size(op->in[0]->dtype));
  }
  if (op->kind == CT_OP_CONVTRANSPOSE && op->in[0] && op->in[0]->ndim == 4 && x->rng[op->in[0]->id].set) {
    int64_t ext[CT_MAX_DIMS]; /* at least one output-channel plane of the input tile */
    ct_lg_tile_extents(op->in[0], &x->rng[op->in[0]->id], ext);
    s += al(ext[0] * ext[2] * ext[3] * (int64_t)ct_dtype_size(y->dtype));
  }
  /* row gathers: an input tile holding other rows than this layer reads (the hull of several
   * readers, an escaping value's stored rows) is copied row by row to scratch first */
  for (int i = 0; i < op->n_in; i++) {
    const ct_value *v = op->in[i];
    int64_t b;
    if (!v || !ct_lg_gather_rows(x, n, li, v, &b)) continue;
    bool dup = false;
    for (int j = 0; j < i; j++) dup = dup || op->in[j] == v;
    if (!dup) s += al(b);
  }
  (void)first;
  return s;
}
