/* core.h: the cmodel's clock loop on an internal instruction view (ct_sim_op): dispatcher,
 * per-engine queues, counting semaphores, LMEM bank-port arbitration, shared DDR, counters,
 * race and deadlock checks (docs/architecture.md §3, §5). Independent of the ISA encoding: the
 * ISA mapping (cmodel/decode.c) fills ct_sim_op and supplies the functional callback. */
#ifndef CT_SIM_CORE_H
#define CT_SIM_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "dma/dma.h"
#include "memory/region.h"
#include "traces/counters.h"
#include "traces/trace.h"

/* Engine classes; ORDER: same as ct_engine in isa/isa.h. CTRL runs on the dispatcher. */
typedef enum ct_sim_unit {
  CT_SIM_LOAD, CT_SIM_STORE, CT_SIM_MXU, CT_SIM_VPU, CT_SIM_CTRL, CT_SIM_UNIT_COUNT
} ct_sim_unit;

/* What a control instruction does on the dispatcher. */
typedef enum ct_sim_ctrl { CT_SIM_CTRL_NOP, CT_SIM_CTRL_SYNC, CT_SIM_CTRL_END } ct_sim_ctrl;

#define CT_SIM_MAX_REGIONS 6

/* One instruction as the clock loop sees it. */
typedef struct ct_sim_op {
  ct_sim_unit unit;
  int dma_index;          /* which load/store engine (0 .. count-1) */
  ct_sim_ctrl ctrl;       /* CT_SIM_CTRL only */
  uint32_t drain_mask;    /* SYNC: bit u = wait until unit u has finished earlier work */
  uint32_t wait, signal;  /* semaphore bit masks */
  int opcode;             /* ISA opcode number (for names), -1 if none */
  const char *name;       /* opcode name for traces ("load"); borrowed */
  uint32_t debug_id;      /* 0 none, else 1 + debug map index */
  /* timing */
  bool is_dma;            /* a DMA transfer (LOAD/STORE/MOVE) */
  bool dma_ddr;           /* it moves bytes over DDR (LOAD/STORE) */
  uint64_t dma_moved;     /* bytes moved (burst-rounded for DDR) */
  uint64_t dma_port_cycles; /* cycles its LMEM side needs through the bank ports (striped) */
  uint64_t cycles;        /* compute cycles (MXU/VPU/NOP), ≥ 1 for compute ops */
  uint64_t macs;          /* useful MXU MACs */
  double mxu_ideal;       /* MXU ops: macs / (rows · cols · rate of the operand type), cycles */
  uint64_t ddr_read, ddr_written; /* DDR bytes (burst-rounded) */
  int n_bank_spans;       /* LMEM banks held while moving data: bank_lo[i] .. bank_hi[i] */
  uint16_t bank_lo[CT_SIM_MAX_REGIONS], bank_hi[CT_SIM_MAX_REGIONS];
  uint64_t lmem_bytes;    /* LMEM bytes referenced (Σ region spans), for the LMEM counter */
  int n_regions;
  ct_mem_region regions[CT_SIM_MAX_REGIONS];
} ct_sim_op;

/* The machine parameters the clock loop needs (from the chip, docs/architecture.md §3). */
typedef struct ct_sim_machine {
  double freq_mhz;
  int load_engines, store_engines;
  uint32_t queue_depth;
  uint32_t sem_count;
  uint64_t mxu_rows, mxu_cols;
  ct_ddr ddr;
} ct_sim_machine;

/* Functional callback: applies op i's effect once, when it starts. Returns a status and
 * fills d on error (which stops the run). */
typedef ct_status (*ct_sim_exec_fn)(void *ctx, uint32_t i, ct_diag *d);
/* Describes instruction i for messages ("insn 12 (conv, layer \"conv1\" group 0 tile 3)"). */
typedef void (*ct_sim_describe_fn)(void *ctx, uint32_t i, char *buf, size_t n);
/* Debug-map lookup for traces/reports: layer name (may be NULL), group, tile, step. */
typedef void (*ct_sim_debug_fn)(void *ctx, uint32_t debug_id, const char **layer, int64_t *group,
                                int64_t *tile, int64_t *step);

typedef struct ct_sim_hooks {
  void *ctx;
  ct_sim_exec_fn exec;          /* NULL: timing only */
  ct_sim_describe_fn describe;  /* NULL: "insn <i> (<name>)" */
  ct_sim_debug_fn debug;        /* NULL: no layer information */
} ct_sim_hooks;

/* Options of one run. */
typedef struct ct_sim_options {
  bool functional;              /* no timing: every instruction takes one step */
  bool race_check;              /* vector-clock race detection (on by default in ctpu sim) */
  ct_trace *trace;              /* NULL: no trace */
  uint64_t max_cycles;          /* 0: no limit; else CT_ERR_LIMIT when exceeded */
} ct_sim_options;

/* Results of a run: counters plus per-instruction start/end cycles. */
typedef struct ct_sim_result {
  ct_sim_counters counters;     /* engines array owned (ct_sim_result_free) */
  uint64_t *start, *end;        /* per instruction; UINT64_MAX when never run */
  uint64_t *busy;               /* per instruction busy cycles */
  uint64_t *stall;              /* per instruction i: stall[i * CT_STALL_COUNT + reason], the cycles
                                 * its engine stalled while running it (bank conflict, DDR latency)
                                 * or while it waited at the queue head (semaphore); queue_full
                                 * stalls have no instruction and count nowhere here */
  int *engine;                  /* per instruction engine index (-1 ctrl) */
  uint32_t n_ops;
  int end_code;                 /* END's code field, 0 if none */
} ct_sim_result;

/* Runs ops[0..n) to completion. Errors: CT_ERR_CHECK for a race ("race: insn A ... and
 * insn B ... both touch lmem bytes [x, y) ...") or a deadlock ("deadlock at cycle C: insn
 * ... waits for semaphore(s) ..."); CT_ERR_LIMIT when max_cycles is exceeded or memory runs
 * out; whatever the exec hook returns. res is filled as far as the run got (free it with
 * ct_sim_result_free either way). */
ct_status ct_sim_core_run(const ct_sim_machine *m, const ct_sim_op *ops, uint32_t n,
                          const ct_sim_hooks *hooks, const ct_sim_options *opt,
                          ct_sim_result *res, ct_diag *d);

void ct_sim_result_free(ct_sim_result *res);

/* Name of engine e of machine m ("load0", "store0", "mxu", "vpu"), written into buf. Engine
 * indices: load engines first, then store engines, then mxu, then vpu. */
void ct_sim_engine_name(const ct_sim_machine *m, int e, char *buf, size_t n);
/* Number of engines of m (load + store + 2). */
int ct_sim_engine_count(const ct_sim_machine *m);
/* Engine index running unit u instance k (k ignored for MXU/VPU); -1 for CTRL or k out of
 * range. */
int ct_sim_engine_index(const ct_sim_machine *m, ct_sim_unit u, int k);

#endif
