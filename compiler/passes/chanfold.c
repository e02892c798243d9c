/* chanfold.c: shared by fold-bn and fold-affine — folds a per-output-channel affine map
 * y'[c] = s[c]·y[c] + t[c] into the weights and bias of a Conv, ConvTranspose or Gemm
 * (the BatchNorm-folding algebra of Jacob et al. 2018, §3.2; TPU-MLIR FuseBatchNorm). */
#include <stdlib.h>

#include "compiler/pass.h"

static bool f32_const(const ct_value *v) { return ct_value_is_const(v) && v->data->dtype == CT_F32; }

/* Scales the weight slices of output channel c by s[c] (and alpha for Gemm) into nw. */
static bool scale_weight(const ct_op *op, const ct_tensor *w, int64_t C, const double *s, float *nw) {
  const float *pw = w->data;
  int64_t n = ct_tensor_numel(w);
  if (op->kind == CT_OP_CONV) {
    if (w->ndim < 2 || w->shape[0] != C) return false;
    int64_t inner = n / C;
    for (int64_t i = 0; i < n; i++) nw[i] = (float)(pw[i] * s[i / inner]);
  } else if (op->kind == CT_OP_CONVTRANSPOSE) {
    int64_t group = ct_attr_conv_group(op);
    if (w->ndim < 2 || group < 1 || w->shape[0] % group || w->shape[1] * group != C) return false;
    int64_t cpg = w->shape[1], cin_pg = w->shape[0] / group, inner = n / (w->shape[0] * cpg);
    for (int64_t i = 0; i < n; i++) {
      int64_t ci = i / (cpg * inner), j = (i / inner) % cpg;
      nw[i] = (float)(pw[i] * s[(ci / cin_pg) * cpg + j]);
    }
  } else {
    bool tb = ct_attr_gemm_transB(op) != 0;
    double alpha = ct_attr_gemm_alpha(op);
    if (w->ndim != 2 || w->shape[tb ? 0 : 1] != C) return false;
    for (int64_t i = 0; i < n; i++) nw[i] = (float)(pw[i] * alpha * s[tb ? i / w->shape[1] : i % C]);
  }
  return true;
}

/* Reads the bias as per-channel values b[C] (Gemm: beta·C broadcast along N). */
static bool read_bias(const ct_op *op, int64_t C, double *b) {
  const ct_value *bv = op->n_in > 2 ? op->in[2] : NULL;
  if (!bv) {
    for (int64_t c = 0; c < C; c++) b[c] = 0;
    return true;
  }
  if (!f32_const(bv)) return false;
  const ct_tensor *t = bv->data;
  int64_t n = ct_tensor_numel(t);
  bool gemm = op->kind == CT_OP_GEMM;
  double beta = gemm ? ct_attr_gemm_beta(op) : 1.0;
  bool vec = n == C && (t->ndim == 1 || (gemm && t->ndim == 2 && t->shape[0] == 1));
  if (!vec && !(gemm && n == 1)) return false;
  for (int64_t c = 0; c < C; c++) b[c] = beta * ((const float *)t->data)[n == 1 ? 0 : c];
  return true;
}

/* Gives op a third operand slot if it has only two (arena copy of the operand array). */
static bool ensure_bias_slot(ct_rw *rw, ct_op *op) {
  if (op->n_in >= 3) return true;
  ct_value **in = ct_arena_alloc(&rw->g->arena, sizeof *in * 4);
  if (!in) return false;
  for (int j = 0; j < op->n_in; j++) in[j] = op->in[j];
  op->in = in;
  op->n_in = 3;
  return true;
}

bool ct_rw_affine_out_channels(ct_rw *rw, ct_op *op, const double *s, const double *t) {
  if (op->kind != CT_OP_CONV && op->kind != CT_OP_CONVTRANSPOSE && op->kind != CT_OP_GEMM) return false;
  const ct_value *y = op->out[0], *wv = op->in[1];
  if (!y || y->ndim < 2 || !f32_const(wv) || (op->kind == CT_OP_GEMM && y->ndim != 2)) return false;
  int64_t C = y->shape[1];
  ct_tensor *nw = ct_tensor_new(CT_F32, wv->data->ndim, wv->data->shape, NULL);
  double *b = malloc(sizeof *b * (size_t)(C + 1));
  bool ok = nw && b && scale_weight(op, wv->data, C, s, nw->data) && read_bias(op, C, b);
  if (!ok) {
    if (!nw || !b) rw->oom = true;
    ct_tensor_free(nw);
    free(b);
    return false;
  }
  for (int64_t c = 0; c < C; c++) b[c] = b[c] * s[c] + t[c];
  char base[512];
  snprintf(base, sizeof base, "%s_bias", wv->name);
  ct_value *nwv = ct_rw_add_weight(rw, wv->name, nw);
  ct_value *nbv = ct_rw_weight_f32(rw, op->n_in > 2 && op->in[2] ? op->in[2]->name : base, 1, &C, b);
  free(b);
  if (!nwv || !nbv || !ensure_bias_slot(rw, op)) {
    rw->oom = true;
    return false;
  }
  ct_rw_set_input(rw, op, 1, nwv);
  ct_rw_set_input(rw, op, 2, nbv);
  if (op->kind == CT_OP_GEMM && (!ct_attr_set_gemm_alpha(rw->g, op, 1.0) || !ct_attr_set_gemm_beta(rw->g, op, 1.0)))
    rw->oom = true;
  return true;
}
