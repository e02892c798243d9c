/* lg.h: the back-end planner — layer groups, N/H tiling with halos, the software-pipeline
 * cost model, bank-aware LMEM allocation and GMEM allocation over a generic ct_graph (Top or
 * Tpu). Anchors: TPU-MLIR's LayerGroup (N/H slicing, time steps, DP over the topological
 * order), SCALE-Sim's MXU fold formula (docs/cmodel.md). Algorithms: docs/backend.md. */
#ifndef CT_LG_H
#define CT_LG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"
#include "ir/ir.h"
#include "isa/chip.h"

/* Grouping strategy (`--layer-group`). */
typedef enum ct_lg_strategy {
  CT_LG_NONE,   /* one layer per group */
  CT_LG_GREEDY, /* from each layer, the group that saves the most estimated cycles */
  CT_LG_DP,     /* dynamic programming over the topological order (TPU-MLIR LayerGroup) */
  CT_LG_LONGEST, /* from each layer, the longest legal group that fits and is estimated no slower
                  * than its layers one per group */
  CT_LG_MAX,     /* from each layer, the longest legal group that fits (maximal fusion, even when
                  * slower: TPU-MLIR's simple grouping) */
  CT_LG_SEARCH   /* the partition ct_lg_options.group_len gives: candidates of the search that
                  * measures groupings on the cmodel (deploy/search.h; `ctpu deploy` only) */
} ct_lg_strategy;

typedef struct ct_lg_options {
  ct_lg_strategy strategy;
  int assume_bytes;   /* bytes per element for every activation and weight (--assume-dtype
                       * i8 → 1); 0 = from each value's dtype */
  int max_group_layers; /* longest group the DP/greedy consider; 0 = default 24 */
  const int *group_len; /* CT_LG_SEARCH: group k holds the next group_len[k] layers of the
                         * topological order (n_group_len groups covering every layer) */
  int n_group_len;
} ct_lg_options;

/* How a layer can be tiled. */
typedef enum ct_lg_trait {
  CT_LG_WINDOW,  /* NCHW op with a window along H (Conv, MaxPool, AveragePool): N/H tiles, halos */
  CT_LG_ELTWISE, /* NCHW op row-to-row along H (activations, binary ops, Concat over C) */
  CT_LG_ALIAS,   /* GMEM view (Reshape, Flatten, Squeeze, Unsqueeze, Identity): no work */
  CT_LG_WHOLE    /* needs a whole axis (Softmax, global pooling, Gemm, Resize, ...): own group */
} ct_lg_trait;

/* Engine a layer's compute runs on. */
typedef enum ct_lg_unit { CT_LG_UNIT_NONE, CT_LG_UNIT_MXU, CT_LG_UNIT_VPU } ct_lg_unit;

#define CT_LG_MAX_AXES 8

/* One layer: a live op other than Input/Weight whose output is not constant. */
typedef struct ct_lg_layer {
  const ct_op *op;
  ct_lg_trait trait;
  ct_lg_unit unit;
  int64_t kh, sh, dh, pad_top; /* window along H (WINDOW); 1, 1, 1, 0 otherwise */
  int n_axes;                  /* output axes a single-layer group may slice (WHOLE/others) */
  int axes[CT_LG_MAX_AXES];
  int wsplit_axis;             /* output axis along which the weights split (output channels /
                                * features), -1 = weights never split */
  int64_t weight_bytes;        /* constant inputs, bytes */
  int64_t macs;                /* multiply-accumulates of the whole layer (MXU layers) */
} ct_lg_layer;

/* LMEM buffer kinds and the bank classes of the pipeline (docs/backend.md "Banks"). */
typedef enum ct_lg_buf_kind {
  CT_LG_BUF_IN,     /* group input tile, loaded every tile (double-buffered when pipelined) */
  CT_LG_BUF_RES,    /* resident: weights and inputs identical for every tile, loaded once */
  CT_LG_BUF_WSLICE, /* weight slice loaded every tile (output-channel split) */
  CT_LG_BUF_MID,    /* intermediate, produced and consumed within one tile's compute
                     * (double-buffered when pipelined and ct_lg_group.dbl_mid) */
  CT_LG_BUF_OUT     /* group output tile, stored every tile (double-buffered when pipelined) */
} ct_lg_buf_kind;

/* Bank classes of a pipelined group: the IN / WSLICE and OUT copies, the compute buffers (MID
 * copy 0, RES); with double MIDs (ct_lg_group.dbl_mid) the MID copies 1 and the resident
 * buffers only MXU layers read (RESM) and the others (RESV) get ranges of their own, so the
 * MXU working on tile t + 1 and the VPU on tile t never share a bank (the cmodel serializes
 * engines that do). A pipeline needs banks for the first CT_LG_CLS_MID1 classes at least. */
enum { CT_LG_CLS_IN0, CT_LG_CLS_IN1, CT_LG_CLS_OUT0, CT_LG_CLS_OUT1, CT_LG_CLS_COMPUTE, CT_LG_CLS_MID1, CT_LG_CLS_RESM,
       CT_LG_CLS_RESV, CT_LG_NCLS };

typedef struct ct_lg_buffer {
  int value;            /* value id in the graph */
  ct_lg_buf_kind kind;
  int copy;             /* 0 or 1 (double buffers); 0 otherwise */
  int cls;              /* bank class CT_LG_CLS_* */
  int live_lo, live_hi; /* lifetime in layer positions within the group, inclusive;
                         * 0 .. n_layers - 1 for everything but MID */
  int64_t addr, bytes;  /* LMEM byte address and size (bytes ≥ the largest tile's need) */
} ct_lg_buffer;

typedef struct ct_lg_group {
  int first, n_layers;  /* layers [first, first + n_layers) of the plan */
  int axis;             /* sliced axis of the last layer's output; -1 = none */
  int64_t nsecs, secs;  /* slices along N and along axis; tiles = nsecs · secs */
  int64_t n_tiles;
  int64_t tile_shape[CT_MAX_DIMS]; /* largest tile of the last layer's output */
  int tile_ndim;
  bool pipelined;       /* double-buffered, load/compute/store overlapped */
  bool dbl_mid;         /* pipelined with double MID buffers: tile t uses copy t mod 2, so
                         * its compute overlaps tile t − 1's (docs/pipeline.md) */
  bool loads_first;     /* pipelined: each step issues the next tile's LOADs before the
                         * compute (whose MOVEs then queue behind them on load engine 0);
                         * else the compute first (docs/pipeline.md "Order within a step");
                         * also without MOVEs when queue.depth < the group's layers */
  int64_t n_steps;      /* time steps: tiles + 2 when pipelined, else 3 · tiles */
  int64_t lmem_bytes;   /* end of the highest buffer */
  int64_t reserved_bytes; /* LMEM after the buffers kept for the codegen's tables and scratch */
  int64_t cycles;       /* estimated cycles (pipeline cost model; less prefetch_cycles) */
  int64_t pre_cycles;   /* what the resident LOADs (tables, weights loaded once) add to tile 0's */
  int64_t tail_cycles;  /* DDR-free cycles after the last LOAD phase (ct_lg_pipeline_tail) */
  bool prefetched;      /* the resident LOADs run before the barrier, during the previous
                         * group's tail: their LMEM and the previous group's are disjoint
                         * (lg_prefetch.c; codegen: cg_prefetch.c) */
  int64_t prefetch_cycles; /* pre_cycles, hidden by the previous group's tail when prefetched */
  bool stream;          /* a single tile whose resident LOADs stream: each layer waits for its
                         * own operands only (lg_eval.c stream_compute; codegen: cg_sched.h) */
  int64_t compute_cycles, load_cycles, store_cycles; /* sums over tiles, without overlap between
                                                      * phases (compute: overlapping tiles count
                                                      * their period, lg_overlap.c) */
  int64_t ddr_load_bytes, ddr_store_bytes;           /* burst-rounded bytes moved */
  int bank_lo[CT_LG_NCLS], bank_hi[CT_LG_NCLS];      /* banks [lo, hi) of each class */
  ct_lg_buffer *bufs;
  int n_bufs;
} ct_lg_group;

/* GMEM regions. */
typedef enum ct_lg_region { CT_LG_GM_WEIGHT, CT_LG_GM_IO, CT_LG_GM_ACT } ct_lg_region;

typedef struct ct_lg_gmem {
  int value;            /* value id */
  ct_lg_region region;
  int alias_of;         /* value id whose bytes this value shares (views), -1 = own bytes */
  int live_lo, live_hi; /* groups [lo, hi] during which the bytes must be kept (ACT) */
  int64_t addr, bytes;
} ct_lg_gmem;

typedef struct ct_lg_plan {
  const ct_graph *g;
  ct_chip chip;
  ct_lg_options opt;
  ct_lg_layer *layers;
  int n_layers;
  int *layer_of_op;     /* op index in g->ops → layer index, -1 = not a layer */
  ct_lg_group *groups;
  int n_groups;
  ct_lg_gmem *gmem;     /* one entry per value that lives in GMEM */
  int n_gmem;
  int64_t region_base[3], region_bytes[3]; /* weight, IO, activation regions */
  int64_t gmem_bytes;   /* end of the activation region */
  int64_t total_cycles, ddr_bytes, lmem_peak;
} ct_lg_plan;

/* Does group gr emit instructions: a layer other than a border Cast (the cmodel converts the
 * program input as it loads it) or a GMEM view (Reshape, Flatten, ...)? */
bool ct_lg_group_emits(const ct_graph *g, const ct_lg_layer *layers, const ct_lg_group *gr);

/* Parses "none" | "greedy" | "dp" | "longest"; false when unknown. */
bool ct_lg_strategy_parse(const char *s, ct_lg_strategy *out);
const char *ct_lg_strategy_name(ct_lg_strategy s);

/* Plans graph g (topologically sorted, shapes inferred) for chip: layer groups, tiles, the
 * estimated cycles per group, LMEM buffers and GMEM addresses (*out, freed with
 * ct_lg_plan_free; g must outlive it). Errors: CT_ERR_INPUT for a value without a shape or
 * an unknown element size; CT_ERR_LIMIT when a layer's smallest tile does not fit LMEM
 * (`layer "conv1": smallest tile needs 300000 bytes of LMEM, the chip has 262144`), when
 * GMEM is too small, or when out of memory. Nothing is returned on error. */
ct_status ct_lg_plan_graph(const ct_graph *g, const ct_chip *chip, const ct_lg_options *opt, ct_lg_plan **out,
                           ct_diag *d);

void ct_lg_plan_free(ct_lg_plan *p);

/* Writes the plan into the graph's back-end annotations (ir.h): every value in GMEM gets
 * annot.gmem_addr and annot.bytes, every value with an LMEM buffer annot.lmem_addr (copy 0);
 * every layer's op gets annot.group (tile and step stay −1: they vary per instruction). g must
 * be the graph p was planned from. */
void ct_lg_annotate(const ct_lg_plan *p, ct_graph *g);

/* Writes the plan as CSV: one row per group (index, layers, first/last layer names, axis, tile
 * shape, tile count, pipelined, steps, LMEM bytes, estimated cycles, DDR bytes) and a summary
 * row `total` (est. cycles, DDR bytes, LMEM peak). false on a write error. */
bool ct_lg_write_csv(const ct_lg_plan *p, FILE *f);

/* ---- pieces exposed for the unit tests and the codegen ---- */

/* True when v is a weight: a constant, or computed only from weights by ops the compiler
 * folds into weight preparation (a Top QDQ graph's DequantizeLinear of an integer
 * initializer, kept for the lowering). Such ops are not layers; their outputs live in the
 * GMEM weight region like constants. */
bool ct_lg_is_weight(const ct_value *v);

/* Bytes per element of v under the options (assume_bytes or the dtype's size). */
int64_t ct_lg_elem_bytes(const ct_lg_options *o, const ct_value *v);

/* Rows [*lo, *hi) of a layer's input needed for its output rows [olo, ohi) along H, for a
 * window of kernel kh, stride sh, dilation dh and begin pad pad_top, clipped to [0, in_h):
 * lo = olo·sh − pad_top, hi = (ohi − 1)·sh − pad_top + (kh − 1)·dh + 1. */
void ct_lg_halo_rows(int64_t olo, int64_t ohi, int64_t kh, int64_t sh, int64_t dh, int64_t pad_top, int64_t in_h,
                     int64_t *lo, int64_t *hi);

/* Rows [*lo, *hi) of a ConvTranspose's input that contribute to its output rows [olo, ohi):
 * output row o = i·sh − pad_top + j·dh for input row i and kernel row j < kh, so i runs from
 * ceil((olo + pad_top − (kh − 1)·dh) / sh) to floor((ohi − 1 + pad_top) / sh), clipped. */
void ct_lg_transposed_rows(int64_t olo, int64_t ohi, int64_t kh, int64_t sh, int64_t dh, int64_t pad_top,
                           int64_t in_h, int64_t *lo, int64_t *hi);

/* DMA cycles and burst-rounded bytes of one transfer of a dense tile `tile` of a row-major
 * tensor `shape` (ndim dims) with elem_bytes per element, in isolation: runs are the
 * contiguous pieces, moved = runs · ceil(run / burst) · burst, cycles = latency +
 * ceil(moved / min(bytes_per_cycle, bank_port_bytes)) (docs/cmodel.md "DMA"). */
void ct_lg_dma_cost(const ct_chip *c, int ndim, const int64_t *shape, const int64_t *tile, int64_t elem_bytes,
                    int64_t *moved, int64_t *cycles);

/* Cycles of a software pipeline of n tiles whose tile i loads for ld[i], computes for cp[i]
 * and stores for st[i] cycles (indexes clamp to the arrays' n entries). Pipelined: time step
 * s = 0 .. n + 1 takes max(ld[s], cp[s − 1], st[s − 2]) (double buffering); otherwise the
 * sum of all three. pre is added to step 0's load (resident buffers). */
int64_t ct_lg_pipeline_cycles(int64_t n, const int64_t *ld, const int64_t *cp, const int64_t *st, int64_t pre,
                              bool pipelined);

#endif
