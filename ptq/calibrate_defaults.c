/* calibrate_defaults.c: what `ctpu calibrate` decides from the sample count, and the method
 * names its tables and warnings give (calibrate.h). */
#include "ptq/calibrate.h"

unsigned ct_calibrate_for_samples(ct_calibrate_options *o, int64_t n, bool force_channel) {
  unsigned flags = 0;
  if (n < CT_CALIB_FEW_SAMPLES && (o->tune || o->method != CT_CALIB_MAX)) flags |= CT_CALIBRATE_WARN_FEW;
  if (n < CT_CALIB_CHANNEL_MIN_SAMPLES && !o->no_channel && !force_channel) {
    o->no_channel = true;
    flags |= CT_CALIBRATE_WARN_NO_CHANNEL;
  }
  return flags;
}

const char *ct_calibrate_method_name(const ct_calibrate_options *o) {
  return o->tune ? "tune" : o->method == CT_CALIB_MAX ? "minmax" : ct_calib_method_name(o->method);
}
