/* sweep.h: design-space sweeps (`ctpu sweep`, docs/sweep.md): a SPEC.json names models,
 * a base chip, chip keys with lists of values (cartesian product) or explicit chip points,
 * layer-group strategies and quantize modes; every combination is one point, run as one
 * `ctpu deploy` command line in RESULTS/points/<id>/, and the point folders are gathered into
 * one tidy CSV. The same per-point command runs under GNU parallel and in a Slurm array job
 * (SCALE-Sim's config sweeps, one run per configuration, glued by scripts). */
#ifndef CT_SWEEP_H
#define CT_SWEEP_H

#include <stdbool.h>

#include "common/status.h"
#include "compiler/backend/lg.h"
#include "isa/chip.h"

#define CT_SWEEP_MAX_POINTS 100000
#define CT_SWEEP_MAX_LIST 64 /* values of one list: quantize modes, strategies, test inputs */

/* A model of the spec: its file and the deploy options that import / lower / test it. */
typedef struct ct_sweep_model {
  char *name;                          /* for the CSV (default: the file's stem, or its folder for model.*) */
  char *path;                          /* absolute */
  char *quantize[CT_SWEEP_MAX_LIST];   /* modes to lower with (none for a .tpu model) */
  int n_quantize;
  char *calib, *input_shapes, *reference; /* --calibration-table (absolute), --input-shapes, --test-reference */
  char *inputs[CT_SWEEP_MAX_LIST];     /* --test-input files (absolute) */
  int n_inputs;
} ct_sweep_model;

/* One point: indexes into the sweep's models, their quantize modes (-1: none), the strategies
 * and the chips. */
typedef struct ct_sweep_point {
  int model, quantize, strategy, chip;
} ct_sweep_point;

/* A loaded spec and its points, in order: models, then quantize modes, then strategies, then
 * chips (explicit points, then the product of the swept keys, first key slowest). */
typedef struct ct_sweep {
  char *spec;                 /* the spec's path as given (messages) */
  ct_sweep_model *models;
  int n_models;
  ct_chip *chips;             /* every chip point, validated */
  int n_chips;
  char **keys;                /* the swept chip keys (CSV columns), in order of first mention */
  int n_keys;
  char **values;              /* n_chips × n_keys: each chip's value of each key, as JSON text */
  ct_lg_strategy strategies[CT_SWEEP_MAX_LIST];
  int n_strategies;
  bool compare_all;
  ct_sweep_point *points;
  int n_points;
} ct_sweep;

/* Reads and validates SPEC.json (format: docs/sweep.md) into *out (ct_sweep_free). Paths in
 * the spec are relative to its folder; every model, table and test input must exist. Errors
 * name the file and the JSON path ("spec.json: sweep.vpu.lanes[2]: vpu.lanes: 48 is not a power
 * of two", "spec.json: models[1].path: \"x.onnx\": No such file or directory"): CT_ERR_INPUT for an
 * unreadable or invalid spec, an unknown key, a bad value, a missing file; CT_ERR_LIMIT for
 * more than CT_SWEEP_MAX_POINTS points or no memory. Nothing is returned on error. */
ct_status ct_sweep_load(const char *spec, ct_sweep **out, ct_diag *d);
void ct_sweep_free(ct_sweep *s);

/* The folder name of point i: four digits or more ("0007"). buf holds ≥ 16 bytes. */
void ct_sweep_point_id(int i, char *buf);

/* The command line of point i (malloc'd, NULL on no memory): ctpu deploy with the point's
 * model options, --chip RESULTS/points/<id>/chip.json, --layer-group, -o, --test-input,
 * --compare-all (the spec's or compare_all), --report and --summary into the point's folder;
 * every argument single-quoted for sh. ctpu and results are absolute paths. */
char *ct_sweep_point_command(const ct_sweep *s, int i, const char *ctpu, const char *results, bool compare_all);

/* Prepares RESULTS/ (results must exist or be creatable; absolute): points/<id>/chip.json of
 * every point, commands.txt (line i+1: point i's command), point.sh (runs one point: skips it
 * when its summary.json exists, else clears the folder's leftovers, runs the command with
 * stdout and stderr to deploy.log and, on exit code 1-5, writes the code to status) and
 * pending.txt (the indexes of the points without summary.json or status); every file
 * written to a temporary name and renamed. *n_pending: how many are pending. Errors:
 * CT_ERR_USAGE when results is a file, a folder with files but no commands.txt, or a folder
 * whose commands.txt differs (another sweep's);
 * CT_ERR_INPUT when a file cannot be written; CT_ERR_LIMIT no memory. */
ct_status ct_sweep_prepare(const ct_sweep *s, const char *ctpu, const char *results, bool compare_all, int *n_pending,
                           ct_diag *d);

/* Writes RESULTS/sweep.sbatch: a Slurm array job (#SBATCH --array=0-(N-1)) whose task i runs
 * `sh RESULTS/point.sh i`, the command the local run gives GNU parallel; logs to
 * RESULTS/slurm/. Errors: CT_ERR_INPUT cannot write. */
ct_status ct_sweep_write_sbatch(const ct_sweep *s, const char *results, ct_diag *d);

/* What ct_sweep_collect found. */
typedef struct ct_sweep_counts {
  int done;    /* summary.json written */
  int limit;   /* deploy exit code 4: the model does not fit the chip (a result, not an error) */
  int failed;  /* any other exit code 1-5 */
  int pending; /* not run, or interrupted */
  int rows;    /* rows of results.csv (without the header) */
} ct_sweep_counts;

/* Rebuilds RESULTS/results.csv from the point folders: per point one row of level "point"
 * (its summary.json, or its status, or pending), then one per layer group (the groups CSV of
 * deploy) and one per layer (deploy --report); columns: point, model, quantize, strategy,
 * the swept keys, level, index, group, name, status, compare, est_cycles, sim_cycles,
 * est_over_sim, mxu_util, ddr_bytes, lmem_bytes (docs/sweep.md). Written to a temporary name
 * and renamed. Errors: CT_ERR_INPUT a point file unreadable or malformed (naming it) or
 * results.csv not writable; CT_ERR_LIMIT no memory. */
ct_status ct_sweep_collect(const ct_sweep *s, const char *results, ct_sweep_counts *c, ct_diag *d);

/* Writes text to path through a temporary file in the same folder and a rename. Errors:
 * CT_ERR_INPUT "<path>: cannot write: REASON". */
ct_status ct_sweep_write_file(const char *path, const char *text, ct_diag *d);

#endif
