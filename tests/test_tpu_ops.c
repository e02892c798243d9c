/* test_tpu_ops.c: the integer Tpu kernels against plain-C loops written here from the formulas
 * of docs/tpu.md: Conv with groups/pads/strides/zero points/per-channel requant/ReLU, depthwise
 * Conv, the MAC's sgemm path, ConvTranspose, ReduceMean, requant with clip, broadcast Add. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/workpool.h"
#include "compiler/lower.h"
#include "ir/text.h"
#include "ops/kernel.h"
#include "quant/quant.h"
#include "ptq/calibrate.h"
#include "reference/interp.h"
#include "tests/testutil.h"

/* Plain rounding right shift, ties toward +inf, as docs/quant.md defines it. */
static int64_t rsh(int64_t x, int s) { return s == 0 ? x : (int64_t)floor(((double)x + ldexp(1, s - 1)) / ldexp(1, s)); }

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static ct_value *val(ct_graph *g, const char *name, ct_dtype dt, int nd, const int64_t *shape, double scale, int32_t zp) {
  ct_value *v = ct_graph_add_value(g, name, dt, nd, shape);
  if (scale > 0) ck_assert(ct_value_set_quant(g, v, 1, &scale, &zp, 0));
  return v;
}

static ct_tensor *tensor_of(const ct_value *v, unsigned seed, int lo, int hi) {
  ct_tensor *t = ct_tensor_new(v->dtype, v->ndim, v->shape, v->name);
  srand(seed);
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) ct_tensor_set_f64(t, i, lo + rand() % (hi - lo + 1));
  return t;
}

/* A Tpu op's requant pairs: n multipliers m and right shifts s. */
static bool rq_attrs(ct_graph *g, ct_op *op, int n, const int64_t *m, const int64_t *s) {
  return ct_op_set_ints(g, op, "multiplier", n, m) && ct_op_set_ints(g, op, "rshift", n, s);
}

/* op's Tpu kernel run on `in` with `threads` threads (a pool of them when > 1) into a new
 * tensor of type dt and shape [nd] shape, returned. */
static ct_tensor *exec_on_threads(const ct_op *op, ct_tensor *const *in, ct_dtype dt, int nd, const int64_t *shape,
                                  int threads) {
  ct_tensor *y = ct_tensor_new(dt, nd, shape, "y");
  ct_workpool *pool = threads > 1 ? ct_workpool_new(threads) : NULL;
  ct_kernel_ctx ctx = {.threads = threads, .pool = pool};
  ct_diag d;
  ck_assert_msg(ct_tpu_exec(op, in, &y, &ctx, &d) == CT_OK, "%s", d.msg);
  ct_workpool_free(pool);
  return y;
}

/* Conv u8 [1,4,5,5] (zp 3), i8 weights [4,2,3,3] in 2 groups, i32 bias, pads 1, stride 2,
 * dilation 1, per-channel (m, s), ReLU, i8 output zp −2. */
START_TEST(test_conv_kernel_vs_loop) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t xs[] = {1, 4, 5, 5}, ws[] = {4, 2, 3, 3}, bs[] = {4}, ys[] = {1, 4, 3, 3};
  ct_value *x = val(g, "x", CT_U8, 4, xs, 0.1, 3), *w = val(g, "w", CT_I8, 4, ws, 0.01, 0), *b = val(g, "b", CT_I32, 1, bs, 0, 0);
  ct_value *y = val(g, "y", CT_I8, 4, ys, 0.05, -2);
  ct_value *ins[] = {x, w, b};
  ct_op *op = ct_graph_add_op(g, CT_OP_CONV, "conv", 3, ins, 1, &y);
  int64_t k[] = {3, 3}, st[] = {2, 2}, dl[] = {1, 1}, pads[] = {1, 1, 1, 1}, m[] = {1 << 30, 1500000000, 1234567890, 2000000000},
          s[] = {36, 37, 38, 36};
  ck_assert(ct_test_window_attrs(g, op, k, st, dl, pads) && ct_op_set_int(g, op, "group", 2) && rq_attrs(g, op, 4, m, s) &&
            ct_op_set_string(g, op, "act", "relu"));
  ct_tensor *tx = tensor_of(x, 1, 0, 255), *tw = tensor_of(w, 2, -127, 127), *tb = tensor_of(b, 3, -3000, 3000);
  ct_tensor *ty = ct_tensor_new(CT_I8, 4, ys, "y");
  ct_tensor *tin[] = {tx, tw, tb};
  ct_kernel_ctx ctx = {.threads = 1};
  ct_diag d;
  ck_assert_msg(ct_tpu_exec(op, tin, &ty, &ctx, &d) == CT_OK, "%s", d.msg);
  for (int oc = 0; oc < 4; oc++)
    for (int oh = 0; oh < 3; oh++)
      for (int ow = 0; ow < 3; ow++) {
        int64_t acc = ((int32_t *)tb->data)[oc];
        for (int c = 0; c < 2; c++)
          for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++) {
              int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw, ic = (oc / 2) * 2 + c;
              if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5) continue;
              acc += (int64_t)(((uint8_t *)tx->data)[(ic * 5 + ih) * 5 + iw] - 3) * ((int8_t *)tw->data)[((oc * 2 + c) * 3 + kh) * 3 + kw];
            }
        int64_t v = rsh(acc * m[oc], (int)s[oc]) - 2;
        v = clampi(v < -2 ? -2 : v, -128, 127); /* ReLU at the zero point, then saturate */
        ck_assert_int_eq(((int8_t *)ty->data)[(oc * 3 + oh) * 3 + ow], v);
      }
  ck_assert_int_eq(ty->n_scale, 1); /* the result carries its value's parameters */
  ct_tensor_free(tx), ct_tensor_free(tw), ct_tensor_free(tb), ct_tensor_free(ty);
  ct_graph_free(g);
}
END_TEST

/* Depthwise Conv (group = channels = 3) with stride 2, dilation 2, pads 2, per-channel
 * weight zero points absent, u8 input zp 3, against a loop: the kernel's zero-padded plane
 * and tap offsets must reproduce the bounds checks. */
START_TEST(test_dwconv_kernel_vs_loop) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t xs[] = {1, 3, 6, 6}, ws[] = {3, 1, 3, 3}, bs[] = {3}, ys[] = {1, 3, 3, 3};
  ct_value *x = val(g, "x", CT_U8, 4, xs, 0.1, 3), *w = val(g, "w", CT_I8, 4, ws, 0.01, 0), *b = val(g, "b", CT_I32, 1, bs, 0, 0);
  ct_value *y = val(g, "y", CT_I16, 4, ys, 0.05, 0);
  ct_value *ins[] = {x, w, b};
  ct_op *op = ct_graph_add_op(g, CT_OP_CONV, "dw", 3, ins, 1, &y);
  int64_t k[] = {3, 3}, st[] = {2, 2}, dl[] = {2, 2}, pads[] = {2, 2, 2, 2}, m[] = {1, 1, 1}, s[] = {0, 0, 0};
  ck_assert(ct_test_window_attrs(g, op, k, st, dl, pads) && ct_op_set_int(g, op, "group", 3) && rq_attrs(g, op, 3, m, s));
  ct_tensor *tx = tensor_of(x, 9, 0, 255), *tw = tensor_of(w, 10, -127, 127), *tb = tensor_of(b, 11, -3000, 3000);
  ct_tensor *ty = ct_tensor_new(CT_I16, 4, ys, "y");
  ct_tensor *tin[] = {tx, tw, tb};
  ct_kernel_ctx ctx = {.threads = 1};
  ct_diag d;
  ck_assert_msg(ct_tpu_exec(op, tin, &ty, &ctx, &d) == CT_OK, "%s", d.msg);
  for (int c = 0; c < 3; c++)
    for (int oh = 0; oh < 3; oh++)
      for (int ow = 0; ow < 3; ow++) {
        int64_t acc = ((int32_t *)tb->data)[c];
        for (int kh = 0; kh < 3; kh++)
          for (int kw = 0; kw < 3; kw++) {
            int ih = oh * 2 - 2 + kh * 2, iw = ow * 2 - 2 + kw * 2;
            if (ih < 0 || ih >= 6 || iw < 0 || iw >= 6) continue;
            acc += (int64_t)(((uint8_t *)tx->data)[(c * 6 + ih) * 6 + iw] - 3) * ((int8_t *)tw->data)[(c * 3 + kh) * 3 + kw];
          }
        ck_assert_int_eq(((int16_t *)ty->data)[(c * 3 + oh) * 3 + ow], clampi(acc, -32768, 32767));
      }
  ct_tensor_free(tx), ct_tensor_free(tw), ct_tensor_free(tb), ct_tensor_free(ty);
  ct_graph_free(g);
}
END_TEST

/* The sgemm paths of the integer Conv (≥ 8 output channels per group) and Gemm are exact: u8 inputs
 * near 255 (zp 0) and ±127 weights over K = 300·3·3 = 2700 terms — sums up to 8.7e7, far
 * beyond float32's 2^24 in the all-positive channels, so the kernel must chunk K (here by
 * 518) — against an int64 loop,
 * on an i32 result with (m, s) = (1, 0), i.e. the accumulator itself; 1 and 2 threads. */
START_TEST(test_mac_sgemm_exact) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t xs[] = {1, 300, 4, 4}, ws[] = {8, 300, 3, 3}, bs[] = {8}, ys[] = {1, 8, 2, 2};
  ct_value *x = val(g, "x", CT_U8, 4, xs, 0.1, 0), *w = val(g, "w", CT_I8, 4, ws, 0.01, 0), *b = val(g, "b", CT_I32, 1, bs, 0, 0);
  ct_value *y = val(g, "y", CT_I32, 4, ys, 0.001, 0);
  ct_value *ins[] = {x, w, b};
  ct_op *op = ct_graph_add_op(g, CT_OP_CONV, "conv", 3, ins, 1, &y);
  int64_t k[] = {3, 3}, one[] = {1, 1}, pads[] = {0, 0, 0, 0}, m[8], s[8];
  for (int i = 0; i < 8; i++) m[i] = 1, s[i] = 0;
  ck_assert(ct_test_window_attrs(g, op, k, one, one, pads) && rq_attrs(g, op, 8, m, s));
  ct_tensor *tx = tensor_of(x, 4, 200, 255), *tw = tensor_of(w, 5, -127, 127), *tb = tensor_of(b, 6, -1000, 1000);
  for (int64_t i = 0; i < ct_tensor_numel(tw); i++) /* channels 0..3 all +127 (no cancellation), 4..7 ±127 */
    ((int8_t *)tw->data)[i] = i < 4 * 2700 || ((int8_t *)tw->data)[i] >= 0 ? 127 : -127;
  for (int threads = 1; threads <= 2; threads++) {
    ct_tensor *tin[] = {tx, tw, tb};
    ct_tensor *ty = exec_on_threads(op, tin, CT_I32, 4, ys, threads);
    for (int oc = 0; oc < 8; oc++)
      for (int p = 0; p < 4; p++) {
        int64_t acc = ((int32_t *)tb->data)[oc];
        for (int c = 0; c < 300; c++)
          for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++)
              acc += (int64_t)((uint8_t *)tx->data)[(c * 4 + p / 2 + kh) * 4 + p % 2 + kw] * ((int8_t *)tw->data)[((oc * 300 + c) * 3 + kh) * 3 + kw];
        ck_assert_int_eq(((int32_t *)ty->data)[oc * 4 + p], acc);
      }
    ct_tensor_free(ty);
  }
  ct_tensor_free(tx), ct_tensor_free(tw), ct_tensor_free(tb);
  /* Gemm u8 [2, 2700] (zp 0) × i8 B [3, 2700] (transB, all +127): a raw i32 product, the
   * accumulator itself, through the same chunked sgemm */
  int64_t as[] = {2, 2700}, bs2[] = {3, 2700}, ys2[] = {2, 3};
  ct_value *a = val(g, "a", CT_U8, 2, as, 0.1, 0), *bm = val(g, "bm", CT_I8, 2, bs2, 0.01, 0);
  ct_value *y2 = val(g, "y2", CT_I32, 2, ys2, 0.001, 0), *gin[] = {a, bm};
  ct_op *gm = ct_graph_add_op(g, CT_OP_GEMM, "fc", 2, gin, 1, &y2);
  ck_assert(gm && ct_op_set_int(g, gm, "transB", 1));
  ct_tensor *ta = tensor_of(a, 7, 200, 255), *tbm = tensor_of(bm, 8, 127, 127), *ty2 = ct_tensor_new(CT_I32, 2, ys2, "y2");
  ct_tensor *gtin[] = {ta, tbm};
  ct_kernel_ctx ctx1 = {.threads = 1};
  ct_diag d1;
  ck_assert_msg(ct_tpu_exec(gm, gtin, &ty2, &ctx1, &d1) == CT_OK, "%s", d1.msg);
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 3; c++) {
      int64_t acc = 0;
      for (int k = 0; k < 2700; k++) acc += (int64_t)((uint8_t *)ta->data)[r * 2700 + k] * 127;
      ck_assert_int_eq(((int32_t *)ty2->data)[r * 3 + c], acc);
    }
  ct_tensor_free(ta), ct_tensor_free(tbm), ct_tensor_free(ty2);
  ct_graph_free(g);
}
END_TEST

/* One ConvTranspose case: x [2, C, H, W] of type xt (zp 1) in [xlo, xhi], weights [C, OC/G,
 * k, k] of type xt in [xlo, xhi], i32 bias, stride st, dilation dl, pads pb (begin) / pe (end),
 * one (m, s), u8 output (zp 7); checked on 1 and 2 threads against the gather form of the
 * ONNX definition: every output sums the taps with o = st·i − pb + dl·k. */
typedef struct convt_case {
  int64_t C, OC, G, H, W, k, st, dl, pb, pe;
  ct_dtype xt;
  int xlo, xhi;
} convt_case;

static int64_t convt_ref(const convt_case *c, const ct_tensor *tx, const ct_tensor *tw, const ct_tensor *tb, int64_t n,
                         int64_t oc, int64_t oh, int64_t ow) {
  int64_t cg = c->C / c->G, ocg = c->OC / c->G, acc = ((int32_t *)tb->data)[oc];
  for (int64_t ci = 0; ci < cg; ci++)
    for (int64_t ih = 0; ih < c->H; ih++)
      for (int64_t iw = 0; iw < c->W; iw++)
        for (int64_t kh = 0; kh < c->k; kh++)
          for (int64_t kw = 0; kw < c->k; kw++) {
            int64_t ch = oc / ocg * cg + ci;
            if (c->st * ih - c->pb + c->dl * kh != oh || c->st * iw - c->pb + c->dl * kw != ow) continue;
            acc += ((int64_t)ct_tensor_get_f64(tx, ((n * c->C + ch) * c->H + ih) * c->W + iw) - 1) *
                   (int64_t)ct_tensor_get_f64(tw, ((ch * ocg + oc % ocg) * c->k + kh) * c->k + kw);
          }
  return clampi(rsh(acc * 1518500250, 45) + 7, 0, 255);
}

static void convt_check(const convt_case *c) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t OH = (c->H - 1) * c->st - c->pb - c->pe + c->dl * (c->k - 1) + 1, OW = (c->W - 1) * c->st - c->pb - c->pe + c->dl * (c->k - 1) + 1;
  int64_t xs[] = {2, c->C, c->H, c->W}, ws[] = {c->C, c->OC / c->G, c->k, c->k}, bs[] = {c->OC}, ys[] = {2, c->OC, OH, OW};
  ct_value *x = val(g, "x", c->xt, 4, xs, 0.1, 1), *w = val(g, "w", c->xt, 4, ws, 0.01, 0), *b = val(g, "b", CT_I32, 1, bs, 0, 0);
  ct_value *y = val(g, "y", CT_U8, 4, ys, 0.02, 7);
  ct_value *ins[] = {x, w, b};
  ct_op *op = ct_graph_add_op(g, CT_OP_CONVTRANSPOSE, "ct", 3, ins, 1, &y);
  int64_t k[] = {c->k, c->k}, st[] = {c->st, c->st}, dl[] = {c->dl, c->dl}, pads[] = {c->pb, c->pb, c->pe, c->pe};
  int64_t m[] = {1518500250}, s[] = {45};
  ck_assert(ct_test_window_attrs(g, op, k, st, dl, pads) && rq_attrs(g, op, 1, m, s) && ct_op_set_int(g, op, "group", c->G));
  ct_tensor *tx = tensor_of(x, 6, c->xlo, c->xhi), *tw = tensor_of(w, 7, c->xlo, c->xhi), *tb = tensor_of(b, 8, -500, 500);
  ct_tensor *tin[] = {tx, tw, tb};
  for (int threads = 1; threads <= 2; threads++) {
    ct_tensor *ty = exec_on_threads(op, tin, CT_U8, 4, ys, threads);
    for (int64_t n = 0; n < 2; n++)
      for (int64_t oc = 0; oc < c->OC; oc++)
        for (int64_t oh = 0; oh < OH; oh++)
          for (int64_t ow = 0; ow < OW; ow++)
            ck_assert_msg(((uint8_t *)ty->data)[((n * c->OC + oc) * OH + oh) * OW + ow] == convt_ref(c, tx, tw, tb, n, oc, oh, ow),
                          "threads %d at (%lld, %lld, %lld, %lld)", threads, (long long)n, (long long)oc, (long long)oh, (long long)ow);
    ct_tensor_free(ty);
  }
  ct_tensor_free(tx), ct_tensor_free(tw), ct_tensor_free(tb);
  ct_graph_free(g);
}

/* The GEMM path (i8: one group; 2 groups of 20 output channels — more than one block of
 * channels —, dilation 2, asymmetric pads; rows split between blocks of input positions;
 * i16 operands whose sums need int64) and the direct loop (i16 operands of full range,
 * whose sums leave int32). */
START_TEST(test_convtranspose_kernel_vs_loop) {
  convt_case a = {.C = 2, .OC = 3, .G = 1, .H = 3, .W = 3, .k = 2, .st = 2, .dl = 1, .pb = 1, .pe = 0, .xt = CT_I8, .xlo = -128, .xhi = 127};
  convt_check(&a);
  convt_case b = {.C = 6, .OC = 40, .G = 2, .H = 5, .W = 7, .k = 3, .st = 2, .dl = 2, .pb = 2, .pe = 1, .xt = CT_I8, .xlo = -128, .xhi = 127};
  convt_check(&b);
  convt_case c = {.C = 4, .OC = 2, .G = 1, .H = 4, .W = 3, .k = 3, .st = 1, .dl = 1, .pb = 1, .pe = 1, .xt = CT_I16, .xlo = -32768, .xhi = 32767};
  convt_check(&c);
  c.xlo = -12000, c.xhi = 12000; /* the GEMM path with int64 sums: 9 taps of 4 products of 2^27 */
  convt_check(&c);
  /* 50 × 45 inputs: a block of 2048 input positions ends inside a row; int32 sums */
  convt_case e = {.C = 2, .OC = 3, .G = 1, .H = 50, .W = 45, .k = 3, .st = 2, .dl = 1, .pb = 1, .pe = 2, .xt = CT_I8, .xlo = -128, .xhi = 127};
  convt_check(&e);
}
END_TEST

/* Concat of three inputs along axis 1 and along axis 3 (short rows, many outer indices):
 * an i8 input with the output's scale and zero point (multiplier 2^30 >> 30: copied as it
 * is), a u8 one and an i16 one requantized; each element is
 * ct_quant_requant(x − zx, m, s, zy, i8), 1 and 2 threads. */
START_TEST(test_concat_kernel_vs_requant) {
  for (int axis = 1; axis <= 3; axis += 2) {
    ct_graph *g = ct_graph_new("t", "tpu");
    int64_t xs[3][4] = {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}, ys[4] = {2, 3, 4, 5};
    const ct_dtype dt[3] = {CT_I8, CT_U8, CT_I16};
    const int32_t zx[3] = {-3, 100, 7};
    ct_value *x[3];
    ys[axis] = 0;
    for (int i = 0; i < 3; i++) {
      xs[i][axis] = 1 + i;
      ys[axis] += xs[i][axis];
      char nm[8] = {'x', (char)('0' + i), 0};
      x[i] = val(g, nm, dt[i], 4, xs[i], 0.1 * (i + 1), zx[i]);
    }
    ct_value *y = val(g, "y", CT_I8, 4, ys, 0.1, -3);
    ct_op *op = ct_graph_add_op(g, CT_OP_CONCAT, "cat", 3, x, 1, &y);
    int64_t m[3] = {1 << 30, 1518500250, 1234567891}, s[3] = {30, 30, 33};
    ck_assert(rq_attrs(g, op, 3, m, s) && ct_op_set_int(g, op, "axis", axis));
    ct_tensor *tx[3];
    for (int i = 0; i < 3; i++) tx[i] = tensor_of(x[i], 20 + (unsigned)i, i == 1 ? 0 : -128, i == 2 ? 3000 : 127);
    for (int threads = 1; threads <= 2; threads++) {
      ct_tensor *ty = exec_on_threads(op, tx, CT_I8, 4, ys, threads);
      for (int64_t i = 0; i < ct_tensor_numel(ty); i++) {
        int64_t c[4], r = i;
        for (int k = 3; k >= 0; k--) c[k] = r % ys[k], r /= ys[k];
        int src = 0;
        while (c[axis] >= xs[src][axis]) c[axis] -= xs[src][axis], src++;
        int64_t xi = ((c[0] * xs[src][1] + c[1]) * xs[src][2] + c[2]) * xs[src][3] + c[3];
        int32_t want = ct_quant_requant((int32_t)ct_tensor_get_f64(tx[src], xi) - zx[src], (int32_t)m[src], (int)s[src], -3, CT_I8);
        ck_assert_msg(((int8_t *)ty->data)[i] == want, "axis %d threads %d at %lld", axis, threads, (long long)i);
      }
      ct_tensor_free(ty);
    }
    for (int i = 0; i < 3; i++) ct_tensor_free(tx[i]);
    ct_graph_free(g);
  }
}
END_TEST

/* The 8-bit LUT on i8 and u8 inputs [2, 3, 5, 7] and [1, 3, 300, 301] (planes that are not
 * whole 64-byte vectors; a per-tensor table over several 64 Ki blocks), one table and one per
 * channel, 1 and 2 threads: y = T[c][x − min(type)] (docs/isa.md LUT), every stored byte
 * reached. */
START_TEST(test_lut_kernel_vs_table) {
  const int64_t shapes[2][4] = {{2, 3, 5, 7}, {1, 3, 300, 301}};
  for (int sh = 0; sh < 2; sh++)
    for (int pc = 0; pc <= 1; pc++)
      for (int u = 0; u <= 1; u++)
        for (int threads = 1; threads <= 2; threads++) {
          ct_graph *g = ct_graph_new("t", "tpu");
          const int64_t *xs = shapes[sh];
          int64_t plane = xs[2] * xs[3], cnt = xs[0] * xs[1] * plane;
          ct_dtype xt = u ? CT_U8 : CT_I8;
          ct_value *x = val(g, "x", xt, 4, xs, 0.1, 0), *y = val(g, "y", CT_I8, 4, xs, 0.1, 0);
          ct_op *op = ct_graph_add_op(g, CT_OP_LUT, "lut", 1, &x, 1, &y);
          int64_t tab[3 * 256];
          for (int i = 0; i < 3 * 256; i++) tab[i] = (i * 37 + 11) % 256;
          ck_assert(ct_op_set_ints(g, op, "table", pc ? 3 * 256 : 256, tab));
          ct_tensor *tx = tensor_of(x, 9, u ? 0 : -128, u ? 255 : 127);
          ct_tensor *ty = exec_on_threads(op, &tx, CT_I8, 4, xs, threads);
          for (int64_t i = 0; i < cnt; i++) {
            int64_t v = (int64_t)ct_tensor_get_f64(tx, i) + (u ? 0 : 128), c = pc ? i / plane % 3 : 0;
            ck_assert_msg(((uint8_t *)ty->data)[i] == (uint8_t)tab[c * 256 + v], "shape %d pc %d u %d threads %d at %lld", sh,
                          pc, u, threads, (long long)i);
          }
          ct_tensor_free(tx), ct_tensor_free(ty);
          ct_graph_free(g);
        }
}
END_TEST

/* ReduceMean of u8 [2,3,4] (zp 9) over axis 1 into i8 (zp −3): Σ (x − zp) times the
 * pool multiplier, rounded, plus zp_y; checked against the formula and the real mean. */
START_TEST(test_reducemean_kernel_vs_loop) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t xs[] = {2, 3, 4}, ys[] = {2, 1, 4}, as[] = {1};
  ct_value *x = val(g, "x", CT_U8, 3, xs, 0.05, 9), *y = val(g, "y", CT_I8, 3, ys, 0.04, -3);
  ct_tensor *axes = ct_tensor_new(CT_I64, 1, as, "axes");
  ((int64_t *)axes->data)[0] = 1;
  ct_value *av = ct_graph_add_weight(g, NULL, axes);
  ct_value *ins[] = {x, av};
  ct_op *op = ct_graph_add_op(g, CT_OP_REDUCEMEAN, "rm", 2, ins, 1, &y);
  int32_t m;
  int sh;
  ck_assert(ct_quant_pool_params(0.05, 0.04, 3, &m, &sh));
  int64_t mv[] = {m}, sv[] = {sh};
  ck_assert(ct_op_set_ints(g, op, "multiplier", 1, mv) && ct_op_set_ints(g, op, "rshift", 1, sv));
  ct_tensor *tx = tensor_of(x, 9, 0, 255), *ty = ct_tensor_new(CT_I8, 3, ys, "y");
  ct_tensor *tin[] = {tx, axes};
  ct_kernel_ctx ctx = {.threads = 1};
  ct_diag d;
  ck_assert_msg(ct_tpu_exec(op, tin, &ty, &ctx, &d) == CT_OK, "%s", d.msg);
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < 4; i++) {
      int64_t sum = 0;
      for (int r = 0; r < 3; r++) sum += ((uint8_t *)tx->data)[(o * 3 + r) * 4 + i] - 9;
      int64_t want = clampi(rsh(sum * m, sh) - 3, -128, 127);
      ck_assert_int_eq(((int8_t *)ty->data)[o * 4 + i], want);
      double real = sum * 0.05 / 3;
      if (fabs(real) < 5) ck_assert_double_le(fabs((want + 3) * 0.04 - real), 0.021);
    }
  ct_tensor_free(tx), ct_tensor_free(ty);
  ct_graph_free(g);
}
END_TEST

/* Requant i8 (zp 2, s 0.1) → u8 (zp 4, s 0.05) with the clamp act at 60: every stored value
 * against sat(rshift_round((x − 2)·m, s) + 4) clamped to [4, 60]. */
START_TEST(test_requant_clip_vs_loop) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t xs[] = {256};
  ct_value *x = val(g, "x", CT_I8, 1, xs, 0.1, 2), *y = val(g, "y", CT_U8, 1, xs, 0.05, 4);
  ct_op *op = ct_graph_add_op(g, CT_OP_REQUANT, "rq", 1, &x, 1, &y);
  int32_t m;
  int sh;
  bool ident;
  ck_assert(ct_quant_rescale(0.1, 2, 0.05, 4, &m, &sh, &ident) && !ident);
  int64_t mv[] = {m}, sv[] = {sh};
  ck_assert(ct_op_set_ints(g, op, "multiplier", 1, mv) && ct_op_set_ints(g, op, "rshift", 1, sv) &&
            ct_op_set_string(g, op, "act", "clip") && ct_op_set_int(g, op, "qact_hi", 60));
  ct_tensor *tx = ct_tensor_new(CT_I8, 1, xs, "x"), *ty = ct_tensor_new(CT_U8, 1, xs, "y");
  for (int i = 0; i < 256; i++) ((int8_t *)tx->data)[i] = (int8_t)(i - 128);
  ct_kernel_ctx ctx = {.threads = 1};
  ct_diag d;
  ck_assert_msg(ct_tpu_exec(op, &tx, &ty, &ctx, &d) == CT_OK, "%s", d.msg);
  for (int i = 0; i < 256; i++) {
    int64_t v = rsh((int64_t)(i - 128 - 2) * m, sh) + 4;
    ck_assert_int_eq(((uint8_t *)ty->data)[i], clampi(v, 4, 60));
  }
  ck_assert_int_eq(((uint8_t *)ty->data)[128 + 2], 4);  /* real 0 → zp */
  ck_assert_int_eq(((uint8_t *)ty->data)[128 + 12], 24); /* real 1.0 → 4 + 20 */
  ct_tensor_free(tx), ct_tensor_free(ty);
  ct_graph_free(g);
}
END_TEST

/* Add i8 [2,3] (zp 1) + u8 [1,3] (zp 10) broadcast, u8 output: params from quant/, the
 * result checked against the ELTWISE formula written out here. */
START_TEST(test_add_broadcast_vs_loop) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t as[] = {2, 3}, bs[] = {1, 3};
  ct_value *a = val(g, "a", CT_I8, 2, as, 0.05, 1), *b = val(g, "b", CT_U8, 2, bs, 0.02, 10), *y = val(g, "y", CT_U8, 2, as, 0.06, 5);
  ct_value *ins[] = {a, b};
  ct_op *op = ct_graph_add_op(g, CT_OP_ADD, "add", 2, ins, 1, &y);
  ct_quant_elt p;
  ck_assert(ct_quant_eltwise_params(CT_QUANT_ELT_ADD, (ct_quant_param){0.05, 1, CT_I8}, (ct_quant_param){0.02, 10, CT_U8},
                                    (ct_quant_param){0.06, 5, CT_U8}, &p));
  int64_t mv[] = {p.m_a, p.m_b}, sv[] = {p.s_a, p.s_b, p.s_out};
  ck_assert(ct_op_set_ints(g, op, "multiplier", 2, mv) && ct_op_set_ints(g, op, "rshift", 3, sv));
  ct_tensor *ta = tensor_of(a, 4, -128, 127), *tb = tensor_of(b, 5, 0, 255), *ty = ct_tensor_new(CT_U8, 2, as, "y");
  ct_tensor *tin[] = {ta, tb};
  ct_kernel_ctx ctx = {.threads = 1};
  ct_diag d;
  ck_assert_msg(ct_tpu_exec(op, tin, &ty, &ctx, &d) == CT_OK, "%s", d.msg);
  for (int i = 0; i < 6; i++) {
    int64_t a2 = rsh((int64_t)(((int8_t *)ta->data)[i] - 1) * p.m_a, p.s_a);
    int64_t b2 = rsh((int64_t)(((uint8_t *)tb->data)[i % 3] - 10) * p.m_b, p.s_b);
    int64_t want = clampi(rsh(a2 + b2, p.s_out) + 5, 0, 255);
    ck_assert_int_eq(((uint8_t *)ty->data)[i], want);
    /* and it approximates the real sum within a step and a half */
    double real = (((int8_t *)ta->data)[i] - 1) * 0.05 + (((uint8_t *)tb->data)[i % 3] - 10) * 0.02;
    if (real > -0.3 && real < 250 * 0.06) ck_assert_double_le(fabs((want - 5) * 0.06 - real), 0.09);
  }
  ct_tensor_free(ta), ct_tensor_free(tb), ct_tensor_free(ty);
  ct_graph_free(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tpu_ops");
  TCase *tc = tcase_create("unit");
  tcase_add_test(tc, test_conv_kernel_vs_loop);
  tcase_add_test(tc, test_concat_kernel_vs_requant);
  tcase_add_test(tc, test_mac_sgemm_exact);
  tcase_add_test(tc, test_dwconv_kernel_vs_loop);
  tcase_add_test(tc, test_add_broadcast_vs_loop);
  tcase_add_test(tc, test_convtranspose_kernel_vs_loop);
  tcase_add_test(tc, test_lut_kernel_vs_table);
  tcase_add_test(tc, test_reducemean_kernel_vs_loop);
  tcase_add_test(tc, test_requant_clip_vs_loop);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
