/* cmd_calibrate.c: `ctpu calibrate MODEL.top --dataset D -o TABLE`: TPU-MLIR run_calibration —
 * float inference over a data set (io/dataset.h), thresholds per tensor (ptq/calibrate.h),
 * written as a calibration table (quant/calib_table.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/heap.h"
#include "io/dataset.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "ptq/calibrate.h"
#include "tools/tools.h"

#define CMD "calibrate"

typedef struct cal_args {
  const char *model, *dataset, *out, *method;
  long long input_num;
  bool force_channel; /* --channel-thresholds */
  ct_calibrate_options o;
} cal_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu calibrate MODEL.top --dataset DIR|LIST|FILE.h5 -o TABLE [--input-num N]\n"
          "         [--method kld|minmax|percentile|mse|tune] [--histogram-bins 2048] [--threads N]\n"
          "         [--percentile 0.9999] [--tune-num 5] [--tune-steps 20] [--tune-low 1]\n"
          "         [--channel-score reader|output] [--no-channel-thresholds | --channel-thresholds]\n"
          "  runs float inference over the data set's samples and writes a TPU-MLIR calibration\n"
          "  table: one line `name threshold min max` per f32 tensor (docs/formats.md section 3)\n"
          "  --dataset D         an image folder (labels.tsv optional), a list file (one sample per\n"
          "                      line, files separated by ','), an HDF5 file with `images`, or one\n"
          "                      .h5/.pb/image input; images are preprocessed as the Input op says\n"
          "  --input-num N       use the first N samples (default all)\n"
          "  --method M          mse (default), kld (TensorRT entropy), minmax (max |x|), percentile,\n"
          "                      or tune (KLD, then the threshold between KLD and max that\n"
          "                      minimizes the quantized error of the ops reading the tensor);\n"
          "                      the default is chosen by measurement (docs/calibration.md)\n"
          "  --histogram-bins B  bins of the |x| histograms (default 2048; >= 128 for kld/tune)\n"
          "  --threads N         samples run in parallel (default 1)\n"
          "  --percentile F      fraction for --method percentile (default 0.9999)\n"
          "  --tune-num N        samples the tune pass uses (default 5)\n"
          "  --tune-steps N      candidates - 1 between the KLD and the max threshold (default 20)\n"
          "  --tune-low F        tune's lowest candidate is F x the KLD threshold, F in (0, 1] (default 1)\n"
          "  --channel-score S   how the channel scales of a tensor an ordinary Conv reads are chosen\n"
          "                      (docs/quant.md): reader (default; the reading ops' error) or output\n"
          "                      (the module outputs' error: one float run per sample, tensor and\n"
          "                      candidate)\n"
          "  --no-channel-thresholds  no #channel_threshold block (per-channel activations, docs/quant.md):\n"
          "                      a table TPU-MLIR reads; the lowering then uses per-tensor scales only\n"
          "  --channel-thresholds  write the #channel_threshold block even from fewer than 10\n"
          "                      samples (by default left out then: few samples' channel ranges\n"
          "                      fit those samples)\n");
}

static bool parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* One option with a value; returns 0, or 2 after a usage error. */
static int parse_opt(const char *s, const char *val, cal_args *a) {
  long long v = 0;
  if (!strcmp(s, "--dataset")) a->dataset = val;
  else if (!strcmp(s, "-o")) a->out = val;
  else if (!strcmp(s, "--method")) a->method = val;
  else if (!strcmp(s, "--input-num")) {
    if (!parse_int(val, 1, (long long)1 << 40, &a->input_num)) return ct_tool_usage(CMD, "--input-num needs a number >= 1, not \"%s\"", val);
  } else if (!strcmp(s, "--histogram-bins")) {
    if (!parse_int(val, 1, 1 << 24, &v)) return ct_tool_usage(CMD, "--histogram-bins needs a number >= 1, not \"%s\"", val);
    a->o.bins = (int)v;
  } else if (!strcmp(s, "--threads")) {
    if (!parse_int(val, 1, 64, &v)) return ct_tool_usage(CMD, "--threads needs a number 1..64, not \"%s\"", val);
    a->o.threads = (int)v;
  } else if (!strcmp(s, "--tune-num")) {
    if (!parse_int(val, 1, 1 << 20, &v)) return ct_tool_usage(CMD, "--tune-num needs a number >= 1, not \"%s\"", val);
    a->o.tune_num = (int)v;
  } else if (!strcmp(s, "--tune-steps")) {
    if (!parse_int(val, 1, 1000, &v)) return ct_tool_usage(CMD, "--tune-steps needs a number 1..1000, not \"%s\"", val);
    a->o.tune_steps = (int)v;
  } else if (!strcmp(s, "--tune-low")) {
    char *end;
    a->o.tune_low = strtod(val, &end);
    if (*end || end == val || !(a->o.tune_low > 0 && a->o.tune_low <= 1))
      return ct_tool_usage(CMD, "--tune-low needs a fraction in (0, 1], not \"%s\"", val);
  } else if (!strcmp(s, "--channel-score")) {
    if (strcmp(val, "output") && strcmp(val, "reader"))
      return ct_tool_usage(CMD, "--channel-score must be output or reader, not \"%s\"", val);
    a->o.channel_score_output = !strcmp(val, "output");
  } else if (!strcmp(s, "--percentile")) {
    char *end;
    a->o.percentile = strtod(val, &end);
    if (*end || end == val || !(a->o.percentile > 0 && a->o.percentile <= 1))
      return ct_tool_usage(CMD, "--percentile needs a fraction in (0, 1], not \"%s\"", val);
  } else {
    return ct_tool_usage(CMD, "unknown option \"%s\"", s);
  }
  return 0;
}

static int parse_method(cal_args *a) {
  if (!a->method) return 0;
  if (!strcmp(a->method, "tune")) {
    a->o.tune = true;
    a->o.method = CT_CALIB_KLD;
    return 0;
  }
  a->o.method = ct_calib_method_from_name(!strcmp(a->method, "minmax") ? "max" : a->method);
  if (a->o.method == CT_CALIB_METHOD_COUNT)
    return ct_tool_usage(CMD, "--method must be kld, minmax, percentile, mse or tune, not \"%s\"", a->method);
  return 0;
}

/* Parses argv into a; returns 0, -1 after --help, or 2 after a usage error. */
static int parse_args(int argc, char **argv, cal_args *a) {
  memset(a, 0, sizeof *a);
  a->o = CT_CALIBRATE_DEFAULTS;
  a->o.method = CT_CALIBRATE_DEFAULT_METHOD;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
    if (!strcmp(s, "--no-channel-thresholds")) {
      a->o.no_channel = true;
    } else if (!strcmp(s, "--channel-thresholds")) {
      a->force_channel = true;
    } else if (s[0] == '-') {
      if (i + 1 >= argc) return ct_tool_usage(CMD, "option \"%s\" needs a value", s);
      int rc = parse_opt(s, argv[++i], a);
      if (rc) return rc;
    } else if (!a->model) {
      a->model = s;
    } else {
      return ct_tool_usage(CMD, "unexpected argument \"%s\"", s);
    }
  }
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  if (!a->dataset) return ct_tool_usage(CMD, "no data set given (--dataset DIR|LIST|FILE.h5)");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o TABLE)");
  if (a->o.no_channel && a->force_channel)
    return ct_tool_usage(CMD, "--channel-thresholds and --no-channel-thresholds exclude each other");
  int rc = parse_method(a);
  if (rc) return rc;
  if ((a->o.method == CT_CALIB_KLD || a->o.tune) && a->o.bins < 128)
    return ct_tool_usage(CMD, "--histogram-bins must be >= 128 for kld and tune");
  return 0;
}

/* True if paths a and b name the same existing file. */
static bool same_file(const char *a, const char *b) {
  struct stat x, y;
  return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Refuses an output that is one of the inputs (the model, its weights, the data set). */
static int check_output(const cal_args *a) {
  char weights[4096];
  snprintf(weights, sizeof weights, "%s.h5", a->model);
  if (same_file(a->out, a->model) || same_file(a->out, weights) || same_file(a->out, a->dataset))
    return ct_tool_usage(CMD, "output \"%s\" is one of the inputs", a->out);
  return 0;
}

static void progress(void *user, const char *phase, int64_t done, int64_t total) {
  (void)user;
  fprintf(stderr, "\rctpu calibrate: %-10s %lld/%lld", phase, (long long)done, (long long)total);
  if (done == total) fputc('\n', stderr);
}

static ct_status load_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  return ct_dataset_load(user, i, in, d);
}

/* Few samples: warns that histogram thresholds fit them, and that the per-channel activation
 * thresholds are left out unless --channel-thresholds asks for them
 * (ct_calibrate_for_samples). */
static void few_samples(cal_args *a, int64_t n) {
  unsigned w = ct_calibrate_for_samples(&a->o, n, a->force_channel);
  if (w & CT_CALIBRATE_WARN_FEW)
    fprintf(stderr, "ctpu calibrate: warning: %s thresholds from %lld sample%s fit %s; %d or more give stable tables\n",
            ct_calibrate_method_name(&a->o), (long long)n, n == 1 ? "" : "s", n == 1 ? "that sample" : "those samples",
            2 * CT_CALIB_FEW_SAMPLES);
  if (w & CT_CALIBRATE_WARN_NO_CHANNEL)
    fprintf(stderr, "ctpu calibrate: warning: %lld sample%s: no per-channel activation thresholds (they need %d; "
            "--channel-thresholds to write them anyway)\n", (long long)n, n == 1 ? "" : "s", CT_CALIB_CHANNEL_MIN_SAMPLES);
}

static ct_status calibrate(cal_args *a, const ct_graph *g, ct_dataset *ds, ct_diag *d) {
  int64_t n = ct_dataset_size(ds);
  if (a->input_num > 0 && a->input_num < n) n = a->input_num;
  few_samples(a, n);
  ct_calib_table t;
  ct_calib_table_init(&t);
  ct_status st = ct_calibrate(g, n, load_sample, ds, &a->o, &t, d);
  char c[3][512];
  snprintf(c[0], sizeof c[0], "model %s", a->model);
  snprintf(c[1], sizeof c[1], "dataset %s, %lld samples", a->dataset, (long long)n);
  snprintf(c[2], sizeof c[2], "method %s, %d histogram bins", ct_calibrate_method_name(&a->o), a->o.bins);
  const char *comments[3] = {c[0], c[1], c[2]};
  if (st == CT_OK) st = ct_calib_table_write(a->out, &t, comments, 3, d);
  ct_calib_table_free(&t);
  return st;
}

int ct_cmd_calibrate(int argc, char **argv) {
  cal_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_heap_keep_freed();
  if ((rc = check_output(&a))) return rc;
  if (ct_tool_isatty()) a.o.progress = progress;
  ct_diag d;
  ct_diag_clear(&d);
  ct_graph *g = NULL;
  ct_dataset *ds = NULL;
  ct_status st = ct_ir_load_verified(a.model, &g, &d);
  if (st == CT_OK && g->dialect && strcmp(g->dialect, "top") != 0)
    st = ct_diag_set(&d, CT_ERR_INPUT, "%s: unsupported dialect \"%s\" (calibrate runs Top modules)", a.model, g->dialect);
  if (st == CT_OK) st = ct_dataset_open(a.dataset, g, &ds, &d);
  if (st == CT_OK) st = calibrate(&a, g, ds, &d);
  ct_dataset_free(ds);
  ct_graph_free(g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
