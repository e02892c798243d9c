/* outset.c: outputs of a command written under temporary names and renamed together, and
 * single files written the same way (see outset.h). POSIX rename(2) is atomic per file; the
 * set is checked before the first rename. */
#define _DEFAULT_SOURCE
#include "common/outset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ct_outset_init(ct_outset *o, const char *cmd) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
}

ct_status ct_outset_input(ct_outset *o, const char *path, ct_diag *d) {
  struct stat st;
  if (!path || stat(path, &st) != 0) return CT_OK;
  if (o->n_in == CT_OUTSET_MAX * 4) return ct_diag_set(d, CT_ERR_LIMIT, "more than %d input files", CT_OUTSET_MAX * 4);
  o->in_dev[o->n_in] = (unsigned long long)st.st_dev;
  o->in_ino[o->n_in++] = (unsigned long long)st.st_ino;
  return CT_OK;
}

/* "dir/" part of path ("" for a bare name), malloc'd. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) + 1 : 0;
  char *s = malloc(n + 1);
  if (s) memcpy(s, path, n), s[n] = '\0';
  return s;
}

static ct_status check_dest(const ct_outset *o, const char *dest, ct_diag *d) {
  struct stat st;
  if (stat(dest, &st) != 0) return CT_OK;
  if (S_ISDIR(st.st_mode)) return ct_diag_set(d, CT_ERR_USAGE, "%s: output is a directory", dest);
  for (int i = 0; i < o->n_in; i++)
    if (o->in_dev[i] == (unsigned long long)st.st_dev && o->in_ino[i] == (unsigned long long)st.st_ino)
      return ct_diag_set(d, CT_ERR_USAGE, "%s: output is also an input of the command (refusing to overwrite it)", dest);
  return CT_OK;
}

/* The temporary directory for outputs in directory `dir`: reuses one already made. */
static char *temp_dir(ct_outset *o, const char *dir, const char *dest, ct_diag *d) {
  size_t n = strlen(dir);
  for (int i = 0; i < o->n_out; i++)
    if (o->dir[i] && !strncmp(o->dir[i], dir, n) && o->dir[i][n] && !strchr(o->dir[i] + n, '/')) {
      char *t = strdup(o->dir[i]);
      if (!t) ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
      return t;
    }
  char *t = malloc(n + 64);
  if (!t) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory"), NULL;
  snprintf(t, n + 64, "%s.ctpu-%ld-%d.tmp", dir, (long)getpid(), o->n_out);
  if (mkdir(t, 0700) != 0) {
    ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write in the output's directory: %s", dest, strerror(errno));
    free(t);
    return NULL;
  }
  return t;
}

ct_status ct_outset_add(ct_outset *o, const char *dest, const char **tmp, ct_diag *d) {
  if (o->n_out == CT_OUTSET_MAX) return ct_diag_set(d, CT_ERR_LIMIT, "more than %d outputs", CT_OUTSET_MAX);
  for (int i = 0; i < o->n_out; i++)
    if (!strcmp(o->dest[i], dest)) return ct_diag_set(d, CT_ERR_USAGE, "%s: named as two outputs", dest);
  ct_status st = check_dest(o, dest, d);
  if (st) return st;
  char *dir = dir_of(dest);
  if (!dir) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  const char *base = dest + strlen(dir);
  if (!*base) {
    free(dir);
    return ct_diag_set(d, CT_ERR_USAGE, "%s: output is a directory", dest);
  }
  char *td = temp_dir(o, dir, dest, d);
  free(dir);
  if (!td) return d ? d->code : CT_ERR_INPUT;
  size_t n = strlen(td) + strlen(base) + 2;
  char *t = malloc(n), *dc = strdup(dest);
  if (!t || !dc) {
    free(t), free(dc);
    rmdir(td);
    free(td);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  snprintf(t, n, "%s/%s", td, base);
  o->dest[o->n_out] = dc, o->tmp[o->n_out] = t, o->dir[o->n_out++] = td;
  *tmp = t;
  return CT_OK;
}

/* Removes every file left in temporary directory dir (writers' own .tmp files), then dir. */
static void remove_dir(const char *dir) {
  DIR *dp = opendir(dir);
  if (dp) {
    struct dirent *e;
    while ((e = readdir(dp))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      size_t n = strlen(dir) + strlen(e->d_name) + 2;
      char *p = malloc(n);
      if (p) snprintf(p, n, "%s/%s", dir, e->d_name), remove(p);
      free(p);
    }
    closedir(dp);
  }
  rmdir(dir);
}

static void outset_free(ct_outset *o) {
  for (int i = 0; i < o->n_out; i++) {
    remove_dir(o->dir[i]);
    free(o->dir[i]), free(o->tmp[i]), free(o->dest[i]);
  }
  o->n_out = 0;
}

ct_status ct_outset_commit(ct_outset *o, ct_diag *d) {
  ct_status st = CT_OK;
  for (int i = 0; !st && i < o->n_out; i++) st = check_dest(o, o->dest[i], d);
  for (int i = 0; !st && i < o->n_out; i++) {
    if (access(o->tmp[i], F_OK) != 0) continue;
    if (rename(o->tmp[i], o->dest[i]) != 0)
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot rename into place: %s", o->dest[i], strerror(errno));
  }
  outset_free(o);
  return st;
}

void ct_outset_abort(ct_outset *o) { outset_free(o); }

/* ---- one file ---- */

ct_status ct_outfile_begin(ct_outfile *o, const char *path, bool open, ct_diag *d) {
  memset(o, 0, sizeof *o);
  size_t n = strlen(path) + 32;
  if (!(o->path = strdup(path)) || !(o->tmp = malloc(n))) {
    ct_outfile_abort(o);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  }
  snprintf(o->tmp, n, "%s.tmp%ld", path, (long)getpid());
  if (open && !(o->f = fopen(o->tmp, "wb"))) {
    ct_status st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot create: %s", path, strerror(errno));
    ct_outfile_abort(o);
    return st;
  }
  return CT_OK;
}

static void outfile_free(ct_outfile *o) {
  free(o->path), free(o->tmp);
  memset(o, 0, sizeof *o);
}

ct_status ct_outfile_commit(ct_outfile *o, ct_diag *d) {
  int err = 0;
  if (o->f) {
    errno = 0;
    bool bad = ferror(o->f) != 0;
    if (fclose(o->f) != 0 || bad) err = errno ? errno : EIO;
    o->f = NULL;
  }
  if (!err && rename(o->tmp, o->path) != 0) err = errno;
  ct_status st = CT_OK;
  if (err) {
    remove(o->tmp);
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write: %s", o->path, strerror(err));
  }
  outfile_free(o);
  return st;
}

void ct_outfile_abort(ct_outfile *o) {
  if (o->f) fclose(o->f);
  if (o->tmp) remove(o->tmp);
  outfile_free(o);
}

ct_status ct_outfile_write(const char *path, ct_status (*write)(FILE *f, const void *ctx, ct_diag *d),
                           const void *ctx, ct_diag *d) {
  ct_outfile o;
  ct_status st = ct_outfile_begin(&o, path, true, d);
  if (!st && (st = write(o.f, ctx, d))) ct_outfile_abort(&o);
  else if (!st) st = ct_outfile_commit(&o, d);
  return st;
}
