/* matmul_to_gemm.c: MatMul(A, B) + Add(bias) → Gemm(A, B, bias) when A is 2-D, B a constant
 * 2-D matrix and the bias broadcasts along the last dim (ONNX Gemm-13: Y = A·B + C with
 * alpha = beta = 1; TPU-MLIR's MatMul+Add fusion). */
#include "compiler/pass.h"

/* True if c is a constant [N], [1, N] or single-element bias for an M×N result. */
static bool is_row_bias(const ct_value *c, int64_t N) {
  if (!ct_value_is_const(c)) return false;
  const ct_tensor *t = c->data;
  int64_t n = ct_tensor_numel(t);
  if (n == 1 && t->ndim <= 2) return true;
  return n == N && (t->ndim == 1 || (t->ndim == 2 && t->shape[0] == 1));
}

/* Replaces MatMul mm and its bias Add by one Gemm; the number of rewrites (0 or 1). */
static int convert_one(ct_rw *rw, ct_op *mm, void *user) {
  (void)user;
  ct_value *a = mm->in[0], *b = mm->in[1], *y = mm->out[0];
  ct_op *add = a && b && y ? ct_rw_only_user(rw, y) : NULL;
  if (!add || !add->in[0] || !add->in[1] || add->kind != CT_OP_ADD || a->ndim != 2 || !ct_value_is_const(b) || b->ndim != 2 ||
      y->ndim != 2 || y->dtype != CT_F32 || !ct_rw_same_shape(add->out[0], y))
    return 0;
  ct_value *c = add->in[0] == y ? add->in[1] : add->in[0];
  if (add->in[0] == add->in[1] || !is_row_bias(c, y->shape[1]) || c->dtype != CT_F32) return 0;
  ct_value *in[3] = {a, b, c};
  ct_op *gemm = ct_rw_add_op(rw, CT_OP_GEMM, mm->loc, 3, in, 1, &add->out[0]);
  if (!gemm || !ct_attr_set_gemm_alpha(rw->g, gemm, 1.0) || !ct_attr_set_gemm_beta(rw->g, gemm, 1.0) ||
      !ct_attr_set_gemm_transA(rw->g, gemm, 0) || !ct_attr_set_gemm_transB(rw->g, gemm, 0)) {
    rw->oom = true;
    return 0;
  }
  ct_rw_erase(rw, add);
  ct_rw_erase(rw, mm);
  return 1;
}

/* Pass "matmul-to-gemm": MatMul(A, B) with A of rank 2, B a constant of rank 2, whose result
 * feeds only an Add with a constant bias of shape [N], [1, N] or a single element (either
 * operand order), all f32 and the Add result of the MatMul's shape: both become one Gemm
 * (alpha 1, beta 1, no transposes) producing the Add's result. Not fired for batched
 * (rank > 2) A, non-constant B, a bias varying along the rows, or a MatMul result used
 * elsewhere. Exact up to the order of the bias addition (Gemm adds it to the same dot
 * products). Errors: CT_ERR_LIMIT. */
ct_status ct_pass_matmul_to_gemm(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_MATMUL};
  return ct_rw_for_each(g, kinds, 1, convert_one, NULL, n_changed, d);
}
