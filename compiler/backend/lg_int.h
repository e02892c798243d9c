/* lg_int.h: internals of the back-end planner shared by compiler/backend/lg_*.c (not a
 * public API): the planning context, per-value tile ranges, costs and LMEM needs. */
#ifndef CT_LG_INT_H
#define CT_LG_INT_H

#include "compiler/backend/lg.h"

/* LMEM and GMEM alignment of every buffer (bytes): 64 keeps a port access inside one
 * buffer, and is the ISA's constant alignment (docs/isa.md .constbase). */
#define LG_ALIGN 64

/* Cycles of n DMA transfers moving moved[0..n) bytes (burst-rounded) over `engines` engines:
 * each alone takes ct_dma_cycles on one engine; the transfers go largest first to the engine
 * free soonest (LPT list scheduling, as cg_sched.c spreads them by time); at least latency +
 * Σ moved / min(DDR rate, port · min(engines · dma.stripe_banks, lmem.banks)) (the engines
 * share the DDR and the banks' ports). Sorts moved in place. */
int64_t ct_lg_dma_batch_cycles(const ct_chip *c, int64_t *moved, int n, int engines);

/* Per-tile costs: load / compute / store cycles, load / store bytes moved. The compute's
 * MOVEs (mv cycles) run on load engine 0 (in ld too): ldd is the LOADs alone; mva the
 * compute chain up to the end of its last MOVE layer, mvb the chain from its first MOVE
 * layer on (0 without MOVEs) — what the next tile's LOADs wait for (compute first) or delay
 * (loads first). */
typedef struct lg_tilecost {
  int64_t ld, cp, st, ldm, stm, ldd, mv, mva, mvb;
  int64_t per;            /* pipelined: compute cycles one more tile adds when consecutive tiles
                           * overlap (lg_overlap.c; 0: cp, no overlap) */
  int64_t per2;           /* per with double-buffered MID buffers */
  int64_t hold_in, hold_out; /* overlapping tiles: how long a tile's compute holds its IN copy
                              * (from its first reader's start) and its OUT copy (from its first
                              * writer's start to the tile's end); lg_overlap.c */
} lg_tilecost;

/* The pipeline over n_tiles tiles whose costs depend on their type along the axis (first,
 * middle, last: tc[0..2]); adds the DDR-sharing bound per step and the load engine 0 the
 * next tile's LOADs share with the compute's MOVEs, in the order loads_first gives. */
int64_t ct_lg_pipeline_typed(const ct_chip *c, int64_t n_tiles, int64_t secs, const lg_tilecost tc[3], int64_t pre,
                          bool pipelined, bool loads_first);

/* The cycles of a group after its last LOAD phase during which the DDR is free for other
 * transfers: a pipelined group's last two time steps (the last tile's compute beside tile
 * T − 2's STOREs, then its own STOREs) or a serial group's last compute and STOREs, less the
 * DDR time of those STOREs (≥ 0). The next group's resident LOADs run in it
 * (ct_lg_group.prefetched). */
int64_t ct_lg_pipeline_tail(const ct_chip *c, int64_t n_tiles, int64_t secs, const lg_tilecost tc[3], bool pipelined,
                            bool loads_first);

/* The range of one value in one tile: along axis ax (-1 = whole) rows [lo, hi), along N
 * (nax 0, or -1 = whole) [nlo, nhi). st_lo: first row this tile stores (escaping values). */
typedef struct lg_rng {
  bool set;
  int ax, nax;
  int64_t lo, hi, nlo, nhi, st_lo;
} lg_rng;

typedef struct lg_ctx {
  const ct_graph *g;
  const ct_chip *chip;
  const ct_lg_options *opt;
  ct_lg_layer *layers;
  int n_layers;
  int *layer_of_op;    /* g->ops index → layer */
  int *prod;           /* value id → producing layer, -1 = not a layer */
  int *cons_off, *cons;/* value id → consumer layers (CSR, ascending) */
  bool *model_out;     /* value id → module output */
  int *min_cons;       /* layer → smallest consumer layer (> itself), INT32_MAX if none */
  bool *chainable;     /* layer → may share a group with others */
  lg_rng *rng;         /* scratch, value id → range */
  int *mark;           /* scratch, value id → stamp */
  int64_t *prevhi;     /* scratch, value id → previous tile's hi */
  int *vbuf;           /* scratch, value id → buffer index in the group being evaluated */
  int stamp;
  bool exact;          /* size buffers over every tile, not a sample */
  bool oom;            /* an evaluation ran out of memory (the plan fails with CT_ERR_LIMIT
                        * "out of memory", not "does not fit") */
} lg_ctx;

/* lg_overlap.c */
/* Does the schedule order this chip's compute instructions by their data (cg_deps.c:
 * sem.count ≥ CG_SEM_DEPS_END), not by one chain? */
bool ct_lg_dep_order(const ct_chip *c);
/* The compute of one tile of layers [first, first + n) (lc[k]: cycles of layer first + k,
 * mv[k]: its MOVE cycles on load engine 0) when instructions wait only for their data: a
 * list simulation of SIM_TILES tiles, each layer one job on its engine (load engine 0 when
 * MOVEs are most of it, else its unit) in program order, after the previous layer of its
 * tile (a tile's buffers share banks), after the last reader of its result buffer in the
 * tile that used the same copy (the previous tile with single MID buffers, the one before
 * with double) and after tile t − 2 (cg_deps.c). *latency gets one tile's compute alone (the sum of lc), *period what one more
 * tile adds in the steady state. io[k]: bit 1 when layer first + k reads a buffer loaded
 * every tile (IN, WSLICE), bit 2 when it writes one stored every tile (OUT); span[0] gets
 * tile 0's time from the first such reader's start to the last one's end, span[1] from the
 * first such writer's start to the tile's end (the double buffers' hold, lg_cost.c). Out of
 * memory: all four the sum of lc (no overlap) and false returned; true otherwise. */
bool ct_lg_overlap(const lg_ctx *x, int first, int n, const int64_t *lc, const int64_t *mv, const uint8_t *io, bool dbl_mid,
                   int64_t *latency, int64_t *period, int64_t span[2]);

/* lg_layers.c */
ct_status ct_lg_ctx_init(lg_ctx *x, const ct_graph *g, const ct_chip *chip, const ct_lg_options *opt, ct_diag *d);
void ct_lg_ctx_free(lg_ctx *x);
/* Is layer li's output consumed outside [first, first+n) or a module output? */
bool ct_lg_escapes(const lg_ctx *x, const ct_value *v, int first, int n);
/* Slice op: start and step along axis a of its input (0 and 1 when a is not sliced); false
 * when the op is not a Slice with constant parameters and a positive step there. */
bool ct_lg_slice_axis(const ct_op *op, int a, int64_t *start, int64_t *step);
/* The dim of constant operand w of op (an MXU layer) that follows op's output axis a when
 * the weights are split along it (WSLICE): Conv W and bias dim 0, ConvTranspose W dim 1,
 * Gemm B dim 0 (transB) or 1, MatMul B and a Gemm C ([N], [1, N]) their last dim; -1 when
 * that dim's extent is not the output's along a (the operand is then loaded whole) or w is
 * A. One rule for the planner (lg_eval.c) and the codegen's loads (cg_model.c). */
int ct_lg_weight_dim(const ct_op *op, const ct_value *w, int a);
/* Is op (of graph g) a border Cast — a float module input cast to an integer storage type,
 * or an f32 one cast to bf16 / f16 (BF16 / F16 lowerings), when it is the only reader of that
 * input (and the input is no module output)? The program input, named as the module input,
 * is then the Cast's result (the cmodel quantizes or rounds the float data when it loads the
 * input; its own IO bytes, lg_gmem.c), so the Cast costs no compute. A float input that
 * other layers read too, other Casts included, stays the program input and its Casts are
 * CAST instructions (a program has one input of a name). */
bool ct_lg_border_cast(const ct_graph *g, const ct_op *op);
/* lg_prefetch.c: marks the groups whose resident LOADs (tables, weights loaded once) may run
 * during the previous group's tail (ct_lg_group.prefetched: LMEM disjoint from the previous
 * group's buffers, tables and scratch; no operand the previous group writes; pre_cycles no
 * more than the previous group's tail_cycles, so the tail hides them whole) and takes their
 * pre_cycles off their estimate (prefetch_cycles). */
void ct_lg_prefetch(const lg_ctx *x, ct_lg_plan *p);
/* The LMEM byte ranges [lo[k], hi[k]) of group gr's tables (empty: lo = hi), as the codegen
 * lays them out (cg_model.c): one block after the buffers, or with double MIDs the MXU
 * layers' and the others' each from a bank of their own (ct_lg_reserve_split). */
void ct_lg_group_tables_at(const lg_ctx *x, const ct_lg_group *gr, int64_t lo[2], int64_t hi[2]);

/* Whole-tensor helper: elements. */
int64_t ct_lg_numel(const ct_value *v);

/* lg_tile.c */
typedef struct lg_tiling {
  int axis;
  int64_t nsecs, secs;
  bool pipelined;
} lg_tiling;
/* Ranges of every value of group [first, first+n) for tile t (rng scratch). */
void ct_lg_tile_ranges(lg_ctx *x, int first, int n, const lg_tiling *tl, int64_t t);
/* Range *o of input `in` of layer l that its output range r needs (group axis gaxis, n
 * layers in the group): halos through windows, the same rows through row-to-row ops, whole
 * along other axes. */
void ct_lg_input_range(const ct_lg_layer *l, const ct_value *in, const lg_rng *r, int gaxis, int n, lg_rng *o);
/* Extents of v's tile under range r into ext[] (v->ndim entries); returns its elements. */
int64_t ct_lg_tile_extents(const ct_value *v, const lg_rng *r, int64_t *ext);
/* The window attributes of a Conv / ConvTranspose / pool on a 4-D operand 0, per spatial
 * axis (H, W): kernel (has_k false: absent, the weight's), strides and dilations (1 when
 * absent), pads [top, left, bottom, right] (0). */
typedef struct lg_win2 {
  int64_t k[2], s[2], d[2], p[4];
  bool has_k;
} lg_win2;
/* Reads op's window attributes into *w through the op table's accessors (the defaults filled
 * in). false (*w the defaults) when operand 0 is not 4-D or a list holds another count than
 * two per axis (which the verifier refuses). */
bool ct_lg_window2(const ct_op *op, lg_win2 *w);
/* lg_reserve.c: what a layer needs in LMEM beyond its operands' buffers, the one description
 * the planner reserves and the codegen lays out (docs/backend.md "Tables and scratch"). */
/* A layer's constant table, loaded once per group after the group's buffers (each table
 * LG_ALIGN-aligned, the same layout in GMEM): */
typedef enum lg_table_kind {
  LG_TABLE_NONE,
  LG_TABLE_RQ,     /* (multiplier, shift) int32 pairs, one per output channel / feature: a Conv /
                    * Gemm / MatMul with an integer storage result (not raw i32) */
  LG_TABLE_LUT,    /* a Lut's bytes (u8; i16 input: int16 entries of the 16-bit LUT), one table
                    * or one per channel */
  LG_TABLE_CONVT,  /* ConvTranspose (cg_convt.c): Q = k·k·OC pairs, Q biases at bias_off, the
                    * Q × C reordered weights at weights_off */
  LG_TABLE_ZERO_B  /* a zero f32 B for a LayerNormalization without one */
} lg_table_kind;
typedef struct lg_table {
  lg_table_kind kind;
  int64_t bytes;                /* 0: no table */
  int64_t entries;              /* RQ: pairs; LUT: entries; CONVT: Q; ZERO_B: f32 values */
  ct_dtype dtype;               /* element type of the program's constant */
  int64_t bias_off, weights_off; /* CONVT: byte offsets in the table */
} lg_table;
/* The table of op (*t; kind NONE and bytes 0 when it has none). */
void ct_lg_layer_table(const ct_op *op, lg_table *t);
/* A Lut's table bytes per table: 256 (8-bit input) or CT_ISA_LUT16_BYTES (i16 input). */
int64_t ct_lg_lut_stride(const ct_op *op);
/* Does a Lut have one table per channel (its table attribute holds C tables)? */
bool ct_lg_lut_per_channel(const ct_op *op);
/* The end of the LMEM group gr may touch: its buffers, tables and scratch (lmem_bytes +
 * reserved_bytes), or the end of LMEM when it has a ConvTranspose, whose codegen takes every
 * free byte after its reserved plane for its channel chunks (cg_convt.c). Bytes. */
int64_t ct_lg_group_lmem_end(const lg_ctx *x, const ct_lg_group *gr);
/* Bytes of the tables of group [first, first+n) as the codegen lays them out after the
 * group's buffers: each LG_ALIGN-aligned, one transfer. */
int64_t ct_lg_group_table_bytes(const lg_ctx *x, int first, int n);
/* The scratch buffers of a layer's tile, placed after the group's tables: */
typedef enum lg_scratch_kind {
  LG_SCRATCH_SLICE,   /* a float Slice that rounds: its tile in the input's type (MOVE, then CAST) */
  LG_SCRATCH_PATCHES, /* a patchify Conv (ct_lg_patchify): the tile's patches as channels */
  LG_SCRATCH_CONVT,   /* ConvTranspose: one output-channel plane of its input tile (at least) */
  LG_SCRATCH_GATHER   /* an operand whose tile holds other rows than the layer reads (ct_lg_gather_rows) */
} lg_scratch_kind;
/* Bytes of scratch buffer `kind` of layer li of a group of n layers (LG_SCRATCH_GATHER: the
 * gather of operand v) for the tile whose ranges x->rng holds; 0 when the layer has none. */
int64_t ct_lg_scratch_need(const lg_ctx *x, int n, int li, lg_scratch_kind kind, const ct_value *v);
/* All of layer li's scratch for the tile in x->rng: every ct_lg_scratch_need of the layer (one
 * gather per distinct operand), each LG_ALIGN-aligned. */
int64_t ct_lg_scratch_bytes(const lg_ctx *x, int n, int li);
/* Does layer li of a group of n layers read input v from a tile (x->rng) holding other rows
 * along the cut axis than it needs (ct_lg_input_range) — the hull of several readers, or the
 * rows an escaping value's stored part adds? Then the codegen copies the rows it needs to
 * scratch first (cg_util.c ct_cg_gather_rows), *bytes of them (v's tile over the needed rows). */
bool ct_lg_gather_rows(const lg_ctx *x, int n, int li, const ct_value *v, int64_t *bytes);
/* Cycles of the LMEM → LMEM MOVEs the codegen emits for layer li's tile (Resize, Transpose,
 * Slice, Concat: cg_data.c): the tile's bytes (source element size) / bank_port_bytes; 0 for
 * other layers. They run on load engine 0 inside the compute (lg_eval.c). */
int64_t ct_lg_move_cycles(const lg_ctx *x, int li);
/* Compute cycles of layer li for the ranges in x->rng (lg_eval.c). */
int64_t ct_lg_layer_cycles(const lg_ctx *x, int li);
/* Evaluates one tiling: buffers (sizes, kinds, lifetimes), LMEM allocation, costs. Fills
 * *gr (bufs malloc'd when keep, else freed) and returns true if it fits. *need gets the
 * bytes the allocation needed (for messages). */
bool ct_lg_eval_tiling(lg_ctx *x, int first, int n, const lg_tiling *tl, ct_lg_group *gr, bool keep, int64_t *need);
/* Best tiling of group [first, first+n): fills *gr (bufs kept when keep); false when no
 * tiling fits (then *need is the smallest need seen). */
bool ct_lg_best_tiling(lg_ctx *x, int first, int n, ct_lg_group *gr, bool keep, int64_t *need);
/* Is [first, first+n) a legal group (chainable layers, every layer but the last consumed
 * inside)? */
bool ct_lg_group_legal(const lg_ctx *x, int first, int n);

/* lg_alloc.c */
/* Places gr->bufs in LMEM (bank classes when pipelined); false when they do not fit;
 * *need = bytes needed (bank-rounded when pipelined). */
bool ct_lg_alloc_lmem(const ct_chip *c, ct_lg_group *gr, int64_t *need);

/* Is op a patch embedding the CONV fields cannot express — a Conv with kernel = stride = k
 * above 15, no padding, dilation 1, one group (ViT's 16×16 patches)? Its codegen first
 * rearranges each tile's k × k patches into channels (space-to-depth: MOVEs into scratch,
 * cg_ops.c), then runs a 1 × 1 CONV whose C·k·k input channels read the OIHW weights as
 * they are; the planner reserves the scratch and costs the MOVEs. */
bool ct_lg_patchify(const ct_op *op);

/* End of the LMEM a group uses when `tables` bytes (requant / LUT tables) and `scratch`
 * bytes follow its buffers, which end at `end` (each 64-byte aligned, as the codegen puts
 * them: cg_model.c ct_cg_group_tables, lg_reserve.c). */
int64_t ct_lg_reserve_end(int64_t end, int64_t tables, int64_t scratch);
/* The reserve of a group with double MIDs: the MXU layers' tables (tab_mxu bytes) from the
 * first bank boundary at or after `end`, the other layers' tables (tab_vpu) from the next bank
 * boundary after them, scratch from the next one after those (so the MXU and the VPU of
 * overlapping tiles read tables in different banks). at[0..2] get the three start addresses;
 * returns the end of the scratch. */
int64_t ct_lg_reserve_split(const ct_chip *c, int64_t end, int64_t tab_mxu, int64_t tab_vpu, int64_t scratch, int64_t at[3]);
/* The bytes of the group's tables of MXU layers (mxu true) or of the others, each table
 * LG_ALIGN-aligned (ct_lg_group_table_bytes over one kind of layer). */
int64_t ct_lg_group_table_part(const lg_ctx *x, int first, int n, bool mxu);

/* A group that is not pipelined: moves its buffers to bank boundaries, each on banks of its
 * own, when they and the reserve (ct_lg_reserve_end) still fit in LMEM, so that no two operands
 * of an instruction share a bank port (the cmodel's per-bank bound: a VPU instruction takes
 * at least max over banks ceil(bytes in the bank / bank_port_bytes) cycles, docs/cmodel.md;
 * two loads into one bank share its port). Updates addr and lmem_bytes; false (nothing
 * moved) when they do not fit or the group is pipelined (its classes already use separate
 * banks, *oom set when out of memory). */
bool ct_lg_spread_banks(const ct_chip *c, ct_lg_group *gr, int64_t tables, int64_t scratch, bool *oom);

/* First fit of n buffers over their lifetimes from offset 0 (decreasing size); returns the
 * end of the highest one, -1 when out of memory. */
int64_t ct_lg_first_fit(ct_lg_buffer *bufs, int n);

/* lg_gmem.c */
ct_status ct_lg_alloc_gmem(lg_ctx *x, ct_lg_plan *p, ct_diag *d);

#endif
