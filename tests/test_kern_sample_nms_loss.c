/* test_kern_sample_nms_loss.c: shape functions + reference kernels of the sampling ops
 * (GridSample, RoiAlign, MaxUnpool), NonMaxSuppression, the NLL / softmax cross-entropy losses
 * and the Hann/Hamming/Blackman windows. Expected values are derived by hand from the ONNX operator
 * spec; the derivation is in the comments. */
#include <math.h>
#include <string.h>

#include "tests/kern_nn_harness.h"
#include "tests/testutil.h"

#define SH(...) (const int64_t[]){__VA_ARGS__}
#define VA(...) (const double[]){__VA_ARGS__}
#define FL(...) (const float[]){__VA_ARGS__}

/* Tensor of dtype dt and shape (nd dims) holding v (NULL: zeros). */
static ct_tensor *ten(ct_dtype dt, int nd, const int64_t *shape, const double *v) {
  ct_tensor *t = ct_tensor_new(dt, nd, shape, NULL);
  for (int64_t i = 0; t && v && i < ct_tensor_numel(t); i++) ct_tensor_set_f64(t, i, v[i]);
  ck_assert_ptr_nonnull(t);
  return t;
}

/* Harness for kind on ins (n entries, NULL = absent; freed here) with n_out outputs. */
static knh *mk(ct_op_kind kind, int n, ct_tensor **ins, int n_out) {
  knh *h = knh_new(kind, n, ins, n_out);
  for (int i = 0; i < n; i++) ct_tensor_free(ins[i]);
  return h;
}

/* Runs h and asserts the status (and, on error, that the message contains `msg`). */
static void go(knh *h, ct_status want, const char *msg) {
  ct_status st = knh_run(h);
  ck_assert_msg(st == want, "status %d (%s)", st, h->d.msg);
  if (msg) ck_assert_msg(strstr(h->d.msg, msg) != NULL, "message \"%s\" lacks \"%s\"", h->d.msg, msg);
}

/* X = [[1, 2], [3, 4]] (1, 1, 2, 2) sampled at one grid point (gx, gy). */
static knh *gs(double gx, double gy, const char *mode, const char *pad, int align) {
  ct_tensor *ins[2] = {ten(CT_F32, 4, SH(1, 1, 2, 2), VA(1, 2, 3, 4)), ten(CT_F32, 4, SH(1, 1, 1, 2), VA(gx, gy))};
  knh *h = mk(CT_OP_GRIDSAMPLE, 2, ins, 1);
  knh_str(h, "mode", mode);
  knh_str(h, "padding_mode", pad);
  knh_int(h, "align_corners", align);
  return h;
}

static void gs_expect(double gx, double gy, const char *mode, const char *pad, int align, float want) {
  knh *h = gs(gx, gy, mode, pad, align);
  go(h, CT_OK, NULL);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 1, 1));
  knh_expect_close(h->out[0], &want, 1, 1e-6, 1e-6);
  knh_free(h);
}

/* align_corners = 1: x = (g + 1) / 2 · (W − 1). (0, 0) → centre (0.5, 0.5): mean 2.5; (−1, −1) →
 * pixel (0, 0) = 1; (1, −1) → (y 0, x 1) = 2. align_corners = 0: x = ((g + 1) W − 1) / 2 = g + 0.5:
 * nearest at (0.6, −0.6) → x 1.1 → 1, y −0.1 → 0 (half to even) → 2. (1, 1) → (1.5, 1.5): zeros
 * padding keeps 0.25 · 4 = 1; border clamps the coordinate to 1 → 4; reflection: taps at index 2
 * mirror to 1 → 4. */
START_TEST(test_gridsample_hand) {
  gs_expect(0, 0, "bilinear", "zeros", 1, 2.5f);
  gs_expect(-1, -1, "bilinear", "zeros", 1, 1);
  gs_expect(1, -1, "linear", "zeros", 1, 2);
  gs_expect(0.6, -0.6, "nearest", "zeros", 0, 2);
  gs_expect(1, 1, "bilinear", "zeros", 0, 1);
  gs_expect(1, 1, "bilinear", "border", 0, 4);
  gs_expect(1, 1, "bilinear", "reflection", 0, 4);
}
END_TEST

/* Bicubic: Keys' kernel reproduces linear functions, so on the row [0, 1, 2, 3] (H = 1, border
 * padding repeats it above and below) with align_corners = 1, g = 0 → x = 1.5 → 1.5, and
 * g = −1/3 → x = 1 → exactly 1. Unknown modes are unsupported. */
START_TEST(test_gridsample_bicubic_and_errors) {
  ct_tensor *ins[2] = {ten(CT_F32, 4, SH(1, 1, 1, 4), VA(0, 1, 2, 3)), ten(CT_F32, 4, SH(1, 1, 2, 2), VA(0, 0, -1.0 / 3, 0.5))};
  knh *h = mk(CT_OP_GRIDSAMPLE, 2, ins, 1);
  knh_str(h, "mode", "bicubic");
  knh_str(h, "padding_mode", "border");
  knh_int(h, "align_corners", 1);
  go(h, CT_OK, NULL);
  knh_expect_close(h->out[0], FL(1.5f, 1), 2, 1e-6, 1e-6);
  knh_free(h);
  h = gs(0, 0, "area", "zeros", 0);
  go(h, CT_ERR_INPUT, "unsupported mode");
  knh_free(h);
  h = gs(0, 0, "nearest", "wrap", 0);
  go(h, CT_ERR_INPUT, "unsupported padding_mode");
  knh_free(h);
}
END_TEST

/* RoiAlign on X (1, 1, 4, 4) with X[y][x] = c; one RoI, 1×1 output, sampling_ratio 1. */
static knh *ra(const double *plane, const double *roi, const char *mode, const char *ctm) {
  ct_tensor *ins[3] = {ten(CT_F32, 4, SH(1, 1, 4, 4), plane), ten(CT_F32, 2, SH(1, 4), roi), ten(CT_I64, 1, SH(1), VA(0))};
  knh *h = mk(CT_OP_ROIALIGN, 3, ins, 1);
  knh_str(h, "mode", mode);
  knh_str(h, "coordinate_transformation_mode", ctm);
  knh_int(h, "sampling_ratio", 1);
  return h;
}

/* X[y][x] = x (bilinear sampling returns the x coordinate). RoI [0, 0, 3, 3]: half_pixel →
 * start −0.5, size 3, one sample at −0.5 + 1.5 = 1 → 1; output_half_pixel → start 0, sample 1.5
 * → 1.5. Max mode on a constant 4 plane, RoI [0, 0, 1, 1] output_half_pixel → sample (0.5, 0.5),
 * corner weights 0.25 each → max corner term 1 (avg gives 4). Bad mode → unsupported. */
START_TEST(test_roialign_hand) {
  static const double ramp[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  double four[16];
  for (int i = 0; i < 16; i++) four[i] = 4;
  const struct { const double *x, *roi; const char *mode, *ctm; float want; } c[] = {
      {ramp, VA(0, 0, 3, 3), "avg", "half_pixel", 1},      {ramp, VA(0, 0, 3, 3), "avg", "output_half_pixel", 1.5f},
      {NULL, VA(0, 0, 1, 1), "max", "output_half_pixel", 1}, {NULL, VA(0, 0, 1, 1), "avg", "output_half_pixel", 4}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    knh *h = ra(c[i].x ? c[i].x : four, c[i].roi, c[i].mode, c[i].ctm);
    go(h, CT_OK, NULL);
    knh_expect_shape(h->out[0], 4, SH(1, 1, 1, 1));
    knh_expect_close(h->out[0], &c[i].want, 1, 1e-6, 1e-6);
    knh_free(h);
  }
  knh *h = ra(four, VA(0, 0, 1, 1), "median", "half_pixel");
  go(h, CT_ERR_INPUT, "unsupported mode");
  knh_free(h);
}
END_TEST

/* MaxUnpool of X = [5, 6, 7, 8] (1, 1, 2, 2), I = [5, 7, 13, 15], kernel 2, stride 2: default
 * output (2 − 1)·2 + 2 = 4 per dim; 5, 7, 13, 15 are (1, 1), (1, 3), (3, 1), (3, 3). With
 * output_shape (1, 1, 5, 5) the same coordinates are flat 6, 8, 16, 18. Index 16 is outside 4×4. */
static knh *unpool(double last_index, bool with_shape) {
  ct_tensor *ins[3] = {ten(CT_F32, 4, SH(1, 1, 2, 2), VA(5, 6, 7, 8)), ten(CT_I64, 4, SH(1, 1, 2, 2), VA(5, 7, 13, last_index)),
                       with_shape ? ten(CT_I64, 1, SH(4), VA(1, 1, 5, 5)) : NULL};
  knh *h = mk(CT_OP_MAXUNPOOL, with_shape ? 3 : 2, ins, 1);
  knh_ints(h, "kernel_shape", 2, 2LL, 2LL);
  knh_ints(h, "strides", 2, 2LL, 2LL);
  return h;
}

START_TEST(test_maxunpool_hand) {
  knh *h = unpool(15, false);
  go(h, CT_OK, NULL);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 4, 4));
  knh_expect_close(h->out[0], FL(0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8), 16, 0, 0);
  knh_free(h);
  h = unpool(15, true);
  go(h, CT_OK, NULL);
  knh_expect_shape(h->out[0], 4, SH(1, 1, 5, 5));
  float want[25] = {0};
  want[6] = 5, want[8] = 6, want[16] = 7, want[18] = 8;
  knh_expect_close(h->out[0], want, 25, 0, 0);
  knh_free(h);
  h = unpool(16, false);
  go(h, CT_ERR_INPUT, "outside");
  knh_free(h);
}
END_TEST

/* Boxes A = [0, 0, 1, 1], B = [0, 0.1, 1, 1.1], C = [0, 2, 1, 3] ([y1, x1, y2, x2]) with scores
 * 0.9, 0.95, 0.5. IoU(A, B) = 0.9 / (1 + 1 − 0.9) = 0.818; C overlaps neither. */
static knh *nms(double max_out, double iou, double thr) {
  ct_tensor *ins[5] = {ten(CT_F32, 3, SH(1, 3, 4), VA(0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 2, 1, 3)),
                       ten(CT_F32, 3, SH(1, 1, 3), VA(0.9, 0.95, 0.5)), ten(CT_I64, 1, SH(1), VA(max_out)),
                       ten(CT_F32, 1, SH(1), VA(iou)), isnan(thr) ? NULL : ten(CT_F32, 1, SH(1), VA(thr))};
  return mk(CT_OP_NONMAXSUPPRESSION, 5, ins, 1);
}

static void nms_expect(knh *h, int64_t n, const float *boxes) {
  go(h, CT_OK, NULL);
  knh_expect_shape(h->out[0], 2, SH(n, 3));
  for (int64_t i = 0; i < n; i++) {
    ck_assert_int_eq(ct_tensor_get_i64(h->out[0], 3 * i), 0);
    ck_assert_int_eq(ct_tensor_get_i64(h->out[0], 3 * i + 1), 0);
    ck_assert_int_eq(ct_tensor_get_i64(h->out[0], 3 * i + 2), (int64_t)boxes[i]);
  }
  knh_free(h);
}

/* iou 0.5: B (0.95) first, A suppressed (0.818 > 0.5), then C → boxes 1, 2. iou 0.9: B, A, C.
 * max 2 → B, A. score_threshold 0.6 → B only (C's 0.5 dropped, A suppressed). max 0 → none.
 * A non-constant input makes the shape data-dependent; center_point_box 2 is unsupported. */
START_TEST(test_nms_hand) {
  nms_expect(nms(10, 0.5, NAN), 2, FL(1, 2));
  nms_expect(nms(10, 0.9, NAN), 3, FL(1, 0, 2));
  nms_expect(nms(2, 0.9, NAN), 2, FL(1, 0));
  nms_expect(nms(10, 0.5, 0.6), 1, FL(1));
  nms_expect(nms(0, 0.5, NAN), 0, FL(0));
  knh *h = nms(10, 0.5, NAN);
  ct_tensor_free(h->op->in[0]->data);
  h->op->in[0]->data = NULL;
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "unsupported: data-dependent shape"));
  knh_free(h);
  h = nms(10, 0.5, NAN);
  knh_int(h, "center_point_box", 2);
  go(h, CT_ERR_INPUT, "unsupported center_point_box");
  knh_free(h);
}
END_TEST

/* logp = [[−1, −2, −3], [−0.5, −1.5, −2.5]], target [2, t1], optional weight [1, 2, 4]. */
static knh *nllh(double t1, bool weighted, const char *red) {
  ct_tensor *ins[3] = {ten(CT_F32, 2, SH(2, 3), VA(-1, -2, -3, -0.5, -1.5, -2.5)), ten(CT_I64, 1, SH(2), VA(2, t1)),
                       weighted ? ten(CT_F32, 1, SH(3), VA(1, 2, 4)) : NULL};
  knh *h = mk(CT_OP_NEGATIVELOGLIKELIHOODLOSS, weighted ? 3 : 2, ins, 1);
  knh_str(h, "reduction", red);
  return h;
}

static void nll_expect(knh *h, int nd, const float *want) {
  go(h, CT_OK, NULL);
  knh_expect_shape(h->out[0], nd, SH(2));
  knh_expect_close(h->out[0], want, nd ? 2 : 1, 1e-6, 1e-6);
  knh_free(h);
}

/* Target [2, 0]: losses −logp = [3, 0.5]; sum 3.5; mean 1.75. Weighted: [3·4, 0.5·1] = [12, 0.5],
 * mean 12.5 / (4 + 1) = 2.5. ignore_index 0 drops sample 1: [3, 0], mean 3 / 1 = 3. Target 3 is
 * outside [0, 3); reduction "max" is unsupported. */
START_TEST(test_nllloss_hand) {
  nll_expect(nllh(0, false, "none"), 1, FL(3, 0.5f));
  nll_expect(nllh(0, false, "sum"), 0, FL(3.5f));
  nll_expect(nllh(0, false, "mean"), 0, FL(1.75f));
  nll_expect(nllh(0, true, "none"), 1, FL(12, 0.5f));
  nll_expect(nllh(0, true, "mean"), 0, FL(2.5f));
  knh *h = nllh(0, false, "none");
  knh_int(h, "ignore_index", 0);
  nll_expect(h, 1, FL(3, 0));
  h = nllh(0, false, "mean");
  knh_int(h, "ignore_index", 0);
  nll_expect(h, 0, FL(3));
  h = nllh(3, false, "sum");
  go(h, CT_ERR_INPUT, "outside");
  knh_free(h);
  h = nllh(0, false, "max");
  go(h, CT_ERR_INPUT, "unsupported reduction");
  knh_free(h);
}
END_TEST

/* Scores [0, ln 3]: softmax [1/4, 3/4], log_prob [ln 1/4, ln 3/4] = [−1.3862944, −0.2876821];
 * label 0 → loss 1.3862944 (mean over one sample). */
START_TEST(test_sceloss_hand) {
  ct_tensor *ins[2] = {ten(CT_F32, 2, SH(1, 2), VA(0, log(3.0))), ten(CT_I64, 1, SH(1), VA(0))};
  knh *h = mk(CT_OP_SOFTMAXCROSSENTROPYLOSS, 2, ins, 2);
  go(h, CT_OK, NULL);
  knh_expect_shape(h->out[0], 0, NULL);
  knh_expect_close(h->out[0], FL(1.3862944f), 1, 1e-6, 1e-6);
  knh_expect_shape(h->out[1], 2, SH(1, 2));
  knh_expect_close(h->out[1], FL(-1.3862944f, -0.2876821f), 2, 1e-6, 1e-6);
  knh_free(h);
}
END_TEST

/* Window op kind of `size` samples (int64 scalar), periodic flag, ONNX output type. */
static knh *win(ct_op_kind kind, double size, int periodic, int odt) {
  ct_tensor *ins[1] = {ten(CT_I64, 0, NULL, VA(size))};
  knh *h = mk(kind, 1, ins, 1);
  knh_int(h, "periodic", periodic);
  knh_int(h, "output_datatype", odt);
  return h;
}

static void win_expect(knh *h, ct_dtype dt, int64_t n, const float *want) {
  go(h, CT_OK, NULL);
  ck_assert_int_eq(h->out[0]->dtype, dt);
  knh_expect_shape(h->out[0], 1, SH(n));
  knh_expect_close(h->out[0], want, n, 1e-6, 1e-6);
  knh_free(h);
}

/* Hann periodic 4 (N = 4): 0.5 − 0.5 cos(πn/2) = 0, 0.5, 1, 0.5. Hann symmetric 3 (N = 2): 0, 1, 0.
 * Hamming periodic 2 (N = 2): 25/46 ∓ 21/46 = 4/46, 1 (as double, ONNX type 11). Blackman
 * symmetric 3: 0.42 − 0.5 + 0.08 = 0, 0.42 + 0.5 + 0.08 = 1, 0. A non-constant size is unsupported. */
START_TEST(test_windows_hand) {
  win_expect(win(CT_OP_HANNWINDOW, 4, 1, 1), CT_F32, 4, FL(0, 0.5f, 1, 0.5f));
  win_expect(win(CT_OP_HANNWINDOW, 3, 0, 1), CT_F32, 3, FL(0, 1, 0));
  win_expect(win(CT_OP_HAMMINGWINDOW, 2, 1, 11), CT_F64, 2, FL(4.0f / 46, 1));
  win_expect(win(CT_OP_BLACKMANWINDOW, 3, 0, 1), CT_F32, 3, FL(0, 1, 0));
  knh *h = win(CT_OP_HANNWINDOW, 4, 1, 1);
  ct_tensor_free(h->op->in[0]->data);
  h->op->in[0]->data = NULL;
  ck_assert_int_eq(knh_shape(h), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(h->d.msg, "unsupported: non-constant size"));
  knh_free(h);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kern_sample_nms_loss");
  TCase *tc = tcase_create("sample");
  tcase_add_test(tc, test_gridsample_hand);
  tcase_add_test(tc, test_gridsample_bicubic_and_errors);
  tcase_add_test(tc, test_roialign_hand);
  tcase_add_test(tc, test_maxunpool_hand);
  suite_add_tcase(s, tc);
  tc = tcase_create("nms");
  tcase_add_test(tc, test_nms_hand);
  suite_add_tcase(s, tc);
  tc = tcase_create("loss");
  tcase_add_test(tc, test_nllloss_hand);
  tcase_add_test(tc, test_sceloss_hand);
  suite_add_tcase(s, tc);
  tc = tcase_create("window");
  tcase_add_test(tc, test_windows_hand);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
