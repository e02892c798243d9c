/* gen_ops.c: the graph generator's random streams, the node and initializer builders its
 * operator emitters share, and the step that draws an emitter (fuzz/gen.h). The emitters:
 * gen_ops_nn.c (MAC, elementwise, activation, pool, reduction, normalization) and
 * gen_ops_tensor.c (data movement, Cast). Each emitter draws attributes inside the operator's
 * ONNX (opset 17) validity rules, computes the result shape as onnx.ai's operator pages define
 * it, and adds the nodes. */
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

const char *gen_fresh(gen *g, const char *prefix) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s%d", prefix, g->n_names++);
  return ob_str(g->b, buf);
}

const char *gen_weight(gen *g, int nd, const int64_t *d, float a) {
  int64_t n = gen_elems(nd, d);
  float *v = ob_alloc(g->b, sizeof *v * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) v[i] = gen_float(&g->wr, -a, a);
  const char *name = gen_fresh(g, "w");
  ob_init_f32(g->b, name, nd, d, v);
  return name;
}

const char *gen_ints(gen *g, int n, const int64_t *v) {
  const char *name = gen_fresh(g, "k");
  ob_init_i64(g->b, name, n, v);
  return name;
}

const char *gen_scalar(gen *g, float v) {
  const char *name = gen_fresh(g, "s");
  ob_init_f32(g->b, name, 0, NULL, &v);
  return name;
}

/* A tensor of rank in [lo, hi]: half the time one of the three newest, else any. */
int gen_pick(gen *g, int lo, int hi) {
  int cand[GEN_MAX_T], n = 0;
  for (int i = 0; i < g->nt; i++)
    if (g->t[i].nd >= lo && g->t[i].nd <= hi) cand[n++] = i;
  if (!n) return -1;
  int k = gen_chance(&g->r, 50) ? gen_int(&g->r, n > 3 ? n - 3 : 0, n - 1) : gen_int(&g->r, 0, n - 1);
  return cand[k];
}

/* Adds node op reading in[] and writing a new tensor of shape (nd, d); the tensor index. */
Onnx__NodeProto *gen_node(gen *g, const char *op, const char *const *in, int nout, const int *out) {
  const char *outs[8] = {0};
  for (int i = 0; i < nout; i++) outs[i] = g->t[out[i]].name;
  for (int i = 0; in[i]; i++)
    for (int k = 0; k < g->nt; k++)
      if (!strcmp(g->t[k].name, in[i])) g->t[k].uses++;
  return ob_node(g->b, op, gen_fresh(g, "n"), in, outs);
}

Onnx__NodeProto *gen_node1(gen *g, const char *op, const char *const *in, int nd, const int64_t *d,
                       int *out) {
  *out = gen_new_tensor(g, nd, d);
  return gen_node(g, op, in, 1, out);
}

void gen_fam(gen *g, int f) { g->fams |= 1u << f; }

bool gen_fits(int nd, const int64_t *d) {
  for (int i = 0; i < nd; i++)
    if (d[i] < 1) return false;
  return gen_elems(nd, d) <= GEN_MAX_ELEMS;
}

bool gen_step(gen *g) {
  /* weights: how often each emitter is drawn */
  static bool (*const em[])(gen *) = {
      gen_e_conv,  gen_e_conv,   gen_e_convt,     gen_e_gemm,    gen_e_matmul,  gen_e_binary,    gen_e_binary,
      gen_e_act,   gen_e_act,    gen_e_pool,      gen_e_reduce,  gen_e_concat,  gen_e_slice,     gen_e_split,
      gen_e_transpose, gen_e_reshape, gen_e_pad,  gen_e_resize,  gen_e_softmax, gen_e_layernorm, gen_e_cast};
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
