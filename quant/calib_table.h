/* calib_table.h: the calibration table, TPU-MLIR's text layout, read and written
 * (docs/quant.md "Calibration table"): '#' comment lines, one row per tensor
 * `name threshold min max`, and an optional `#weight_scale` block of per-channel rows
 * `name N s_1 ... s_N [N zp_1 ... zp_N]` (TPU-MLIR ImportCalibrationTable / MQBench export),
 * and ctpu's optional `#channel_threshold` block of per-channel activation thresholds
 * `name N th_1 ... th_N` (axis 1, NCHW; docs/quant.md "Per-channel activations"). */
#ifndef CT_CALIB_TABLE_H
#define CT_CALIB_TABLE_H

#include <stdint.h>

#include "common/status.h"

/* One tensor: symmetric threshold and the observed range (real units). line: 1-based line of
 * the file it was read from (0 if added by code). */
typedef struct ct_calib_row {
  char *name;
  double threshold, min, max;
  int line;
} ct_calib_row;

/* Per-channel weight scales of one op (TPU-MLIR names it "<op name>_weight"): n scales > 0
 * and optional zero points (zp NULL when the row has none). */
typedef struct ct_calib_wrow {
  char *name;
  int64_t n;
  double *scale;
  int32_t *zp;
  int line;
} ct_calib_wrow;

/* A table: rows in file order, weight rows in file order. Zero-initialize or
 * ct_calib_table_init before use; ct_calib_table_free releases everything. */
typedef struct ct_calib_table {
  ct_calib_row *rows;
  int64_t n, cap;
  ct_calib_wrow *w;
  int64_t nw, wcap;
  ct_calib_wrow *ch;            /* #channel_threshold rows: `scale` holds the thresholds */
  int64_t nch, chcap;
} ct_calib_table;

void ct_calib_table_init(ct_calib_table *t);
void ct_calib_table_free(ct_calib_table *t);

/* Appends a row (name copied). Errors (CT_ERR_INPUT, messages without a file prefix):
 * `duplicate name "x" (first on line 3)`, `threshold nan is not finite`, `threshold -1 is
 * negative`, `min 3 is not finite` (max likewise), `min 3 > max 2`; CT_ERR_LIMIT out of
 * memory. line is recorded for later duplicate messages (0: added by code). */
ct_status ct_calib_table_add(ct_calib_table *t, const char *name, double threshold, double min, double max,
                             int line, ct_diag *d);
/* Appends a weight row of n scales (> 0, finite) and optional zero points (zp may be NULL).
 * Errors as ct_calib_table_add: duplicate weight name, `channel 2: scale 0 is not a finite
 * number > 0`, `channel count 0 is not > 0`. */
ct_status ct_calib_table_add_weight(ct_calib_table *t, const char *name, int64_t n, const double *scale,
                                    const int32_t *zp, int line, ct_diag *d);
/* Appends a #channel_threshold row: n per-channel thresholds (finite, >= 0, real units) of
 * the activation `name` along its channel axis (axis 1). Errors as ct_calib_table_add_weight
 * (`channel 2: threshold -1 is not a finite number >= 0`). */
ct_status ct_calib_table_add_channel(ct_calib_table *t, const char *name, int64_t n, const double *th, int line,
                                     ct_diag *d);
/* The row / weight row / channel-threshold row named name, NULL if absent. */
const ct_calib_row *ct_calib_table_find(const ct_calib_table *t, const char *name);
const ct_calib_wrow *ct_calib_table_find_weight(const ct_calib_table *t, const char *name);
const ct_calib_wrow *ct_calib_table_find_channel(const ct_calib_table *t, const char *name);

/* Parses text (modified in place) named file in messages, appending to t. Blank lines and
 * '#' lines are skipped; a '#' line containing "#weight_scale" starts the weight block,
 * "#channel_threshold" the channel block (`name N th_1 .. th_N`), any other '#' line returns
 * to the threshold block (as TPU-MLIR). Errors, CT_ERR_INPUT
 * "FILE:LINE: ...": `expected 4 fields, got 3`, `bad number "x" for threshold` (min, max),
 * the checks of ct_calib_table_add / _add_weight, `bad channel count "x"`, `expected 2 + 4
 * fields (name, count, 4 scales) or 3 + 8 with zero points, got 5`, `bad zero point "x"`,
 * `block "#int4_th" is not supported (thresholds, #weight_scale and #channel_threshold only)` (also fp8,
 * asym_op, int4_op blocks). */
ct_status ct_calib_table_parse(char *text, const char *file, ct_calib_table *t, ct_diag *d);
/* Reads and parses the file at path (messages name path). Errors: those of
 * ct_calib_table_parse, CT_ERR_INPUT if the file cannot be read. */
ct_status ct_calib_table_read(const char *path, ct_calib_table *t, ct_diag *d);
/* Writes t to path atomically: "# ctpu calibration table", the caller's comment lines
 * (each written as "# LINE"; may be NULL / 0), "# op_name threshold min max", the rows, then
 * "#weight_scale" and the weight rows if any, then "#channel_threshold" and its rows if any. Numbers in the shortest exact decimal form, so
 * reading the file back gives identical doubles. Errors: CT_ERR_INPUT if it cannot write. */
ct_status ct_calib_table_write(const char *path, const ct_calib_table *t, const char *const *comments,
                               int ncomments, ct_diag *d);

#endif
