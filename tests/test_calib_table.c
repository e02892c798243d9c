/* test_calib_table.c: quant/calib_table.c and qtable.c — the TPU-MLIR calibration table
 * (threshold rows, #weight_scale block) and quantize table: write → read round trips with
 * exact doubles, and every malformed case with its exact file:line message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant/calib_table.h"
#include "quant/qtable.h"
#include "tests/testutil.h"

/* Parses text (copied) as "cali.txt" into a fresh table; returns the status, message in d. */
static ct_status parse_cali(const char *text, ct_calib_table *t, ct_diag *d) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", text);
  ct_calib_table_init(t);
  ct_diag_clear(d);
  return ct_calib_table_parse(buf, "cali.txt", t, d);
}

/* The message of a calibration text that must fail with CT_ERR_INPUT. */
static void expect_cali_error(const char *text, const char *msg) {
  ct_calib_table t;
  ct_diag d;
  ck_assert_int_eq(parse_cali(text, &t, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, msg);
  ct_calib_table_free(&t);
}

START_TEST(test_calib_table_tpu_mlir_sample) {
  const char *text = "# genetated time: 2022-08-11 10:00:59.743675\n# histogram number: 2048\n"
                     "# sample number: 100\n###\n# op_name    threshold    min    max\n"
                     "images 1.0000080 0.0000000 1.0000080\r\n122_Conv 56.4281803 -102.5830231 97.6811752\n\n"
                     "#weight_scale\nconv1_weight 2 0.5 0.25\nconv2_weight 2 0.5 0.25 2 0 3\n# back\nz\t1 -1 1\n";
  ct_calib_table t;
  ct_diag d;
  ck_assert_int_eq(parse_cali(text, &t, &d), CT_OK);
  ck_assert_int_eq(t.n, 3);
  ck_assert_int_eq(t.nw, 2);
  const ct_calib_row *r = ct_calib_table_find(&t, "122_Conv");
  ck_assert_ptr_nonnull(r);
  ck_assert_double_eq(r->threshold, 56.4281803);
  ck_assert_double_eq(r->min, -102.5830231);
  ck_assert_int_eq(r->line, 7);
  ck_assert_double_eq(ct_calib_table_find(&t, "images")->max, 1.000008);
  ck_assert_ptr_nonnull(ct_calib_table_find(&t, "z")); /* after "# back": thresholds again */
  const ct_calib_wrow *w = ct_calib_table_find_weight(&t, "conv2_weight");
  ck_assert_int_eq(w->n, 2);
  ck_assert_double_eq(w->scale[1], 0.25);
  ck_assert_int_eq(w->zp[1], 3);
  ck_assert_ptr_null(ct_calib_table_find_weight(&t, "conv1_weight")->zp);
  ck_assert_ptr_null(ct_calib_table_find(&t, "conv1_weight"));
  ct_calib_table_free(&t);
}
END_TEST

START_TEST(test_calib_table_round_trip_exact) {
  ct_calib_table t, u;
  ct_calib_table_init(&t);
  ck_assert_int_eq(ct_calib_table_add(&t, "input", 1.000008, 0, 1.000008, 0, NULL), CT_OK);
  ck_assert_int_eq(ct_calib_table_add(&t, "/conv/Conv_output_0", 0.1, -0.1, 0.30000000000000004, 0, NULL), CT_OK);
  ck_assert_int_eq(ct_calib_table_add(&t, "tiny", 1e-20, -1e-20, 1e20, 0, NULL), CT_OK);
  ck_assert_int_eq(ct_calib_table_add(&t, "zero", 0, 0, 0, 0, NULL), CT_OK);
  double sc[3] = {0.1, 0.25, 3e-5};
  int32_t zp[3] = {0, -3, 7};
  ck_assert_int_eq(ct_calib_table_add_weight(&t, "conv_weight", 3, sc, NULL, 0, NULL), CT_OK);
  ck_assert_int_eq(ct_calib_table_add_weight(&t, "fc_weight", 3, sc, zp, 0, NULL), CT_OK);
  double th[2] = {0, 5.9999999999999991};
  ck_assert_int_eq(ct_calib_table_add_channel(&t, "/conv/Conv_output_0", 2, th, 0, NULL), CT_OK);
  const char *path = ct_test_tmp_path("cali_rt.txt"), *notes[] = {"sample number: 4"};
  ck_assert_int_eq(ct_calib_table_write(path, &t, notes, 1, NULL), CT_OK);
  char *text = ct_test_read_file(path, NULL);
  ck_assert_ptr_nonnull(strstr(text, "# sample number: 4\n# op_name threshold min max\ninput 1.000008 0 1.000008\n"));
  ck_assert_ptr_nonnull(strstr(text, "\ntiny 1e-20 -1e-20 1e20\n"));
  ck_assert_ptr_nonnull(strstr(text, "\n#weight_scale\nconv_weight 3 0.1 0.25 3e-05\nfc_weight 3 0.1 0.25 3e-05 3 0 -3 7\n"
                                     "#channel_threshold\n/conv/Conv_output_0 2 0 5.999999999999999\n"));
  free(text);
  ct_calib_table_init(&u);
  ck_assert_int_eq(ct_calib_table_read(path, &u, NULL), CT_OK);
  ck_assert_int_eq(u.n, t.n);
  for (int64_t i = 0; i < t.n; i++) {
    ck_assert_str_eq(u.rows[i].name, t.rows[i].name);
    ck_assert(u.rows[i].threshold == t.rows[i].threshold && u.rows[i].min == t.rows[i].min &&
              u.rows[i].max == t.rows[i].max);
  }
  ck_assert_int_eq(u.nw, 2);
  ck_assert(memcmp(u.w[1].scale, sc, sizeof sc) == 0 && memcmp(u.w[1].zp, zp, sizeof zp) == 0);
  ck_assert_ptr_null(u.w[0].zp);
  const ct_calib_wrow *ch = ct_calib_table_find_channel(&u, "/conv/Conv_output_0");
  ck_assert(ch && ch->n == 2 && memcmp(ch->scale, th, sizeof th) == 0 && !ch->zp);
  ck_assert_ptr_null(ct_calib_table_find_channel(&u, "input"));
  ct_calib_table_free(&t);
  ct_calib_table_free(&u);
}
END_TEST

START_TEST(test_calib_table_malformed_messages) {
  expect_cali_error("# h\na 1 0 1\nb 1 0\n", "cali.txt:3: expected 4 fields, got 3");
  expect_cali_error("a 1 0 1 9\n", "cali.txt:1: expected 4 fields, got 5");
  expect_cali_error("a 1 0 1\n\nb 2 0 1\na 3 0 1\n", "cali.txt:4: duplicate name \"a\" (first on line 1)");
  expect_cali_error("a nan 0 1\n", "cali.txt:1: threshold nan is not finite");
  expect_cali_error("a inf 0 1\n", "cali.txt:1: threshold inf is not finite");
  expect_cali_error("a -1 0 1\n", "cali.txt:1: threshold -1 is negative");
  expect_cali_error("a 1 3 2\n", "cali.txt:1: min 3 > max 2");
  expect_cali_error("a 1 0 -inf\n", "cali.txt:1: max -inf is not finite");
  expect_cali_error("a 1x 0 1\n", "cali.txt:1: bad number \"1x\" for threshold");
  expect_cali_error("a 1 0 one\n", "cali.txt:1: bad number \"one\" for max");
  expect_cali_error("#weight_scale\nw 2 0.5\n",
                    "cali.txt:2: expected 2 + 2 fields (name, count, 2 scales) or 3 + 4 with zero points, got 3");
  expect_cali_error("#weight_scale\nw x 1\n", "cali.txt:2: bad channel count \"x\"");
  expect_cali_error("#weight_scale\nw 0\n", "cali.txt:2: bad channel count \"0\"");
  expect_cali_error("#weight_scale\nw 2 0.5 0\n", "cali.txt:2: channel 1: scale 0 is not a finite number > 0");
  expect_cali_error("#weight_scale\nw 2 0.5 1 3 0 0\n", "cali.txt:2: zero point count \"3\" differs from channel count 2");
  expect_cali_error("#weight_scale\nw 1 0.5 1 0.5\n", "cali.txt:2: bad zero point \"0.5\"");
  expect_cali_error("#weight_scale\nw 1 0.5\nw 1 0.25\n", "cali.txt:3: duplicate name \"w\" (first on line 2)");
  expect_cali_error("#channel_threshold\nx 2 0.5 0 1\n", "cali.txt:2: expected 2 + 2 fields (name, count, 2 thresholds), got 5");
  expect_cali_error("#channel_threshold\nx 2 0.5 -1\n", "cali.txt:2: channel 1: threshold -1 is not a finite number >= 0");
  expect_cali_error("#channel_threshold\nx 1 q\n", "cali.txt:2: bad number \"q\" for threshold");
  expect_cali_error("#channel_threshold\nx 1 1\n#weight_scale\nx 1 1\n#channel_threshold\nx 1 2\n",
                    "cali.txt:6: duplicate name \"x\" (first on line 2)");
  expect_cali_error("a 1 0 1\n#int4_th\nb 1 0 1\n",
                    "cali.txt:2: block \"#int4_th\" is not supported (thresholds, #weight_scale and #channel_threshold only)");
}
END_TEST

START_TEST(test_calib_table_file_errors) {
  ct_calib_table t;
  ct_diag d;
  ct_calib_table_init(&t);
  const char *path = ct_test_tmp_path("bad_cali.txt");
  ck_assert(ct_test_write_file(path, "a 1 0 1\nb 2 0\n", 14));
  ck_assert_int_eq(ct_calib_table_read(path, &t, &d), CT_ERR_INPUT);
  char want[600];
  snprintf(want, sizeof want, "%s:2: expected 4 fields, got 3", path);
  ck_assert_str_eq(d.msg, want);
  ct_calib_table_free(&t);
  ck_assert_int_eq(ct_calib_table_read(ct_test_tmp_path("no_such_table.txt"), &t, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "no_such_table.txt: cannot read"));
  ck_assert_int_eq(ct_calib_table_add(&t, "a b", 1, 0, 1, 0, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "name \"a b\" is empty, has a blank or starts with '#'");
  ck_assert_int_eq(ct_calib_table_add(&t, "a", 1, 0, 1, 0, &d), CT_OK);
  ck_assert_int_eq(ct_calib_table_add(&t, "a", 1, 0, 1, 0, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "duplicate name \"a\"");
  const char *bad[] = {"#weight_scale"};
  ck_assert_int_eq(ct_calib_table_write(ct_test_tmp_path("c.txt"), &t, bad, 1, &d), CT_ERR_USAGE);
  ct_calib_table_free(&t);
}
END_TEST

/* The message of a quantize-table text that must fail with CT_ERR_INPUT. */
static void expect_q_error(const char *text, const char *msg) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  ct_qtable t;
  ct_diag d;
  ct_qtable_init(&t);
  ck_assert_int_eq(ct_qtable_parse(buf, "q.txt", &t, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, msg);
  ct_qtable_free(&t);
}

START_TEST(test_qtable_round_trip_and_errors) {
  char text[] = "# qtable from search_qtable\n# op_name  quantize_mode\nconv1 INT8\n  /sm/Softmax   bf16\r\n"
                "\nln F32\nx F16\n";
  ct_qtable t, u;
  ct_qtable_init(&t);
  ck_assert_int_eq(ct_qtable_parse(text, "q.txt", &t, NULL), CT_OK);
  ck_assert_int_eq(t.n, 4);
  ck_assert_int_eq(ct_qtable_find(&t, "/sm/Softmax")->mode, CT_QMODE_BF16);
  ck_assert_int_eq(ct_qtable_find(&t, "ln")->line, 6);
  const char *path = ct_test_tmp_path("qtable.txt");
  ck_assert_int_eq(ct_qtable_write(path, &t, NULL), CT_OK);
  char *out = ct_test_read_file(path, NULL);
  ck_assert_str_eq(out, "# ctpu quantize table\n# op_name quantize_mode\nconv1 INT8\n/sm/Softmax BF16\nln F32\nx F16\n");
  free(out);
  ct_qtable_init(&u);
  ck_assert_int_eq(ct_qtable_read(path, &u, NULL), CT_OK);
  ck_assert_int_eq(u.n, 4);
  for (int64_t i = 0; i < 4; i++) {
    ck_assert_str_eq(u.rows[i].name, t.rows[i].name);
    ck_assert_int_eq(u.rows[i].mode, t.rows[i].mode);
  }
  ct_qtable_free(&t);
  ct_qtable_free(&u);
  expect_q_error("a INT8 x\n", "q.txt:1: expected 2 fields, got 3");
  expect_q_error("# c\na\n", "q.txt:2: expected 2 fields, got 1");
  expect_q_error("a INT4\n", "q.txt:1: unknown mode \"INT4\" (INT8, BF16, F16 or F32)");
  expect_q_error("a INT8\nb F32\na BF16\n", "q.txt:3: duplicate name \"a\" (first on line 1)");
  ck_assert_str_eq(ct_qmode_name(CT_QMODE_F16), "F16");
  ck_assert_int_eq(ct_qmode_from_name("int8"), CT_QMODE_INT8);
  ck_assert_int_eq(ct_qmode_from_name("INT"), CT_QMODE_COUNT);
}
END_TEST

int main(void) {
  Suite *s = suite_create("calib_table");
  TCase *tc = tcase_create("calib_table");
  tcase_add_test(tc, test_calib_table_tpu_mlir_sample);
  tcase_add_test(tc, test_calib_table_round_trip_exact);
  tcase_add_test(tc, test_calib_table_malformed_messages);
  tcase_add_test(tc, test_calib_table_file_errors);
  tcase_add_test(tc, test_qtable_round_trip_and_errors);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
