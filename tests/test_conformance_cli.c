/* test_conformance_cli.c: the ONNX backend node tests (../shared/onnx-node-tests) through the
 * command line, as a user would run them: `ctpu transform model.onnx [--input-shapes ...]
 * [--const-input NAME=input_k.pb ...]` then `ctpu infer --input <the other inputs> -o out.h5`,
 * outputs checked with ONNX's tolerances (rtol 1e-3, atol 1e-7). Inputs that must be
 * compile-time constants (Reshape's shape, ...) are bound with --const-input when transform
 * says an operand is non-constant, as the in-process runner (test_conformance) binds them.
 * Prints pass/skip/fail counts; fails on any wrong answer, and when fewer than MIN_PASSED pass
 * (a skip is an operator or attribute ctpu refuses cleanly).
 * CT_CONFORMANCE_CLI_STRIDE=N runs every N-th test only (the pass-count floor then scales; 4 N
 * under ASan unless CT_CONFORMANCE_CLI_FULL is set); CT_CONFORMANCE_CLI_ONLY=TEXT runs the tests
 * whose name contains TEXT (the floor then does not apply). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation" /* paths are far below the buffers */
#endif
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/file.h"
#include "common/h5io.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "tests/testutil.h"

#define RTOL 1e-3
#define ATOL 1e-7
#define MAX_IN 32
/* Passes through the CLI when this floor was set: 972 (the in-process runner passes 966; the CLI
 * also binds the non-constant Range limit of the *window_expanded tests). */
#define MIN_PASSED 967

typedef struct model_io {
  int n_in, n_out;
  char in[MAX_IN][256], out[MAX_IN][256];
} model_io;

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Graph input (not initializer) and output names of dir/model.onnx. */
static bool read_io(const char *dir, model_io *io) {
  char path[4096];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  char *buf = NULL;
  size_t len = 0;
  ct_diag d;
  memset(io, 0, sizeof *io);
  if (ct_file_read(path, 0, &buf, &len, &d) != CT_OK) return false;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)buf);
  free(buf);
  if (!m || !m->graph) return m ? (onnx__model_proto__free_unpacked(m, NULL), false) : false;
  const Onnx__GraphProto *g = m->graph;
  bool ok = true;
  for (size_t i = 0; i < g->n_input && ok; i++) {
    bool init = false;
    for (size_t k = 0; k < g->n_initializer && !init; k++) init = !strcmp(g->initializer[k]->name, g->input[i]->name);
    if (init) continue;
    ok = io->n_in < MAX_IN;
    if (ok) snprintf(io->in[io->n_in++], 256, "%s", g->input[i]->name);
  }
  for (size_t i = 0; i < g->n_output && ok; i++) {
    ok = io->n_out < MAX_IN;
    if (ok) snprintf(io->out[io->n_out++], 256, "%s", g->output[i]->name);
  }
  onnx__model_proto__free_unpacked(m, NULL);
  return ok;
}

/* Checks out.h5 against set/output_k.pb. */
static bool outputs_ok(const char *out_h5, const char *set, const model_io *io, char *why, size_t n) {
  ct_tensor_list got;
  ct_tensor_list_init(&got);
  ct_diag d;
  bool ok = ct_h5_read_direct(out_h5, &got, &d) == CT_OK;
  if (!ok) snprintf(why, n, "%s", d.msg);
  for (int k = 0; ok && k < io->n_out; k++) {
    char p[4200];
    snprintf(p, sizeof p, "%s/output_%d.pb", set, k);
    ct_tensor *ref = NULL, *g = ct_tensor_list_find(&got, io->out[k]);
    if (ct_onnx_read_tensor_pb(p, &ref, &d) != CT_OK || !g) {
      snprintf(why, n, "output %d: %s", k, g ? d.msg : "missing");
      ok = false;
    } else {
      if (ref->dtype == CT_U16 && g->dtype == CT_BF16) ref->dtype = CT_BF16;
      ok = ref->dtype == g->dtype && ref->ndim == g->ndim &&
           !memcmp(ref->shape, g->shape, sizeof ref->shape[0] * (size_t)ref->ndim);
      for (int64_t i = 0, e = ct_tensor_numel(ref); ok && i < e; i++) ok = ct_test_onnx_element_ok(g, ref, i, ATOL, RTOL);
      if (!ok) snprintf(why, n, "output %d differs", k);
    }
    ct_tensor_free(ref);
  }
  ct_tensor_list_free(&got);
  return ok;
}

/* "--input-shapes a:1x2,b:3" from the data set's tensors; false if not expressible. */
static bool shapes_arg(const char *set, const model_io *io, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "--input-shapes '");
  for (int i = 0; i < io->n_in; i++) {
    char p[4200];
    snprintf(p, sizeof p, "%s/input_%d.pb", set, i);
    ct_tensor *t = NULL;
    ct_diag d;
    if (ct_onnx_read_tensor_pb(p, &t, &d) != CT_OK || t->ndim == 0 || strpbrk(io->in[i], ",:'")) {
      ct_tensor_free(t);
      return false;
    }
    char s[256];
    k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s:%s", i ? "," : "", io->in[i], ct_shape_str(t->ndim, t->shape, s, sizeof s));
    ct_tensor_free(t);
  }
  return k + 2 < n && (snprintf(buf + k, n - k, "'"), true);
}

enum { PASS, SKIP, FAIL };

static bool unsupported(const char *msg) { return strstr(msg, "unsupported") != NULL; }

/* One test folder through the CLI. */
static int run_test(const char *dir, const char *tmp, char *why, size_t wn) {
  model_io io;
  if (!read_io(dir, &io)) return snprintf(why, wn, "unreadable model"), FAIL;
  char set[4200], top[4200], out[4200], shapes[8192] = "", cmd[32768], msg[4096];
  snprintf(set, sizeof set, "%s/test_data_set_0", dir);
  snprintf(top, sizeof top, "%s/t.top", tmp);
  snprintf(out, sizeof out, "%s/out.h5", tmp);
  bool bound[MAX_IN] = {false}, tried_shapes = false;
  int bind_round = 0;
  for (int attempt = 0; attempt < 6; attempt++) {
    size_t k = (size_t)snprintf(cmd, sizeof cmd, "transform '%s/model.onnx' -o '%s' %s", dir, top, shapes);
    for (int i = 0; i < io.n_in; i++)
      if (bound[i]) k += (size_t)snprintf(cmd + k, sizeof cmd - k, " --const-input '%s=%s/input_%d.pb'", io.in[i], set, i);
    int rc = ct_test_run_ctpu(msg, sizeof msg, "%s", cmd);
    if (rc == 0) {
      bool any = false;
      for (int s = 0; rc == 0; s++) {
        snprintf(set, sizeof set, "%s/test_data_set_%d", dir, s);
        if (!is_dir(set)) break;
        k = (size_t)snprintf(cmd, sizeof cmd, "infer '%s' -o '%s'", top, out);
        bool first = true;
        for (int i = 0; i < io.n_in; i++)
          if (!bound[i]) k += (size_t)snprintf(cmd + k, sizeof cmd - k, "%s '%s/input_%d.pb'", first ? " --input" : "", set, i), first = false;
        rc = ct_test_run_ctpu(msg, sizeof msg, "%s", cmd);
        if (rc == 0 && !outputs_ok(out, set, &io, why, wn)) return FAIL;
        any = true;
      }
      snprintf(set, sizeof set, "%s/test_data_set_0", dir);
      if (rc == 0 && any) return PASS;
    }
    if (!tried_shapes && (strstr(msg, "is not fixed") || strstr(msg, "file has")) && shapes_arg(set, &io, shapes, sizeof shapes)) {
      tried_shapes = true;
      continue;
    }
    if (strstr(msg, "non-constant") && bind_round < 2) {
      /* first the operands after the data input (shapes, sizes, axes), then every input */
      bool all = bind_round == 1 || io.n_in == 1;
      for (int i = all ? 0 : 1; i < io.n_in; i++) bound[i] = true;
      bind_round = all ? 2 : 1;
      continue;
    }
    snprintf(why, wn, "%s", msg);
    /* the data's rank contradicts the model (a usage error of --input-shapes): skipped, as
     * test_conformance does */
    if (tried_shapes && strstr(msg, "--input-shapes:")) return SKIP;
    return unsupported(msg) ? SKIP : FAIL;
  }
  snprintf(why, wn, "%s", msg);
  return FAIL;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
  ct_test_require_shared("test_conformance_cli");
  const char *root = ct_test_shared_path("onnx-node-tests");
  const char *env = getenv("CT_CONFORMANCE_CLI_STRIDE");
  int stride = env && atoi(env) > 0 ? atoi(env) : 1, idx = 0, count[3] = {0, 0, 0};
#if defined(__SANITIZE_ADDRESS__)
  if (env && !getenv("CT_CONFORMANCE_CLI_FULL")) stride *= 4; /* ASan's ctpu starts slowly: a sparser sample in CI */
#endif
  bool verbose = getenv("CT_CONFORMANCE_VERBOSE") != NULL;
  const char *only = getenv("CT_CONFORMANCE_CLI_ONLY");
  static const char *suites[] = {"node", "simple", "pytorch-converted", "pytorch-operator"};
  const char *tmp = ct_test_tmpdir();
  for (size_t si = 0; si < sizeof suites / sizeof suites[0]; si++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", root, suites[si]);
    DIR *dp = opendir(dir);
    if (!dp) continue;
    char *names[4096];
    int n = 0;
    for (struct dirent *e; (e = readdir(dp)) && n < 4096;)
      if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name))) n++;
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, name_cmp);
    for (int i = 0; i < n; i++) {
      char test[8192], why[4096] = "";
      snprintf(test, sizeof test, "%s/%s", dir, names[i]);
      if (is_dir(test) && (only ? strstr(names[i], only) != NULL : idx++ % stride == 0)) {
        int r = run_test(test, tmp, why, sizeof why);
        count[r]++;
        if (r == FAIL || (verbose && r == SKIP))
          printf("%s %s/%s: %.300s\n", r == FAIL ? "FAIL" : "skip", suites[si], names[i], why);
      }
      free(names[i]);
    }
  }
  int floor = MIN_PASSED / stride - 10;
  printf("conformance through the CLI: %d passed, %d skipped, %d failed (floor %d)\n", count[PASS], count[SKIP], count[FAIL],
         floor);
  return count[FAIL] > 0 || (!only && count[PASS] < floor) ? 1 : 0; /* any wrong answer fails */
}
