/* files.c: a command's inputs and outputs registered with its output set (files.h). */
#include "tools/files.h"

#include <stdlib.h>
#include <string.h>

/* dir of path + name, or name when it is absolute (malloc'd). */
static char *beside(const char *path, const char *name) {
  const char *slash = strrchr(path, '/');
  size_t dir = name[0] == '/' || !slash ? 0 : (size_t)(slash - path) + 1, n = dir + strlen(name) + 1;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%.*s%s", (int)dir, path, name);
  return s;
}

/* path + suffix (malloc'd). */
static char *with_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path) + strlen(suffix) + 1;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s%s", path, suffix);
  return s;
}

ct_status ct_tool_in_model(ct_outset *o, const char *model, const ct_graph *g, ct_diag *d) {
  char *h5 = with_suffix(model, ".h5"), *named = g && g->weights && g->weights[0] ? beside(model, g->weights) : NULL;
  ct_status st = h5 && (named || !g || !g->weights || !g->weights[0]) ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = ct_outset_input(o, model, d);
  if (!st) st = ct_outset_input(o, h5, d);
  if (!st && named) st = ct_outset_input(o, named, d);
  free(h5), free(named);
  return st;
}

ct_status ct_tool_out_model(ct_outset *o, const char *out, const char **tmp, ct_diag *d) {
  char *h5 = with_suffix(out, ".h5");
  const char *tmp_h5;
  ct_status st = h5 ? ct_outset_add(o, out, tmp, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = ct_outset_add(o, h5, &tmp_h5, d);
  free(h5);
  return st;
}

ct_status ct_tool_in_dataset(ct_outset *o, const char *path, const ct_dataset *ds, ct_diag *d) {
  char *labels = with_suffix(path, "/labels.tsv"); /* when path is a folder */
  ct_status st = labels ? ct_outset_input(o, path, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = ct_outset_input(o, labels, d);
  free(labels);
  for (int64_t i = 0; !st && ds && i < ct_dataset_size(ds); i++) {
    const char *const *files = NULL;
    int nf = ct_dataset_sample_files(ds, i, &files); /* before the call: argument order is unspecified */
    st = ct_tool_in_files(o, files, nf, d);
  }
  return st;
}

ct_status ct_tool_in_dataset_of(ct_outset *o, const char *path, const ct_graph *g, ct_diag *d) {
  ct_dataset *ds = NULL;
  ct_status st = ct_dataset_open(path, g, &ds, d);
  if (!st) st = ct_tool_in_dataset(o, path, ds, d);
  ct_dataset_free(ds);
  return st;
}

ct_status ct_tool_in_files(ct_outset *o, const char *const *files, int n, ct_diag *d) {
  ct_status st = CT_OK;
  for (int i = 0; !st && i < n; i++) st = ct_outset_input(o, files[i], d);
  return st;
}

ct_status ct_tool_write_text(const char *tmp, const char *dest, bool (*write)(FILE *f, const void *user),
                             const void *user, ct_diag *d) {
  FILE *f = fopen(tmp, "w");
  bool ok = f && write(f, user);
  if (f && fclose(f)) ok = false;
  return ok ? CT_OK : ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write", dest);
}
