/* testutil.c: helpers shared by the Check suites (see testutil.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "tests/testutil.h"

#include "common/file.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ftw.h>
#include <unistd.h>

const char *ct_test_shared(void) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/../shared", CT_SOURCE_DIR);
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? path : NULL;
}

void ct_test_require_shared(const char *suite) {
  if (ct_test_shared()) return;
  printf("%s: skipped: ../shared (real models, images, ONNX tests) is absent\n", suite);
  exit(77);
}

const char *ct_test_shared_path(const char *fmt, ...) {
  static char ring[8][4096];
  static int k;
  char *buf = ring[k++ % 8];
  char rel[3000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rel, sizeof rel, fmt, ap);
  va_end(ap);
  snprintf(buf, 4096, "%s/../shared/%s", CT_SOURCE_DIR, rel);
  return buf;
}

static char tmp_dir[256];
static pid_t tmp_owner; /* the process that made tmp_dir: Check's forked test children inherit
                         * a directory made before the fork and must not remove it */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* atexit: removes the process's scratch directory (kept with CT_KEEP_TEST_TMP=1, to look at
 * a failing test's files); without it every run left its files in the build tree. */
static void remove_tmpdir(void) {
  if (getpid() == tmp_owner && !getenv("CT_KEEP_TEST_TMP")) nftw(tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *ct_test_tmpdir(void) {
  if (!tmp_dir[0]) {
    snprintf(tmp_dir, sizeof tmp_dir, "%s/tmp-tests-XXXXXX", CT_BINARY_DIR);
    if (!mkdtemp(tmp_dir)) {
      snprintf(tmp_dir, sizeof tmp_dir, "/tmp/ctpu-test-%ld", (long)getpid());
      mkdir(tmp_dir, 0700);
    }
    tmp_owner = getpid();
    atexit(remove_tmpdir);
  }
  return tmp_dir;
}

const char *ct_test_tmp_path(const char *name) {
  static char ring[8][512];
  static int k;
  char *buf = ring[k++ % 8];
  snprintf(buf, 512, "%s/%s", ct_test_tmpdir(), name);
  return buf;
}

int ct_test_run_ctpu(char *out, size_t n, const char *fmt, ...) {
  char args[8192], cmd[9000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", CT_CTPU, args);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t k = 0;
  char buf[4096];
  size_t r;
  while ((r = fread(buf, 1, sizeof buf, p)) > 0) {
    if (out && k + 1 < n) {
      size_t c = r < n - 1 - k ? r : n - 1 - k;
      memcpy(out + k, buf, c);
      k += c;
    }
  }
  if (out && n) out[k] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool ct_test_file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

bool ct_test_write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

char *ct_test_read_file(const char *path, size_t *n) {
  char *buf = NULL;
  ct_file_read(path, 0, &buf, n, NULL); /* buf stays NULL on failure */
  return buf;
}

bool ct_test_onnx_element_ok(const ct_tensor *got, const ct_tensor *ref, int64_t i, double atol, double rtol) {
  if (!ct_dtype_is_float(ref->dtype)) return ct_tensor_get_i64(got, i) == ct_tensor_get_i64(ref, i);
  double a = ct_tensor_get_f64(got, i), b = ct_tensor_get_f64(ref, i);
  if (isnan(b)) return isnan(a);
  if (isinf(b)) return a == b;
  /* bf16 keeps 8 significant bits, coarser than rtol: ONNX 1.12's data truncates f32 → bf16
   * where ctpu rounds to nearest even (docs/architecture.md §4.1), so allow one unit in the last
   * place, 2^(floor(log2|ref|) − 7) */
  double ulp = ref->dtype == CT_BF16 && b != 0 ? ldexp(1.0, ilogb(b) - 7) : 0;
  return fabs(a - b) <= fmax(atol + rtol * fabs(b), ulp);
}

int ct_test_group_ratios(const char *csv, double *r, int max, char *worst, size_t n) {
  char *text;
  if (ct_file_read(csv, 0, &text, NULL, NULL)) return -1;
  int rows = 0;
  double far = -1;
  if (n) worst[0] = 0;
  for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    char *end = strchr(line + 1, '\n'), *f = line + 1, *stop = end ? end : f + strlen(f);
    int col = 0;
    bool quoted = false;
    for (char *q = f; q < stop && col < 9; q++) { /* to the 10th column; names are quoted */
      if (*q == '"') quoted = !quoted;
      else if (*q == ',' && !quoted && ++col == 9) f = q + 1;
    }
    if (col < 9 || *f == ',' || *f == '\n' || !*f) continue; /* not simulated (a view) */
    double v = strtod(f, NULL);
    if (rows < max) r[rows] = v;
    rows++;
    if (fabs(v - 1) > far && n) far = fabs(v - 1), snprintf(worst, n, "%.*s", (int)(stop - line - 1), line + 1);
  }
  free(text);
  return rows;
}

bool ct_test_window_attrs(ct_graph *g, ct_op *op, const int64_t *k, const int64_t *st, const int64_t *dl,
                          const int64_t *pads) {
  return op && ct_op_set_ints(g, op, "kernel_shape", 2, k) && ct_op_set_ints(g, op, "strides", 2, st) &&
         ct_op_set_ints(g, op, "dilations", 2, dl) && ct_op_set_ints(g, op, "pads", 4, pads);
}

ct_value *ct_test_add_input(ct_graph *g, const char *name, ct_dtype dt, int ndim, const int64_t *shape) {
  ct_value *v = ct_graph_add_value(g, name, dt, ndim, shape);
  ck_assert_ptr_nonnull(ct_graph_add_op(g, CT_OP_INPUT, name, 0, NULL, 1, &v));
  return v;
}

ct_tensor *ct_test_f32_ramp(const char *name, int ndim, const int64_t *shape, float start) {
  ct_tensor *t = ct_tensor_new(CT_F32, ndim, shape, name);
  ck_assert_ptr_nonnull(t);
  float *p = t->data;
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) p[i] = start + (float)i;
  return t;
}

int ct_test_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

char *ct_test_doc_current(void (*gen)(FILE *f), const char *doc, const char *cmd) {
  char *text = NULL, path[4096];
  size_t tn = 0;
  FILE *f = open_memstream(&text, &tn);
  ck_assert_ptr_nonnull(f);
  gen(f);
  fclose(f);
  snprintf(path, sizeof path, "%s/%s", CT_SOURCE_DIR, doc);
  char *committed = ct_test_read_file(path, NULL);
  ck_assert_msg(committed != NULL, "cannot read %s", doc);
  ck_assert_msg(strcmp(text, committed) == 0, "%s is stale: regenerate with `%s > %s`", doc, cmd, doc);
  free(committed);
  return text;
}

const char *ct_test_sweep_chip(int k, const char *prefix) {
  static const int mxu[][2] = {{8, 8}, {16, 16}, {32, 32}, {64, 64}, {16, 64}};
  static const long lmem[] = {256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20};
  static const int banks[] = {4, 8, 16, 32}, ddr[] = {8, 16, 32, 64, 128};
  char json[512], name[96];
  snprintf(json, sizeof json,
           "{\"name\": \"sweep%d\", \"mxu.rows\": %d, \"mxu.cols\": %d, \"lmem.bytes\": %ld, \"lmem.banks\": %d, "
           "\"gmem.bytes_per_cycle\": %d, \"mxu.dataflow\": \"%s\", \"dma.load_engines\": %d, \"dma.store_engines\": %d}",
           k, mxu[k % 5][0], mxu[k % 5][1], lmem[(k / 2) % 5], banks[(k / 3) % 4], ddr[(k * 3 / 2) % 5], k % 2 ? "os" : "ws",
           1 + (k / 4) % 2, 1 + (k / 8) % 2);
  snprintf(name, sizeof name, "%s_sweep%d.json", prefix, k);
  const char *p = ct_test_tmp_path(name);
  return ct_test_write_file(p, json, strlen(json)) ? p : NULL;
}
