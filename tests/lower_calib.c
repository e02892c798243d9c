/* lower_calib.c: in-process calibration of a Top module for the lowering tests (lower_calib.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/inputs.h"
#include "ir/text.h"
#include "quant/calib_table.h"
#include "reference/interp.h"
#include "tests/lower_calib.h"

enum { NBINS = 2048 };

typedef struct tstat {
  ct_calib_stats s;
  ct_calib_hist h;
} tstat;

/* Adds one run's tensors (outs.items[i] is value vals[i]) to the statistics. */
static bool add_run(tstat *st, const ct_tensor_list *outs, ct_diag *d) {
  for (int i = 0; i < outs->n; i++) {
    ct_tensor *f = ct_tensor_cast(outs->items[i], CT_F32);
    if (!f) return false;
    int64_t n = ct_tensor_numel(f);
    ct_calib_stats one = ct_calib_stats_init();
    ct_calib_stats_add(&one, f->data, n);
    ct_calib_stats_merge(&st[i].s, &one);
    double am = ct_calib_stats_absmax(&st[i].s);
    bool ok = ct_calib_hist_grow(&st[i].h, am, d) == CT_OK;
    if (ok) ct_calib_hist_add(&st[i].h, f->data, n);
    ct_tensor_free(f);
    if (!ok) return false;
  }
  return true;
}

static bool write_table(const tstat *st, ct_value *const *vals, int nv, ct_calib_method m, double param,
                        const char *path, ct_diag *d) {
  ct_calib_table t;
  ct_calib_table_init(&t);
  bool ok = true;
  for (int i = 0; ok && i < nv; i++) {
    double th = ct_calib_stats_absmax(&st[i].s);
    ct_calib_hist h = st[i].h;
    if (m != CT_CALIB_MAX && h.range > 0 && h.total > h.counts[0]) {
      h.total -= h.counts[0];
      int64_t zero = h.counts[0];
      h.counts[0] = 0; /* the exact zeros of post-ReLU tensors (and tiny values) */
      ok = ct_calib_threshold(m, &st[i].s, &h, param, &th, d) == CT_OK;
      h.counts[0] = zero;
      th = fmin(th, ct_calib_stats_absmax(&st[i].s));
    }
    double lo = st[i].s.count ? st[i].s.min : 0, hi = st[i].s.count ? st[i].s.max : 0;
    if (ok) ok = ct_calib_table_add(&t, vals[i]->name, th, lo, hi, 0, d) == CT_OK;
  }
  if (ok) ok = ct_calib_table_write(path, &t, NULL, 0, d) == CT_OK;
  ct_calib_table_free(&t);
  return ok;
}

bool ct_test_calibrate(const char *top_path, const char *const *files, int n, ct_calib_method m, double param,
                       const char *table_path, char *err, size_t errn) {
  ct_diag d;
  ct_diag_clear(&d);
  ct_graph *g = NULL;
  bool ok = ct_ir_load(top_path, &g, &d) == CT_OK;
  ct_value **vals = ok ? calloc((size_t)g->n_values + 1, sizeof *vals) : NULL;
  int nv = 0;
  for (int i = 0; vals && i < g->n_values; i++)
    if (!ct_value_is_const(g->values[i]) && g->values[i]->def && ct_dtype_is_float(g->values[i]->dtype)) vals[nv++] = g->values[i];
  tstat *st = vals ? calloc((size_t)nv + 1, sizeof *st) : NULL;
  ok = st && ct_graph_set_outputs(g, nv, vals);
  for (int i = 0; ok && i < nv; i++) {
    st[i].s = ct_calib_stats_init();
    ok = ct_calib_hist_init(&st[i].h, NBINS, 0, &d) == CT_OK;
  }
  for (int k = 0; ok && k < n; k++) {
    ct_tensor_list in, out;
    ct_tensor_list_init(&in);
    ct_tensor_list_init(&out);
    ct_ref_options opt = {.threads = 1};
    ok = ct_inputs_load(g, &files[k], 1, &in, &d) == CT_OK && ct_ref_run(g, &opt, &in, &out, &d) == CT_OK &&
         add_run(st, &out, &d);
    ct_tensor_list_free(&in);
    ct_tensor_list_free(&out);
  }
  if (ok) ok = write_table(st, vals, nv, m, param, table_path, &d);
  if (!ok) snprintf(err, errn, "%s", d.msg[0] ? d.msg : "out of memory");
  for (int i = 0; st && i < nv; i++) ct_calib_hist_free(&st[i].h);
  free(st), free(vals);
  ct_graph_free(g);
  return ok;
}
