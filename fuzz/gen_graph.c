/* gen_graph.c: ctpu_gengraph, the random graph-and-chip case generator (fuzz/README.md).
 * `ctpu_gengraph --seed N -o DIR` writes a valid random ONNX model, test and calibration
 * inputs, a random chip and case.sh (the ctpu command lines) into DIR; the same seed and
 * options always give the same bytes. The reduction options shrink a case (fuzz/reduce.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/gen.h"

static void input_shape(gen *g, gen_input *in, int max_hw) {
  int r = gen_int(&g->r, 0, 99);
  if (r < 75) {
    int hw = max_hw < 16 ? max_hw : gen_chance(&g->r, 40) ? 8 : 16;
    in->nd = 4;
    in->d[0] = gen_chance(&g->r, 90) ? 1 : 2;
    in->d[1] = gen_chance(&g->r, 80) ? gen_int(&g->r, 1, 8) : gen_int(&g->r, 9, 32);
    in->d[2] = gen_int(&g->r, 1, hw);
    in->d[3] = gen_int(&g->r, 1, hw);
    while (gen_elems(4, in->d) > GEN_MAX_ELEMS / 2) in->d[1] = (in->d[1] + 1) / 2, in->d[2] = (in->d[2] + 1) / 2;
  } else if (r < 90) {
    in->nd = 2;
    in->d[0] = gen_int(&g->r, 1, 4);
    in->d[1] = gen_int(&g->r, 1, 64);
  } else {
    in->nd = 3;
    in->d[0] = 1;
    in->d[1] = gen_int(&g->r, 1, 16);
    in->d[2] = gen_int(&g->r, 1, 32);
  }
  in->positive = gen_chance(&g->r, 20);
}

/* --avoid-known: the graph input t is read by one Conv 1x1 (rank 4) or MatMul (else) only, so
 * no float border op, Slice, Softmax, Flatten ... reads an f32 graph input. */
static void stem(gen *g, int t) {
  gen_tensor *x = &g->t[t];
  int nd = x->nd;
  int64_t o[4], n = gen_int(&g->r, 1, 16);
  memcpy(o, x->d, sizeof o);
  const char *in[4] = {x->name, NULL, NULL, NULL};
  if (nd == 4) {
    int64_t wd[4] = {n, x->d[1], 1, 1};
    o[1] = n;
    in[1] = gen_weight(g, 4, wd, 1.0f);
    in[2] = gen_weight(g, 1, &n, 0.5f);
  } else {
    int64_t wd[2] = {x->d[nd - 1], n};
    o[nd - 1] = n;
    in[1] = gen_weight(g, 2, wd, 1.0f);
  }
  int y = gen_new_tensor(g, nd, o);
  const char *outs[] = {g->t[y].name, NULL};
  char nm[48];
  snprintf(nm, sizeof nm, "stem_%s", x->name);
  ob_node(g->b, nd == 4 ? "Conv" : "MatMul", nm, in, outs);
  g->t[y].mac = nd != 4;
  g->t[t].uses++;
  g->t[t].nd = -1; /* nobody else reads it */
}

/* Declares the graph inputs; an NHWC input is read through Transpose(0,3,1,2). */
static int make_inputs(gen *g, gen_input *ins, int max_hw) {
  int n = gen_chance(&g->r, 65) ? 1 : gen_chance(&g->r, 80) ? 2 : 3;
  for (int i = 0; i < n; i++) {
    gen_input *in = &ins[i];
    snprintf(in->name, sizeof in->name, "x%d", i);
    input_shape(g, in, max_hw);
    bool nhwc = in->nd == 4 && gen_chance(&g->r, 25) && !g->avoid_known;
    int64_t nchw[4];
    memcpy(nchw, in->d, sizeof nchw);
    if (nhwc) in->d[1] = nchw[2], in->d[2] = nchw[3], in->d[3] = nchw[1];
    ob_input(g->b, in->name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, in->nd, in->d);
    int t = gen_new_tensor(g, in->nd, nchw);
    g->t[t].input = true;
    if (!nhwc) {
      snprintf(g->t[t].name, sizeof g->t[t].name, "%s", in->name);
      if (g->avoid_known) stem(g, t);
      continue;
    }
    static const int64_t perm[4] = {0, 3, 1, 2};
    const char *tin[] = {in->name, NULL}, *tout[] = {g->t[t].name, NULL};
    ob_attr_ints(g->b, ob_node(g->b, "Transpose", in->name[1] == '0' ? "nhwc_in0" : in->name[1] == '1' ? "nhwc_in1" : "nhwc_in2", tin, tout), "perm", 4, perm);
    g->fams |= 1u << GEN_FAM_nhwc;
  }
  return n;
}

/* Graph outputs: every tensor nobody reads (or only candidate keep), sometimes an extra
 * intermediate one; a rank-4 output is sometimes given back as NHWC. */
static void make_outputs(gen *g, int keep) {
  int cand[GEN_MAX_T], n = 0;
  for (int i = 0; i < g->nt; i++)
    if (!g->t[i].uses && g->t[i].nd > 0 && !g->t[i].input) cand[n++] = i;
  if (gen_chance(&g->r, 15)) {
    int k = gen_int(&g->r, 0, g->nt - 1);
    if (g->t[k].uses && g->t[k].nd > 0 && !g->t[k].input) cand[n++] = k;
  }
  if (!n) cand[n++] = g->nt - 1;
  int outs = 0;
  for (int i = 0; i < n; i++) {
    bool nhwc = g->t[cand[i]].nd == 4 && gen_chance(&g->r, 20);
    if (keep >= 0 && i != keep && !(keep >= n && i == n - 1)) continue;
    int t = cand[i];
    if (nhwc) {
      static const int64_t perm[4] = {0, 2, 3, 1};
      gen_tensor *s = &g->t[t];
      int64_t d[4] = {s->d[0], s->d[2], s->d[3], s->d[1]};
      t = gen_new_tensor(g, 4, d);
      const char *tin[] = {g->t[cand[i]].name, NULL}, *tout[] = {g->t[t].name, NULL};
      char nm[24];
      snprintf(nm, sizeof nm, "nhwc_out%d", i);
      ob_attr_ints(g->b, ob_node(g->b, "Transpose", nm, tin, tout), "perm", 4, perm);
      g->fams |= 1u << GEN_FAM_nhwc;
    }
    ob_output(g->b, g->t[t].name);
    outs++;
  }
  (void)outs;
}

static bool in_list(char **l, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(l[i], s)) return true;
  return false;
}

/* Dead-code elimination: keeps the nodes, initializers and inputs the outputs depend on. */
static void prune(gen *g, gen_input *ins, int n_in) {
  ob_model *b = g->b;
  char *live[4 * OB_MAX * 4];
  size_t nl = 0, nn = 0, ni = 0, nx = 0;
  for (size_t i = 0; i < b->g.n_output; i++) live[nl++] = b->outputs[i]->name;
  bool keep[OB_MAX] = {0};
  for (size_t i = b->g.n_node; i-- > 0;) {
    Onnx__NodeProto *n = b->nodes[i];
    for (size_t o = 0; o < n->n_output && !keep[i]; o++) keep[i] = in_list(live, nl, n->output[o]);
    if (!keep[i]) continue;
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k][0]) live[nl++] = n->input[k];
  }
  g->fams = 0;
  for (size_t i = 0; i < b->g.n_node; i++)
    if (keep[i]) b->nodes[nn++] = b->nodes[i];
  b->g.n_node = nn;
  for (size_t i = 0; i < b->g.n_initializer; i++)
    if (in_list(live, nl, b->inits[i]->name)) b->inits[ni++] = b->inits[i];
  b->g.n_initializer = ni;
  for (size_t i = 0; i < b->g.n_input; i++) {
    ins[i].live = in_list(live, nl, b->inputs[i]->name);
    if (ins[i].live) b->inputs[nx++] = b->inputs[i];
  }
  b->g.n_input = nx;
  (void)n_in;
}

/* Recomputes the family set from the surviving nodes (after prune). */
static void families(gen *g) {
  static const struct { const char *op; int fam; } map[] = {
      {"ConvTranspose", GEN_FAM_convt}, {"Gemm", GEN_FAM_gemm}, {"MatMul", GEN_FAM_matmul},
      {"Add", GEN_FAM_binary}, {"Sub", GEN_FAM_binary}, {"Div", GEN_FAM_binary}, {"Max", GEN_FAM_binary},
      {"Min", GEN_FAM_binary}, {"Mul", GEN_FAM_binary}, {"Relu", GEN_FAM_act}, {"Clip", GEN_FAM_act},
      {"Sigmoid", GEN_FAM_act}, {"Tanh", GEN_FAM_act}, {"HardSwish", GEN_FAM_act},
      {"HardSigmoid", GEN_FAM_act}, {"LeakyRelu", GEN_FAM_act}, {"Elu", GEN_FAM_act},
      {"Softplus", GEN_FAM_act}, {"Exp", GEN_FAM_act}, {"MaxPool", GEN_FAM_pool},
      {"AveragePool", GEN_FAM_pool}, {"GlobalAveragePool", GEN_FAM_gap}, {"ReduceMean", GEN_FAM_reduce},
      {"Concat", GEN_FAM_concat}, {"Slice", GEN_FAM_slice}, {"Split", GEN_FAM_split},
      {"Flatten", GEN_FAM_reshape}, {"Reshape", GEN_FAM_reshape}, {"Pad", GEN_FAM_pad},
      {"Softmax", GEN_FAM_softmax}, {"LayerNormalization", GEN_FAM_layernorm}, {"Cast", GEN_FAM_cast}};
  for (size_t i = 0; i < g->b->g.n_node; i++) {
    Onnx__NodeProto *n = g->b->nodes[i];
    if (!strncmp(n->name, "nhwc", 4)) {
      g->fams |= 1u << GEN_FAM_nhwc;
    } else if (!strcmp(n->op_type, "Transpose")) {
      g->fams |= 1u << GEN_FAM_transpose;
    } else if (!strcmp(n->op_type, "Conv")) {
      int64_t grp = 1;
      for (size_t a = 0; a < n->n_attribute; a++)
        if (!strcmp(n->attribute[a]->name, "group")) grp = n->attribute[a]->i;
      g->fams |= 1u << (grp == 1 ? GEN_FAM_conv : GEN_FAM_gconv);
    } else if (!strcmp(n->op_type, "Resize")) {
      bool lin = false;
      for (size_t a = 0; a < n->n_attribute; a++)
        if (!strcmp(n->attribute[a]->name, "mode")) lin = n->attribute[a]->s.data[0] == 'l';
      g->fams |= 1u << (lin ? GEN_FAM_resize_linear : GEN_FAM_resize_nearest);
    } else {
      for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (!strcmp(n->op_type, map[k].op)) g->fams |= 1u << map[k].fam;
    }
  }
}

/* A depthwise Conv is told apart from a grouped one by its weight (C/group == 1). */
static void dw_families(gen *g) {
  for (size_t i = 0; i < g->b->g.n_node; i++) {
    Onnx__NodeProto *n = g->b->nodes[i];
    if (strcmp(n->op_type, "Conv")) continue;
    for (size_t k = 0; k < g->b->g.n_initializer; k++) {
      Onnx__TensorProto *w = g->b->inits[k];
      if (!strcmp(w->name, n->input[1]) && w->dims[1] == 1) {
        int64_t grp = 1;
        for (size_t a = 0; a < n->n_attribute; a++)
          if (!strcmp(n->attribute[a]->name, "group")) grp = n->attribute[a]->i;
        if (grp > 1) g->fams = (g->fams & ~(1u << GEN_FAM_gconv)) | 1u << GEN_FAM_dwconv;
      }
    }
  }
}

static bool write_input(const gen_input *in, gen_rng *vr, const char *path) {
  ob_model b;
  ob_init(&b, 17);
  Onnx__TensorProto *t = ob_tensor(&b, in->name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, in->nd, in->d);
  int64_t n = gen_elems(in->nd, in->d);
  float *v = ob_alloc(&b, sizeof *v * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) v[i] = in->positive ? gen_float(vr, 0, 1) : gen_float(vr, -2, 2);
  ob_raw(&b, t, v, sizeof *v * (size_t)n);
  bool ok = ob_write_tensor(t, path);
  ob_free(&b);
  return ok;
}

/* The test inputs x<i>.pb and cal/s<k>_x<i>.pb with cal/list.txt (one sample a line: the three
 * samples, then the test inputs). */
static bool write_inputs(const gen_opts *o, const gen_input *ins, int n_in) {
  gen_rng vr = {o->seed * 0x2545f4914f6cdd1dULL + 11};
  char path[4096];
  bool ok = true;
  for (int i = 0; i < n_in; i++) {
    snprintf(path, sizeof path, "%s/%s.pb", o->dir, ins[i].name);
    gen_rng r = {vr.s + (uint64_t)i * 977};
    if (ins[i].live) ok &= write_input(&ins[i], &r, path);
  }
  snprintf(path, sizeof path, "%s/cal/list.txt", o->dir);
  FILE *f = fopen(path, "w");
  if (!f) return false;
  for (int s = 0; s < 3; s++) {
    const char *sep = "";
    for (int i = 0; i < n_in; i++) {
      if (!ins[i].live) continue;
      snprintf(path, sizeof path, "%s/cal/s%d_%s.pb", o->dir, s, ins[i].name);
      gen_rng r = {vr.s + 7919 * (uint64_t)(s + 1) + (uint64_t)i * 977};
      ok &= write_input(&ins[i], &r, path);
      fprintf(f, "%ss%d_%s.pb", sep, s, ins[i].name);
      sep = ",";
    }
    fputc('\n', f);
  }
  /* the test input is a sample too: the Tpu-vs-Top cosine floor then judges the lowering, not
   * whether three random samples happened to cover the test input's range (a 1-element output
   * that was never negative in calibration is u8, and a negative test value becomes 0) */
  const char *sep = "";
  for (int i = 0; i < n_in; i++)
    if (ins[i].live) fprintf(f, "%s../%s.pb", sep, ins[i].name), sep = ",";
  fputc('\n', f);
  return fclose(f) == 0 && ok;
}

static int usage(void) {
  fprintf(stderr,
          "usage: ctpu_gengraph --seed N -o DIR [--max-steps K] [--keep-output I] [--chip-keep MASK]\n"
          "                     [--flags-keep MASK] [--max-hw H] [--avoid-known 0|1]\n");
  return 2;
}

static int parse(int argc, char **argv, gen_opts *o) {
  *o = (gen_opts){0, NULL, -1, -1, GEN_ALL, GEN_ALL, -1, false};
  bool seed = false;
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage();
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 0);
    bool num = !errno && *end == 0 && end != v;
    if (!strcmp(a, "-o")) o->dir = v;
    else if (!strcmp(a, "--seed") && num) o->seed = n, seed = true;
    else if (!strcmp(a, "--max-steps") && num) o->max_steps = (int)n;
    else if (!strcmp(a, "--keep-output") && num) o->keep_output = (int)n;
    else if (!strcmp(a, "--chip-keep") && num) o->chip_keep = (unsigned)n;
    else if (!strcmp(a, "--flags-keep") && num) o->flags_keep = (unsigned)n;
    else if (!strcmp(a, "--max-hw") && num && n >= 1) o->max_hw = (int)n;
    else if (!strcmp(a, "--avoid-known") && num) o->avoid_known = n != 0;
    else return usage();
  }
  return seed && o->dir ? 0 : usage();
}

int main(int argc, char **argv) {
  gen_opts o;
  if (parse(argc, argv, &o)) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/cal", o.dir);
  if ((mkdir(o.dir, 0777) && errno != EEXIST) || (mkdir(path, 0777) && errno != EEXIST)) {
    fprintf(stderr, "ctpu_gengraph: %s: cannot create the folder\n", o.dir);
    return 3;
  }
  static ob_model b;
  static gen g;
  ob_init(&b, 17);
  memset(&g, 0, sizeof g);
  g.b = &b;
  g.r.s = o.seed;
  g.wr.s = o.seed ^ 0x5bd1e9955bd1e995ULL;
  g.avoid_known = o.avoid_known;
  gen_input ins[GEN_MAX_IN];
  int n_in = make_inputs(&g, ins, o.max_hw > 0 ? o.max_hw : 16);
  int steps = gen_int(&g.r, 1, 10);
  if (o.max_steps >= 0 && steps > o.max_steps) steps = o.max_steps;
  for (int s = 0, tries = 0; s < steps && tries < 200; tries++)
    if (gen_step(&g)) s++;
  make_outputs(&g, o.keep_output);
  prune(&g, ins, n_in);
  families(&g);
  dw_families(&g);
  snprintf(path, sizeof path, "%s/m.onnx", o.dir);
  bool ok = ob_write(&b, path) && write_inputs(&o, ins, n_in) && gen_write_case(&o, &g, ins, n_in);
  ob_free(&b);
  if (!ok) fprintf(stderr, "ctpu_gengraph: %s: cannot write the case\n", o.dir);
  return ok ? 0 : 3;
}
