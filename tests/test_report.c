/* test_report.c: `ctpu report` (traces/html_report.h). The CSV and compare-table readers on
 * small texts; bad folders and corrupt files (message, exit code); and a real run
 * (fmnist-rescnn INT8 deployed, simulated, compared against the float model, plus a sweep
 * results CSV) rendered by headless Chromium: the page logs no console message, every plot
 * renders (#ctpu-status), and the screenshot shows each plot's mark colours inside its box. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image.h"
#include "tests/testutil.h"
#include "traces/html_parse.h"
#include "traces/html_report.h"

/* ---- the readers ---- */

START_TEST(test_csv_quotes_numbers_nulls) {
  const char *text = "layer,group,cycles,note\r\n\"a,\"\"b\"\"\",0,12.5,\n\nc,1,7,\"two\nlines\"\n";
  cJSON *rows;
  ct_diag d;
  ck_assert_int_eq(ct_html_csv(text, "t.csv", (const char *const[]){"cycles", NULL}, &rows, &d), CT_OK);
  ck_assert_int_eq(cJSON_GetArraySize(rows), 2);
  cJSON *r0 = cJSON_GetArrayItem(rows, 0), *r1 = cJSON_GetArrayItem(rows, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(r0, "layer")->valuestring, "a,\"b\"");
  ck_assert(cJSON_GetObjectItem(r0, "cycles")->valuedouble == 12.5);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(r0, "note")));
  ck_assert_str_eq(cJSON_GetObjectItem(r1, "note")->valuestring, "two\nlines");
  cJSON_Delete(rows);
}
END_TEST

START_TEST(test_csv_errors_name_the_line) {
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"a,cycles\n1,2\n3\n", "t.csv:3: 1 fields, the header has 2"},
      {"a,cycles\n1,\"2\n", "t.csv:2: unterminated quote"},
      {"a,cycles\n1,\"2\"x\n", "t.csv:2: text after a closing quote"},
      {"a,cycles\n1,2\nx,fast\n", "t.csv:3: column \"cycles\" is \"fast\", not a number"},
      {"a,b\n1,2\n", "t.csv:1: no column \"cycles\""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cJSON *rows = (cJSON *)1;
    ct_diag d;
    ck_assert_int_eq(ct_html_csv(bad[i].text, "t.csv", (const char *const[]){"cycles", NULL}, &rows, &d), CT_ERR_INPUT);
    ck_assert_str_eq(d.msg, bad[i].msg);
    ck_assert_ptr_null(rows);
  }
}
END_TEST

START_TEST(test_compare_table_rows) {
  const char *text = "tolerance f32 vs int8: cosine >= 0.97, euclid >= 0.75 (--tolerance to set)\n"
                     "name    shape                  verdict       cosine     euclid   sqnr_db      max_abs  result\n"
                     "conv1   1x8x4x4 f32            close       0.999000   0.950000     30.50       0.125  PASS\n"
                     "out     1x10 f32               equal       1.000000   1.000000       inf           0  PASS\n"
                     "gone    -                      missing  (only in A)  FAIL\n"
                     "compare: 3 tensors, 2 passed, 1 failed\n";
  cJSON *rows;
  ct_diag d;
  ck_assert_int_eq(ct_html_compare_table(text, "c.txt", &rows, &d), CT_OK);
  ck_assert_int_eq(cJSON_GetArraySize(rows), 2);
  cJSON *r0 = cJSON_GetArrayItem(rows, 0), *r1 = cJSON_GetArrayItem(rows, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(r0, "name")->valuestring, "conv1");
  ck_assert(cJSON_GetObjectItem(r0, "sqnr_db")->valuedouble == 30.5);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(r1, "sqnr_db")));
  cJSON_Delete(rows);
  ck_assert_int_eq(ct_html_compare_table("no table here\n", "c.txt", &rows, &d), CT_OK);
  ck_assert_ptr_null(rows);
  const char *bad = "name shape verdict cosine euclid sqnr maxdiff\nx 1 f32 close 0.9 zz 3 4 PASS\n";
  ck_assert_int_eq(ct_html_compare_table(bad, "c.txt", &rows, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "c.txt:2: euclid \"zz\" is not a number");
}
END_TEST

/* ---- bad inputs through the command ---- */

static const char *write_in(const char *dir, const char *name, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ck_assert(ct_test_write_file(path, text, strlen(text)));
  return dir;
}

/* Runs `ctpu report dir` and checks the exit code and that the output names want. */
static void expect_fail(const char *dir, int code, const char *want) {
  char msg[4096];
  int rc = ct_test_run_ctpu(msg, sizeof msg, "report %s -o %s", dir, ct_test_tmp_path("bad.html"));
  ck_assert_msg(rc == code && strstr(msg, want), "report %s: rc %d (want %d), output: %s (want \"%s\")", dir, rc, code, msg,
                want);
  ck_assert(!ct_test_file_exists(ct_test_tmp_path("bad.html")));
}

/* A new empty folder name under the test's temporary folder (a static copy: valid until the
 * fourth next call). */
static const char *fresh_dir(const char *name) {
  static char ring[4][600];
  static int k;
  char *dir = ring[k++ % 4], cmd[1300];
  snprintf(dir, 600, "%s", ct_test_tmp_path(name));
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  ck_assert_int_eq(system(cmd), 0);
  return dir;
}

START_TEST(test_bad_folders_and_files) {
  char msg[4096];
  ck_assert_int_eq(ct_test_run_ctpu(msg, sizeof msg, "report %s", ct_test_tmpdir()), 2); /* no -o */
  expect_fail(ct_test_tmp_path("no_such_dir"), 3, "no_such_dir: cannot read the folder");
  expect_fail(fresh_dir("empty"), 3, "empty: no summary JSON, per-layer CSV, groups CSV, compare table or sweep");
  const char *layers = "layer,group,start,end,cycles,instructions,busy_mxu,macs,ddr_bytes_read,ddr_bytes_written\n";
  char text[512];
  snprintf(text, sizeof text, "%sconv,0,0,10,10,2,8,100,64\n", layers);
  expect_fail(write_in(fresh_dir("short_row"), "l.csv", text), 3, "l.csv:2: 9 fields, the header has 10");
  snprintf(text, sizeof text, "%sconv,0,0,ten,10,2,8,100,64,0\n", layers);
  expect_fail(write_in(fresh_dir("not_num"), "l.csv", text), 3, "l.csv:2: column \"end\" is \"ten\", not a number");
  expect_fail(write_in(fresh_dir("bad_json"), "s.json", "{\"total_cycles\": 12,"), 3, "s.json: not valid JSON");
  const char *two = fresh_dir("two");
  write_in(two, "a.json", "{\"total_cycles\": 1, \"engines\": {}}");
  expect_fail(write_in(two, "b.json", "{\"total_cycles\": 2, \"engines\": {}}"), 3, "two summary JSONs: a.json and b.json");
  expect_fail(write_in(fresh_dir("bad_sweep"), "results.csv", "point,model,cycles,lmem_bytes\n0,m,5,6\n1,m,7\n"), 3,
              "results.csv:3: 3 fields, the header has 4");
}
END_TEST

/* ---- a real run in headless Chromium ---- */

/* fmnist-rescnn INT8 into folder dir as a run: groups CSV (deploy), summary JSON and
 * per-layer CSV (sim), compare table (INT8 vs float, every tensor), and a sweep CSV. */
static void make_run(const char *dir) {
  const char *m = ct_test_shared_path("models/fmnist-rescnn/model.onnx");
  const char *in = ct_test_shared_path("models/fmnist-rescnn/test_data_set_0/input_0.pb");
  char top[600], cal[600], tpu[600], y[600], ta[600], qa[600], msg[8192];
  snprintf(top, sizeof top, "%s", ct_test_tmp_path("fm.top"));
  snprintf(cal, sizeof cal, "%s", ct_test_tmp_path("fm.cali"));
  snprintf(tpu, sizeof tpu, "%s", ct_test_tmp_path("fm.tpu"));
  snprintf(y, sizeof y, "%s", ct_test_tmp_path("y.h5"));
  snprintf(ta, sizeof ta, "%s", ct_test_tmp_path("top_all.h5"));
  snprintf(qa, sizeof qa, "%s", ct_test_tmp_path("tpu_all.h5"));
  int rc = ct_test_run_ctpu(msg, sizeof msg, "transform %s -o %s", m, top);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "calibrate %s --dataset %s --method minmax -o %s", top, in, cal);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "lower %s --quantize INT8 --calibration-table %s -o %s", top, cal, tpu);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "deploy %s -o %s/fm.ctpu --test-input %s", tpu, dir, in);
  if (!rc)
    rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s/fm.ctpu --input %s -o %s --summary %s/summary.json --report %s/layers.csv",
                          dir, in, y, dir, dir);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "infer %s --input %s -o %s --dump-all %s", top, in, y, ta);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "infer %s --input %s -o %s --dump-all %s", tpu, in, y, qa);
  ck_assert_msg(rc == 0, "%s", msg);
  rc = ct_test_run_ctpu(msg, sizeof msg, "compare %s %s > %s/compare.txt", ta, qa, dir);
  ck_assert_msg(rc == 0 || rc == 1, "compare: %d", rc); /* 1: some INT8 tensor below the tolerance */
  /* a sweep of 6 points, two models: fronts lmem_bytes 2 + 2 = 4, mxu_size 2 + 3 = 5 */
  write_in(dir, "results.csv", "point,model,strategy,mxu.rows,cycles,lmem_bytes,mxu_size\n"
                               "0,a,dp,8,900,1000,64\n1,a,dp,16,500,2000,256\n2,a,dp,32,600,4000,1024\n"
                               "3,b,dp,8,800,1000,64\n4,b,greedy,16,700,1000,256\n5,b,dp,32,400,3000,1024\n");
}

/* The per-layer CSV's stall columns of run dir add up, over the layers, to the summary's
 * stalls of that reason over the engines (every engine instruction of the program carries
 * debug info), and some layer waits on DDR. */
static void check_layer_stalls(const char *dir) {
  static const char *const why[3] = {"bank_conflict", "ddr", "semaphore"};
  char path[700], col[32];
  snprintf(path, sizeof path, "%s/layers.csv", dir);
  char *csv = ct_test_read_file(path, NULL);
  snprintf(path, sizeof path, "%s/summary.json", dir);
  char *sum = ct_test_read_file(path, NULL);
  cJSON *rows, *js = sum ? cJSON_Parse(sum) : NULL, *r, *e;
  ct_diag d;
  ck_assert_ptr_nonnull(js);
  ck_assert_msg(csv && ct_html_csv(csv, "layers.csv", NULL, &rows, &d) == CT_OK, "%s", d.msg);
  for (int k = 0; k < 3; k++) {
    double layers = 0, engines = 0;
    snprintf(col, sizeof col, "stall_%s", why[k]);
    cJSON_ArrayForEach(r, rows) layers += cJSON_GetObjectItem(r, col)->valuedouble;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(js, "engines")) engines += cJSON_GetObjectItem(cJSON_GetObjectItem(e, "stall"), why[k])->valuedouble;
    ck_assert_msg(layers == engines, "%s: layers %.0f, engines %.0f", col, layers, engines);
    if (k == 1) ck_assert(layers > 0);
  }
  cJSON_Delete(rows), cJSON_Delete(js);
  free(csv), free(sum);
}

/* Headless Chromium on page: --dump-dom into dom (logging to log), or a screenshot into png. */
static int chromium(const char *page, const char *dom, const char *log, const char *png) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 "
           "--window-size=1400,4000 --user-data-dir=%s --virtual-time-budget=20000 %s%s file://%s %s%s 2>%s",
           ct_test_tmp_path("chromium-profile"), png ? "--screenshot=" : "--enable-logging=stderr --v=0 --dump-dom",
           png ? png : "", page, dom ? "> " : "", dom ? dom : "", log);
  return system(cmd);
}

/* Counts the pixels of img inside box (x, y, w, h) within 30 of colour hex "#rrggbb" per channel. */
static long colour_pixels(const ct_image *img, const int *box, const char *hex) {
  unsigned c = (unsigned)strtoul(hex + 1, NULL, 16);
  int want[3] = {(int)(c >> 16), (int)(c >> 8 & 255), (int)(c & 255)};
  long n = 0;
  for (int64_t y = box[1]; y < box[1] + box[3] && y < img->h; y++)
    for (int64_t x = box[0]; x < box[0] + box[2] && x < img->w; x++) {
      const uint8_t *p = img->rgb + 3 * (y * img->w + x);
      n += abs(p[0] - want[0]) <= 30 && abs(p[1] - want[1]) <= 30 && abs(p[2] - want[2]) <= 30;
    }
  return n;
}

/* Checks every "plot ID X Y W H COLOURS" line of status against the screenshot: each colour
 * covers at least 40 pixels of the box's axes and marks (not its legend), and the page header (above the first plot) holds
 * none of them (so the count can fail). Returns the number of plots. */
static int check_pixels(const char *status, const char *png) {
  ct_image img;
  ct_diag d;
  ck_assert_msg(ct_image_load(png, &img, &d) == CT_OK, "%s", d.msg);
  int n = 0;
  for (const char *s = strstr(status, "plot "); s; s = strstr(s + 1, "\nplot ")) {
    char id[32], colours[256];
    int box[4];
    ck_assert_int_eq(sscanf(s + (*s == '\n'), "plot %31s %d %d %d %d %255s", id, &box[0], &box[1], &box[2], &box[3], colours), 6);
    int head[4] = {0, 0, (int)img.w, 30};
    box[2] = box[2] < 1200 ? box[2] : 1200; /* the legend, right of the 1200 px data area, does not count */
    for (char *c = strtok(colours, ","); c; c = strtok(NULL, ",")) {
      long k = colour_pixels(&img, box, c);
      ck_assert_msg(k >= 40, "plot %s: %ld pixels of %s in its box %d,%d %dx%d", id, k, c, box[0], box[1], box[2], box[3]);
      ck_assert_int_eq(colour_pixels(&img, head, c), 0);
    }
    n++;
  }
  ct_image_free(&img);
  return n;
}

START_TEST(test_fmnist_page_renders_every_plot) {
  if (!ct_test_shared()) {
    printf("test_report: page test skipped: ../shared (fmnist-rescnn) is absent\n");
    return;
  }
  const char *dir = fresh_dir("run");
  make_run(dir);
  check_layer_stalls(dir);
  char msg[4096], page[1100], *dom, *log;
  snprintf(page, sizeof page, "%s/report.html", dir);
  int rc = ct_test_run_ctpu(msg, sizeof msg, "report %s -o %s", dir, page);
  if (!ct_html_have_library()) { /* built without Vega-Lite: the command says so */
    ck_assert_msg(rc == 3 && strstr(msg, "without the plotting library"), "rc %d: %s", rc, msg);
    printf("test_report: page test skipped: the plotting library is not built in (scripts/deps.sh)\n");
    return;
  }
  ck_assert_msg(rc == 0 && strstr(msg, "summary layers groups compare sweep"), "rc %d: %s", rc, msg);
  if (system("command -v chromium >/dev/null 2>&1")) {
    printf("test_report: page test skipped: chromium is absent (scripts/deps.sh installs it)\n");
    return;
  }
  ck_assert_int_eq(chromium(page, ct_test_tmp_path("dom.html"), ct_test_tmp_path("chromium.log"), NULL), 0);
  ck_assert_ptr_nonnull(dom = ct_test_read_file(ct_test_tmp_path("dom.html"), NULL));
  ck_assert_ptr_nonnull(log = ct_test_read_file(ct_test_tmp_path("chromium.log"), NULL));
  ck_assert_msg(!strstr(log, "CONSOLE") && !strstr(log, "Uncaught"), "console output: %s", log);
  const char *st = strstr(dom, "<pre id=\"ctpu-status\">");
  ck_assert_msg(st && strstr(st, "rendered 7"), "status: %.600s", st ? st : dom);
  /* the page's Pareto fronts match the rows written above */
  ck_assert_ptr_nonnull(strstr(dom, "pareto lmem 4, mxu 5"));
  const char *png = ct_test_tmp_path("shot.png");
  ck_assert_int_eq(chromium(page, NULL, ct_test_tmp_path("shot.log"), png), 0);
  ck_assert_int_eq(check_pixels(st, png), 7);
  free(dom), free(log);
}
END_TEST

/* The shapes `ctpu sweep` and `ctpu deploy --summary` write: a results CSV with levels
 * (point rows only are plotted; a failed point has no cycles), swept chip keys instead of
 * lmem_bytes / mxu_size, sim_cycles; a summary nested under "sim". */
START_TEST(test_sweep_levels_and_deploy_summary) {
  if (!ct_html_have_library() || system("command -v chromium >/dev/null 2>&1")) {
    printf("test_report: sweep page test skipped: needs chromium and the plotting library (scripts/deps.sh)\n");
    return;
  }
  const char *dir = fresh_dir("sweep");
  write_in(dir, "summary.json", "{\"model\": \"m\", \"sim\": {\"total_cycles\": 1000, \"engines\": {\"mxu\": {\"busy\": 600, "
                                "\"idle\": 100, \"stall\": {\"ddr\": 300}, \"stall_total\": 300, \"instructions\": 4}}}}");
  /* fronts: lmem 900 @ 256 KiB, 500 @ 512 KiB (600 @ 1 MiB is not); mxu 64 and 256 likewise.
   * Were the group row (100 cycles) plotted, it alone would lead the lmem front. */
  write_in(dir, "results.csv", "point,model,strategy,mxu.rows,mxu.cols,lmem.bytes,level,index,group,name,status,sim_cycles,lmem_bytes\n"
                               "0,a,dp,8,8,262144,point,,,,ok,900,1000\n0,a,dp,8,8,262144,group,0,0,c,ok,100,500\n"
                               "1,a,dp,16,16,524288,point,,,,ok,500,1000\n2,a,dp,32,32,1048576,point,,,,ok,600,1000\n"
                               "3,a,dp,64,64,262144,point,,,,limit,,\n");
  char msg[4096], page[700], *dom, *log;
  snprintf(page, sizeof page, "%s/report.html", dir);
  int rc = ct_test_run_ctpu(msg, sizeof msg, "report %s -o %s", dir, page);
  ck_assert_msg(rc == 0 && strstr(msg, "summary sweep"), "rc %d: %s", rc, msg);
  ck_assert_int_eq(chromium(page, ct_test_tmp_path("dom2.html"), ct_test_tmp_path("chromium2.log"), NULL), 0);
  ck_assert_ptr_nonnull(dom = ct_test_read_file(ct_test_tmp_path("dom2.html"), NULL));
  ck_assert_ptr_nonnull(log = ct_test_read_file(ct_test_tmp_path("chromium2.log"), NULL));
  ck_assert_msg(!strstr(log, "CONSOLE") && !strstr(log, "Uncaught"), "console output: %s", log);
  ck_assert_msg(strstr(dom, "rendered 2") && strstr(dom, "3 points; lines join each model's Pareto front (pareto lmem 2, mxu 2)"),
                "%.3000s", strstr(dom, "<body>") ? strstr(dom, "<body>") : dom);
  free(dom), free(log);
}
END_TEST

int main(void) {
  Suite *s = suite_create("report");
  TCase *t = tcase_create("report");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, test_csv_quotes_numbers_nulls);
  tcase_add_test(t, test_csv_errors_name_the_line);
  tcase_add_test(t, test_compare_table_rows);
  tcase_add_test(t, test_bad_folders_and_files);
  tcase_add_test(t, test_fmnist_page_renders_every_plot);
  tcase_add_test(t, test_sweep_levels_and_deploy_summary);
  suite_add_tcase(s, t);
  return ct_test_run_suite(s);
}
