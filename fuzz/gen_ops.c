/* gen_ops.c: the operator emitters of the graph generator (fuzz/gen.h). Each emitter draws
 * attributes inside the operator's ONNX (opset 17) validity rules, computes the result shape
 * as onnx.ai's operator pages define it, and adds the nodes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/gen.h"

const char *const gen_family_names[GEN_FAM_COUNT] = {
#define GEN_FAM_NAME(f) #f,
    GEN_FAMILIES(GEN_FAM_NAME)
#undef GEN_FAM_NAME
};

uint64_t gen_next(gen_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int gen_int(gen_rng *r, int lo, int hi) {
  if (hi <= lo) return lo;
  return lo + (int)(gen_next(r) % (uint64_t)(hi - lo + 1));
}

float gen_float(gen_rng *r, float lo, float hi) {
  return lo + (hi - lo) * (float)((gen_next(r) >> 40) * (1.0 / 16777216.0));
}

bool gen_chance(gen_rng *r, int pct) { return gen_int(r, 0, 99) < pct; }

int64_t gen_elems(int nd, const int64_t *d) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= d[i];
  return n;
}

int gen_new_tensor(gen *g, int nd, const int64_t *d) {
  gen_tensor *t = &g->t[g->nt];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "t%d", g->nt);
  t->nd = nd;
  memcpy(t->d, d, sizeof *d * (size_t)nd);
  return g->nt++;
}

static const char *fresh(gen *g, const char *prefix) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s%d", prefix, g->n_names++);
  return ob_str(g->b, buf);
}

const char *gen_weight(gen *g, int nd, const int64_t *d, float a) {
  int64_t n = gen_elems(nd, d);
  float *v = ob_alloc(g->b, sizeof *v * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) v[i] = gen_float(&g->wr, -a, a);
  const char *name = fresh(g, "w");
  ob_init_f32(g->b, name, nd, d, v);
  return name;
}

static const char *ints(gen *g, int n, const int64_t *v) {
  const char *name = fresh(g, "k");
  ob_init_i64(g->b, name, n, v);
  return name;
}

static const char *scalar(gen *g, float v) {
  const char *name = fresh(g, "s");
  ob_init_f32(g->b, name, 0, NULL, &v);
  return name;
}

/* A tensor of rank in [lo, hi]: half the time one of the three newest, else any. */
static int pick(gen *g, int lo, int hi) {
  int cand[GEN_MAX_T], n = 0;
  for (int i = 0; i < g->nt; i++)
    if (g->t[i].nd >= lo && g->t[i].nd <= hi) cand[n++] = i;
  if (!n) return -1;
  int k = gen_chance(&g->r, 50) ? gen_int(&g->r, n > 3 ? n - 3 : 0, n - 1) : gen_int(&g->r, 0, n - 1);
  return cand[k];
}

/* Adds node op reading in[] and writing a new tensor of shape (nd, d); the tensor index. */
static Onnx__NodeProto *node(gen *g, const char *op, const char *const *in, int nout, const int *out) {
  const char *outs[8] = {0};
  for (int i = 0; i < nout; i++) outs[i] = g->t[out[i]].name;
  for (int i = 0; in[i]; i++)
    for (int k = 0; k < g->nt; k++)
      if (!strcmp(g->t[k].name, in[i])) g->t[k].uses++;
  return ob_node(g->b, op, fresh(g, "n"), in, outs);
}

static Onnx__NodeProto *node1(gen *g, const char *op, const char *const *in, int nd, const int64_t *d,
                              int *out) {
  *out = gen_new_tensor(g, nd, d);
  return node(g, op, in, 1, out);
}

static void fam(gen *g, int f) { g->fams |= 1u << f; }

static bool fits(int nd, const int64_t *d) {
  for (int i = 0; i < nd; i++)
    if (d[i] < 1) return false;
  return gen_elems(nd, d) <= GEN_MAX_ELEMS;
}

/* Conv: groups 1, depthwise (group = C) or a divisor of C; kernel, stride, dilation per
 * axis; asymmetric pads below the dilated kernel. */
static bool e_conv(gen *g) {
  int x = pick(g, 4, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int64_t c = t->d[1], grp = 1, m;
  int kind = gen_int(&g->r, 0, 99);
  if (kind < 25 && c > 1) {
    grp = c;
    m = c * gen_int(&g->r, 1, 2);
  } else if (kind < 40 && c >= 4 && c % 2 == 0) {
    grp = c % 4 == 0 && gen_chance(&g->r, 50) ? 4 : 2;
    m = grp * gen_int(&g->r, 1, 3);
  } else {
    m = gen_int(&g->r, 1, 16);
  }
  int64_t k[2], s[2], dl[2], p[4], o[4] = {t->d[0], m, 0, 0};
  for (int a = 0; a < 2; a++) {
    static const int ks[] = {1, 1, 2, 3, 3, 3, 5};
    k[a] = ks[gen_int(&g->r, 0, 6)];
    s[a] = gen_chance(&g->r, 65) ? 1 : gen_int(&g->r, 2, 3);
    dl[a] = gen_chance(&g->r, 80) || k[a] == 1 ? 1 : 2;
    int64_t eff = dl[a] * (k[a] - 1) + 1;
    p[a] = gen_int(&g->r, 0, (int)(eff - 1 < 2 ? eff - 1 : 2));
    p[a + 2] = gen_chance(&g->r, 60) ? p[a] : gen_int(&g->r, 0, (int)(eff - 1 < 2 ? eff - 1 : 2));
    o[2 + a] = (t->d[2 + a] + p[a] + p[a + 2] - eff) / s[a] + 1;
    if (t->d[2 + a] + p[a] + p[a + 2] < eff) return false;
  }
  if (!fits(4, o)) return false;
  int64_t wd[4] = {m, c / grp, k[0], k[1]};
  float a = 1.7f / sqrtf((float)(wd[1] * k[0] * k[1]));
  const char *in[4] = {t->name, gen_weight(g, 4, wd, a), NULL, NULL};
  if (gen_chance(&g->r, 70)) in[2] = gen_weight(g, 1, &m, 0.5f);
  int y;
  Onnx__NodeProto *n = node1(g, "Conv", in, 4, o, &y);
  ob_attr_ints(g->b, n, "kernel_shape", 2, k);
  ob_attr_ints(g->b, n, "strides", 2, s);
  ob_attr_ints(g->b, n, "dilations", 2, dl);
  ob_attr_ints(g->b, n, "pads", 4, p);
  ob_attr_i(g->b, n, "group", grp);
  fam(g, grp == 1 ? GEN_FAM_conv : grp == c ? GEN_FAM_dwconv : GEN_FAM_gconv);
  return true;
}

/* ConvTranspose: out = s (in - 1) + output_padding + d (k - 1) + 1 - pads. */
static bool e_convt(gen *g) {
  int x = pick(g, 4, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int64_t c = t->d[1], grp = 1, m = gen_int(&g->r, 1, 8);
  if (c > 1 && gen_chance(&g->r, 10)) grp = m = c;
  bool plain = grp == 1 && gen_chance(&g->r, 65); /* kernel = stride, no pads (docs/codegen_ops.md) */
  int64_t k[2], s[2], dl[2], p[4], op[2], o[4] = {t->d[0], m, 0, 0};
  for (int a = 0; a < 2; a++) {
    k[a] = gen_int(&g->r, 1, 4);
    s[a] = gen_int(&g->r, 1, 2);
    dl[a] = gen_chance(&g->r, 85) ? 1 : 2;
    op[a] = gen_chance(&g->r, 70) ? 0 : gen_int(&g->r, 0, (int)s[a] - 1);
    p[a] = gen_int(&g->r, 0, (int)k[a] - 1);
    p[a + 2] = gen_int(&g->r, 0, (int)k[a] - 1);
    if (plain) k[a] = s[a] = gen_int(&g->r, 1, 3), dl[a] = 1, op[a] = p[a] = p[a + 2] = 0;
    o[2 + a] = s[a] * (t->d[2 + a] - 1) + op[a] + dl[a] * (k[a] - 1) + 1 - p[a] - p[a + 2];
  }
  if (!fits(4, o)) return false;
  int64_t wd[4] = {c, m / grp, k[0], k[1]};
  const char *in[4] = {t->name, gen_weight(g, 4, wd, 1.2f / sqrtf((float)(c / grp * k[0] * k[1]))), NULL, NULL};
  if (gen_chance(&g->r, 60)) in[2] = gen_weight(g, 1, &m, 0.5f);
  int y;
  Onnx__NodeProto *n = node1(g, "ConvTranspose", in, 4, o, &y);
  ob_attr_ints(g->b, n, "kernel_shape", 2, k);
  ob_attr_ints(g->b, n, "strides", 2, s);
  ob_attr_ints(g->b, n, "dilations", 2, dl);
  ob_attr_ints(g->b, n, "pads", 4, p);
  if (op[0] || op[1]) ob_attr_ints(g->b, n, "output_padding", 2, op);
  if (grp > 1) ob_attr_i(g->b, n, "group", grp);
  fam(g, GEN_FAM_convt);
  return true;
}

/* A rank-2 operand: an existing one, or a Flatten of a rank-3/4 tensor. */
static int rank2(gen *g) {
  int x = pick(g, 2, 2);
  if (x >= 0 && gen_chance(&g->r, 70)) return x;
  int y = pick(g, 3, 4);
  if (y < 0) return x;
  gen_tensor *t = &g->t[y];
  int64_t d[2] = {t->d[0], gen_elems(t->nd, t->d) / t->d[0]};
  const char *in[] = {t->name, NULL};
  int z;
  ob_attr_i(g->b, node1(g, "Flatten", in, 2, d, &z), "axis", 1);
  fam(g, GEN_FAM_reshape);
  return z;
}

static float coef(gen *g) {
  static const float c[] = {1, 1, 1, 0.5f, 2, -1, 0.25f, 1.5f};
  return gen_chance(&g->r, 25) ? gen_float(&g->r, -2, 2) : c[gen_int(&g->r, 0, 7)];
}

/* Gemm: transA / transB, alpha, beta, C of shape [N], [M,N], [M,1], [1] or [] (row 1, [1,N],
 * is never drawn: w = ck - 4 skips it; kept so that seeds keep their cases). */
static bool e_gemm(gen *g) {
  int x = rank2(g);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  bool ta = gen_chance(&g->r, 5), tb = gen_chance(&g->r, 50);
  int64_t mm = ta ? t->d[1] : t->d[0], kk = ta ? t->d[0] : t->d[1], nn = gen_int(&g->r, 1, 48);
  int64_t o[2] = {mm, nn}, bd[2] = {tb ? nn : kk, tb ? kk : nn};
  if (!fits(2, o) || kk > 2048) return false;
  const char *in[4] = {t->name, gen_weight(g, 2, bd, 1.7f / sqrtf((float)kk)), NULL, NULL};
  int ck = gen_int(&g->r, 0, 9);
  if (ck >= 3) {
    int64_t cshapes[6][2] = {{nn, 0}, {1, nn}, {mm, nn}, {mm, 1}, {1, 0}, {0, 0}};
    static const int cnd[6] = {1, 2, 2, 2, 1, 0};
    int w = ck < 6 ? 0 : ck - 4;
    in[2] = gen_weight(g, cnd[w], cshapes[w], 0.5f);
  }
  int y;
  if (g->avoid_known && ck >= 6) return false; /* a C other than [N] */
  Onnx__NodeProto *n = node1(g, "Gemm", in, 2, o, &y);
  g->t[y].mac = true;
  if (ta) ob_attr_i(g->b, n, "transA", 1);
  if (tb) ob_attr_i(g->b, n, "transB", 1);
  if (gen_chance(&g->r, 40) && !g->avoid_known) ob_attr_f(g->b, n, "alpha", coef(g));
  if (in[2] && gen_chance(&g->r, 40) && !g->avoid_known) ob_attr_f(g->b, n, "beta", coef(g));
  fam(g, GEN_FAM_gemm);
  return true;
}

/* MatMul of a rank-2/3 tensor by a [K, N] weight, or of two activations (A x A^T). */
static bool e_matmul(gen *g) {
  int x = gen_chance(&g->r, 60) ? rank2(g) : pick(g, 3, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int nd = t->nd;
  int64_t kk = t->d[nd - 1], o[4];
  memcpy(o, t->d, sizeof o);
  const char *in[3] = {t->name, NULL, NULL};
  if (nd >= 3 && gen_chance(&g->r, 30)) { /* A x A^T: [.., M, K] x [.., K, M] */
    int64_t perm[4] = {0, 1, 2, 3}, td[4];
    memcpy(td, t->d, sizeof td);
    perm[nd - 2] = nd - 1, perm[nd - 1] = nd - 2;
    td[nd - 2] = t->d[nd - 1], td[nd - 1] = t->d[nd - 2];
    const char *tin[] = {t->name, NULL};
    int tt;
    ob_attr_ints(g->b, node1(g, "Transpose", tin, nd, td, &tt), "perm", nd, perm);
    in[1] = g->t[tt].name;
    o[nd - 1] = t->d[nd - 2];
    fam(g, GEN_FAM_transpose);
  } else {
    int64_t nn = gen_int(&g->r, 1, 48), bd[2] = {kk, nn};
    o[nd - 1] = nn;
    if (kk > 2048) return false;
    in[1] = gen_weight(g, 2, bd, 1.7f / sqrtf((float)kk));
  }
  if (!fits(nd, o)) return false;
  int y;
  node1(g, "MatMul", in, nd, o, &y);
  g->t[y].mac = true;
  fam(g, GEN_FAM_matmul);
  return true;
}

/* Add / Sub / Mul / Div / Max / Min: with a tensor of the same shape, or a constant of a
 * broadcast shape (any dims 1, leading dims dropped); Div only by constants away from 0. */
static bool e_binary(gen *g) {
  static const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  int op = gen_int(&g->r, 0, 5), x = pick(g, 1, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *other = NULL;
  bool same = op != 3 && gen_chance(&g->r, 40);
  if (g->avoid_known && t->mac) same = true, op = op == 3 ? 0 : op; /* no MatMul + constant = Gemm C */
  if (same) {
    int cand[GEN_MAX_T], n = 0;
    for (int i = 0; i < g->nt; i++)
      if (g->t[i].nd == t->nd && !memcmp(g->t[i].d, t->d, sizeof *t->d * (size_t)t->nd)) cand[n++] = i;
    other = g->t[cand[gen_int(&g->r, 0, n - 1)]].name;
  } else {
    int64_t d[GEN_MAX_RANK];
    int drop = gen_chance(&g->r, 30) ? gen_int(&g->r, 0, t->nd) : 0;
    for (int i = drop; i < t->nd; i++) d[i - drop] = gen_chance(&g->r, 50) ? t->d[i] : 1;
    int64_t n = gen_elems(t->nd - drop, d);
    float *v = ob_alloc(g->b, sizeof *v * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
      v[i] = gen_float(&g->wr, op == 3 ? 0.5f : -1, op == 3 ? 2 : 1);
      if (op == 3 && gen_chance(&g->wr, 50)) v[i] = -v[i];
    }
    other = fresh(g, "c");
    ob_init_f32(g->b, other, t->nd - drop, d, v);
  }
  const char *in[3] = {t->name, other, NULL};
  if (op != 3 && gen_chance(&g->r, 20)) in[0] = other, in[1] = t->name;
  int y;
  node1(g, ops[op], in, t->nd, t->d, &y);
  fam(g, GEN_FAM_binary);
  return true;
}

/* Elementwise activations (SiLU as Sigmoid then Mul). */
static bool e_act(gen *g) {
  static const char *ops[] = {"Relu", "Clip", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid",
                              "LeakyRelu", "Elu", "Softplus", "Exp", "SiLU"};
  int op = gen_int(&g->r, 0, 10), x = pick(g, 1, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[4] = {t->name, NULL, NULL, NULL};
  if (op == 10) {
    int s;
    node1(g, "Sigmoid", in, t->nd, t->d, &s);
    in[1] = g->t[s].name;
    node1(g, "Mul", in, t->nd, t->d, &y);
    fam(g, GEN_FAM_act);
    return true;
  }
  if (op == 1) {
    int w = gen_int(&g->r, 0, 3);
    in[1] = w & 1 ? "" : scalar(g, gen_chance(&g->r, 50) ? 0 : gen_float(&g->r, -1, 0));
    in[2] = w & 2 ? NULL : scalar(g, gen_chance(&g->r, 50) ? 6 : gen_float(&g->r, 0.2f, 3));
    if (w == 3) in[1] = NULL;
  }
  Onnx__NodeProto *n = node1(g, ops[op], in, t->nd, t->d, &y);
  if (op == 5) {
    ob_attr_f(g->b, n, "alpha", gen_float(&g->r, 0.1f, 0.5f));
    ob_attr_f(g->b, n, "beta", gen_float(&g->r, 0.3f, 0.7f));
  } else if (op == 6 || op == 7) {
    ob_attr_f(g->b, n, "alpha", gen_float(&g->r, op == 6 ? 0.01f : 0.5f, op == 6 ? 0.3f : 1.5f));
  }
  fam(g, GEN_FAM_act);
  return true;
}

/* MaxPool / AveragePool: pads below the kernel, ceil_mode only where the last window starts
 * inside the input or its leading pad (so every runtime agrees on the shape). */
static bool e_pool(gen *g) {
  int x = pick(g, 4, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  bool avg = gen_chance(&g->r, 50), ceil_m = gen_chance(&g->r, 25);
  int64_t k[2], s[2], p[4], o[4] = {t->d[0], t->d[1], 0, 0};
  for (int a = 0; a < 2; a++) {
    k[a] = gen_int(&g->r, 1, 3);
    s[a] = gen_int(&g->r, 1, 2);
    p[a] = gen_int(&g->r, 0, (int)k[a] - 1);
    p[a + 2] = gen_int(&g->r, 0, (int)k[a] - 1);
    int64_t span = t->d[2 + a] + p[a] + p[a + 2] - k[a];
    if (span < 0) return false;
    o[2 + a] = (ceil_m ? (span + s[a] - 1) / s[a] : span / s[a]) + 1;
    if (ceil_m && (o[2 + a] - 1) * s[a] >= t->d[2 + a] + p[a]) return false;
  }
  if (!fits(4, o)) return false;
  const char *in[] = {t->name, NULL};
  int y;
  Onnx__NodeProto *n = node1(g, avg ? "AveragePool" : "MaxPool", in, 4, o, &y);
  ob_attr_ints(g->b, n, "kernel_shape", 2, k);
  ob_attr_ints(g->b, n, "strides", 2, s);
  ob_attr_ints(g->b, n, "pads", 4, p);
  if (ceil_m) ob_attr_i(g->b, n, "ceil_mode", 1);
  if (avg && gen_chance(&g->r, 30) && !(g->avoid_known && ceil_m)) ob_attr_i(g->b, n, "count_include_pad", 1);
  fam(g, GEN_FAM_pool);
  return true;
}

/* GlobalAveragePool, or ReduceMean over a random axis set (keepdims 0 or 1). */
static bool e_reduce(gen *g) {
  int x = pick(g, gen_chance(&g->r, 50) ? 4 : 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[] = {t->name, NULL};
  int64_t o[4];
  memcpy(o, t->d, sizeof o);
  if (t->nd == 4 && gen_chance(&g->r, 50)) {
    o[2] = o[3] = 1;
    node1(g, "GlobalAveragePool", in, 4, o, &y);
    fam(g, GEN_FAM_gap);
    return true;
  }
  int64_t axes[4];
  int na = 0, on = 0;
  for (int a = 1; a < t->nd; a++)
    if (gen_chance(&g->r, 45) || (a == t->nd - 1 && !na)) axes[na++] = gen_chance(&g->r, 20) ? a - t->nd : a;
  bool keep = gen_chance(&g->r, 70);
  for (int a = 0; a < t->nd; a++) {
    bool red = false;
    for (int i = 0; i < na; i++) red |= (axes[i] + t->nd) % t->nd == a;
    if (!red) o[on++] = t->d[a];
    else if (keep) o[on++] = 1;
  }
  Onnx__NodeProto *n = node1(g, "ReduceMean", in, on, o, &y);
  ob_attr_ints(g->b, n, "axes", na, axes);
  if (!keep) ob_attr_i(g->b, n, "keepdims", 0);
  fam(g, GEN_FAM_reduce);
  return true;
}

/* Concat of 2-3 tensors equal except along the axis (a tensor may repeat). */
static bool e_concat(gen *g) {
  int x = pick(g, 2, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int ax = gen_int(&g->r, 1, t->nd - 1), cand[GEN_MAX_T], n = 0;
  for (int i = 0; i < g->nt; i++) {
    bool ok = g->t[i].nd == t->nd;
    for (int a = 0; ok && a < t->nd; a++) ok = a == ax || g->t[i].d[a] == t->d[a];
    if (ok) cand[n++] = i;
  }
  int k = gen_int(&g->r, 2, 3);
  const char *in[4] = {t->name, NULL, NULL, NULL};
  int64_t o[4];
  memcpy(o, t->d, sizeof o);
  for (int i = 1; i < k; i++) {
    int c = cand[gen_int(&g->r, 0, n - 1)];
    in[i] = g->t[c].name;
    o[ax] += g->t[c].d[ax];
  }
  if (!fits(t->nd, o)) return false;
  int y;
  ob_attr_i(g->b, node1(g, "Concat", in, t->nd, o, &y), "axis", gen_chance(&g->r, 20) ? ax - t->nd : ax);
  fam(g, GEN_FAM_concat);
  return true;
}

/* Slice on one or two axes: steps 1, 2 or -1, negative starts sometimes. */
static bool e_slice(gen *g) {
  int x = pick(g, 2, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int64_t st[2], en[2], ax[2], sp[2], o[4];
  memcpy(o, t->d, sizeof o);
  int na = gen_int(&g->r, 1, 2);
  if (na == 2 && t->nd < 3) na = 1;
  int first = gen_int(&g->r, 1, t->nd - na);
  for (int i = 0; i < na; i++) {
    int a = first + i;
    int64_t d = t->d[a];
    ax[i] = gen_chance(&g->r, 15) ? a - t->nd : a;
    int kind = gen_int(&g->r, 0, 9);
    if (kind < 1 && d > 1 && gen_chance(&g->r, 50)) { /* step -1 from s0 down to e (exclusive; e = -1 via -(d+1)) */
      int64_t s0 = gen_int(&g->r, 0, (int)d - 1), e = gen_int(&g->r, -1, (int)s0 - 1);
      st[i] = s0, en[i] = e < 0 ? -(d + 1) : e, sp[i] = -1, o[a] = s0 - e;
    } else {
      int64_t s0 = gen_int(&g->r, 0, (int)d - 1), e = gen_int(&g->r, (int)s0 + 1, (int)d);
      sp[i] = kind < 5 ? 2 : 1;
      o[a] = (e - s0 + sp[i] - 1) / sp[i];
      st[i] = gen_chance(&g->r, 20) ? s0 - d : s0;
      en[i] = e == d && gen_chance(&g->r, 30) ? INT64_MAX : e;
    }
  }
  const char *in[] = {t->name, ints(g, na, st), ints(g, na, en), ints(g, na, ax), ints(g, na, sp), NULL};
  int y;
  node1(g, "Slice", in, t->nd, o, &y);
  fam(g, GEN_FAM_slice);
  return true;
}

/* Split along a non-batch axis into 2-3 parts of random sizes (the split input). */
static bool e_split(gen *g) {
  int x = pick(g, 2, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int ax = gen_int(&g->r, 1, t->nd - 1);
  int64_t d = t->d[ax];
  if (d < 2) return false;
  int k = d >= 3 ? gen_int(&g->r, 2, 3) : 2, out[3];
  int64_t sz[3], left = d;
  for (int i = 0; i < k - 1; i++) {
    sz[i] = gen_int(&g->r, 1, (int)(left - (k - 1 - i)));
    left -= sz[i];
  }
  sz[k - 1] = left;
  for (int i = 0; i < k; i++) {
    int64_t o[4];
    memcpy(o, t->d, sizeof o);
    o[ax] = sz[i];
    out[i] = gen_new_tensor(g, t->nd, o);
  }
  const char *in[] = {t->name, ints(g, k, sz), NULL};
  ob_attr_i(g->b, node(g, "Split", in, k, out), "axis", ax);
  fam(g, GEN_FAM_split);
  return true;
}

/* Transpose by a random non-identity permutation. */
static bool e_transpose(gen *g) {
  int x = pick(g, 2, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int64_t perm[4] = {0, 1, 2, 3}, o[4];
  for (int tries = 0; tries < 8; tries++) {
    for (int i = t->nd - 1; i > 0; i--) {
      int j = gen_int(&g->r, 0, i);
      int64_t s = perm[i];
      perm[i] = perm[j], perm[j] = s;
    }
    bool id = true;
    for (int i = 0; i < t->nd; i++) id &= perm[i] == i;
    if (!id) break;
  }
  for (int i = 0; i < t->nd; i++) o[i] = t->d[perm[i]];
  const char *in[] = {t->name, NULL};
  int y;
  ob_attr_ints(g->b, node1(g, "Transpose", in, t->nd, o, &y), "perm", t->nd, perm);
  fam(g, GEN_FAM_transpose);
  return true;
}

/* Reshape to a random factorization of the same size (0 and -1 entries), or Flatten. */
static bool e_reshape(gen *g) {
  int x = pick(g, 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[3] = {t->name, NULL, NULL};
  if (gen_chance(&g->r, 30)) {
    int ax = gen_int(&g->r, 1, t->nd - 1);
    int64_t o[2] = {gen_elems(ax, t->d), gen_elems(t->nd - ax, t->d + ax)};
    ob_attr_i(g->b, node1(g, "Flatten", in, 2, o, &y), "axis", ax);
    fam(g, GEN_FAM_reshape);
    return true;
  }
  int nd = gen_int(&g->r, 2, 4);
  int64_t rest = gen_elems(t->nd, t->d) / t->d[0], o[4] = {t->d[0]}, spec[4];
  for (int i = 1; i < nd - 1; i++) {
    int64_t div[64];
    int nv = 0;
    for (int64_t v = 1; v <= rest && nv < 64; v++)
      if (rest % v == 0) div[nv++] = v;
    o[i] = div[gen_int(&g->r, 0, nv - 1)];
    rest /= o[i];
  }
  o[nd - 1] = rest;
  memcpy(spec, o, sizeof spec);
  if (gen_chance(&g->r, 30)) spec[0] = 0;
  if (gen_chance(&g->r, 40)) spec[gen_int(&g->r, 1, nd - 1)] = -1;
  in[1] = ints(g, nd, spec);
  node1(g, "Reshape", in, nd, o, &y);
  fam(g, GEN_FAM_reshape);
  return true;
}

/* Pad (constant with a value, reflect, edge) on H and W, constant also on C. */
static bool e_pad(gen *g) {
  int x = pick(g, 4, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  static const char *modes[] = {"constant", "reflect", "edge"};
  int mode = gen_chance(&g->r, 80) ? 0 : gen_int(&g->r, 1, 2);
  int64_t p[8] = {0}, o[4];
  memcpy(o, t->d, sizeof o);
  for (int a = mode == 0 ? 1 : 2; a < 4; a++) {
    int lim = mode == 1 ? (int)(t->d[a] - 1 < 2 ? t->d[a] - 1 : 2) : 2;
    if (a == 1 && gen_chance(&g->r, 70)) lim = 0;
    p[a] = gen_int(&g->r, 0, lim);
    p[a + 4] = gen_int(&g->r, 0, lim);
    o[a] += p[a] + p[a + 4];
  }
  if (!fits(4, o)) return false;
  const char *in[4] = {t->name, ints(g, 8, p), NULL, NULL};
  if (mode == 0 && gen_chance(&g->r, 60)) in[2] = scalar(g, gen_float(&g->r, -1, 1));
  int y;
  Onnx__NodeProto *n = node1(g, "Pad", in, 4, o, &y);
  if (mode) ob_attr_s(g->b, n, "mode", modes[mode]);
  fam(g, GEN_FAM_pad);
  return true;
}

/* Resize by scales (x2, x3, x0.5) or sizes; nearest or linear, several coordinate modes. */
static bool e_resize(gen *g) {
  int x = pick(g, 4, 4);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  bool lin = gen_chance(&g->r, 25), plain = !lin && gen_chance(&g->r, 75);
  float sc[4] = {1, 1, 1, 1};
  int64_t o[4];
  memcpy(o, t->d, sizeof o);
  for (int a = 2; a < 4; a++) {
    int k = gen_int(&g->r, 0, 5);
    sc[a] = k < 3 ? 2.0f : k == 3 ? 3.0f : k == 4 && t->d[a] % 2 == 0 && !plain ? 0.5f : 1.0f;
    o[a] = (int64_t)floorf((float)t->d[a] * sc[a]);
  }
  if (!fits(4, o)) return false;
  const char *in[5] = {t->name, "", NULL, NULL, NULL};
  if (gen_chance(&g->r, 30)) {
    in[2] = "", in[3] = ints(g, 4, o);
  } else {
    int64_t four = 4;
    in[2] = fresh(g, "c");
    ob_init_f32(g->b, in[2], 1, &four, sc);
  }
  int y;
  Onnx__NodeProto *n = node1(g, "Resize", in, 4, o, &y);
  static const char *ctm[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
  static const char *nm[] = {"round_prefer_floor", "floor", "round_prefer_ceil", "ceil"};
  ob_attr_s(g->b, n, "mode", lin ? "linear" : "nearest");
  int cm = gen_int(&g->r, 0, lin ? 3 : 1), nmode = gen_int(&g->r, 0, 3);
  if (plain) nmode = cm == 1 ? 1 : gen_chance(&g->r, 50) ? 0 : 2; /* the o / factor index maps */
  ob_attr_s(g->b, n, "coordinate_transformation_mode", ctm[cm]);
  if (!lin) ob_attr_s(g->b, n, "nearest_mode", nm[nmode]);
  fam(g, lin ? GEN_FAM_resize_linear : GEN_FAM_resize_nearest);
  return true;
}

/* Softmax over a random axis (opset 13 semantics: one axis). */
static bool e_softmax(gen *g) {
  int x = pick(g, 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[] = {t->name, NULL};
  int ax = gen_int(&g->r, 1, t->nd - 1);
  ob_attr_i(g->b, node1(g, "Softmax", in, t->nd, t->d, &y), "axis", gen_chance(&g->r, 50) ? ax - t->nd : ax);
  fam(g, GEN_FAM_softmax);
  return true;
}

/* LayerNormalization over the last one or two axes, scale and (optional) bias. */
static bool e_layernorm(gen *g) {
  int x = pick(g, 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int k = t->nd > 2 && gen_chance(&g->r, 30) ? 2 : 1;
  const int64_t *nd = t->d + t->nd - k;
  const char *in[4] = {t->name, gen_weight(g, k, nd, 1.5f), NULL, NULL};
  if (gen_chance(&g->r, 70)) in[2] = gen_weight(g, k, nd, 0.5f);
  Onnx__NodeProto *n = node1(g, "LayerNormalization", in, t->nd, t->d, &y);
  ob_attr_i(g->b, n, "axis", -k);
  int e = gen_int(&g->r, 0, 9);
  if (e < 6) ob_attr_f(g->b, n, "epsilon", e < 3 ? 1e-5f : e < 5 ? 1e-6f : 1e-3f);
  fam(g, GEN_FAM_layernorm);
  return true;
}

/* Cast float -> float (a no-op), or float -> float16 -> float (a rounding). */
static bool e_cast(gen *g) {
  int x = pick(g, 1, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[] = {t->name, NULL};
  if (gen_chance(&g->r, 50)) {
    ob_attr_i(g->b, node1(g, "Cast", in, t->nd, t->d, &y), "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  } else {
    int h = gen_new_tensor(g, t->nd, t->d);
    ob_attr_i(g->b, node(g, "Cast", in, 1, &h), "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16);
    g->t[h].nd = 0; /* not a float tensor: no other reader may pick it */
    const char *in2[] = {g->t[h].name, NULL};
    g->t[h].uses++;
    y = gen_new_tensor(g, t->nd, t->d);
    ob_attr_i(g->b, ob_node(g->b, "Cast", fresh(g, "n"), in2, (const char *const[]){g->t[y].name, NULL}), "to",
              ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  }
  fam(g, GEN_FAM_cast);
  return true;
}

bool gen_step(gen *g) {
  /* weights: how often each emitter is drawn */
  static bool (*const em[])(gen *) = {e_conv,    e_conv,      e_convt,  e_gemm,    e_matmul, e_binary,
                                       e_binary,  e_act,       e_act,    e_pool,    e_reduce, e_concat,
                                       e_slice,   e_split,     e_transpose, e_reshape, e_pad, e_resize,
                                       e_softmax, e_layernorm, e_cast};
  int k = gen_int(&g->r, 0, (int)(sizeof em / sizeof em[0]) - 1);
  int nt = g->nt, nn = (int)g->b->g.n_node;
  if (g->nt > GEN_MAX_T - 8 || g->b->g.n_node > OB_MAX - 8 || g->b->g.n_initializer > OB_MAX - 8) return false;
  bool ok = em[k](g);
  if (!ok && (g->nt != nt || (int)g->b->g.n_node != nn)) {
    /* an emitter that gave up after adding a helper node (Flatten, Transpose) keeps it */
    return true;
  }
  return ok;
}
