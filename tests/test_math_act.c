/* test_math_act.c: the AVX-512 Sigmoid, SiLU and HardSwish rows (ops/math_act.c) against the
 * scalar formulas of quant/float_fn.h, bit for bit, on every 4099th float bit pattern (normal,
 * subnormal, ±0, ±inf, NaN) and on rows of every length mod 16; and the three ops'
 * kernels (which use the rows) likewise. Where the CPU lacks AVX-512 the rows decline and the
 * kernels are checked alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/math_act.h"
#include "ops/kernel.h"
#include "quant/float_fn.h"
#include "tests/testutil.h"

enum { NV = (int)(((uint64_t)1 << 32) / 4099) + 1 };

/* Same bits, or both NaN. */
static bool same(float a, float b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

/* The scalar formula of activation a (0 Sigmoid, 1 SiLU, 2 HardSwish), and its row. */
static float scalar(int a, float v) {
  return a == 0 ? ct_quant_fn_sigmoid(v) : a == 1 ? ct_quant_fn_silu(v) : (float)ct_quant_fn_hswish(v);
}
static bool row(int a, const float *x, float *y, int64_t n) {
  return a == 2 ? ct_unary_hswish_row(x, y, n) : ct_unary_sigm_row(x, y, n, a == 1);
}
static const char *const act_names[3] = {"sigmoid", "silu", "hswish"};

static float *patterns(void) {
  float *x = malloc(sizeof *x * NV);
  ck_assert(x);
  for (int i = 0; i < NV; i++) {
    uint32_t u = (uint32_t)((uint64_t)i * 4099);
    memcpy(&x[i], &u, sizeof u);
  }
  return x;
}

START_TEST(test_rows_equal_scalar) {
  float *x = patterns(), *y = malloc(sizeof *y * NV);
  ck_assert(y);
  for (int a = 0; a < 3; a++) {
    if (!row(a, x, y, NV)) {
      printf("test_math_act: no AVX-512 here, the rows decline (checked)\n");
      break;
    }
    for (int i = 0; i < NV; i++) {
      float w = scalar(a, x[i]);
      if (!same(y[i], w)) /* one check per failure: check's asserts cost a syscall each */
        ck_abort_msg("%s(%a): got %a, want %a", act_names[a], x[i], y[i], w);
    }
    for (int64_t n = 0; n <= 33; n++) { /* masked tails, in place */
      float r[33];
      memcpy(r, x + 1000 * n, sizeof r);
      ck_assert(row(a, r, r, n));
      for (int64_t i = 0; i < 33; i++) {
        float v = x[1000 * n + i], w = i < n ? scalar(a, v) : v;
        ck_assert_msg(same(r[i], w), "%s: n %lld lane %lld", act_names[a], (long long)n, (long long)i);
      }
    }
  }
  free(x), free(y);
}
END_TEST

/* The ops' Top kernels and their post rows give the scalar formula's bits. */
START_TEST(test_kernels_equal_scalar) {
  static const ct_op_kind ks[3] = {CT_OP_SIGMOID, CT_OP_SILU, CT_OP_HARDSWISH};
  float *x = patterns();
  for (int j = 0; j < 3; j++) {
    ct_graph *g = ct_graph_new("t", "top");
    int64_t sh[1] = {NV};
    ct_tensor *xt = ct_tensor_new(CT_F32, 1, sh, NULL), *yt = ct_tensor_new(CT_F32, 1, sh, NULL);
    memcpy(xt->data, x, sizeof *x * NV);
    ct_value *in = ct_graph_add_value(g, "x", CT_F32, 1, sh), *out = ct_graph_add_value(g, "y", CT_F32, 1, sh);
    ct_op *op = ct_graph_add_op(g, ks[j], "op", 1, &in, 1, &out);
    ct_diag d;
    ck_assert_int_eq(ct_kernel_of(ks[j])(op, &xt, &yt, &(ct_kernel_ctx){.threads = 1}, &d), CT_OK);
    ct_kernel_post post;
    ck_assert(ct_kernel_unary_post(op, &post));
    float *p = malloc(sizeof *p * NV);
    ck_assert(p);
    memcpy(p, x, sizeof *p * NV);
    post.row(p, NV, &post);
    const float *y = yt->data;
    for (int i = 0; i < NV; i++) {
      float w = scalar(j, x[i]);
      if (!same(y[i], w) || !same(p[i], w))
        ck_abort_msg("%s(%a): got %a / %a, want %a", ct_op_name(ks[j]), x[i], y[i], p[i], w);
    }
    free(p), ct_tensor_free(xt), ct_tensor_free(yt), ct_graph_free(g);
  }
  free(x);
}
END_TEST

int main(void) {
  Suite *s = suite_create("math_act");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_rows_equal_scalar);
  tcase_add_test(tc, test_kernels_equal_scalar);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
