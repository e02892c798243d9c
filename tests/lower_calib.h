/* lower_calib.h: in-process calibration for the lowering tests (`ctpu calibrate` is written
 * elsewhere): Top inference over real inputs with every value kept, per-tensor min/max and
 * |x| histograms, thresholds by quant/calib.h, the table written by quant/calib_table. */
#ifndef CT_TEST_LOWER_CALIB_H
#define CT_TEST_LOWER_CALIB_H

#include <stdbool.h>
#include <stddef.h>

#include "quant/calib.h"

/* Runs the Top module at top_path on each of n input files (one file = all inputs of one
 * run: .pb, .h5 or an image) and writes a calibration table to table_path with thresholds
 * by method m (param: percentile fraction). Histograms drop the exact-zero count (post-ReLU
 * tensors: KLD/MSE would otherwise collapse). false with a message in err on failure. */
bool ct_test_calibrate(const char *top_path, const char *const *files, int n, ct_calib_method m, double param,
                       const char *table_path, char *err, size_t errn);

#endif
