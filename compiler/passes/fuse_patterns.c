/* fuse_patterns.c: recognizes exported decompositions of named activations and norms —
 * x·Sigmoid(x) → SiLU, x·HardSigmoid(x; 1/6, 1/2) → HardSwish (ONNX HardSwish-14),
 * x·½·(1 + erf(x/√2)) → Gelu (ONNX Gelu-20, approximate "none") and the ReduceMean/Sub/Pow/
 * ReduceMean/Add/Sqrt/Div(/Mul/Add) chain → LayerNormalization-17 (TPU-MLIR's pattern fusions). */
#include <math.h>
#include <stdlib.h>

#include "compiler/pass.h"

/* The operand of a binary op other than v (NULL if v is not an operand). */
static ct_value *other(const ct_op *op, const ct_value *v) {
  if (op->in[0] == v) return op->in[1];
  if (op->in[1] == v) return op->in[0];
  return NULL;
}

/* True if op has no absent (NULL) operand: the patterns below read every operand. */
static bool operands_present(const ct_op *op) {
  for (int j = 0; j < op->n_in; j++)
    if (!op->in[j]) return false;
  return true;
}

/* v's producer when v and all the producer's operands are present, else NULL. */
static ct_op *def_op(const ct_value *v) { return v && v->def && operands_present(v->def) ? v->def : NULL; }

/* The only user of v when it has kind k, else NULL. */
static ct_op *user_of_kind(ct_rw *rw, const ct_value *v, ct_op_kind k) {
  ct_op *u = v ? ct_rw_only_user(rw, v) : NULL;
  return u && u->kind == k && operands_present(u) ? u : NULL;
}

static bool near(const ct_value *v, double x) {
  if (!ct_value_is_const(v) || ct_tensor_numel(v->data) != 1) return false;
  return fabs(ct_tensor_get_f64(v->data, 0) - x) <= 1e-6 * fabs(x);
}

/* Replaces the ops erase[0..n) by one unary op of kind k on x producing y. */
static bool replace_unary(ct_rw *rw, ct_op **erase, int n, ct_op_kind k, ct_value *x, ct_value *y) {
  const char *loc = erase[n - 1]->loc;
  for (int i = 0; i < n; i++) ct_rw_erase(rw, erase[i]);
  return ct_rw_add_op(rw, k, loc, 1, &x, 1, &y) != NULL;
}

/* x·Sigmoid(x) / x·HardSigmoid(x; 1/6, 0.5) at Mul m. */
static bool try_swish(ct_rw *rw, ct_op *m) {
  for (int s = 0; s < 2; s++) {
    ct_value *x = m->in[1 - s], *sv = m->in[s];
    ct_op *sg = def_op(sv);
    if (!sg || sg->in[0] != x || ct_rw_only_user(rw, sv) != m || !ct_rw_same_shape(x, m->out[0])) continue;
    bool hs = sg->kind == CT_OP_HARDSIGMOID && (float)ct_attr_hardsigmoid_alpha(sg) == (float)(1.0 / 6.0) &&
              ct_attr_hardsigmoid_beta(sg) == 0.5;
    if (sg->kind != CT_OP_SIGMOID && !hs) continue;
    ct_op *er[2] = {sg, m};
    return replace_unary(rw, er, 2, hs ? CT_OP_HARDSWISH : CT_OP_SILU, x, m->out[0]);
  }
  return false;
}

/* x·Clip(x + 3, 0, 6)/6 (or ·(1/6)) at Clip c — HardSwish as Paddle and Keras export it. */
static bool try_hardswish_clip(ct_rw *rw, ct_op *c) {
  ct_op *a = def_op(c->in[0]), *m = user_of_kind(rw, c->out[0], CT_OP_MUL), *dv;
  if (!a || a->kind != CT_OP_ADD || !m || c->n_in < 3 || !ct_rw_const_all(c->in[1], 0.0) ||
      !ct_rw_const_all(c->in[2], 6.0) || ct_rw_only_user(rw, c->in[0]) != c)
    return false;
  ct_value *x = ct_rw_const_all(a->in[1], 3.0) ? a->in[0] : ct_rw_const_all(a->in[0], 3.0) ? a->in[1] : NULL;
  if (!x || other(m, c->out[0]) != x || !(dv = ct_rw_only_user(rw, m->out[0])) || !ct_rw_same_shape(x, dv->out[0]))
    return false;
  bool by6 = dv->kind == CT_OP_DIV && dv->in[0] == m->out[0] && near(dv->in[1], 6.0);
  bool by16 = dv->kind == CT_OP_MUL && near(other(dv, m->out[0]), 1.0 / 6.0);
  if (!by6 && !by16) return false;
  ct_op *er[4] = {a, c, m, dv};
  return replace_unary(rw, er, 4, CT_OP_HARDSWISH, x, dv->out[0]);
}

/* Gelu from Erf op e: u = x/√2 (Div) or x·(1/√2) (Mul); a = e + 1; then x·a·0.5 in one of
 * the associations (x·a)·½, (a·½)·x, (x·½)·a. */
static bool try_gelu(ct_rw *rw, ct_op *e) {
  ct_op *u = def_op(e->in[0]), *a = user_of_kind(rw, e->out[0], CT_OP_ADD), *ops[6];
  if (!u || ct_rw_only_user(rw, e->in[0]) != e || !a || !ct_rw_const_all(other(a, e->out[0]), 1.0)) return false;
  ct_value *x = NULL;
  if (u->kind == CT_OP_DIV && near(u->in[1], sqrt(2.0))) x = u->in[0];
  if (u->kind == CT_OP_MUL && near(u->in[1], sqrt(0.5))) x = u->in[0];
  if (u->kind == CT_OP_MUL && near(u->in[0], sqrt(0.5))) x = u->in[1];
  ct_op *m1 = user_of_kind(rw, a->out[0], CT_OP_MUL), *fin = NULL, *h = NULL;
  if (!x || !m1) return false;
  ct_value *ov = other(m1, a->out[0]);
  ct_op *m2 = user_of_kind(rw, m1->out[0], CT_OP_MUL);
  if (ov == x && m2 && ct_rw_const_all(other(m2, m1->out[0]), 0.5)) fin = m2;
  else if (ct_rw_const_all(ov, 0.5) && m2 && other(m2, m1->out[0]) == x) fin = m2;
  else if (ov && ov->def && ov->def->kind == CT_OP_MUL && ct_rw_only_user(rw, ov) == m1 &&
           ((ov->def->in[0] == x && ct_rw_const_all(ov->def->in[1], 0.5)) ||
            (ov->def->in[1] == x && ct_rw_const_all(ov->def->in[0], 0.5))))
    fin = m1, h = ov->def;
  if (!fin || !ct_rw_same_shape(x, fin->out[0])) return false;
  int n = 0;
  ops[n++] = u, ops[n++] = e, ops[n++] = a;
  if (h) ops[n++] = h;
  ops[n++] = m1;
  if (fin != m1) ops[n++] = fin;
  if (!replace_unary(rw, ops, n, CT_OP_GELU, x, fin->out[0])) return false;
  if (!ct_attr_set_gelu_approximate(rw->g, fin->out[0]->def, "none")) rw->oom = true;
  return true;
}


/* True if reduce op rm over a rank-r operand reduces exactly the axes first..r-1 with
 * keepdims = 1 (axes from the constant operand 1 or the older `axes` attribute). */
static bool suffix_axes(const ct_op *rm, int r, int *first) {
  int64_t ax[CT_MAX_DIMS];
  int n = 0;
  const ct_value *av = rm->n_in > 1 ? rm->in[1] : NULL;
  if (av) {
    if (!ct_value_is_const(av) || ct_tensor_numel(av->data) > r) return false;
    n = (int)ct_tensor_numel(av->data);
    for (int i = 0; i < n; i++) ax[i] = ct_tensor_get_i64(av->data, i);
  }
  if (n < 1 || ct_attr_reduce_keepdims(rm) != 1) return false;
  bool seen[CT_MAX_DIMS] = {false};
  for (int i = 0; i < n; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
    if (a < r - n || a >= r || seen[a]) return false;
    seen[a] = true;
  }
  *first = r - n;
  return true;
}

/* Broadcasts constant v (NULL → fill) to the normalized shape x.shape[first..r) into out;
 * false if v varies along an axis before first or does not broadcast. */
static bool to_norm_shape(const ct_value *v, const ct_value *x, int first, double fill, double *out) {
  int r = x->ndim;
  int64_t n = 1;
  for (int a = first; a < r; a++) n *= x->shape[a];
  if (!v) {
    for (int64_t i = 0; i < n; i++) out[i] = fill;
    return true;
  }
  const ct_tensor *t = v->data;
  if (!ct_value_is_const(v) || t->ndim > r) return false;
  int64_t vstride[CT_MAX_DIMS] = {0}, s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    int a = r - t->ndim + i;
    if (t->shape[i] != 1 && (a < first || t->shape[i] != x->shape[a])) return false;
    if (a >= 0) vstride[a] = t->shape[i] == 1 ? 0 : s;
    s *= t->shape[i];
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, off = 0;
    for (int a = r - 1; a >= first; a--) {
      off += (rem % x->shape[a]) * vstride[a];
      rem /= x->shape[a];
    }
    out[i] = ct_tensor_get_f64(t, off);
  }
  return true;
}

/* The chain feeding Div dv = (x − mean(x)) / sqrt(mean((x − mean(x))²) + eps); fills ops[7]
 * (rm1, sub, pow, rm2, add, sqrt, dv), x, eps and the first normalized axis. */
static bool match_norm(ct_rw *rw, ct_op *dv, ct_op **ops, ct_value **x, double *eps, int *first) {
  ct_value *dval = dv->in[0], *sval = dv->in[1];
  ct_op *sq = def_op(sval), *ad = sq && sq->kind == CT_OP_SQRT ? def_op(sq->in[0]) : NULL;
  if (!ad || ad->kind != CT_OP_ADD || ct_rw_only_user(rw, sval) != dv || ct_rw_only_user(rw, sq->in[0]) != sq) return false;
  int ei = ct_value_is_const(ad->in[1]) ? 1 : 0;
  ct_value *vv = ad->in[1 - ei];
  if (!ct_value_is_const(ad->in[ei]) || ct_tensor_numel(ad->in[ei]->data) != 1 || ct_value_is_const(vv)) return false;
  ct_op *rm2 = def_op(vv), *pw = rm2 && rm2->kind == CT_OP_REDUCEMEAN ? def_op(rm2->in[0]) : NULL, *sub = def_op(dval);
  if (!pw || ct_rw_only_user(rw, vv) != ad || ct_rw_only_user(rw, rm2->in[0]) != rm2 || !sub || sub->kind != CT_OP_SUB) return false;
  bool sq_mul = pw->kind == CT_OP_MUL && pw->in[0] == dval && pw->in[1] == dval;
  bool sq_pow = pw->kind == CT_OP_POW && pw->in[0] == dval && ct_rw_const_all(pw->in[1], 2.0);
  if ((!sq_mul && !sq_pow) || ct_rw_num_uses(rw, dval) != (sq_mul ? 3 : 2)) return false;
  ct_value *mv = sub->in[1];
  ct_op *rm1 = def_op(mv);
  *x = sub->in[0];
  int f2 = -1, r = (*x)->ndim;
  if (!rm1 || rm1->kind != CT_OP_REDUCEMEAN || rm1->in[0] != *x || ct_rw_only_user(rw, mv) != sub || r < 1 ||
      (*x)->dtype != CT_F32 || !suffix_axes(rm1, r, first) || !suffix_axes(rm2, r, &f2) || f2 != *first)
    return false;
  *eps = ct_tensor_get_f64(ad->in[ei]->data, 0);
  ct_op *list[7] = {rm1, sub, pw, rm2, ad, sq, dv};
  for (int i = 0; i < 7; i++) ops[i] = list[i];
  return true;
}

/* LayerNormalization from the chain ending at Div dv, with an optional Mul(γ) and Add(β). */
static bool try_layernorm(ct_rw *rw, ct_op *dv) {
  ct_op *ops[9];
  ct_value *x;
  double eps;
  int first, n = 7;
  if (!match_norm(rw, dv, ops, &x, &eps, &first)) return false;
  ct_op *last = dv, *mu = user_of_kind(rw, dv->out[0], CT_OP_MUL), *au;
  ct_value *gamma = NULL, *beta = NULL;
  if (mu && ct_value_is_const(other(mu, dv->out[0]))) gamma = other(mu, dv->out[0]), last = ops[n++] = mu;
  if ((au = user_of_kind(rw, last->out[0], CT_OP_ADD)) && ct_value_is_const(other(au, last->out[0])))
    beta = other(au, last->out[0]), last = ops[n++] = au;
  int r = x->ndim;
  int64_t nn = ct_shape_numel(r - first, x->shape + first);
  double *buf = malloc(sizeof *buf * (size_t)(2 * nn + 1));
  if (!buf) { rw->oom = true; return false; }
  bool ok = ct_rw_same_shape(x, last->out[0]) && to_norm_shape(gamma, x, first, 1.0, buf) &&
            (!beta || to_norm_shape(beta, x, first, 0.0, buf + nn));
  ct_value *in[3] = {x, NULL, NULL};
  if (ok) {
    in[1] = ct_rw_weight_f32(rw, gamma ? gamma->name : "ln_scale", r - first, x->shape + first, buf);
    in[2] = beta ? ct_rw_weight_f32(rw, beta->name, r - first, x->shape + first, buf + nn) : NULL;
  }
  free(buf);
  if (!ok || !in[1] || (beta && !in[2])) return false;
  for (int i = 0; i < n; i++) ct_rw_erase(rw, ops[i]);
  ct_op *ln = ct_rw_add_op(rw, CT_OP_LAYERNORM, dv->loc, beta ? 3 : 2, in, 1, &last->out[0]);
  if (!ln || !ct_attr_set_layernorm_axis(rw->g, ln, first) || !ct_attr_set_layernorm_epsilon(rw->g, ln, eps) ||
      !ct_attr_set_layernorm_stash_type(rw->g, ln, 1))
    rw->oom = true;
  return true;
}

/* First walk: Gelu from Erf, HardSwish from Clip, LayerNormalization from Div. */
static int try_erf_clip_div(ct_rw *rw, ct_op *op, void *user) {
  (void)user;
  if (!operands_present(op)) return 0;
  if (op->kind == CT_OP_ERF) return try_gelu(rw, op);
  if (op->kind == CT_OP_CLIP) return try_hardswish_clip(rw, op);
  return try_layernorm(rw, op);
}

/* Second walk: Swish from Mul. */
static int try_mul(ct_rw *rw, ct_op *op, void *user) {
  (void)user;
  return operands_present(op) && try_swish(rw, op);
}

/* Pass "fuse-patterns": rewrites, where the decomposition matches exactly (every inner result
 * used only inside the pattern; constants as stated): Mul(x, Sigmoid(x)) → SiLU(x);
 * Mul(x, HardSigmoid(x)) with alpha = 1/6 (as f32) and beta = 0.5 → HardSwish(x) (other
 * alphas, e.g. Paddle's 0.2, are not HardSwish and stay); x·Clip(x + 3, 0, 6) / 6 (or · 1/6,
 * within 1e-6 relative) → HardSwish(x); the erf form of GELU with √2 or 1/√2
 * within 1e-6 relative and exact 1 and 0.5 → Gelu(x); and ReduceMean(x)/Sub/Pow 2 (or d·d)/ReduceMean/Add ε/Sqrt/Div
 * (then optional Mul γ, Add β, constants broadcasting along the reduced trailing axes, both
 * ReduceMeans over the same trailing axes with keepdims) → LayerNormalization(axis, ε). Same mathematical function; the fused kernels round differently (a few ulp).
 * Errors: CT_ERR_LIMIT. */
ct_status ct_pass_fuse_patterns(ct_graph *g, const ct_pass_options *o, int *n_changed, ct_diag *d) {
  (void)o;
  static const ct_op_kind first[] = {CT_OP_ERF, CT_OP_CLIP, CT_OP_DIV}, second[] = {CT_OP_MUL};
  ct_rw rw;
  ct_status st = ct_rw_init(&rw, g, d);
  if (st != CT_OK) return st;
  *n_changed += ct_rw_visit(&rw, first, 3, try_erf_clip_div, NULL);
  *n_changed += ct_rw_visit(&rw, second, 1, try_mul, NULL); /* after Gelu, whose x·½ Mul must not look like Swish */
  return ct_rw_finish(&rw, d);
}
