/* cmd_compare.c: `ctpu compare A.h5 B.h5` — per-tensor cosine / euclidean similarity / SQNR
 * of two HDF5 tensor files (A = reference), TPU-MLIR's model_deploy comparison; the metrics
 * are io/compare.h's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compare.h"
#include "tools/tools.h"

static void help(void) {
  printf("usage: ctpu compare A.h5 B.h5 [--tolerance COS,EUC] [--exact] [-v] [--only NAME,...]\n"
         "         [--sort worst] [--top N]\n\n"
         "Compares every tensor present in both files (A is the reference) and prints one row per\n"
         "tensor: verdict (equal/close/similar/different/shape), cosine similarity, euclidean\n"
         "similarity 1 - |a-b| / (|(a+b)/2| + 1e-7), SQNR dB = 10 log10(sum a^2 / sum (a-b)^2), max\n"
         "abs diff; names found in one file only are listed. Tensors with scale/zero_point\n"
         "attributes (Tpu dumps) are dequantized first, so a Top and a Tpu dump compare. A file named *.pb is read as one ONNX TensorProto (e.g.\n"
         "test_data_set_0/output_0.pb) instead of an HDF5 file.\n\n"
         "  --tolerance COS,EUC  pass when cosine >= COS and euclid >= EUC (default 0.99,0.90)\n"
         "  --exact              pass only bit-identical tensors (same dtype, same bytes); compares\n"
         "                       stored values (no dequantization)\n"
         "  -v                   show the first differing elements of failing tensors\n"
         "  --only NAME,...      compare just these tensors (a missing one fails)\n"
         "  --max-memory BYTES[K|M|G]  largest tensor to allocate (default: half the physical memory)\n"
         "  --sort worst         rows worst first (shape mismatches, then lowest cosine, SQNR)\n"
         "  --top N              print only the first N rows (all tensors still count)\n\n"
         "exit: 0 all passed, 1 a tensor failed or none compared, 2 bad usage, 3 unreadable file\n");
}

/* Splits a comma list in place into names (malloc'd array). */
static int split_names(char *s, const char ***out) {
  int n = 1;
  for (char *p = s; *p; p++) n += *p == ',';
  const char **v = malloc(sizeof *v * (size_t)n);
  if (!v) return -1;
  int k = 0;
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) v[k++] = tok;
  *out = v;
  return k;
}

int ct_cmd_compare(int argc, char **argv) {
  ct_compare_opts o = {.tol = CT_COMPARE_TOL_DEFAULT};
  const char *files[2] = {NULL, NULL};
  char *only = NULL;
  int nf = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) return help(), 0;
    if (!strcmp(a, "--exact")) o.tol.exact = true;
    else if (!strcmp(a, "-v")) o.verbose = true;
    else if (!strcmp(a, "--tolerance") && i + 1 < argc) {
      if (!ct_tool_parse_tol(argv[++i], &o.tol)) return ct_tool_usage("compare", "--tolerance wants COS,EUC, got \"%s\"", argv[i]);
    } else if (!strcmp(a, "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(a, "--sort") && i + 1 < argc) {
      if (strcmp(argv[++i], "worst") != 0) return ct_tool_usage("compare", "--sort takes \"worst\", not \"%s\"", argv[i]);
      o.sort_worst = true;
    } else if (!strcmp(a, "--top") && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (!*argv[i] || *end || v < 1 || v > 1000000) return ct_tool_usage("compare", "--top needs a number >= 1, not \"%s\"", argv[i]);
      o.top = (int)v;
    }
    else if (a[0] == '-' && a[1]) return ct_tool_usage("compare", "unknown or incomplete option \"%s\"", a);
    else if (nf < 2) files[nf++] = a;
    else return ct_tool_usage("compare", "too many files (\"%s\")", a);
  }
  if (nf != 2) return ct_tool_usage("compare", "expected two HDF5 tensor files");
  const char **names = NULL;
  if (only && (o.n_only = split_names(only, &names)) < 0) {
    ct_diag d;
    ct_diag_set(&d, CT_ERR_LIMIT, "out of memory");
    return ct_tool_fail("compare", &d);
  }
  o.only = names;
  ct_compare_summary s;
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = ct_compare_files(files[0], files[1], &o, stdout, &s, &d);
  free(names);
  if (st) return ct_tool_fail("compare", &d);
  if (s.n == 0) fprintf(stderr, "ctpu compare: no tensor is present in both files\n");
  return s.n > 0 && s.failed == 0 ? 0 : CT_ERR_CHECK;
}
