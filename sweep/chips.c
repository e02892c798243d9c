/* chips.c: the chip points of a sweep spec: a base chip ("chip": a file or an object; default
 * the built-in chip), explicit points ("points": objects of dotted keys) and the cartesian
 * product of swept keys ("sweep": dotted key → list of values). Each value and each resulting
 * chip is checked by the chip's own parser (isa/chip.h), with the JSON path in its message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/spec_util.h"

/* Sets dotted key (mxu.rows) of the nested chip tree to a copy of v; false on no memory. */
static bool set_key(cJSON *tree, const char *key, const cJSON *v) {
  cJSON *obj = tree;
  char part[64];
  const char *s = key, *dot;
  while ((dot = strchr(s, '.')) != NULL) {
    snprintf(part, sizeof part, "%.*s", (int)(dot - s), s);
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(obj, part);
    if (!cJSON_IsObject(sub)) {
      cJSON_DeleteItemFromObjectCaseSensitive(obj, part);
      if (!(sub = cJSON_AddObjectToObject(obj, part))) return false;
    }
    obj = sub, s = dot + 1;
  }
  cJSON *copy = cJSON_Duplicate(v, 1);
  if (!copy) return false;
  cJSON_DeleteItemFromObjectCaseSensitive(obj, s);
  return cJSON_AddItemToObject(obj, s, copy);
}

/* Parses tree as a chip into *c; messages start with fname. */
static ct_status chip_of(const cJSON *tree, const char *fname, ct_chip *c, ct_diag *d) {
  char *text = cJSON_PrintUnformatted(tree);
  if (!text) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  ct_status st = ct_chip_parse(text, fname, c, d);
  free(text);
  return st;
}

/* The base chip as a nested JSON tree (*tree). */
static ct_status read_base(const char *spec, const cJSON *v, const char *dir, cJSON **tree, ct_diag *d) {
  ct_chip base;
  ct_status st = CT_OK;
  char *path = NULL, fname[300];
  snprintf(fname, sizeof fname, "%s: chip", spec);
  if (cJSON_IsString(v)) st = ct_sweep_file(spec, "chip", v, dir, &path, d);
  if (!st && path) st = ct_chip_load(path, &base, d);
  else if (!st && cJSON_IsObject(v)) st = chip_of(v, fname, &base, d);
  else if (!st && !v) ct_chip_default(&base);
  else if (!st) st = ct_diag_set(d, CT_ERR_INPUT, "%s: chip: expected a chip file name or a chip object", spec);
  free(path);
  if (st) return st;
  char *text = ct_chip_to_json(&base);
  *tree = text ? cJSON_Parse(text) : NULL;
  free(text);
  return *tree ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
}

/* Checks key = v alone on the base chip (fname names its JSON path). */
static ct_status check_value(const cJSON *base, const char *key, const cJSON *v, const char *fname, ct_diag *d) {
  if (!cJSON_IsNumber(v) && !cJSON_IsString(v))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: expected a number or a string", fname);
  cJSON *t = cJSON_Duplicate(base, 1);
  ct_chip c;
  ct_status st = t && set_key(t, key, v) ? chip_of(t, fname, &c, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  cJSON_Delete(t);
  return st;
}

/* Adds key to s->keys unless there. */
static ct_status add_key(ct_sweep *s, const char *key, ct_diag *d) {
  for (int i = 0; i < s->n_keys; i++)
    if (!strcmp(s->keys[i], key)) return CT_OK;
  char **k = realloc(s->keys, (size_t)(s->n_keys + 1) * sizeof *k);
  if (!k || !(k[s->n_keys] = strdup(key))) {
    if (k) s->keys = k;
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  s->keys = k;
  s->n_keys++;
  return CT_OK;
}

/* Checks "points" and "sweep" value by value; collects the keys; *n_grid := product size. */
static ct_status check_lists(ct_sweep *s, const cJSON *base, const cJSON *pts, const cJSON *grid, long long *n_grid,
                             ct_diag *d) {
  char f[400];
  ct_status st = CT_OK;
  if (pts && (!cJSON_IsArray(pts) || !cJSON_GetArraySize(pts)))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: points: expected a non-empty list of objects", s->spec);
  for (int i = 0; !st && pts && i < cJSON_GetArraySize(pts); i++) {
    const cJSON *p = cJSON_GetArrayItem(pts, i);
    if (!cJSON_IsObject(p)) st = ct_diag_set(d, CT_ERR_INPUT, "%s: points[%d]: expected an object", s->spec, i);
    for (const cJSON *k = p->child; !st && k; k = k->next) {
      snprintf(f, sizeof f, "%s: points[%d].%s", s->spec, i, k->string);
      st = check_value(base, k->string, k, f, d);
      if (!st) st = add_key(s, k->string, d);
    }
  }
  *n_grid = 1;
  if (!st && grid && !cJSON_IsObject(grid))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: sweep: expected an object of chip keys and lists of values", s->spec);
  for (const cJSON *k = grid ? grid->child : NULL; !st && k; k = k->next) {
    int n = cJSON_IsArray(k) ? cJSON_GetArraySize(k) : 0;
    if (!n) return ct_diag_set(d, CT_ERR_INPUT, "%s: sweep.%s: expected a non-empty list of values", s->spec, k->string);
    for (int j = 0; !st && j < n; j++) {
      snprintf(f, sizeof f, "%s: sweep.%s[%d]", s->spec, k->string, j);
      st = check_value(base, k->string, cJSON_GetArrayItem(k, j), f, d);
    }
    if (!st) st = add_key(s, k->string, d);
    *n_grid *= n;
    if (*n_grid > CT_SWEEP_MAX_POINTS)
      return ct_diag_set(d, CT_ERR_LIMIT, "%s: sweep: more than %d chip points", s->spec, CT_SWEEP_MAX_POINTS);
  }
  return st;
}

/* Chip c := base + explicit point p (may be NULL) + grid combination g (odometer digits). */
static ct_status make_chip(ct_sweep *s, const cJSON *base, const cJSON *p, int pi, const cJSON *grid, const int *g,
                           int c, ct_diag *d) {
  cJSON *t = cJSON_Duplicate(base, 1);
  bool ok = t != NULL;
  char f[600];
  int o = snprintf(f, sizeof f, "%s: chip point %d (", s->spec, c);
  if (p) o += snprintf(f + o, sizeof f - (size_t)o, "points[%d]%s", pi, grid ? ", " : "");
  for (const cJSON *k = p ? p->child : NULL; ok && k; k = k->next) ok = set_key(t, k->string, k);
  int i = 0;
  for (const cJSON *k = grid ? grid->child : NULL; ok && k; k = k->next, i++) {
    const cJSON *v = cJSON_GetArrayItem(k, g[i]);
    ok = set_key(t, k->string, v);
    if (o < (int)sizeof f - 80) o += snprintf(f + o, sizeof f - (size_t)o, "%s[%d]%s", k->string, g[i], k->next ? " " : "");
  }
  snprintf(f + (o < (int)sizeof f - 2 ? o : (int)sizeof f - 2), 2, ")");
  ct_status st = ok ? chip_of(t, f, &s->chips[c], d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  cJSON_Delete(t);
  return st;
}

/* Every chip: explicit points (or the base alone), each with every grid combination (first
 * swept key slowest). */
static ct_status make_chips(ct_sweep *s, const cJSON *base, const cJSON *pts, const cJSON *grid, long long n_grid,
                            ct_diag *d) {
  int n_pts = pts ? cJSON_GetArraySize(pts) : 1, n_keys = grid ? cJSON_GetArraySize(grid) : 0;
  if ((long long)n_pts * n_grid > CT_SWEEP_MAX_POINTS)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: more than %d chip points", s->spec, CT_SWEEP_MAX_POINTS);
  s->chips = calloc((size_t)(n_pts * n_grid), sizeof *s->chips);
  int *g = calloc((size_t)n_keys + 1, sizeof *g);
  ct_status st = s->chips && g ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int p = 0; !st && p < n_pts; p++) {
    memset(g, 0, ((size_t)n_keys + 1) * sizeof *g);
    for (long long c = 0; !st && c < n_grid; c++) {
      st = make_chip(s, base, pts ? cJSON_GetArrayItem(pts, p) : NULL, p, grid, g, s->n_chips, d);
      if (!st) s->n_chips++;
      for (int k = n_keys - 1; k >= 0; k--) { /* odometer: the last key turns fastest */
        if (++g[k] < cJSON_GetArraySize(cJSON_GetArrayItem(grid, k))) break;
        g[k] = 0;
      }
    }
  }
  free(g);
  return st;
}

/* The value of dotted key in a nested tree, as text: strings bare, numbers %.15g. */
static char *value_text(const cJSON *tree, const char *key) {
  const cJSON *v = tree;
  char part[64];
  const char *s = key, *dot;
  while (v && (dot = strchr(s, '.')) != NULL) {
    snprintf(part, sizeof part, "%.*s", (int)(dot - s), s);
    v = cJSON_GetObjectItemCaseSensitive(v, part);
    s = dot + 1;
  }
  v = v ? cJSON_GetObjectItemCaseSensitive(v, s) : NULL;
  char num[64];
  if (cJSON_IsString(v)) return strdup(v->valuestring);
  snprintf(num, sizeof num, "%.15g", cJSON_IsNumber(v) ? v->valuedouble : 0.0);
  return strdup(num);
}

/* s->values: each chip's value of each swept key. */
static ct_status fill_values(ct_sweep *s, ct_diag *d) {
  s->values = calloc((size_t)s->n_chips * (size_t)s->n_keys + 1, sizeof *s->values);
  if (!s->values) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int c = 0; c < s->n_chips; c++) {
    char *text = ct_chip_to_json(&s->chips[c]);
    cJSON *t = text ? cJSON_Parse(text) : NULL;
    free(text);
    for (int k = 0; t && k < s->n_keys; k++)
      if (!(s->values[c * s->n_keys + k] = value_text(t, s->keys[k]))) {
        cJSON_Delete(t);
        t = NULL;
      }
    if (!t) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    cJSON_Delete(t);
  }
  return CT_OK;
}

ct_status ct_sweep_read_chips(ct_sweep *s, const cJSON *root, const char *dir, ct_diag *d) {
  cJSON *base = NULL;
  const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
  const cJSON *grid = cJSON_GetObjectItemCaseSensitive(root, "sweep");
  if (grid && !grid->child) grid = NULL;
  long long n_grid = 1;
  ct_status st = read_base(s->spec, cJSON_GetObjectItemCaseSensitive(root, "chip"), dir, &base, d);
  if (!st) st = check_lists(s, base, pts, grid, &n_grid, d);
  if (!st) st = make_chips(s, base, pts, grid, n_grid, d);
  if (!st) st = fill_values(s, d);
  cJSON_Delete(base);
  return st;
}
