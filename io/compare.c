/* compare.c: tensor metrics and the file comparison table (see compare.h). Formulas as in
 * TPU-MLIR python/numpy_helper/tensor_compare.py (cosine, euclidean similarity) and
 * docs/architecture.md §7 (SQNR = 10·log10(Σa² / Σ(a − b)²)); "close" is the ONNX runner's test. */
#include "io/compare.h"

#include "onnx/onnx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/cosine.h"
#include "common/dequant.h"
#include "common/h5io.h"

static const char *const verdict_names[] = {"equal", "close", "similar", "different", "shape", "missing"};
_Static_assert(sizeof verdict_names / sizeof verdict_names[0] == CT_CMP_MISSING + 1, "verdict names");

const char *ct_compare_verdict_name(ct_compare_verdict v) {
  return (unsigned)v <= CT_CMP_MISSING ? verdict_names[v] : "?";
}

static bool same_shape(const ct_tensor *a, const ct_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

typedef struct sums {
  ct_cos_sums cos; /* Σab, Σa², Σb²; a non-finite mismatch counted there */
  double dd, mm;   /* Σ(a−b)², Σ((a+b)/2)² */
} sums;

/* One element pair into m and s. */
static void accumulate(ct_compare_metrics *m, sums *s, int64_t i, double a, double b) {
  bool same = a == b || (isnan(a) && isnan(b));
  if (!same) {
    if (m->first_diff < 0) m->first_diff = i;
    m->n_diff++;
  }
  ct_cos_add(&s->cos, a, b);
  if (!isfinite(a) || !isfinite(b)) {
    if (!same) m->max_abs = INFINITY, m->close = false;
    return;
  }
  double diff = a - b, mid = (a + b) / 2;
  s->dd += diff * diff, s->mm += mid * mid;
  if (fabs(diff) > m->max_abs) m->max_abs = fabs(diff);
  if (fabs(diff) > 1e-7 + 1e-3 * fabs(a)) m->close = false;
}

static void finish(ct_compare_metrics *m, const sums *s) {
  m->cosine = ct_cos_of(&s->cos);
  if (s->cos.nonfinite) {
    m->euclid = NAN;
    m->sqnr_db = -INFINITY;
    return;
  }
  m->euclid = 1.0 - sqrt(s->dd) / (sqrt(s->mm) + 1e-7);
  if (s->dd == 0) m->sqnr_db = INFINITY;
  else m->sqnr_db = s->cos.xx == 0 ? -INFINITY : 10.0 * log10(s->cos.xx / s->dd);
}

ct_status ct_compare_tensor(const ct_tensor *ref, const ct_tensor *got, ct_compare_metrics *m) {
  memset(m, 0, sizeof *m);
  m->first_diff = -1;
  if (!same_shape(ref, got)) {
    m->cosine = m->euclid = m->sqnr_db = m->max_abs = NAN;
    return CT_ERR_CHECK;
  }
  m->n = ct_tensor_numel(ref);
  m->close = true;
  sums s = {0};
  for (int64_t i = 0; i < m->n; i++) accumulate(m, &s, i, ct_tensor_get_f64(ref, i), ct_tensor_get_f64(got, i));
  finish(m, &s);
  m->equal = m->n_diff == 0;
  m->bitwise = ref->dtype == got->dtype && ref->nbytes == got->nbytes &&
               (ref->nbytes == 0 || memcmp(ref->data, got->data, ref->nbytes) == 0);
  return CT_OK;
}

ct_compare_verdict ct_compare_judge(const ct_compare_metrics *m, const ct_compare_tol *tol) {
  if (m->equal) return CT_CMP_EQUAL;
  if (m->close) return CT_CMP_CLOSE;
  if (m->cosine >= tol->cos && m->euclid >= tol->euc) return CT_CMP_SIMILAR;
  return CT_CMP_DIFFERENT;
}

bool ct_compare_passes(ct_compare_verdict v, const ct_compare_metrics *m, const ct_compare_tol *tol) {
  if (tol->exact) return v == CT_CMP_EQUAL && m->bitwise;
  return v == CT_CMP_EQUAL || v == CT_CMP_CLOSE || v == CT_CMP_SIMILAR;
}

/* ---- default tolerances by precision ---- */

/* ORDER ct_compare_prec. f32: TPU-MLIR model_deploy's default. The others are below it by
 * what each format loses; measured on MobileNetV2 (Top vs Tpu dumps of one ImageNet image,
 * 68 layers, 20 calibration images): the worst layer is at cosine 0.99987, euclid 0.984 in
 * F16, 0.99866 / 0.948 in BF16, 0.9717 / 0.760 in INT8 (TPU-MLIR's regression uses 0.95,0.85
 * for f16, 0.95,0.80 for bf16, and 0.97..0.98,0.80 in its INT8 model configurations). */
static const struct {
  const char *name;
  double cos, euc;
} prec_tol[] = {{"f32", 0.99, 0.90}, {"f16", 0.99, 0.85}, {"bf16", 0.99, 0.80}, {"int8", 0.97, 0.75}};
_Static_assert(sizeof prec_tol / sizeof prec_tol[0] == CT_PREC_COUNT, "prec_tol");

ct_compare_prec ct_compare_prec_of(const ct_tensor *t) {
  if (t->dtype == CT_F16) return CT_PREC_F16;
  if (t->dtype == CT_BF16) return CT_PREC_BF16;
  if (!ct_dequant_is_quantized(t)) return CT_PREC_F32;
  size_t bytes = ct_dtype_size(t->dtype);
  return bytes <= 1 ? CT_PREC_INT8 : bytes == 2 ? CT_PREC_F16 : CT_PREC_F32;
}

const char *ct_compare_prec_name(ct_compare_prec p) { return (unsigned)p < CT_PREC_COUNT ? prec_tol[p].name : "?"; }

ct_compare_tol ct_compare_prec_tol(ct_compare_prec p) {
  if ((unsigned)p >= CT_PREC_COUNT) p = CT_PREC_F32;
  return (ct_compare_tol){prec_tol[p].cos, prec_tol[p].euc, false};
}

ct_compare_prec ct_compare_dump_prec(const ct_tensor *const *ts, int n) {
  ct_compare_prec p = CT_PREC_F32;
  for (int i = 0; i < n; i++) {
    ct_compare_prec q = ct_compare_prec_of(ts[i]);
    if (q > p) p = q;
  }
  return p;
}

/* ---- file comparison ---- */

typedef struct table {
  FILE *out;
  int width; /* name column */
  const ct_compare_opts *o;
  ct_compare_summary *s;
  ct_compare_prec prec[2]; /* tol_by_prec: the classes of file A and file B */
  ct_compare_tol tol;      /* the tolerance judging every pair */
} table;

static void shape_dtype(const ct_tensor *t, char *buf, size_t n) {
  char s[160];
  ct_shape_str(t->ndim, t->shape, s, sizeof s);
  snprintf(buf, n, "%s %s", s, ct_dtype_name(t->dtype));
}

static void print_diffs(table *t, const ct_tensor *a, const ct_tensor *b) {
  int64_t n = ct_tensor_numel(a), shown = 0;
  for (int64_t i = 0; i < n && shown < 5; i++) {
    double x = ct_tensor_get_f64(a, i), y = ct_tensor_get_f64(b, i);
    if (x == y || (isnan(x) && isnan(y))) continue;
    fprintf(t->out, "    [%lld] %.9g vs %.9g (diff %.3g)\n", (long long)i, x, y, y - x);
    shown++;
  }
}

/* One compared pair, kept until the table is printed (sorted with --sort worst). */
typedef struct pair {
  const ct_tensor *a, *b; /* as stored (shape and dtype column) */
  ct_tensor *da, *db;     /* dequantized views, or NULL when compared as stored */
  ct_compare_metrics m;
  bool shape_bad, pass;
  ct_compare_verdict v;
  int index;              /* order of A */
} pair;

/* Measures one pair: dequantized (ct_dequant) when either side carries scale / zero_point and
 * the comparison is not --exact, else on the stored values. */
static ct_status measure(table *t, pair *p, ct_diag *d) {
  const ct_tensor *a = p->a, *b = p->b;
  if (!t->o->tol.exact && (ct_dequant_is_quantized(a) || ct_dequant_is_quantized(b))) {
    ct_status st = ct_dequant(a, &p->da, d);
    if (st == CT_OK) st = ct_dequant(b, &p->db, d);
    if (st) return st;
    a = p->da, b = p->db;
  }
  t->s->n++;
  p->shape_bad = ct_compare_tensor(a, b, &p->m) != CT_OK;
  p->v = p->shape_bad ? CT_CMP_SHAPE : ct_compare_judge(&p->m, &t->tol);
  p->pass = !p->shape_bad && ct_compare_passes(p->v, &p->m, &t->tol);
  if (p->pass) t->s->passed++;
  else t->s->failed++;
  return CT_OK;
}

static void print_pair(table *t, const pair *p) {
  char sa[200], sb[200];
  shape_dtype(p->a, sa, sizeof sa);
  if (p->shape_bad) {
    shape_dtype(p->b, sb, sizeof sb);
    fprintf(t->out, "%-*s  %-22s %-9s  (%s vs %s)  FAIL\n", t->width, p->a->name, sa, "shape", sa, sb);
    return;
  }
  const ct_compare_metrics *m = &p->m;
  const ct_tensor *a = p->a, *b = p->b;
  /* --exact: equal values that are not the same bits say why (the dtypes, or -0/NaN bits) */
  const char *vn = t->o->tol.exact && p->v == CT_CMP_EQUAL && !m->bitwise ? (a->dtype != b->dtype ? "dtype" : "bits")
                                                                         : ct_compare_verdict_name(p->v);
  fprintf(t->out, "%-*s  %-22s %-9s %10.6f %10.6f %9.2f %12.6g  %s\n", t->width, a->name, sa, vn, m->cosine, m->euclid,
          m->sqnr_db, m->max_abs, p->pass ? "PASS" : "FAIL");
  if (t->o->verbose && !p->pass) {
    if (t->o->tol.exact && p->v == CT_CMP_EQUAL)
      fprintf(t->out, "    values equal but not bitwise (%s vs %s%s)\n", ct_dtype_name(a->dtype), ct_dtype_name(b->dtype),
              a->dtype == b->dtype ? ": -0 or NaN bits" : "");
    print_diffs(t, p->da ? p->da : a, p->db ? p->db : b);
  }
}

/* Worst first: shape mismatches, then NaN cosine, then ascending cosine, then ascending
 * SQNR; ties keep A's order. */
static int cmp_worst(const void *x, const void *y) {
  const pair *a = x, *b = y;
  if (a->shape_bad != b->shape_bad) return a->shape_bad ? -1 : 1;
  bool na = isnan(a->m.cosine), nb = isnan(b->m.cosine);
  if (na != nb) return na ? -1 : 1;
  if (!na && a->m.cosine != b->m.cosine) return a->m.cosine < b->m.cosine ? -1 : 1;
  if (a->m.sqnr_db != b->m.sqnr_db && !isnan(a->m.sqnr_db) && !isnan(b->m.sqnr_db)) return a->m.sqnr_db < b->m.sqnr_db ? -1 : 1;
  return a->index - b->index;
}

static bool wanted(const ct_compare_opts *o, const char *name) {
  if (o->n_only <= 0) return true;
  for (int i = 0; i < o->n_only; i++)
    if (strcmp(o->only[i], name) == 0) return true;
  return false;
}

static void missing(table *t, const char *name, const char *where, bool counted) {
  fprintf(t->out, "%-*s  %-22s %-9s  (%s)%s\n", t->width, name, "-", "missing", where, counted ? "  FAIL" : "");
  if (counted) t->s->n++, t->s->failed++;
}

#define MISSING_SHOWN 3 /* names shown on the one-line summary of a side's missing tensors */

/* The wanted names of x absent from y: a row each (verbose, --only: those fail), else one
 * line with their count and the first MISSING_SHOWN names. Returns the count. */
static int list_missing(table *t, const ct_tensor_list *x, const ct_tensor_list *y, const char *where) {
  bool rows = t->o->verbose || t->o->n_only > 0;
  int n = 0;
  for (int i = 0; i < x->n; i++) {
    const char *nm = x->items[i]->name;
    if (!wanted(t->o, nm) || ct_tensor_list_find(y, nm)) continue;
    if (rows) missing(t, nm, where, t->o->n_only > 0);
    else if (n == 0) fprintf(t->out, "%s: ", where);
    if (!rows && n < MISSING_SHOWN) fprintf(t->out, "%s%s", n ? ", " : "", nm);
    n++;
  }
  if (!rows && n > MISSING_SHOWN) fprintf(t->out, ", ... (%d tensors; -v lists them)", n);
  if (!rows && n) fputc('\n', t->out);
  return n;
}

/* tol_by_prec: the tolerance the files' classes chose. */
static void print_tol(const table *t) {
  if (!t->o->tol_by_prec || t->o->tol.exact) return;
  fprintf(t->out, "tolerance %s vs %s: cosine >= %.2f, euclid >= %.2f (--tolerance to set)\n",
          ct_compare_prec_name(t->prec[0]), ct_compare_prec_name(t->prec[1]), t->tol.cos, t->tol.euc);
}

static int name_width(const ct_tensor_list *a, const ct_tensor_list *b) {
  int w = 4;
  for (int i = 0; i < a->n; i++) w = (int)strlen(a->items[i]->name) > w ? (int)strlen(a->items[i]->name) : w;
  for (int i = 0; i < b->n; i++) w = (int)strlen(b->items[i]->name) > w ? (int)strlen(b->items[i]->name) : w;
  return w > 48 ? 48 : w;
}

static void print_pairs(table *t, pair *p, int n) {
  if (t->o->sort_worst) qsort(p, (size_t)n, sizeof *p, cmp_worst);
  int shown = t->o->top > 0 && t->o->top < n ? t->o->top : n;
  for (int i = 0; i < shown; i++) print_pair(t, &p[i]);
  if (shown < n) fprintf(t->out, "(%d more tensor%s not shown)\n", n - shown, n - shown == 1 ? "" : "s");
}

static ct_status compare_lists(table *t, const ct_tensor_list *a, const ct_tensor_list *b, ct_diag *d) {
  pair *p = calloc((size_t)a->n + 1, sizeof *p);
  if (!p) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  int np = 0;
  ct_status st = CT_OK;
  for (int i = 0; st == CT_OK && i < a->n; i++) {
    const ct_tensor *x = a->items[i], *y = ct_tensor_list_find(b, x->name);
    if (!wanted(t->o, x->name) || !y) continue;
    p[np] = (pair){.a = x, .b = y, .index = i};
    st = measure(t, &p[np], d);
    np++;
  }
  if (st == CT_OK) {
    fprintf(t->out, "%-*s  %-22s %-9s %10s %10s %9s %12s  %s\n", t->width, "name", "shape", "verdict", "cosine",
            "euclid", "sqnr_db", "max_abs", "result");
    print_pairs(t, p, np);
    t->s->only_a = list_missing(t, a, b, "only in A");
    t->s->only_b = list_missing(t, b, a, "only in B");
    for (int i = 0; i < t->o->n_only; i++)
      if (!ct_tensor_list_find(a, t->o->only[i]) && !ct_tensor_list_find(b, t->o->only[i]))
        missing(t, t->o->only[i], "in neither file", true);
    print_tol(t);
  }
  for (int i = 0; i < np; i++) ct_tensor_free(p[i].da), ct_tensor_free(p[i].db);
  free(p);
  return st;
}

/* Reads a tensor file: an ONNX TensorProto when the name ends in ".pb" (one tensor, named
 * as the proto names it), else an HDF5 tensor file. */
static ct_status read_tensors(const char *path, const ct_compare_opts *o, ct_tensor_list *l, ct_diag *d) {
  size_t n = strlen(path);
  if (n >= 3 && strcmp(path + n - 3, ".pb") == 0) return ct_onnx_read_tensor_pb_into(path, l, d);
  if (o->n_only <= 0) return ct_h5_read(path, l, d);
  /* --only: read just the named datasets, so others (strings, bools, ...) do not matter */
  for (int i = 0; i < o->n_only; i++) {
    ct_tensor *t = NULL;
    ct_status st = ct_h5_read_one(path, o->only[i], &t, d);
    if (st && d && strstr(d->msg, ": no dataset \"")) {
      ct_diag_clear(d);
      continue;
    }
    if (st) return st;
    if (!ct_tensor_list_push(l, t)) {
      ct_tensor_free(t);
      return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
    }
  }
  return CT_OK;
}

ct_status ct_compare_files(const char *a, const char *b, const ct_compare_opts *o, FILE *out,
                           ct_compare_summary *s, ct_diag *d) {
  ct_tensor_list la, lb;
  ct_tensor_list_init(&la);
  ct_tensor_list_init(&lb);
  memset(s, 0, sizeof *s);
  ct_status st = read_tensors(a, o, &la, d);
  if (!st) st = read_tensors(b, o, &lb, d);
  if (!st) {
    table t = {out, name_width(&la, &lb), o, s, {CT_PREC_F32, CT_PREC_F32}, o->tol};
    if (o->tol_by_prec) {
      t.prec[0] = ct_compare_dump_prec((const ct_tensor *const *)la.items, la.n);
      t.prec[1] = ct_compare_dump_prec((const ct_tensor *const *)lb.items, lb.n);
      t.tol = ct_compare_prec_tol(t.prec[0] > t.prec[1] ? t.prec[0] : t.prec[1]);
      t.tol.exact = o->tol.exact;
    }
    st = compare_lists(&t, &la, &lb, d);
  }
  if (!st) {
    fprintf(out, "compare: %d tensors, %d passed, %d failed\n", s->n, s->passed, s->failed);
  }
  ct_tensor_list_free(&la);
  ct_tensor_list_free(&lb);
  return st;
}
