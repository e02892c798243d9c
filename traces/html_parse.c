/* html_parse.c: CSV (RFC 4180) and `ctpu compare` tables into cJSON, for `ctpu report`
 * (html_parse.h). */
#include "traces/html_parse.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One CSV record: its fields (malloc'd). */
typedef struct record {
  int n, cap;
  char **f;
} record;

static void record_clear(record *r) {
  for (int i = 0; i < r->n; i++) free(r->f[i]);
  r->n = 0;
}

static bool record_push(record *r, const char *s, size_t len) {
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 16;
    char **f = realloc(r->f, (size_t)cap * sizeof *f);
    if (!f) return false;
    r->f = f, r->cap = cap;
  }
  char *c = malloc(len + 1);
  if (!c) return false;
  memcpy(c, s, len);
  c[len] = '\0';
  r->f[r->n++] = c;
  return true;
}

/* Reads one quoted field at *p (just after its opening quote) into buf (the quotes undone);
 * advances *p past the closing quote and counts newlines inside into *line. Returns the
 * field length, or -1 when the quote is not closed. */
static long quoted(const char **p, char *buf, int *line) {
  const char *s = *p;
  long k = 0;
  for (;; s++) {
    if (!*s) return -1;
    if (*s == '"' && s[1] == '"') {
      buf[k++] = '"', s++;
    } else if (*s == '"') {
      break;
    } else {
      if (*s == '\n') (*line)++;
      buf[k++] = *s;
    }
  }
  *p = s + 1;
  return k;
}

/* Reads the record at *p into r and advances *p past its line end; buf holds at least
 * strlen(*p) + 1 bytes. Returns NULL or the error message. */
static const char *read_record(const char **p, record *r, char *buf, int *line) {
  const char *s = *p;
  record_clear(r);
  for (;;) {
    long k = 0;
    if (*s == '"') {
      s++;
      if ((k = quoted(&s, buf, line)) < 0) return "unterminated quote";
      if (*s && *s != ',' && *s != '\n' && *s != '\r') return "text after a closing quote";
    } else {
      while (*s && *s != ',' && *s != '\n' && *s != '\r') buf[k++] = *s++;
    }
    if (!record_push(r, buf, (size_t)k)) return "out of memory";
    if (*s != ',') break;
    s++;
  }
  if (*s == '\r') s++;
  if (*s == '\n') s++;
  *p = s;
  return NULL;
}

static cJSON *value_of(const char *s) {
  if (!*s) return cJSON_CreateNull();
  char *e;
  double v = strtod(s, &e);
  if (!isspace((unsigned char)s[0]) && *e == '\0' && isfinite(v)) return cJSON_CreateNumber(v);
  return cJSON_CreateString(s);
}

/* Checks that the header h holds every required column. */
static ct_status check_header(const record *h, const char *name, const char *const *required, ct_diag *d) {
  for (int j = 0; required && required[j]; j++) {
    int i = 0;
    while (i < h->n && strcmp(h->f[i], required[j])) i++;
    if (i == h->n) return ct_diag_set(d, CT_ERR_INPUT, "%s:1: no column \"%s\"", name, required[j]);
  }
  return CT_OK;
}

/* The object of record r under header h; checks the required columns hold numbers. */
static ct_status row_object(const record *h, const record *r, const char *name, int line, const char *const *required,
                            cJSON *rows, ct_diag *d) {
  if (r->n != h->n)
    return ct_diag_set(d, CT_ERR_INPUT, "%s:%d: %d fields, the header has %d", name, line, r->n, h->n);
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(rows, o)) return cJSON_Delete(o), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int i = 0; i < h->n; i++) {
    cJSON *v = value_of(r->f[i]);
    if (!v || !cJSON_AddItemToObject(o, h->f[i], v)) return cJSON_Delete(v), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    for (int j = 0; required && required[j]; j++)
      if (!strcmp(h->f[i], required[j]) && !cJSON_IsNumber(v))
        return ct_diag_set(d, CT_ERR_INPUT, "%s:%d: column \"%s\" is \"%s\", not a number", name, line, h->f[i], r->f[i]);
  }
  return CT_OK;
}

ct_status ct_html_csv(const char *text, const char *name, const char *const *required, cJSON **rows, ct_diag *d) {
  record h = {0}, r = {0};
  char *buf = malloc(strlen(text) + 1);
  *rows = cJSON_CreateArray();
  ct_status st = buf && *rows ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  const char *p = text, *err = NULL;
  int line = 1, at;
  if (!st && (err = read_record(&p, &h, buf, &line))) st = ct_diag_set(d, CT_ERR_INPUT, "%s:1: %s", name, err);
  if (!st) st = check_header(&h, name, required, d);
  while (!st && *p) {
    at = ++line;
    if ((err = read_record(&p, &r, buf, &line))) {
      st = ct_diag_set(d, CT_ERR_INPUT, "%s:%d: %s", name, at, err);
    } else if (!(r.n == 1 && !r.f[0][0])) {
      st = row_object(&h, &r, name, at, required, *rows, d);
    }
  }
  record_clear(&h), record_clear(&r);
  free(h.f), free(r.f), free(buf);
  if (st) cJSON_Delete(*rows), *rows = NULL;
  return st;
}

/* Splits line (modified) into at most max whitespace-separated words; returns their count. */
static int words(char *line, char **w, int max) {
  int n = 0;
  for (char *s = line; *s && n < max;) {
    while (*s == ' ' || *s == '\t' || *s == '\r') *s++ = '\0';
    if (!*s) break;
    w[n++] = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\r') s++;
  }
  return n;
}

static bool is_verdict(const char *s) {
  return !strcmp(s, "equal") || !strcmp(s, "close") || !strcmp(s, "similar") || !strcmp(s, "different");
}

/* Adds the row of words w (verdict at v) to rows. */
static ct_status compare_row(char **w, int v, const char *name, int line, cJSON *rows, ct_diag *d) {
  static const char *const keys[4] = {"cosine", "euclid", "sqnr_db", "max_diff"};
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(rows, o) || !cJSON_AddStringToObject(o, "name", w[0]) ||
      !cJSON_AddStringToObject(o, "verdict", w[v]))
    return cJSON_Delete(o), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int k = 0; k < 4; k++) {
    char *e;
    double x = strtod(w[v + 1 + k], &e);
    if (*e || isnan(x))
      return ct_diag_set(d, CT_ERR_INPUT, "%s:%d: %s \"%s\" is not a number", name, line, keys[k], w[v + 1 + k]);
    if (!(isfinite(x) ? cJSON_AddNumberToObject(o, keys[k], x) : cJSON_AddNullToObject(o, keys[k])))
      return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  return CT_OK;
}

ct_status ct_html_compare_table(const char *text, const char *name, cJSON **rows, ct_diag *d) {
  *rows = NULL;
  size_t n = strlen(text);
  char *buf = malloc(n + 1), *w[16];
  if (!buf) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  ct_status st = CT_OK;
  int line = 0;
  for (const char *p = text; !st && *p; line++) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    memcpy(buf, p, len), buf[len] = '\0';
    p += len + (e != NULL);
    int nw = words(buf, w, 16);
    if (!*rows) {
      if (nw >= 4 && !strcmp(w[0], "name") && !strcmp(w[1], "shape") && !strcmp(w[2], "verdict") &&
          !strcmp(w[3], "cosine") && !(*rows = cJSON_CreateArray()))
        st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
      continue;
    }
    for (int v = 1; v + 4 < nw; v++)
      if (is_verdict(w[v])) {
        st = compare_row(w, v, name, line + 1, *rows, d);
        break;
      }
  }
  free(buf);
  if (st) cJSON_Delete(*rows), *rows = NULL;
  return st;
}
