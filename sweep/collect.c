/* collect.c: results.csv of a sweep, rebuilt from its point folders (docs/sweep.md
 * "results.csv"): a point's summary.json, its deploy groups CSV and its per-layer report,
 * in the tidy long form (one row per point, per group and per layer) that pandas and R read. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "sweep/sweep.h"
#include "sweep/text.h"

#define MAX_FIELDS 64

/* One record of an RFC 4180 text at *p, parsed in place into f[0..n); returns n, 0 at the end. */
static int csv_next(char **p, char **f, int max) {
  char *s = *p, *w;
  int n = 0;
  if (!*s) return 0;
  for (;;) {
    f[n < max ? n : max - 1] = w = s;
    if (*s == '"') {
      for (s++; *s && !(*s == '"' && s[1] != '"'); s++) *w++ = *s == '"' ? *++s : *s;
      if (*s) s++;
    }
    while (*s && *s != ',' && *s != '\n' && *s != '\r') *w++ = *s++;
    char c = *s;
    *w = '\0';
    n += n < max;
    if (c == ',') {
      s++;
      continue;
    }
    if (c == '\r') s++;                   /* *s itself may now be the field's terminator */
    if (c == '\n' || (c == '\r' && *s == '\n')) s++;
    *p = s;
    return n;
  }
}

/* Index of column name in the header h[0..n), -1 when absent. */
static int col(char **h, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(h[i], name)) return i;
  return -1;
}

/* The first columns of every row of point i (point .. swept keys), then level. */
static void row_start(ct_sweep_text *t, const ct_sweep *s, int i, const char *level) {
  const ct_sweep_point *pt = &s->points[i];
  const ct_sweep_model *m = &s->models[pt->model];
  char id[16];
  ct_sweep_point_id(i, id);
  ct_sweep_text_printf(t, "%s,", id);
  ct_sweep_text_csv(t, m->name);
  ct_sweep_text_printf(t, ",%s,%s", pt->quantize >= 0 ? m->quantize[pt->quantize] : "",
                 ct_lg_strategy_name(s->strategies[pt->strategy]));
  for (int k = 0; k < s->n_keys; k++) ct_sweep_text_printf(t, ","), ct_sweep_text_csv(t, s->values[pt->chip * s->n_keys + k]);
  ct_sweep_text_printf(t, ",%s,", level);
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

/* The point row of summary js; *ok := the comparisons passed. */
static void point_row(ct_sweep_text *t, const ct_sweep *s, int i, const cJSON *js) {
  const cJSON *sim = cJSON_GetObjectItemCaseSensitive(js, "sim"), *cmp = cJSON_GetObjectItemCaseSensitive(js, "compare");
  row_start(t, s, i, "point");
  ct_sweep_text_printf(t, ",,,ok,%s,%.0f,", cmp ? (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cmp, "pass")) ? "pass" : "fail") : "",
                 num(js, "est_cycles"));
  double sc = num(sim, "total_cycles");
  if (sim)
    ct_sweep_text_printf(t, "%.0f,%.4f,%.4f,%.0f", sc, sc > 0 ? num(js, "est_cycles") / sc : 0.0, num(sim, "mxu_utilization"),
                   num(sim, "ddr_bytes_read") + num(sim, "ddr_bytes_written"));
  else
    ct_sweep_text_printf(t, ",,,");
  ct_sweep_text_printf(t, ",%.0f\n", num(js, "lmem_peak_bytes"));
}

/* Reads points/<id>/name into *buf (NULL when absent); CT_ERR_INPUT when unreadable. */
static ct_status read_point_file(const char *results, int i, const char *name, char **buf, ct_diag *d) {
  char id[16], path[4096 + 64];
  ct_sweep_point_id(i, id);
  snprintf(path, sizeof path, "%s/points/%s/%s", results, id, name);
  *buf = NULL;
  return access(path, F_OK) ? CT_OK : ct_file_read(path, 0, buf, NULL, d);
}

/* Group rows from the deploy groups CSV text. */
static ct_status group_rows(ct_sweep_text *t, const ct_sweep *s, int i, char *csv, const char *name, ct_diag *d) {
  char *h[MAX_FIELDS], *f[MAX_FIELDS], *p = csv;
  int nh = csv_next(&p, h, MAX_FIELDS);
  static const char *const need[] = {"group", "first_layer", "est_cycles", "sim_cycles", "est_over_sim", "mxu_util",
                                     "ddr_bytes", "lmem_bytes"};
  int c[8];
  for (int k = 0; k < 8; k++)
    if ((c[k] = col(h, nh, need[k])) < 0)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: point %d: %s: no column \"%s\"", s->spec, i, name, need[k]);
  for (int n; (n = csv_next(&p, f, MAX_FIELDS)) > 0;) {
    if (n != nh) return ct_diag_set(d, CT_ERR_INPUT, "%s: point %d: %s: a row of %d fields, not %d", s->spec, i, name, n, nh);
    row_start(t, s, i, "group");
    ct_sweep_text_printf(t, "%s,%s,", f[c[0]], f[c[0]]);
    ct_sweep_text_csv(t, f[c[1]]);
    ct_sweep_text_printf(t, ",ok,,%s,%s,%s,%s,%s,%s\n", f[c[2]], f[c[3]], f[c[4]], f[c[5]], f[c[6]], f[c[7]]);
  }
  return CT_OK;
}

/* Layer rows from the per-layer report text (deploy --report). */
static ct_status layer_rows(ct_sweep_text *t, const ct_sweep *s, int i, char *csv, const char *name, ct_diag *d) {
  char *h[MAX_FIELDS], *f[MAX_FIELDS], *p = csv;
  int nh = csv_next(&p, h, MAX_FIELDS);
  static const char *const need[] = {"layer", "group", "cycles", "macs", "ddr_bytes_read", "ddr_bytes_written"};
  int c[6];
  for (int k = 0; k < 6; k++)
    if ((c[k] = col(h, nh, need[k])) < 0)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: point %d: %s: no column \"%s\"", s->spec, i, name, need[k]);
  const ct_chip *chip = &s->chips[s->points[i].chip];
  double rc = (double)chip->mxu_rows * (double)chip->mxu_cols;
  for (int n, row = 0; (n = csv_next(&p, f, MAX_FIELDS)) > 0; row++) {
    if (n != nh) return ct_diag_set(d, CT_ERR_INPUT, "%s: point %d: %s: a row of %d fields, not %d", s->spec, i, name, n, nh);
    double cyc = strtod(f[c[2]], NULL), macs = strtod(f[c[3]], NULL);
    row_start(t, s, i, "layer");
    ct_sweep_text_printf(t, "%d,%s,", row, f[c[1]]);
    ct_sweep_text_csv(t, f[c[0]]);
    ct_sweep_text_printf(t, ",ok,,,%s,,%.4f,%.0f,\n", f[c[2]], cyc > 0 ? macs / (cyc * rc) : 0.0,
                   strtod(f[c[4]], NULL) + strtod(f[c[5]], NULL));
  }
  return CT_OK;
}

static const char *status_name(int rc) {
  static const char *const names[] = {"ok", "check_failed", "usage", "bad_input", "limit", "internal"};
  return rc >= 0 && rc <= 5 ? names[rc] : "failed";
}

/* The rows of point i. */
static ct_status point_rows(ct_sweep_text *t, const ct_sweep *s, const char *results, int i, ct_sweep_counts *c, ct_diag *d) {
  char *sum = NULL, *groups = NULL, *layers = NULL, *status = NULL;
  ct_status st = read_point_file(results, i, "summary.json", &sum, d);
  if (!st && !sum) st = read_point_file(results, i, "status", &status, d);
  if (!st && !sum) {
    int rc = status ? atoi(status) : -1;
    row_start(t, s, i, "point");
    ct_sweep_text_printf(t, ",,,%s,%s,,,,,,\n", status ? status_name(rc) : "pending", rc == 1 ? "fail" : "");
    if (!status) c->pending++;
    else if (rc == CT_ERR_LIMIT) c->limit++;
    else c->failed++;
  }
  cJSON *js = sum ? cJSON_Parse(sum) : NULL;
  if (!st && sum && !js) st = ct_diag_set(d, CT_ERR_INPUT, "%s: point %d: summary.json: invalid JSON", s->spec, i);
  if (!st && js) {
    point_row(t, s, i, js);
    c->done++;
    st = read_point_file(results, i, "prog.ctpu.groups.csv", &groups, d);
    if (!st && groups) st = group_rows(t, s, i, groups, "prog.ctpu.groups.csv", d);
    if (!st) st = read_point_file(results, i, "layers.csv", &layers, d);
    if (!st && layers) st = layer_rows(t, s, i, layers, "layers.csv", d);
  }
  cJSON_Delete(js);
  free(sum), free(groups), free(layers), free(status);
  return st;
}

ct_status ct_sweep_collect(const ct_sweep *s, const char *results, ct_sweep_counts *c, ct_diag *d) {
  memset(c, 0, sizeof *c);
  ct_sweep_text t = {0};
  ct_sweep_text_printf(&t, "point,model,quantize,strategy");
  for (int k = 0; k < s->n_keys; k++) ct_sweep_text_printf(&t, ","), ct_sweep_text_csv(&t, s->keys[k]);
  ct_sweep_text_printf(&t, ",level,index,group,name,status,compare,est_cycles,sim_cycles,est_over_sim,mxu_util,ddr_bytes,"
                     "lmem_bytes\n");
  ct_status st = CT_OK;
  for (int i = 0; !st && i < s->n_points; i++) st = point_rows(&t, s, results, i, c, d);
  for (size_t k = 0; !st && !t.oom && k < t.n; k++) c->rows += t.p[k] == '\n';
  c->rows -= c->rows > 0; /* the header */
  char path[4096 + 32];
  snprintf(path, sizeof path, "%s/results.csv", results);
  if (!st) st = t.oom ? ct_diag_set(d, CT_ERR_LIMIT, "out of memory") : ct_sweep_write_file(path, t.p, d);
  ct_sweep_text_free(&t);
  return st;
}
