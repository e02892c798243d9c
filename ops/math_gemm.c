/* math_gemm.c: ONNX math family, matrix products: float kernels of Gemm (Gemm-13: Y = alpha
 * op(A) op(B) + beta C, C unidirectionally broadcast, optional fused activation) and MatMul
 * (numpy matmul: N-D batched with broadcasting, 1-D operand rules) on OpenBLAS sgemm/dgemm,
 * float32 and float64. Their shape functions are in nn_shape.c with Conv's. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

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

/* Gemm, f32 or f64: Y = alpha op(A) op(B) + beta C (C broadcast), then the fused act (f32).
 * CT_ERR_INPUT on dtype or shape mismatches. */
ct_status ct_kern_gemm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  const ct_tensor *a = in[0], *b = in[1], *c = op->n_in > 2 ? in[2] : NULL;
  ct_tensor *y = out[0];
  const ct_tensor *ts[3] = {a, b, c};
  ct_status st = same_float_dtype(op, y, ts, 3, d);
  if (st) return st;
  if (!a || !b || a->ndim != 2 || b->ndim != 2) return ct_shape_nn_fail(d, op, "A and B must be 2-D");
  bool ta = ct_attr_gemm_transA(op) != 0, tb = ct_attr_gemm_transB(op) != 0;
  double alpha = ct_attr_gemm_alpha(op), beta = ct_attr_gemm_beta(op);
  int64_t m = a->shape[ta], k = a->shape[!ta], n = b->shape[!tb];
  if (b->shape[tb] != k) return ct_shape_nn_fail(d, op, "inner dimensions differ (%lld vs %lld)", (long long)k,
                                           (long long)b->shape[tb]);
  int64_t shape[2] = {m, n};
  if ((st = ct_kn_check_shape(op, y, 2, shape, d))) return st;
  ct_kn_act act;
  if ((st = ct_kn_act_parse(op, &act, d))) return st;
  if (!act.none && y->dtype != CT_F32) return ct_shape_nn_fail(d, op, "unsupported fused act on f64");
  bool with_c = c && beta != 0.0;
  if (with_c) {
    if (!ct_bcast_to(c->ndim, c->shape, 2, shape))
      return ct_shape_nn_fail(d, op, "C does not broadcast to [%lldx%lld]", (long long)m, (long long)n);
    fill_bias(y, c, beta, m, n);
  }
  ct_kn_blas_threads(ctx);
  if (m == 0 || n == 0) return CT_OK;
  if (k == 0) {
    if (!with_c) memset(y->data, 0, y->nbytes);
  } else {
    gemm_any(y->dtype, ta, tb, m, n, k, alpha, a->data, a->shape[1], b->data, b->shape[1], with_c ? 1.0 : 0.0,
             y->data, n);
  }
  if (y->dtype == CT_F32) ct_kn_act_apply(&act, y->data, m * n);
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
  return ct_kn_check_shape(op, y, nd, shape, d);
}

/* MatMul, f32 or f64, numpy broadcasting of batch dims; one GEMM when B has no batch dims. */
ct_status ct_kern_matmul(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  const ct_tensor *a = in[0], *b = in[1];
  ct_tensor *y = out[0];
  const ct_tensor *ts[2] = {a, b};
  ct_status st = same_float_dtype(op, y, ts, 2, d);
  if (st) return st;
  if (!a || !b) return ct_shape_nn_fail(d, op, "an operand is missing");
  mm_plan p = {0};
  if ((st = mm_plan_make(op, a, b, y, &p, d))) return st;
  ct_kn_blas_threads(ctx);
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
