/* test_cmodel_examples.c: the hand-written programs of docs/examples/ assemble (`ctpu asm`),
 * run (`ctpu sim`), give the outputs of a plain C reference (requant formula of
 * docs/architecture.md §4.1 written out here) and the cycle counts derived by hand in their
 * header comments. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "tests/testutil.h"

static int64_t rsr(int64_t x, int s) {
  int64_t v = x + ((int64_t)1 << (s - 1)), q = v / ((int64_t)1 << s);
  if (v % ((int64_t)1 << s) != 0 && v < 0) q--;
  return q;
}
static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Writes a random int8 input, assembles and simulates example `name`; returns the output
 * tensor "y" and the summary's total_cycles. */
static ct_tensor *run_example(const char *name, const char *input, int ndim, const int64_t *shape,
                              ct_tensor **in_out, double *cycles) {
  ct_tensor *x = ct_tensor_new(CT_I8, ndim, shape, input);
  srand(99);
  for (size_t i = 0; i < x->nbytes; i++) ((int8_t *)x->data)[i] = (int8_t)(rand() % 256 - 128);
  char in_path[512], prog[512], msg[4096];
  snprintf(in_path, sizeof in_path, "%s", ct_test_tmp_path("in.h5"));
  snprintf(prog, sizeof prog, "%s", ct_test_tmp_path("ex.ctpu"));
  ck_assert_int_eq(ct_h5_write(in_path, &x, 1, NULL), CT_OK);
  int rc = ct_test_run_ctpu(msg, sizeof msg, "asm %s/docs/examples/%s -o %s", CT_SOURCE_DIR, name, prog);
  ck_assert_msg(rc == 0, "%s", msg);
  rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s --input %s -o %s --summary %s", prog, in_path,
                        ct_test_tmp_path("y.h5"), ct_test_tmp_path("s.json"));
  ck_assert_msg(rc == 0, "%s", msg);
  char *sum = ct_test_read_file(ct_test_tmp_path("s.json"), NULL);
  cJSON *js = cJSON_Parse(sum);
  *cycles = cJSON_GetObjectItem(js, "total_cycles")->valuedouble;
  cJSON_Delete(js);
  free(sum);
  ct_tensor *y = NULL;
  ck_assert_int_eq(ct_h5_read_one(ct_test_tmp_path("y.h5"), "y", &y, NULL), CT_OK);
  *in_out = x;
  return y;
}

START_TEST(test_conv_relu_example) {
  int64_t shape[4] = {1, 4, 8, 8};
  ct_tensor *x;
  double cycles;
  ct_tensor *y = run_example("conv_relu.s", "x", 4, shape, &x, &cycles);
  ck_assert_double_eq(cycles, 752);
  const int8_t *xi = x->data, *yi = y->data;
  for (int o = 0; o < 8; o++)
    for (int r = 0; r < 8; r++)
      for (int c = 0; c < 8; c++) {
        int64_t acc = 0;
        for (int ci = 0; ci < 4; ci++)
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int iy = r - 1 + ky, ix = c - 1 + kx;
              if (iy < 0 || iy >= 8 || ix < 0 || ix >= 8) continue;
              int wi = ((o * 4 + ci) * 3 + ky) * 3 + kx;
              acc += xi[(ci * 8 + iy) * 8 + ix] * (((wi * 37) % 11) - 5);
            }
        int64_t v = rsr(acc * 1518500250, 38) - 3;
        if (v < -3) v = -3;
        ck_assert_int_eq(yi[(o * 8 + r) * 8 + c], clampi(v, -128, 127));
      }
  ck_assert_double_eq(y->scale[0], 0.1);
  ct_tensor_free(x);
  ct_tensor_free(y);
}
END_TEST

START_TEST(test_tiled_matmul_example) {
  int64_t shape[2] = {512, 64};
  ct_tensor *x;
  double cycles;
  ct_tensor *y = run_example("tiled_matmul.s", "a", 2, shape, &x, &cycles);
  ck_assert_double_eq(cycles, 2634);
  const int8_t *a = x->data, *yi = y->data;
  for (int i = 0; i < 512; i++)
    for (int j = 0; j < 32; j++) {
      int64_t acc = 0;
      for (int k = 0; k < 64; k++) acc += a[i * 64 + k] * ((((k * 32 + j) * 29) % 15) - 7);
      ck_assert_int_eq(yi[i * 32 + j], clampi(rsr(acc * 1073741824, 40), -128, 127));
    }
  ct_tensor_free(x);
  ct_tensor_free(y);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cmodel_examples");
  TCase *t = tcase_create("examples");
  tcase_add_test(t, test_conv_relu_example);
  tcase_add_test(t, test_tiled_matmul_example);
  suite_add_tcase(s, t);
  return ct_test_run_suite(s);
}
