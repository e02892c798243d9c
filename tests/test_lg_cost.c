/* test_lg_cost.c: the planner's compute estimate of a layer is the cmodel's cost of the
 * instructions the codegen emits for it. One small Tpu module per engine op kind (ELTWISE,
 * LUT, LUT16, POOL, DWCONV, REQUANT, CAST, EXP, SOFTMAX, NORM, RESIZE on the VPU; CONV and
 * MATMUL on the MXU) is planned one layer per group, generated and run on the cmodel: each
 * group's estimated compute cycles equal the busy cycles the cmodel counts on the VPU and the
 * MXU for that layer (both read isa/cost.h, so a cost written twice cannot drift unseen). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"
#include "compiler/backend/codegen.h"
#include "compiler/backend/lg.h"
#include "ir/attr.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "quant/quant.h"
#include "tests/testutil.h"

#define HEAD "module @m attributes {chip = \"ctpu-default\"} {\n"
#define X8 "  %0 = tpu.Input() : tensor<1x8x6x10xi8 !quant<0.05, 0>> loc(\"x\")\n"
#define XB "  %0 = tpu.Input() : tensor<1x8x6x10xbf16> loc(\"x\")\n"
#define RQ8 "multiplier = [1073741824, 1073741824, 1073741824, 1073741824, 1073741824, 1073741824, " \
            "1073741824, 1073741824], rshift = [31, 31, 31, 31, 31, 31, 31, 31]"

/* One case: the module text, its layer of interest, the opcode that layer must emit. */
typedef struct cost_case {
  const char *what, *text;
} cost_case;

static const cost_case cases[] = {
    {"ELTWISE (Add)", HEAD X8 "  %1 = tpu.Input() : tensor<1x8x6x10xi8 !quant<0.05, 0>> loc(\"x1\")\n"
     "  %2 = tpu.Add(%0, %1) {multiplier = [16384, 16384], rshift = [0, 0, 15]} : tensor<1x8x6x10xi8 !quant<0.1, 0>> loc(\"layer\")\n"
     "  return %2 : tensor<1x8x6x10xi8 !quant<0.1, 0>>\n}\n"},
    {"LUT", HEAD X8 "  %1 = tpu.Lut(%0) : tensor<1x8x6x10xi8 !quant<0.05, 0>> loc(\"layer\")\n"
     "  return %1 : tensor<1x8x6x10xi8 !quant<0.05, 0>>\n}\n"},
    {"LUT16", HEAD "  %0 = tpu.Input() : tensor<1x8x6x10xi16 !quant<0.001, 0>> loc(\"x\")\n"
     "  %1 = tpu.Lut(%0) : tensor<1x8x6x10xi8 !quant<0.05, 0>> loc(\"layer\")\n"
     "  return %1 : tensor<1x8x6x10xi8 !quant<0.05, 0>>\n}\n"},
    {"POOL (MaxPool)", HEAD X8 "  %1 = tpu.MaxPool(%0) {ceil_mode = 0, kernel_shape = [3, 3], pads = [1, 1, 1, 1], "
     "strides = [1, 1], dilations = [1, 1]} : tensor<1x8x6x10xi8 !quant<0.05, 0>> loc(\"layer\")\n"
     "  return %1 : tensor<1x8x6x10xi8 !quant<0.05, 0>>\n}\n"},
    {"DWCONV (depthwise Conv)", HEAD X8 "  %1 = tpu.Weight() : tensor<8x1x3x3xi8 !quant<0.1, 0>> loc(\"w\")\n"
     "  %2 = tpu.Weight() : tensor<8xi32> loc(\"b\")\n"
     "  %3 = tpu.Conv(%0, %1, %2) {dilations = [1, 1], group = 8, kernel_shape = [3, 3], pads = [1, 1, 1, 1], "
     "strides = [1, 1], " RQ8 "} : tensor<1x8x6x10xi8 !quant<0.05, 0>> loc(\"layer\")\n"
     "  return %3 : tensor<1x8x6x10xi8 !quant<0.05, 0>>\n}\n"},
    {"REQUANT (Requant)", HEAD X8 "  %1 = tpu.Requant(%0) {multiplier = [1073741824], rshift = [30]} : "
     "tensor<1x8x6x10xi8 !quant<0.1, 0>> loc(\"layer\")\n  return %1 : tensor<1x8x6x10xi8 !quant<0.1, 0>>\n}\n"},
    {"CAST (i8 → bf16)", HEAD X8 "  %1 = tpu.Requant(%0) {multiplier = [1073741824], rshift = [30]} : tensor<1x8x6x10xi8 !quant<0.1, 0>> loc(\"rq\")\n"
     "  %2 = tpu.Cast(%0) {to = 16} : tensor<1x8x6x10xbf16> loc(\"layer\")\n"
     "  return %2, %1 : tensor<1x8x6x10xbf16>, tensor<1x8x6x10xi8 !quant<0.1, 0>>\n}\n"},
    {"EXP (bf16 Sigmoid)", HEAD XB "  %1 = tpu.Sigmoid(%0) : tensor<1x8x6x10xbf16> loc(\"layer\")\n"
     "  return %1 : tensor<1x8x6x10xbf16>\n}\n"},
    {"SOFTMAX (bf16)", HEAD XB "  %1 = tpu.Softmax(%0) {axis = 3} : tensor<1x8x6x10xbf16> loc(\"layer\")\n"
     "  return %1 : tensor<1x8x6x10xbf16>\n}\n"},
    {"NORM (bf16 LayerNormalization)", HEAD XB "  %1 = tpu.Weight() : tensor<10xf32> loc(\"s\")\n"
     "  %2 = tpu.Weight() : tensor<10xf32> loc(\"b\")\n"
     "  %3 = tpu.LayerNormalization(%0, %1, %2) {axis = 3, epsilon = 9.999999747378752e-06, stash_type = 1} : tensor<1x8x6x10xbf16> "
     "loc(\"layer\")\n  return %3 : tensor<1x8x6x10xbf16>\n}\n"},
    {"RESIZE (linear)", HEAD X8 "  %1 = tpu.Weight() : tensor<4xf32> loc(\"scales\")\n"
     "  %2 = tpu.Resize(%0, %none, %1) {mode = \"linear\", coordinate_transformation_mode = \"half_pixel\"} : "
     "tensor<1x8x12x20xi8 !quant<0.05, 0>> loc(\"layer\")\n  return %2 : tensor<1x8x12x20xi8 !quant<0.05, 0>>\n}\n"},
    {"CONV (int8)", HEAD X8 "  %1 = tpu.Weight() : tensor<8x8x3x3xi8 !quant<0.1, 0>> loc(\"w\")\n"
     "  %2 = tpu.Weight() : tensor<8xi32> loc(\"b\")\n"
     "  %3 = tpu.Conv(%0, %1, %2) {dilations = [1, 1], group = 1, kernel_shape = [3, 3], pads = [1, 1, 1, 1], "
     "strides = [1, 1], " RQ8 "} : tensor<1x8x6x10xi8 !quant<0.05, 0>> loc(\"layer\")\n"
     "  return %3 : tensor<1x8x6x10xi8 !quant<0.05, 0>>\n}\n"},
    {"MATMUL (bf16 MatMul)", HEAD "  %0 = tpu.Input() : tensor<1x6x16xbf16> loc(\"x\")\n"
     "  %1 = tpu.Weight() : tensor<16x24xbf16> loc(\"w\")\n"
     "  %2 = tpu.MatMul(%0, %1) : tensor<1x6x24xbf16> loc(\"layer\")\n  return %2 : tensor<1x6x24xbf16>\n}\n"},
};

/* Gives every Weight of g data (values by kind: resize scales 2, others small numbers) and
 * the Lut layer its table. */
static void fill_constants(ct_graph *g) {
  for (int i = 0; i < g->n_ops; i++) {
    ct_op *op = g->ops[i];
    if (op->kind == CT_OP_WEIGHT) {
      ct_value *v = op->out[0];
      v->data = ct_tensor_new(v->dtype, v->ndim, v->shape, v->name);
      ck_assert_ptr_nonnull(v->data);
      for (int64_t k = 0; k < ct_tensor_numel(v->data); k++)
        ct_tensor_set_f64(v->data, k, strcmp(v->name, "scales") == 0 ? (k < 2 ? 1 : 2) : (double)(k % 5) - 2);
    }
    if (op->kind == CT_OP_LUT) {
      int n = ct_quant_lut_entries(op->in[0]->dtype);
      int64_t *t = malloc(sizeof *t * (size_t)n);
      for (int k = 0; k < n; k++) t[k] = k % 100;
      ck_assert(ct_attr_set_lut_table(g, op, n, t));
      free(t);
    }
  }
}

/* Zero tensors for the module's inputs. */
static void zero_inputs(const ct_graph *g, ct_tensor_list *in) {
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->kind != CT_OP_INPUT) continue;
    const ct_value *v = op->out[0];
    ct_tensor *t = ct_tensor_new(v->dtype, v->ndim, v->shape, v->name);
    ck_assert(t && ct_tensor_list_push(in, t));
  }
}

/* Busy cycles of the engines whose names start with one of prefixes (a NULL-ended list) on
 * the instructions of layer `name`. */
static uint64_t busy_of(const ct_sim_run_output *o, const char *name, const char *const *prefixes) {
  uint64_t busy = 0;
  for (int k = 0; k < o->n_layers; k++) {
    if (strcmp(o->layers[k].name, name)) continue;
    for (int e = 0; e < o->res.counters.n_engines; e++)
      for (const char *const *p = prefixes; *p; p++)
        if (!strncmp(o->res.counters.engines[e].name, *p, strlen(*p))) busy += o->layers[k].busy[e];
  }
  return busy;
}

START_TEST(test_estimate_is_simulated_compute) {
  const cost_case *c = &cases[_i];
  ct_graph *g;
  ct_diag d;
  ck_assert_msg(ct_ir_parse(c->text, strlen(c->text), "case.tpu", &g, &d) == CT_OK, "%s: %s", c->what, d.msg);
  fill_constants(g);
  ck_assert_msg(ct_ir_verify(g, &d) == CT_OK, "%s: %s", c->what, d.msg);
  ct_chip chip;
  ct_chip_default(&chip);
  ct_lg_options opt = {.strategy = CT_LG_NONE, .assume_bytes = 0};
  ct_lg_plan *p;
  ck_assert_msg(ct_lg_plan_graph(g, &chip, &opt, &p, &d) == CT_OK, "%s: %s", c->what, d.msg);
  ct_program prog;
  ct_program_init(&prog, ct_chip_signature(&chip));
  ck_assert_msg(ct_cg_model(p, &prog, &d) == CT_OK, "%s: %s", c->what, d.msg);
  ct_tensor_list in = {0};
  zero_inputs(g, &in);
  ct_sim_run_options so = {.timing_only = true};
  ct_sim_run_output out;
  memset(&out, 0, sizeof out);
  ck_assert_msg(ct_sim_run(&chip, &prog, &in, &so, &out, &d) == CT_OK, "%s: %s", c->what, d.msg);
  int found = 0;
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_op *op = p->layers[p->groups[gi].first].op;
    if (strcmp(op->loc, "layer")) continue;
    found++;
    static const char *const compute[] = {"vpu", "mxu", NULL};
    uint64_t sim = busy_of(&out, "layer", compute);
    const ct_lg_group *gr = &p->groups[gi];
    ck_assert_msg(sim > 0, "%s: no VPU / MXU instruction ran for the layer", c->what);
    ck_assert_msg((uint64_t)gr->compute_cycles == sim, "%s: estimated %lld compute cycles, simulated %llu", c->what,
                  (long long)gr->compute_cycles, (unsigned long long)sim);
  }
  ck_assert_int_eq(found, 1);
  ct_sim_run_output_free(&out);
  ct_tensor_list_free(&in);
  ct_program_free(&prog);
  ct_lg_plan_free(p);
  ct_graph_free(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("lg_cost");
  TCase *tc = tcase_create("estimate");
  tcase_add_loop_test(tc, test_estimate_is_simulated_compute, 0, (int)(sizeof cases / sizeof cases[0]));
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
