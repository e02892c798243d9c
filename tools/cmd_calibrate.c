/* cmd_calibrate.c: `ctpu calibrate MODEL.top --dataset D -o TABLE`: TPU-MLIR run_calibration —
 * float inference over a data set (io/dataset.h), thresholds per tensor (ptq/calibrate.h),
 * written as a calibration table (quant/calib_table.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#include "common/heap.h"
#include "common/outset.h"
#include "io/dataset.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "ptq/calibrate.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "calibrate"

typedef struct cal_args {
  const char *model, *dataset, *out;
  long long input_num;
  int method;         /* index in --method's choices, -1 when not given */
  int channel_score;  /* index in --channel-score's choices */
  bool force_channel; /* --channel-thresholds */
  ct_calibrate_options o;
} cal_args;

static const ct_opt opts[] = {
    CT_OPT_NEED_("--dataset", "D", cal_args, dataset, "data set",
                 "an image folder (labels.tsv optional), a list file (one sample per line, files separated by ','), "
                 "an HDF5 file with `images`, or one .h5/.pb/image input; images are preprocessed as the Input op says"),
    CT_OPT_NEED_("-o", "TABLE", cal_args, out, "output", "the calibration table"),
    CT_OPT_LLONG_("--input-num", "N", cal_args, input_num, 1, (long long)1 << 40, "use the first N samples (default all)"),
    CT_OPT_CHOICE_("--method", "kld|minmax|percentile|mse|tune", cal_args, method,
                   "mse (default), kld (TensorRT entropy), minmax (max |x|), percentile, or tune (KLD, then the "
                   "threshold between KLD and max that minimizes the quantized error of the ops reading the tensor); the "
                   "default is chosen by measurement (docs/calibration.md)"),
    CT_OPT_INT_("--histogram-bins", "B", cal_args, o.bins, 1, 1 << 24, "bins of the |x| histograms (default 2048; >= 128 for kld/tune)"),
    CT_OPT_INT_("--threads", "N", cal_args, o.threads, 1, 64, "samples run in parallel (default 1)"),
    CT_OPT_UNIT_("--percentile", "F", cal_args, o.percentile, "fraction for --method percentile (default 0.9999)"),
    CT_OPT_INT_("--tune-num", "N", cal_args, o.tune_num, 1, 1 << 20, "samples the tune pass uses (default 5)"),
    CT_OPT_INT_("--tune-steps", "N", cal_args, o.tune_steps, 1, 1000,
                "candidates - 1 between the KLD and the max threshold (default 20)"),
    CT_OPT_UNIT_("--tune-low", "F", cal_args, o.tune_low, "tune's lowest candidate is F x the KLD threshold (default 1)"),
    CT_OPT_CHOICE_("--channel-score", "output|reader", cal_args, channel_score,
                   "how the channel scales of a tensor an ordinary Conv reads are chosen (docs/quant.md): reader "
                   "(default; the reading ops' error) or output (the module outputs' error: one float run per sample, "
                   "tensor and candidate)"),
    CT_OPT_FLAG_("--no-channel-thresholds", cal_args, o.no_channel,
                 "no #channel_threshold block (per-channel activations, docs/quant.md): a table TPU-MLIR reads; the "
                 "lowering then uses per-tensor scales only"),
    CT_OPT_FLAG_("--channel-thresholds", cal_args, force_channel,
                 "write the #channel_threshold block even from fewer than 10 samples (by default left out then: few "
                 "samples' channel ranges fit those samples)"),
};

const ct_cmd_spec ct_cmd_calibrate_spec = CT_CMD_SPEC1(
    CMD, "MODEL.top --dataset DIR|LIST|FILE.h5 -o TABLE [options]",
    "runs float inference over the data set's samples and writes a TPU-MLIR calibration table: one line "
    "`name threshold min max` per f32 tensor (docs/formats.md section 3)",
    "model", cal_args, model, opts);

/* Parses argv into a; returns 0, -1 after --help, or 2 after a usage error. */
static int parse_args(int argc, char **argv, cal_args *a) {
  memset(a, 0, sizeof *a);
  a->o = CT_CALIBRATE_DEFAULTS;
  a->method = -1, a->channel_score = 1;
  int rc = ct_opts_parse(&ct_cmd_calibrate_spec, argc, argv, a);
  if (rc) return rc;
  if (a->o.no_channel && a->force_channel)
    return ct_tool_usage(CMD, "--channel-thresholds and --no-channel-thresholds exclude each other");
  static const ct_calib_method methods[] = {CT_CALIB_KLD, CT_CALIB_MAX, CT_CALIB_PERCENTILE, CT_CALIB_MSE, CT_CALIB_KLD};
  a->o.method = a->method < 0 ? CT_CALIBRATE_DEFAULT_METHOD : methods[a->method];
  a->o.tune = a->method == 4;
  a->o.channel_score_output = a->channel_score == 0;
  if ((a->o.method == CT_CALIB_KLD || a->o.tune) && a->o.bins < 128)
    return ct_tool_usage(CMD, "--histogram-bins must be >= 128 for kld and tune");
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

/* Calibrates g over ds and writes the table to tmp (the output's temporary path). */
static ct_status calibrate(cal_args *a, const ct_graph *g, ct_dataset *ds, const char *tmp, ct_diag *d) {
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
  if (st == CT_OK) st = ct_calib_table_write(tmp, &t, comments, 3, d);
  ct_calib_table_free(&t);
  return st;
}

/* Loads the model and the data set, registers them (and every sample file) as inputs of os,
 * then calibrates into the output. */
static ct_status run(cal_args *a, ct_outset *os, ct_diag *d) {
  const char *tmp = NULL;
  ct_graph *g = NULL;
  ct_dataset *ds = NULL;
  ct_status st = ct_tool_in_model(os, a->model, NULL, d);
  if (!st) st = ct_outset_input(os, a->dataset, d);
  if (!st) st = ct_outset_add(os, a->out, &tmp, d);
  if (!st) st = ct_ir_load_verified(a->model, &g, d);
  if (st == CT_OK && g->dialect && strcmp(g->dialect, "top") != 0)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: unsupported dialect \"%s\" (calibrate runs Top modules)", a->model, g->dialect);
  if (st == CT_OK) st = ct_dataset_open(a->dataset, g, &ds, d);
  if (st == CT_OK) st = ct_tool_in_model(os, a->model, g, d);
  if (st == CT_OK) st = ct_tool_in_dataset(os, a->dataset, ds, d);
  if (st == CT_OK) st = ct_outset_check(os, d);
  if (st == CT_OK) st = calibrate(a, g, ds, tmp, d);
  ct_dataset_free(ds);
  ct_graph_free(g);
  return st;
}

int ct_cmd_calibrate(int argc, char **argv) {
  cal_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_heap_keep_freed();
  if (ct_tool_isatty()) a.o.progress = progress;
  ct_diag d;
  ct_diag_clear(&d);
  ct_outset os;
  ct_outset_init(&os, CMD);
  ct_status st = run(&a, &os, &d);
  st = ct_outset_end(&os, st, &d);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
