/* test_dataset.c: io/dataset — HDF5 images/labels arrays (u8 gray direct, u8 HWC through the
 * image preprocessing, f32 inputs), folders with and without labels.tsv, list files, single
 * files, and the errors of bad data sets (empty folder, wrong channel count, bad labels). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/h5io.h"
#include "io/dataset.h"
#include "ir/attr.h"
#include "ir/ir.h"
#include "tests/testutil.h"

/* A graph with one 1×C×H×W f32 input "x" (mean 10, scale 0.5), output = the input. */
static ct_graph *model(int64_t c, int64_t h, int64_t w) {
  ct_graph *g = ct_graph_new("t", "top");
  int64_t s[4] = {1, c, h, w};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 4, s);
  ct_op *op = ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x);
  ck_assert_ptr_nonnull(op);
  double mean = 10, scale = 0.5;
  ck_assert(ct_attr_set_input_mean(g, op, 1, &mean));
  ck_assert(ct_attr_set_input_scale(g, op, 1, &scale));
  ck_assert(ct_graph_set_outputs(g, 1, &x));
  return g;
}

/* Writes an HDF5 file with `images` (u8, given shape, value = index mod 251) and optional
 * `labels` (u8, n_labels values 0..). */
static const char *write_h5(const char *name, ct_dtype dt, int ndim, const int64_t *shape, int64_t n_labels) {
  const char *path = ct_test_tmp_path(name);
  ct_tensor *t[2] = {ct_tensor_new(dt, ndim, shape, "images"), NULL};
  for (int64_t i = 0; i < ct_tensor_numel(t[0]); i++) ct_tensor_set_f64(t[0], i, (double)(i % 251));
  if (n_labels) {
    t[1] = ct_tensor_new(CT_U8, 1, &n_labels, "labels");
    for (int64_t i = 0; i < n_labels; i++) ct_tensor_set_f64(t[1], i, (double)(i % 10));
  }
  ct_diag d;
  ck_assert_int_eq(ct_h5_write(path, t, n_labels ? 2 : 1, &d), CT_OK);
  ct_tensor_free(t[0]);
  ct_tensor_free(t[1]);
  return path;
}

START_TEST(test_h5_gray_direct) {
  ct_graph *g = model(1, 2, 3);
  int64_t s[3] = {4, 2, 3};
  const char *p = write_h5("gray.h5", CT_U8, 3, s, 4);
  ct_dataset *ds;
  ct_diag d;
  ck_assert_int_eq(ct_dataset_open(p, g, &ds, &d), CT_OK);
  ck_assert_int_eq(ct_dataset_size(ds), 4);
  ck_assert(ct_dataset_has_labels(ds));
  ck_assert_int_eq(ct_dataset_label(ds, 3), 3);
  ck_assert_int_eq(ct_dataset_label(ds, 4), -1);
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ck_assert_int_eq(ct_dataset_load(ds, 2, &l, &d), CT_OK);
  ck_assert_int_eq(l.n, 1);
  ck_assert_str_eq(l.items[0]->name, "x");
  /* sample 2 starts at flat index 12: pixel 12 + k → (12 + k − 10)·0.5 */
  for (int k = 0; k < 6; k++) ck_assert_float_eq(((float *)l.items[0]->data)[k], (float)((2 + k) * 0.5));
  ck_assert_int_eq(ct_dataset_load(ds, 4, &l, &d), CT_ERR_USAGE);
  ct_tensor_list_free(&l);
  ct_dataset_free(ds);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_h5_rgb_and_f32) {
  ct_graph *g = model(3, 2, 2);
  int64_t s[4] = {2, 2, 2, 3};
  const char *p = write_h5("rgb.h5", CT_U8, 4, s, 0);
  ct_dataset *ds;
  ct_diag d;
  ck_assert_int_eq(ct_dataset_open(p, g, &ds, &d), CT_OK);
  ck_assert(!ct_dataset_has_labels(ds));
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ck_assert_int_eq(ct_dataset_load(ds, 1, &l, &d), CT_OK);
  /* sample 1, HWC bytes 12..23: channel c of pixel (y, x) = 12 + (2y + x)·3 + c, planar out */
  const float *x = l.items[0]->data;
  ck_assert_float_eq(x[0], (float)((12 - 10) * 0.5));
  ck_assert_float_eq(x[4 + 1], (float)((12 + 3 + 1 - 10) * 0.5));
  ck_assert_float_eq(x[8 + 3], (float)((12 + 9 + 2 - 10) * 0.5));
  ct_tensor_list_free(&l);
  ct_dataset_free(ds);
  int64_t f[4] = {3, 3, 2, 2};
  p = write_h5("f32.h5", CT_F32, 4, f, 3);
  ck_assert_int_eq(ct_dataset_open(p, g, &ds, &d), CT_OK);
  ct_tensor_list_init(&l);
  ck_assert_int_eq(ct_dataset_load(ds, 2, &l, &d), CT_OK);
  ck_assert_float_eq(((float *)l.items[0]->data)[11], 35.0f); /* used as is */
  ct_tensor_list_free(&l);
  ct_dataset_free(ds);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_h5_errors) {
  ct_graph *g = model(3, 2, 2);
  ct_dataset *ds = NULL;
  ct_diag d;
  int64_t s4[4] = {2, 2, 2, 4};
  ck_assert_int_eq(ct_dataset_open(write_h5("c4.h5", CT_U8, 4, s4, 0), g, &ds, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "4 channels") != NULL, "%s", d.msg);
  ck_assert_ptr_null(ds);
  int64_t f[4] = {3, 3, 2, 3};
  ck_assert_int_eq(ct_dataset_open(write_h5("f32bad.h5", CT_F32, 4, f, 0), g, &ds, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "do not match input \"x\"") != NULL, "%s", d.msg);
  int64_t s3[3] = {4, 2, 2};
  ck_assert_int_eq(ct_dataset_open(write_h5("nlab.h5", CT_U8, 3, s3, 3), g, &ds, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "labels must be 4 integers") != NULL, "%s", d.msg);
  ck_assert_int_eq(ct_dataset_open(ct_test_tmp_path("absent"), g, &ds, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "cannot read") != NULL, "%s", d.msg);
  const char *dir = ct_test_tmp_path("empty_dir");
  mkdir(dir, 0755);
  ck_assert_int_eq(ct_dataset_open(dir, g, &ds, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "no sample") != NULL, "%s", d.msg);
  ct_graph_free(g);
}
END_TEST

/* One-sample HDF5 input files "a.h5", "b.h5" in a folder holding x = 1 and x = 2. */
static const char *folder_of_h5(void) {
  const char *dir = ct_test_tmp_path("h5dir");
  mkdir(dir, 0755);
  int64_t s[4] = {1, 1, 1, 2};
  for (int k = 0; k < 2; k++) {
    ct_tensor *t = ct_tensor_new(CT_F32, 4, s, "x");
    ((float *)t->data)[0] = (float)(k + 1);
    char path[512];
    snprintf(path, sizeof path, "%s/%c.h5", dir, 'a' + k);
    ct_diag d;
    ck_assert_int_eq(ct_h5_write(path, &t, 1, &d), CT_OK);
    ct_tensor_free(t);
  }
  ck_assert(ct_test_write_file(ct_test_tmp_path("h5dir/notes.txt"), "x", 1)); /* ignored */
  return dir;
}

static float first_of(ct_dataset *ds, int64_t i) {
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ct_diag d;
  ck_assert_msg(ct_dataset_load(ds, i, &l, &d) == CT_OK, "%s", d.msg);
  float v = ((float *)l.items[0]->data)[0];
  ct_tensor_list_free(&l);
  return v;
}

START_TEST(test_folder_list_tsv) {
  ct_graph *g = model(1, 1, 2);
  const char *dir = folder_of_h5();
  ct_dataset *ds;
  ct_diag d;
  ck_assert_int_eq(ct_dataset_open(dir, g, &ds, &d), CT_OK);
  ck_assert_int_eq(ct_dataset_size(ds), 2);
  ck_assert(!ct_dataset_has_labels(ds));
  ck_assert_float_eq(first_of(ds, 1), 2.0f);
  char name[64];
  ck_assert_str_eq(ct_dataset_sample_name(ds, 0, name, sizeof name), "a.h5");
  ct_dataset_free(ds);
  /* a list relative to its folder, with a comment and a blank line */
  const char *list = ct_test_tmp_path("h5dir.list");
  const char *text = "# samples\nh5dir/b.h5\n\nh5dir/a.h5\nh5dir/b.h5\n";
  ck_assert(ct_test_write_file(list, text, strlen(text)));
  ck_assert_int_eq(ct_dataset_open(list, g, &ds, &d), CT_OK);
  ck_assert_int_eq(ct_dataset_size(ds), 3);
  ck_assert_float_eq(first_of(ds, 0), 2.0f);
  ck_assert_float_eq(first_of(ds, 1), 1.0f);
  ct_dataset_free(ds);
  /* labels.tsv with a header makes the folder labeled, in the file's order */
  const char *tsv = "file\tclass_index\nb.h5\t7\textra\na.h5\t3\n";
  ck_assert(ct_test_write_file(ct_test_tmp_path("h5dir/labels.tsv"), tsv, strlen(tsv)));
  ck_assert_int_eq(ct_dataset_open(dir, g, &ds, &d), CT_OK);
  ck_assert(ct_dataset_has_labels(ds));
  ck_assert_int_eq(ct_dataset_label(ds, 0), 7);
  ck_assert_int_eq(ct_dataset_label(ds, 1), 3);
  ck_assert_float_eq(first_of(ds, 0), 2.0f);
  ct_dataset_free(ds);
  const char *bad = "a.h5\t3\nb.h5\tseven\n";
  ck_assert(ct_test_write_file(ct_test_tmp_path("h5dir/labels.tsv"), bad, strlen(bad)));
  ck_assert_int_eq(ct_dataset_open(dir, g, &ds, &d), CT_ERR_INPUT);
  ck_assert_msg(strstr(d.msg, "labels.tsv:2: expected") != NULL, "%s", d.msg);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_unreadable_sample) {
  ct_graph *g = model(3, 2, 2);
  const char *list = ct_test_tmp_path("bad.list");
  const char *text = "missing.jpg\n";
  ck_assert(ct_test_write_file(list, text, strlen(text)));
  ct_dataset *ds;
  ct_diag d;
  ck_assert_int_eq(ct_dataset_open(list, g, &ds, &d), CT_OK);
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ck_assert_int_ne(ct_dataset_load(ds, 0, &l, &d), CT_OK);
  ck_assert_msg(strstr(d.msg, "missing.jpg") != NULL, "%s", d.msg);
  ck_assert_int_eq(l.n, 0);
  ct_dataset_free(ds);
  ct_graph_free(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dataset");
  TCase *tc = tcase_create("dataset");
  tcase_add_test(tc, test_h5_gray_direct);
  tcase_add_test(tc, test_h5_rgb_and_f32);
  tcase_add_test(tc, test_h5_errors);
  tcase_add_test(tc, test_folder_list_tsv);
  tcase_add_test(tc, test_unreadable_sample);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
