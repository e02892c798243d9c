/* lower_calib.h: in-process calibration for the lowering and deploy tests: ct_calibrate
 * (ptq/calibrate.h, what `ctpu calibrate` runs) over a list of input files, the table
 * written by quant/calib_table — per-tensor thresholds, weight scales and the per-channel
 * thresholds of channel activations. */
#ifndef CT_TEST_LOWER_CALIB_H
#define CT_TEST_LOWER_CALIB_H

#include <stdbool.h>
#include <stddef.h>

#include "quant/calib.h"

/* Calibrates the Top module at top_path on n input files (one file = all inputs of one run:
 * .pb, .h5 or an image) with method m (param: percentile fraction; default options
 * otherwise) and writes the table to table_path. false with a message in err on failure. */
bool ct_test_calibrate(const char *top_path, const char *const *files, int n, ct_calib_method m, double param,
                       const char *table_path, char *err, size_t errn);

#endif
