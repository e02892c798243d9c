/* test_common.c: common/ — tensors, dtype conversion, the arena and its failure hook,
 * HDF5 tensor files (round trip, name escaping, missing/corrupt files). */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/arena.h"
#include "common/cosine.h"
#include "common/file.h"
#include "common/h5io.h"
#include "common/outset.h"
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

START_TEST(test_file_read_whole_files_with_a_limit) {
  ct_diag d;
  char *buf;
  size_t n;
  const char *p = ct_test_tmp_path("ten.txt");
  ck_assert(ct_test_write_file(p, "0123\0" "56789", 10));
  ck_assert_int_eq(ct_file_read(p, 0, &buf, &n, &d), CT_OK);
  ck_assert_uint_eq(n, 10);
  ck_assert_mem_eq(buf, "0123\0" "56789", 11); /* and a NUL after the last byte */
  free(buf);
  ck_assert_int_eq(ct_file_read(p, 10, &buf, NULL, &d), CT_OK); /* exactly at the limit */
  free(buf);
  ck_assert_int_eq(ct_file_read(p, 9, &buf, &n, &d), CT_ERR_LIMIT);
  ck_assert_ptr_null(buf);
  ck_assert_msg(strstr(d.msg, "ten.txt: larger than the limit of 9 bytes") != NULL, "%s", d.msg);
  /* a stream (no size known in advance) over the limit, and an empty one */
  ck_assert_int_eq(ct_file_read("/dev/zero", 100000, &buf, &n, &d), CT_ERR_LIMIT);
  struct stat sn; /* a machine whose /dev/null some process replaced by a file: an empty file instead */
  const char *empty = stat("/dev/null", &sn) == 0 && S_ISCHR(sn.st_mode) ? "/dev/null" : ct_test_tmp_path("empty.txt");
  if (strcmp(empty, "/dev/null")) {
    fprintf(stderr, "test_common: /dev/null is not a character device here; reading an empty file instead\n");
    ck_assert(ct_test_write_file(empty, "", 0));
  }
  ck_assert_int_eq(ct_file_read(empty, 0, &buf, &n, &d), CT_OK);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(buf[0], 0);
  free(buf);
  ck_assert_int_eq(ct_file_read(ct_test_tmp_path("absent.txt"), 0, &buf, &n, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "absent.txt: cannot read: ") != NULL, "%s", d.msg);
  ck_assert_int_eq(ct_file_read("/", 0, &buf, &n, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "/: cannot read: ") != NULL, "%s", d.msg);
}
END_TEST

static ct_status put_abc(FILE *f, const void *ctx, ct_diag *d) {
  (void)ctx, (void)d;
  fputs("abc", f);
  return CT_OK;
}

static ct_status put_and_fail(FILE *f, const void *ctx, ct_diag *d) {
  (void)ctx;
  fputs("half", f);
  return ct_diag_set(d, CT_ERR_INPUT, "stopped");
}

/* True if directory dir holds a name containing ".tmp". */
static bool has_tmp(const char *dir) {
  DIR *dp = opendir(dir);
  bool found = false;
  for (struct dirent *e; dp && (e = readdir(dp));) found |= strstr(e->d_name, ".tmp") != NULL;
  if (dp) closedir(dp);
  return found;
}

START_TEST(test_outfile_replaces_whole_or_not_at_all) {
  ct_diag d;
  char dir[1024], path[1100];
  snprintf(dir, sizeof dir, "%s", ct_test_tmp_path("outfile"));
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/x.txt", dir);
  ck_assert(ct_test_write_file(path, "old", 3));
  ck_assert_int_eq(ct_outfile_write(path, put_and_fail, NULL, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "stopped");
  size_t n;
  char *got = ct_test_read_file(path, &n);
  ck_assert_str_eq(got, "old"); /* untouched */
  free(got);
  ck_assert(!has_tmp(dir));
  ck_assert_int_eq(ct_outfile_write(path, put_abc, NULL, &d), CT_OK);
  got = ct_test_read_file(path, &n);
  ck_assert_str_eq(got, "abc");
  free(got);
  ck_assert(!has_tmp(dir));
  /* begin, then abort: nothing left; a destination that cannot be replaced (a non-empty
   * directory): the commit fails naming it and leaves no temporary file */
  ct_outfile o;
  ck_assert_int_eq(ct_outfile_begin(&o, path, true, &d), CT_OK);
  fputs("never", o.f);
  ct_outfile_abort(&o);
  got = ct_test_read_file(path, &n);
  ck_assert_str_eq(got, "abc");
  free(got);
  ck_assert(!has_tmp(dir));
  ck_assert_int_eq(ct_outfile_write(dir, put_abc, NULL, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "outfile: cannot write: ") != NULL, "%s", d.msg);
  snprintf(path, sizeof path, "%s/no-such-dir/x.txt", dir);
  ck_assert_int_eq(ct_outfile_write(path, put_abc, NULL, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "x.txt: cannot create: ") != NULL, "%s", d.msg);
}
END_TEST

START_TEST(test_cosine_values_and_non_finite_rule) {
  ct_cos_sums s = {0};
  ck_assert(ct_cos_of(&s) == 1); /* no pair */
  ct_cos_add(&s, 1, 4), ct_cos_add(&s, 2, 5), ct_cos_add(&s, 3, 6);
  /* 32 / sqrt(14 * 77), by hand */
  ck_assert(fabs(ct_cos_of(&s) - 0.9746318461970762) < 1e-15);
  /* agreeing non-finite pairs are left out: the cosine does not move */
  double before = ct_cos_of(&s);
  ct_cos_add(&s, NAN, NAN), ct_cos_add(&s, INFINITY, INFINITY), ct_cos_add(&s, -INFINITY, -INFINITY);
  ck_assert(ct_cos_of(&s) == before);
  /* any other non-finite pair makes it NaN, also after merging into other sums */
  ct_cos_sums b = s, c = s, e = s, m = {0};
  ct_cos_add(&b, NAN, 1);
  ct_cos_add(&c, 1, INFINITY);
  ct_cos_add(&e, INFINITY, -INFINITY);
  ck_assert(isnan(ct_cos_of(&b)) && isnan(ct_cos_of(&c)) && isnan(ct_cos_of(&e)));
  ct_cos_merge(&m, &s);
  ck_assert(ct_cos_of(&m) == before);
  ct_cos_merge(&m, &b);
  ck_assert(isnan(ct_cos_of(&m)));
  /* one side all zero: 0; both: 1; opposite: -1 */
  ct_cos_sums z = {0};
  ct_cos_add(&z, 0, 3);
  ck_assert(ct_cos_of(&z) == 0);
  z = (ct_cos_sums){0};
  ct_cos_add(&z, 0, 0);
  ck_assert(ct_cos_of(&z) == 1);
  z = (ct_cos_sums){0};
  ct_cos_add(&z, 2, -2);
  ck_assert(ct_cos_of(&z) == -1);
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
  tcase_add_test(tc, test_file_read_whole_files_with_a_limit);
  tcase_add_test(tc, test_outfile_replaces_whole_or_not_at_all);
  tcase_add_test(tc, test_cosine_values_and_non_finite_rule);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
