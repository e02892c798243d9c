/* lower_calib.c: in-process calibration of a Top module for the lowering and deploy tests
 * (lower_calib.h): ptq/calibrate.h over a list of input files, as `ctpu calibrate`. */
#include <stdio.h>

#include "io/inputs.h"
#include "ir/text.h"
#include "quant/calib_table.h"
#include "ptq/calibrate.h"
#include "tests/lower_calib.h"

typedef struct files_ctx {
  const ct_graph *g;
  const char *const *files;
} files_ctx;

/* Sample i: the inputs of file i. */
static ct_status file_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  const files_ctx *f = user;
  return ct_inputs_load(f->g, &f->files[i], 1, in, d);
}

bool ct_test_calibrate(const char *top_path, const char *const *files, int n, ct_calib_method m, double param,
                       const char *table_path, char *err, size_t errn) {
  ct_diag d;
  ct_diag_clear(&d);
  ct_graph *g = NULL;
  ct_calib_table t;
  ct_calib_table_init(&t);
  ct_calibrate_options o = CT_CALIBRATE_DEFAULTS;
  o.method = m, o.percentile = m == CT_CALIB_PERCENTILE ? param : o.percentile;
  files_ctx f = {NULL, files};
  bool ok = ct_ir_load(top_path, &g, &d) == CT_OK;
  f.g = g;
  ok = ok && ct_calibrate(g, n, file_sample, &f, &o, &t, &d) == CT_OK;
  ok = ok && ct_calib_table_write(table_path, &t, NULL, 0, &d) == CT_OK;
  if (!ok) snprintf(err, errn, "%s", d.msg[0] ? d.msg : "out of memory");
  ct_calib_table_free(&t);
  ct_graph_free(g);
  return ok;
}
