/* cmd_compare.c: `ctpu compare A.h5 B.h5` — per-tensor cosine / euclidean similarity / SQNR
 * of two HDF5 tensor files (A = reference), TPU-MLIR's model_deploy comparison; the metrics
 * are io/compare.h's. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compare.h"
#include "tools/tools.h"

#define CMD "compare"

typedef struct compare_args {
  const char *files[2];
  const char *only;
  ct_compare_opts o;
} compare_args;

static int set_tol(void *args, const char *cmd, const ct_opt *opt, const char *v) {
  compare_args *a = args;
  if (!ct_tool_parse_tol(v, &a->o.tol)) return ct_tool_usage(cmd, "%s wants COS,EUC, got \"%s\"", opt->name, v);
  a->o.tol_by_prec = false;
  return 0;
}

static int set_sort(void *args, const char *cmd, const ct_opt *opt, const char *v) {
  if (strcmp(v, "worst") != 0) return ct_tool_usage(cmd, "%s takes \"worst\", not \"%s\"", opt->name, v);
  ((compare_args *)args)->o.sort_worst = true;
  return 0;
}

static const ct_opt opts[] = {
    CT_OPT_FN_("--tolerance", "COS,EUC", set_tol,
               "pass when cosine >= COS and euclid >= EUC (default: by the less precise file, a file being as precise as "
               "its least precise tensor: f32 0.99,0.90 (also integers without scale), f16 0.99,0.85, bf16 0.99,0.80, "
               "int8 0.97,0.75; docs/formats.md)"),
    CT_OPT_FLAG_("--exact", compare_args, o.tol.exact,
                 "pass only bit-identical tensors (same dtype, same bytes); compares stored values (no dequantization)"),
    CT_OPT_FLAG_("-v", compare_args, o.verbose,
                 "show the first differing elements of failing tensors, and every name found in one file only"),
    CT_OPT_STR_("--only", "NAME,...", compare_args, only, "compare just these tensors (a missing one fails)"),
    CT_OPT_FN_("--sort", "worst", set_sort, "rows worst first (shape mismatches, then lowest cosine, SQNR)"),
    CT_OPT_INT_("--top", "N", compare_args, o.top, 1, 1000000, "print only the first N rows (all tensors still count)"),
    CT_OPT_MAX_MEMORY,
};

const ct_cmd_spec ct_cmd_compare_spec = {
    .cmd = CMD,
    .synopsis = "A.h5 B.h5 [--tolerance COS,EUC] [--exact] [-v] [--only NAME,...] [--sort worst] [--top N]",
    .about = "compares every tensor present in both files (A is the reference) and prints one row per tensor: "
             "verdict (equal/close/similar/different/shape), cosine similarity, euclidean similarity 1 - |a-b| / "
             "(|(a+b)/2| + 1e-7), SQNR dB = 10 log10(sum a^2 / sum (a-b)^2), max abs diff; then one line per file "
             "for the names found in that file only (their count and first names). Tensors with scale/zero_point "
             "attributes (Tpu dumps) are dequantized first, so a Top and a Tpu dump compare. A file named *.pb is "
             "read as one ONNX TensorProto (e.g. test_data_set_0/output_0.pb) instead of an HDF5 file.\n"
             "exit: 0 all passed, 1 a tensor failed or none compared, 2 bad usage, 3 unreadable file",
    .pos_noun = "file",
    .pos_off = offsetof(compare_args, files),
    .pos_max = 2,
    .opts = opts,
    .n_opts = CT_OPTS_COUNT(opts)};

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
  compare_args a = {.o = {.tol = CT_COMPARE_TOL_DEFAULT, .tol_by_prec = true}};
  int rc = ct_opts_parse(&ct_cmd_compare_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  if (!a.files[1]) return ct_tool_usage(CMD, "expected two HDF5 tensor files");
  ct_diag d;
  ct_diag_clear(&d);
  const char **names = NULL;
  char *only = a.only ? strdup(a.only) : NULL;
  if (a.only && (!only || (a.o.n_only = split_names(only, &names)) < 0)) {
    free(only);
    ct_diag_set(&d, CT_ERR_LIMIT, "out of memory");
    return ct_tool_fail(CMD, &d);
  }
  a.o.only = names;
  ct_compare_summary s;
  ct_status st = ct_compare_files(a.files[0], a.files[1], &a.o, stdout, &s, &d);
  free(names);
  free(only);
  if (st) return ct_tool_fail(CMD, &d);
  if (s.n == 0) fprintf(stderr, "ctpu compare: no tensor is present in both files\n");
  return s.n > 0 && s.failed == 0 ? 0 : CT_ERR_CHECK;
}
