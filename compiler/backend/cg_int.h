/* cg_int.h: internals of the model codegen shared by compiler/backend/cg_*.c (not a public
 * API): the codegen context, the tile box of a value, and the helpers every per-op emitter
 * uses (operand addresses, instruction chaining, DMA boxes, tables, window geometry). */
#ifndef CT_CG_INT_H
#define CT_CG_INT_H

#include "compiler/backend/cg_sched.h"
#include "compiler/backend/codegen.h"
#include "compiler/backend/lg_int.h"
#include "ops/tpu_util.h"

/* The part of a value one tile holds: offsets and extents per canonical NCHW axis (leading
 * axes of a lower-rank value padded with 1), and the value's full shape. */
typedef struct box {
  int64_t off[4], ext[4], full[4]; /* canonical NCHW: leading dims padded with 1 */
} box;

/* Codegen context of ct_cg_model: the plan, the program being written, the tile ranges of
 * the current group and tile, the staged instructions of the group (cg_sched.h), LMEM/GMEM
 * bump pointers. gr is the current tile's view of the group: in a pipelined group odd tiles
 * see the double buffers' copies swapped, so ct_cg_lmem_of (copy 0) gives the tile's own copy. */
typedef struct mg {
  const ct_lg_plan *p;
  ct_program *prog;
  lg_ctx x;
  const ct_lg_group *gr;
  int gi;
  cg_stage stage;              /* the current group's instructions, tile by tile */
  cg_sched sch;                /* emission state across groups */
  ct_lg_group view;            /* odd tiles' view of the group (bufs: view_bufs) */
  ct_lg_buffer *view_bufs;
  int64_t tab_lm, tab_gm;      /* where the current group's tables start (LMEM, GMEM) */
  int tab_part;                /* ct_cg_group_tables: 0 every layer's table, 1 the MXU layers', 2 the others' */
  int64_t lm_extra, gm_extra;  /* next free LMEM byte of the group, next free GMEM byte */
  int64_t lm_scratch;          /* next free scratch byte of the current layer (≥ lm_extra) */
  int li;                      /* the layer being emitted (ct_cg_emit_layer) */
  int64_t *lm_attr;            /* layer index → LMEM address of its requant / LUT table */
  uint8_t *seen;               /* value id → already loaded in this tile */
} mg;

/* Window geometry of a CONV/DWCONV/POOL tile along H from the tile's rows. */
typedef struct win {
  int64_t kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, ih, oh;
} win;

/* The layer's name for messages: its location, else its op name. */
const char *ct_cg_nm(const ct_op *op);
/* GMEM address the plan gives value v, -1 when it has none. */
int64_t ct_cg_gmem_of(const ct_lg_plan *p, const ct_value *v);
/* LMEM address of value v's first buffer copy in group gr, -1 when it has none. */
int64_t ct_cg_lmem_of(const ct_lg_group *gr, const ct_value *v);
/* Stages instruction *in of tile `tile` (-1: the group's tables) with debug layer name
 * `layer` (borrowed: an op location or value name); the group's schedule (ct_cg_sched_group)
 * sets its semaphores and emits it. Errors: CT_ERR_LIMIT (out of memory). */
ct_status ct_cg_put(mg *c, ct_insn *in, const char *layer, int64_t tile, ct_diag *d);
/* Tile box of value v under the current ranges (c->x.rng). Rank 0 is 1×1×1×1; rank > 4
 * folds its leading axes into N (false when the tile cuts one of them). Weights are whole:
 * the planner keeps them resident (a weight slice's loader narrows the box itself). */
bool ct_cg_box_of(const mg *c, const ct_value *v, box *b);
/* A LOAD (load = true) or STORE of box b between dense LMEM lm and the row-major tensor at
 * gm (byte addresses, element type dt). */
void ct_cg_dma_box(ct_insn *in, bool load, ct_dtype dt, int64_t lm, int64_t gm, const box *b);
/* The ISA activation of a quant activation. */
ct_isa_act ct_cg_act_of(ct_quant_act a);
/* Is t an integer storage type (ct_tq_is_storage)? */
bool ct_cg_is_int(ct_dtype t);
/* The activation fields (act, act_hi) and zp_out of a CONV / MATMUL / ELTWISE computing op's
 * result y: integer results from the op's act / qact_hi (ct_tq_act) and y's zero point, float
 * ones from act / act_min / act_max (relu, relu6, clip with lower bound 0; the bound an f32 in
 * act_hi:zp_out, docs/isa.md). Errors: "no codegen" naming the layer for other activations. */
ct_status ct_cg_insn_act(const ct_op *op, const ct_value *y, int64_t *act, int64_t *act_hi, int64_t *zp_out, ct_diag *d);
/* Sets CT_ERR_INPUT "layer ... no codegen yet[: why]" and returns it. */
ct_status ct_cg_no_cg(const ct_op *op, const char *why, ct_diag *d);
/* GMEM address of a border Cast's result (the program input): its own IO entry, apart from
 * the float input's (which other layers may read). -1 when the plan has none. */
int64_t ct_cg_io_addr(const ct_lg_plan *p, const ct_op *cast);
/* Places the table of layer li — `data`, tab->bytes long, element type tab->dtype, as
 * ct_lg_layer_table describes it — after the group's buffers and in GMEM (LG_ALIGN-aligned in
 * both, so the group's tables keep the same layout and load as one block: ct_cg_model), and
 * records its LMEM address in c->lm_attr[li]. Errors: CT_ERR_LIMIT when LMEM has no room
 * left; CT_ERR_INTERNAL past the LMEM the planner reserved. */
ct_status ct_cg_add_table(mg *c, const ct_op *op, int li, const void *data, const lg_table *tab, ct_diag *d);
/* Places `bytes` of scratch buffer `kind` (LG_SCRATCH_GATHER: of operand v) of the current
 * layer (c->li) after its scratch so far (LG_ALIGN-aligned): *addr gets its LMEM address.
 * The planner's description of the layer's scratch bounds it (ct_lg_scratch_need).
 * Errors: CT_ERR_LIMIT past the LMEM end; CT_ERR_INTERNAL when the description holds fewer
 * bytes, or past the LMEM the planner reserved (the planner and the codegen disagree). */
ct_status ct_cg_scratch_take(mg *c, const ct_op *op, lg_scratch_kind kind, const ct_value *v, int64_t bytes, int64_t *addr,
                       ct_diag *d);
/* The per-layer tables of the current group (of the layers c->tab_part selects): requant
 * pairs of CONV/MATMUL, LUT bytes.
 * Errors: a float layer, a LUT without 256 entries, CT_ERR_LIMIT. */
ct_status ct_cg_group_tables(mg *c, ct_diag *d);
/* Weight zero points must be 0 (CONV and MATMUL have none): CT_ERR_INPUT otherwise. */
ct_status ct_cg_need_sym(const ct_op *op, const ct_value *w, ct_diag *d);
/* Is v a weight slice loaded every tile (output-channel / feature cut) in the group? */
bool ct_cg_is_wslice(const mg *c, const ct_value *v);
/* Copies rows [ilo, ihi) of the tile box bx (held at *addr) to dense scratch LMEM after the
 * group's tables; *addr becomes the scratch address. Errors: CT_ERR_LIMIT (no LMEM left). */
ct_status ct_cg_gather_rows(mg *c, const ct_op *op, const ct_value *x, const box *bx, int64_t ilo, int64_t ihi,
                      int64_t *addr, int64_t t, ct_diag *d);
/* Operand x of a row-to-row layer op (elementwise, LUT, REQUANT, CAST, activation) whose
 * output tile is by; x's tile bx is held at *addr. When the tile holds other rows along H
 * than the output (the hull another reader of x needs, or rows x's stored part adds: the
 * planner's ranges, lg_tile.c), the output's rows are copied to scratch (ct_cg_gather_rows), *addr
 * becomes the copy and bx is narrowed to them (a resident weight whose rows are contiguous:
 * *addr moves to them in place); an operand of another extent along H (broadcast) is left
 * as is. ct_lg_gather_rows is the planner's side of the same rule. Errors: CT_ERR_LIMIT / CT_ERR_INTERNAL from ct_cg_gather_rows. */
ct_status ct_cg_fit_rows(mg *c, const ct_op *op, const ct_value *x, box *bx, const box *by, int64_t *addr, int64_t t,
                   ct_diag *d);
/* Window geometry *w of window layer li (kernel kh×kw) for input tile bx and output tile by;
 * gathers the rows the window reads when the tile holds more. Errors: rows missing from
 * the tile (CT_ERR_INTERNAL), negative tile padding (no codegen), CT_ERR_LIMIT. */
ct_status ct_cg_window_of(mg *c, const ct_op *op, int li, const box *bx, const box *by, int64_t kh, int64_t kw,
                    win *w, int64_t *in_addr, int64_t t, ct_diag *d);
/* Data movement of layer li, tile t (cg_data.c): Resize (nearest, whole factors), Concat
 * (any axis, inputs requantized), Transpose (rank <= 4), Slice (constant starts / steps),
 * Split (one MOVE per output).
 * Errors: a case without codegen (CT_ERR_INPUT naming the layer), CT_ERR_LIMIT. */
ct_status ct_cg_emit_data(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d);
/* The table of ConvTranspose layer li (requant pairs, bias and weights reordered for one
 * 1 × 1 CONV, cg_convt.c) at the offsets tab describes (ct_lg_layer_table), placed like
 * ct_cg_add_table. Errors: no codegen, CT_ERR_LIMIT. */
ct_status ct_cg_convt_tables(mg *c, const ct_op *op, int li, const lg_table *tab, ct_diag *d);
/* ConvTranspose (kernel = stride) of layer li, tile t: one CONV into scratch LMEM and k·k
 * scattering MOVEs. Errors: no codegen (CT_ERR_INPUT), CT_ERR_LIMIT (scratch). */
ct_status ct_cg_emit_convt(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d);
/* Is op a layer whose float result has codegen (casts, Softmax, data movement)? */
bool ct_cg_float_ok(const ct_op *op);
/* Is op a float activation of the function unit (Exp, Sigmoid, SiLU, Tanh, HardSigmoid,
 * HardSwish, LeakyRelu, Gelu: one EXP with its `func`)? */
bool ct_cg_float_fn(const ct_op *op);
/* A MOVE of a 4-D block of dtype dt: extents e, source / destination LMEM byte addresses and
 * strides (elements). Errors: no codegen (an extent above 65535), CT_ERR_LIMIT. */
ct_status ct_cg_move4(mg *c, const ct_op *op, ct_dtype dt, int64_t src, const int64_t ss[4], int64_t dst, const int64_t ds[4],
                   const int64_t e[4], int64_t t, ct_diag *d);

/* Float layers of layer li, tile t (cg_float.c): int <-> float Casts whose f32 scale field
 * gives the reference's results, Softmax, LayerNormalization. Errors: no codegen (CT_ERR_INPUT naming the layer). */
ct_status ct_cg_emit_float(mg *c, const ct_op *op, int li, int64_t t, ct_diag *d);
/* Instructions of layer li for tile t (none for border Casts and aliases). Errors: an op or
 * a case without codegen (CT_ERR_INPUT naming the layer), CT_ERR_LIMIT. */
ct_status ct_cg_emit_layer(mg *c, int li, int64_t t, ct_diag *d);

#endif
