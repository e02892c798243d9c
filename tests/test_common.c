/* test_common.c: common/ — tensors, dtype conversion, the arena and its failure hook,
 * HDF5 tensor files (round trip, name escaping, missing/corrupt files). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/h5io.h"
#include "common/tensor.h"
#include "tests/testutil.h"

START_TEST(test_tensor_new) {
  int64_t shape[4] = {2, 3, 4, 5};
  ct_tensor *t = ct_tensor_new(CT_F32, 4, shape, "x");
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(ct_tensor_numel(t), 120);
  ck_assert_uint_eq(t->nbytes, 480);
  ck_assert_str_eq(t->name, "x");
  int64_t bad[2] = {-1, 3};
  ck_assert_ptr_null(ct_tensor_new(CT_F32, 2, bad, NULL));
  ck_assert_ptr_null(ct_tensor_new(CT_F32, 9, shape, NULL));
  ct_tensor_free(t);
}
END_TEST

START_TEST(test_set_f64_rounds_half_away_and_saturates) {
  int64_t n = 6;
  ct_tensor *t = ct_tensor_new(CT_I8, 1, &n, NULL);
  double in[6] = {2.5, -2.5, 300, -300, 0.49, -0.5};
  int8_t want[6] = {3, -3, 127, -128, 0, -1};
  for (int i = 0; i < 6; i++) ct_tensor_set_f64(t, i, in[i]);
  ck_assert_mem_eq(t->data, want, 6);
  ct_tensor_free(t);
}
END_TEST

START_TEST(test_half_and_bf16_round_to_nearest_even) {
  ck_assert_uint_eq(ct_f32_to_f16(1.0f), 0x3c00);
  ck_assert_uint_eq(ct_f32_to_f16(65504.0f), 0x7bff);
  ck_assert_uint_eq(ct_f32_to_f16(1e6f), 0x7c00);
  /* 1 + 2^-11 is halfway between 1 and the next half: ties to even → 1.0 */
  ck_assert_uint_eq(ct_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  ck_assert_uint_eq(ct_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  ck_assert_float_eq(ct_f16_to_f32(0x0001), 0x1p-24f);
  ck_assert_uint_eq(ct_f32_to_bf16(1.0f), 0x3f80);
  ck_assert_uint_eq(ct_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* tie → even */
  ck_assert_uint_eq(ct_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  for (uint32_t h = 0; h < 0x7c00; h += 7) ck_assert_uint_eq(ct_f32_to_f16(ct_f16_to_f32((uint16_t)h)), h);
}
END_TEST

START_TEST(test_arena_alignment_and_fail_hook) {
  ct_arena a;
  ct_arena_init(&a, 128);
  for (int i = 0; i < 100; i++) {
    void *p = ct_arena_alloc(&a, (size_t)(i * 3 + 1));
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 16, 0);
  }
  ck_assert_ptr_nonnull(ct_arena_alloc(&a, 100000));
  ct_arena_fail_after(&a, 2);
  ck_assert_ptr_nonnull(ct_arena_alloc(&a, 8));
  ck_assert_ptr_nonnull(ct_arena_alloc(&a, 8));
  ck_assert_ptr_null(ct_arena_alloc(&a, 8));
  ck_assert_ptr_null(ct_arena_strdup(&a, "x"));
  ct_arena_free(&a);
}
END_TEST

START_TEST(test_h5_escape_round_trip) {
  const char *names[] = {"a/b/c", "%25", ".hidden", "", "onnx::Conv_12", "x..y"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char e[256], u[256];
    ck_assert(ct_h5_escape(names[i], e, sizeof e));
    ck_assert_ptr_null(strchr(e, '/'));
    ck_assert(e[0] != '.' && e[0] != '\0');
    ck_assert(ct_h5_unescape(e, u, sizeof u));
    ck_assert_str_eq(u, names[i]);
  }
  char u[16];
  ck_assert(!ct_h5_unescape("%zz", u, sizeof u));
}
END_TEST

START_TEST(test_h5_round_trip_with_quant_and_dtypes) {
  const char *path = ct_test_tmp_path("rt.h5");
  int64_t s[3] = {2, 3, 4};
  ct_tensor *a = ct_tensor_new(CT_F32, 3, s, "/features/Conv_output_0");
  ct_tensor *b = ct_tensor_new(CT_I8, 2, s, "q");
  ct_tensor *c = ct_tensor_new(CT_BF16, 1, s, "bf");
  ct_tensor *e = ct_tensor_new(CT_I64, 0, s, "scalar");
  for (int i = 0; i < 24; i++) ((float *)a->data)[i] = (float)i * 0.5f - 3;
  for (int i = 0; i < 6; i++) ((int8_t *)b->data)[i] = (int8_t)(i * 40 - 100);
  ((uint16_t *)c->data)[1] = 0x3f80;
  *(int64_t *)e->data = -5;
  double sc[2] = {0.5, 0.25};
  int32_t zp[2] = {0, -3};
  ck_assert(ct_tensor_set_quant(b, 2, 0, sc, zp));
  strcpy(b->layout, "NHWC");
  ct_tensor *all[4] = {a, b, c, e};
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(path, all, 4, &d), CT_OK);
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ck_assert_int_eq(ct_h5_read(path, &l, &d), CT_OK);
  ck_assert_int_eq(l.n, 4);
  for (int i = 0; i < 4; i++) {
    ct_tensor *r = ct_tensor_list_find(&l, all[i]->name);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->dtype, all[i]->dtype);
    ck_assert_int_eq(r->ndim, all[i]->ndim);
    ck_assert_mem_eq(r->data, all[i]->data, all[i]->nbytes);
  }
  ct_tensor *rb = ct_tensor_list_find(&l, "q");
  ck_assert_int_eq(rb->n_scale, 2);
  ck_assert_double_eq(rb->scale[1], 0.25);
  ck_assert_int_eq(rb->zero_point[1], -3);
  ck_assert_str_eq(rb->layout, "NHWC");
  ct_tensor *one = NULL;
  ck_assert_int_eq(ct_h5_read_one(path, "missing", &one, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "no dataset \"missing\""));
  ct_tensor_list_free(&l);
  for (int i = 0; i < 4; i++) ct_tensor_free(all[i]);
}
END_TEST

START_TEST(test_h5_bad_files_are_errors) {
  ct_diag d;
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ck_assert_int_eq(ct_h5_read(ct_test_tmp_path("nope.h5"), &l, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "cannot open"));
  const char *junk = ct_test_tmp_path("junk.h5");
  ck_assert(ct_test_write_file(junk, "not an hdf5 file at all", 23));
  ck_assert_int_eq(ct_h5_read(junk, &l, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "not an HDF5 file"));
  /* a truncated real file */
  int64_t s = 1000;
  ct_tensor *t = ct_tensor_new(CT_F32, 1, &s, "t");
  const char *good = ct_test_tmp_path("good.h5");
  ck_assert_int_eq(ct_h5_write(good, &t, 1, &d), CT_OK);
  size_t n;
  char *bytes = ct_test_read_file(good, &n);
  const char *cut = ct_test_tmp_path("cut.h5");
  ck_assert(ct_test_write_file(cut, bytes, n / 2));
  ck_assert_int_ne(ct_h5_read(cut, &l, &d), CT_OK);
  free(bytes);
  ct_tensor_free(t);
  ct_tensor_list_free(&l);
}
END_TEST

int main(void) {
  Suite *s = suite_create("common");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_tensor_new);
  tcase_add_test(tc, test_set_f64_rounds_half_away_and_saturates);
  tcase_add_test(tc, test_half_and_bf16_round_to_nearest_even);
  tcase_add_test(tc, test_arena_alignment_and_fail_hook);
  tcase_add_test(tc, test_h5_escape_round_trip);
  tcase_add_test(tc, test_h5_round_trip_with_quant_and_dtypes);
  tcase_add_test(tc, test_h5_bad_files_are_errors);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
