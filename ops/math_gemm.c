/* math_gemm.c: ONNX math family, matrix products: float kernels of Gemm (Gemm-13: Y = alpha
 * op(A) op(B) + beta C, C unidirectionally broadcast, optional fused activation) and MatMul
 * (numpy matmul: N-D batched with broadcasting, 1-D operand rules) on OpenBLAS sgemm/dgemm,
 * float32 and float64. Their shape functions are in nn_shape.c with Conv's. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clones.h"
#include "ops/broadcast.h"
#include "ops/nn_util.h"

/* Row-major C = alpha op(A) op(B) + beta C for f32 (dt == CT_F32) or f64 buffers. One row
 * (m == 1, e.g. a classifier on one image) is a matrix-vector product: gemv reads B once
 * where gemm would first copy (pack) all of it. */
static void gemm_any(ct_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  enum CBLAS_TRANSPOSE at = ta ? CblasTrans : CblasNoTrans, bt = tb ? CblasTrans : CblasNoTrans;
  if (m == 1) { /* c = alpha op(B)^T a + beta c; a is contiguous either way */
    enum CBLAS_TRANSPOSE vt = tb ? CblasNoTrans : CblasTrans;
    int rows = (int)(tb ? n : k), cols = (int)(tb ? k : n);
    if (dt == CT_F32)
      cblas_sgemv(CblasRowMajor, vt, rows, cols, (float)alpha, b, (int)ldb, a, 1, (float)beta, c, 1);
    else
      cblas_dgemv(CblasRowMajor, vt, rows, cols, alpha, b, (int)ldb, a, 1, beta, c, 1);
    return;
  }
  if (dt == CT_F32)
    cblas_sgemm(CblasRowMajor, at, bt, (int)m, (int)n, (int)k, (float)alpha, a, (int)lda, b, (int)ldb, (float)beta,
                c, (int)ldc);
  else
    cblas_dgemm(CblasRowMajor, at, bt, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

/* Checks that every tensor in ts (n entries, NULLs skipped) has y's float dtype (f32/f64). */
static ct_status same_float_dtype(const ct_op *op, const ct_tensor *y, const ct_tensor *const *ts, int n,
                                  ct_diag *d) {
  if (!y || (y->dtype != CT_F32 && y->dtype != CT_F64))
    return ct_shape_nn_fail(d, op, "unsupported output dtype %s", y ? ct_dtype_name(y->dtype) : "(none)");
  for (int i = 0; i < n; i++)
    if (ts[i] && ts[i]->dtype != y->dtype)
      return ct_shape_nn_fail(d, op, "unsupported dtype %s of input %d (output is %s)", ct_dtype_name(ts[i]->dtype), i,
                        ct_dtype_name(y->dtype));
  return CT_OK;
}

/* Y[i][j] = beta * C broadcast to m x n (strides from ops/broadcast.h: 0 on broadcast dims). */
static void fill_bias(ct_tensor *y, const ct_tensor *c, double beta, int64_t m, int64_t n) {
  int64_t ys[2] = {m, n}, st[2];
  ct_bcast_strides(c->ndim, c->shape, 2, ys, st);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t ci = i * st[0] + j * st[1];
      if (y->dtype == CT_F32) ((float *)y->data)[i * n + j] = (float)(beta * ((const float *)c->data)[ci]);
      else ((double *)y->data)[i * n + j] = beta * ((const double *)c->data)[ci];
    }
}

/* A Gemm's operands and attributes, checked. */
typedef struct gemm_args {
  const ct_tensor *a, *b, *c; /* c NULL when absent or beta == 0 */
  bool ta, tb;
  double alpha, beta;
  int64_t m, k, n;
  ct_nn_act act;
} gemm_args;

/* Reads and checks a Gemm (dtypes, 2-D A and B, inner dims, Y's shape, act, C broadcast). */
static ct_status gemm_setup(const ct_op *op, ct_tensor *const *in, const ct_tensor *y, gemm_args *g, ct_diag *d) {
  const ct_tensor *a = in[0], *b = in[1], *c = op->n_in > 2 ? in[2] : NULL;
  const ct_tensor *ts[3] = {a, b, c};
  ct_status st = same_float_dtype(op, y, ts, 3, d);
  if (st) return st;
  if (!a || !b || a->ndim != 2 || b->ndim != 2) return ct_shape_nn_fail(d, op, "A and B must be 2-D");
  *g = (gemm_args){a, b, c, ct_attr_gemm_transA(op) != 0, ct_attr_gemm_transB(op) != 0, ct_attr_gemm_alpha(op),
                   ct_attr_gemm_beta(op), 0, 0, 0, {0}};
  g->m = a->shape[g->ta], g->k = a->shape[!g->ta], g->n = b->shape[!g->tb];
  if (b->shape[g->tb] != g->k)
    return ct_shape_nn_fail(d, op, "inner dimensions differ (%lld vs %lld)", (long long)g->k, (long long)b->shape[g->tb]);
  int64_t shape[2] = {g->m, g->n};
  if ((st = ct_nn_check_shape(op, y, 2, shape, d))) return st;
  if ((st = ct_nn_act_parse(op, &g->act, d))) return st;
  if (!g->act.none && y->dtype != CT_F32) return ct_shape_nn_fail(d, op, "unsupported fused act on f64");
  if (!c || g->beta == 0.0) g->c = NULL;
  if (g->c && !ct_bcast_to(c->ndim, c->shape, 2, shape))
    return ct_shape_nn_fail(d, op, "C does not broadcast to [%lldx%lld]", (long long)g->m, (long long)g->n);
  return CT_OK;
}

/* Gemm, f32 or f64: Y = alpha op(A) op(B) + beta C (C broadcast), then the fused act (f32).
 * CT_ERR_INPUT on dtype or shape mismatches. */
ct_status ct_kern_gemm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  ct_tensor *y = out[0];
  gemm_args g;
  ct_status st = gemm_setup(op, in, y, &g, d);
  if (st) return st;
  if (g.c) fill_bias(y, g.c, g.beta, g.m, g.n);
  ct_nn_blas_threads(ctx);
  if (g.m == 0 || g.n == 0) return CT_OK;
  if (g.k == 0) {
    if (!g.c) memset(y->data, 0, y->nbytes);
  } else {
    gemm_any(y->dtype, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a->data, g.a->shape[1], g.b->data, g.b->shape[1],
             g.c ? 1.0 : 0.0, y->data, g.n);
  }
  if (y->dtype == CT_F32) ct_nn_act_apply(&g.act, y->data, g.m * g.n);
  return CT_OK;
}

/* y[j] = Σ_k a[k · sa] · b[k · ldb + j] over k ascending from +0.0, f32 (the ISA's float
 * MATMUL order; no FMA: common/clones.h), vectorized over j. */
CT_CLONES_AVX2 static void mac_row(float *restrict y, const float *restrict a, int64_t sa, const float *restrict b,
                                   int64_t ldb, int64_t k, int64_t n) {
  for (int64_t j = 0; j < n; j++) y[j] = 0.0f;
  for (int64_t kk = 0; kk < k; kk++) {
    const float av = a[kk * sa], *br = b + kk * ldb;
    for (int64_t j = 0; j < n; j++) y[j] += av * br[j];
  }
}

/* Row tasks of an ordered product: rows [lo, hi) of `rows`, each one mac_row. */
typedef struct ord_rows {
  const float *a, *b;
  float *y;
  int64_t m, k, n, sa_row, sa_k; /* A(i, kk) = a[i · sa_row + kk · sa_k] within a batch */
  const int64_t *aoff, *boff;    /* per batch: element offsets into a and b */
} ord_rows;

static void ord_rows_task(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const ord_rows *r = arg;
  for (int64_t t = lo; t < hi; t++) {
    int64_t bt = t / r->m, i = t % r->m;
    mac_row(r->y + t * r->n, r->a + r->aoff[bt] + i * r->sa_row, r->sa_k, r->b + r->boff[bt], r->n, r->k, r->n);
  }
}

ct_status ct_kern_gemm_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d) {
  ct_tensor *y = out[0];
  gemm_args g;
  ct_status st = gemm_setup(op, in, y, &g, d);
  if (st) return st;
  if (y->dtype != CT_F32) return ct_shape_nn_fail(d, op, "the ISA's float order needs f32 tensors");
  if (g.act.leaky) return ct_shape_nn_fail(d, op, "unsupported fused act (leaky) in the ISA's float order");
  float *bt = malloc(sizeof *bt * (size_t)(g.k * g.n + 1)); /* B as [k][n] */
  if (!bt) return ct_shape_nn_oom(d, op);
  const float *b = g.b->data;
  for (int64_t kk = 0; kk < g.k; kk++)
    for (int64_t j = 0; j < g.n; j++) bt[kk * g.n + j] = g.tb ? b[j * g.k + kk] : b[kk * g.n + j];
  int64_t zero = 0;
  ord_rows r = {g.a->data, bt, y->data, g.m, g.k, g.n, g.ta ? 1 : g.k, g.ta ? g.m : 1, &zero, &zero};
  if (g.m > 0) ct_nn_parallel(ctx, g.m, g.m * g.k * g.n, ord_rows_task, &r);
  free(bt);
  float *yv = y->data;
  int64_t ys[2] = {g.m, g.n}, cs[2] = {0, 0};
  if (g.c) ct_bcast_strides(g.c->ndim, g.c->shape, 2, ys, cs);
  for (int64_t i = 0; i < g.m; i++)
    for (int64_t j = 0; j < g.n; j++) {
      float v = g.alpha == 1.0 ? yv[i * g.n + j] : (float)g.alpha * yv[i * g.n + j];
      if (g.c) v += (float)(g.beta * ((const float *)g.c->data)[i * cs[0] + j * cs[1]]);
      yv[i * g.n + j] = v;
    }
  ct_nn_act_apply(&g.act, yv, g.m * g.n);
  return CT_OK;
}

/* Batch layout of a MatMul: broadcast batch dims and per-operand element strides. */
typedef struct mm_plan {
  int nb;                               /* batch dims */
  int64_t bshape[CT_MAX_DIMS], sa[CT_MAX_DIMS], sb[CT_MAX_DIMS];
  int64_t m, k, n, batch;
} mm_plan;

/* Numpy matmul shape rules: 1-D A is (1,K) and 1-D B is (K,1), the added dim removed after. */
static ct_status mm_plan_make(const ct_op *op, const ct_tensor *a, const ct_tensor *b, const ct_tensor *y,
                              mm_plan *p, ct_diag *d) {
  if (a->ndim < 1 || b->ndim < 1) return ct_shape_nn_fail(d, op, "operands must have rank >= 1");
  p->m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
  p->k = a->shape[a->ndim - 1];
  int64_t kb = b->ndim >= 2 ? b->shape[b->ndim - 2] : b->shape[0];
  p->n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
  if (kb != p->k) return ct_shape_nn_fail(d, op, "A has %lld columns, B has %lld rows", (long long)p->k, (long long)kb);
  int ba = a->ndim > 2 ? a->ndim - 2 : 0, bb = b->ndim > 2 ? b->ndim - 2 : 0;
  p->nb = ba > bb ? ba : bb;
  int64_t stra = p->m * p->k, strb = p->k * p->n;
  p->batch = 1;
  for (int i = p->nb - 1; i >= 0; i--) {
    int ia = i - (p->nb - ba), ib = i - (p->nb - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1) return ct_shape_nn_fail(d, op, "batch dims do not broadcast");
    p->bshape[i] = da == 1 ? db : da;
    p->sa[i] = da == 1 ? 0 : stra;
    p->sb[i] = db == 1 ? 0 : strb;
    stra *= da, strb *= db;
    p->batch *= p->bshape[i];
  }
  int64_t shape[CT_MAX_DIMS + 2];
  int nd = 0;
  for (int i = 0; i < p->nb; i++) shape[nd++] = p->bshape[i];
  if (a->ndim >= 2) shape[nd++] = p->m;
  if (b->ndim >= 2) shape[nd++] = p->n;
  if (nd > CT_MAX_DIMS) return ct_shape_nn_fail(d, op, "unsupported rank %d", nd);
  return ct_nn_check_shape(op, y, nd, shape, d);
}

/* Checks a MatMul's operands (dtypes, presence) and makes its plan. */
static ct_status mm_setup(const ct_op *op, ct_tensor *const *in, const ct_tensor *y, mm_plan *p, ct_diag *d) {
  const ct_tensor *a = in[0], *b = in[1];
  const ct_tensor *ts[2] = {a, b};
  ct_status st = same_float_dtype(op, y, ts, 2, d);
  if (st) return st;
  if (!a || !b) return ct_shape_nn_fail(d, op, "an operand is missing");
  *p = (mm_plan){0};
  return mm_plan_make(op, a, b, y, p, d);
}

/* MatMul, f32 or f64, numpy broadcasting of batch dims; one GEMM when B has no batch dims. */
ct_status ct_kern_matmul(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  const ct_tensor *a = in[0], *b = in[1];
  ct_tensor *y = out[0];
  mm_plan p;
  ct_status st = mm_setup(op, in, y, &p, d);
  if (st) return st;
  ct_nn_blas_threads(ctx);
  size_t es = ct_dtype_size(y->dtype);
  if (ct_tensor_numel(y) == 0) return CT_OK;
  if (p.k == 0) {
    memset(y->data, 0, y->nbytes);
    return CT_OK;
  }
  bool b_shared = true;
  for (int i = 0; i < p.nb; i++) b_shared = b_shared && p.sb[i] == 0;
  bool a_dense = true;
  for (int i = 0; i < p.nb; i++) a_dense = a_dense && p.sa[i] != 0;
  if (b_shared && a_dense) { /* one GEMM: the batch folds into A's rows */
    gemm_any(y->dtype, false, false, p.batch * p.m, p.n, p.k, 1.0, a->data, p.k, b->data, p.n, 0.0, y->data, p.n);
    return CT_OK;
  }
  int64_t idx[CT_MAX_DIMS] = {0};
  for (int64_t t = 0; t < p.batch; t++) {
    int64_t oa = 0, ob = 0;
    for (int i = 0; i < p.nb; i++) oa += idx[i] * p.sa[i], ob += idx[i] * p.sb[i];
    gemm_any(y->dtype, false, false, p.m, p.n, p.k, 1.0, (const char *)a->data + (size_t)oa * es, p.k,
             (const char *)b->data + (size_t)ob * es, p.n, 0.0, (char *)y->data + (size_t)(t * p.m * p.n) * es, p.n);
    for (int i = p.nb - 1; i >= 0 && ++idx[i] == p.bshape[i]; i--) idx[i] = 0;
  }
  return CT_OK;
}

ct_status ct_kern_matmul_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                 ct_diag *d) {
  const ct_tensor *a = in[0], *b = in[1];
  ct_tensor *y = out[0];
  mm_plan p;
  ct_status st = mm_setup(op, in, y, &p, d);
  if (st) return st;
  if (y->dtype != CT_F32) return ct_shape_nn_fail(d, op, "the ISA's float order needs f32 tensors");
  int64_t *off = malloc(sizeof *off * (size_t)(2 * p.batch + 2)), idx[CT_MAX_DIMS] = {0};
  if (!off) return ct_shape_nn_oom(d, op);
  for (int64_t t = 0; t < p.batch; t++) {
    off[t] = off[p.batch + t] = 0;
    for (int i = 0; i < p.nb; i++) off[t] += idx[i] * p.sa[i], off[p.batch + t] += idx[i] * p.sb[i];
    for (int i = p.nb - 1; i >= 0 && ++idx[i] == p.bshape[i]; i--) idx[i] = 0;
  }
  ord_rows r = {a->data, b->data, y->data, p.m, p.k, p.n, p.k, 1, off, off + p.batch};
  if (p.m > 0) ct_nn_parallel(ctx, p.batch * p.m, p.batch * p.m * p.k * p.n, ord_rows_task, &r);
  free(off);
  return CT_OK;
}
