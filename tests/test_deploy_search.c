/* test_deploy_search.c: `--layer-group search` (deploy/search.h) and the planner's given
 * partitions (CT_LG_SEARCH) on MobileNetV2 QDQ-INT8: a partition equal to dp's plans dp's
 * groups and cycles; partitions that are not legal groups, or do not cover the layers, are
 * refused with a message naming the group; the search never ends above dp, the program it
 * writes simulates to the cycles it reports, bit-exact, and the same budget gives the same
 * result twice; `ctpu plan` refuses the strategy. Needs ../shared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg.h"
#include "deploy/flow.h"
#include "deploy/load.h"
#include "deploy/search.h"
#include "tests/testutil.h"

static ct_graph *mnv2(void) {
  ct_deploy_src src = {ct_test_shared_path("models/mobilenetv2-torchvision-qdq-int8/model.onnx"), "INT8", NULL, NULL, NULL};
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(ct_deploy_load(&src, &g, &d) == CT_OK, "%s", d.msg);
  return g;
}

static ct_lg_plan *plan_or_fail(const ct_graph *g, const ct_chip *c, const ct_lg_options *o) {
  ct_lg_plan *p = NULL;
  ct_diag d;
  ck_assert_msg(ct_lg_plan_graph(g, c, o, &p, &d) == CT_OK, "%s", d.msg);
  return p;
}

START_TEST(test_given_partition) {
  ct_graph *g = mnv2();
  ct_chip c;
  ct_chip_default(&c);
  ct_lg_options o = {.strategy = CT_LG_DP};
  ct_lg_plan *dp = plan_or_fail(g, &c, &o);
  int n = dp->n_groups, *len = malloc(sizeof *len * ((size_t)n + 1));
  for (int k = 0; k < n; k++) len[k] = dp->groups[k].n_layers;
  o.strategy = CT_LG_SEARCH, o.group_len = len, o.n_group_len = n;
  ct_lg_plan *p = plan_or_fail(g, &c, &o);
  ck_assert_int_eq(p->n_groups, n);
  ck_assert_int_eq(p->total_cycles, dp->total_cycles);
  for (int k = 0; k < n; k++) ck_assert_int_eq(p->groups[k].n_tiles, dp->groups[k].n_tiles);
  ct_lg_plan_free(p);
  /* a partition short of one layer, and one whose first group swallows a whole-axis layer */
  ct_diag d;
  o.n_group_len = n - 1;
  ck_assert_int_eq(ct_lg_plan_graph(g, &c, &o, &p, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "covers"), "%s", d.msg);
  int all[2] = {dp->n_layers - 1, 1};
  o.group_len = all, o.n_group_len = 2;
  ck_assert_int_eq(ct_lg_plan_graph(g, &c, &o, &p, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "group 0") && strstr(d.msg, "not a legal group"), "%s", d.msg);
  o.group_len = NULL;
  ck_assert_int_eq(ct_lg_plan_graph(g, &c, &o, &p, &d), CT_ERR_INPUT);
  free(len);
  ct_lg_plan_free(dp);
  ct_graph_free(g);
}
END_TEST

/* Search on a chip whose cost model is far from the cmodel (output-stationary 7×13 MXU, 8-byte
 * bank ports, 3 load engines, queue depth 1): best ≤ dp, the final program simulates to best,
 * and a second search with the same budget finds the same partition. */
START_TEST(test_search_api) {
  ct_graph *g = mnv2();
  ct_chip c;
  ct_chip_default(&c);
  c.mxu_rows = 7, c.mxu_cols = 13, c.mxu_dataflow = CT_DATAFLOW_OS, c.lmem_bytes = 262144, c.lmem_banks = 64;
  c.lmem_bank_port_bytes = 8, c.dma_load_engines = 3, c.queue_depth = 1;
  ct_diag d;
  ck_assert_msg(ct_chip_validate(&c, "os-7x13", &d) == CT_OK, "%s", d.msg);
  ct_lg_options o = {.strategy = CT_LG_SEARCH};
  ct_deploy_search_options so = {60, 0};
  ct_deploy_search_result r1, r2;
  ck_assert_msg(ct_deploy_search(g, &c, &o, &so, &r1, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(ct_deploy_search(g, &c, &o, &so, &r2, &d) == CT_OK, "%s", d.msg);
  fprintf(stderr, "search: dp %llu, best %llu (%s), %d candidates, %d moves\n", (unsigned long long)r1.dp_cycles,
          (unsigned long long)r1.best_cycles, r1.best_from, r1.evals, r1.improvements);
  ck_assert_uint_le(r1.best_cycles, r1.dp_cycles);
  ck_assert_int_le(r1.evals, 60);
  ck_assert_uint_eq(r1.best_cycles, r2.best_cycles);
  ck_assert_int_eq(r1.n_groups, r2.n_groups);
  ck_assert_mem_eq(r1.group_len, r2.group_len, sizeof *r1.group_len * (size_t)r1.n_groups);
  /* the partition, compiled and simulated again, gives the cycles the search reported */
  o.group_len = r1.group_len, o.n_group_len = r1.n_groups;
  ct_lg_plan *p = NULL;
  ct_program prog;
  int held;
  ct_program_init(&prog, ct_chip_signature(&c));
  ck_assert_msg(ct_deploy_compile(g, &c, &o, &p, &prog, &held, &d) == CT_OK, "%s", d.msg);
  ct_sim_run_options ro = {.no_race_check = false};
  ct_sim_run_output out;
  ck_assert_msg(ct_sim_run(&c, &prog, NULL, &ro, &out, &d) == CT_OK, "%s", d.msg);
  ck_assert_uint_eq(out.res.counters.total_cycles, r1.best_cycles);
  ct_sim_run_output_free(&out);
  ct_program_free(&prog);
  ct_lg_plan_free(p);
  ct_deploy_search_result_free(&r1), ct_deploy_search_result_free(&r2);
  ct_graph_free(g);
}
END_TEST

/* The command: the search line, bit-exact --compare-all, the summary's simulated cycles equal
 * to the reported best; `ctpu plan --layer-group search` is a usage error. */
START_TEST(test_search_cli) {
  char out[16384];
  const char *m = ct_test_shared_path("models/mobilenetv2-torchvision-qdq-int8/model.onnx");
  char model[600];
  snprintf(model, sizeof model, "%s", m);
  int rc = ct_test_run_ctpu(out, sizeof out,
                            "deploy '%s' --quantize INT8 --layer-group search --search-evals 20 --search-seconds 0 -o '%s' "
                            "--test-input '%s' --compare-all",
                            model, ct_test_tmp_path("s.ctpu"),
                            ct_test_shared_path("models/mobilenetv2-torchvision-qdq-int8/test_data_set_0/input_0.pb"));
  ck_assert_msg(rc == 0, "%s", out);
  const char *s = strstr(out, "deploy: search: dp ");
  ck_assert_msg(s, "%s", out);
  unsigned long long dp, best, sim;
  ck_assert_int_eq(sscanf(s, "deploy: search: dp %llu cycles, best %llu", &dp, &best), 2);
  ck_assert_uint_le(best, dp);
  const char *t = strstr(out, "simulated ");
  ck_assert_msg(t && sscanf(t, "simulated %llu cycles", &sim) == 1, "%s", out);
  ck_assert_uint_eq(sim, best);
  ck_assert_msg(strstr(out, ", 0 differ"), "%s", out);
  rc = ct_test_run_ctpu(out, sizeof out, "plan '%s' --layer-group search", model);
  ck_assert_int_eq(rc, 2);
  ck_assert_msg(strstr(out, "ctpu deploy --layer-group search"), "%s", out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deploy_search");
  TCase *tc = tcase_create("mobilenetv2");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_given_partition);
  tcase_add_test(tc, test_search_api);
  tcase_add_test(tc, test_search_cli);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  ct_test_require_shared("test_deploy_search");
  return ct_test_run_suite(suite());
}
