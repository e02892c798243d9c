/* calib_table.c: TPU-MLIR calibration table text layout, read and written (see
 * calib_table.h): threshold rows `name threshold min max` and the `#weight_scale` block of
 * per-channel rows, with file:line diagnostics. */
#include "quant/calib_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/outset.h"
#include "quant/table_text.h"

void ct_calib_table_init(ct_calib_table *t) { memset(t, 0, sizeof *t); }

void ct_calib_table_free(ct_calib_table *t) {
  for (int64_t i = 0; i < t->n; i++) free(t->rows[i].name);
  for (int64_t i = 0; i < t->nw; i++) free(t->w[i].name), free(t->w[i].scale), free(t->w[i].zp);
  for (int64_t i = 0; i < t->nch; i++) free(t->ch[i].name), free(t->ch[i].scale);
  free(t->rows);
  free(t->w);
  free(t->ch);
  ct_calib_table_init(t);
}

const ct_calib_row *ct_calib_table_find(const ct_calib_table *t, const char *name) {
  for (int64_t i = 0; i < t->n; i++)
    if (!strcmp(t->rows[i].name, name)) return &t->rows[i];
  return NULL;
}

static const ct_calib_wrow *find_wrow(const ct_calib_wrow *r, int64_t n, const char *name) {
  for (int64_t i = 0; i < n; i++)
    if (!strcmp(r[i].name, name)) return &r[i];
  return NULL;
}

const ct_calib_wrow *ct_calib_table_find_weight(const ct_calib_table *t, const char *name) {
  return find_wrow(t->w, t->nw, name);
}

const ct_calib_wrow *ct_calib_table_find_channel(const ct_calib_table *t, const char *name) {
  return find_wrow(t->ch, t->nch, name);
}

/* Grows an array of elem-byte items to hold one more. */
static bool grow(void **a, int64_t n, int64_t *cap, size_t elem) {
  if (n < *cap) return true;
  int64_t nc = *cap ? *cap * 2 : 16;
  void *na = realloc(*a, (size_t)nc * elem);
  if (!na) return false;
  *a = na;
  *cap = nc;
  return true;
}

/* Name checks shared by both row kinds: a valid field, not already in the table. */
static ct_status check_name(const char *name, const int *first_line, ct_diag *d) {
  if (!ct_table_name_ok(name))
    return ct_diag_set(d, CT_ERR_INPUT, "name \"%s\" is empty, has a blank or starts with '#'", name);
  if (!first_line) return CT_OK;
  if (*first_line)
    return ct_diag_set(d, CT_ERR_INPUT, "duplicate name \"%s\" (first on line %d)", name, *first_line);
  return ct_diag_set(d, CT_ERR_INPUT, "duplicate name \"%s\"", name);
}

/* A bound (min or max) must be finite. */
static ct_status check_finite(const char *what, double v, ct_diag *d) {
  if (isfinite(v)) return CT_OK;
  return ct_diag_set(d, CT_ERR_INPUT, "%s %g is not finite", what, v);
}

ct_status ct_calib_table_add(ct_calib_table *t, const char *name, double threshold, double min, double max,
                             int line, ct_diag *d) {
  const ct_calib_row *old = ct_calib_table_find(t, name);
  ct_status st = check_name(name, old ? &old->line : NULL, d);
  if (st) return st;
  if ((st = check_finite("threshold", threshold, d))) return st;
  if (threshold < 0) return ct_diag_set(d, CT_ERR_INPUT, "threshold %g is negative", threshold);
  if ((st = check_finite("min", min, d)) || (st = check_finite("max", max, d))) return st;
  if (min > max) return ct_diag_set(d, CT_ERR_INPUT, "min %g > max %g", min, max);
  char *copy = strdup(name);
  if (!copy || !grow((void **)&t->rows, t->n, &t->cap, sizeof *t->rows)) {
    free(copy);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  t->rows[t->n++] = (ct_calib_row){copy, threshold, min, max, line};
  return CT_OK;
}

/* Appends a per-channel row to (*rows, *n, *cap): n values checked by `ok` (weight scales
 * > 0, channel thresholds >= 0), optional zero points. */
static ct_status add_wrow(ct_calib_wrow **rows, int64_t *nrows, int64_t *cap, const char *name, int64_t n,
                          const double *v, const int32_t *zp, bool thresholds, int line, ct_diag *d) {
  const ct_calib_wrow *old = find_wrow(*rows, *nrows, name);
  ct_status st = check_name(name, old ? &old->line : NULL, d);
  if (st) return st;
  if (n < 1) return ct_diag_set(d, CT_ERR_INPUT, "channel count %lld is not > 0", (long long)n);
  for (int64_t c = 0; c < n; c++)
    if (!isfinite(v[c]) || (thresholds ? v[c] < 0 : !(v[c] > 0)))
      return ct_diag_set(d, CT_ERR_INPUT, "channel %lld: %s %g is not a finite number %s", (long long)c,
                         thresholds ? "threshold" : "scale", v[c], thresholds ? ">= 0" : "> 0");
  ct_calib_wrow r = {strdup(name), n, malloc((size_t)n * sizeof(double)), zp ? malloc((size_t)n * sizeof(int32_t)) : NULL,
                     line};
  if (!r.name || !r.scale || (zp && !r.zp) || !grow((void **)rows, *nrows, cap, sizeof **rows)) {
    free(r.name);
    free(r.scale);
    free(r.zp);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  memcpy(r.scale, v, (size_t)n * sizeof(double));
  if (zp) memcpy(r.zp, zp, (size_t)n * sizeof(int32_t));
  (*rows)[(*nrows)++] = r;
  return CT_OK;
}

ct_status ct_calib_table_add_weight(ct_calib_table *t, const char *name, int64_t n, const double *scale,
                                    const int32_t *zp, int line, ct_diag *d) {
  return add_wrow(&t->w, &t->nw, &t->wcap, name, n, scale, zp, false, line, d);
}

ct_status ct_calib_table_add_channel(ct_calib_table *t, const char *name, int64_t n, const double *th, int line,
                                     ct_diag *d) {
  return add_wrow(&t->ch, &t->nch, &t->chcap, name, n, th, NULL, true, line, d);
}

/* `name threshold min max`. */
static ct_status parse_row(ct_calib_table *t, char **f, int nf, int line, ct_diag *d) {
  static const char *const what[3] = {"threshold", "min", "max"};
  double v[3];
  if (nf != 4) return ct_diag_set(d, CT_ERR_INPUT, "expected 4 fields, got %d", nf);
  for (int i = 0; i < 3; i++)
    if (!ct_table_number(f[i + 1], &v[i]))
      return ct_diag_set(d, CT_ERR_INPUT, "bad number \"%s\" for %s", f[i + 1], what[i]);
  return ct_calib_table_add(t, f[0], v[0], v[1], v[2], line, d);
}

/* `name N s_1 .. s_N [N zp_1 .. zp_N]` (weight block) or `name N th_1 .. th_N` (channel
 * block, no zero points); f has room for every field (nf of them). */
static ct_status parse_wrow(ct_calib_table *t, char **f, int nf, bool channel, int line, ct_diag *d) {
  double cnt, v;
  if (nf < 2 || !ct_table_number(f[1], &cnt) || cnt != floor(cnt) || cnt < 1 || cnt > 1e7)
    return ct_diag_set(d, CT_ERR_INPUT, "bad channel count \"%s\"", nf < 2 ? "" : f[1]);
  int n = (int)cnt;
  if (channel && nf != 2 + n) return ct_diag_set(d, CT_ERR_INPUT, "expected 2 + %d fields (name, count, %d thresholds), got %d", n, n, nf);
  if (nf != 2 + n && nf != 3 + 2 * n)
    return ct_diag_set(d, CT_ERR_INPUT,
                       "expected 2 + %d fields (name, count, %d scales) or 3 + %d with zero points, got %d", n, n,
                       2 * n, nf);
  double *sc = malloc((size_t)n * sizeof *sc);
  int32_t *zp = nf > 2 + n ? malloc((size_t)n * sizeof *zp) : NULL;
  ct_status st = CT_OK;
  if (!sc || (nf > 2 + n && !zp)) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int c = 0; !st && c < n; c++)
    if (!ct_table_number(f[2 + c], &sc[c]))
      st = ct_diag_set(d, CT_ERR_INPUT, "bad number \"%s\" for %s", f[2 + c], channel ? "threshold" : "scale");
  if (!st && zp && (!ct_table_number(f[2 + n], &v) || v != n))
    st = ct_diag_set(d, CT_ERR_INPUT, "zero point count \"%s\" differs from channel count %d", f[2 + n], n);
  for (int c = 0; !st && zp && c < n; c++)
    if (!ct_table_number(f[3 + n + c], &v) || v != floor(v) || fabs(v) > 65535)
      st = ct_diag_set(d, CT_ERR_INPUT, "bad zero point \"%s\"", f[3 + n + c]);
    else
      zp[c] = (int32_t)v;
  if (!st) st = channel ? ct_calib_table_add_channel(t, f[0], n, sc, line, d) : ct_calib_table_add_weight(t, f[0], n, sc, zp, line, d);
  free(sc);
  free(zp);
  return st;
}

/* Block switch on a '#' line: 1 weight block, 2 channel block, 0 threshold block; -1
 * unsupported (d set). */
static int block_of(const char *body, ct_diag *d) {
  static const char *const unsupported[] = {"#int4_th", "#tpu-mlir-fp8", "mqbench-fp8", "asym_op", "int4_op"};
  if (strstr(body, "#weight_scale")) return 1;
  if (strstr(body, "#channel_threshold")) return 2;
  for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++)
    if (strstr(body, unsupported[i])) {
      ct_diag_set(d, CT_ERR_INPUT, "block \"%s\" is not supported (thresholds, #weight_scale and #channel_threshold only)", unsupported[i]);
      return -1;
    }
  return 0;
}

/* Parses one line (any kind) in the current block *wblock. */
static ct_status parse_line(ct_calib_table *t, char *s, int line, int *wblock, ct_diag *d) {
  const char *body;
  if (ct_table_is_comment(s, &body)) {
    int b = block_of(body, d);
    if (b < 0) return CT_ERR_INPUT;
    *wblock = b;
    return CT_OK;
  }
  if (ct_table_is_blank(s)) return CT_OK;
  int nf = ct_table_split(s, NULL, 0);
  char **f = malloc((size_t)nf * sizeof *f);
  if (!f) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  ct_table_split(s, f, nf);
  ct_status st = *wblock ? parse_wrow(t, f, nf, *wblock == 2, line, d) : parse_row(t, f, nf, line, d);
  free(f);
  return st;
}

ct_status ct_calib_table_parse(char *text, const char *file, ct_calib_table *t, ct_diag *d) {
  char *cur = text, *s;
  int line = 0, wblock = 0;
  while ((s = ct_table_next_line(&cur))) {
    line++;
    ct_status st = parse_line(t, s, line, &wblock, d);
    if (st) return ct_diag_prefix(d, "%s:%d: ", file, line);
  }
  return CT_OK;
}

ct_status ct_calib_table_read(const char *path, ct_calib_table *t, ct_diag *d) {
  char *text;
  ct_status st = ct_file_read(path, 0, &text, NULL, d);
  if (st) return st;
  st = ct_calib_table_parse(text, path, t, d);
  free(text);
  return st;
}

/* A per-channel block: its marker line, then `name N v_1 .. v_N [N zp_1 .. zp_N]` rows. */
static void write_wrows(FILE *f, const char *marker, const ct_calib_wrow *w, int64_t n) {
  char a[32];
  if (n) fprintf(f, "%s\n", marker);
  for (int64_t i = 0; i < n; i++, w++) {
    fprintf(f, "%s %lld", w->name, (long long)w->n);
    for (int64_t k = 0; k < w->n; k++) ct_table_format(w->scale[k], a), fprintf(f, " %s", a);
    if (w->zp) fprintf(f, " %lld", (long long)w->n);
    for (int64_t k = 0; w->zp && k < w->n; k++) fprintf(f, " %d", (int)w->zp[k]);
    fprintf(f, "\n");
  }
}

static void write_rows(FILE *f, const ct_calib_table *t) {
  char a[32], b[32], c[32];
  for (int64_t i = 0; i < t->n; i++) {
    ct_table_format(t->rows[i].threshold, a);
    ct_table_format(t->rows[i].min, b);
    ct_table_format(t->rows[i].max, c);
    fprintf(f, "%s %s %s %s\n", t->rows[i].name, a, b, c);
  }
  write_wrows(f, "#weight_scale", t->w, t->nw);
  write_wrows(f, "#channel_threshold", t->ch, t->nch);
}

ct_status ct_calib_table_write(const char *path, const ct_calib_table *t, const char *const *comments,
                               int ncomments, ct_diag *d) {
  for (int i = 0; i < ncomments; i++)
    if (strpbrk(comments[i], "\r\n") || block_of(comments[i], NULL))
      return ct_diag_set(d, CT_ERR_USAGE, "%s: comment \"%s\" has a line break or a block marker", path, comments[i]);
  ct_outfile o;
  ct_status st = ct_outfile_begin(&o, path, true, d);
  if (st) return st;
  FILE *f = o.f;
  fprintf(f, "# ctpu calibration table\n");
  for (int i = 0; i < ncomments; i++) fprintf(f, "# %s\n", comments[i]);
  fprintf(f, "# op_name threshold min max\n");
  write_rows(f, t);
  return ct_outfile_commit(&o, d);
}
