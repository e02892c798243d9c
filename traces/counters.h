/* counters.h: the cmodel's counters — the only source of every reported number (modelled on
 * Gemmini's CounterFile and VTA's profiler): per-engine busy / stall-by-reason / idle cycles,
 * useful MACs, DDR bytes, and per-layer aggregates for the report. */
#ifndef CT_COUNTERS_H
#define CT_COUNTERS_H

#include <stdint.h>

typedef enum ct_stall {
#define X(E, json, doc) CT_STALL_##E,
#include "traces/stall.def"
#undef X
  CT_STALL_COUNT
} ct_stall;

/* JSON / CSV name of a stall reason ("bank_conflict", ...). */
const char *ct_stall_name(ct_stall s);

#define CT_ENGINE_NAME_MAX 16

/* One engine's cycle accounting: busy + Σ stall + idle = total_cycles. */
typedef struct ct_engine_counters {
  char name[CT_ENGINE_NAME_MAX];  /* "load0", "store0", "mxu", "vpu" */
  uint64_t busy;                  /* cycles moving data or computing */
  uint64_t stall[CT_STALL_COUNT]; /* cycles stalled, by reason */
  uint64_t idle;                  /* cycles with nothing to do */
  uint64_t insns;                 /* instructions completed */
} ct_engine_counters;

/* Whole-run counters. */
typedef struct ct_sim_counters {
  uint64_t total_cycles;
  int n_engines;
  ct_engine_counters *engines;    /* n_engines, owned by the caller */
  uint64_t macs;                  /* useful MACs (no padding of partial folds) */
  uint64_t mxu_rows, mxu_cols;
  uint64_t ddr_bytes_read;        /* bytes moved over DDR by LOADs (burst-rounded) */
  uint64_t ddr_bytes_written;     /* bytes moved over DDR by STOREs (burst-rounded) */
  uint64_t bank_conflict_cycles;  /* Σ over engines of stall[CT_STALL_BANK] */
  uint64_t instructions;          /* instructions executed */
  uint64_t mxu_vpu_overlap;       /* cycles the MXU and the VPU are both busy */
  double mxu_ideal_cycles;        /* Σ over MXU instructions of macs / (rows · cols · rate) */
  uint64_t ddr_compulsory_bytes;  /* bytes every schedule moves over DDR: the program's constants
                                   * (weights, tables) read once, its inputs read once and its
                                   * outputs written once */
  uint64_t ddr_bytes_per_cycle;   /* gmem.bytes_per_cycle of the chip */
  double wall_seconds;            /* host time of the run */
  double freq_mhz;
  int functional;                 /* 1 when run with --functional (no timing) */
} ct_sim_counters;

/* Per-layer aggregate (the debug map's layer name), for the --report CSV. */
typedef struct ct_layer_counters {
  char *name;                     /* owned by the caller */
  int64_t group;                  /* layer group id of the first instruction, -1 if none */
  uint64_t start, end;            /* first start and last completion cycle */
  uint64_t *busy;                 /* n_engines busy cycles of this layer's instructions */
  uint64_t stall[CT_STALL_COUNT]; /* cycles engines stalled on this layer's instructions, by
                                   * reason, Σ over engines (queue_full: always 0, no instruction) */
  uint64_t macs;
  double mxu_ideal;               /* Σ macs / (rows · cols · rate) of its MXU instructions */
  uint64_t ddr_bytes_read, ddr_bytes_written;
  uint64_t insns;
} ct_layer_counters;

#endif
