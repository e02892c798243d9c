/* spec_util.c: typed reads of the sweep spec's JSON values, each error naming the spec file
 * and the JSON path of the value. */
#define _DEFAULT_SOURCE
#include "sweep/spec_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

ct_status ct_sweep_check_keys(const char *spec, const char *path, const cJSON *o, const char *const *known, ct_diag *d) {
  for (const cJSON *k = o->child; k; k = k->next) {
    bool ok = false;
    for (int i = 0; known[i] && !ok; i++) ok = !strcmp(k->string, known[i]);
    if (ok) continue;
    char list[256] = "";
    for (int i = 0, o2 = 0; known[i] && o2 < (int)sizeof list - 40; i++)
      o2 += snprintf(list + o2, sizeof list - (size_t)o2, "%s%s", i ? ", " : "", known[i]);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s%s%s: unknown key (known: %s)", spec, path, *path ? "." : "", k->string, list);
  }
  return CT_OK;
}

ct_status ct_sweep_string(const char *spec, const char *path, const cJSON *v, char **out, ct_diag *d) {
  if (!cJSON_IsString(v)) return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: expected a string", spec, path);
  *out = strdup(v->valuestring);
  return *out ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
}

ct_status ct_sweep_strings(const char *spec, const char *path, const cJSON *v, char **out, int *n, ct_diag *d) {
  *n = 0;
  if (cJSON_IsString(v)) {
    ct_status st = ct_sweep_string(spec, path, v, &out[0], d);
    if (!st) *n = 1;
    return st;
  }
  int len = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
  if (len < 1 || len > CT_SWEEP_MAX_LIST)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: expected a string or a list of 1 to %d strings", spec, path,
                       CT_SWEEP_MAX_LIST);
  char p[256];
  for (int i = 0; i < len; i++) {
    snprintf(p, sizeof p, "%s[%d]", path, i);
    ct_status st = ct_sweep_string(spec, p, cJSON_GetArrayItem(v, i), &out[i], d);
    if (st) {
      for (int k = 0; k < i; k++) free(out[k]);
      return st;
    }
  }
  *n = len;
  return CT_OK;
}

ct_status ct_sweep_file(const char *spec, const char *path, const cJSON *v, const char *dir, char **out, ct_diag *d) {
  if (!cJSON_IsString(v) || !*v->valuestring)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: expected a file name", spec, path);
  const char *f = v->valuestring;
  size_t n = strlen(dir) + strlen(f) + 2;
  char *joined = malloc(n), real[PATH_MAX];
  if (!joined) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  snprintf(joined, n, "%s/%s", f[0] == '/' ? "" : dir, f);
  struct stat sb;
  ct_status st = CT_OK;
  if (!realpath(f[0] == '/' ? f : joined, real))
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: %s: \"%s\": %s", spec, path, f, strerror(errno));
  else if (stat(real, &sb) || !S_ISREG(sb.st_mode))
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: %s: \"%s\" is not a file", spec, path, f);
  else if (!(*out = strdup(real)))
    st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  free(joined);
  return st;
}

ct_status ct_sweep_files(const char *spec, const char *path, const cJSON *v, const char *dir, char **out, int *n,
                         ct_diag *d) {
  *n = 0;
  if (cJSON_IsString(v)) {
    ct_status st = ct_sweep_file(spec, path, v, dir, &out[0], d);
    if (!st) *n = 1;
    return st;
  }
  int len = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
  if (len < 1 || len > CT_SWEEP_MAX_LIST)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: expected a file or a list of 1 to %d files", spec, path, CT_SWEEP_MAX_LIST);
  char p[256];
  for (int i = 0; i < len; i++) {
    snprintf(p, sizeof p, "%s[%d]", path, i);
    ct_status st = ct_sweep_file(spec, p, cJSON_GetArrayItem(v, i), dir, &out[i], d);
    if (st) return st; /* out[0..i) are freed with the model (*n counts them) */
    *n = i + 1;
  }
  return CT_OK;
}

char *ct_sweep_dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}
