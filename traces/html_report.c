/* html_report.c: `ctpu report`'s inputs, recognized by content in a run or sweep folder and
 * gathered into the page's JSON data (html_report.h; docs/report.md). */
#include "traces/html_report.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/file.h"
#include "traces/html_parse.h"

#define JSON_MAX (1u << 20) /* larger JSON files are traces: not read */
#define TEXT_MAX (256u << 20)

typedef enum kind { K_SUMMARY, K_LAYERS, K_GROUPS, K_COMPARE, K_SWEEP, K_COUNT, K_NONE = -1 } kind;

static const char *const kind_key[K_COUNT] = {"summary", "layers", "groups", "compare", "sweep"};
static const char *const kind_doc[K_COUNT] = {"summary JSONs", "per-layer CSVs", "groups CSVs", "compare tables",
                                              "sweep results CSVs"};

/* Columns each CSV kind must hold as numbers (html_parse.h). */
static const char *const layer_cols[] = {"group", "start", "end", "cycles", "macs", "ddr_bytes_read",
                                         "ddr_bytes_written", NULL};
static const char *const group_cols[] = {"group", "layers", "lmem_bytes", "est_cycles", NULL};

/* The kind of a CSV file by its header line h. */
static kind csv_kind(const char *h) {
  if (!strncmp(h, "layer,group,start,end,", 22)) return K_LAYERS;
  if (!strncmp(h, "group,layers,first_layer,", 25)) return K_GROUPS;
  size_t n = strcspn(h, "\r\n");
  char *line = malloc(n + 3);
  if (!line) return K_NONE;
  line[0] = ',', memcpy(line + 1, h, n), strcpy(line + 1 + n, ",");
  bool sweep = strstr(line, ",point,") && (strstr(line, ",cycles,") || strstr(line, ",sim_cycles,"));
  free(line);
  return sweep ? K_SWEEP : K_NONE;
}

static bool is_summary(const cJSON *j) {
  return cJSON_IsObject(j) && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "total_cycles")) &&
         cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "engines"));
}

/* Reads a JSON file: a summary when it has "total_cycles" and "engines" (ctpu sim --summary),
 * or a member "sim" that has them (ctpu deploy --summary; *val is then that member). */
static ct_status json_file(const char *path, const char *text, kind *k, cJSON **val, ct_diag *d) {
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithOpts(text, &end, true);
  if (!j)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: not valid JSON (at byte %ld)", path, end ? (long)(end - text) : 0L);
  if (is_summary(j)) {
    *k = K_SUMMARY, *val = j;
    return CT_OK;
  }
  if (cJSON_IsObject(j) && is_summary(cJSON_GetObjectItemCaseSensitive(j, "sim")))
    *k = K_SUMMARY, *val = cJSON_DetachItemFromObjectCaseSensitive(j, "sim");
  cJSON_Delete(j);
  return CT_OK;
}

/* Reads the file at path (size bytes) when it is of a known kind: sets *k (K_NONE when not)
 * and *val. */
static ct_status read_input(const char *path, const char *ext, uint64_t size, kind *k, cJSON **val, ct_diag *d) {
  *k = K_NONE, *val = NULL;
  bool json = !strcmp(ext, ".json"), csv = !strcmp(ext, ".csv");
  if (json && size > JSON_MAX) return CT_OK;
  char *text = NULL;
  ct_status st = ct_file_read(path, TEXT_MAX, &text, NULL, d);
  if (st) return st;
  if (json) {
    st = json_file(path, text, k, val, d);
  } else if (csv) {
    *k = csv_kind(text);
    const char *const *req = *k == K_LAYERS ? layer_cols : *k == K_GROUPS ? group_cols : NULL;
    if (*k != K_NONE) st = ct_html_csv(text, path, req, val, d);
  } else {
    st = ct_html_compare_table(text, path, val, d);
    if (!st && *val) *k = K_COMPARE;
  }
  free(text);
  return st;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names of dir's files ending in .json, .csv or .txt, sorted (malloc'd, *n of them). */
static ct_status list_dir(const char *dir, char ***names, int *n, ct_diag *d) {
  *names = NULL, *n = 0;
  DIR *dp = opendir(dir);
  if (!dp) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot read the folder: %s", dir, strerror(errno));
  ct_status st = CT_OK;
  int cap = 0;
  for (struct dirent *e; !st && (e = readdir(dp));) {
    const char *x = strrchr(e->d_name, '.');
    if (!x || (strcmp(x, ".json") && strcmp(x, ".csv") && strcmp(x, ".txt"))) continue;
    if (*n == cap) {
      char **g = realloc(*names, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *g);
      if (!g) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
      else *names = g;
    }
    if (!st && !((*names)[*n] = malloc(strlen(e->d_name) + 1))) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    if (!st) strcpy((*names)[(*n)++], e->d_name);
  }
  closedir(dp);
  if (*n) qsort(*names, (size_t)*n, sizeof **names, by_name);
  return st;
}

/* Adds the file name of dir to data under its kind's key; found[k] is the first file of kind k. */
static ct_status add_file(const char *dir, const char *name, cJSON *data, char found[K_COUNT][256], ct_diag *d) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *path = malloc(n);
  if (!path) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  snprintf(path, n, "%s/%s", dir, name);
  struct stat sb;
  kind k = K_NONE;
  cJSON *val = NULL;
  ct_status st = CT_OK;
  if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) st = read_input(path, strrchr(name, '.'), (uint64_t)sb.st_size, &k, &val, d);
  if (!st && k != K_NONE && found[k][0])
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: two %s: %s and %s (keep one)", dir, kind_doc[k], found[k], name);
  if (!st && k != K_NONE) {
    snprintf(found[k], sizeof found[k], "%s", name);
    if (!cJSON_AddItemToObject(data, kind_key[k], val)) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    else val = NULL;
    if (!st && !cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(data, "files"), kind_key[k], name))
      st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  cJSON_Delete(val);
  free(path);
  return st;
}

/* The chip, title and (empty) files members of data. */
static bool add_header(cJSON *data, const char *dir, const ct_html_chip *c) {
  cJSON *chip = cJSON_AddObjectToObject(data, "chip");
  if (!cJSON_AddObjectToObject(data, "files")) return false;
  const char *base = strrchr(dir, '/');
  base = base && base[1] ? base + 1 : dir;
  return chip && cJSON_AddStringToObject(data, "title", base) && cJSON_AddStringToObject(chip, "name", c->name) &&
         cJSON_AddNumberToObject(chip, "freq_mhz", c->freq_mhz) && cJSON_AddNumberToObject(chip, "mxu_rows", c->mxu_rows) &&
         cJSON_AddNumberToObject(chip, "mxu_cols", c->mxu_cols) &&
         cJSON_AddNumberToObject(chip, "ddr_bytes_per_cycle", c->ddr_bytes_per_cycle) &&
         cJSON_AddNumberToObject(chip, "lmem_bytes", c->lmem_bytes);
}

ct_status ct_html_collect(const char *dir, const ct_html_chip *chip, cJSON **data, ct_diag *d) {
  char **names, found[K_COUNT][256] = {{0}};
  int n;
  *data = NULL;
  ct_status st = list_dir(dir, &names, &n, d);
  cJSON *o = st ? NULL : cJSON_CreateObject();
  if (!st && (!o || !add_header(o, dir, chip))) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int i = 0; !st && i < n; i++) st = add_file(dir, names[i], o, found, d);
  bool any = false;
  for (int k = 0; k < K_COUNT; k++) any = any || found[k][0];
  if (!st && !any)
    st = ct_diag_set(d, CT_ERR_INPUT,
                     "%s: no summary JSON, per-layer CSV, groups CSV, compare table or sweep results CSV found", dir);
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  if (st) cJSON_Delete(o), o = NULL;
  *data = o;
  return st;
}
