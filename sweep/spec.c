/* spec.c: reading a sweep spec (docs/sweep.md) with cJSON: models, the base chip, the swept
 * chip keys and explicit chip points, strategies; every error names the spec file and the
 * JSON path. Chip points are validated by the chip's own parser (isa/chip.h). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "sweep/spec_util.h"
#include "sweep/sweep.h"

#define SPEC_MAX_BYTES (16u << 20)

static const char *const top_keys[] = {"models", "chip", "sweep", "points", "layer_group", "compare_all", NULL};
static const char *const model_keys[] = {"name", "path", "quantize", "calibration_table", "input_shapes",
                                         "test_input", "test_reference", NULL};

/* "layer_group": a strategy or a list of them (default dp). */
static ct_status read_strategies(ct_sweep *s, const cJSON *root, ct_diag *d) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "layer_group");
  char *names[CT_SWEEP_MAX_LIST];
  int n = 0;
  if (!v) {
    s->strategies[s->n_strategies++] = CT_LG_DP;
    return CT_OK;
  }
  ct_status st = ct_sweep_strings(s->spec, "layer_group", v, names, &n, d);
  for (int i = 0; i < n; i++) {
    if (!st && !ct_lg_strategy_parse(names[i], &s->strategies[i]))
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: layer_group[%d]: \"%s\" is not none, greedy, dp, longest or max", s->spec,
                       i, names[i]);
    free(names[i]);
  }
  if (!st) s->n_strategies = n;
  return st;
}

/* The default name of a model: its file's stem, or its folder's name for model.*. */
static char *default_name(const char *path) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t n = dot ? (size_t)(dot - base) : strlen(base);
  if (n == 5 && !strncmp(base, "model", 5) && base > path + 1) {
    const char *end = base - 1, *start = end;
    while (start > path && start[-1] != '/') start--;
    if (end > start) return strndup(start, (size_t)(end - start));
  }
  return strndup(base, n);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

/* The quantize modes of model m at JSON path p (a .tpu model takes none; others need one). */
static ct_status read_quantize(const ct_sweep *s, const cJSON *v, const char *p, ct_sweep_model *m, ct_diag *d) {
  bool tpu = ends_with(m->path, ".tpu");
  if (!v && !tpu)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: a model to lower (.onnx or .top) needs \"quantize\" (INT8, BF16, F16, F32)",
                       s->spec, p);
  if (v && tpu) return ct_diag_set(d, CT_ERR_INPUT, "%s: %s.quantize: a .tpu model is already lowered", s->spec, p);
  if (!v) return CT_OK;
  char q[256];
  snprintf(q, sizeof q, "%s.quantize", p);
  ct_status st = ct_sweep_strings(s->spec, q, v, m->quantize, &m->n_quantize, d);
  static const char *const modes[] = {"INT8", "BF16", "F16", "F32"};
  for (int i = 0; !st && i < m->n_quantize; i++) {
    bool ok = false;
    for (int k = 0; k < 4; k++) ok |= !strcmp(m->quantize[i], modes[k]);
    if (!ok) st = ct_diag_set(d, CT_ERR_INPUT, "%s: %s[%d]: \"%s\" is not INT8, BF16, F16 or F32", s->spec, q, i, m->quantize[i]);
  }
  return st;
}

/* Reads model i (object o) into s->models[i]. */
static ct_status read_model(ct_sweep *s, const cJSON *o, int i, const char *dir, ct_diag *d) {
  ct_sweep_model *m = &s->models[i];
  char p[64], q[96];
  snprintf(p, sizeof p, "models[%d]", i);
  ct_status st = ct_sweep_check_keys(s->spec, p, o, model_keys, d);
  const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
  if (!st && !path) st = ct_diag_set(d, CT_ERR_INPUT, "%s: %s: no \"path\" (the model file)", s->spec, p);
  snprintf(q, sizeof q, "%s.path", p);
  if (!st) st = ct_sweep_file(s->spec, q, path, dir, &m->path, d);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
  snprintf(q, sizeof q, "%s.name", p);
  if (!st) st = name ? ct_sweep_string(s->spec, q, name, &m->name, d) : ((m->name = default_name(m->path)) ? CT_OK
                                                        : ct_diag_set(d, CT_ERR_LIMIT, "out of memory"));
  if (!st) st = read_quantize(s, cJSON_GetObjectItemCaseSensitive(o, "quantize"), p, m, d);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "calibration_table");
  snprintf(q, sizeof q, "%s.calibration_table", p);
  if (!st && v) st = ct_sweep_file(s->spec, q, v, dir, &m->calib, d);
  v = cJSON_GetObjectItemCaseSensitive(o, "test_reference");
  snprintf(q, sizeof q, "%s.test_reference", p);
  if (!st && v) st = ct_sweep_file(s->spec, q, v, dir, &m->reference, d);
  v = cJSON_GetObjectItemCaseSensitive(o, "input_shapes");
  snprintf(q, sizeof q, "%s.input_shapes", p);
  if (!st && v) st = ct_sweep_string(s->spec, q, v, &m->input_shapes, d);
  v = cJSON_GetObjectItemCaseSensitive(o, "test_input");
  snprintf(q, sizeof q, "%s.test_input", p);
  if (!st && v) st = ct_sweep_files(s->spec, q, v, dir, m->inputs, &m->n_inputs, d);
  if (!st && m->reference && !m->n_inputs)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: %s.test_reference: needs test_input", s->spec, p);
  return st;
}

static ct_status read_models(ct_sweep *s, const cJSON *root, const char *dir, ct_diag *d) {
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "models");
  if (!cJSON_IsArray(ms) || !cJSON_GetArraySize(ms))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: models: a non-empty list of models is needed", s->spec);
  int n = cJSON_GetArraySize(ms);
  s->models = calloc((size_t)n, sizeof *s->models);
  if (!s->models) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  s->n_models = n;
  ct_status st = CT_OK;
  for (int i = 0; !st && i < n; i++) {
    const cJSON *o = cJSON_GetArrayItem(ms, i);
    st = cJSON_IsObject(o) ? read_model(s, o, i, dir, d)
                           : ct_diag_set(d, CT_ERR_INPUT, "%s: models[%d]: expected an object", s->spec, i);
  }
  return st;
}

/* The points: models × quantize modes × strategies × chips. */
static ct_status make_points(ct_sweep *s, ct_diag *d) {
  long long n = 0;
  for (int m = 0; m < s->n_models; m++)
    n += (long long)(s->models[m].n_quantize ? s->models[m].n_quantize : 1) * s->n_strategies * s->n_chips;
  if (n > CT_SWEEP_MAX_POINTS)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: %lld points, more than the limit of %d", s->spec, n, CT_SWEEP_MAX_POINTS);
  s->points = calloc((size_t)n, sizeof *s->points);
  if (!s->points) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int m = 0; m < s->n_models; m++) {
    int nq = s->models[m].n_quantize;
    for (int q = nq ? 0 : -1; q < (nq ? nq : 0); q++)
      for (int k = 0; k < s->n_strategies; k++)
        for (int c = 0; c < s->n_chips; c++) s->points[s->n_points++] = (ct_sweep_point){m, q, k, c};
  }
  return CT_OK;
}

static ct_status load_root(ct_sweep *s, const cJSON *root, const char *dir, ct_diag *d) {
  if (!cJSON_IsObject(root)) return ct_diag_set(d, CT_ERR_INPUT, "%s: expected a JSON object", s->spec);
  ct_status st = ct_sweep_check_keys(s->spec, "", root, top_keys, d);
  if (!st) st = read_models(s, root, dir, d);
  if (!st) st = read_strategies(s, root, d);
  const cJSON *ca = cJSON_GetObjectItemCaseSensitive(root, "compare_all");
  if (!st && ca && !cJSON_IsBool(ca)) st = ct_diag_set(d, CT_ERR_INPUT, "%s: compare_all: expected true or false", s->spec);
  s->compare_all = cJSON_IsTrue(ca);
  if (!st) st = ct_sweep_read_chips(s, root, dir, d);
  if (!st) st = make_points(s, d);
  return st;
}

ct_status ct_sweep_load(const char *spec, ct_sweep **out, ct_diag *d) {
  *out = NULL;
  char *text = NULL;
  ct_status st = ct_file_read(spec, SPEC_MAX_BYTES, &text, NULL, d);
  if (st) return st;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  ct_sweep *s = calloc(1, sizeof *s);
  char *dir = ct_sweep_dir_of(spec);
  if (!root)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: byte %zu: invalid JSON", spec, end && end >= text ? (size_t)(end - text) : 0);
  else if (!s || !dir || !(s->spec = strdup(spec)))
    st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = load_root(s, root, dir, d);
  cJSON_Delete(root);
  free(text);
  free(dir);
  if (st) ct_sweep_free(s);
  else *out = s;
  return st;
}

void ct_sweep_free(ct_sweep *s) {
  if (!s) return;
  for (int m = 0; m < s->n_models; m++) {
    ct_sweep_model *x = &s->models[m];
    free(x->name), free(x->path), free(x->calib), free(x->input_shapes), free(x->reference);
    for (int i = 0; i < x->n_quantize; i++) free(x->quantize[i]);
    for (int i = 0; i < x->n_inputs; i++) free(x->inputs[i]);
  }
  for (int i = 0; i < s->n_chips * s->n_keys && s->values; i++) free(s->values[i]);
  for (int i = 0; i < s->n_keys; i++) free(s->keys[i]);
  free(s->values), free(s->keys), free(s->chips), free(s->points), free(s->models), free(s->spec);
  free(s);
}

void ct_sweep_point_id(int i, char *buf) { snprintf(buf, 16, "%04d", i); }
