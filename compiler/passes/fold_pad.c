/* fold_pad.c: a constant-mode Pad (ONNX Pad-18) in front of Conv, MaxPool or AveragePool
 * folded into that op's own `pads` attribute when the padded values are exactly what the
 * op's implicit padding supplies (zeros for Conv and count_include_pad AveragePool, −∞ for
 * MaxPool); TPU-MLIR's FusePad / TVM's FoldExplicitPadding. */
#include <math.h>
#include <string.h>

#include "compiler/pass.h"

/* Reads Pad's begin/end per axis of a rank-r operand; false if not constant or not 0..r. */
static bool read_pads(const ct_op *pad, int r, int64_t *beg, int64_t *end) {
  const ct_value *pv = pad->in[1], *av = pad->n_in > 3 ? pad->in[3] : NULL;
  if (!ct_value_is_const(pv) || (av && !ct_value_is_const(av))) return false;
  int64_t na = av ? ct_tensor_numel(av->data) : r;
  if (na > r || ct_tensor_numel(pv->data) != 2 * na) return false;
  for (int i = 0; i < r; i++) beg[i] = end[i] = 0;
  for (int64_t i = 0; i < na; i++) {
    int64_t ax = av ? ct_tensor_get_i64(av->data, i) : i;
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r) return false;
    beg[ax] = ct_tensor_get_i64(pv->data, i);
    end[ax] = ct_tensor_get_i64(pv->data, na + i);
  }
  return true;
}

/* The value every padded element gets: operand 2, 0 when absent. */
static double pad_value(const ct_op *pad) {
  const ct_value *cv = pad->n_in > 2 ? pad->in[2] : NULL;
  if (!cv) return 0.0;
  if (!ct_value_is_const(cv) || ct_tensor_numel(cv->data) != 1) return NAN;
  return ct_tensor_get_f64(cv->data, 0);
}

/* True if consumer c accepts padding value v with the rules of the file comment. */
static bool value_ok(ct_rw *rw, const ct_op *c, double v) {
  int nd = 0;
  const int64_t *dil = ct_attr_window_dilations(c, &nd);
  switch (c->kind) {
    case CT_OP_CONV:
      return v == 0.0;
    case CT_OP_MAXPOOL: /* -inf loses every max; windows must keep a real element */
      for (int i = 0; i < nd; i++)
        if (dil[i] != 1) return false;
      if (c->n_out > 1 && c->out[1] && ct_rw_num_uses(rw, c->out[1]) > 0) return false;
      return isinf(v) && v < 0 && ct_attr_pool_ceil_mode(c) == 0;
    case CT_OP_AVERAGEPOOL:
      return v == 0.0 && ct_attr_pool_ceil_mode(c) == 0;
    default:
      return false;
  }
}

/* Adds the spatial pads to c's pads; false (c unchanged) when the rules forbid it. */
static bool merge_pads(ct_rw *rw, ct_op *c, int r, const int64_t *beg, const int64_t *end) {
  int k = r - 2, np = 0, nk = 0;
  const char *ap = ct_attr_window_auto_pad(c);
  const int64_t *old = ct_attr_window_pads(c, &np), *ks = ct_attr_window_kernel_shape(c, &nk);
  if (k < 1 || k > CT_MAX_DIMS || strcmp(ap, "NOTSET") || (np && np != 2 * k)) return false;
  int64_t pads[2 * CT_MAX_DIMS];
  bool old_zero = true;
  for (int i = 0; i < 2 * k; i++) {
    int64_t o = np ? old[i] : 0;
    old_zero = old_zero && o == 0;
    pads[i] = o + (i < k ? beg[2 + i] : end[2 + i - k]);
    if (c->kind != CT_OP_CONV && (nk != k || pads[i] >= ks[i % k])) return false;
  }
  if (c->kind == CT_OP_AVERAGEPOOL) {
    if (ct_attr_pool_count_include_pad(c) == 0 && !old_zero) return false;
    if (!ct_attr_set_pool_count_include_pad(rw->g, c, 1)) rw->oom = true;
  }
  if (!ct_attr_set_window_pads(rw->g, c, 2 * k, pads)) rw->oom = true;
  return true;
}

/* Folds Pad op pad into its only consumer; the number of rewrites (0 or 1). */
static int fold_one(ct_rw *rw, ct_op *pad, void *user) {
  (void)user;
  if (pad->n_in < 2 || strcmp(ct_attr_pad_mode(pad), "constant")) return 0;
  ct_value *x = pad->in[0];
  ct_op *c = ct_rw_only_user(rw, pad->out[0]);
  int r = x ? x->ndim : -1;
  int64_t beg[CT_MAX_DIMS], end[CT_MAX_DIMS];
  if (!c || c->n_in < 1 || c->in[0] != pad->out[0] || r < 3 || !read_pads(pad, r, beg, end)) return 0;
  bool ok = beg[0] == 0 && end[0] == 0 && beg[1] == 0 && end[1] == 0;
  for (int a = 2; a < r && ok; a++) ok = beg[a] >= 0 && end[a] >= 0;
  if (!ok || !value_ok(rw, c, pad_value(pad)) || !merge_pads(rw, c, r, beg, end)) return 0;
  ct_rw_set_input(rw, c, 0, x);
  ct_rw_erase(rw, pad);
  return 1;
}

/* Pass "fold-pad": Pad(x) with mode "constant", constant pads that are ≥ 0 and zero on the
 * batch and channel axes, whose result feeds only operand 0 of a Conv (pad value 0), a MaxPool
 * (pad value −∞, unit dilations, ceil_mode 0, no used Indices) or an AveragePool (pad value 0,
 * ceil_mode 0; becomes count_include_pad = 1, so only when the pool's own pads are zero or
 * already counted) with explicit pads (auto_pad NOTSET): the pads are added to the consumer's
 * and the Pad disappears. Pools also need the summed pads < kernel_shape. Not fired for
 * reflect/edge/wrap modes, negative pads, another pad value or other consumers. Exact: the
 * consumer sees the same padded values. Errors: CT_ERR_LIMIT. */
ct_status ct_pass_fold_pad(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind kinds[] = {CT_OP_PAD};
  return ct_rw_for_each(g, kinds, 1, fold_one, NULL, n_changed, d);
}
