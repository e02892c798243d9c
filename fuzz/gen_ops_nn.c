/* gen_ops_nn.c: the graph generator's emitters of the compute operators (fuzz/gen.h): Conv,
 * ConvTranspose, Gemm, MatMul, the binary elementwise ops, activations, pools, reductions,
 * Softmax and LayerNormalization; attributes inside ONNX (opset 17) validity rules, result
 * shapes as onnx.ai's operator pages define them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/gen.h"

/* Conv: groups 1, depthwise (group = C) or a divisor of C; kernel, stride, dilation per
 * axis; asymmetric pads below the dilated kernel. */
bool gen_e_conv(gen *g) {
  int x = gen_pick(g, 4, 4);
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
  if (!gen_fits(4, o)) return false;
  int64_t wd[4] = {m, c / grp, k[0], k[1]};
  float a = 1.7f / sqrtf((float)(wd[1] * k[0] * k[1]));
  const char *in[4] = {t->name, gen_weight(g, 4, wd, a), NULL, NULL};
  if (gen_chance(&g->r, 70)) in[2] = gen_weight(g, 1, &m, 0.5f);
  int y;
  Onnx__NodeProto *n = gen_node1(g, "Conv", in, 4, o, &y);
  ob_attr_ints(g->b, n, "kernel_shape", 2, k);
  ob_attr_ints(g->b, n, "strides", 2, s);
  ob_attr_ints(g->b, n, "dilations", 2, dl);
  ob_attr_ints(g->b, n, "pads", 4, p);
  ob_attr_i(g->b, n, "group", grp);
  gen_fam(g, grp == 1 ? GEN_FAM_conv : grp == c ? GEN_FAM_dwconv : GEN_FAM_gconv);
  return true;
}

/* ConvTranspose: out = s (in - 1) + output_padding + d (k - 1) + 1 - pads. */
bool gen_e_convt(gen *g) {
  int x = gen_pick(g, 4, 4);
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
  if (!gen_fits(4, o)) return false;
  int64_t wd[4] = {c, m / grp, k[0], k[1]};
  const char *in[4] = {t->name, gen_weight(g, 4, wd, 1.2f / sqrtf((float)(c / grp * k[0] * k[1]))), NULL, NULL};
  if (gen_chance(&g->r, 60)) in[2] = gen_weight(g, 1, &m, 0.5f);
  int y;
  Onnx__NodeProto *n = gen_node1(g, "ConvTranspose", in, 4, o, &y);
  ob_attr_ints(g->b, n, "kernel_shape", 2, k);
  ob_attr_ints(g->b, n, "strides", 2, s);
  ob_attr_ints(g->b, n, "dilations", 2, dl);
  ob_attr_ints(g->b, n, "pads", 4, p);
  if (op[0] || op[1]) ob_attr_ints(g->b, n, "output_padding", 2, op);
  if (grp > 1) ob_attr_i(g->b, n, "group", grp);
  gen_fam(g, GEN_FAM_convt);
  return true;
}

/* A rank-2 operand: an existing one, or a Flatten of a rank-3/4 tensor. */
static int rank2(gen *g) {
  int x = gen_pick(g, 2, 2);
  if (x >= 0 && gen_chance(&g->r, 70)) return x;
  int y = gen_pick(g, 3, 4);
  if (y < 0) return x;
  gen_tensor *t = &g->t[y];
  int64_t d[2] = {t->d[0], gen_elems(t->nd, t->d) / t->d[0]};
  const char *in[] = {t->name, NULL};
  int z;
  ob_attr_i(g->b, gen_node1(g, "Flatten", in, 2, d, &z), "axis", 1);
  gen_fam(g, GEN_FAM_reshape);
  return z;
}

static float coef(gen *g) {
  static const float c[] = {1, 1, 1, 0.5f, 2, -1, 0.25f, 1.5f};
  return gen_chance(&g->r, 25) ? gen_float(&g->r, -2, 2) : c[gen_int(&g->r, 0, 7)];
}

/* Gemm: transA / transB, alpha, beta, C of shape [N], [M,N], [M,1], [1] or [] (row 1, [1,N],
 * is never drawn: w = ck - 4 skips it; kept so that seeds keep their cases). */
bool gen_e_gemm(gen *g) {
  int x = rank2(g);
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  bool ta = gen_chance(&g->r, 5), tb = gen_chance(&g->r, 50);
  int64_t mm = ta ? t->d[1] : t->d[0], kk = ta ? t->d[0] : t->d[1], nn = gen_int(&g->r, 1, 48);
  int64_t o[2] = {mm, nn}, bd[2] = {tb ? nn : kk, tb ? kk : nn};
  if (!gen_fits(2, o) || kk > 2048) return false;
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
  Onnx__NodeProto *n = gen_node1(g, "Gemm", in, 2, o, &y);
  g->t[y].mac = true;
  if (ta) ob_attr_i(g->b, n, "transA", 1);
  if (tb) ob_attr_i(g->b, n, "transB", 1);
  if (gen_chance(&g->r, 40) && !g->avoid_known) ob_attr_f(g->b, n, "alpha", coef(g));
  if (in[2] && gen_chance(&g->r, 40) && !g->avoid_known) ob_attr_f(g->b, n, "beta", coef(g));
  gen_fam(g, GEN_FAM_gemm);
  return true;
}

/* MatMul of a rank-2/3 tensor by a [K, N] weight, or of two activations (A x A^T). */
bool gen_e_matmul(gen *g) {
  int x = gen_chance(&g->r, 60) ? rank2(g) : gen_pick(g, 3, 4);
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
    ob_attr_ints(g->b, gen_node1(g, "Transpose", tin, nd, td, &tt), "perm", nd, perm);
    in[1] = g->t[tt].name;
    o[nd - 1] = t->d[nd - 2];
    gen_fam(g, GEN_FAM_transpose);
  } else {
    int64_t nn = gen_int(&g->r, 1, 48), bd[2] = {kk, nn};
    o[nd - 1] = nn;
    if (kk > 2048) return false;
    in[1] = gen_weight(g, 2, bd, 1.7f / sqrtf((float)kk));
  }
  if (!gen_fits(nd, o)) return false;
  int y;
  gen_node1(g, "MatMul", in, nd, o, &y);
  g->t[y].mac = true;
  gen_fam(g, GEN_FAM_matmul);
  return true;
}

/* Add / Sub / Mul / Div / Max / Min: with a tensor of the same shape, or a constant of a
 * broadcast shape (any dims 1, leading dims dropped); Div only by constants away from 0. */
bool gen_e_binary(gen *g) {
  static const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  int op = gen_int(&g->r, 0, 5), x = gen_pick(g, 1, 4);
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
    other = gen_fresh(g, "c");
    ob_init_f32(g->b, other, t->nd - drop, d, v);
  }
  const char *in[3] = {t->name, other, NULL};
  if (op != 3 && gen_chance(&g->r, 20)) in[0] = other, in[1] = t->name;
  int y;
  gen_node1(g, ops[op], in, t->nd, t->d, &y);
  gen_fam(g, GEN_FAM_binary);
  return true;
}

/* Elementwise activations (SiLU as Sigmoid then Mul). */
bool gen_e_act(gen *g) {
  static const char *ops[] = {"Relu", "Clip", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid",
                              "LeakyRelu", "Elu", "Softplus", "Exp", "SiLU"};
  int op = gen_int(&g->r, 0, 10), x = gen_pick(g, 1, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[4] = {t->name, NULL, NULL, NULL};
  if (op == 10) {
    int s;
    gen_node1(g, "Sigmoid", in, t->nd, t->d, &s);
    in[1] = g->t[s].name;
    gen_node1(g, "Mul", in, t->nd, t->d, &y);
    gen_fam(g, GEN_FAM_act);
    return true;
  }
  if (op == 1) {
    int w = gen_int(&g->r, 0, 3);
    in[1] = w & 1 ? "" : gen_scalar(g, gen_chance(&g->r, 50) ? 0 : gen_float(&g->r, -1, 0));
    in[2] = w & 2 ? NULL : gen_scalar(g, gen_chance(&g->r, 50) ? 6 : gen_float(&g->r, 0.2f, 3));
    if (w == 3) in[1] = NULL;
  }
  Onnx__NodeProto *n = gen_node1(g, ops[op], in, t->nd, t->d, &y);
  if (op == 5) {
    ob_attr_f(g->b, n, "alpha", gen_float(&g->r, 0.1f, 0.5f));
    ob_attr_f(g->b, n, "beta", gen_float(&g->r, 0.3f, 0.7f));
  } else if (op == 6 || op == 7) {
    ob_attr_f(g->b, n, "alpha", gen_float(&g->r, op == 6 ? 0.01f : 0.5f, op == 6 ? 0.3f : 1.5f));
  }
  gen_fam(g, GEN_FAM_act);
  return true;
}

/* MaxPool / AveragePool: pads below the kernel, ceil_mode only where the last window starts
 * inside the input or its leading pad (so every runtime agrees on the shape). */
bool gen_e_pool(gen *g) {
  int x = gen_pick(g, 4, 4);
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
  if (!gen_fits(4, o)) return false;
  const char *in[] = {t->name, NULL};
  int y;
  Onnx__NodeProto *n = gen_node1(g, avg ? "AveragePool" : "MaxPool", in, 4, o, &y);
  ob_attr_ints(g->b, n, "kernel_shape", 2, k);
  ob_attr_ints(g->b, n, "strides", 2, s);
  ob_attr_ints(g->b, n, "pads", 4, p);
  if (ceil_m) ob_attr_i(g->b, n, "ceil_mode", 1);
  if (avg && gen_chance(&g->r, 30) && !(g->avoid_known && ceil_m)) ob_attr_i(g->b, n, "count_include_pad", 1);
  gen_fam(g, GEN_FAM_pool);
  return true;
}

/* GlobalAveragePool, or ReduceMean over a random axis set (keepdims 0 or 1). */
bool gen_e_reduce(gen *g) {
  int x = gen_pick(g, gen_chance(&g->r, 50) ? 4 : 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[] = {t->name, NULL};
  int64_t o[4];
  memcpy(o, t->d, sizeof o);
  if (t->nd == 4 && gen_chance(&g->r, 50)) {
    o[2] = o[3] = 1;
    gen_node1(g, "GlobalAveragePool", in, 4, o, &y);
    gen_fam(g, GEN_FAM_gap);
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
  Onnx__NodeProto *n = gen_node1(g, "ReduceMean", in, on, o, &y);
  ob_attr_ints(g->b, n, "axes", na, axes);
  if (!keep) ob_attr_i(g->b, n, "keepdims", 0);
  gen_fam(g, GEN_FAM_reduce);
  return true;
}

/* Softmax over a random axis (opset 13 semantics: one axis). */
bool gen_e_softmax(gen *g) {
  int x = gen_pick(g, 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[] = {t->name, NULL};
  int ax = gen_int(&g->r, 1, t->nd - 1);
  ob_attr_i(g->b, gen_node1(g, "Softmax", in, t->nd, t->d, &y), "axis", gen_chance(&g->r, 50) ? ax - t->nd : ax);
  gen_fam(g, GEN_FAM_softmax);
  return true;
}

/* LayerNormalization over the last one or two axes, scale and (optional) bias. */
bool gen_e_layernorm(gen *g) {
  int x = gen_pick(g, 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  int k = t->nd > 2 && gen_chance(&g->r, 30) ? 2 : 1;
  const int64_t *nd = t->d + t->nd - k;
  const char *in[4] = {t->name, gen_weight(g, k, nd, 1.5f), NULL, NULL};
  if (gen_chance(&g->r, 70)) in[2] = gen_weight(g, k, nd, 0.5f);
  Onnx__NodeProto *n = gen_node1(g, "LayerNormalization", in, t->nd, t->d, &y);
  ob_attr_i(g->b, n, "axis", -k);
  int e = gen_int(&g->r, 0, 9);
  if (e < 6) ob_attr_f(g->b, n, "epsilon", e < 3 ? 1e-5f : e < 5 ? 1e-6f : 1e-3f);
  gen_fam(g, GEN_FAM_layernorm);
  return true;
}
