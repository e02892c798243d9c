/* calibrate.h: the calibration driver behind `ctpu calibrate` (docs/calibration.md): float Top
 * inference over a data set, per-tensor statistics through the interpreter's on_op hook
 * (pass 1 min/max, pass 2 |x| histograms over [0, absmax]), thresholds by quant/calib.h, and
 * TPU-MLIR's `tune` refinement (pass 3). Samples are supplied by a callback (the command
 * passes io/dataset.h's loader, tests build theirs), so a run needs no files. */
#ifndef CT_CALIBRATE_H
#define CT_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/h5io.h"
#include "common/status.h"
#include "ir/ir.h"
#include "quant/calib.h"
#include "quant/calib_table.h"

/* Supplies sample i (0-based) as the graph's input tensors appended to inputs (one per Input
 * op, named by the input value). Called from several threads at once when threads > 1. */
typedef ct_status (*ct_ref_sample_fn)(void *user, int64_t i, ct_tensor_list *inputs, ct_diag *d);

/* Progress: `phase` ("min/max", "histograms", "tune", "channel scales") has done of total samples. Called from
 * the thread that started the run, at most once per finished sample. */
typedef void (*ct_calibrate_progress_fn)(void *user, const char *phase, int64_t done, int64_t total);

/* Options of ct_calibrate. CT_CALIBRATE_DEFAULTS: KLD, 2048 bins, percentile 0.9999, 1
 * thread, tune on 5 samples in 20 steps from the KLD threshold. */
typedef struct ct_calibrate_options {
  ct_calib_method method; /* threshold method (tune starts from CT_CALIB_KLD) */
  bool tune;              /* refine every threshold between the KLD and the max one */
  int bins;               /* histogram bins (≥ 128 for KLD) */
  double percentile;      /* fraction for CT_CALIB_PERCENTILE, in (0, 1] */
  int threads;            /* samples run in parallel (each sample on one thread) */
  int tune_num;           /* samples the tune pass runs (the first ones) */
  int tune_steps;         /* candidates − 1 between the KLD and the max threshold */
  ct_calibrate_progress_fn progress;
  void *progress_user;
  double tune_low;        /* tune's lowest candidate = tune_low · the KLD threshold, in (0, 1]
                           * (not > 0: 1, TPU-MLIR's range) */
  bool no_channel;        /* no #channel_threshold rows (a table TPU-MLIR reads) */
  bool channel_score_output; /* score the channel strengths by the module outputs' error, not
                              * by the reading ops' (docs/quant.md) */
} ct_calibrate_options;

#define CT_CALIBRATE_DEFAULTS \
  ((ct_calibrate_options){CT_CALIB_KLD, false, 2048, 0.9999, 1, 5, 20, NULL, NULL, 1.0, false, false})

/* The method `ctpu calibrate` uses without --method, and the fewest samples it takes
 * per-channel activation thresholds (#channel_threshold) from. Chosen by measurement
 * (bench/calib_defaults.sh, docs/calibration.md "Defaults"): over the shared models and an
 * unseen classifier with 1 and 20 samples, mse has the best worst-case output cosine
 * (KLD, TensorRT's, flips a classifier from one sample); channel ranges from fewer samples
 * than this fit those samples (MobileNetV2, 1 sample: output cosine 0.81 with them, 0.99
 * without). A histogram method from fewer than CT_CALIB_FEW_SAMPLES samples is warned of. */
#define CT_CALIBRATE_DEFAULT_METHOD CT_CALIB_MSE
#define CT_CALIB_CHANNEL_MIN_SAMPLES 10
#define CT_CALIB_FEW_SAMPLES 10

/* Flags of ct_calibrate_for_samples. */
#define CT_CALIBRATE_WARN_FEW 1u        /* histogram thresholds from few samples fit those samples */
#define CT_CALIBRATE_WARN_NO_CHANNEL 2u /* per-channel activation thresholds left out */

/* Applies the sample-count defaults (docs/calibration.md "Defaults") to o for a run on n
 * samples: below CT_CALIB_CHANNEL_MIN_SAMPLES, unless o->no_channel is set already or
 * force_channel asks for them, o->no_channel is set (CT_CALIBRATE_WARN_NO_CHANNEL). Also
 * CT_CALIBRATE_WARN_FEW when a histogram method or tune runs on fewer than
 * CT_CALIB_FEW_SAMPLES samples. Returns the flags (0: nothing to say). */
unsigned ct_calibrate_for_samples(ct_calibrate_options *o, int64_t n, bool force_channel);
/* The name of the method o runs, as `ctpu calibrate --method` spells it: "tune" with o->tune,
 * "minmax" for CT_CALIB_MAX, else ct_calib_method_name. */
const char *ct_calibrate_method_name(const ct_calibrate_options *o);

/* Calibrates g (a Top module, shape-inferred) on samples 0..n-1 and appends one row per
 * calibrated tensor — every f32 value an op computes or an Input op binds, in graph order,
 * named by the value — to table: threshold by the method (≤ max(|min|, |max|)), min, max.
 * KLD histograms leave out exact zeros of non-negative tensors (min ≥ 0: post-ReLU), whose
 * spike at 0 would otherwise pull the threshold to a few bins. Tune (TPU-MLIR
 * run_calibration's tuner): for every tensor T whose KLD threshold is below its max, the
 * candidates th_j = lo + j·(th_max − lo)/steps, lo = tune_low·th_kld, are scored on the first tune_num
 * samples by the relative squared error Σ(y − y_ref)² / Σ y_ref² of the outputs of every op
 * reading T, run with T fake-quantized at th_j and its other activation operands at their
 * KLD thresholds (quantize → dequantize by ct_quant_param_calib's symmetric i8/u8
 * parameters), against the float outputs; a tensor no op reads is scored by
 * ct_calib_qdq_error on itself. The smallest error wins (ct_calib_tune). Then one
 * #weight_scale row "<op name>_weight" per named Conv / Gemm (transB = 1) with constant f32
 * weights: its per-output-channel scales (ct_quant_weight_scales). Then one
 * #channel_threshold row per channel activation (ct_lower_channel_act) unless o->no_channel:
 * per channel c, min(max |x_c| over the samples, the tensor's threshold), or, where an
 * ordinary Conv reads it, that range migrated by the strength α scored on the first
 * tune_num samples (calibrate_int.h: by its readers' error, or with channel_score_output by
 * the module outputs' error with only that tensor fake-quantized); no row when α = 0. Results do not depend on threads. Errors (table left as it was): CT_ERR_USAGE n < 1, bad options
 * (bins < 1, < 128 with KLD or tune, percentile outside (0, 1], threads outside 1..64,
 * tune_num or tune_steps < 1); those of the sample callback and of ct_ref_run (prefixed
 * with the sample number: `sample 3: ...`); CT_ERR_INPUT a graph with no f32 tensor to
 * calibrate; CT_ERR_LIMIT out of memory. */
ct_status ct_calibrate(const ct_graph *g, int64_t n, ct_ref_sample_fn sample, void *sample_user,
                       const ct_calibrate_options *o, ct_calib_table *table, ct_diag *d);

#endif
