/* test_kern_nn.c: shape functions + float reference kernels of Conv, ConvTranspose, Gemm and
 * MatMul (the pools: test_kern_pool.c). Expected values are hand-derived (ONNX spec examples
 * worked by hand) or come from the naive direct loops written below, independent of
 * ops/nn_conv.c and ops/math_gemm.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kern_nn_harness.h"
#include "tests/testutil.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

/* ---- naive references ---- */

typedef struct cfg {
  int n, c, h, w, oc, kh, kw, g, sh, sw, dh, dw, pt, pl, pb, pr;
} cfg;

static int conv_out(int in, int k, int s, int dl, int p0, int p1) { return (in + p0 + p1 - dl * (k - 1) - 1) / s + 1; }

/* The obvious 7-nested-loop grouped, dilated, padded 2-D convolution (NCHW, OIHW). */
static void naive_conv(const cfg *k, const float *x, const float *w, const float *b, float *y) {
  int oh_n = conv_out(k->h, k->kh, k->sh, k->dh, k->pt, k->pb), ow_n = conv_out(k->w, k->kw, k->sw, k->dw, k->pl, k->pr);
  int cg = k->c / k->g, ocg = k->oc / k->g;
  for (int n = 0; n < k->n; n++)
    for (int oc = 0; oc < k->oc; oc++)
      for (int oh = 0; oh < oh_n; oh++)
        for (int ow = 0; ow < ow_n; ow++) {
          double acc = b ? b[oc] : 0;
          for (int ci = 0; ci < cg; ci++)
            for (int kh = 0; kh < k->kh; kh++)
              for (int kw = 0; kw < k->kw; kw++) {
                int ih = oh * k->sh - k->pt + kh * k->dh, iw = ow * k->sw - k->pl + kw * k->dw;
                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w) continue;
                int c = (oc / ocg) * cg + ci;
                acc += (double)x[((n * k->c + c) * k->h + ih) * k->w + iw] * w[((oc * cg + ci) * k->kh + kh) * k->kw + kw];
              }
          y[((n * k->oc + oc) * oh_n + oh) * ow_n + ow] = (float)acc;
        }
}

static void run_conv_case(const cfg *k, bool bias, bool one_d, int threads, const char *act) {
  uint32_t seed = 12345u + (uint32_t)(k->c * 31 + k->kh * 7 + k->g);
  ct_tensor *x = one_d ? knh_rand(3, SH(k->n, k->c, k->w), &seed) : knh_rand(4, SH(k->n, k->c, k->h, k->w), &seed);
  ct_tensor *w = one_d ? knh_rand(3, SH(k->oc, k->c / k->g, k->kw), &seed)
                       : knh_rand(4, SH(k->oc, k->c / k->g, k->kh, k->kw), &seed);
  ct_tensor *b = bias ? knh_rand(1, SH(k->oc), &seed) : NULL;
  ct_tensor *ins[3] = {x, w, b};
  knh *h = knh_new(CT_OP_CONV, 3, ins, 1);
  h->threads = threads;
  if (one_d) {
    knh_ints(h, "strides", 1, (long long)k->sw);
    knh_ints(h, "dilations", 1, (long long)k->dw);
    knh_ints(h, "pads", 2, (long long)k->pl, (long long)k->pr);
  } else {
    knh_ints(h, "strides", 2, (long long)k->sh, (long long)k->sw);
    knh_ints(h, "dilations", 2, (long long)k->dh, (long long)k->dw);
    knh_ints(h, "pads", 4, (long long)k->pt, (long long)k->pl, (long long)k->pb, (long long)k->pr);
  }
  knh_int(h, "group", k->g);
  if (act) knh_str(h, "act", act);
  if (act && strcmp(act, "leaky_relu") == 0) knh_float(h, "act_alpha", 0.1);
  if (act && strcmp(act, "clip") == 0) knh_float(h, "act_min", -0.2), knh_float(h, "act_max", 0.3);
  ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
  int oh = conv_out(k->h, k->kh, k->sh, k->dh, k->pt, k->pb), ow = conv_out(k->w, k->kw, k->sw, k->dw, k->pl, k->pr);
  int64_t nout = (int64_t)k->n * k->oc * oh * ow;
  float *want = malloc(sizeof *want * (size_t)nout);
  naive_conv(k, x->data, w->data, b ? b->data : NULL, want);
  for (int64_t i = 0; act && i < nout; i++) {
    if (strcmp(act, "clip") == 0) want[i] = want[i] < -0.2f ? -0.2f : want[i] > 0.3f ? 0.3f : want[i];
    if (strcmp(act, "relu6") == 0) want[i] = want[i] < 0 ? 0 : want[i] > 6 ? 6 : want[i];
    if (strcmp(act, "relu") == 0) want[i] = want[i] < 0 ? 0 : want[i];
    if (strcmp(act, "leaky_relu") == 0) want[i] = want[i] < 0 ? 0.1f * want[i] : want[i];
  }
  if (one_d) knh_expect_shape(h->out[0], 3, SH(k->n, k->oc, ow));
  else knh_expect_shape(h->out[0], 4, SH(k->n, k->oc, oh, ow));
  knh_expect_close(h->out[0], want, nout, 1e-5, 1e-4);
  free(want);
  knh_free(h);
  ct_tensor_free(x), ct_tensor_free(w), ct_tensor_free(b);
}

/* Every Conv path against the naive loop, on the AVX-512 GEMM (where the CPU has it) and on
 * OpenBLAS. */
START_TEST(test_conv_random_vs_naive) {
  static const cfg cases[] = {
      /* n  c  h  w  oc kh kw g sh sw dh dw pt pl pb pr */
      {2, 4, 7, 6, 5, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},  /* 1x1 stride 1: plain GEMM */
      {1, 4, 7, 6, 6, 1, 1, 2, 2, 2, 1, 1, 0, 0, 0, 0},  /* 1x1 stride 2, groups */
      {2, 3, 8, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* 3x3 pad 1 */
      {1, 4, 9, 9, 6, 3, 2, 2, 2, 1, 2, 1, 0, 1, 2, 0},  /* groups, dilation, asymmetric pads */
      {1, 6, 10, 9, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1}, /* depthwise 3x3 */
      {2, 5, 11, 8, 5, 3, 3, 5, 2, 2, 1, 1, 0, 1, 1, 0}, /* depthwise stride 2 asymmetric */
      {1, 3, 12, 12, 3, 5, 5, 3, 1, 2, 2, 2, 4, 3, 2, 1},/* depthwise 5x5 dilated */
      {1, 4, 9, 10, 4, 3, 3, 4, 1, 1, 2, 2, 2, 2, 2, 2},  /* depthwise 3x3 dilated, 9-tap path */
      {1, 4, 9, 11, 4, 3, 3, 4, 2, 2, 1, 2, 1, 2, 0, 1},  /* depthwise 3x3 stride 2 dilated W */
      {1, 3, 6, 7, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1},   /* depthwise stride 3 */
      {1, 4, 6, 6, 8, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1},  /* depth multiplier 2 (general path) */
      {1, 2, 5, 4, 3, 5, 4, 1, 3, 2, 1, 1, 2, 2, 2, 2},  /* kernel as large as the input */
      {1, 4, 110, 101, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* im2col in several column chunks */
      {1, 32, 64, 66, 32, 3, 3, 32, 1, 1, 1, 1, 1, 1, 1, 1}, /* depthwise big enough for 2 threads */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_conv_case(&cases[i], i % 2 == 0, false, 1, NULL);
    static const char *const acts[4] = {"relu6", "leaky_relu", "relu", "clip"};
    run_conv_case(&cases[i], true, false, 2, acts[i % 4]);
  }
  static const cfg one_d[] = {{2, 4, 1, 10, 5, 1, 3, 1, 1, 2, 1, 2, 0, 1, 0, 2}, {1, 4, 1, 9, 4, 1, 3, 4, 1, 1, 1, 1, 0, 1, 0, 1}};
  for (size_t i = 0; i < 2; i++) run_conv_case(&one_d[i], true, true, 1, NULL);
}
END_TEST

/* Conv with ctx->post (the interpreter's run-time fusion of an activation) gives bit for bit
 * what the activation op's own kernel gives on the plain Conv's result: on every Conv path
 * (1x1 direct GEMM, im2col in several chunks and row blocks, depthwise 9-tap, general and
 * strided), with and without a fused act, at 1 and 2 threads. */
START_TEST(test_conv_post_equals_conv_then_activation) {
  static const cfg cases[] = {
      /* n  c  h  w  oc kh kw g sh sw dh dw pt pl pb pr */
      {2, 4, 7, 6, 5, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},      /* 1x1 stride 1: direct GEMM, 42 columns */
      {1, 8, 110, 101, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* im2col chunks x row blocks */
      {1, 6, 10, 9, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1},     /* depthwise 3x3: 9-tap row */
      {2, 5, 11, 8, 5, 3, 3, 5, 2, 2, 1, 1, 0, 1, 1, 0},     /* depthwise stride 2, 7 columns */
      {1, 3, 12, 12, 3, 5, 5, 3, 1, 2, 2, 2, 4, 3, 2, 1},    /* depthwise 5x5 dilated */
  };
  static const ct_op_kind acts[] = {CT_OP_SILU, CT_OP_HARDSWISH, CT_OP_SIGMOID, CT_OP_HARDSIGMOID,
                                    CT_OP_LEAKYRELU, CT_OP_RELU};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (size_t a = 0; a < sizeof acts / sizeof *acts; a++) {
      const cfg *k = &cases[i];
      uint32_t seed = 777u + (uint32_t)(i * 7 + a);
      ct_tensor *x = knh_rand(4, SH(k->n, k->c, k->h, k->w), &seed);
      ct_tensor *w = knh_rand(4, SH(k->oc, k->c / k->g, k->kh, k->kw), &seed);
      ct_tensor *b = knh_rand(1, SH(k->oc), &seed), *ins[3] = {x, w, b};
      float *x0 = x->data;
      for (int64_t e = 0; e < ct_tensor_numel(x); e++) x0[e] *= 8; /* results well past the knees */
      knh *conv[2];
      for (int f = 0; f < 2; f++) { /* 0: plain, 1: with post */
        conv[f] = knh_new(CT_OP_CONV, 3, ins, 1);
        conv[f]->threads = 1 + (int)(a % 2);
        knh_ints(conv[f], "strides", 2, (long long)k->sh, (long long)k->sw);
        knh_ints(conv[f], "dilations", 2, (long long)k->dh, (long long)k->dw);
        knh_ints(conv[f], "pads", 4, (long long)k->pt, (long long)k->pl, (long long)k->pb, (long long)k->pr);
        knh_int(conv[f], "group", k->g);
        if (a == 2) knh_str(conv[f], "act", "relu6");
      }
      ck_assert_msg(knh_run(conv[0]) == CT_OK, "%s", conv[0]->d.msg);
      knh *act = knh_new(acts[a], 1, conv[0]->out, 1);
      if (acts[a] == CT_OP_LEAKYRELU) knh_float(act, "alpha", 0.3);
      if (acts[a] == CT_OP_HARDSIGMOID) knh_float(act, "alpha", 0.25), knh_float(act, "beta", 0.4);
      ck_assert_msg(knh_run(act) == CT_OK, "%s", act->d.msg);
      ct_kernel_post post;
      ck_assert(ct_kernel_unary_post(act->op, &post));
      conv[1]->post = &post;
      ck_assert_msg(knh_run(conv[1]) == CT_OK, "%s", conv[1]->d.msg);
      ck_assert_int_eq(conv[1]->out[0]->nbytes, act->out[0]->nbytes);
      ck_assert_msg(memcmp(conv[1]->out[0]->data, act->out[0]->data, act->out[0]->nbytes) == 0,
                    "case %zu act %zu: fused result differs", i, a);
      knh_free(conv[0]), knh_free(conv[1]), knh_free(act);
      ct_tensor_free(x), ct_tensor_free(w), ct_tensor_free(b);
    }
}
END_TEST

/* ONNX Conv spec example basic_conv_with_padding, worked by hand: x = 0..24 (5x5), w = ones 3x3. */
START_TEST(test_conv_hand_and_auto_pad) {
  float xv[25];
  for (int i = 0; i < 25; i++) xv[i] = (float)i;
  float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  ct_tensor *x = knh_vals(4, SH(1, 1, 5, 5), xv), *w = knh_vals(4, SH(1, 1, 3, 3), ones);
  ct_tensor *ins[2] = {x, w};
  knh *h = knh_new(CT_OP_CONV, 2, ins, 1);
  knh_ints(h, "pads", 4, 1LL, 1LL, 1LL, 1LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  static const float want[25] = {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81,
                                 93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
  knh_expect_close(h->out[0], want, 25, 0, 0);
  knh_free(h);
  /* SAME_LOWER stride 2 on 5x5: out 3, total pad 2 → [1,1,1,1] */
  h = knh_new(CT_OP_CONV, 2, ins, 1);
  knh_str(h, "auto_pad", "SAME_LOWER");
  knh_ints(h, "strides", 2, 2LL, 2LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  static const float want2[9] = {12, 27, 24, 63, 108, 81, 72, 117, 84};
  knh_expect_close(h->out[0], want2, 9, 0, 0);
  ck_assert_ptr_null(ct_op_attr(h->op, "auto_pad"));
  int n;
  const int64_t *k = ct_op_get_ints(h->op, "kernel_shape", &n);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(k[0], 3);
  knh_free(h);
  ct_tensor_free(x);
  /* 4x4, k3, s2: out 2, total pad 1: SAME_UPPER puts it at the end, SAME_LOWER at the start */
  x = knh_vals(4, SH(1, 1, 4, 4), xv);
  ins[0] = x;
  const char *modes[2] = {"SAME_UPPER", "SAME_LOWER"};
  static const int64_t pads[2][4] = {{0, 0, 1, 1}, {1, 1, 0, 0}};
  static const float want3[2][4] = {{0 + 1 + 2 + 4 + 5 + 6 + 8 + 9 + 10, 2 + 3 + 6 + 7 + 10 + 11, 8 + 9 + 10 + 12 + 13 + 14,
                                     10 + 11 + 14 + 15},
                                    {0 + 1 + 4 + 5, 1 + 2 + 3 + 5 + 6 + 7, 4 + 5 + 8 + 9 + 12 + 13, 5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15}};
  for (int m = 0; m < 2; m++) {
    h = knh_new(CT_OP_CONV, 2, ins, 1);
    knh_str(h, "auto_pad", modes[m]);
    knh_ints(h, "strides", 2, 2LL, 2LL);
    ck_assert_int_eq(knh_run(h), CT_OK);
    const int64_t *p = ct_op_get_ints(h->op, "pads", &n);
    ck_assert_int_eq(n, 4);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(p[i], pads[m][i]);
    knh_expect_close(h->out[0], want3[m], 4, 0, 0);
    knh_free(h);
  }
  ct_tensor_free(x), ct_tensor_free(w);
}
END_TEST

START_TEST(test_conv_shape_errors) {
  uint32_t seed = 7;
  ct_tensor *x = knh_rand(4, SH(1, 4, 5, 5), &seed), *w = knh_rand(4, SH(2, 3, 3, 3), &seed);
  ct_tensor *ins[2] = {x, w};
  knh *h = knh_new(CT_OP_CONV, 2, ins, 1);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "node \"n0\" (op Conv)"));
  ck_assert_ptr_nonnull(strstr(h->d.msg, "3 input channels"));
  knh_free(h);
  ct_tensor_free(w);
  w = knh_rand(4, SH(2, 4, 3, 3), &seed);
  ins[1] = w;
  h = knh_new(CT_OP_CONV, 2, ins, 1);
  knh_str(h, "act", "swish");
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "unsupported"));
  knh_free(h);
  h = knh_new(CT_OP_CONV, 2, ins, 1);
  knh_ints(h, "pads", 4, 0LL, 0LL, 0LL, 0LL);
  knh_ints(h, "strides", 2, 1LL, 1LL);
  knh_ints(h, "kernel_shape", 2, 9LL, 9LL);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  knh_free(h);
  ct_tensor_free(x), ct_tensor_free(w);
}
END_TEST

/* Naive ConvTranspose by scattering: y[oc][i*s - p + k*d] += x[c][i] * w[c][oc % ocg][k]. */
static void naive_convt(const cfg *k, int oh_n, int ow_n, const float *x, const float *w, const float *b, float *y) {
  int cg = k->c / k->g, ocg = k->oc / k->g;
  for (int i = 0; i < k->n * k->oc * oh_n * ow_n; i++) y[i] = b ? b[(i / (oh_n * ow_n)) % k->oc] : 0;
  for (int n = 0; n < k->n; n++)
    for (int c = 0; c < k->c; c++)
      for (int ih = 0; ih < k->h; ih++)
        for (int iw = 0; iw < k->w; iw++)
          for (int o = 0; o < ocg; o++)
            for (int kh = 0; kh < k->kh; kh++)
              for (int kw = 0; kw < k->kw; kw++) {
                int oh = ih * k->sh - k->pt + kh * k->dh, ow = iw * k->sw - k->pl + kw * k->dw;
                if (oh < 0 || oh >= oh_n || ow < 0 || ow >= ow_n) continue;
                int oc = (c / cg) * ocg + o;
                y[((n * k->oc + oc) * oh_n + oh) * ow_n + ow] +=
                    x[((n * k->c + c) * k->h + ih) * k->w + iw] * w[((c * ocg + o) * k->kh + kh) * k->kw + kw];
              }
}

START_TEST(test_convtranspose_random_vs_naive) {
  static const cfg cases[] = {
      {1, 2, 3, 4, 3, 3, 3, 1, 2, 2, 1, 1, 1, 0, 1, 0},
      {2, 4, 4, 3, 6, 3, 2, 2, 2, 3, 2, 1, 0, 1, 2, 0},
      {1, 3, 5, 5, 3, 2, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0},
      {1, 2, 100, 103, 3, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, /* GEMM in several column chunks */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const cfg *k = &cases[i];
    uint32_t seed = 99u + (uint32_t)i;
    ct_tensor *x = knh_rand(4, SH(k->n, k->c, k->h, k->w), &seed);
    ct_tensor *w = knh_rand(4, SH(k->c, k->oc / k->g, k->kh, k->kw), &seed), *b = knh_rand(1, SH(k->oc), &seed);
    ct_tensor *ins[3] = {x, w, b};
    knh *h = knh_new(CT_OP_CONVTRANSPOSE, 3, ins, 1);
    knh_ints(h, "strides", 2, (long long)k->sh, (long long)k->sw);
    knh_ints(h, "dilations", 2, (long long)k->dh, (long long)k->dw);
    knh_ints(h, "pads", 4, (long long)k->pt, (long long)k->pl, (long long)k->pb, (long long)k->pr);
    knh_ints(h, "output_padding", 2, (long long)(i == 0), 0LL);
    knh_int(h, "group", k->g);
    ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
    /* out = s (in - 1) + output_padding + (k - 1) d + 1 - pads */
    int oh = k->sh * (k->h - 1) + (i == 0) + (k->kh - 1) * k->dh + 1 - k->pt - k->pb;
    int ow = k->sw * (k->w - 1) + (k->kw - 1) * k->dw + 1 - k->pl - k->pr;
    knh_expect_shape(h->out[0], 4, SH(k->n, k->oc, oh, ow));
    float *want = malloc(sizeof *want * (size_t)(k->n * k->oc * oh * ow));
    naive_convt(k, oh, ow, x->data, w->data, b->data, want);
    knh_expect_close(h->out[0], want, k->n * k->oc * oh * ow, 1e-5, 1e-4);
    free(want);
    knh_free(h);
    ct_tensor_free(x), ct_tensor_free(w), ct_tensor_free(b);
  }
}
END_TEST

/* ONNX conformance convtranspose_autopad_same / _output_shape, worked by hand. */
START_TEST(test_convtranspose_same_and_output_shape) {
  float xv[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, wv[18];
  for (int i = 0; i < 18; i++) wv[i] = 1;
  ct_tensor *x = knh_vals(4, SH(1, 1, 3, 3), xv), *w = knh_vals(4, SH(1, 2, 3, 3), wv);
  ct_tensor *ins[2] = {x, w};
  knh *h = knh_new(CT_OP_CONVTRANSPOSE, 2, ins, 1);
  knh_str(h, "auto_pad", "SAME_UPPER");
  knh_ints(h, "strides", 2, 2LL, 2LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_shape(h->out[0], 4, SH(1, 2, 6, 6));
  /* natural 7x7, one row/col cropped at the end; row 0 = x[0][j] spread: 0 0 1 1 3 2 */
  static const float row0[6] = {0, 0, 1, 1, 3, 2}, row2[6] = {3, 3, 8, 5, 12, 7};
  const float *y = h->out[0]->data;
  for (int j = 0; j < 6; j++) ck_assert_float_eq(y[j], row0[j]);
  for (int j = 0; j < 6; j++) ck_assert_float_eq(y[12 + j], row2[j]);
  knh_free(h);
  h = knh_new(CT_OP_CONVTRANSPOSE, 2, ins, 1);
  knh_ints(h, "output_shape", 2, 10LL, 8LL);
  knh_ints(h, "strides", 2, 3LL, 2LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_shape(h->out[0], 4, SH(1, 2, 10, 8));
  y = h->out[0]->data;
  for (int j = 0; j < 8; j++) ck_assert_float_eq(y[9 * 8 + j], 0); /* last row: beyond the natural 9 rows */
  static const float r3[8] = {3, 3, 7, 4, 9, 5, 5, 0};
  for (int j = 0; j < 8; j++) ck_assert_float_eq(y[3 * 8 + j], r3[j]);
  knh_free(h);
  ct_tensor_free(x), ct_tensor_free(w);
}
END_TEST

START_TEST(test_gemm) {
  /* hand: [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]; alpha 2, beta 0.5, C = [10, 20] */
  ct_tensor *a = knh_vals(2, SH(2, 2), (const float[]){1, 2, 3, 4}), *b = knh_vals(2, SH(2, 2), (const float[]){5, 6, 7, 8});
  ct_tensor *c = knh_vals(1, SH(2), (const float[]){10, 20});
  ct_tensor *ins[3] = {a, b, c};
  knh *h = knh_new(CT_OP_GEMM, 3, ins, 1);
  knh_float(h, "alpha", 2), knh_float(h, "beta", 0.5);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){43, 54, 91, 110}, 4, 0, 0);
  knh_free(h);
  /* transA, transB, C as a column [M,1], scalar C, fused relu: against a naive triple loop */
  uint32_t seed = 5;
  ct_tensor *ra = knh_rand(2, SH(7, 3), &seed), *rb = knh_rand(2, SH(5, 7), &seed);
  ct_tensor *cs[3] = {knh_rand(2, SH(3, 1), &seed), knh_rand(0, NULL, &seed), knh_rand(2, SH(3, 5), &seed)};
  for (int v = 0; v < 3; v++) {
    ct_tensor *ins2[3] = {ra, rb, cs[v]};
    h = knh_new(CT_OP_GEMM, 3, ins2, 1);
    knh_int(h, "transA", 1), knh_int(h, "transB", 1), knh_float(h, "beta", 0.25);
    if (v == 2) knh_str(h, "act", "relu");
    ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
    float want[15];
    const float *A = ra->data, *B = rb->data, *C = cs[v]->data;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 5; j++) {
        double s = 0;
        for (int k = 0; k < 7; k++) s += (double)A[k * 3 + i] * B[j * 7 + k];
        s += 0.25 * (v == 0 ? C[i] : v == 1 ? C[0] : C[i * 5 + j]);
        want[i * 5 + j] = (float)(v == 2 && s < 0 ? 0 : s);
      }
    knh_expect_shape(h->out[0], 2, SH(3, 5));
    knh_expect_close(h->out[0], want, 15, 1e-6, 1e-5);
    knh_free(h);
  }
  ct_tensor *bad[3] = {ra, ra, NULL};
  h = knh_new(CT_OP_GEMM, 2, bad, 1);
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  knh_free(h);
  for (int v = 0; v < 3; v++) ct_tensor_free(cs[v]);
  ct_tensor_free(ra), ct_tensor_free(rb), ct_tensor_free(a), ct_tensor_free(b), ct_tensor_free(c);
}
END_TEST

/* Naive numpy-matmul: A and B given as full-rank shapes (1-D already expanded), batch broadcast. */
static void naive_matmul(const float *a, const int64_t *as, int an, const float *b, const int64_t *bs, int bn,
                         const int64_t *ys, int yn, float *y) {
  int64_t m = as[an - 2], k = as[an - 1], n = bs[bn - 1], batch = 1;
  for (int i = 0; i < yn - 2; i++) batch *= ys[i];
  for (int64_t t = 0; t < batch; t++) {
    int64_t rem = t, oa = 0, ob = 0, ma = 1, mb = 1;
    for (int i = yn - 3; i >= 0; i--) {
      int64_t ix = rem % ys[i];
      rem /= ys[i];
      int ia = i - (yn - an), ib = i - (yn - bn);
      if (ia >= 0) { oa += (as[ia] == 1 ? 0 : ix) * ma; ma *= as[ia]; }
      if (ib >= 0) { ob += (bs[ib] == 1 ? 0 : ix) * mb; mb *= bs[ib]; }
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t q = 0; q < k; q++) s += (double)a[oa * m * k + i * k + q] * b[ob * k * n + q * n + j];
        y[t * m * n + i * n + j] = (float)s;
      }
  }
}

START_TEST(test_matmul_broadcast_and_1d) {
  static const struct {
    int an, bn, yn;
    int64_t as[4], bs[4], ys[4];     /* as given to the op */
    int64_t ae[4], be[4], ye[4];     /* expanded for the naive loop */
    int aen, ben, yen;
  } cases[] = {
      {3, 2, 3, {2, 3, 4}, {4, 5}, {2, 3, 5}, {2, 3, 4}, {4, 5}, {2, 3, 5}, 3, 2, 3},
      {4, 3, 4, {2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}, {2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}, 4, 3, 4},
      {1, 3, 2, {4}, {2, 4, 3}, {2, 3}, {1, 4}, {2, 4, 3}, {2, 1, 3}, 2, 3, 3},
      {2, 1, 1, {3, 4}, {4}, {3}, {3, 4}, {4, 1}, {3, 1}, 2, 2, 2},
      {3, 3, 3, {1, 2, 3}, {4, 3, 2}, {4, 2, 2}, {1, 2, 3}, {4, 3, 2}, {4, 2, 2}, 3, 3, 3},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    uint32_t seed = 31u + (uint32_t)c;
    ct_tensor *a = knh_rand(cases[c].an, cases[c].as, &seed), *b = knh_rand(cases[c].bn, cases[c].bs, &seed);
    ct_tensor *ins[2] = {a, b};
    knh *h = knh_new(CT_OP_MATMUL, 2, ins, 1);
    ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
    knh_expect_shape(h->out[0], cases[c].yn, cases[c].ys);
    int64_t ny = ct_tensor_numel(h->out[0]);
    float *want = malloc(sizeof *want * (size_t)ny);
    naive_matmul(a->data, cases[c].ae, cases[c].aen, b->data, cases[c].be, cases[c].ben, cases[c].ye, cases[c].yen, want);
    knh_expect_close(h->out[0], want, ny, 1e-6, 1e-5);
    free(want);
    knh_free(h);
    ct_tensor_free(a), ct_tensor_free(b);
  }
}
END_TEST

/* 3-D: ones 1x1x3x3x3 input, ones 2x2x2 kernel, stride 1, no pads: every output sums 8 ones;
 * with pads 1 the corner output sees a single one. MaxPool 3-D 2x2x2 of 0..26 takes the
 * largest corner of each window. */
START_TEST(test_conv_and_pool_3d_hand) {
  float ones[27], ramp[27];
  for (int i = 0; i < 27; i++) ones[i] = 1, ramp[i] = (float)i;
  ct_tensor *x = knh_vals(5, SH(1, 1, 3, 3, 3), ones), *w = knh_vals(5, SH(1, 1, 2, 2, 2), ones);
  ct_tensor *ins[2] = {x, w};
  knh *h = knh_new(CT_OP_CONV, 2, ins, 1);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_shape(h->out[0], 5, SH(1, 1, 2, 2, 2));
  knh_expect_close(h->out[0], (const float[]){8, 8, 8, 8, 8, 8, 8, 8}, 8, 0, 0);
  knh_free(h);
  h = knh_new(CT_OP_CONV, 2, ins, 1);
  knh_ints(h, "pads", 6, 1LL, 1LL, 1LL, 1LL, 1LL, 1LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_shape(h->out[0], 5, SH(1, 1, 4, 4, 4));
  ck_assert_float_eq(((float *)h->out[0]->data)[0], 1);
  ck_assert_float_eq(((float *)h->out[0]->data)[1], 2);
  ck_assert_float_eq(((float *)h->out[0]->data)[21], 8);
  knh_free(h);
  ct_tensor *r = knh_vals(5, SH(1, 1, 3, 3, 3), ramp);
  ins[0] = r;
  h = knh_new(CT_OP_MAXPOOL, 1, ins, 1);
  knh_ints(h, "kernel_shape", 3, 2LL, 2LL, 2LL);
  ck_assert_int_eq(knh_run(h), CT_OK);
  knh_expect_close(h->out[0], (const float[]){13, 14, 16, 17, 22, 23, 25, 26}, 8, 0, 0);
  knh_free(h);
  ct_tensor_free(x), ct_tensor_free(w), ct_tensor_free(r);
}
END_TEST

/* float64 MatMul and Gemm go through dgemm: [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]. */
START_TEST(test_matmul_gemm_f64) {
  ct_tensor *a = ct_tensor_new(CT_F64, 2, SH(2, 2), NULL), *b = ct_tensor_new(CT_F64, 2, SH(2, 2), NULL);
  for (int i = 0; i < 4; i++) ((double *)a->data)[i] = i + 1, ((double *)b->data)[i] = i + 5;
  ct_tensor *ins[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    knh *h = knh_new(k ? CT_OP_GEMM : CT_OP_MATMUL, 2, ins, 1);
    ck_assert_msg(knh_run(h) == CT_OK, "%s", h->d.msg);
    ck_assert_int_eq(h->out[0]->dtype, CT_F64);
    static const double want[4] = {19, 22, 43, 50};
    for (int i = 0; i < 4; i++) ck_assert_double_eq(((double *)h->out[0]->data)[i], want[i]);
    knh_free(h);
  }
  ct_tensor_free(a), ct_tensor_free(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kern_nn");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_conv_random_vs_naive);
  tcase_add_test(tc, test_conv_post_equals_conv_then_activation);
  tcase_add_test(tc, test_conv_hand_and_auto_pad);
  tcase_add_test(tc, test_conv_shape_errors);
  tcase_add_test(tc, test_convtranspose_random_vs_naive);
  tcase_add_test(tc, test_convtranspose_same_and_output_shape);
  tcase_add_test(tc, test_gemm);
  tcase_add_test(tc, test_matmul_broadcast_and_1d);
  tcase_add_test(tc, test_conv_and_pool_3d_hand);
  tcase_add_test(tc, test_matmul_gemm_f64);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
