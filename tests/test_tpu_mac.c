/* test_tpu_mac.c: the integer Conv kernel (ops/tpu_mac.c) against a plain int64 loop written
 * here from docs/tpu.md's formula, on shapes that reach each of its paths: depthwise with int32
 * sums (narrow) and int64 sums (i16 weights, a bias near the int32 limit), strides 1, 2 and 3,
 * dilations, asymmetric pads, per-channel weight zero points, the sgemm and dot-loop paths,
 * pointwise columns; i8 / u8 / i16 / i32 outputs, ReLU and clamp; 1 and 2 threads; MatMul
 * and Gemm (transB) on sgemm; the int16 GEMM (quant/igemm.c) itself, every micro-kernel. */
#include <stdlib.h>

#include "common/workpool.h"
#include "ops/kernel.h"
#include "quant/igemm.h"
#include "tests/testutil.h"

/* Rounding right shift, ties toward +inf (docs/quant.md), by exact floor division: s ≤ 62. */
static int64_t rsh(int64_t x, int s) {
  if (s == 0) return x;
  int64_t d = (int64_t)1 << s, q = x / d, r = x % d;
  if (r < 0) q--, r += d;
  return q + (2 * r >= d);
}

static int64_t type_min(ct_dtype dt) { return dt == CT_I8 ? -128 : dt == CT_I16 ? -32768 : dt == CT_I32 ? INT32_MIN : 0; }
static int64_t type_max(ct_dtype dt) {
  return dt == CT_I8 ? 127 : dt == CT_U8 ? 255 : dt == CT_I16 ? 32767 : dt == CT_U16 ? 65535 : INT32_MAX;
}

/* One Conv case: NCHW input [1, C, H, W] of type xt (zp zx, values in [xlo, xhi]), OIHW weights
 * [OC, C/G, k0, k1] of type wt in [wlo, whi] (per-channel zero points zw[o] = o % 3 − 1 when
 * pc), i32 bias in [blo, bhi], output type yt (zp zy), act 0 none / 1 relu / 2 clamp at hi,
 * requant (m[o], s) with m[o] = m0 − 7919·o. */
typedef struct conv_case {
  int64_t C, H, W, OC, G, k[2], st[2], dl[2], pads[4];
  ct_dtype xt, wt, yt;
  int32_t zx, zy, xlo, xhi, wlo, whi, blo, bhi, hi;
  bool pc;
  int act;
  int64_t m0, s;
} conv_case;

static int64_t out_size(int64_t in, int64_t k, int64_t st, int64_t dl, int64_t pb, int64_t pe) {
  return (in + pb + pe - dl * (k - 1) - 1) / st + 1;
}

static ct_tensor *filled_new(ct_dtype dt, int nd, const int64_t *shape, const char *name, unsigned seed, int64_t lo, int64_t hi) {
  ct_tensor *t = ct_tensor_new(dt, nd, shape, name);
  srand(seed);
  for (int64_t i = 0; i < ct_tensor_numel(t); i++)
    ct_tensor_set_f64(t, i, (double)(lo + (int64_t)(((double)rand() / RAND_MAX) * (double)(hi - lo))));
  return t;
}

static ct_tensor *filled(const ct_value *v, unsigned seed, int64_t lo, int64_t hi) {
  return filled_new(v->dtype, v->ndim, v->shape, v->name, seed, lo, hi);
}

/* The plain loop: y[o][oh][ow] = requant_act(b[o] + Σ (x − zx)·(w − zw[o])). */
static int64_t conv_ref(const conv_case *c, const ct_tensor *x, const ct_tensor *w, const ct_tensor *b, int64_t o,
                        int64_t oh, int64_t ow) {
  int64_t cg = c->C / c->G, acc = (int64_t)ct_tensor_get_f64(b, o), zw = c->pc ? o % 3 - 1 : 0;
  for (int64_t ci = 0; ci < cg; ci++)
    for (int64_t kh = 0; kh < c->k[0]; kh++)
      for (int64_t kw = 0; kw < c->k[1]; kw++) {
        int64_t ih = oh * c->st[0] - c->pads[0] + kh * c->dl[0], iw = ow * c->st[1] - c->pads[1] + kw * c->dl[1];
        if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
        int64_t xv = (int64_t)ct_tensor_get_f64(x, ((o / (c->OC / c->G) * cg + ci) * c->H + ih) * c->W + iw) - c->zx;
        acc += xv * ((int64_t)ct_tensor_get_f64(w, ((o * cg + ci) * c->k[0] + kh) * c->k[1] + kw) - zw);
      }
  int64_t v = rsh(acc * (c->m0 - 7919 * o), (int)c->s) + c->zy;
  if (c->act) v = v < c->zy ? c->zy : v;
  if (c->act == 2) v = v > c->hi ? c->hi : v;
  return v < type_min(c->yt) ? type_min(c->yt) : v > type_max(c->yt) ? type_max(c->yt) : v;
}

static void check_case(const conv_case *c) {
  ct_graph *g = ct_graph_new("t", "tpu");
  int64_t OH = out_size(c->H, c->k[0], c->st[0], c->dl[0], c->pads[0], c->pads[2]);
  int64_t OW = out_size(c->W, c->k[1], c->st[1], c->dl[1], c->pads[1], c->pads[3]);
  int64_t xs[] = {1, c->C, c->H, c->W}, ws[] = {c->OC, c->C / c->G, c->k[0], c->k[1]}, bs[] = {c->OC}, ys[] = {1, c->OC, OH, OW};
  ct_value *x = ct_graph_add_value(g, "x", c->xt, 4, xs), *w = ct_graph_add_value(g, "w", c->wt, 4, ws);
  ct_value *b = ct_graph_add_value(g, "b", CT_I32, 1, bs), *y = ct_graph_add_value(g, "y", c->yt, 4, ys);
  double one = 0.1, sw[64];
  int32_t zw[64];
  for (int64_t o = 0; o < c->OC; o++) sw[o] = 0.01, zw[o] = c->pc ? (int32_t)(o % 3 - 1) : 0;
  ck_assert(ct_value_set_quant(g, x, 1, &one, &c->zx, 0) && ct_value_set_quant(g, y, 1, &one, &c->zy, 0));
  ck_assert(ct_value_set_quant(g, w, c->pc ? (int)c->OC : 1, sw, zw, 0));
  ct_value *ins[] = {x, w, b};
  ct_op *op = ct_graph_add_op(g, CT_OP_CONV, "conv", 3, ins, 1, &y);
  int64_t m[64], s[64];
  for (int64_t o = 0; o < c->OC; o++) m[o] = c->m0 - 7919 * o, s[o] = c->s;
  ck_assert(ct_op_set_ints(g, op, "kernel_shape", 2, c->k) && ct_op_set_ints(g, op, "strides", 2, c->st) &&
            ct_op_set_ints(g, op, "dilations", 2, c->dl) && ct_op_set_ints(g, op, "pads", 4, c->pads) &&
            ct_op_set_int(g, op, "group", c->G) && ct_op_set_ints(g, op, "multiplier", (int)c->OC, m) &&
            ct_op_set_ints(g, op, "rshift", (int)c->OC, s) && ct_op_set_int(g, op, "qact_hi", c->hi) &&
            ct_op_set_string(g, op, "act", c->act == 0 ? "none" : c->act == 1 ? "relu" : "clip"));
  ct_tensor *tx = filled(x, 11, c->xlo, c->xhi), *tw = filled(w, 12, c->wlo, c->whi), *tb = filled(b, 13, c->blo, c->bhi);
  ct_tensor *tin[] = {tx, tw, tb};
  ct_kernel_memo memo = {0};
  for (int run = 0; run < 4; run++) { /* 1 and 2 threads; then with a memo: filled, then reused */
    int threads = 1 + run % 2;
    ct_tensor *ty = ct_tensor_new(c->yt, 4, ys, "y");
    ct_workpool *pool = threads > 1 ? ct_workpool_new(threads) : NULL;
    ct_kernel_ctx ctx = {.threads = threads, .pool = pool, .memo = run >= 2 ? &memo : NULL};
    ct_diag d;
    ck_assert_msg(ct_tpu_exec(op, tin, &ty, &ctx, &d) == CT_OK, "%s", d.msg);
    if (run >= 2) ck_assert_ptr_nonnull(memo.data);
    for (int64_t o = 0; o < c->OC; o++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++)
          ck_assert_msg((int64_t)ct_tensor_get_f64(ty, (o * OH + oh) * OW + ow) == conv_ref(c, tx, tw, tb, o, oh, ow),
                        "run %d, channel %lld, (%lld, %lld)", run, (long long)o, (long long)oh, (long long)ow);
    ct_tensor_free(ty), ct_workpool_free(pool);
  }
  if (memo.free_fn) memo.free_fn(memo.data);
  ct_tensor_free(tx), ct_tensor_free(tw), ct_tensor_free(tb);
  ct_graph_free(g);
}

/* Depthwise, int32 sums: 3×3 at strides 1 and 2 (the vectorized constant strides; rows long
 * enough for the AVX2 stride-2 kernel and its tail), dilations, asymmetric pads, odd planes,
 * per-channel weight zero points; u8 / i8 inputs. */
START_TEST(test_dw_narrow_vs_loop) {
  conv_case a = {.C = 5, .H = 9, .W = 11, .OC = 5, .G = 5, .k = {3, 3}, .st = {1, 1}, .dl = {1, 1}, .pads = {1, 0, 2, 1},
                 .xt = CT_U8, .wt = CT_I8, .yt = CT_I8, .zx = 7, .zy = -3, .xlo = 0, .xhi = 255, .wlo = -127, .whi = 127,
                 .blo = -30000, .bhi = 30000, .pc = true, .act = 1, .m0 = 1234567891, .s = 40};
  check_case(&a);
  conv_case b = a;
  b.st[0] = 2, b.st[1] = 2, b.dl[0] = 2, b.pads[0] = 2, b.pads[1] = 1, b.pads[2] = 0, b.pads[3] = 3;
  b.xt = CT_I8, b.zx = -5, b.xlo = -128, b.xhi = 127, b.yt = CT_U8, b.zy = 10, b.act = 2, b.hi = 200, b.H = 12, b.W = 13;
  check_case(&b);
  b.W = 45, b.dl[0] = 1; /* stride 2 over rows of 8-output vectors and a tail: taps paired along W */
  check_case(&b);
  b.dl[1] = 2, b.W = 38; /* dilated along W: every tap alone */
  check_case(&b);
  /* unit strides over a plane of several flat blocks, 5×3 taps, dilations, i16 outputs */
  conv_case c = {.C = 3, .H = 30, .W = 41, .OC = 3, .G = 3, .k = {5, 3}, .st = {1, 1}, .dl = {1, 3}, .pads = {2, 3, 1, 4},
                 .xt = CT_U8, .wt = CT_I8, .yt = CT_I16, .zx = 128, .zy = 5, .xlo = 0, .xhi = 255, .wlo = -127, .whi = 127,
                 .blo = -30000, .bhi = 30000, .pc = true, .act = 0, .m0 = 1234567891, .s = 34};
  check_case(&c);
  c.st[0] = 2, c.yt = CT_I8, c.s = 40; /* stride 2 in H only: the row loop at unit W stride */
  check_case(&c);
}
END_TEST

/* Depthwise, int64 sums: i16 weights of ±8000 (beyond dw_narrow's int16·2^15 bound) at
 * stride 3 with a 5×3 kernel, i16 in and out; then i8 weights with biases within 2000 of the
 * int32 limits, whose sums leave int32 (the i32 output is the saturated accumulator). */
START_TEST(test_dw_wide_vs_loop) {
  conv_case a = {.C = 4, .H = 14, .W = 17, .OC = 4, .G = 4, .k = {5, 3}, .st = {3, 3}, .dl = {1, 2}, .pads = {2, 1, 1, 2},
                 .xt = CT_I16, .wt = CT_I16, .yt = CT_I16, .zx = 0, .zy = 0, .xlo = -32768, .xhi = 32767, .wlo = -8000,
                 .whi = 8000, .blo = -(1 << 29), .bhi = 1 << 29, .pc = true, .act = 0, .m0 = 1518500250, .s = 45};
  check_case(&a);
  conv_case b = {.C = 6, .H = 7, .W = 9, .OC = 6, .G = 6, .k = {3, 3}, .st = {1, 2}, .dl = {1, 1}, .pads = {1, 1, 1, 1},
                 .xt = CT_I8, .wt = CT_I8, .yt = CT_I32, .zx = 0, .zy = 0, .xlo = -128, .xhi = 127, .wlo = -127, .whi = 127,
                 .blo = INT32_MAX - 2000, .bhi = INT32_MAX, .act = 0, .m0 = 1 + 7919 * 5, .s = 0};
  for (int64_t o = 0; o < 6; o++) b.m0 = 1 + 7919 * o, b.C = b.OC = b.G = o + 1, check_case(&b); /* m = 1 for the last channel */
  b.blo = INT32_MIN + 1, b.bhi = INT32_MIN + 2000, b.C = b.OC = b.G = 1, b.m0 = 1;
  check_case(&b);
}
END_TEST

/* Ordinary Convs: the sgemm path (2 groups of 8 output channels, strides, dilation, pads,
 * per-channel weight zero points, i16 output, ReLU; int32 sums, and int64 ones for biases at
 * the int32 limits, the i32 output the saturated accumulator where m = 1), the dot loop (5 output channels), and
 * pointwise columns on both (1×1, unit strides, no pads). */
START_TEST(test_conv_paths_vs_loop) {
  conv_case a = {.C = 6, .H = 10, .W = 9, .OC = 16, .G = 2, .k = {3, 3}, .st = {2, 1}, .dl = {1, 2}, .pads = {1, 2, 0, 1},
                 .xt = CT_U8, .wt = CT_I8, .yt = CT_I16, .zx = 4, .zy = 0, .xlo = 0, .xhi = 255, .wlo = -127, .whi = 127,
                 .blo = -100000, .bhi = 100000, .pc = true, .act = 1, .m0 = 2000000000, .s = 33};
  check_case(&a);
  conv_case b = a;
  b.OC = 5, b.G = 1, b.yt = CT_I8, b.zy = 3, b.act = 2, b.hi = 90, b.s = 41;
  check_case(&b);
  conv_case e = a; /* biases at the int32 limit: the sgemm path's sums must stay int64 */
  e.yt = CT_I32, e.act = 0, e.blo = INT32_MAX - 2000, e.bhi = INT32_MAX, e.m0 = 1 + 7919 * 15, e.s = 0;
  check_case(&e);
  e.blo = INT32_MIN + 1, e.bhi = INT32_MIN + 2000;
  check_case(&e);
  conv_case c = {.C = 7, .H = 5, .W = 3, .OC = 9, .G = 1, .k = {1, 1}, .st = {1, 1}, .dl = {1, 1}, .pads = {0, 0, 0, 0},
                 .xt = CT_I8, .wt = CT_I8, .yt = CT_U8, .zx = -2, .zy = 100, .xlo = -128, .xhi = 127, .wlo = -127,
                 .whi = 127, .blo = -5000, .bhi = 5000, .pc = false, .act = 0, .m0 = 1800000000, .s = 39};
  check_case(&c);
  c.OC = 3;
  check_case(&c);
  c.C = 10, c.OC = 6, c.G = 2; /* pointwise in two groups of 5 channels: the second group's pairs */
  check_case(&c);
  c.xt = CT_I16, c.xlo = -300, c.xhi = 300; /* i16 input: exact by the scanned bound, not by its type's */
  check_case(&c);
  /* many output columns (40 × 50): the column split, a partial last block, two groups of
   * 6 output channels (not a multiple of the 4-row micro-kernel) */
  conv_case f = {.C = 4, .H = 40, .W = 50, .OC = 12, .G = 2, .k = {3, 3}, .st = {1, 1}, .dl = {1, 1}, .pads = {1, 1, 1, 1},
                 .xt = CT_U8, .wt = CT_I8, .yt = CT_I8, .zx = 9, .zy = -4, .xlo = 0, .xhi = 255, .wlo = -127, .whi = 127,
                 .blo = -20000, .bhi = 20000, .pc = true, .act = 1, .m0 = 1900000000, .s = 37};
  check_case(&f);
  /* unit strides with an H dilation and asymmetric pads (im2col by whole planes), paired for
   * the int16 GEMM; then biases at the int32 limit: the same columns unpaired for sgemm */
  conv_case h = f;
  h.H = 9, h.W = 11, h.dl[0] = 2, h.pads[0] = 3, h.pads[1] = 0, h.pads[2] = 1, h.pads[3] = 2, h.k[1] = 2;
  check_case(&h);
  h.yt = CT_I32, h.act = 0, h.blo = INT32_MAX - 2000, h.bhi = INT32_MAX, h.m0 = 1 + 7919 * 11, h.s = 0;
  check_case(&h);
}
END_TEST

/* MatMul A [2, 5, 40] (i8, zp 3) × B [40, 30] (u8, per-column zero points) and Gemm with a constant B
 * stored [30, 40] (transB; run without a memo, filling one, and from it): the sgemm path (5·30·40
 * products), both B layouts, per-column
 * requant to i8 with ReLU, against an int64 loop. */
START_TEST(test_matmul_gemm_vs_loop) {
  for (int tb = 0; tb <= 1; tb++) {
    ct_graph *g = ct_graph_new("t", "tpu");
    int64_t as[] = {2, 5, 40}, bs[] = {40, 30}, bts[] = {30, 40}, ys[] = {2, 5, 30}, as2[] = {10, 40}, ys2[] = {10, 30};
    ct_tensor *tbm = filled_new(CT_U8, 2, tb ? bts : bs, "b", 22, 0, 255);
    ct_value *a = ct_graph_add_value(g, "a", CT_I8, tb ? 2 : 3, tb ? as2 : as);
    ct_value *b = tb ? ct_graph_add_weight(g, "b", ct_tensor_clone(tbm)) : ct_graph_add_value(g, "b", CT_U8, 2, bs);
    ct_value *y = ct_graph_add_value(g, "y", CT_I8, tb ? 2 : 3, tb ? ys2 : ys);
    double sc[30];
    int32_t zb[30], za = 3, zy = -4;
    int64_t m[30], s[30];
    for (int c = 0; c < 30; c++) sc[c] = 0.01, zb[c] = 120 + c, m[c] = 1500000000 + 1000 * c, s[c] = 40;
    ck_assert(ct_value_set_quant(g, a, 1, sc, &za, 0) && ct_value_set_quant(g, b, 30, sc, zb, tb ? 0 : 1) &&
              ct_value_set_quant(g, y, 1, sc, &zy, 0));
    ct_value *ins[] = {a, b};
    ct_op *op = ct_graph_add_op(g, tb ? CT_OP_GEMM : CT_OP_MATMUL, "mm", 2, ins, 1, &y);
    ck_assert(ct_op_set_ints(g, op, "multiplier", 30, m) && ct_op_set_ints(g, op, "rshift", 30, s) &&
              ct_op_set_string(g, op, "act", "relu") && (!tb || ct_op_set_int(g, op, "transB", 1)));
    ct_tensor *ta = filled(a, 21, -128, 127), *ty = ct_tensor_new(CT_I8, y->ndim, y->shape, "y");
    ct_tensor *tin[] = {ta, tbm};
    ct_kernel_memo memo = {0};
    for (int run = 0; run < 3; run++) { /* Gemm's constant B: without a memo, then filling it, then from it */
      ct_kernel_ctx ctx = {.threads = 1, .memo = run ? &memo : NULL};
      ct_diag d;
      ck_assert_msg(ct_tpu_exec(op, tin, &ty, &ctx, &d) == CT_OK, "%s", d.msg);
      ck_assert(!tb || !run || memo.data);
      for (int64_t r = 0; r < 10; r++)
        for (int64_t c = 0; c < 30; c++) {
          int64_t acc = 0;
          for (int64_t k = 0; k < 40; k++)
            acc += ((int64_t)ct_tensor_get_f64(ta, r * 40 + k) - za) *
                   ((int64_t)ct_tensor_get_f64(tbm, tb ? c * 40 + k : k * 30 + c) - zb[c]);
          int64_t v = rsh(acc * m[c], 40) + zy;
          v = v < zy ? zy : v > 127 ? 127 : v;
          ck_assert_msg((int64_t)ct_tensor_get_f64(ty, r * 30 + c) == v, "transB %d run %d (%lld, %lld)", tb, run, (long long)r,
                        (long long)c);
        }
    }
    if (memo.free_fn) memo.free_fn(memo.data);
    ct_tensor_free(ta), ct_tensor_free(tbm), ct_tensor_free(ty);
    ct_graph_free(g);
  }
}
END_TEST

/* ct_quant_igemm and ct_quant_igemm_paired (their AVX-512 VNNI, AVX2 and plain C micro-kernels,
 * those the CPU has) against an int64 triple loop:
 * shapes off the 4×16 tile and the 512-deep K block (odd K, one row, one column, several K
 * blocks), values spread over int16 and at its edges (−32768, 32767) with the largest K and
 * bias ct_quant_igemm_exact allows; and the bound itself: one more product or unit of bias is
 * refused. */
static void igemm_case(int64_t M, int64_t N, int64_t K, int32_t lo, int32_t hi, int32_t blo, int32_t bhi, unsigned seed) {
  int16_t *A = malloc(sizeof *A * (size_t)(M * K + 1)), *B = malloc(sizeof *B * (size_t)(K * N + 1));
  int32_t *bias = malloc(sizeof *bias * (size_t)M), *C = malloc(sizeof *C * (size_t)(M * N));
  srand(seed);
  for (int64_t i = 0; i < M * K; i++) A[i] = (int16_t)(rand() % 3 == 0 ? (rand() % 2 ? lo : hi) : lo + rand() % (hi - lo + 1));
  for (int64_t i = 0; i < K * N; i++) B[i] = (int16_t)(rand() % 3 == 0 ? (rand() % 2 ? lo : hi) : lo + rand() % (hi - lo + 1));
  for (int64_t m = 0; m < M; m++) bias[m] = (int32_t)(blo + (int64_t)(((double)rand() / RAND_MAX) * ((double)bhi - blo)));
  int64_t amax = lo < -hi ? -(int64_t)lo : hi, bm = blo < -bhi ? -(int64_t)blo : bhi;
  ck_assert_msg(ct_quant_igemm_exact(K, amax, amax, bm), "M %lld N %lld K %lld", (long long)M, (long long)N, (long long)K);
  int16_t *Bp = malloc(sizeof *Bp * (size_t)((K + 1) / 2 * 2 * N + 1));
  ct_quant_igemm_pair_rows(B, K, N, Bp);
  for (int simd = 0; simd <= 5; simd++) { /* 0..2 B row-major, 3..5 B paired */
    ct_quant_igemm_simd(simd % 3);
    if (simd < 3) ck_assert(ct_quant_igemm(M, N, K, A, K, B, N, bias, C, N));
    else ck_assert(ct_quant_igemm_paired(M, N, K, A, K, Bp, N, bias, C, N));
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        int64_t acc = bias[m];
        for (int64_t k = 0; k < K; k++) acc += (int64_t)A[m * K + k] * B[k * N + n];
        ck_assert_msg(C[m * N + n] == acc, "simd %d, %lldx%lldx%lld at (%lld, %lld): %d, want %lld", simd, (long long)M,
                      (long long)N, (long long)K, (long long)m, (long long)n, C[m * N + n], (long long)acc);
      }
  }
  ct_quant_igemm_simd(2);
  free(A), free(B), free(Bp), free(bias), free(C);
}

START_TEST(test_igemm_vs_loop) {
  /* the last three take the wide VNNI kernel (rows a multiple of 4, 32 paired columns and a
   * partial panel after them; K beyond one block of pairs so later blocks add into C) */
  int64_t shapes[][3] = {{1, 1, 1}, {4, 16, 2}, {5, 17, 3}, {3, 40, 27}, {13, 33, 513}, {9, 7, 1200}, {1, 100, 64}, {64, 1, 9},
                         {8, 70, 37}, {4, 64, 1100}, {12, 33, 5}};
  for (int i = 0; i < 11; i++) igemm_case(shapes[i][0], shapes[i][1], shapes[i][2], -255, 255, -100000, 100000, 31 + (unsigned)i);
  igemm_case(6, 20, 1, -32768, 32767, -(1 << 30) + 1, (1 << 30) - 1, 41); /* one product of 2^30 */
  igemm_case(6, 20, 2, -32767, 32767, -131069, 131069, 42); /* 2·32767² + 131069 = INT32_MAX */
  igemm_case(7, 19, 33025, -1, 1, -(INT32_MAX - 33025), INT32_MAX - 33025, 43);
  ck_assert(ct_quant_igemm_exact(2, 32767, 32767, 131069) && !ct_quant_igemm_exact(2, 32767, 32767, 131070));
  ck_assert(!ct_quant_igemm_exact(3, 32767, 32767, 0) && !ct_quant_igemm_exact(1, 32769, 1, 0));
  ck_assert(ct_quant_igemm_exact(1, 32768, 32768, (1 << 30) - 1) && !ct_quant_igemm_exact(1, 32768, 32768, 1 << 30));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("tpu_mac");
  TCase *tc = tcase_create("unit");
  tcase_add_test(tc, test_dw_narrow_vs_loop);
  tcase_add_test(tc, test_dw_wide_vs_loop);
  tcase_add_test(tc, test_conv_paths_vs_loop);
  tcase_add_test(tc, test_matmul_gemm_vs_loop);
  tcase_add_test(tc, test_igemm_vs_loop);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
