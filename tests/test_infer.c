/* test_infer.c: reference/ — the float interpreter (input matching, constants, outputs,
 * dump, missing kernels, fused activations) and the `ctpu infer` command. Image decoding and
 * input files: test_inputs.c. */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "ir/ir.h"
#include "onnx/onnx.pb-c.h"
#include "io/image.h"
#include "io/inputs.h"
#include "reference/interp.h"
#include "ops/kernel.h"
#include "ops/shape.h"
#include "tests/testutil.h"

START_TEST(test_run_passes_input_and_weight_through) {
  ct_graph *g = ct_graph_new("t", "top");
  int64_t s[2] = {2, 3};
  ct_value *x = ct_test_add_input(g, "x", CT_F32, 2, s);
  ct_value *w = ct_graph_add_weight(g, "w", ct_test_f32_ramp("w", 2, s, 10));
  ct_value *outs[3] = {w, x, x};
  ck_assert(ct_graph_set_outputs(g, 3, outs));
  ct_tensor_list in, out;
  ct_tensor_list_init(&in);
  ct_tensor_list_init(&out);
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("x", 2, s, 1)));
  ct_diag d;
  ck_assert_int_eq(ct_ref_run(g, NULL, &in, &out, &d), CT_OK);
  ck_assert_int_eq(out.n, 2); /* x returned twice is one output (ct_graph_output_repeated) */
  ck_assert_str_eq(out.items[0]->name, "w");
  ck_assert_str_eq(out.items[1]->name, "x");
  ck_assert_float_eq(((float *)out.items[0]->data)[5], 15.0f);
  ck_assert_float_eq(((float *)out.items[1]->data)[5], 6.0f);
  /* outputs are copies: the caller's input and the graph's weight stay valid */
  ck_assert_ptr_ne(out.items[1], in.items[0]);
  ck_assert_ptr_ne(out.items[0], w->data);
  ct_tensor_list_free(&in);
  ct_tensor_list_free(&out);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_run_checks_input_count_name_shape_dtype) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t s[2] = {2, 3}, s2[2] = {3, 2};
  ct_value *x = ct_test_add_input(g, "x", CT_F32, 2, s);
  ck_assert(ct_graph_set_outputs(g, 1, &x));
  ct_tensor_list in, out;
  ct_tensor_list_init(&in);
  ct_tensor_list_init(&out);
  ct_diag d;
  ck_assert_int_eq(ct_ref_run(g, NULL, &in, &out, &d), CT_ERR_USAGE);
  ck_assert_str_eq(d.msg, "module \"m\" has 1 input, 0 given");
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("y", 2, s, 0)));
  ck_assert_int_eq(ct_ref_run(g, NULL, &in, &out, &d), CT_ERR_USAGE);
  ck_assert_str_eq(d.msg, "no input tensor for input \"x\"");
  ct_tensor_list_free(&in);
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("x", 2, s2, 0)));
  ck_assert_int_eq(ct_ref_run(g, NULL, &in, &out, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "input \"x\": expected f32 2x3, given f32 3x2");
  ct_tensor_list_free(&in);
  ck_assert(ct_tensor_list_push(&in, ct_tensor_new(CT_I32, 2, s, "x")));
  ck_assert_int_eq(ct_ref_run(g, NULL, &in, &out, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "input \"x\": expected f32 2x3, given i32 2x3");
  ck_assert_int_eq(out.n, 0);
  ct_tensor_list_free(&in);
  ct_graph_free(g);
}
END_TEST

/* Some op kind with one input and one output that has no reference kernel, if any. */
static bool find_kernelless_unary(ct_op_kind *k) {
  for (int i = 0; i < CT_OP_COUNT; i++) {
    int min_in, max_in, min_out, max_out;
    ct_op_arity((ct_op_kind)i, &min_in, &max_in, &min_out, &max_out);
    if (i == CT_OP_INPUT || i == CT_OP_WEIGHT || min_in != 1 || min_out != 1) continue;
    if (!ct_kernel_of((ct_op_kind)i)) return (*k = (ct_op_kind)i), true;
  }
  return false;
}

START_TEST(test_run_reports_missing_kernel_naming_node_and_op) {
  ct_op_kind k;
  if (!find_kernelless_unary(&k)) return; /* every op has a kernel: nothing to prove */
  ct_graph *g = ct_graph_new("m", "top");
  int64_t s[1] = {4};
  ct_value *x = ct_test_add_input(g, "x", CT_F32, 1, s);
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 1, s);
  ck_assert_ptr_nonnull(ct_graph_add_op(g, k, "node_7", 1, &x, 1, &y));
  ck_assert(ct_graph_set_outputs(g, 1, &y));
  ct_tensor_list in, out;
  ct_tensor_list_init(&in);
  ct_tensor_list_init(&out);
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("x", 1, s, 0)));
  ct_diag d;
  ck_assert_int_eq(ct_ref_run(g, NULL, &in, &out, &d), CT_ERR_INPUT);
  char want[128];
  snprintf(want, sizeof want, "node \"node_7\": op %s has no reference kernel", ct_op_name(k));
  ck_assert_str_eq(d.msg, want);
  ck_assert_int_eq(out.n, 0);
  ct_tensor_list_free(&in);
  ct_graph_free(g);
}
END_TEST

static void count_progress(void *user, int done, int total, const ct_op *op) {
  (void)op;
  int *calls = user;
  ck_assert_int_le(done, total);
  (*calls)++;
}

START_TEST(test_run_dumps_inputs_not_weights_and_reports_progress) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t s[1] = {3};
  ct_value *x = ct_test_add_input(g, "in/x", CT_F32, 1, s);
  ct_value *w = ct_graph_add_weight(g, "w", ct_test_f32_ramp("w", 1, s, 0));
  ct_value *outs[2] = {x, w};
  ck_assert(ct_graph_set_outputs(g, 2, outs));
  const char *path = ct_test_tmp_path("dump.h5");
  ct_diag d;
  ct_h5_writer *wr = NULL;
  ck_assert_int_eq(ct_h5_writer_open(&wr, path, &d), CT_OK);
  int calls = 0;
  ct_ref_options opt = {.threads = 2, .dump = wr, .progress = count_progress, .progress_user = &calls};
  ct_tensor_list in, out, dumped;
  ct_tensor_list_init(&in);
  ct_tensor_list_init(&out);
  ct_tensor_list_init(&dumped);
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("in/x", 1, s, 7)));
  ck_assert_int_eq(ct_ref_run(g, &opt, &in, &out, &d), CT_OK);
  ck_assert_int_eq(ct_h5_writer_commit(wr, &d), CT_OK);
  ck_assert_int_eq(calls, 2);
  ck_assert_int_eq(ct_h5_read(path, &dumped, &d), CT_OK);
  ck_assert_int_eq(dumped.n, 1);
  ck_assert_str_eq(dumped.items[0]->name, "in/x");
  ck_assert_float_eq(((float *)dumped.items[0]->data)[2], 9.0f);
  ct_tensor_list_free(&in);
  ct_tensor_list_free(&out);
  ct_tensor_list_free(&dumped);
  ct_graph_free(g);
}
END_TEST

/* x → Relu → Add(·, w) → Neg; outputs (neg, relu); a Relu whose output is a folded constant. */
START_TEST(test_run_chain_with_dump_and_folded_constant) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t s[1] = {6};
  ct_value *x = ct_test_add_input(g, "x", CT_F32, 1, s);
  ct_value *w = ct_graph_add_weight(g, "w", ct_test_f32_ramp("w", 1, s, 10));
  ct_value *r = ct_graph_add_value(g, "r", CT_F32, 1, s), *a = ct_graph_add_value(g, "a", CT_F32, 1, s);
  ct_value *n = ct_graph_add_value(g, "n", CT_F32, 1, s), *f = ct_graph_add_value(g, "f", CT_F32, 1, s);
  ct_value *ra[2] = {r, w};
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_RELU, "relu", 1, &x, 1, &r));
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_ADD, "add", 2, ra, 1, &a));
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_NEG, "neg", 1, &a, 1, &n));
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_RELU, "folded", 1, &x, 1, &f));
  f->data = ct_test_f32_ramp("f", 1, s, -100); /* not relu(x): proves the constant is used as is */
  ct_value *outs[3] = {n, r, f};
  ck_assert(ct_graph_set_outputs(g, 3, outs));
  const char *path = ct_test_tmp_path("chain.h5");
  ct_diag d;
  ct_h5_writer *wr = NULL;
  ck_assert_int_eq(ct_h5_writer_open(&wr, path, &d), CT_OK);
  ct_ref_options opt = {.threads = 1, .dump = wr};
  ct_tensor_list in, out, dumped;
  ct_tensor_list_init(&in);
  ct_tensor_list_init(&out);
  ct_tensor_list_init(&dumped);
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("x", 1, s, -2))); /* -2 -1 0 1 2 3 */
  ck_assert_int_eq(ct_ref_run(g, &opt, &in, &out, &d), CT_OK);
  ck_assert_int_eq(ct_h5_writer_commit(wr, &d), CT_OK);
  static const float want_n[6] = {-10, -11, -12, -14, -16, -18}, want_r[6] = {0, 0, 0, 1, 2, 3};
  ck_assert_int_eq(out.n, 3);
  ck_assert_mem_eq(out.items[0]->data, want_n, sizeof want_n);
  ck_assert_mem_eq(out.items[1]->data, want_r, sizeof want_r);
  ck_assert_float_eq(((float *)out.items[2]->data)[0], -100.0f);
  ck_assert_str_eq(out.items[0]->name, "n");
  ck_assert_int_eq(ct_h5_read(path, &dumped, &d), CT_OK);
  ck_assert_int_eq(dumped.n, 4); /* x r a n: not the weight, not the folded constant */
  ck_assert_ptr_nonnull(ct_tensor_list_find(&dumped, "x"));
  ct_tensor *da = ct_tensor_list_find(&dumped, "a");
  ck_assert_ptr_nonnull(da);
  ck_assert_float_eq(((float *)da->data)[5], 18.0f);
  ck_assert_ptr_null(ct_tensor_list_find(&dumped, "f"));
  ct_tensor_list_free(&in);
  ct_tensor_list_free(&out);
  ct_tensor_list_free(&dumped);
  ct_graph_free(g);
}
END_TEST

/* With a ct_ref_consts, an op whose operands are all constant (Neg of a weight) runs in the
 * first run only: later runs give its first result even after the weight's data changed
 * (which callers must not do: here it proves the reuse), a run without the cache sees the
 * change, and another graph rebinds the cache. Outputs and the reader of the cached value
 * are right in every run. */
START_TEST(test_run_consts_cache_reuses_constant_results) {
  int64_t s[1] = {4};
  ct_graph *g = ct_graph_new("c", "top"), *g2 = ct_graph_new("c2", "top");
  ct_value *x = ct_test_add_input(g, "x", CT_F32, 1, s), *w = ct_graph_add_weight(g, "w", ct_test_f32_ramp("w", 1, s, 1));
  ct_value *nw = ct_graph_add_value(g, "nw", CT_F32, 1, s), *a = ct_graph_add_value(g, "a", CT_F32, 1, s);
  ct_value *xa[2] = {x, nw};
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_NEG, "neg", 1, &w, 1, &nw));
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_ADD, "add", 2, xa, 1, &a));
  ct_value *outs[2] = {a, nw};
  ck_assert(ct_graph_set_outputs(g, 2, outs));
  ct_value *x2 = ct_test_add_input(g2, "x", CT_F32, 1, s), *w2 = ct_graph_add_weight(g2, "w", ct_test_f32_ramp("w", 1, s, 5));
  ct_value *n2 = ct_graph_add_value(g2, "nw", CT_F32, 1, s), *a2 = ct_graph_add_value(g2, "a", CT_F32, 1, s);
  ct_value *xa2[2] = {x2, n2};
  ck_assert_ptr_nonnull(ct_graph_add_op(g2, CT_OP_NEG, "neg", 1, &w2, 1, &n2));
  ck_assert_ptr_nonnull(ct_graph_add_op(g2, CT_OP_ADD, "add", 2, xa2, 1, &a2));
  ck_assert(ct_graph_set_outputs(g2, 1, &a2));
  ct_ref_consts *c = ct_ref_consts_new();
  ck_assert_ptr_nonnull(c);
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("x", 1, s, 10))); /* 10 11 12 13 */
  ct_diag d;
  for (int run = 0; run < 5; run++) {
    if (run == 2) ((float *)w->data->data)[0] = 100; /* w 100 2 3 4 */
    const ct_graph *gr = run == 4 ? g2 : g;
    ct_ref_options opt = {.threads = 1, .consts = run == 3 ? NULL : c};
    ct_tensor_list out;
    ct_tensor_list_init(&out);
    ck_assert_int_eq(ct_ref_run(gr, &opt, &in, &out, &d), CT_OK);
    float want0 = run == 4 ? 10 - 5 : run == 3 ? 10 - 100 : 10 - 1; /* x0 - w0: cached -1 in runs 1, 2 */
    ck_assert_float_eq(((float *)out.items[0]->data)[0], want0);
    ck_assert_float_eq(((float *)out.items[0]->data)[3], run == 4 ? 13 - 8 : 13 - 4);
    if (run < 4) ck_assert_float_eq(((float *)out.items[1]->data)[0], run == 3 ? -100 : -1);
    ct_tensor_list_free(&out);
  }
  ct_ref_consts_free(c);
  ct_tensor_list_free(&in);
  ct_graph_free(g), ct_graph_free(g2);
}
END_TEST

/* Runs g on `in` with a pool of `threads` (1: none) into out (initialized here). */
static void run_on_threads(const ct_graph *g, const ct_tensor_list *in, int threads, ct_tensor_list *out) {
  ct_workpool *pool = threads > 1 ? ct_workpool_new(threads) : NULL;
  ct_diag d;
  ct_tensor_list_init(out);
  ck_assert_msg(ct_ref_run(g, &(ct_ref_options){.threads = 1, .pool = pool}, in, out, &d) == CT_OK, "%s", d.msg);
  ct_workpool_free(pool);
}

/* The f32 Add / Mul / Sub rows on the threads (a per-channel operand: rows of the
 * iterator; same shapes: one row cut in chunks; a last-axis operand: many short rows) give
 * the scalar formula's bits on 1, 2 and 3 threads. */
START_TEST(test_run_binary_rows_threads) {
  int64_t xs[4] = {2, 16, 64, 64}, ws[4] = {1, 16, 1, 1}, ss[1] = {64};
  ct_graph *g = ct_graph_new("b", "top");
  ct_value *x = ct_test_add_input(g, "x", CT_F32, 4, xs), *w = ct_graph_add_weight(g, "w", ct_test_f32_ramp("w", 4, ws, -7));
  ct_value *sv = ct_graph_add_weight(g, "s", ct_test_f32_ramp("s", 1, ss, 3));
  ct_value *a = ct_graph_add_value(g, "a", CT_F32, 4, xs), *m = ct_graph_add_value(g, "m", CT_F32, 4, xs);
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 4, xs);
  ct_value *i0[2] = {x, w}, *i1[2] = {a, x}, *i2[2] = {m, sv};
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_ADD, "add", 2, i0, 1, &a));
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_MUL, "mul", 2, i1, 1, &m));
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_SUB, "sub", 2, i2, 1, &y));
  ck_assert(ct_graph_set_outputs(g, 1, &y));
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  ct_tensor *tx = ct_test_f32_ramp("x", 4, xs, -100);
  for (int64_t i = 0; i < ct_tensor_numel(tx); i++) ((float *)tx->data)[i] *= 0.37f;
  ck_assert(ct_tensor_list_push(&in, tx));
  for (int threads = 1; threads <= 3; threads++) {
    ct_tensor_list out;
    run_on_threads(g, &in, threads, &out);
    const float *xv = tx->data, *got = out.items[0]->data;
    for (int64_t i = 0; i < ct_tensor_numel(tx); i++) {
      float av = xv[i] + ((float *)w->data->data)[i / 4096 % 16], want = av * xv[i] - ((float *)sv->data->data)[i % 64];
      ck_assert_msg(memcmp(&got[i], &want, sizeof want) == 0, "threads %d at %lld: %g, want %g", threads, (long long)i, got[i], want);
    }
    ct_tensor_list_free(&out);
  }
  ct_tensor_list_free(&in);
  ct_graph_free(g);
}
END_TEST

/* Resize (linear and nearest, by scales) and GlobalAveragePool with their rows / planes on
 * 2 and 3 threads give the bits of 1 thread. */
START_TEST(test_run_resize_gap_threads) {
  int64_t xs[4] = {1, 6, 48, 40}, ys[4] = {1, 6, 96, 80}, gs[4] = {1, 6, 1, 1}, four[1] = {4};
  for (int mode = 0; mode < 2; mode++) {
    ct_graph *g = ct_graph_new("r", "top");
    ct_value *x = ct_test_add_input(g, "x", CT_F32, 4, xs);
    ct_tensor *sc = ct_tensor_new(CT_F32, 1, four, "scales");
    float scv[4] = {1, 1, 2, 2};
    memcpy(sc->data, scv, sizeof scv);
    ct_value *scales = ct_graph_add_weight(g, "scales", sc), *y = ct_graph_add_value(g, "y", CT_F32, 4, ys);
    ct_value *gp = ct_graph_add_value(g, "g", CT_F32, 4, gs), *ins[3] = {x, NULL, scales};
    ct_op *rz = ct_graph_add_op(g, CT_OP_RESIZE, "rz", 3, ins, 1, &y);
    ck_assert_ptr_nonnull(rz);
    ck_assert(ct_op_set_string(g, rz, "mode", mode ? "nearest" : "linear"));
    ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_GLOBALAVERAGEPOOL, "gap", 1, &y, 1, &gp));
    ct_value *outs[2] = {y, gp};
    ck_assert(ct_graph_set_outputs(g, 2, outs));
    ct_tensor_list in, ref;
    ct_tensor_list_init(&in);
    ct_tensor *tx = ct_test_f32_ramp("x", 4, xs, -50);
    for (int64_t i = 0; i < ct_tensor_numel(tx); i++) ((float *)tx->data)[i] = sinf((float)i * 0.37f) * 3;
    ck_assert(ct_tensor_list_push(&in, tx));
    run_on_threads(g, &in, 1, &ref);
    for (int threads = 2; threads <= 3; threads++) {
      ct_tensor_list out;
      run_on_threads(g, &in, threads, &out);
      for (int k = 0; k < 2; k++)
        ck_assert_msg(memcmp(out.items[k]->data, ref.items[k]->data, out.items[k]->nbytes) == 0, "mode %d threads %d output %d",
                      mode, threads, k);
      ct_tensor_list_free(&out);
    }
    ck_assert_float_eq(((float *)ref.items[0]->data)[0], ((float *)tx->data)[0]); /* the corner keeps its value */
    ct_tensor_list_free(&in), ct_tensor_list_free(&ref);
    ct_graph_free(g);
  }
}
END_TEST

/* Counts on_op calls and checks that every op's results exist when it is called. */
static ct_status count_op(void *user, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out,
                          ct_diag *d) {
  (void)in, (void)d;
  for (int k = 0; k < op->n_out; k++) ck_assert_ptr_nonnull(out[k]);
  ++*(int *)user;
  return CT_OK;
}

/* A Conv followed by the only reader of its result, a SiLU, runs fused (no hooks) with the
 * same bits as unfused (an on_op hook forces that; it still sees the Conv result); a Conv
 * whose result is also a module output, and one read by two ops, are not fused: x → Conv c1
 * → SiLU s1 → Conv c2 → HardSwish h2; c2 is an output; x → Conv c3 → Sigmoid g3 and Relu r3. */
START_TEST(test_run_fuses_conv_activation_same_bits) {
  ct_graph *g = ct_graph_new("f", "top");
  int64_t sx[4] = {1, 3, 9, 8}, sw[4] = {3, 3, 3, 3}, sb[1] = {3};
  ct_value *x = ct_test_add_input(g, "x", CT_F32, 4, sx), *v[9];
  static const char *const names[9] = {"c1", "s1", "c2", "h2", "c3", "g3", "r3", "w", "b"};
  for (int i = 0; i < 7; i++) v[i] = ct_graph_add_value(g, names[i], CT_F32, -1, NULL);
  uint32_t seed = 99;
  ct_tensor *wt = ct_tensor_new(CT_F32, 4, sw, "w"), *bt = ct_test_f32_ramp("b", 1, sb, -1);
  for (int64_t i = 0; i < ct_tensor_numel(wt); i++) {
    seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
    ((float *)wt->data)[i] = (float)((double)seed / 4294967296.0 - 0.5);
  }
  v[7] = ct_graph_add_weight(g, "w", wt), v[8] = ct_graph_add_weight(g, "b", bt);
  ct_value *in1[3] = {x, v[7], v[8]}, *in2[3] = {v[1], v[7], v[8]};
  ct_op *ops[7] = {ct_graph_add_op(g, CT_OP_CONV, "c1", 3, in1, 1, &v[0]),
                   ct_graph_add_op(g, CT_OP_SILU, "s1", 1, &v[0], 1, &v[1]),
                   ct_graph_add_op(g, CT_OP_CONV, "c2", 3, in2, 1, &v[2]),
                   ct_graph_add_op(g, CT_OP_HARDSWISH, "h2", 1, &v[2], 1, &v[3]),
                   ct_graph_add_op(g, CT_OP_CONV, "c3", 3, in1, 1, &v[4]),
                   ct_graph_add_op(g, CT_OP_SIGMOID, "g3", 1, &v[4], 1, &v[5]),
                   ct_graph_add_op(g, CT_OP_RELU, "r3", 1, &v[4], 1, &v[6])};
  for (int i = 0; i < 7; i++) {
    ck_assert_ptr_nonnull(ops[i]);
    if (ops[i]->kind == CT_OP_CONV) ck_assert(ct_op_set_ints(g, ops[i], "pads", 4, (const int64_t[]){1, 1, 1, 1}));
    ct_diag d;
    ck_assert_msg(ct_shape_fn_of(ops[i]->kind)(g, ops[i], &d) == CT_OK, "%s", d.msg);
  }
  ct_value *outs[4] = {v[3], v[2], v[5], v[6]};
  ck_assert(ct_graph_set_outputs(g, 4, outs));
  ct_tensor_list in, out[2];
  ct_tensor_list_init(&in);
  ck_assert(ct_tensor_list_push(&in, ct_test_f32_ramp("x", 4, sx, -30)));
  int calls = 0;
  for (int r = 0; r < 2; r++) {
    ct_ref_options opt = {.threads = 1, .on_op = r ? count_op : NULL, .on_op_user = &calls};
    ct_tensor_list_init(&out[r]);
    ct_diag d;
    ck_assert_msg(ct_ref_run(g, &opt, &in, &out[r], &d) == CT_OK, "%s", d.msg);
    ck_assert_int_eq(out[r].n, 4);
  }
  ck_assert_int_eq(calls, 10); /* input, 2 weights, 7 ops */
  for (int i = 0; i < 4; i++) {
    ck_assert_str_eq(out[0].items[i]->name, out[1].items[i]->name);
    ck_assert_int_eq(out[0].items[i]->nbytes, out[1].items[i]->nbytes);
    ck_assert(memcmp(out[0].items[i]->data, out[1].items[i]->data, out[0].items[i]->nbytes) == 0);
  }
  /* a caller-owned pool, kept across runs, gives the same bits and outlives them */
  ct_workpool *pool = ct_workpool_new(3);
  ck_assert_ptr_nonnull(pool);
  for (int r = 0; r < 2; r++) {
    ct_tensor_list po;
    ct_tensor_list_init(&po);
    ct_diag d;
    ck_assert_msg(ct_ref_run(g, &(ct_ref_options){.threads = 1, .pool = pool}, &in, &po, &d) == CT_OK, "%s", d.msg);
    for (int i = 0; i < 4; i++)
      ck_assert(po.items[i]->nbytes == out[0].items[i]->nbytes &&
                memcmp(po.items[i]->data, out[0].items[i]->data, po.items[i]->nbytes) == 0);
    ct_tensor_list_free(&po);
  }
  ck_assert_int_eq(ct_workpool_threads(pool), 3);
  ct_workpool_free(pool);
  const float *h2 = out[0].items[0]->data, *c2 = out[0].items[1]->data; /* h2 = hardswish(c2) */
  for (int64_t i = 0; i < ct_tensor_numel(out[0].items[0]); i++) {
    double t = c2[i] / 6.0 + 0.5;
    ck_assert_float_eq_tol(h2[i], (float)(c2[i] * (t < 0 ? 0 : t > 1 ? 1 : t)), 1e-6);
  }
  ct_tensor_list_free(&in);
  ct_tensor_list_free(&out[0]);
  ct_tensor_list_free(&out[1]);
  ct_graph_free(g);
}
END_TEST

/* ---- ctpu infer ---- */

static const char relu_top[] =
    "module @small attributes {chip = \"\", weights = \"\"} {\n"
    "  %0 = top.Input() : tensor<1x2x2x2xf32> loc(\"x\")\n"
    "  %1 = top.Relu(%0) : tensor<1x2x2x2xf32> loc(\"relu\" -> \"y\")\n"
    "  %2 = top.Neg(%1) : tensor<1x2x2x2xf32> loc(\"neg\" -> \"z\")\n"
    "  return %2, %1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>\n"
    "}\n";

START_TEST(test_cli_infer_outputs_dump_and_errors) {
  const char *top = ct_test_tmp_path("relu.top"), *in = ct_test_tmp_path("relu_in.h5");
  const char *res = ct_test_tmp_path("relu_out.h5"), *all = ct_test_tmp_path("relu_all.h5");
  ck_assert(ct_test_write_file(top, relu_top, strlen(relu_top)));
  int64_t s[4] = {1, 2, 2, 2};
  ct_tensor *x = ct_test_f32_ramp("x", 4, s, -4); /* -4 .. 3 */
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(in, &x, 1, &d), CT_OK);
  char out[4096];
  int rc = ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s' --dump-all '%s' --threads 2", top, in, res, all);
  ck_assert_msg(rc == 0, "%s", out);
  ck_assert_str_eq(out, ""); /* no progress line when stderr is not a terminal */
  ct_tensor_list got, dumped;
  ct_tensor_list_init(&got);
  ct_tensor_list_init(&dumped);
  ck_assert_int_eq(ct_h5_read(res, &got, &d), CT_OK);
  ck_assert_int_eq(ct_h5_read(all, &dumped, &d), CT_OK);
  ck_assert_int_eq(got.n, 2);
  ck_assert_int_eq(dumped.n, 3);
  static const float want_z[8] = {0, 0, 0, 0, 0, -1, -2, -3};
  ct_tensor *z = ct_tensor_list_find(&got, "z");
  ck_assert_ptr_nonnull(z);
  for (int i = 0; i < 8; i++) ck_assert_float_eq(((float *)z->data)[i], want_z[i]); /* -0 == 0 */
  ck_assert_ptr_nonnull(ct_tensor_list_find(&dumped, "y"));
  ct_tensor_list_free(&got);
  ct_tensor_list_free(&dumped);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "infer --help"), 0);
  ck_assert_ptr_nonnull(strstr(out, "usage: ctpu infer"));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "infer '%s' -o '%s'", top, res), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s' --bogus", top, in, res), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s'", top, in), 2);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' -o '%s'", in, in, res), 3);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "infer '%s' --input '%s' '%s' -o '%s'", top, in, in, res), 2);
  ck_assert_msg(strstr(out, "model has 1 input (\"x\"), 2 given"), "%s", out);
  ct_tensor_free(x);
}
END_TEST

static Suite *infer_suite(void) {
  Suite *s = suite_create("infer");
  TCase *tc = tcase_create("interp");
  tcase_add_test(tc, test_run_passes_input_and_weight_through);
  tcase_add_test(tc, test_run_checks_input_count_name_shape_dtype);
  tcase_add_test(tc, test_run_reports_missing_kernel_naming_node_and_op);
  tcase_add_test(tc, test_run_dumps_inputs_not_weights_and_reports_progress);
  tcase_add_test(tc, test_run_chain_with_dump_and_folded_constant);
  tcase_add_test(tc, test_run_consts_cache_reuses_constant_results);
  tcase_add_test(tc, test_run_binary_rows_threads);
  tcase_add_test(tc, test_run_resize_gap_threads);
  tcase_add_test(tc, test_run_fuses_conv_activation_same_bits);
  suite_add_tcase(s, tc);
  TCase *tf = tcase_create("cli");
  tcase_add_test(tf, test_cli_infer_outputs_dump_and_errors);
  suite_add_tcase(s, tf);
  return s;
}

int main(void) { return ct_test_run_suite(infer_suite()); }
