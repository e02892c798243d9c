/* rnn.c: ONNX rnn family: shape function and float kernel of LSTM, GRU and RNN (LSTM-14,
 * GRU-14, RNN-14 "Equations"): forward / reverse / bidirectional, activations with
 * activation_alpha/beta, clip, LSTM peepholes and input_forget, GRU linear_before_reset,
 * sequence_lens, layouts 0/1. Straight loops in double over the time steps of each batch row.
 * Shapes: X (seq, batch, input) or, with layout 1, (batch, seq, input); W (dirs, gates·H, I),
 * R (dirs, gates·H, H); Y (seq, dirs, batch, H) / layout 1 (batch, seq, dirs, H), Y_h and Y_c
 * (dirs, batch, H) / layout 1 (batch, dirs, H). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"

#define MAX_ACTS 6 /* 3 per direction (LSTM f, g, h) */

/* Activation functions of the recurrent ops (ONNX RNN "Activation functions"), defaults
 * of alpha/beta as onnxruntime takes them. */
typedef struct rnn_act {
  int fn;
  double alpha, beta;
} rnn_act;

static const struct {
  const char *name;
  int n_params; /* alpha, beta consumed from activation_alpha/beta */
  double alpha, beta;
} acts[] = {{"Relu", 0, 0, 0},      {"Tanh", 0, 0, 0},          {"Sigmoid", 0, 0, 0},    {"Affine", 2, 1, 0},
            {"LeakyRelu", 1, 0.01, 0}, {"ThresholdedRelu", 1, 1, 0}, {"ScaledTanh", 2, 1, 1}, {"HardSigmoid", 2, 0.2, 0.5},
            {"Elu", 1, 1, 0},       {"Softsign", 0, 0, 0},      {"Softplus", 0, 0, 0}};

static double act_apply(const rnn_act *a, double x) {
  double al = a->alpha, be = a->beta;
  switch (a->fn) {
  case 0: return x > 0 ? x : 0;
  case 1: return tanh(x);
  case 2: return 1 / (1 + exp(-x));
  case 3: return al * x + be;
  case 4: return x >= 0 ? x : al * x;
  case 5: return x > al ? x : 0;
  case 6: return al * tanh(be * x);
  case 7: return fmax(0, fmin(1, al * x + be));
  case 8: return x >= 0 ? x : al * (exp(x) - 1);
  case 9: return x / (1 + fabs(x));
  default: return log1p(exp(x));
  }
}

/* Everything one recurrent op needs, inputs converted to double. */
typedef struct rnn_job {
  int G, dirs, nact;                 /* gates, directions, activations per direction */
  int64_t S, B, I, H, layout;
  double clip;
  bool lbr, input_forget, reverse;
  rnn_act act[MAX_ACTS];
  double *x, *w, *r, *b, *h0, *c0, *p; /* NULL when absent (b, h0, c0, p) */
  int64_t *lens;
} rnn_job;

/* Reads activations / activation_alpha / activation_beta; defaults per kind. */
static ct_status read_acts(const ct_op *op, rnn_job *j, ct_diag *d) {
  static const char *const dflt[3][3] = {{"Sigmoid", "Tanh", "Tanh"}, {"Sigmoid", "Tanh"}, {"Tanh"}};
  int kind = op->kind == CT_OP_LSTM ? 0 : op->kind == CT_OP_GRU ? 1 : 2, n = 0, na = 0, nb = 0, ia = 0, ib = 0;
  j->nact = 3 - kind;
  const ct_attr *a = ct_attr_raw_rnn_activations(op);
  const double *al = ct_attr_rnn_activation_alpha(op, &na), *be = ct_attr_rnn_activation_beta(op, &nb);
  if (a && (a->kind != CT_ATTR_STRINGS || a->n != j->nact * j->dirs))
    return ct_ops_err(d, CT_ERR_INPUT, op, "activations must list %d names", j->nact * j->dirs);
  for (int i = 0; i < j->nact * j->dirs; i++, n = 0) {
    const char *name = a ? a->strs[i] : dflt[kind][i % j->nact];
    size_t k = 0;
    while (k < sizeof acts / sizeof acts[0] && strcmp(acts[k].name, name)) k++;
    if (k == sizeof acts / sizeof acts[0]) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported activation \"%s\"", name);
    j->act[i] = (rnn_act){(int)k, acts[k].alpha, acts[k].beta};
    if (acts[k].n_params >= 1 && ia < na) j->act[i].alpha = al[ia++], n++;
    if (acts[k].n_params >= 2 && ib < nb) j->act[i].beta = be[ib++], n++;
  }
  return CT_OK;
}

/* f applied to a pre-activation after clipping to [-clip, clip] (clip 0 = none). */
static double fire(const rnn_job *j, int dir, int which, double v) {
  if (j->clip > 0) v = fmax(-j->clip, fmin(j->clip, v));
  return act_apply(&j->act[dir * j->nact + which], v);
}

/* out[g] = sum_k m[(row0 + g) * cols + k] · v[k] for g < n. */
static void matvec(const double *m, int64_t row0, int64_t n, int64_t cols, const double *v, double *out) {
  for (int64_t g = 0; g < n; g++) {
    double s = 0;
    for (int64_t k = 0; k < cols; k++) s += m[(row0 + g) * cols + k] * v[k];
    out[g] = s;
  }
}

/* One time step of one batch row in direction dir: updates h (and c) in place. xt: input
 * row; ws: scratch of (2·G + 1)·H doubles. */
static void step(const rnn_job *j, int dir, const double *xt, double *h, double *c, double *ws) {
  int64_t H = j->H, GH = j->G * H;
  double *gx = ws, *gh = ws + GH;
  const double *W = j->w + dir * GH * j->I, *R = j->r + dir * GH * H, *b = j->b ? j->b + dir * 2 * GH : NULL;
  matvec(W, 0, GH, j->I, xt, gx);
  matvec(R, 0, GH, H, h, gh);
  for (int64_t g = 0; b && g < GH; g++) gx[g] += b[g], gh[g] += b[GH + g];
  if (j->G == 1) {
    for (int64_t k = 0; k < H; k++) h[k] = fire(j, dir, 0, gx[k] + gh[k]);
  } else if (j->G == 3) { /* GRU: z, r, h; gh[2H..3H) becomes the h gate's recurrent term */
    double *rh = ws + 2 * GH;
    for (int64_t k = 0; k < H; k++) gx[k] = fire(j, dir, 0, gx[k] + gh[k]), gx[H + k] = fire(j, dir, 0, gx[H + k] + gh[H + k]);
    if (!j->lbr) { /* (r ⊙ h) R_h^T + Rb_h */
      for (int64_t k = 0; k < H; k++) rh[k] = gx[H + k] * h[k];
      matvec(R, 2 * H, H, H, rh, gh + 2 * H);
      for (int64_t k = 0; k < H; k++) gh[2 * H + k] += b ? b[GH + 2 * H + k] : 0;
    } else { /* r ⊙ (h R_h^T + Rb_h) */
      for (int64_t k = 0; k < H; k++) gh[2 * H + k] *= gx[H + k];
    }
    for (int64_t k = 0; k < H; k++) {
      double ht = fire(j, dir, 1, gx[2 * H + k] + gh[2 * H + k]), z = gx[k];
      h[k] = (1 - z) * ht + z * h[k];
    }
  } else { /* LSTM: i, o, f, c; P: i, o, f */
    const double *P = j->p ? j->p + dir * 3 * H : NULL;
    for (int64_t k = 0; k < H; k++) {
      double it = fire(j, dir, 0, gx[k] + gh[k] + (P ? P[k] * c[k] : 0));
      double ft = fire(j, dir, 0, gx[2 * H + k] + gh[2 * H + k] + (P ? P[2 * H + k] * c[k] : 0));
      if (j->input_forget) ft = 1 - it;
      double ct = fire(j, dir, 1, gx[3 * H + k] + gh[3 * H + k]);
      c[k] = ft * c[k] + it * ct;
      double ot = fire(j, dir, 0, gx[H + k] + gh[H + k] + (P ? P[H + k] * c[k] : 0));
      h[k] = ot * act_apply(&j->act[dir * j->nact + 2], c[k]); /* clip bounds gate inputs only */
    }
  }
}

/* t-th input row of batch row bi (layouts 0 and 1). */
static const double *x_row(const rnn_job *j, int64_t t, int64_t bi) {
  return j->x + (j->layout ? bi * j->S + t : t * j->B + bi) * j->I;
}

/* Element offset of (dir, batch, 0) in initial_h / Y_h / Y_c. */
static int64_t state_off(const rnn_job *j, int dir, int64_t bi) {
  return (j->layout ? bi * j->dirs + dir : dir * j->B + bi) * j->H;
}

/* Runs direction dir for batch row bi, writing Y (NULL = not wanted) and the final states. */
static void run_row(const rnn_job *j, int dir, int64_t bi, ct_tensor *y, ct_tensor *yh, ct_tensor *yc, double *ws) {
  int64_t H = j->H, len = j->lens ? j->lens[bi] : j->S, so = state_off(j, dir, bi);
  double *h = ws + (2 * j->G + 1) * H, *c = h + H;
  for (int64_t k = 0; k < H; k++) h[k] = j->h0 ? j->h0[so + k] : 0, c[k] = j->c0 ? j->c0[so + k] : 0;
  for (int64_t s = 0; s < len; s++) {
    int64_t t = dir == 1 || j->reverse ? len - 1 - s : s;
    step(j, dir, x_row(j, t, bi), h, c, ws);
    int64_t yo = (j->layout ? (bi * j->S + t) * j->dirs + dir : (t * j->dirs + dir) * j->B + bi) * H;
    for (int64_t k = 0; y && k < H; k++) ct_tensor_set_f64(y, yo + k, h[k]);
  }
  for (int64_t k = 0; k < H; k++) {
    if (yh) ct_tensor_set_f64(yh, so + k, h[k]);
    if (yc) ct_tensor_set_f64(yc, so + k, c[k]);
  }
}

/* A double copy of t (NULL when t is NULL or on allocation failure: *oom set). */
static double *to_f64(const ct_tensor *t, bool *oom) {
  if (!t) return NULL;
  int64_t n = ct_tensor_numel(t);
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  if (!v) return *oom = true, NULL;
  for (int64_t i = 0; i < n; i++) v[i] = ct_tensor_get_f64(t, i);
  return v;
}

/* Reads the attributes and dims (the shape function has checked the shapes). */
static ct_status setup(const ct_op *op, ct_tensor *const *in, rnn_job *j, ct_diag *d) {
  const ct_tensor *x = in[0], *r = in[2];
  const char *dir = ct_attr_rnn_direction(op);
  j->G = op->kind == CT_OP_LSTM ? 4 : op->kind == CT_OP_GRU ? 3 : 1;
  j->dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
  j->reverse = !strcmp(dir, "reverse");
  j->layout = ct_attr_rnn_layout(op);
  if (x->ndim != 3 || r->ndim != 3 || (j->layout != 0 && j->layout != 1))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported X/R ranks or layout");
  j->S = x->shape[j->layout ? 1 : 0], j->B = x->shape[j->layout ? 0 : 1], j->I = x->shape[2], j->H = r->shape[2];
  if (in[1]->ndim != 3 || in[1]->shape[1] != j->G * j->H || in[1]->shape[2] != j->I || r->shape[1] != j->G * j->H ||
      in[1]->shape[0] != j->dirs || r->shape[0] != j->dirs)
    return ct_ops_err(d, CT_ERR_INPUT, op, "W/R shapes do not match X and the direction");
  j->clip = ct_attr_rnn_clip(op);
  j->lbr = ct_attr_rnn_linear_before_reset(op) != 0;
  j->input_forget = ct_attr_rnn_input_forget(op) != 0;
  return read_acts(op, j, d);
}

/* LSTM / GRU / RNN: Y (optional), Y_h, Y_c (LSTM) per the ONNX equations; steps past a
 * row's sequence_lens leave Y zero and the state unchanged. Errors: CT_ERR_INPUT for
 * inconsistent shapes, sequence lengths outside [0, seq], unknown activations;
 * CT_ERR_LIMIT out of memory. */
ct_status ct_kern_rnn(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                      ct_diag *d) {
  (void)ctx;
  rnn_job j;
  memset(&j, 0, sizeof j);
  ct_status st = setup(op, in, &j, d);
  if (st) return st;
  bool lstm = op->kind == CT_OP_LSTM, oom = false;
  const ct_tensor *in_at[8] = {NULL};
  for (int i = 0; i < op->n_in && i < 8; i++) in_at[i] = in[i];
  j.x = to_f64(in_at[0], &oom), j.w = to_f64(in_at[1], &oom), j.r = to_f64(in_at[2], &oom);
  j.b = to_f64(in_at[3], &oom), j.h0 = to_f64(in_at[5], &oom);
  j.c0 = lstm ? to_f64(in_at[6], &oom) : NULL, j.p = lstm ? to_f64(in_at[7], &oom) : NULL;
  j.lens = in_at[4] ? malloc(sizeof *j.lens * (size_t)(j.B ? j.B : 1)) : NULL;
  double *ws = malloc(sizeof *ws * (size_t)((2 * j.G + 3) * j.H + 1));
  oom = oom || !ws || (in_at[4] && !j.lens);
  for (int64_t bi = 0; !oom && j.lens && bi < j.B && !st; bi++)
    if ((j.lens[bi] = ct_ops_get_i64(in_at[4], bi)) < 0 || j.lens[bi] > j.S)
      st = ct_ops_err(d, CT_ERR_INPUT, op, "sequence_lens[%lld] = %lld outside [0, %lld]", (long long)bi,
                     (long long)j.lens[bi], (long long)j.S);
  ct_tensor *y = op->n_out > 0 ? out[0] : NULL, *yh = op->n_out > 1 ? out[1] : NULL, *yc = op->n_out > 2 ? out[2] : NULL;
  for (int k = 0; k < op->n_out; k++) memset(out[k]->data, 0, out[k]->nbytes);
  for (int dir = 0; !oom && !st && dir < j.dirs; dir++)
    for (int64_t bi = 0; bi < j.B; bi++) run_row(&j, dir, bi, y, yh, yc, ws);
  free(j.x), free(j.w), free(j.r), free(j.b), free(j.h0), free(j.c0), free(j.p), free(j.lens), free(ws);
  return oom ? ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory") : st;
}

/* ---- shape function ---- */

/* Gates per kind: LSTM 4 (i, o, f, c), GRU 3 (z, r, h), RNN 1. */
static int gates_of(ct_op_kind k) { return k == CT_OP_LSTM ? 4 : k == CT_OP_GRU ? 3 : 1; }

/* Checks optional input i has exactly the shape (nd dims). */
static ct_status opt_shape(const ct_op *op, int i, int nd, const int64_t *shape, const char *what, ct_diag *d) {
  if (i >= op->n_in || !op->in[i]) return CT_OK;
  const ct_value *v = op->in[i];
  if (v->ndim != nd || memcmp(v->shape, shape, sizeof *shape * (size_t)nd))
    return ct_ops_err(d, CT_ERR_INPUT, op, "input %d (%s) has the wrong shape", i, what);
  return CT_OK;
}

/* LSTM / GRU / RNN: checks X, W, R, B, sequence_lens, initial states (and LSTM's P) and types
 * Y, Y_h (and LSTM's Y_c) in X's float dtype. Errors: CT_ERR_INPUT for wrong ranks/shapes, an
 * unknown direction, a non-float X; "unsupported" for layout other than 0/1. */
ct_status ct_shape_rnn(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x, *w, *r;
  ct_status st;
  if ((st = ct_sm_in(op, 0, &x, d)) || (st = ct_sm_in(op, 1, &w, d)) || (st = ct_sm_in(op, 2, &r, d))) return st;
  if (!ct_dtype_is_float(x->dtype) || w->dtype != x->dtype || r->dtype != x->dtype)
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported dtype %s (X, W and R must share a float dtype)",
                     ct_dtype_name(x->dtype));
  int64_t layout = ct_attr_rnn_layout(op);
  if (layout != 0 && layout != 1) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported layout %lld", (long long)layout);
  const char *dir = ct_attr_rnn_direction(op);
  int64_t dirs = !strcmp(dir, "bidirectional") ? 2 : 1, G = gates_of(op->kind);
  if (dirs == 1 && strcmp(dir, "forward") && strcmp(dir, "reverse"))
    return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported direction \"%s\"", dir);
  if (x->ndim != 3 || w->ndim != 3 || r->ndim != 3) return ct_ops_err(d, CT_ERR_INPUT, op, "X, W and R must be 3-D");
  int64_t seq = x->shape[layout ? 1 : 0], batch = x->shape[layout ? 0 : 1], H = r->shape[2];
  if ((ct_attr_has_rnn_hidden_size(op) && ct_attr_rnn_hidden_size(op) != H) || w->shape[0] != dirs || r->shape[0] != dirs ||
      w->shape[1] != G * H || r->shape[1] != G * H || w->shape[2] != x->shape[2])
    return ct_ops_err(d, CT_ERR_INPUT, op, "W/R shapes do not match %lld directions, %lld gates, hidden size %lld",
                     (long long)dirs, (long long)G, (long long)H);
  int64_t bs[2] = {dirs, 2 * G * H}, sl[1] = {batch};
  int64_t hs[3] = {layout ? batch : dirs, layout ? dirs : batch, H}, ps[2] = {dirs, 3 * H};
  if ((st = opt_shape(op, 3, 2, bs, "B", d)) || (st = opt_shape(op, 4, 1, sl, "sequence_lens", d)) ||
      (st = opt_shape(op, 5, 3, hs, "initial_h", d)) ||
      (op->kind == CT_OP_LSTM && ((st = opt_shape(op, 6, 3, hs, "initial_c", d)) || (st = opt_shape(op, 7, 2, ps, "P", d)))))
    return st;
  if (!ct_attr_set_rnn_hidden_size(g, op, H)) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  int64_t ys[4] = {layout ? batch : seq, layout ? seq : dirs, layout ? dirs : batch, H};
  ct_sm_out(op, 0, x->dtype, 4, ys);
  ct_sm_out(op, 1, x->dtype, 3, hs);
  ct_sm_out(op, 2, x->dtype, 3, hs);
  return CT_OK;
}
