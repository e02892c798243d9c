/* spec_util.h: private helpers of the sweep spec reader (spec.c, chips.c): typed reads of
 * JSON values whose errors name the spec file and the JSON path. */
#ifndef CT_SWEEP_SPEC_UTIL_H
#define CT_SWEEP_SPEC_UTIL_H

#include <cjson/cJSON.h>

#include "common/status.h"
#include "sweep/sweep.h"

/* CT_ERR_INPUT "SPEC: PATH.key: unknown key (known: a, b)" for a key of o not in known
 * (NULL-terminated). */
ct_status ct_sweep_check_keys(const char *spec, const char *path, const cJSON *o, const char *const *known, ct_diag *d);
/* *out := a copy of string v. CT_ERR_INPUT when v is not a string. */
ct_status ct_sweep_string(const char *spec, const char *path, const cJSON *v, char **out, ct_diag *d);
/* out[0..*n) := v, a string or a non-empty list of at most CT_SWEEP_MAX_LIST strings. */
ct_status ct_sweep_strings(const char *spec, const char *path, const cJSON *v, char **out, int *n, ct_diag *d);
/* *out := the absolute path of the existing file named by string v (relative to dir). */
ct_status ct_sweep_file(const char *spec, const char *path, const cJSON *v, const char *dir, char **out, ct_diag *d);
/* ct_sweep_file over a string or a list of strings. */
ct_status ct_sweep_files(const char *spec, const char *path, const cJSON *v, const char *dir, char **out, int *n,
                         ct_diag *d);
/* The folder of path ("." when it has none); malloc'd, NULL on no memory. */
char *ct_sweep_dir_of(const char *path);
/* Reads "chip", "sweep" and "points" of root into s's chips, keys and values (chips.c). */
ct_status ct_sweep_read_chips(ct_sweep *s, const cJSON *root, const char *dir, ct_diag *d);

#endif
