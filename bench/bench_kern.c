/* bench_kern.c: wall time of the Conv reference kernel on the layer shapes of MobileNetV2
 * (224x224 input: the stem, the depthwise 3x3 stride 1/2 and the pointwise 1x1 layers of
 * torchvision's mobilenet_v2), grouped by path: im2col+GEMM, depthwise direct, 1x1 GEMM.
 * usage: bench_kern [RUNS] [THREADS]; prints "path ms" lines: median of RUNS of the process CPU time
 * (CLOCK_PROCESS_CPUTIME_ID, so that a loaded machine does not inflate it; all threads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "ops/shape.h"
#include "ops/kernel.h"

/* One layer: input channels, spatial size, output channels, kernel, stride, group. */
typedef struct layer {
  int c, hw, oc, k, s, g;
} layer;

/* torchvision mobilenet_v2 blocks (t, c, n, s) unrolled: expand 1x1, depthwise 3x3, project 1x1. */
static int mnv2_layers(layer *out) {
  static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int n = 0, c = 32, hw = 112;
  out[n++] = (layer){3, 224, 32, 3, 2, 1};
  for (int b = 0; b < 7; b++)
    for (int i = 0; i < cfg[b][2]; i++) {
      int s = i == 0 ? cfg[b][3] : 1, hid = c * cfg[b][0];
      if (cfg[b][0] != 1) out[n++] = (layer){c, hw, hid, 1, 1, 1};
      out[n++] = (layer){hid, hw, hid, 3, s, hid};
      hw = (hw + 2 - 3) / s + 1;
      out[n++] = (layer){hid, hw, cfg[b][1], 1, 1, 1};
      c = cfg[b][1];
    }
  out[n++] = (layer){320, 7, 1280, 1, 1, 1};
  return n;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Times one layer's kernel (ms, one run) with relu6 fused; -1 on error. */
static double time_layer(const layer *l, int threads) {
  ct_graph *g = ct_graph_new("b", "top");
  int64_t xs[4] = {1, l->c, l->hw, l->hw}, ws[4] = {l->oc, l->c / l->g, l->k, l->k}, bs[1] = {l->oc};
  ct_tensor *x = ct_tensor_new(CT_F32, 4, xs, NULL), *w = ct_tensor_new(CT_F32, 4, ws, NULL);
  ct_tensor *b = ct_tensor_new(CT_F32, 1, bs, NULL);
  int64_t nx = ct_tensor_numel(x), nw = ct_tensor_numel(w);
  for (int64_t i = 0; i < nx; i++) ((float *)x->data)[i] = (float)(i % 13) * 0.1f - 0.6f;
  for (int64_t i = 0; i < nw; i++) ((float *)w->data)[i] = (float)(i % 7) * 0.05f - 0.15f;
  ct_value *in[3] = {ct_graph_add_weight(g, "x", x), ct_graph_add_weight(g, "w", w), ct_graph_add_weight(g, "b", b)};
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, -1, NULL);
  ct_op *op = ct_graph_add_op(g, CT_OP_CONV, "conv", 3, in, 1, &y);
  int64_t pads[4] = {l->k / 2, l->k / 2, l->k / 2, l->k / 2}, st[2] = {l->s, l->s};
  ct_op_set_ints(g, op, "pads", 4, pads);
  ct_op_set_ints(g, op, "strides", 2, st);
  ct_op_set_int(g, op, "group", l->g);
  ct_op_set_string(g, op, "act", "relu6");
  ct_diag d;
  double ms = -1;
  if (ct_shape_fn_of(CT_OP_CONV)(g, op, &d) == CT_OK) {
    ct_tensor *out = ct_tensor_new(CT_F32, y->ndim, y->shape, NULL);
    ct_tensor *ins[3] = {in[0]->data, in[1]->data, in[2]->data};
    ct_kernel_ctx ctx = {.threads = threads};
    double t0 = now_ms();
    if (ct_kernel_of(CT_OP_CONV)(op, ins, &out, &ctx, &d) == CT_OK) ms = now_ms() - t0;
    ct_tensor_free(out);
  }
  if (ms < 0) fprintf(stderr, "bench_kern: %s\n", d.msg);
  ct_graph_free(g);
  return ms;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 5, threads = argc > 2 ? atoi(argv[2]) : 1;
  if (runs < 1 || runs > 1000 || threads < 1) {
    fprintf(stderr, "usage: bench_kern [RUNS] [THREADS]\n");
    return 2;
  }
  layer ls[64];
  int n = mnv2_layers(ls);
  static const char *const names[3] = {"stem im2col+gemm", "depthwise 3x3", "pointwise 1x1"};
  double *t = calloc((size_t)runs * 3, sizeof *t);
  for (int r = 0; r < runs; r++)
    for (int i = 0; i < n; i++) {
      int path = ls[i].g > 1 ? 1 : ls[i].k == 1 ? 2 : 0;
      double ms = time_layer(&ls[i], threads);
      if (ms < 0) return 1;
      t[path * runs + r] += ms;
    }
  double total = 0;
  for (int p = 0; p < 3; p++) {
    qsort(t + p * runs, (size_t)runs, sizeof *t, cmp_d);
    printf("%-20s %8.3f\n", names[p], t[p * runs + runs / 2]);
    total += t[p * runs + runs / 2];
  }
  printf("%-20s %8.3f\n", "total", total);
  free(t);
  return 0;
}
