/* test_lower.c: the lowering of small Top graphs to INT8 (weights, bias, casts, parameters
 * from a hand-written calibration table; per-channel activations and their folding, LUTs with
 * absorbed affine ops and the 16-bit LUT, Concat left float) and the command's errors. The
 * integer Tpu kernels themselves: test_tpu_ops.c. */
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

/* A small Top graph Conv(relu) → Sigmoid lowered to INT8 with a hand-written table. */
static ct_graph *small_top(void) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t xs[] = {1, 2, 4, 4}, ws[] = {3, 2, 1, 1}, bs[] = {3}, ys[] = {1, 3, 4, 4};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 4, xs);
  ck_assert(ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x));
  ct_tensor *w = ct_tensor_new(CT_F32, 4, ws, "w"), *b = ct_tensor_new(CT_F32, 1, bs, "b");
  float wv[] = {0.5f, -0.25f, 1.0f, 0.0f, -2.0f, 0.125f}, bv[] = {0.1f, -0.2f, 0.3f};
  memcpy(w->data, wv, sizeof wv), memcpy(b->data, bv, sizeof bv);
  ct_value *in[] = {x, ct_graph_add_weight(g, NULL, w), ct_graph_add_weight(g, NULL, b)};
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 4, ys), *z = ct_graph_add_value(g, "z", CT_F32, 4, ys);
  ct_op *conv = ct_graph_add_op(g, CT_OP_CONV, "conv", 3, in, 1, &y);
  int64_t k[] = {1, 1}, one[] = {1, 1}, pads[] = {0, 0, 0, 0};
  ck_assert(ct_op_set_ints(g, conv, "kernel_shape", 2, k) && ct_op_set_ints(g, conv, "strides", 2, one) &&
            ct_op_set_ints(g, conv, "dilations", 2, one) && ct_op_set_ints(g, conv, "pads", 4, pads) &&
            ct_op_set_string(g, conv, "act", "relu"));
  ck_assert(ct_graph_add_op(g, CT_OP_SIGMOID, "sig", 1, &y, 1, &z));
  ck_assert(ct_graph_set_outputs(g, 1, &z));
  return g;
}

START_TEST(test_lower_small_graph) {
  ct_graph *g = small_top();
  ct_calib_table t;
  ct_calib_table_init(&t);
  ct_diag d;
  ck_assert(ct_calib_table_add(&t, "x", 2.0, -2.0, 1.5, 0, &d) == CT_OK);
  ck_assert(ct_calib_table_add(&t, "y", 5.1, 0.0, 5.1, 0, &d) == CT_OK);
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = &t};
  /* z (the Sigmoid's output) is missing: a clear error */
  ck_assert_int_eq(ct_lower(g, &o, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "tensor \"z\" is not in the calibration table");
  ct_graph_free(g);
  g = small_top();
  ck_assert(ct_calib_table_add(&t, "z", 1.0, 0.5, 1.0, 0, &d) == CT_OK);
  ck_assert_msg(ct_lower(g, &o, &d) == CT_OK, "%s", d.msg);
  ck_assert_str_eq(g->dialect, "tpu");
  ct_value *y = ct_graph_find_value(g, "y"), *z = ct_graph_find_value(g, "z"), *xq = ct_graph_find_value(g, "x_to_i8");
  ck_assert(y && z && xq);
  /* activation scales are f32 values (the CAST field): 2/127 and 5.1/255 rounded to f32 */
  ck_assert_int_eq(xq->dtype, CT_I8); /* x has negative values: i8, scale 2/127 */
  ck_assert(xq->scale[0] == (double)(float)(2.0 / 127));
  ck_assert_int_eq(y->dtype, CT_U8); /* non-negative (min 0): u8, scale 5.1/255 = 0.02 */
  ck_assert(y->scale[0] == (double)(float)0.02);
  const ct_op *conv = y->def, *lut = z->def;
  ck_assert_int_eq(conv->in[0]->dtype, CT_I8);
  ck_assert_int_eq(conv->in[1]->dtype, CT_I8);
  /* per channel: max|w[o]| / n, the finest exact grid: channel 2 {−2, 0.125} is on the grid
   * 0.125 = 2/16, so n = 112 (the largest multiple of 16 ≤ 127) */
  ck_assert_int_eq(conv->in[1]->n_scale, 3);
  ck_assert_double_eq_tol(conv->in[1]->scale[2], 2.0 / 112, 1e-15);
  ck_assert_int_eq(conv->in[2]->dtype, CT_I32); /* bias at s_in · s_w: 0.3 / (2/127 · 2/112) */
  ck_assert_int_eq(((int32_t *)conv->in[2]->data->data)[2], (int32_t)lround(0.3 / ((float)(2.0 / 127) * 2.0 / 112)));
  ck_assert_int_eq(lut->kind, CT_OP_LUT);
  ck_assert_str_eq(ct_op_get_string(lut, "fn", ""), "sigmoid");
  ct_graph_free(g);
  /* no table on a float model; an unknown name in a quantize table */
  g = small_top();
  o.calib = NULL;
  ck_assert_int_eq(ct_lower(g, &o, &d), CT_ERR_USAGE);
  ct_graph_free(g);
  g = small_top();
  ct_qtable q;
  ct_qtable_init(&q);
  ck_assert(ct_qtable_add(&q, "nope", CT_QMODE_F32, 7, &d) == CT_OK);
  o.calib = &t, o.qtable = &q;
  ck_assert_int_eq(ct_lower(g, &o, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "quantize table: line 7: no op or tensor named \"nope\"");
  ct_graph_free(g);
  /* a quantize-table row keeps the Sigmoid in F32 with a dequantizing Cast before it */
  g = small_top();
  ct_qtable_free(&q);
  ct_qtable_init(&q);
  ck_assert(ct_qtable_add(&q, "sig", CT_QMODE_F32, 1, &d) == CT_OK);
  ck_assert_msg(ct_lower(g, &o, &d) == CT_OK, "%s", d.msg);
  z = ct_graph_find_value(g, "z");
  ck_assert_int_eq(z->dtype, CT_F32);
  ck_assert_int_eq(z->def->kind, CT_OP_SIGMOID);
  ck_assert_int_eq(z->def->in[0]->def->kind, CT_OP_CAST);
  ct_graph_free(g);
  ct_qtable_free(&q);
  ct_calib_table_free(&t);
}
END_TEST

/* x (xs) → Conv 1×1 "conv" (weights {5, 0.02}: channel ranges 250× apart, ReLU) → y (ys, 2
 * channels) → Conv 1×1 `second` (weights v2 of shape w2s) → z (zs), the module output; the
 * second Conv into *c2. */
static ct_graph *conv_pair(const int64_t *xs, const int64_t *ys, const int64_t *zs, const int64_t *w2s, const float *v2,
                           const char *second, ct_op **c2) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t ws[] = {2, 1, 1, 1};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 4, xs);
  ck_assert(ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x));
  ct_tensor *w1 = ct_tensor_new(CT_F32, 4, ws, "w1"), *w2 = ct_tensor_new(CT_F32, 4, w2s, "w2");
  float v1[] = {5.0f, 0.02f};
  memcpy(w1->data, v1, sizeof v1), memcpy(w2->data, v2, sizeof(float) * 2);
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 4, ys), *z = ct_graph_add_value(g, "z", CT_F32, 4, zs);
  ct_value *in1[] = {x, ct_graph_add_weight(g, NULL, w1)}, *in2[] = {y, ct_graph_add_weight(g, NULL, w2)};
  ct_op *c1 = ct_graph_add_op(g, CT_OP_CONV, "conv", 2, in1, 1, &y);
  *c2 = ct_graph_add_op(g, CT_OP_CONV, second, 2, in2, 1, &z);
  int64_t k[] = {1, 1}, pads[] = {0, 0, 0, 0};
  for (ct_op *op = c1; op; op = op == c1 ? *c2 : NULL)
    ck_assert(ct_test_window_attrs(g, op, k, k, k, pads));
  ck_assert(ct_op_set_string(g, c1, "act", "relu") && ct_graph_set_outputs(g, 1, &z));
  return g;
}

/* x [1,1,4,4] → Conv → y [1,2,4,4] → depthwise Conv 1×1 (weights {0.5, 100}, ReLU) → z:
 * z = {2.5·x, 2·x}. */
static ct_graph *channel_top(void) {
  int64_t xs[] = {1, 1, 4, 4}, ys[] = {1, 2, 4, 4}, ws[] = {2, 1, 1, 1};
  float v2[] = {0.5f, 100.0f};
  ct_op *c2;
  ct_graph *g = conv_pair(xs, ys, ys, ws, v2, "dw", &c2);
  ck_assert(ct_op_set_int(g, c2, "group", 2) && ct_op_set_string(g, c2, "act", "relu"));
  return g;
}

/* Pushes x [1, 1, side, side] with x[k] = (k + i) / denom. */
static ct_status push_ramp(ct_tensor_list *in, int64_t i, int64_t side, float denom) {
  int64_t xs[] = {1, 1, side, side};
  ct_tensor *x = ct_tensor_new(CT_F32, 4, xs, "x");
  for (int64_t k = 0; k < side * side; k++) ((float *)x->data)[k] = (float)(k + i) / denom;
  ck_assert(ct_tensor_list_push(in, x));
  return CT_OK;
}

/* Sample i: x = (k + i) / 20 over the 16 elements, in [0, 1). */
static ct_status ramp_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  (void)user, (void)d;
  return push_ramp(in, i, 4, 20.0f);
}

/* t := g calibrated by max |x| on samples 0..n-1 (per-channel block unless no_channel). */
static void max_table(const ct_graph *g, int64_t n, ct_ref_sample_fn sample, bool no_channel, ct_calib_table *t) {
  ct_calibrate_options co = CT_CALIBRATE_DEFAULTS;
  co.method = CT_CALIB_MAX, co.no_channel = no_channel;
  ct_diag d;
  ct_calib_table_init(t);
  ck_assert_msg(ct_calibrate(g, n, sample, NULL, &co, t, &d) == CT_OK, "%s", d.msg);
}

/* Max |z − z_float| of channel ch after lowering channel_top with table t (qtable q;
 * --asymmetric when asym). */
static double channel_error_asym(const ct_calib_table *t, const ct_qtable *q, int ch, bool asym, int *n_scale_y) {
  ct_graph *g = channel_top();
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = t, .qtable = q, .asymmetric = asym};
  ct_diag d;
  ck_assert_msg(ct_lower(g, &o, &d) == CT_OK, "%s", d.msg);
  *n_scale_y = ct_graph_find_value(g, "y")->n_scale;
  ct_tensor_list in, out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&out);
  ramp_sample(NULL, 1, &in, &d); /* within the calibrated range */
  ct_ref_options ro = {.threads = 1};
  ck_assert_msg(ct_ref_run(g, &ro, &in, &out, &d) == CT_OK, "%s", d.msg);
  ct_tensor *z = ct_quant_dequant_tensor(out.items[0]);
  double err = 0, wz = ch == 0 ? 2.5 : 2.0;
  for (int k = 0; k < 16; k++) err = fmax(err, fabs(ct_tensor_get_f64(z, 16 * ch + k) - wz * ct_tensor_get_f64(in.items[0], k)));
  ct_tensor_free(z), ct_tensor_list_free(&in), ct_tensor_list_free(&out), ct_graph_free(g);
  return err;
}

static double channel_error(const ct_calib_table *t, const ct_qtable *q, int ch, int *n_scale_y) {
  return channel_error_asym(t, q, ch, false, n_scale_y);
}

/* A Conv result read only by a depthwise Conv gets per-channel thresholds from calibration
 * and per-channel scales from the lowering: its small channel keeps its precision (the
 * per-tensor form loses it: step 5/255 against a range of 0.02). */
START_TEST(test_lower_channel_activation) {
  ct_graph *g = channel_top();
  ct_calib_table t, t2;
  ct_diag d;
  max_table(g, 2, ramp_sample, false, &t);
  max_table(g, 2, ramp_sample, true, &t2); /* --no-channel-thresholds: the same table without the block */
  ck_assert(t2.nch == 0 && t2.n == t.n);
  ct_calib_table_free(&t2);
  ct_graph_free(g);
  const ct_calib_wrow *r = ct_calib_table_find_channel(&t, "y");
  ck_assert(r && r->n == 2 && t.nch == 1); /* x and z have no depthwise reader */
  ck_assert_double_eq_tol(r->scale[0], 5.0 * 16 / 20, 1e-6);  /* max x = 16/20 */
  ck_assert_double_eq_tol(r->scale[1], 0.02 * 16 / 20, 1e-6);
  int ns;
  double e1 = channel_error(&t, NULL, 1, &ns);
  ck_assert_int_eq(ns, 2);
  ck_assert_double_le(e1, 0.02);          /* z step 2.5·0.8/255 ≈ 0.008, y step 0.016/255 ·100 */
  ck_assert_double_le(channel_error(&t, NULL, 0, &ns), 0.02);
  /* --asymmetric keeps the channel form (symmetric channels; the other tensors asymmetric) */
  ck_assert_double_le(channel_error_asym(&t, NULL, 1, true, &ns), 0.02);
  ck_assert_int_eq(ns, 2);
  /* the depthwise Conv forced to F32: y stays per tensor, channel 1 is lost */
  ct_qtable q;
  ct_qtable_init(&q);
  ck_assert(ct_qtable_add(&q, "dw", CT_QMODE_F32, 1, &d) == CT_OK);
  double e2 = channel_error(&t, &q, 1, &ns);
  ck_assert_int_eq(ns, 1);
  ck_assert_msg(e2 > 0.3, "per-tensor error %g", e2);
  fprintf(stderr, "channel activation: error %g per channel, %g per tensor\n", e1, e2);
  ct_qtable_free(&q);
  ct_calib_table_free(&t);
}
END_TEST

/* x [1,1,16,16] → Conv → y [1,2,16,16] → ordinary Conv 1×1 (weights {0.1, 25}) →
 * z [1,1,16,16] = 0.5·x + 0.5·x. */
static ct_graph *fold_top(void) {
  int64_t xs[] = {1, 1, 16, 16}, ys[] = {1, 2, 16, 16}, w2s[] = {1, 2, 1, 1};
  float v2[] = {0.1f, 25.0f};
  ct_op *c2;
  return conv_pair(xs, ys, xs, w2s, v2, "pw", &c2);
}

/* Sample i: x = (k + i) / 320 over the 256 elements, in [0, 1). */
static ct_status ramp256_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  (void)user, (void)d;
  return push_ramp(in, i, 16, 320.0f);
}

/* Max |z − x| after lowering fold_top with table t, on sample 1; the Tpu value y into *y_scales. */
static double fold_error(const ct_calib_table *t, int *y_scales) {
  ct_graph *g = fold_top();
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = t};
  ct_diag d;
  ck_assert_msg(ct_lower(g, &o, &d) == CT_OK, "%s", d.msg);
  *y_scales = ct_graph_find_value(g, "y")->n_scale;
  ct_tensor_list in, out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&out);
  ramp256_sample(NULL, 1, &in, &d);
  ct_ref_options ro = {.threads = 1};
  ck_assert_msg(ct_ref_run(g, &ro, &in, &out, &d) == CT_OK, "%s", d.msg);
  ct_tensor *z = ct_quant_dequant_tensor(out.items[0]);
  double err = 0;
  for (int k = 0; k < 256; k++) err = fmax(err, fabs(ct_tensor_get_f64(z, k) - ct_tensor_get_f64(in.items[0], k)));
  ct_tensor_free(z), ct_tensor_list_free(&in), ct_tensor_list_free(&out), ct_graph_free(g);
  return err;
}

/* An activation read by an ordinary Conv: calibration scores the migration strength (per
 * tensor loses channel 1: step 4/255 against a range of 0.016, which the Conv multiplies by
 * 25), writes per-channel thresholds, and the lowering folds the channel scales into the
 * Conv's weights; the result is within a few output steps of float. */
START_TEST(test_lower_channel_fold) {
  ct_graph *g = fold_top();
  ct_calib_table t, t2;
  max_table(g, 2, ramp256_sample, false, &t);
  max_table(g, 2, ramp256_sample, true, &t2);
  ct_graph_free(g);
  const ct_calib_wrow *r = ct_calib_table_find_channel(&t, "y");
  ck_assert_msg(r && r->n == 2, "no channel row for y");
  { /* the strength scores are summed in sample order: the same rows on 2 threads */
    ct_calibrate_options co = CT_CALIBRATE_DEFAULTS;
    co.method = CT_CALIB_MAX, co.threads = 2;
    ct_calib_table t3;
    ct_diag d;
    ct_calib_table_init(&t3);
    g = fold_top();
    ck_assert_msg(ct_calibrate(g, 3, ramp256_sample, NULL, &co, &t3, &d) == CT_OK, "%s", d.msg);
    co.threads = 1;
    ct_calib_table t4;
    ct_calib_table_init(&t4);
    ck_assert_msg(ct_calibrate(g, 3, ramp256_sample, NULL, &co, &t4, &d) == CT_OK, "%s", d.msg);
    const ct_calib_wrow *r3 = ct_calib_table_find_channel(&t3, "y"), *r4 = ct_calib_table_find_channel(&t4, "y");
    ck_assert(r3 && r4 && r3->scale[1] == r4->scale[1]);
    /* scored by the module output's error instead of the reading Conv's: the same choice here */
    co.channel_score_output = true;
    ct_calib_table t5;
    ct_calib_table_init(&t5);
    ck_assert_msg(ct_calibrate(g, 3, ramp256_sample, NULL, &co, &t5, &d) == CT_OK, "%s", d.msg);
    const ct_calib_wrow *r5 = ct_calib_table_find_channel(&t5, "y");
    ck_assert(r5 && r5->scale[1] < 0.5);
    ct_calib_table_free(&t3), ct_calib_table_free(&t4), ct_calib_table_free(&t5), ct_graph_free(g);
  }
  ck_assert_double_eq_tol(r->scale[0], 5.0 * 256 / 320, 1e-6); /* the tensor threshold, channel 0's max */
  ck_assert_double_lt(r->scale[1], 0.5);                       /* channel 1 migrated toward its 0.016 */
  int ns = 0;
  double e1 = fold_error(&t, &ns);
  ck_assert_int_eq(ns, 2);
  double e2 = fold_error(&t2, &ns);
  ck_assert_int_eq(ns, 1);
  fprintf(stderr, "channel fold: error %g folded, %g per tensor\n", e1, e2);
  ck_assert_msg(e1 < 0.02 && e2 > 2 * e1, "folded %g, per tensor %g", e1, e2);
  ct_calib_table_free(&t), ct_calib_table_free(&t2);
}
END_TEST

/* x [1, 8] → HardSwish → Mul 0.5 → Add −0.25 → Gemm (w [3, 8], b [3]) → y [1, 3], the
 * module output. */
static ct_graph *affine_top(void) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t xs[] = {1, 8}, one[] = {1}, ws[] = {3, 8}, bs[] = {3}, ys[] = {1, 3};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 2, xs);
  ck_assert(ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x));
  ct_tensor *k1 = ct_tensor_new(CT_F32, 1, one, "k1"), *k2 = ct_tensor_new(CT_F32, 1, one, "k2");
  ct_tensor *w = ct_tensor_new(CT_F32, 2, ws, "w"), *b = ct_tensor_new(CT_F32, 1, bs, "b");
  ((float *)k1->data)[0] = 0.5f, ((float *)k2->data)[0] = -0.25f;
  for (int i = 0; i < 24; i++) ((float *)w->data)[i] = (float)((i * 7) % 11 - 5) / 8.0f;
  for (int i = 0; i < 3; i++) ((float *)b->data)[i] = 0.1f * (float)i;
  ct_value *h = ct_graph_add_value(g, "h", CT_F32, 2, xs), *m = ct_graph_add_value(g, "m", CT_F32, 2, xs);
  ct_value *a = ct_graph_add_value(g, "a", CT_F32, 2, xs), *y = ct_graph_add_value(g, "y", CT_F32, 2, ys);
  ct_value *in_m[] = {h, ct_graph_add_weight(g, NULL, k1)}, *in_a[] = {m, ct_graph_add_weight(g, NULL, k2)};
  ct_value *in_g[] = {a, ct_graph_add_weight(g, NULL, w), ct_graph_add_weight(g, NULL, b)};
  ck_assert(ct_graph_add_op(g, CT_OP_HARDSWISH, "hs", 1, &x, 1, &h) && ct_graph_add_op(g, CT_OP_MUL, "mul", 2, in_m, 1, &m) &&
            ct_graph_add_op(g, CT_OP_ADD, "add", 2, in_a, 1, &a));
  ct_op *gm = ct_graph_add_op(g, CT_OP_GEMM, "fc", 3, in_g, 1, &y);
  ck_assert(gm && ct_op_set_int(g, gm, "transB", 1) && ct_graph_set_outputs(g, 1, &y));
  return g;
}

/* Sample i: x = (k − 4 + i/4) over 8 elements. */
static ct_status affine_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  (void)user, (void)d;
  int64_t xs[] = {1, 8};
  ct_tensor *x = ct_tensor_new(CT_F32, 2, xs, "x");
  for (int k = 0; k < 8; k++) ((float *)x->data)[k] = (float)(k - 4) + (float)i / 4.0f;
  ck_assert(ct_tensor_list_push(in, x));
  return CT_OK;
}

/* A LUT activation absorbs the scalar Mul / Add after it (one table of 0.5·hswish(x) − 0.25,
 * named by the chain's last tensor), and a Gemm whose result is only the module output keeps
 * its int32 accumulator (per-column scale s_a·s_w): the dequantized output equals the float
 * Gemm of the dequantized LUT result up to float rounding. */
START_TEST(test_lower_lut_affine_and_int32_output) {
  ct_graph *g = affine_top();
  ct_calib_table t;
  ct_diag d;
  max_table(g, 3, affine_sample, false, &t);
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = &t};
  ck_assert_msg(ct_lower(g, &o, &d) == CT_OK, "%s", d.msg);
  int luts = 0, elts = 0;
  for (int i = 0; i < g->n_ops; i++) luts += g->ops[i]->kind == CT_OP_LUT, elts += g->ops[i]->kind == CT_OP_MUL || g->ops[i]->kind == CT_OP_ADD;
  ck_assert_int_eq(luts, 1);
  ck_assert_int_eq(elts, 0);
  ct_value *a = ct_graph_find_value(g, "a"), *y = ct_graph_find_value(g, "y");
  ck_assert(a && a->def && a->def->kind == CT_OP_LUT && a->n_scale == 1);
  ck_assert(y->dtype == CT_I32 && y->n_scale == 3 && !ct_op_attr(y->def, "multiplier"));
  ct_tensor_list in, out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&out);
  affine_sample(NULL, 1, &in, &d);
  ct_ref_options ro = {.threads = 1};
  ck_assert_msg(ct_ref_run(g, &ro, &in, &out, &d) == CT_OK, "%s", d.msg);
  const ct_value *xq = a->def->in[0], *wq = y->def->in[1], *bq = y->def->in[2];
  int n = 0;
  const int64_t *tab = ct_op_get_ints(a->def, "table", &n);
  ck_assert_int_eq(n, 256);
  int64_t acc[3] = {0, 0, 0};
  for (int k = 0; k < 8; k++) {
    double xv = ((float *)in.items[0]->data)[k];
    int32_t qx = ct_quant_quantize(xv, xq->scale[0], xq->zero_point[0], xq->dtype);
    double xd = (qx - xq->zero_point[0]) * xq->scale[0], hv = xd * fmin(fmax(xd / 6 + 0.5, 0), 1);
    int32_t qa = (int32_t)(a->dtype == CT_I8 ? (int8_t)tab[ct_quant_lut_index(qx, xq->dtype)] : tab[ct_quant_lut_index(qx, xq->dtype)]);
    /* the table entry is 0.5·hswish − 0.25 of the quantized input, rounded once */
    ck_assert_msg(fabs(qa * a->scale[0] - (0.5 * hv - 0.25)) <= a->scale[0] / 2 + 1e-9, "element %d", k);
    for (int j = 0; j < 3; j++) acc[j] += (int64_t)(qa - a->zero_point[0]) * ct_tensor_get_i64(wq->data, j * 8 + k);
  }
  for (int j = 0; j < 3; j++) /* the stored result is the accumulator itself */
    ck_assert_int_eq(ct_tensor_get_i64(out.items[0], j), acc[j] + ct_tensor_get_i64(bq->data, j));
  ct_tensor_list_free(&in), ct_tensor_list_free(&out), ct_graph_free(g);
  ct_calib_table_free(&t);
}
END_TEST

/* x [1,1,4,4] → Conv 1×1 (w 8, b −4) → y → SiLU → z, the module output. */
static ct_graph *silu_top(void) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t xs[] = {1, 1, 4, 4}, ws[] = {1, 1, 1, 1}, bs[] = {1}, k[] = {1, 1}, pads[] = {0, 0, 0, 0};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 4, xs);
  ck_assert(ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x));
  ct_tensor *w = ct_tensor_new(CT_F32, 4, ws, "w"), *b = ct_tensor_new(CT_F32, 1, bs, "b");
  ((float *)w->data)[0] = 8.0f, ((float *)b->data)[0] = -4.0f;
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 4, xs), *z = ct_graph_add_value(g, "z", CT_F32, 4, xs);
  ct_value *in_c[] = {x, ct_graph_add_weight(g, NULL, w), ct_graph_add_weight(g, NULL, b)};
  ct_op *c = ct_graph_add_op(g, CT_OP_CONV, "conv", 3, in_c, 1, &y);
  ck_assert(ct_test_window_attrs(g, c, k, k, k, pads));
  ck_assert(ct_graph_add_op(g, CT_OP_SILU, "silu", 1, &y, 1, &z) && ct_graph_set_outputs(g, 1, &z));
  return g;
}

/* Max |z − silu(8x − 4)| over sample 1 after lowering silu_top with t (lut16: the 16-bit
 * LUT); *ydt the Conv result's type, *entries the Lut's table size. */
static double silu_error(const ct_calib_table *t, bool lut16, ct_dtype *ydt, int *entries) {
  ct_graph *g = silu_top();
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = t, .lut16 = lut16};
  ct_diag d;
  ck_assert_msg(ct_lower(g, &o, &d) == CT_OK, "%s", d.msg);
  ct_value *y = ct_graph_find_value(g, "y"), *z = ct_graph_find_value(g, "z");
  *ydt = y->dtype;
  ck_assert(z->def && z->def->kind == CT_OP_LUT);
  ct_op_get_ints(z->def, "table", entries);
  ct_tensor_list in, out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&out);
  ramp_sample(NULL, 1, &in, &d);
  ct_ref_options ro = {.threads = 1};
  ck_assert_msg(ct_ref_run(g, &ro, &in, &out, &d) == CT_OK, "%s", d.msg);
  ct_tensor *zf = ct_quant_dequant_tensor(out.items[0]);
  double err = 0;
  for (int k = 0; k < 16; k++) {
    double v = 8 * ct_tensor_get_f64(in.items[0], k) - 4;
    err = fmax(err, fabs(ct_tensor_get_f64(zf, k) - v / (1 + exp(-v))));
  }
  ct_tensor_free(zf), ct_tensor_list_free(&in), ct_tensor_list_free(&out), ct_graph_free(g);
  return err;
}

/* --lut-input 16: the Conv result read only by the SiLU is i16 (the 8-bit range at 256× the
 * resolution) and the SiLU a 257-entry interpolated table; the output error is then the
 * output rounding alone (≤ half a step plus the interpolation's), below the 8-bit form's,
 * which rounds the pre-activation too. */
START_TEST(test_lower_lut16) {
  ct_graph *g = silu_top();
  ct_calib_table t;
  max_table(g, 2, ramp_sample, false, &t);
  ct_graph_free(g);
  ct_dtype dt8, dt16;
  int n8, n16;
  double e8 = silu_error(&t, false, &dt8, &n8), e16 = silu_error(&t, true, &dt16, &n16);
  ck_assert(dt8 == CT_I8 && n8 == 256 && dt16 == CT_I16 && n16 == CT_QUANT_LUT16_ENTRIES);
  const ct_calib_row *r = ct_calib_table_find(&t, "z");
  double step = r->threshold / 127; /* z is i8 (SiLU dips below 0) */
  ck_assert_msg(e16 <= 0.55 * step, "16-bit LUT error %g, step %g", e16, step);
  ck_assert_msg(e16 < e8, "16-bit LUT error %g, 8-bit %g", e16, e8);
  fprintf(stderr, "lut16: max error %g (8-bit LUT %g, output step %g)\n", e16, e8, step);
  ct_calib_table_free(&t);
}
END_TEST

/* The command line: bad input gets a one-line error, its exit code, and no output file. */
/* a, b [1, 2] (Input ops; a through Softmax when soft) → Concat(axis 1) → y [1, 4]. */
static ct_graph *concat_top(bool soft) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t s2[] = {1, 2}, s4[] = {1, 4};
  ct_value *a = ct_graph_add_value(g, "a", CT_F32, 2, s2), *b = ct_graph_add_value(g, "b", CT_F32, 2, s2);
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 2, s4), *sa = a;
  ck_assert(ct_graph_add_op(g, CT_OP_INPUT, "a", 0, NULL, 1, &a) && ct_graph_add_op(g, CT_OP_INPUT, "b", 0, NULL, 1, &b));
  if (soft) {
    sa = ct_graph_add_value(g, "sa", CT_F32, 2, s2);
    ck_assert(ct_graph_add_op(g, CT_OP_SOFTMAX, "soft", 1, &a, 1, &sa));
  }
  ct_value *in[] = {sa, b};
  ct_op *op = ct_graph_add_op(g, CT_OP_CONCAT, "cat", 2, in, 1, &y);
  ck_assert(op && ct_op_set_int(g, op, "axis", 1) && ct_graph_set_outputs(g, 1, &y));
  return g;
}

/* Concat stays float (BF16) when its inputs' scales differ by more than 4× or an input was
 * lowered to float; else REQUANT per input at the output's scale (y i8). */
static ct_dtype concat_type(bool soft, double th_b) {
  ct_graph *g = concat_top(soft);
  ct_calib_table t;
  ct_calib_table_init(&t);
  ct_diag d;
  const char *names[] = {"a", "sa", "y"};
  for (int i = 0; i < 3; i++) ck_assert(ct_calib_table_add(&t, names[i], 1.0, -1.0, 1.0, 0, &d) == CT_OK);
  ck_assert(ct_calib_table_add(&t, "b", th_b, -th_b, th_b, 0, &d) == CT_OK);
  ct_lower_options o = {.mode = CT_QMODE_INT8, .calib = &t};
  ck_assert_msg(ct_lower(g, &o, &d) == CT_OK, "%s", d.msg);
  ct_dtype dt = ct_graph_find_value(g, "y")->dtype;
  ct_graph_free(g);
  ct_calib_table_free(&t);
  return dt;
}

START_TEST(test_lower_concat_float) {
  ck_assert_int_eq(concat_type(false, 3.9), CT_I8);   /* scales 1/127 and 3.9/127: within 4× */
  ck_assert_int_eq(concat_type(false, 4.1), CT_BF16); /* 4.1× apart */
  ck_assert_int_eq(concat_type(false, 0.2), CT_BF16); /* 5× the other way */
  ck_assert_int_eq(concat_type(true, 1.0), CT_BF16);  /* Softmax output: float */
}
END_TEST

START_TEST(test_cli_errors) {
  ct_graph *g = small_top();
  ct_diag d;
  char top[600], tpu[600], tab[600], out[4096];
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("small.top"));
  snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path("small.tpu"));
  snprintf(tab, sizeof tab, "%s", ct_test_tmp_path("small.calib"));
  ck_assert_msg(ct_ir_save(g, top, &d) == CT_OK, "%s", d.msg);
  ct_graph_free(g);
  int rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 -o '%s'", top, tpu);
  ck_assert_int_eq(rc, 2);
  ck_assert_msg(strstr(out, "needs a calibration table"), "%s", out);
  ck_assert(!ct_test_file_exists(tpu));
  const char bad[] = "# t\nx 2.0 -2.0\n";
  ck_assert(ct_test_write_file(tab, bad, sizeof bad - 1));
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' -o '%s'", top, tab, tpu);
  ck_assert_int_eq(rc, 3);
  ck_assert_msg(strstr(out, "small.calib:2: expected 4 fields, got 3"), "%s", out);
  ck_assert(!ct_test_file_exists(tpu));
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT4 -o '%s'", top, tpu);
  ck_assert_int_eq(rc, 2);
  ck_assert(!ct_test_file_exists(tpu));
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --lut-input 12 -o '%s'", top, tpu);
  ck_assert_int_eq(rc, 2);
  ck_assert_msg(strstr(out, "--lut-input 12: 8 or 16"), "%s", out);
  ck_assert(!ct_test_file_exists(tpu));
  const char good[] = "x 2.0 -2.0 1.5\ny 5.1 0 5.1\nz 1.0 0.5 1.0\n";
  ck_assert(ct_test_write_file(tab, good, sizeof good - 1));
  rc = ct_test_run_ctpu(out, sizeof out, "lower '%s' --quantize INT8 --calibration-table '%s' -o '%s'", top, tab, tpu);
  ck_assert_msg(rc == 0, "%s", out);
  ck_assert(ct_test_file_exists(tpu));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("lower");
  TCase *tc = tcase_create("unit");
  tcase_add_test(tc, test_lower_small_graph);
  tcase_add_test(tc, test_lower_concat_float);
  tcase_add_test(tc, test_lower_channel_activation);
  tcase_add_test(tc, test_lower_channel_fold);
  tcase_add_test(tc, test_lower_lut_affine_and_int32_output);
  tcase_add_test(tc, test_lower_lut16);
  tcase_add_test(tc, test_cli_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
