/* test_backend.c: unit tests of the back-end planner (compiler/backend): halos on
 * hand-computed convs, the DMA cost against docs/cmodel.md's worked examples, the pipeline
 * on a hand-computed schedule, the layers' LMEM tables against hand counts, DP against brute force over every partition of small chains, every plan through the independent checker (tests/lg_check.c),
 * the checker catching planted errors, the fit failure message, and `ctpu plan`. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"
#include "compiler/backend/cg_sched.h"
#include "compiler/backend/codegen.h"
#include "compiler/backend/lg_int.h"
#include "compiler/propagate.h"
#include "ir/attr.h"
#include "ir/text.h"
#include "tests/lg_check.h"
#include "tests/testutil.h"

/* A layer of a test chain: 'c' conv (oc, k, s, d, p), 'p' max pool (k, s, p), 'r' relu. */
typedef struct spec {
  char kind;
  int64_t oc, k, s, d, p;
} spec;

static ct_value *add_conv(ct_graph *g, ct_value *x, int64_t ic, const spec *sp, int i) {
  int64_t ws[4] = {sp->oc, ic, sp->k, sp->k};
  ct_tensor *w = ct_tensor_new(CT_F32, 4, ws, NULL);
  ck_assert_ptr_nonnull(w);
  char name[32];
  snprintf(name, sizeof name, "w%d", i);
  ct_value *wv = ct_graph_add_weight(g, name, w);
  snprintf(name, sizeof name, "y%d", i);
  ct_value *y = ct_graph_add_value(g, name, CT_F32, -1, NULL);
  ct_value *in[2] = {x, wv};
  snprintf(name, sizeof name, "conv%d", i);
  ct_op *op = ct_graph_add_op(g, CT_OP_CONV, name, 2, in, 1, &y);
  int64_t k[2] = {sp->k, sp->k}, s[2] = {sp->s, sp->s}, d[2] = {sp->d, sp->d}, p[4] = {sp->p, sp->p, sp->p, sp->p};
  ck_assert(ct_op_set_ints(g, op, "kernel_shape", 2, k) && ct_op_set_ints(g, op, "strides", 2, s) &&
            ct_op_set_ints(g, op, "dilations", 2, d) && ct_op_set_ints(g, op, "pads", 4, p));
  return y;
}

static ct_value *add_simple(ct_graph *g, ct_value *x, const spec *sp, int i) {
  char name[32];
  snprintf(name, sizeof name, "y%d", i);
  ct_value *y = ct_graph_add_value(g, name, CT_F32, -1, NULL);
  snprintf(name, sizeof name, "%s%d", sp->kind == 'p' ? "pool" : "relu", i);
  ct_op *op = ct_graph_add_op(g, sp->kind == 'p' ? CT_OP_MAXPOOL : CT_OP_RELU, name, 1, &x, 1, &y);
  if (sp->kind == 'p') {
    int64_t k[2] = {sp->k, sp->k}, s[2] = {sp->s, sp->s}, p[4] = {sp->p, sp->p, sp->p, sp->p};
    ck_assert(ct_op_set_ints(g, op, "kernel_shape", 2, k) && ct_op_set_ints(g, op, "strides", 2, s) &&
              ct_op_set_ints(g, op, "pads", 4, p));
  }
  return y;
}

/* Input 1×c×h×w then the layers of sp; shapes by the Top shape functions. */
static ct_graph *chain(int64_t c, int64_t h, int64_t w, const spec *sp, int n) {
  ct_graph *g = ct_graph_new("chain", "top");
  int64_t sh[4] = {1, c, h, w};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 4, sh);
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x));
  for (int i = 0; i < n; i++) {
    x = sp[i].kind == 'c' ? add_conv(g, x, c, &sp[i], i) : add_simple(g, x, &sp[i], i);
    if (sp[i].kind == 'c') c = sp[i].oc;
  }
  ck_assert(ct_graph_set_outputs(g, 1, &x));
  ct_diag d;
  ck_assert_msg(ct_top_propagate(g, &d) == CT_OK, "%s", d.msg);
  return g;
}

static ct_chip chip_with(int64_t lmem, int64_t banks) {
  ct_chip c;
  ct_chip_default(&c);
  c.lmem_bytes = lmem, c.lmem_banks = banks;
  return c;
}

START_TEST(test_halo_rows_hand) {
  int64_t lo, hi;
  ct_lg_halo_rows(0, 4, 3, 1, 1, 1, 8, &lo, &hi); /* 3x3 s1 p1: rows -1..4 → [0, 5) */
  ck_assert(lo == 0 && hi == 5);
  ct_lg_halo_rows(4, 8, 3, 1, 1, 1, 8, &lo, &hi); /* rows 3..8 → [3, 8) */
  ck_assert(lo == 3 && hi == 8);
  ct_lg_halo_rows(2, 4, 3, 2, 1, 1, 8, &lo, &hi); /* s2: 2·2−1 = 3 .. 3·2−1+2 = 7 */
  ck_assert(lo == 3 && hi == 8);
  ct_lg_halo_rows(0, 2, 3, 1, 2, 2, 10, &lo, &hi); /* dilation 2, pad 2: −2 .. 1−2+4 = 3 */
  ck_assert(lo == 0 && hi == 4);
  ct_lg_halo_rows(5, 6, 7, 2, 1, 3, 100, &lo, &hi); /* 7x7 s2 p3: 7 .. 13 */
  ck_assert(lo == 7 && hi == 14);
}
END_TEST

/* Two 3x3 convs (s1 p1 then s2 p1) on 16 rows, 4 tiles of the 8 output rows: tile 1 (rows
 * 2..3) needs rows 3..7 of the middle value (2·2−1 .. 3·2−1+2) and rows 2..8 of x. */
START_TEST(test_halo_chain) {
  spec sp[2] = {{'c', 8, 3, 1, 1, 1}, {'c', 8, 3, 2, 1, 1}};
  ct_graph *g = chain(4, 16, 16, sp, 2);
  ct_chip c = chip_with(1 << 20, 16);
  ct_lg_options o = {.strategy = CT_LG_DP, .assume_bytes = 1};
  lg_ctx x;
  ct_diag d;
  ck_assert(ct_lg_ctx_init(&x, g, &c, &o, &d) == CT_OK);
  ck_assert_int_eq(x.n_layers, 2);
  ck_assert(ct_lg_group_legal(&x, 0, 2));
  lg_tiling tl = {2, 1, 4, true};
  ct_lg_tile_ranges(&x, 0, 2, &tl, 1);
  const lg_rng *m = &x.rng[ct_graph_find_value(g, "y0")->id], *in = &x.rng[ct_graph_find_value(g, "x")->id];
  ck_assert_int_eq(m->lo, 3); ck_assert_int_eq(m->hi, 8);
  ck_assert_int_eq(in->lo, 2); ck_assert_int_eq(in->hi, 9);
  ct_lg_tile_ranges(&x, 0, 2, &tl, 3); /* last tile: output rows 6..7 → y0 rows 11..15 → x 10..15 */
  ck_assert_int_eq(m->lo, 11); ck_assert_int_eq(m->hi, 16);
  ck_assert_int_eq(in->lo, 10); ck_assert_int_eq(in->hi, 16);
  ct_lg_ctx_free(&x);
  ct_graph_free(g);
}
END_TEST

/* A layer's LMEM needs as the planner reserves and the codegen lays them out (lg_reserve.c),
 * against hand counts: an int8 Conv with 16 output channels has 16 (multiplier, shift) pairs
 * = 128 bytes; a per-channel 16-bit Lut over 3 channels 3 × 257 int16 = 1542; a ConvTranspose
 * k = 2, C = 4, OC = 3: Q = 12 pairs (96 → 128 aligned), biases at 128 (48 → 64), weights at
 * 192, 12 × 4 i8 = 48 → 240 → 256; a LayerNormalization over the last 10 without B: 40. */
START_TEST(test_layer_tables) {
  static const char *text =
      "module @m {\n  %0 = tpu.Input() : tensor<1x4x5x5xi8 !quant<0.1, 0>> loc(\"x\")\n"
      "  %1 = tpu.Weight() : tensor<16x4x1x1xi8 !quant<0.1, 0>> loc(\"w\")\n"
      "  %2 = tpu.Conv(%0, %1, %none) {group = 1} : tensor<1x16x5x5xi8 !quant<0.2, 0>> loc(\"conv\")\n"
      "  %3 = tpu.Input() : tensor<1x3x2x2xi16 !quant<0.001, 0>> loc(\"x16\")\n"
      "  %4 = tpu.Lut(%3) : tensor<1x3x2x2xi8 !quant<0.1, 0>> loc(\"lut\")\n"
      "  %5 = tpu.Weight() : tensor<4x3x2x2xi8 !quant<0.1, 0>> loc(\"wt\")\n"
      "  %6 = tpu.ConvTranspose(%0, %5, %none) : tensor<1x3x10x10xi8 !quant<0.2, 0>> loc(\"convt\")\n"
      "  %7 = tpu.Input() : tensor<2x10xbf16> loc(\"xf\")\n  %8 = tpu.Weight() : tensor<10xf32> loc(\"s\")\n"
      "  %9 = tpu.LayerNormalization(%7, %8) {axis = -1} : tensor<2x10xbf16> loc(\"ln\")\n"
      "  return %2, %4, %6, %9 : tensor<1x16x5x5xi8 !quant<0.2, 0>>, tensor<1x3x2x2xi8 !quant<0.1, 0>>, "
      "tensor<1x3x10x10xi8 !quant<0.2, 0>>, tensor<2x10xbf16>\n}\n";
  ct_graph *g;
  ct_diag d;
  ck_assert_msg(ct_ir_parse(text, strlen(text), "t.tpu", &g, &d) == CT_OK, "%s", d.msg);
  int64_t tab[3 * 257];
  for (int i = 0; i < 3 * 257; i++) tab[i] = i % 100;
  ck_assert(ct_attr_set_lut_table(g, ct_graph_find_value(g, "lut")->def, 3 * 257, tab));
  static const struct {
    const char *name;
    lg_table_kind kind;
    int64_t bytes, entries, bias_off, weights_off;
  } want[] = {{"conv", LG_TABLE_RQ, 128, 16, 0, 0},
              {"lut", LG_TABLE_LUT, 1542, 771, 0, 0},
              {"convt", LG_TABLE_CONVT, 256, 12, 128, 192},
              {"ln", LG_TABLE_ZERO_B, 40, 10, 0, 0}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    lg_table t;
    ct_lg_layer_table(ct_graph_find_value(g, want[i].name)->def, &t);
    ck_assert_msg(t.kind == want[i].kind && t.bytes == want[i].bytes && t.entries == want[i].entries &&
                      t.bias_off == want[i].bias_off && t.weights_off == want[i].weights_off,
                  "%s: kind %d, %lld bytes, %lld entries, offsets %lld %lld", want[i].name, (int)t.kind, (long long)t.bytes,
                  (long long)t.entries, (long long)t.bias_off, (long long)t.weights_off);
  }
  ct_graph_free(g);
}
END_TEST

/* docs/cmodel.md: a dense 1000-byte LOAD moves 1024 bytes in 132 cycles; 10 rows of 10
 * bytes out of rows of 100 move 10 × 64 bytes in 120 cycles. */
START_TEST(test_dma_cost) {
  ct_chip c;
  ct_chip_default(&c);
  int64_t m, cy, s1[1] = {1000}, s2[2] = {10, 100}, t2[2] = {10, 10};
  ct_lg_dma_cost(&c, 1, s1, s1, 1, &m, &cy);
  ck_assert_int_eq(m, 1024); ck_assert_int_eq(cy, 132);
  ct_lg_dma_cost(&c, 2, s2, t2, 1, &m, &cy);
  ck_assert_int_eq(m, 640); ck_assert_int_eq(cy, 120);
}
END_TEST

/* 3 tiles, load 10, compute 20, store 5: steps 10, 20, 20, 20, 5 = 75; serial 105. */
START_TEST(test_pipeline_hand) {
  int64_t ld[3] = {10, 10, 10}, cp[3] = {20, 20, 20}, st[3] = {5, 5, 5};
  ck_assert_int_eq(ct_lg_pipeline_cycles(3, ld, cp, st, 0, true), 75);
  ck_assert_int_eq(ct_lg_pipeline_cycles(3, ld, cp, st, 7, false), 112);
  int64_t ld2[2] = {50, 5}, cp2[2] = {10, 10}, st2[2] = {1, 40};
  ck_assert_int_eq(ct_lg_pipeline_cycles(2, ld2, cp2, st2, 0, true), 50 + 10 + 10 + 40);
  /* overlapping compute: a tile's compute 100 alone, 60 more per tile beside the previous one;
   * 4 tiles: 10 + 4 · 60 + 10, and the last tile's 100 − 60 once = 300 */
  ct_chip c;
  ct_chip_default(&c);
  lg_tilecost tc[3] = {{.ld = 10, .ldd = 10, .cp = 100, .per = 60, .st = 10}};
  tc[1] = tc[2] = tc[0];
  ck_assert_int_eq(ct_lg_pipeline_typed(&c, 4, 4, tc, 0, true, false), 300);
  /* a tile's compute (930 alone, period 508) holds its IN copy from its start to its end:
   * tile t + 2's LOAD (356) waits for it, so two steps take at least 356 + 930 = 2 · 643.
   * 4 tiles: 356 (load 0) + 3 · 643 + 508 (compute 3, store 2: 10) + 10 + (930 − 508) = 3225 */
  lg_tilecost th[3] = {{.ld = 356, .ldd = 356, .cp = 930, .per = 508, .hold_in = 930, .hold_out = 0, .st = 10}};
  th[1] = th[2] = th[0];
  ck_assert_int_eq(ct_lg_pipeline_typed(&c, 4, 4, th, 0, true, false), 3225);
}
END_TEST

static ct_lg_plan *plan_or_fail(const ct_graph *g, const ct_chip *c, ct_lg_strategy s) {
  ct_lg_options o = {.strategy = s, .assume_bytes = 1};
  ct_lg_plan *p = NULL;
  ct_diag d;
  ck_assert_msg(ct_lg_plan_graph(g, c, &o, &p, &d) == CT_OK, "%s", d.msg);
  char msg[256];
  ck_assert_msg(lg_check_plan(p, msg, sizeof msg), "%s: %s", ct_lg_strategy_name(s), msg);
  return p;
}

/* Minimum over every partition of the chain into contiguous groups (bit i set = a group
 * ends after layer i) of the sum of the best tilings' cycles; -1 if none is feasible. */
static int64_t brute_force(const ct_graph *g, const ct_chip *c) {
  ct_lg_options o = {.strategy = CT_LG_DP, .assume_bytes = 1};
  lg_ctx x;
  ct_diag d;
  ck_assert(ct_lg_ctx_init(&x, g, c, &o, &d) == CT_OK);
  int L = x.n_layers;
  int64_t best = -1;
  for (unsigned m = 0; m < (1u << (L - 1)); m++) {
    int64_t sum = 0;
    int first = 0;
    for (int i = 0; i < L && sum >= 0; i++) {
      if (i < L - 1 && !((m >> i) & 1)) continue;
      ct_lg_group gr;
      int64_t need;
      if (!ct_lg_group_legal(&x, first, i - first + 1) || !ct_lg_best_tiling(&x, first, i - first + 1, &gr, false, &need))
        sum = -1;
      else sum += gr.cycles;
      first = i + 1;
    }
    if (sum >= 0 && (best < 0 || sum < best)) best = sum;
  }
  ct_lg_ctx_free(&x);
  return best;
}

static const spec chains[][7] = {
    {{'c', 16, 3, 1, 1, 1}, {'r', 0, 0, 0, 0, 0}, {'c', 32, 3, 2, 1, 1}, {'r', 0, 0, 0, 0, 0}, {'p', 0, 2, 2, 0, 0}, {'c', 32, 1, 1, 1, 0}, {'r', 0, 0, 0, 0, 0}},
    {{'c', 64, 3, 1, 1, 1}, {'c', 64, 3, 1, 2, 2}, {'c', 8, 1, 1, 1, 0}, {'p', 0, 3, 1, 0, 1}, {'r', 0, 0, 0, 0, 0},
     {'c', 128, 3, 2, 1, 1}, {'r', 0, 0, 0, 0, 0}},
    {{'c', 8, 7, 2, 1, 3}, {'p', 0, 3, 2, 0, 1}, {'c', 16, 3, 1, 1, 1}, {'r', 0, 0, 0, 0, 0}, {'c', 16, 1, 1, 1, 0}, {'r', 0, 0, 0, 0, 0},
     {'c', 4, 5, 1, 1, 2}},
};

/* What the partition strategies minimize: the sum of the estimates of the plan's groups as
 * the strategies evaluate them (ct_lg_best_tiling without keeping buffers, before the
 * cross-group prefetch takes hidden resident loads off; the kept plan's buffers spread over
 * banks can change a streamed group's estimate). */
static int64_t partition_cycles(const ct_graph *g, const ct_chip *c, const ct_lg_plan *p) {
  ct_lg_options o = {.strategy = CT_LG_DP, .assume_bytes = 1};
  lg_ctx x;
  ct_diag d;
  ck_assert(ct_lg_ctx_init(&x, g, c, &o, &d) == CT_OK);
  int64_t s = 0, kept = 0;
  for (int k = 0; k < p->n_groups; k++) {
    ct_lg_group gr;
    int64_t need;
    ck_assert(ct_lg_best_tiling(&x, p->groups[k].first, p->groups[k].n_layers, &gr, false, &need));
    s += gr.cycles, kept += p->groups[k].cycles;
    free(gr.bufs);
  }
  ct_lg_ctx_free(&x);
  ck_assert_int_eq(p->total_cycles, kept);
  return s;
}

START_TEST(test_dp_vs_brute_force) {
  static const int64_t lmems[] = {64 << 10, 256 << 10, 1 << 20}, banks[] = {4, 16, 8};
  for (int ci = 0; ci < 3; ci++)
    for (int li = 0; li < 3; li++) {
      ct_graph *g = chain(3 + 13 * ci, 64 + 32 * ci, 48, chains[ci], 7);
      ct_chip c = chip_with(lmems[li], banks[li]);
      int64_t bf = brute_force(g, &c);
      ct_lg_plan *dp = plan_or_fail(g, &c, CT_LG_DP), *none = plan_or_fail(g, &c, CT_LG_NONE),
                 *gr = plan_or_fail(g, &c, CT_LG_GREEDY);
      int64_t pdp = partition_cycles(g, &c, dp), pnone = partition_cycles(g, &c, none), pgr = partition_cycles(g, &c, gr);
      ck_assert_int_eq(pdp, bf);
      ck_assert_int_le(pdp, pnone);
      ck_assert_int_le(pdp, pgr);
      ck_assert_int_le(pgr, pnone); /* greedy only takes groups that save */
      ct_lg_plan_free(plan_or_fail(g, &c, CT_LG_LONGEST));
      ct_lg_plan_free(dp), ct_lg_plan_free(none), ct_lg_plan_free(gr);
      ct_graph_free(g);
    }
}
END_TEST

/* The checker is able to fail: overlapping live buffers, a shared bank between engines, a
 * too-small halo buffer, overlapping live GMEM are each reported. */
START_TEST(test_checker_detects) {
  spec sp[4] = {{'c', 16, 3, 1, 1, 1}, {'r', 0, 0, 0, 0, 0}, {'c', 16, 3, 1, 1, 1}, {'r', 0, 0, 0, 0, 0}};
  ct_graph *g = chain(8, 128, 64, sp, 4);
  ct_chip c = chip_with(128 << 10, 16);
  ct_lg_plan *p = plan_or_fail(g, &c, CT_LG_DP);
  char msg[256];
  int gi = -1;
  for (int k = 0; k < p->n_groups; k++)
    if (p->groups[k].pipelined && p->groups[k].axis == 2 && p->groups[k].n_bufs >= 3) gi = k;
  ck_assert_msg(gi >= 0, "expected a pipelined H-tiled group");
  ct_lg_group *gr = &p->groups[gi];
  ct_lg_buffer save = gr->bufs[1];
  gr->bufs[1].addr = gr->bufs[0].addr; /* same bytes, both live */
  ck_assert(!lg_check_plan(p, msg, sizeof msg) && strstr(msg, "overlap"));
  gr->bufs[1] = save;
  int mid = -1, in1 = -1;
  for (int i = 0; i < gr->n_bufs; i++) {
    if (gr->bufs[i].kind == CT_LG_BUF_IN && gr->bufs[i].copy == 1) in1 = i;
    if (gr->bufs[i].cls == CT_LG_CLS_COMPUTE || (gr->bufs[i].kind == CT_LG_BUF_IN && gr->bufs[i].copy == 0)) mid = i;
  }
  ck_assert(mid >= 0 && in1 >= 0);
  save = gr->bufs[in1];
  gr->bufs[in1].addr = gr->bufs[mid].addr + gr->bufs[mid].bytes + 64; /* next to it: same bank */
  gr->bufs[in1].addr = gr->bufs[in1].addr / 64 * 64;
  ck_assert(!lg_check_plan(p, msg, sizeof msg));
  gr->bufs[in1] = save;
  for (int i = 0; i < gr->n_bufs; i++) gr->bufs[i].bytes /= 4; /* halos no longer fit */
  ck_assert(!lg_check_plan(p, msg, sizeof msg) && strstr(msg, "needs rows"));
  for (int i = 0; i < gr->n_bufs; i++) gr->bufs[i].bytes *= 4;
  ck_assert_msg(lg_check_plan(p, msg, sizeof msg), "%s", msg);
  int a = -1, b = -1;
  for (int k = 0; k < p->n_gmem; k++)
    if (p->gmem[k].region == CT_LG_GM_ACT || p->gmem[k].region == CT_LG_GM_IO) b = a < 0 ? b : k, a = a < 0 ? k : a;
  ck_assert(a >= 0 && b >= 0);
  p->gmem[b].addr = p->gmem[a].addr, p->gmem[b].live_lo = p->gmem[a].live_lo, p->gmem[b].live_hi = p->gmem[a].live_hi;
  ck_assert(!lg_check_plan(p, msg, sizeof msg) && strstr(msg, "GMEM"));
  ct_lg_plan_free(p);
  p = plan_or_fail(g, &c, CT_LG_DP); /* annotations: the output's GMEM address and the groups */
  ct_lg_annotate(p, g);
  const ct_value *out = g->outputs[0];
  int64_t addr = -1;
  for (int k = 0; k < p->n_gmem; k++)
    if (p->gmem[k].value == out->id) addr = p->gmem[k].addr;
  ck_assert_int_eq(out->annot.gmem_addr, addr);
  ck_assert_int_eq(out->def->annot.group, p->n_groups - 1);
  ct_lg_plan_free(p);
  ct_graph_free(g);
}
END_TEST

/* Softmax over 100000 features cannot be cut along its axis: on a 64 KiB LMEM the plan fails
 * naming the layer and the bytes needed vs available: one tile = input 100000 bytes (int8)
 * rounded up to 64 (100032) + output 100000. */
START_TEST(test_fit_failure_message) {
  ct_graph *g = ct_graph_new("big", "top");
  int64_t sh[2] = {1, 100000};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 2, sh), *y = ct_graph_add_value(g, "y", CT_F32, -1, NULL);
  ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x);
  ct_graph_add_op(g, CT_OP_SOFTMAX, "the_softmax", 1, &x, 1, &y);
  ct_graph_set_outputs(g, 1, &y);
  ct_diag d;
  ck_assert(ct_top_propagate(g, &d) == CT_OK);
  ct_chip c = chip_with(64 << 10, 16);
  ct_lg_options o = {.strategy = CT_LG_DP, .assume_bytes = 1};
  ct_lg_plan *p = NULL;
  ck_assert_int_eq(ct_lg_plan_graph(g, &c, &o, &p, &d), CT_ERR_LIMIT);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(d.msg, "layer \"the_softmax\"") && strstr(d.msg, "needs 200032 bytes") &&
                    strstr(d.msg, "the chip has 65536"),
                "%s", d.msg);
  ct_graph_free(g);
}
END_TEST

/* Every strategy on chains over a range of chips passes the checker. */
START_TEST(test_plans_check_on_chips) {
  static const int64_t lm[] = {96 << 10, 256 << 10, 512 << 10}, bk[] = {2, 4, 8, 32};
  for (int ci = 0; ci < 3; ci++)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 4; b++) {
        ct_graph *g = chain(3 + 5 * ci, 96, 80, chains[ci], 7);
        ct_chip c = chip_with(lm[a], bk[b]);
        c.dma_load_engines = 1 + b % 2, c.mxu_dataflow = a % 2 ? CT_DATAFLOW_OS : CT_DATAFLOW_WS;
        for (int s = 0; s < 4; s++) ct_lg_plan_free(plan_or_fail(g, &c, (ct_lg_strategy)s));
        ct_graph_free(g);
      }
}
END_TEST

/* `ctpu plan`: CSV with one row per group and a total row; bad usage exits 2; a model that
 * does not fit exits 4 and leaves no output. */
START_TEST(test_cli_plan) {
  spec sp[3] = {{'c', 8, 3, 1, 1, 1}, {'r', 0, 0, 0, 0, 0}, {'p', 0, 2, 2, 0, 0}};
  ct_graph *g = chain(3, 32, 32, sp, 3);
  ct_diag d;
  const char *top = ct_test_tmp_path("plan_chain.top"), *csv = ct_test_tmp_path("plan_chain.csv");
  ck_assert_msg(ct_ir_save(g, top, &d) == CT_OK, "%s", d.msg);
  char out[4096];
  remove(csv);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "plan %s --layer-group dp --assume-dtype i8 -o %s", top, csv), 0);
  char *text = ct_test_read_file(csv, NULL);
  ck_assert_ptr_nonnull(text);
  ck_assert(strncmp(text, "group,layers,", 13) == 0 && strstr(text, "\ntotal,3,"));
  free(text);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "plan %s --layer-group best", top), 2);
  const char *chip = ct_test_tmp_path("plan_tiny_chip.json"), *csv2 = ct_test_tmp_path("plan_nofit.csv");
  const char *js = "{\"lmem\": {\"bytes\": 1024, \"banks\": 1}}";
  ck_assert(ct_test_write_file(chip, js, strlen(js)));
  remove(csv2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "plan %s --chip %s -o %s", top, chip, csv2), 4);
  ck_assert_msg(strstr(out, "bytes of LMEM, the chip has 1024"), "%s", out);
  ck_assert(!ct_test_file_exists(csv2));
  ct_graph_free(g);
}
END_TEST

/* Plain C INT8 conv (group 1, N = 1): acc = sum (x − zp_in)·w over the in-bounds window,
 * y = sat_i8(rshift_round(acc·m, s) + zp_out), ReLU (if relu) clamps below at zp_out first
 * (docs/architecture.md §4.1, rshift_round(v, s) = (v + 2^(s−1)) >> s). */
static void ref_conv(const int8_t *x, const int8_t *w, int8_t *y, int64_t ic, int64_t ih, int64_t iw, int64_t oc,
                     int64_t oh, int64_t ow, int64_t k, int64_t st, int64_t pad, int32_t m, int32_t sh, int32_t zi,
                     int32_t zo, bool relu) {
  for (int64_t o = 0; o < oc; o++)
    for (int64_t r = 0; r < oh; r++)
      for (int64_t q = 0; q < ow; q++) {
        int64_t acc = 0;
        for (int64_t c = 0; c < ic; c++)
          for (int64_t a = 0; a < k; a++)
            for (int64_t b = 0; b < k; b++) {
              int64_t yy = r * st - pad + a, xx = q * st - pad + b;
              if (yy < 0 || yy >= ih || xx < 0 || xx >= iw) continue;
              acc += (int64_t)(x[(c * ih + yy) * iw + xx] - zi) * w[((o * ic + c) * k + a) * k + b];
            }
        int64_t v = ((acc * m) + ((int64_t)1 << (sh - 1))) >> sh;
        v += zo;
        if (relu && v < zo) v = zo;
        y[(o * oh + r) * ow + q] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
      }
}

/* A 3×3 INT8 conv planned on a small LMEM (so it is cut along H with halos and double
 * buffers), generated by the codegen, run on the cmodel (no race, no deadlock): the output
 * equals the plain C conv exactly, on WS and OS and with 1 or 2 tiles' worth of banks. */
START_TEST(test_codegen_conv_on_cmodel) {
  static const int64_t strides[] = {1, 2};
  for (int v = 0; v < 4; v++) {
    int64_t st = strides[v % 2], ic = 8, ih = 40, iw = 24, oc = 16;
    spec sp[1] = {{'c', oc, 3, st, 1, 1}};
    ct_graph *g = chain(ic, ih, iw, sp, 1);
    ct_chip c = chip_with(v < 2 ? 16 << 10 : 8 << 10, v < 2 ? 16 : 4);
    c.mxu_dataflow = v % 2 ? CT_DATAFLOW_OS : CT_DATAFLOW_WS;
    ct_lg_plan *p = plan_or_fail(g, &c, CT_LG_DP);
    ck_assert_int_eq(p->n_groups, 1);
    ck_assert_int_ge(p->groups[0].n_tiles, 2);
    const ct_value *x = p->layers[0].op->in[0], *y = p->layers[0].op->out[0];
    int64_t oh = y->shape[2], ow = y->shape[3], nw = oc * ic * 9;
    int8_t *w = malloc((size_t)nw), *ref = malloc((size_t)(oc * oh * ow));
    ct_tensor *xt = ct_tensor_new(CT_I8, 4, x->shape, x->name);
    for (int64_t i = 0; i < nw; i++) w[i] = (int8_t)((i * 37 + 11) % 15 - 7);
    int8_t *xd = (int8_t *)xt->data;
    for (int64_t i = 0; i < ic * ih * iw; i++) xd[i] = (int8_t)((i * 101 + 7) % 256 - 128);
    ct_cg_conv_q q = {w, 1518500250, 38, 3, -5, true, 0.05, 0.1};
    ct_program prog;
    ct_program_init(&prog, ct_chip_signature(&c));
    ct_diag d;
    ck_assert_msg(ct_cg_conv_group(p, 0, &q, &prog, &d) == CT_OK, "%s", d.msg);
    ck_assert_msg(ct_program_validate(&prog, &c, "codegen", &d) == CT_OK, "%s", d.msg);
    ct_tensor_list in = {0};
    ck_assert(ct_tensor_list_push(&in, xt));
    ct_sim_run_options o = {0};
    ct_sim_run_output out;
    memset(&out, 0, sizeof out);
    ck_assert_msg(ct_sim_run(&c, &prog, &in, &o, &out, &d) == CT_OK, "variant %d: %s", v, d.msg);
    ref_conv(xd, w, ref, ic, ih, iw, oc, oh, ow, 3, st, 1, q.multiplier, q.shift, q.zp_in, q.zp_out, q.relu);
    ck_assert_int_eq(out.outputs.n, 1);
    ck_assert_int_eq(memcmp(out.outputs.items[0]->data, ref, (size_t)(oc * oh * ow)), 0);
    printf("codegen conv variant %d: %lld tiles, pipelined %d, estimated %lld cycles, simulated %llu\n", v,
           (long long)p->groups[0].n_tiles, p->groups[0].pipelined, (long long)p->groups[0].cycles,
           (unsigned long long)out.res.counters.total_cycles);
    ct_sim_run_output_free(&out);
    ct_tensor_list_free(&in);
    ct_program_free(&prog);
    free(w), free(ref);
    ct_lg_plan_free(p);
    ct_graph_free(g);
  }
}
END_TEST

/* A chain of three INT8 convs (3×3 s1, 5×5 s2, 1×1) grouped into one layer group cut along H:
 * intermediates stay in LMEM with halos between tiles; the cmodel's output equals three plain
 * C convs exactly, on four small LMEMs (serial and pipelined plans; `max` grouping: fused even where the estimate prefers not). */
START_TEST(test_codegen_chain_on_cmodel) {
  static const int64_t lm[] = {8 << 10, 12 << 10, 16 << 10, 10 << 10}, bk[] = {4, 24, 32, 20};
  int n_pipelined = 0, n_serial = 0;
  for (int v = 0; v < 4; v++) {
    int64_t ic = 4, ih = 48, iw = 20;
    spec sp[3] = {{'c', 8, 3, 1, 1, 1}, {'c', 12, 5, 2, 1, 2}, {'c', 6, 1, 1, 1, 0}};
    ct_graph *g = chain(ic, ih, iw, sp, 3);
    ct_chip c = chip_with(lm[v], bk[v]);
    ct_lg_plan *p = plan_or_fail(g, &c, CT_LG_MAX);
    ck_assert_msg(p->n_groups == 1 && p->groups[0].n_tiles >= 2, "variant %d: %d groups, %lld tiles", v, p->n_groups,
                  (long long)p->groups[0].n_tiles);
    n_pipelined += p->groups[0].pipelined, n_serial += !p->groups[0].pipelined;
    int8_t *w[3], *buf[4];
    ct_cg_conv_q q[3];
    int64_t c_in = ic, h = ih, wd = iw;
    ct_tensor *xt = ct_tensor_new(CT_I8, 4, p->layers[0].op->in[0]->shape, p->layers[0].op->in[0]->name);
    buf[0] = (int8_t *)xt->data;
    for (int64_t i = 0; i < ic * ih * iw; i++) buf[0][i] = (int8_t)((i * 53 + 5) % 256 - 128);
    for (int k = 0; k < 3; k++) {
      int64_t nw = sp[k].oc * c_in * sp[k].k * sp[k].k, oh = (h + 2 * sp[k].p - sp[k].k) / sp[k].s + 1;
      int64_t ow = (wd + 2 * sp[k].p - sp[k].k) / sp[k].s + 1;
      w[k] = malloc((size_t)nw);
      for (int64_t i = 0; i < nw; i++) w[k][i] = (int8_t)((i * 29 + 3 * k) % 11 - 5);
      q[k] = (ct_cg_conv_q){w[k], 1518500250, 36 + k, k ? -2 : 0, -2, k < 2, 0.1, 0.1};
      buf[k + 1] = malloc((size_t)(sp[k].oc * oh * ow));
      ref_conv(buf[k], w[k], buf[k + 1], c_in, h, wd, sp[k].oc, oh, ow, sp[k].k, sp[k].s, sp[k].p, q[k].multiplier,
               q[k].shift, q[k].zp_in, q[k].zp_out, q[k].relu);
      c_in = sp[k].oc, h = oh, wd = ow;
    }
    ct_program prog;
    ct_program_init(&prog, ct_chip_signature(&c));
    ct_diag d;
    ck_assert_msg(ct_cg_conv_group(p, 0, q, &prog, &d) == CT_OK, "%s", d.msg);
    ck_assert_msg(ct_program_validate(&prog, &c, "codegen", &d) == CT_OK, "%s", d.msg);
    ct_tensor_list in = {0};
    ck_assert(ct_tensor_list_push(&in, xt));
    ct_sim_run_options o = {0};
    ct_sim_run_output out;
    memset(&out, 0, sizeof out);
    ck_assert_msg(ct_sim_run(&c, &prog, &in, &o, &out, &d) == CT_OK, "variant %d: %s", v, d.msg);
    const int8_t *got = (const int8_t *)out.outputs.items[0]->data;
    int64_t bad = -1, nbad = 0;
    for (int64_t i = 0; i < 6 * h * wd; i++)
      if (got[i] != buf[3][i]) nbad++, bad = bad < 0 ? i : bad;
    ck_assert_msg(nbad == 0, "variant %d: %lld of %lld outputs differ, first at %lld (c %lld row %lld col %lld): %d vs %d",
                  v, (long long)nbad, (long long)(6 * h * wd), (long long)bad, (long long)(bad / (h * wd)),
                  (long long)(bad / wd % h), (long long)(bad % wd), bad >= 0 ? got[bad] : 0, bad >= 0 ? buf[3][bad] : 0);
    printf("codegen chain variant %d: %lld tiles, pipelined %d, estimated %lld cycles, simulated %llu\n", v,
           (long long)p->groups[0].n_tiles, p->groups[0].pipelined, (long long)p->groups[0].cycles,
           (unsigned long long)out.res.counters.total_cycles);
    ct_sim_run_output_free(&out);
    ct_tensor_list_free(&in);
    ct_program_free(&prog);
    for (int k = 0; k < 3; k++) free(w[k]), free(buf[k + 1]);
    ct_lg_plan_free(p);
    ct_graph_free(g);
  }
  ck_assert_int_ge(n_pipelined, 1);
  ck_assert_int_ge(n_serial, 1);
}
END_TEST

static ct_insn dma(ct_isa_op op, int64_t lm, int64_t bytes) {
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = op, i.load.dtype = CT_I8, i.load.n = i.load.c = i.load.h = 1, i.load.w = bytes;
  i.load.src_sw = i.load.dst_sw = 1, i.load.src_sh = i.load.dst_sh = bytes;
  i.load.src_sc = i.load.dst_sc = i.load.src_sn = i.load.dst_sn = bytes;
  if (op == CT_ISA_LOAD) i.load.dst = lm;
  else i.store.src = lm;
  return i;
}

static ct_insn vec(ct_isa_op op, int64_t in, int64_t out) { /* 1 KiB of i8 in → out */
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = op;
  if (op == CT_ISA_MATMUL)
    i.matmul.a = in, i.matmul.b = 0xF0000, i.matmul.out = out, i.matmul.batch = i.matmul.m = 1, i.matmul.k = 1024,
    i.matmul.n = 1, i.matmul.dt_a = i.matmul.dt_b = i.matmul.dt_out = CT_I8;
  else
    i.eltwise.a = i.eltwise.b = in, i.eltwise.out = out, i.eltwise.n = i.eltwise.c = i.eltwise.h = 1, i.eltwise.w = 1024,
    i.eltwise.dt_a = i.eltwise.dt_b = i.eltwise.dt_out = CT_I8;
  return i;
}

/* Dependency tokens by hand: tile 0 LOADs 0x0, MATMUL 0x0 → 0x10000, ELTWISE 0x10000 → 0x20000
 * (stored), ELTWISE 0x10000 → 0x30000; tile 1 LOADs 0x40000, MATMUL → 0x50000 (stored). The
 * first ELTWISE waits for the MATMUL (MXU → VPU, semaphore 24 + 2·1 + 1 = 27), the second is
 * covered by that wait (FIFO), and tile 1's MATMUL waits for nothing of tile 0 (the chain made
 * it wait for the second ELTWISE). Roles: LD waiters the MATMULs, DONE the stored writers. */
START_TEST(test_dep_tokens_hand) {
  cg_stage st = {0};
  ct_insn v[8] = {dma(CT_ISA_LOAD, 0, 1024), vec(CT_ISA_MATMUL, 0, 0x10000), vec(CT_ISA_ELTWISE, 0x10000, 0x20000),
                  vec(CT_ISA_ELTWISE, 0x10000, 0x30000), dma(CT_ISA_STORE, 0x20000, 1024), dma(CT_ISA_LOAD, 0x40000, 1024),
                  vec(CT_ISA_MATMUL, 0x40000, 0x50000), dma(CT_ISA_STORE, 0x50000, 1024)};
  for (int k = 0; k < 8; k++) ck_assert_int_eq(ct_cg_stage_add(&st, &v[k], "x", k < 5 ? 0 : 1, NULL), CT_OK);
  int off[3][3] = {{0, 1, 2}, {0, 3, 4}, {0, 1, 2}}, idx[3][4] = {{0, 5}, {1, 2, 3, 6}, {4, 7}};
  const int *o[3] = {off[0], off[1], off[2]}, *ix[3] = {idx[0], idx[1], idx[2]};
  bool oom = false;
  ck_assert(ct_cg_dep_tokens(&st, o, ix, 2, &oom) && !oom);
  ck_assert_uint_eq(st.v[1].in.signal, 1u << 27);
  ck_assert_uint_eq(st.v[2].in.wait, 1u << 27);
  ck_assert_uint_eq(st.v[3].in.wait | st.v[3].in.signal | st.v[2].in.signal, 0);
  ck_assert_uint_eq(st.v[6].in.wait | st.v[6].in.signal, 0);
  ck_assert_int_eq(st.v[1].role, CG_ROLE_LD | CG_ROLE_OUTFREE | CG_ROLE_INFREE);
  ck_assert_int_eq(st.v[2].role, CG_ROLE_DONE);
  ck_assert_int_eq(st.v[3].role, 0);
  ck_assert_int_eq(st.v[6].role, CG_ROLE_LD | CG_ROLE_OUTFREE | CG_ROLE_INFREE | CG_ROLE_DONE);
  ct_cg_stage_free(&st);
}
END_TEST

int main(void) {
  Suite *s = suite_create("backend");
  TCase *tc = tcase_create("planner");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_halo_rows_hand);
  tcase_add_test(tc, test_halo_chain);
  tcase_add_test(tc, test_layer_tables);
  tcase_add_test(tc, test_dma_cost);
  tcase_add_test(tc, test_pipeline_hand);
  tcase_add_test(tc, test_dp_vs_brute_force);
  tcase_add_test(tc, test_checker_detects);
  tcase_add_test(tc, test_fit_failure_message);
  tcase_add_test(tc, test_plans_check_on_chips);
  tcase_add_test(tc, test_cli_plan);
  tcase_add_test(tc, test_codegen_conv_on_cmodel);
  tcase_add_test(tc, test_codegen_chain_on_cmodel);
  tcase_add_test(tc, test_dep_tokens_hand);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
