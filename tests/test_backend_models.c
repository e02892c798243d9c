/* test_backend_models.c: every shared model (../shared/models) through the front end
 * (import, propagate, canonicalize, as `ctpu transform`), then planned with none, greedy
 * and dp on the default chip and dp/none on a sweep of 32 chips (MXU 8×8..64×64 and 16×64,
 * LMEM 256 KiB..4 MiB, 4..32 banks, DDR 8..128 B/cycle, WS and OS, 1–2 DMA engines of each
 * kind); every plan passes the independent checker (tests/lg_check.c) and dp is never worse
 * than none by the cost model. Prints the per-model figures of docs/backend.md. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "compiler/backend/lg.h"
#include "compiler/lower.h"
#include "compiler/pass.h"
#include "compiler/propagate.h"
#include "onnx/onnx.h"
#include "tests/lg_check.h"
#include "tests/testutil.h"

static const char *const models[][2] = {
    {"fmnist-rescnn", "model.onnx"},
    {"mobilenetv2-fp32-dequant-from-qdq", "model.onnx"},
    {"mobilenetv2-torchvision-qdq-int8", "model.onnx"},
    {"yolox-nano", "model.onnx"},
    {"ultraface-rfb-320", "model.onnx"},
    {"ppocrv4-det", "model.onnx"},
    {"ppocrv4-rec", "model.onnx"},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))
#define N_CHIPS 32

static ct_graph *front_end(int i) {
  const char *path = ct_test_shared_path("models/%s/%s", models[i][0], models[i][1]);
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(ct_onnx_import(path, NULL, &g, &d) == CT_OK, "%s: %s", path, d.msg);
  ck_assert_msg(ct_top_propagate(g, &d) == CT_OK, "%s: %s", path, d.msg);
  ck_assert_msg(ct_pass_run_pipeline(g, "canonicalize", NULL, &d) == CT_OK, "%s: %s", path, d.msg);
  return g;
}

/* Chip k of the sweep: each key cycles through its values at a different rate so that the
 * 32 chips cover every value of every key and many combinations. */
static void sweep_chip(int k, ct_chip *c) {
  static const int64_t mxu[][2] = {{8, 8}, {16, 16}, {32, 32}, {64, 64}, {16, 64}};
  static const int64_t lmem[] = {256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20};
  static const int64_t banks[] = {4, 8, 16, 32}, ddr[] = {8, 16, 32, 64, 128};
  ct_chip_default(c);
  snprintf(c->name, sizeof c->name, "sweep%d", k);
  c->mxu_rows = mxu[k % 5][0], c->mxu_cols = mxu[k % 5][1];
  c->lmem_bytes = lmem[(k / 2) % 5], c->lmem_banks = banks[(k / 3) % 4];
  c->gmem_bytes_per_cycle = ddr[(k * 3 / 2) % 5];
  c->mxu_dataflow = k % 2 ? CT_DATAFLOW_OS : CT_DATAFLOW_WS;
  c->dma_load_engines = 1 + (k / 4) % 2, c->dma_store_engines = 1 + (k / 8) % 2;
}

static ct_lg_plan *plan(const ct_graph *g, const ct_chip *c, ct_lg_strategy s, const char *model) {
  ct_lg_options o = {.strategy = s, .assume_bytes = 1};
  ct_lg_plan *p = NULL;
  ct_diag d;
  ck_assert_msg(ct_lg_plan_graph(g, c, &o, &p, &d) == CT_OK, "%s on %s (%s): %s", model, c->name,
                ct_lg_strategy_name(s), d.msg);
  char msg[512];
  ck_assert_msg(lg_check_plan(p, msg, sizeof msg), "%s on %s (%s): %s", model, c->name, ct_lg_strategy_name(s), msg);
  return p;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

START_TEST(test_model_default_chip) {
  ct_graph *g = front_end(_i);
  ct_chip c;
  ct_chip_default(&c);
  ct_lg_plan *p[3];
  double t[3];
  for (int s = 0; s < 3; s++) {
    double t0 = now();
    p[s] = plan(g, &c, (ct_lg_strategy)s, models[_i][0]);
    t[s] = now() - t0;
  }
  printf("%-34s layers %4d | none %10lld cyc %10lld B %8lld LMEM | greedy %10lld cyc %10lld B %8lld | dp %10lld cyc "
         "%10lld B %8lld LMEM %3d groups %.3f s | dp/none %.3f\n",
         models[_i][0], p[0]->n_layers, (long long)p[0]->total_cycles, (long long)p[0]->ddr_bytes,
         (long long)p[0]->lmem_peak, (long long)p[1]->total_cycles, (long long)p[1]->ddr_bytes,
         (long long)p[1]->lmem_peak, (long long)p[2]->total_cycles, (long long)p[2]->ddr_bytes,
         (long long)p[2]->lmem_peak, p[2]->n_groups, t[2], (double)p[2]->total_cycles / (double)p[0]->total_cycles);
  ck_assert_int_le(p[2]->total_cycles, p[0]->total_cycles);
  ck_assert_int_le(p[2]->total_cycles, p[1]->total_cycles);
  ck_assert_int_le(p[1]->total_cycles, p[0]->total_cycles);
  for (int s = 0; s < 3; s++) ct_lg_plan_free(p[s]);
  ct_graph_free(g);
}
END_TEST

/* The worked example of docs/backend.md, derived by hand there: fmnist-rescnn, none, default
 * chip: /fc/Gemm 723 cycles, 196618 LMEM bytes (buffers spread over banks), 1152 DDR load bytes; the stem conv 1732
 * cycles, 262424 LMEM bytes, 1216 load and 21504 store bytes. */
START_TEST(test_worked_example) {
  ct_graph *g = front_end(0);
  ct_chip c;
  ct_chip_default(&c);
  ct_lg_plan *p = plan(g, &c, CT_LG_NONE, models[0][0]);
  int seen = 0;
  for (int k = 0; k < p->n_groups; k++) {
    const ct_lg_group *gr = &p->groups[k];
    const char *loc = p->layers[gr->first].op->loc;
    if (!strcmp(loc, "/fc/Gemm")) {
      ck_assert_int_eq(gr->cycles, 723);
      ck_assert_int_eq(gr->lmem_bytes, 196618);
      ck_assert_int_eq(gr->ddr_load_bytes, 1152);
      seen++;
    } else if (!strcmp(loc, "/stem/stem.0/Conv")) {
      ck_assert_int_eq(gr->n_tiles, 2);
      ck_assert_int_eq(gr->cycles, 1732);
      ck_assert_int_eq(gr->lmem_bytes, 262424);
      ck_assert_int_eq(gr->ddr_load_bytes, 1216);
      ck_assert_int_eq(gr->ddr_store_bytes, 21504);
      seen++;
    }
  }
  ck_assert_int_eq(seen, 2);
  ct_lg_plan_free(p);
  ct_graph_free(g);
}
END_TEST

/* Under AddressSanitizer (scripts/test.sh --sanitize, ~10× slower) every 3rd chip of the sweep
 * (11 chips: every MXU shape, LMEM size, bank count and DDR rate, both dataflows, 1–2 DMA
 * engines); the release build runs all 32. */
#if defined(__SANITIZE_ADDRESS__)
#define SWEEP_STEP 3
#else
#define SWEEP_STEP 1
#endif

START_TEST(test_model_sweep) {
  ct_graph *g = front_end(_i);
  int pass = 0;
  for (int k = 0; k < N_CHIPS; k += SWEEP_STEP) {
    ct_chip c;
    sweep_chip(k, &c);
    ct_lg_plan *none = plan(g, &c, CT_LG_NONE, models[_i][0]), *dp = plan(g, &c, CT_LG_DP, models[_i][0]);
    ck_assert_msg(dp->total_cycles <= none->total_cycles, "%s on %s: dp %lld > none %lld", models[_i][0], c.name,
                  (long long)dp->total_cycles, (long long)none->total_cycles);
    pass++;
    ct_lg_plan_free(none), ct_lg_plan_free(dp);
  }
  printf("%-34s sweep: %d/%d chips planned and checked (none, dp)\n", models[_i][0], pass, (N_CHIPS + SWEEP_STEP - 1) / SWEEP_STEP);
  ct_graph_free(g);
}
END_TEST

/* Tpu graphs as `ctpu lower` makes them, planned with each value's own dtype (no
 * --assume-dtype): the QDQ MobileNetV2 lowered to INT8 (its own scales), fmnist-rescnn and
 * yolox-nano lowered to BF16 (2-byte values); default chip and every 4th sweep chip (every
 * 12th under AddressSanitizer). */
START_TEST(test_tpu_graphs) {
  static const struct {
    int model;
    ct_qmode mode;
  } cases[] = {{2, CT_QMODE_INT8}, {0, CT_QMODE_BF16}, {3, CT_QMODE_BF16}};
  ct_graph *g = front_end(cases[_i].model);
  ct_lower_options lo;
  memset(&lo, 0, sizeof lo);
  lo.mode = cases[_i].mode;
  ct_diag d;
  ck_assert_msg(ct_lower(g, &lo, &d) == CT_OK, "%s: lower: %s", models[cases[_i].model][0], d.msg);
  ct_graph_compact(g);
  for (int k = -1; k < N_CHIPS; k += 4 * SWEEP_STEP) {
    ct_chip c;
    if (k < 0) ct_chip_default(&c);
    else sweep_chip(k, &c);
    ct_lg_options o = {.strategy = CT_LG_NONE, .assume_bytes = 0};
    ct_lg_plan *p[2];
    for (int s = 0; s < 2; s++) {
      o.strategy = s ? CT_LG_DP : CT_LG_NONE;
      ck_assert_msg(ct_lg_plan_graph(g, &c, &o, &p[s], &d) == CT_OK, "%s tpu on %s: %s", models[cases[_i].model][0],
                    c.name, d.msg);
      char msg[512];
      ck_assert_msg(lg_check_plan(p[s], msg, sizeof msg), "%s tpu on %s: %s", models[cases[_i].model][0], c.name, msg);
    }
    ck_assert_int_le(p[1]->total_cycles, p[0]->total_cycles);
    if (k < 0)
      printf("%-34s tpu (%s) layers %4d | none %10lld cyc %10lld B | dp %10lld cyc %10lld B %3d groups | dp/none %.3f\n",
             models[cases[_i].model][0], lo.mode == CT_QMODE_INT8 ? "INT8" : "BF16", p[0]->n_layers,
             (long long)p[0]->total_cycles, (long long)p[0]->ddr_bytes, (long long)p[1]->total_cycles,
             (long long)p[1]->ddr_bytes, p[1]->n_groups, (double)p[1]->total_cycles / (double)p[0]->total_cycles);
    ct_lg_plan_free(p[0]), ct_lg_plan_free(p[1]);
  }
  ct_graph_free(g);
}
END_TEST

int main(void) {
  ct_test_require_shared("test_backend_models");
  setvbuf(stdout, NULL, _IOLBF, 0);
  Suite *s = suite_create("backend_models");
  TCase *tc = tcase_create("models");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_worked_example);
  tcase_add_loop_test(tc, test_model_default_chip, 0, N_MODELS);
  tcase_add_loop_test(tc, test_model_sweep, 0, N_MODELS);
  tcase_add_loop_test(tc, test_tpu_graphs, 0, 3);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
