/* compare.h: tensor comparison, the one definition behind `ctpu compare` and the model
 * tests (docs/architecture.md §7). Metrics follow TPU-MLIR's npz_tool/tensor_compare.py:
 * cosine similarity, euclidean similarity, SQNR, max abs diff, computed in double. */
#ifndef CT_COMPARE_H
#define CT_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"
#include "common/tensor.h"

/* How a pair compares, best first. */
typedef enum ct_compare_verdict {
  CT_CMP_EQUAL,     /* every element equal */
  CT_CMP_CLOSE,     /* |a − b| ≤ atol + rtol·|a| everywhere (ONNX backend runner: rtol 1e-3, atol 1e-7) */
  CT_CMP_SIMILAR,   /* cosine and euclidean similarity at or above the tolerances */
  CT_CMP_DIFFERENT, /* below the tolerances (or a NaN/inf where the other has something else) */
  CT_CMP_SHAPE,     /* element counts or shapes differ: nothing else computed */
  CT_CMP_MISSING    /* a requested tensor is absent from one file */
} ct_compare_verdict;

/* Metrics of got against the reference ref (a = ref, b = got), over all elements as double;
 * quantized tensors are compared on their raw stored values here (ct_compare_files
 * dequantizes them first, see there). Elements
 * where a and b are both NaN, or the same infinity, count as equal and are left out of the
 * sums; any other non-finite element makes cosine/euclid NaN (never passing). */
typedef struct ct_compare_metrics {
  int64_t n;          /* elements */
  int64_t n_diff;     /* elements with a != b */
  int64_t first_diff; /* flat row-major index of the first one, -1 if none */
  bool bitwise;       /* same dtype and identical bytes */
  bool equal;         /* n_diff == 0 */
  bool close;         /* |a − b| ≤ 1e-7 + 1e-3·|a| for every element */
  double cosine;      /* Σab / (‖a‖·‖b‖), ct_cos_of (common/cosine.h) */
  double euclid;      /* 1 − ‖a − b‖ / (‖(a + b)/2‖ + 1e-7) */
  double sqnr_db;     /* 10·log10(Σa² / Σ(a − b)²); +inf when equal, -inf when a is all zero */
  double max_abs;     /* max |a − b| */
} ct_compare_metrics;

/* Pass criteria: defaults cos 0.99, euc 0.90 (TPU-MLIR model_deploy.py); exact demands
 * bitwise equality (same dtype, same bytes). */
typedef struct ct_compare_tol {
  double cos, euc;
  bool exact;
} ct_compare_tol;

#define CT_COMPARE_TOL_DEFAULT ((ct_compare_tol){0.99, 0.90, false})

/* Precision classes of stored tensors, most precise first. The class of a dump is that of its
 * least precise tensor (an INT8 Tpu dump is INT8, also where it holds f32 values such as a
 * dequantized output), and two dumps are judged by the default tolerance of the less precise
 * one (TPU-MLIR's deploy tolerances differ per quantize mode the same way). Float types (f32,
 * f64) and integers without quantization parameters are F32; a quantized integer of 1 byte is
 * INT8, of 2 bytes F16, wider F32. */
typedef enum ct_compare_prec { CT_PREC_F32, CT_PREC_F16, CT_PREC_BF16, CT_PREC_INT8, CT_PREC_COUNT } ct_compare_prec;

/* The class of t as stored (before dequantization). */
ct_compare_prec ct_compare_prec_of(const ct_tensor *t);
/* Name of a class ("f32", "f16", "bf16", "int8"). */
const char *ct_compare_prec_name(ct_compare_prec p);
/* The default tolerance of class p (exact false): f32 0.99,0.90 (model_deploy's default),
 * f16 0.99,0.85, bf16 0.99,0.80, int8 0.97,0.75 (docs/formats.md "ctpu compare"). */
ct_compare_tol ct_compare_prec_tol(ct_compare_prec p);
/* The class of a dump: the least precise of its n tensors (F32 when n is 0). */
ct_compare_prec ct_compare_dump_prec(const ct_tensor *const *ts, int n);

/* Fills m for ref vs got (any dtypes, same shape). Returns CT_OK, or CT_ERR_CHECK when the
 * shapes differ (m->n is then 0 and the metrics are NaN). */
ct_status ct_compare_tensor(const ct_tensor *ref, const ct_tensor *got, ct_compare_metrics *m);

/* The verdict of m under tol (CT_CMP_EQUAL .. CT_CMP_DIFFERENT). */
ct_compare_verdict ct_compare_judge(const ct_compare_metrics *m, const ct_compare_tol *tol);

/* True if a verdict passes under tol: EQUAL, CLOSE or SIMILAR (only bitwise EQUAL with exact). */
bool ct_compare_passes(ct_compare_verdict v, const ct_compare_metrics *m, const ct_compare_tol *tol);

/* Lower-case name of a verdict ("equal", "close", "similar", "different", "shape", "missing"). */
const char *ct_compare_verdict_name(ct_compare_verdict v);

/* Options of a file comparison. */
typedef struct ct_compare_opts {
  ct_compare_tol tol;
  bool tol_by_prec;        /* judge every pair by ct_compare_prec_tol of the less precise file's
                            * class (ct_compare_dump_prec; tol.exact still applies); false: by tol */
  bool verbose;            /* print the first differing elements of failing tensors, and every
                            * name found in one file only (else one line per side) */
  const char *const *only; /* if n_only > 0: compare just these names (absent = failure) */
  int n_only;
  bool sort_worst;         /* rows worst first: shape mismatches, then ascending cosine, SQNR */
  int top;                 /* > 0: print only the first `top` compared rows (all are counted) */
} ct_compare_opts;

/* Totals of a file comparison. */
typedef struct ct_compare_summary {
  int n, passed, failed; /* tensors compared (incl. shape mismatches and missing --only names) */
  int only_a, only_b;    /* names present in one file only (listed, not counted) */
} ct_compare_summary;

/* Compares every tensor present in both tensor files (a = reference): HDF5 tensor files
 * (common/h5io.h) or, for names ending in ".pb", one ONNX TensorProto each (such as
 * test_data_set_0/output_0.pb)
 * and writes a table to out, one row per tensor (name, shape, dtype, verdict, cosine,
 * euclid, SQNR dB, max abs diff, PASS/FAIL; in A's order, or worst first with sort_worst,
 * cut to `top` rows), the names found in one file only (a line per side: their count and
 * the first few names; with verbose or --only a row each), with tol_by_prec the tolerance used
 * (`tolerance f32 vs int8: cosine >= 0.97, euclid >= 0.75`; with --only the classes are those
 * of the tensors read), then
 * `compare: N tensors, P passed, F failed`. Unless tol.exact, a pair where either tensor
 * carries scale / zero_point is compared on the real values of both (ct_dequant,
 * common/dequant.h), so a Tpu dump (integers + params) compares with a Top dump (f32); with
 * exact the stored values are compared. Errors: CT_ERR_INPUT when a file cannot be
 * read (the message names it) or a tensor's quantization parameters are invalid;
 * CT_ERR_LIMIT out of memory. The comparison outcome is in s. */
ct_status ct_compare_files(const char *a, const char *b, const ct_compare_opts *o, FILE *out,
                           ct_compare_summary *s, ct_diag *d);

#endif
