/* gen.h: the random graph-and-chip generator behind ctpu_gengraph (fuzz/README.md): a
 * seeded random DAG of ONNX float operators built with tests/onnx_build.c, in the spirit of
 * NNSmith / Csmith (only valid programs; shapes tracked while the graph grows). */
#ifndef CT_FUZZ_GEN_H
#define CT_FUZZ_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/onnx_build.h"

/* splitmix64: one independent stream per concern (graph, values, chip, pipeline), so a
 * truncated graph (--max-steps) keeps the same first nodes, inputs and chip. */
typedef struct gen_rng {
  uint64_t s;
} gen_rng;

uint64_t gen_next(gen_rng *r);
/* Uniform integer in [lo, hi] (inclusive). */
int gen_int(gen_rng *r, int lo, int hi);
/* Uniform float in [lo, hi). */
float gen_float(gen_rng *r, float lo, float hi);
/* true with probability pct / 100. */
bool gen_chance(gen_rng *r, int pct);

#define GEN_MAX_T 200
#define GEN_MAX_RANK 4
#define GEN_MAX_ELEMS 4096

/* A float tensor of the graph: name, static shape, readers so far. */
typedef struct gen_tensor {
  char name[24];
  int nd;
  int64_t d[GEN_MAX_RANK];
  int uses;
  bool input;
  bool mac; /* made by MatMul or Gemm */
} gen_tensor;

/* Operator families (the TSV's family column, README "families"). ORDER FAM. */
#define GEN_FAMILIES(X)                                                                 \
  X(conv) X(dwconv) X(gconv) X(convt) X(gemm) X(matmul) X(binary) X(act) X(pool) X(gap) \
  X(reduce) X(concat) X(slice) X(split) X(transpose) X(reshape) X(pad) X(resize_nearest) \
  X(resize_linear) X(softmax) X(layernorm) X(cast) X(nhwc)
enum {
#define GEN_FAM_ENUM(f) GEN_FAM_##f,
  GEN_FAMILIES(GEN_FAM_ENUM)
#undef GEN_FAM_ENUM
  GEN_FAM_COUNT
};

/* The generator state. The model b is owned by the caller. */
typedef struct gen {
  gen_rng r;  /* structure: operators, attributes, operands */
  gen_rng wr; /* weight and constant values (shape changes do not shift r) */
  ob_model *b;
  gen_tensor t[GEN_MAX_T];
  int nt;
  int n_names; /* counter for node / initializer names */
  uint32_t fams; /* bit GEN_FAM_x: the family occurs in the graph */
  int max_hw;    /* largest H / W of a generated input */
  bool avoid_known; /* --avoid-known: no pattern of a known open bug class (README) */
} gen;

/* Emits one random operator step (one or a few ONNX nodes) reading tensors of g; false when
 * the drawn operator does not fit any tensor (nothing emitted; call again). */
bool gen_step(gen *g);
/* A new float tensor of shape (nd, d) named "t<k>"; its index. */
int gen_new_tensor(gen *g, int nd, const int64_t *d);
/* A float initializer with values uniform in [-a, a) drawn from g->wr; its name. */
const char *gen_weight(gen *g, int nd, const int64_t *d, float a);
/* Elements of a shape. */
int64_t gen_elems(int nd, const int64_t *d);
/* Family names in GEN_FAMILIES order. */
extern const char *const gen_family_names[GEN_FAM_COUNT];

/* ---- shared by the operator emitters (gen_ops.c) ---- */

/* A new unique name "<prefix><k>" in g's builder. */
const char *gen_fresh(gen *g, const char *prefix);
/* An int64 initializer of n values; its name. */
const char *gen_ints(gen *g, int n, const int64_t *v);
/* A float scalar initializer; its name. */
const char *gen_scalar(gen *g, float v);
/* A tensor of rank in [lo, hi]: half the time one of the three newest, else any; -1 if none. */
int gen_pick(gen *g, int lo, int hi);
/* Adds node op reading in[] (NULL-terminated) and writing the nout tensors out[]. */
Onnx__NodeProto *gen_node(gen *g, const char *op, const char *const *in, int nout, const int *out);
/* gen_node with one new output tensor of shape (nd, d), its index into *out. */
Onnx__NodeProto *gen_node1(gen *g, const char *op, const char *const *in, int nd, const int64_t *d, int *out);
/* Marks family f as present in the graph. */
void gen_fam(gen *g, int f);
/* True when every dim is ≥ 1 and the tensor has at most GEN_MAX_ELEMS elements. */
bool gen_fits(int nd, const int64_t *d);

/* ---- the operator emitters: one step each, false when nothing fits (gen_ops_nn.c,
 * gen_ops_tensor.c) ---- */
bool gen_e_conv(gen *g);
bool gen_e_convt(gen *g);
bool gen_e_gemm(gen *g);
bool gen_e_matmul(gen *g);
bool gen_e_binary(gen *g);
bool gen_e_act(gen *g);
bool gen_e_pool(gen *g);
bool gen_e_reduce(gen *g);
bool gen_e_softmax(gen *g);
bool gen_e_layernorm(gen *g);
bool gen_e_concat(gen *g);
bool gen_e_slice(gen *g);
bool gen_e_split(gen *g);
bool gen_e_transpose(gen *g);
bool gen_e_reshape(gen *g);
bool gen_e_pad(gen *g);
bool gen_e_resize(gen *g);
bool gen_e_cast(gen *g);

#define GEN_MAX_IN 3
#define GEN_ALL (~0u)

/* Options: the seed and the reduction knobs (each default = as drawn). */
typedef struct gen_opts {
  uint64_t seed;
  const char *dir;
  int max_steps;   /* cap on operator steps (< 0: none) */
  int keep_output; /* keep only this output candidate (< 0: all) */
  unsigned chip_keep; /* bit k: chip key k keeps its drawn value, else the default */
  unsigned flags_keep; /* bit k: optional pipeline flag k (GEN_FLAG_*) kept */
  int max_hw;      /* cap on input H / W (< 0: none) */
  bool avoid_known; /* steer clear of the known bug classes (fuzz/README.md) */
} gen_opts;

enum { GEN_FLAG_ASYM = 1, GEN_FLAG_NOUNSIGNED = 2, GEN_FLAG_FALLBACK = 4, GEN_FLAG_QTABLE = 8,
       GEN_FLAG_LOWER_CHIP = 16, GEN_FLAG_METHOD = 32, GEN_FLAG_LG = 64 };

/* A graph input: name, declared shape, whether it feeds a Transpose (NHWC border). */
typedef struct gen_input {
  char name[16];
  int nd;
  int64_t d[GEN_MAX_RANK];
  bool positive; /* values in [0, 1) instead of [-2, 2) */
  bool live;
} gen_input;

/* Writes DIR/chip.json, DIR/case.sh (the ctpu commands, in the form of
 * ../shared/miscompiles/run.sh: `ok "$C" ...`), DIR/qtable.txt when drawn and DIR/meta.tsv
 * (seed, dtype, chip summary, families); the pipeline and chip streams come from o->seed. */
bool gen_write_case(const gen_opts *o, const gen *g, const gen_input *ins, int n_in);

#endif
