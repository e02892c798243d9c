/* gemm_canon.c: Gemm (ONNX Gemm-13: Y = alpha·op(A)·op(B) + beta·C, C unidirectionally
 * broadcast to [M, N]) in the one form the back end computes — Y = A·Bᵀ + c[N] with a fused
 * activation: a MAC with a per-column bias (TPU-MLIR's MatMul lowering does the same split). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/pass.h"

static bool f32_const(const ct_value *v) { return v && ct_value_is_const(v) && v->data->dtype == CT_F32; }

/* Is C absent or a constant that varies along the columns only: one element, [N] or [1, N]? */
static bool c_per_column(const ct_value *c, int64_t N) {
  if (!c) return true;
  if (!ct_value_is_const(c)) return false;
  const ct_tensor *t = c->data;
  int64_t n = ct_tensor_numel(t);
  return t->ndim <= 2 && (n == 1 || (n == N && (t->ndim == 1 || t->shape[0] == 1)));
}

/* Is C absent or what the MAC adds as it is, a bias of [N] or [1, N] that is a constant or a
 * DequantizeLinear of constants (a QDQ model's bias, quantized by the INT8 lowering)? */
static bool c_is_bias(const ct_value *c, int64_t N) {
  if (!c) return true;
  const ct_op *dq = c->def;
  bool ok = ct_value_is_const(c) || (dq && dq->kind == CT_OP_DEQUANTIZELINEAR);
  for (int k = 0; ok && !ct_value_is_const(c) && k < dq->n_in; k++) ok = !dq->in[k] || ct_value_is_const(dq->in[k]);
  return ok && ((c->ndim == 1 && c->shape[0] == N) || (c->ndim == 2 && c->shape[0] == 1 && c->shape[1] == N));
}

/* Is alpha·b exactly an f32 for every element b of t, and the product alpha·(a·b) the same
 * float as a·(alpha·b) (alpha = ±2^k: a scaling that commutes with rounding)? */
static bool alpha_exact(const ct_tensor *t, double alpha) {
  int e;
  if (fabs(frexp(alpha, &e)) != 0.5) return false;
  const float *b = t->data;
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) {
    double p = alpha * b[i];
    if (p != 0 && (!(fabs(p) >= 0x1p-126) || (double)(float)p != p)) return false;
  }
  return true;
}

/* A new op of kind k reading in (n_in) and producing *out, or a new value named after out's
 * base (shape of ref, f32) when *out is NULL; loc "<op loc>_<tag>". NULL when out of memory. */
static ct_value *chain(ct_rw *rw, const ct_op *op, ct_op_kind k, const char *tag, int n_in, ct_value *const *in,
                       ct_value *out, const ct_value *ref, ct_op **made) {
  char loc[512];
  snprintf(loc, sizeof loc, "%s_%s", op->loc ? op->loc : "gemm", tag);
  if (!out) out = ct_rw_add_value(rw, loc, CT_F32, ref->ndim, ref->shape);
  ct_op *n = out ? ct_rw_add_op(rw, k, loc, n_in, in, 1, &out) : NULL;
  if (made) *made = n;
  return n ? out : NULL;
}

/* An f32 scalar weight of value v. */
static ct_value *scalar(ct_rw *rw, const ct_op *op, const char *tag, double v) {
  char base[512];
  snprintf(base, sizeof base, "%s_%s", op->loc ? op->loc : "gemm", tag);
  return ct_rw_weight_f32(rw, base, 0, NULL, &v);
}

/* transA: A goes through a Transpose ([K, M] → [M, K]) and transA becomes 0 (exact). */
static bool untranspose_a(ct_rw *rw, ct_op *op) {
  ct_value *a = op->in[0];
  if (a->ndim != 2) return false;
  int64_t sh[2] = {a->shape[1], a->shape[0]};
  char loc[512];
  snprintf(loc, sizeof loc, "%s_transA", op->loc ? op->loc : "gemm");
  ct_value *t = ct_rw_add_value(rw, loc, a->dtype, 2, sh);
  ct_op *tr = t ? ct_rw_add_op(rw, CT_OP_TRANSPOSE, loc, 1, &a, 1, &t) : NULL;
  if (!tr || !ct_attr_set_transpose_perm(rw->g, tr, 2, (const int64_t[]){1, 0}) || !ct_attr_set_gemm_transA(rw->g, op, 0))
    return rw->oom = true, false;
  ct_rw_set_input(rw, op, 0, t);
  return true;
}

/* A constant f32 B as [N, K] (transB 1) scaled by alpha when alpha_exact or `inexact`
 * (each alpha·b rounded once to f32); false when nothing changes. */
static bool fold_b(ct_rw *rw, ct_op *op, bool inexact) {
  ct_value *b = op->in[1];
  bool tb = ct_attr_gemm_transB(op) != 0;
  double alpha = ct_attr_gemm_alpha(op);
  if (!f32_const(b) || b->data->ndim != 2) return false;
  bool fa = alpha != 1 && (inexact || alpha_exact(b->data, alpha));
  if (tb && !fa) return false;
  int64_t K = b->data->shape[tb], N = b->data->shape[!tb], sh[2] = {N, K};
  ct_tensor *t = ct_tensor_new(CT_F32, 2, sh, NULL);
  if (!t) return rw->oom = true, false;
  const float *src = b->data->data;
  float *dst = t->data;
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) {
      float v = tb ? src[n * K + k] : src[k * N + n];
      dst[n * K + k] = fa ? (float)(alpha * v) : v;
    }
  ct_value *nb = ct_rw_add_weight(rw, b->name, t);
  if (!nb || !ct_attr_set_gemm_transB(rw->g, op, 1) || (fa && !ct_attr_set_gemm_alpha(rw->g, op, 1.0)))
    return rw->oom = true, false;
  ct_rw_set_input(rw, op, 1, nb);
  return true;
}

/* A constant C: beta·C (each rounded once to f32, as the Top kernel adds it) and, when C
 * broadcasts along the rows (one element, [1, N]), spread to [N]; beta 0 drops C (the Top
 * kernel ignores C then), and beta is 1 without C. False when nothing changes. */
static bool fold_c(ct_rw *rw, ct_op *op, int64_t N) {
  ct_value *c = op->n_in > 2 ? op->in[2] : NULL;
  double beta = ct_attr_gemm_beta(op);
  if (c && beta == 0) ct_rw_set_input(rw, op, 2, NULL), op->n_in = 2, c = NULL;
  if (!c) { /* beta means nothing without C */
    if (beta == 1) return false;
    if (!ct_attr_set_gemm_beta(rw->g, op, 1.0)) rw->oom = true;
    return true;
  }
  bool row = c_per_column(c, N);
  if (!f32_const(c) || (beta == 1 && (!row || (c->data->ndim == 1 && c->data->shape[0] == N)))) return false;
  int64_t n = ct_tensor_numel(c->data), cnt = row ? N : n;
  double *v = malloc(sizeof *v * (size_t)(cnt > 0 ? cnt : 1));
  if (!v) return rw->oom = true, false;
  const float *src = c->data->data;
  for (int64_t i = 0; i < cnt; i++) v[i] = (float)(beta * src[n == 1 ? 0 : i]);
  const ct_tensor *ct = c->data;
  ct_value *nc = row ? ct_rw_weight_f32(rw, c->name, 1, &N, v) : ct_rw_weight_f32(rw, c->name, ct->ndim, ct->shape, v);
  free(v);
  if (!nc || !ct_attr_set_gemm_beta(rw->g, op, 1.0)) return rw->oom = true, false;
  ct_rw_set_input(rw, op, 2, nc);
  return true;
}

/* The fused activation of op as its own op reading x and producing y (Relu, Clip, LeakyRelu:
 * fuse-act's forms), op's act attributes removed. */
static bool unfuse_act(ct_rw *rw, ct_op *op, ct_value *x, ct_value *y) {
  const char *act = ct_attr_act_act(op);
  bool ok = true;
  if (!strcmp(act, "relu")) {
    ok = chain(rw, op, CT_OP_RELU, "act", 1, &x, y, y, NULL) != NULL;
  } else if (!strcmp(act, "leaky_relu")) {
    ct_op *lr = NULL;
    ok = chain(rw, op, CT_OP_LEAKYRELU, "act", 1, &x, y, y, &lr) && ct_attr_set_leakyrelu_alpha(rw->g, lr, ct_attr_act_act_alpha(op));
  } else {
    bool r6 = !strcmp(act, "relu6");
    ct_value *in[3] = {x, scalar(rw, op, "act_min", r6 ? 0 : ct_attr_act_act_min(op)),
                       scalar(rw, op, "act_max", r6 ? 6 : ct_attr_act_act_max(op))};
    ok = in[1] && in[2] && chain(rw, op, CT_OP_CLIP, "act", 3, in, y, y, NULL);
  }
  ct_attr_del_act_act(op), ct_attr_del_act_act_alpha(op), ct_attr_del_act_act_min(op), ct_attr_del_act_act_max(op);
  if (!ok) rw->oom = true;
  return ok;
}

/* Y = Gemm(A, B) (alpha 1 unless B is constant, no C) then · alpha (a Mul), + beta·C (a
 * Mul of a non-constant C, then a broadcast Add), then the fused act, the last op producing
 * op's result. For a C the MAC cannot add per column and an alpha that cannot go into B. */
static bool split(ct_rw *rw, ct_op *op) {
  ct_value *y = op->out[0], *c = op->n_in > 2 ? op->in[2] : NULL, *cur;
  double alpha = ct_attr_gemm_alpha(op), beta = ct_attr_gemm_beta(op);
  bool mul = alpha != 1 && !ct_value_is_const(op->in[1]), has_act = strcmp(ct_attr_act_act(op), "none") != 0;
  char base[512];
  snprintf(base, sizeof base, "%s_gemm", y->name);
  ct_value *y0 = ct_rw_add_value(rw, base, CT_F32, y->ndim, y->shape);
  if (!y0) return false;
  ct_rw_take_result(rw, op, 0, y0);
  if (c) ct_rw_set_input(rw, op, 2, NULL), op->n_in = 2;
  cur = y0;
  if (mul) {
    ct_value *in[2] = {cur, scalar(rw, op, "alpha", alpha)};
    cur = in[1] ? chain(rw, op, CT_OP_MUL, "alpha", 2, in, !c && !has_act ? y : NULL, y, NULL) : NULL;
    if (!cur || !ct_attr_set_gemm_alpha(rw->g, op, 1.0)) return rw->oom = true, false;
  }
  if (c && beta != 1) {
    ct_value *in[2] = {c, scalar(rw, op, "beta", beta)};
    c = in[1] ? chain(rw, op, CT_OP_MUL, "beta", 2, in, NULL, c, NULL) : NULL;
  }
  if (c) {
    ct_value *in[2] = {cur, c};
    cur = chain(rw, op, CT_OP_ADD, "c", 2, in, has_act ? NULL : y, y, NULL);
  }
  if (!cur || !ct_attr_set_gemm_beta(rw->g, op, 1.0)) return rw->oom = true, false;
  return !has_act || unfuse_act(rw, op, cur, y);
}

/* Canonicalizes one Gemm; the number of rewrites (0 or 1). */
static int canon_one(ct_rw *rw, ct_op *op, void *user) {
  bool inexact = *(const bool *)user;
  ct_value *a = op->in[0], *b = op->in[1], *y = op->out[0];
  if (!a || !b || !y || y->dtype != CT_F32 || y->ndim != 2) return 0;
  int64_t N = y->shape[1];
  bool ch = false;
  if (ct_attr_gemm_transA(op)) {
    if (!untranspose_a(rw, op)) return 0;
    ch = true;
  }
  ch |= fold_b(rw, op, inexact);
  ch |= fold_c(rw, op, N);
  ct_value *c = op->n_in > 2 ? op->in[2] : NULL;
  bool need = !c_is_bias(c, N) || (c && ct_attr_gemm_beta(op) != 1) ||
              (ct_attr_gemm_alpha(op) != 1 && !ct_value_is_const(op->in[1]));
  if (!rw->oom && need) ch |= split(rw, op);
  return ch && !rw->oom;
}

ct_status ct_gemm_canonicalize(ct_graph *g, bool inexact_alpha, int *n_changed, ct_diag *d) {
  static const ct_op_kind kinds[] = {CT_OP_GEMM};
  return ct_rw_for_each(g, kinds, 1, canon_one, &inexact_alpha, n_changed, d);
}

/* Pass "canonical-gemm": ct_gemm_canonicalize without the inexact alpha (Top results keep
 * their values up to the order of the additions split off). Errors: CT_ERR_LIMIT. */
ct_status ct_pass_canonical_gemm(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  return ct_gemm_canonicalize(g, false, n_changed, d);
}
