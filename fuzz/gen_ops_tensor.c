/* gen_ops_tensor.c: the graph generator's emitters of the data-movement operators and Cast
 * (fuzz/gen.h): Concat, Slice, Split, Transpose, Reshape, Pad, Resize; attributes inside ONNX
 * (opset 17) validity rules, result shapes as onnx.ai's operator pages define them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/gen.h"

/* Concat of 2-3 tensors equal except along the axis (a tensor may repeat). */
bool gen_e_concat(gen *g) {
  int x = gen_pick(g, 2, 4);
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
  if (!gen_fits(t->nd, o)) return false;
  int y;
  ob_attr_i(g->b, gen_node1(g, "Concat", in, t->nd, o, &y), "axis", gen_chance(&g->r, 20) ? ax - t->nd : ax);
  gen_fam(g, GEN_FAM_concat);
  return true;
}

/* Slice on one or two axes: steps 1, 2 or -1, negative starts sometimes. */
bool gen_e_slice(gen *g) {
  int x = gen_pick(g, 2, 4);
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
  const char *in[] = {t->name, gen_ints(g, na, st), gen_ints(g, na, en), gen_ints(g, na, ax), gen_ints(g, na, sp), NULL};
  int y;
  gen_node1(g, "Slice", in, t->nd, o, &y);
  gen_fam(g, GEN_FAM_slice);
  return true;
}

/* Split along a non-batch axis into 2-3 parts of random sizes (the split input). */
bool gen_e_split(gen *g) {
  int x = gen_pick(g, 2, 4);
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
  const char *in[] = {t->name, gen_ints(g, k, sz), NULL};
  ob_attr_i(g->b, gen_node(g, "Split", in, k, out), "axis", ax);
  gen_fam(g, GEN_FAM_split);
  return true;
}

/* Transpose by a random non-identity permutation. */
bool gen_e_transpose(gen *g) {
  int x = gen_pick(g, 2, 4);
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
  ob_attr_ints(g->b, gen_node1(g, "Transpose", in, t->nd, o, &y), "perm", t->nd, perm);
  gen_fam(g, GEN_FAM_transpose);
  return true;
}

/* Reshape to a random factorization of the same size (0 and -1 entries), or Flatten. */
bool gen_e_reshape(gen *g) {
  int x = gen_pick(g, 2, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[3] = {t->name, NULL, NULL};
  if (gen_chance(&g->r, 30)) {
    int ax = gen_int(&g->r, 1, t->nd - 1);
    int64_t o[2] = {gen_elems(ax, t->d), gen_elems(t->nd - ax, t->d + ax)};
    ob_attr_i(g->b, gen_node1(g, "Flatten", in, 2, o, &y), "axis", ax);
    gen_fam(g, GEN_FAM_reshape);
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
  in[1] = gen_ints(g, nd, spec);
  gen_node1(g, "Reshape", in, nd, o, &y);
  gen_fam(g, GEN_FAM_reshape);
  return true;
}

/* Pad (constant with a value, reflect, edge) on H and W, constant also on C. */
bool gen_e_pad(gen *g) {
  int x = gen_pick(g, 4, 4);
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
  if (!gen_fits(4, o)) return false;
  const char *in[4] = {t->name, gen_ints(g, 8, p), NULL, NULL};
  if (mode == 0 && gen_chance(&g->r, 60)) in[2] = gen_scalar(g, gen_float(&g->r, -1, 1));
  int y;
  Onnx__NodeProto *n = gen_node1(g, "Pad", in, 4, o, &y);
  if (mode) ob_attr_s(g->b, n, "mode", modes[mode]);
  gen_fam(g, GEN_FAM_pad);
  return true;
}

/* Resize by scales (x2, x3, x0.5) or sizes; nearest or linear, several coordinate modes. */
bool gen_e_resize(gen *g) {
  int x = gen_pick(g, 4, 4);
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
  if (!gen_fits(4, o)) return false;
  const char *in[5] = {t->name, "", NULL, NULL, NULL};
  if (gen_chance(&g->r, 30)) {
    in[2] = "", in[3] = gen_ints(g, 4, o);
  } else {
    int64_t four = 4;
    in[2] = gen_fresh(g, "c");
    ob_init_f32(g->b, in[2], 1, &four, sc);
  }
  int y;
  Onnx__NodeProto *n = gen_node1(g, "Resize", in, 4, o, &y);
  static const char *ctm[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
  static const char *nm[] = {"round_prefer_floor", "floor", "round_prefer_ceil", "ceil"};
  ob_attr_s(g->b, n, "mode", lin ? "linear" : "nearest");
  int cm = gen_int(&g->r, 0, lin ? 3 : 1), nmode = gen_int(&g->r, 0, 3);
  if (plain) nmode = cm == 1 ? 1 : gen_chance(&g->r, 50) ? 0 : 2; /* the o / factor index maps */
  ob_attr_s(g->b, n, "coordinate_transformation_mode", ctm[cm]);
  if (!lin) ob_attr_s(g->b, n, "nearest_mode", nm[nmode]);
  gen_fam(g, lin ? GEN_FAM_resize_linear : GEN_FAM_resize_nearest);
  return true;
}

/* Cast float -> float (a no-op), or float -> float16 -> float (a rounding). */
bool gen_e_cast(gen *g) {
  int x = gen_pick(g, 1, 4), y;
  if (x < 0) return false;
  gen_tensor *t = &g->t[x];
  const char *in[] = {t->name, NULL};
  if (gen_chance(&g->r, 50)) {
    ob_attr_i(g->b, gen_node1(g, "Cast", in, t->nd, t->d, &y), "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  } else {
    int h = gen_new_tensor(g, t->nd, t->d);
    ob_attr_i(g->b, gen_node(g, "Cast", in, 1, &h), "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16);
    g->t[h].nd = 0; /* not a float tensor: no other reader may pick it */
    const char *in2[] = {g->t[h].name, NULL};
    g->t[h].uses++;
    y = gen_new_tensor(g, t->nd, t->d);
    ob_attr_i(g->b, ob_node(g->b, "Cast", gen_fresh(g, "n"), in2, (const char *const[]){g->t[y].name, NULL}), "to",
              ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  }
  gen_fam(g, GEN_FAM_cast);
  return true;
}
