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

/* "dir/" part of path ("" for a bare name), malloc'd. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) + 1 : 0;
  char *s = malloc(n + 1);
  if (s) memcpy(s, path, n), s[n] = '\0';
  return s;
}

/* path with its folder resolved (realpath: symbolic links, ".", ".."), malloc'd; the whole
 * path when it exists, else the resolved folder + the base name, else path as given. */
static char *resolve(const char *path) {
  char *r = realpath(path, NULL);
  if (r) return r;
  char *dir = dir_of(path);
  if (!dir) return NULL;
  char *rd = realpath(*dir ? dir : ".", NULL);
  const char *base = path + strlen(dir);
  size_t n = (rd ? strlen(rd) : 0) + strlen(base) + 2;
  char *s = rd ? malloc(n) : strdup(path);
  if (rd && s) snprintf(s, n, "%s/%s", rd, base);
  free(rd), free(dir);
  return s;
}

ct_status ct_outset_input(ct_outset *o, const char *path, ct_diag *d) {
  if (!path) return CT_OK;
  if (o->n_in == o->cap_in) {
    int cap = o->cap_in ? 2 * o->cap_in : 8;
    ct_outset_in *in = realloc(o->in, sizeof *in * (size_t)cap);
    if (!in) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    o->in = in, o->cap_in = cap;
  }
  ct_outset_in *e = &o->in[o->n_in];
  struct stat st;
  memset(e, 0, sizeof *e);
  if (stat(path, &st) == 0) {
    e->exists = true;
    e->dev = (unsigned long long)st.st_dev, e->ino = (unsigned long long)st.st_ino;
  }
  if (!(e->real = resolve(path))) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  o->n_in++;
  return CT_OK;
}

/* True if dest (resolved: real; st: its stat when it exists, else NULL) is one of the inputs. */
static bool is_input(const ct_outset *o, const char *real, const struct stat *st) {
  for (int i = 0; i < o->n_in; i++) {
    const ct_outset_in *e = &o->in[i];
    if (real && !strcmp(real, e->real)) return true;
    if (e->exists && st && e->dev == (unsigned long long)st->st_dev && e->ino == (unsigned long long)st->st_ino) return true;
  }
  return false;
}

static ct_status check_dest(const ct_outset *o, const char *dest, const char *real, ct_diag *d) {
  struct stat st;
  bool exists = stat(dest, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return ct_diag_set(d, CT_ERR_USAGE, "%s: output is a directory", dest);
  if (is_input(o, real, exists ? &st : NULL))
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
  char *real = resolve(dest);
  if (!real) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  ct_status st = CT_OK;
  for (int i = 0; !st && i < o->n_out; i++)
    if (!strcmp(o->dest[i], dest) || !strcmp(o->real[i], real)) st = ct_diag_set(d, CT_ERR_USAGE, "%s: named as two outputs", dest);
  if (!st) st = check_dest(o, dest, real, d);
  char *dir = st ? NULL : dir_of(dest);
  if (!st && !dir) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st) {
    free(real);
    return st;
  }
  const char *base = dest + strlen(dir);
  if (!*base) {
    free(dir), free(real);
    return ct_diag_set(d, CT_ERR_USAGE, "%s: output is a directory", dest);
  }
  char *td = temp_dir(o, dir, dest, d);
  free(dir);
  if (!td) {
    free(real);
    return d ? d->code : CT_ERR_INPUT;
  }
  size_t n = strlen(td) + strlen(base) + 2;
  char *t = malloc(n), *dc = strdup(dest);
  if (!t || !dc) {
    free(t), free(dc), free(real);
    rmdir(td);
    free(td);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  snprintf(t, n, "%s/%s", td, base);
  o->dest[o->n_out] = dc, o->tmp[o->n_out] = t, o->dir[o->n_out] = td, o->real[o->n_out++] = real;
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
    free(o->dir[i]), free(o->tmp[i]), free(o->dest[i]), free(o->real[i]);
  }
  for (int i = 0; i < o->n_in; i++) free(o->in[i].real);
  free(o->in);
  o->in = NULL;
  o->n_out = o->n_in = o->cap_in = 0;
}

ct_status ct_outset_check(const ct_outset *o, ct_diag *d) {
  ct_status st = CT_OK;
  for (int i = 0; !st && i < o->n_out; i++) st = check_dest(o, o->dest[i], o->real[i], d);
  return st;
}

ct_status ct_outset_commit(ct_outset *o, ct_diag *d) {
  ct_status st = ct_outset_check(o, d);
  for (int i = 0; !st && i < o->n_out; i++) {
    if (access(o->tmp[i], F_OK) != 0) continue;
    if (rename(o->tmp[i], o->dest[i]) != 0)
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot rename into place: %s", o->dest[i], strerror(errno));
  }
  outset_free(o);
  return st;
}

void ct_outset_abort(ct_outset *o) { outset_free(o); }

ct_status ct_outset_end(ct_outset *o, ct_status st, ct_diag *d) {
  if (st) ct_outset_abort(o);
  else st = ct_outset_commit(o, d);
  return st;
}

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
