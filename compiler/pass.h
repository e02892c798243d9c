/* pass.h: graph optimization over the Top IR — the pass manager (`ctpu opt`, the default
 * pipeline "canonicalize" run by `ctpu transform`) and the rewriting toolkit passes share.
 * Structure after MLIR's PassManager and TPU-MLIR's Top canonicalize step; passes in passes.def. */
#ifndef CT_PASS_H
#define CT_PASS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"

/* Called after a pass when options.dump_after names it (or is "all"): prints g. */
typedef void (*ct_pass_dump_fn)(const ct_graph *g, const char *pass, void *user);

/* Pass-manager options. ct_pass_options_init gives the defaults noted per field. */
typedef struct ct_pass_options {
  bool verify_each;         /* verify after every pass (always on in builds without NDEBUG) */
  const char *dump_after;   /* pass name, or "all"; NULL = none */
  ct_pass_dump_fn dump;     /* printer for dump_after; NULL = no dump */
  void *dump_user;          /* passed to dump */
  int threads;              /* reference-kernel threads for constant folding (default 1) */
  int64_t fold_max_elems;   /* largest constant folded, in elements (default 1 << 24) */
  int max_rounds;           /* fixed-point rounds of a repeating pipeline (default 8) */
  FILE *log;                /* when non-NULL: one line per pass run with its change count */
} ct_pass_options;

/* Fills o with the defaults above. */
void ct_pass_options_init(ct_pass_options *o);

/* Runs a comma-separated list of pass and pipeline names on g in order ("canonicalize",
 * "fold-bn,dce"). A pipeline name expands to its passes, repeated until a round changes
 * nothing (at most o->max_rounds rounds). o may be NULL (defaults). After each pass the graph
 * is compacted and topologically sorted; with verify_each (default in builds without NDEBUG)
 * it is verified after every pass: with ct_ir_verify (ops/verify.h) when the input graph
 * passes it, else with the structural ct_pass_check_graph. Errors: CT_ERR_USAGE for an
 * unknown pass name (nothing runs then); CT_ERR_INPUT from a pass on an inconsistent graph
 * (naming the node) or, with verify_each, an input graph failing ct_pass_check_graph;
 * CT_ERR_INTERNAL when verification fails after a pass (message "verify after pass NAME:
 * ..."); CT_ERR_LIMIT when out of memory. */
ct_status ct_pass_run_pipeline(ct_graph *g, const char *passes, const ct_pass_options *o, ct_diag *d);

/* Rewrites every f32 2-D Gemm of g into the form the back end computes, Y = A·Bᵀ + c[N] with
 * the fused act (compiler/passes/gemm_canon.c, docs/passes.md "canonical-gemm"): transA
 * becomes a Transpose of A; a constant B is stored [N, K] (transB 1) and takes alpha when
 * alpha·b is exact (alpha = ±2^k, no overflow or underflow) or, with inexact_alpha (the
 * lowering), always (each alpha·b rounded once to f32); a constant C takes beta (each beta·c
 * rounded once to f32, as the Top kernel adds it), one element or [1, N] becomes [N], beta 0
 * drops it; what is left — a C of [M, 1] or [M, N] or not constant, alpha with a non-constant
 * B — is split off: Gemm, then Mul by alpha, Add of (beta·)C broadcast, then the fused act as
 * its own op, the last op keeping the Gemm's result. Adds the number of Gemms rewritten to
 * *n_changed. Errors: CT_ERR_LIMIT when out of memory; CT_ERR_INTERNAL on a rewriting bug. */
ct_status ct_gemm_canonicalize(ct_graph *g, bool inexact_alpha, int *n_changed, ct_diag *d);

/* Signature of one pass: rewrites g, adds the number of rewrites it made to *n_changed.
 * Errors as for ct_pass_run_pipeline. */
typedef ct_status (*ct_pass_fn)(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d);

/* The pass table (passes.def) and the pipeline table: count, names and one-line summaries,
 * for `ctpu opt --help`. Index i in [0, ct_pass_count()). */
int ct_pass_count(void);
const char *ct_pass_name(int i);
const char *ct_pass_summary(int i);
int ct_pipeline_count(void);
const char *ct_pipeline_name(int i);
const char *ct_pipeline_passes(int i);

/* Structural checks run after each pass (and by ct_ir_verify's callers' side when wanted):
 * arity per ops.def, operands defined by an earlier live op, result values owned by their
 * op, unique value names, module outputs defined, Weight values carrying data of their
 * type. Errors: CT_ERR_INTERNAL naming the op (loc) and the broken rule. */
ct_status ct_pass_check_graph(const ct_graph *g, ct_diag *d);

/* ======================================================================================
 * Rewriting toolkit for pass authors (compiler/passes/rewrite.c). A ct_rw keeps use lists
 * (value → the ops using it) and a name set so a pass finds consumers and replaces values in
 * time proportional to the uses touched, never by rescanning the graph (linear-time passes).
 * Keep it in sync by changing the graph only through these functions while it is open.
 * ==================================================================================== */
typedef struct ct_rw_uses {
  ct_op **op;                /* users, one entry per operand slot (an op using v twice: 2) */
  int n, cap;
} ct_rw_uses;

typedef struct ct_rw {
  ct_graph *g;
  ct_rw_uses *uses;          /* indexed by value id */
  int n_uses_cap;
  const char **names;        /* open-addressing set of value names */
  int names_cap, names_n;
  bool oom;                  /* an allocation failed; ct_rw_finish reports CT_ERR_LIMIT */
} ct_rw;

/* Builds use lists and the name set of g. Errors: CT_ERR_LIMIT when out of memory. */
ct_status ct_rw_init(ct_rw *rw, ct_graph *g, ct_diag *d);
/* Compacts g (drops erased ops and unused values), sorts it topologically (stable, linear
 * depth-first), frees rw. Errors: CT_ERR_LIMIT if an allocation failed during the pass,
 * CT_ERR_INTERNAL on a cycle (a pass bug). rw is freed in every case. */
ct_status ct_rw_finish(ct_rw *rw, ct_diag *d);
/* Frees rw without touching g. */
void ct_rw_free(ct_rw *rw);

/* Per-op rewrite of a pass driven by ct_rw_visit / ct_rw_for_each: tries to rewrite op (live,
 * of one of the kinds asked for) and returns the number of rewrites it made (0: no match).
 * On an allocation failure it sets rw->oom (the ct_rw_* builders do), which ends the walk. */
typedef int (*ct_rw_op_fn)(ct_rw *rw, ct_op *op, void *user);

/* The driver loop passes share: calls fn(rw, op, user) on each op of rw->g that existed when
 * the walk started (ops added by fn are not visited), in graph order, skipping ops erased
 * before their turn and ops whose kind is not in kinds[0..n_kinds) (n_kinds == 0: every kind).
 * Stops early once rw->oom is set. Returns the sum of fn's returns (rewrites made). */
int ct_rw_visit(ct_rw *rw, const ct_op_kind *kinds, int n_kinds, ct_rw_op_fn fn, void *user);

/* A whole single-walk pass: ct_rw_init on g, ct_rw_visit(kinds, n_kinds, fn, user) adding its
 * count to *n_changed, then ct_rw_finish. Errors: CT_ERR_LIMIT when out of memory (building
 * use lists or during the walk), CT_ERR_INTERNAL from ct_rw_finish on a cycle (a pass bug). */
ct_status ct_rw_for_each(ct_graph *g, const ct_op_kind *kinds, int n_kinds, ct_rw_op_fn fn, void *user,
                         int *n_changed, ct_diag *d);

/* Uses of v: the users list (entries may repeat) and the count including module outputs. */
const ct_rw_uses *ct_rw_users(ct_rw *rw, const ct_value *v);
int ct_rw_num_uses(ct_rw *rw, const ct_value *v);
/* True if v is one of the module outputs. */
bool ct_rw_is_output(const ct_rw *rw, const ct_value *v);
/* The only consumer of v when v has exactly one use and is not a module output, else NULL. */
ct_op *ct_rw_only_user(ct_rw *rw, const ct_value *v);
/* Sets op->in[i] = v, updating use lists. */
void ct_rw_set_input(ct_rw *rw, ct_op *op, int i, ct_value *v);
/* True if ct_rw_replace(from, to) is allowed: always when from is not a module output;
 * otherwise `to` must not be an Input/Weight value or a module output itself (it then takes
 * over from's name so the module's output names stay the same). */
bool ct_rw_can_replace(const ct_rw *rw, const ct_value *from, const ct_value *to);
/* Replaces every use of from (op operands and module outputs) by to. Returns false and
 * changes nothing when !ct_rw_can_replace. */
bool ct_rw_replace(ct_rw *rw, ct_value *from, ct_value *to);
/* Marks op erased and drops its operand uses. Its results must be unused. */
void ct_rw_erase(ct_rw *rw, ct_op *op);
/* Makes op produce v as result k (a fused op taking over the final value of a chain, keeping
 * its name and uses). op's previous result k, which must be unused, is dropped. */
void ct_rw_take_result(ct_rw *rw, ct_op *op, int k, ct_value *v);
/* Fuses a single-result op into the producer p of its operand: erases op and makes p produce
 * op's result 0 (ct_rw_take_result), so its name and uses stay. p's previous result 0 must
 * have had op as its only use. */
void ct_rw_absorb(ct_rw *rw, ct_op *p, ct_op *op);
/* Appends an op (operands registered as uses). NULL (and rw->oom) when out of memory. */
ct_op *ct_rw_add_op(ct_rw *rw, ct_op_kind kind, const char *loc, int n_in, ct_value *const *in,
                    int n_out, ct_value *const *out);
/* A new value named base, or base_1, base_2... (unique). NULL when out of memory. */
ct_value *ct_rw_add_value(ct_rw *rw, const char *base, ct_dtype dt, int ndim, const int64_t *shape);
/* A new top.Weight op owning t, its value named like ct_rw_add_value. t is freed on failure. */
ct_value *ct_rw_add_weight(ct_rw *rw, const char *base, ct_tensor *t);
/* A new f32 / i64 weight from n doubles / int64s with the given shape. NULL when out of memory. */
ct_value *ct_rw_weight_f32(ct_rw *rw, const char *base, int ndim, const int64_t *shape, const double *v);
ct_value *ct_rw_weight_i64(ct_rw *rw, const char *base, int ndim, const int64_t *shape, const int64_t *v);

/* Folds y'[c] = s[c]·y[c] + t[c] (c = output channel: dim 1 of op's result) into the constant
 * f32 weight and bias of a Conv (OIHW), ConvTranspose (IOHW, per group) or Gemm (B scaled
 * along N, alpha and beta absorbed and set to 1; C must be absent, a scalar, [N] or [1,N]):
 * new Weight values replace operands 1 and 2 (a bias is added when absent). Returns false
 * and changes nothing when the op, its weights or bias do not fit. Arithmetic in double,
 * each new weight rounded once to f32 (relative error ≤ 2^-24 per element). */
bool ct_rw_affine_out_channels(ct_rw *rw, ct_op *op, const double *s, const double *t);

/* ---- small queries passes share ---- */
/* True if v is constant (has data) and all its elements equal x (as doubles). */
bool ct_rw_const_all(const ct_value *v, double x);
/* If v is a constant whose broadcast against an N-D activation with channel axis 1 and
 * channels C varies at most along that axis (shape, right-aligned to rank `rank`, is all 1
 * except dim 1 ∈ {1, C}, and v's rank ≤ rank), fills out[C] with the per-channel values and
 * returns true. */
bool ct_rw_per_channel(const ct_value *v, int rank, int64_t C, double *out);
/* True if a and b have equal rank and dims. */
bool ct_rw_same_shape(const ct_value *a, const ct_value *b);

#endif
