/* text_lex.c: character-level scanner of the text IR parser (see text_lex.h): whitespace,
 * comments, punctuation, identifiers, escaped strings, numbers, %N references. Positions in
 * messages are 1-based line and byte column, as compilers (gcc, MLIR) print them. */
#include "ir/text_lex.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CT_LEX_MAX_REF 16777215

void ct_lex_init(ct_lex *lx, const char *text, size_t len, const char *file, ct_diag *d) {
  memset(lx, 0, sizeof *lx);
  lx->src = lx->p = text;
  lx->end = text + len;
  lx->file = file ? file : "<input>";
  lx->d = d;
}

void ct_lex_free(ct_lex *lx) {
  free(lx->buf);
  lx->buf = NULL;
}

ct_status ct_lex_error(ct_lex *lx, const char *at, const char *fmt, ...) {
  int line = 1, col = 1;
  if (at > lx->end) at = lx->end;
  for (const char *q = lx->src; q < at; q++) {
    if (*q == '\n') { line++; col = 1; }
    else col++;
  }
  char msg[CT_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ct_diag_set(lx->d, CT_ERR_INPUT, "%s:%d:%d: %s", lx->file, line, col, msg);
}

ct_status ct_lex_oom(ct_lex *lx) { return ct_diag_set(lx->d, CT_ERR_LIMIT, "%s: out of memory", lx->file); }

void ct_lex_skip(ct_lex *lx) {
  const char *p = lx->p, *e = lx->end;
  for (;;) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    if (p + 1 < e && p[0] == '/' && p[1] == '/') {
      while (p < e && *p != '\n') p++;
      continue;
    }
    break;
  }
  lx->p = p;
}

bool ct_lex_peek(ct_lex *lx, const char *s) {
  ct_lex_skip(lx);
  size_t n = strlen(s);
  return (size_t)(lx->end - lx->p) >= n && memcmp(lx->p, s, n) == 0;
}

bool ct_lex_accept(ct_lex *lx, const char *s) {
  if (!ct_lex_peek(lx, s)) return false;
  lx->p += strlen(s);
  return true;
}

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '$' || c == '-';
}

static bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

bool ct_lex_accept_kw(ct_lex *lx, const char *kw) {
  if (!ct_lex_peek(lx, kw)) return false;
  const char *after = lx->p + strlen(kw);
  if (after < lx->end && ident_char(*after)) return false;
  lx->p = after;
  return true;
}

ct_status ct_lex_expect(ct_lex *lx, const char *s) {
  if (ct_lex_accept(lx, s)) return CT_OK;
  if (lx->p >= lx->end) return ct_lex_error(lx, lx->p, "expected '%s', found end of file", s);
  return ct_lex_error(lx, lx->p, "expected '%s'", s);
}

static bool buf_put(ct_lex *lx, char c) {
  if (lx->buf_len + 1 >= lx->buf_cap) {
    size_t nc = lx->buf_cap ? lx->buf_cap * 2 : 256;
    char *nb = realloc(lx->buf, nc);
    if (!nb) return false;
    lx->buf = nb;
    lx->buf_cap = nc;
  }
  lx->buf[lx->buf_len++] = c;
  lx->buf[lx->buf_len] = '\0';
  return true;
}

static bool buf_reset(ct_lex *lx) {
  lx->buf_len = 0;
  if (!lx->buf_cap) {
    if (!(lx->buf = malloc(256))) return false;
    lx->buf_cap = 256;
  }
  lx->buf[0] = '\0';
  return true;
}

ct_status ct_lex_ident(ct_lex *lx, const char *what) {
  ct_lex_skip(lx);
  if (lx->p >= lx->end || !ident_start(*lx->p)) return ct_lex_error(lx, lx->p, "expected %s", what);
  if (!buf_reset(lx)) return ct_lex_oom(lx);
  while (lx->p < lx->end && ident_char(*lx->p))
    if (!buf_put(lx, *lx->p++)) return ct_lex_oom(lx);
  return CT_OK;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One escape after the backslash at p[-1]; returns the byte or -1 (error already set). */
static int lex_escape(ct_lex *lx) {
  const char *at = lx->p - 1;
  if (lx->p >= lx->end) return ct_lex_error(lx, at, "unterminated string"), -1;
  char c = *lx->p++;
  if (c == '"' || c == '\\') return (unsigned char)c;
  if (c == 'n') return '\n';
  if (c == 't') return '\t';
  if (c == 'x' && lx->end - lx->p >= 2 && hexval(lx->p[0]) >= 0 && hexval(lx->p[1]) >= 0) {
    int v = hexval(lx->p[0]) * 16 + hexval(lx->p[1]);
    lx->p += 2;
    if (v == 0) return ct_lex_error(lx, at, "string contains a NUL byte"), -1;
    return v;
  }
  return ct_lex_error(lx, at, "bad escape '\\%c' in string", c), -1;
}

ct_status ct_lex_string(ct_lex *lx) {
  ct_lex_skip(lx);
  const char *start = lx->p;
  if (lx->p >= lx->end || *lx->p != '"') return ct_lex_error(lx, lx->p, "expected a quoted string");
  lx->p++;
  if (!buf_reset(lx)) return ct_lex_oom(lx);
  for (;;) {
    if (lx->p >= lx->end || *lx->p == '\n') return ct_lex_error(lx, start, "unterminated string");
    char c = *lx->p++;
    if (c == '"') return CT_OK;
    int b = (unsigned char)c;
    if (c == '\\' && (b = lex_escape(lx)) < 0) return CT_ERR_INPUT;
    if (b == 0) return ct_lex_error(lx, lx->p - 1, "string contains a NUL byte");
    if (!buf_put(lx, (char)b)) return ct_lex_oom(lx);
  }
}

ct_status ct_lex_name(ct_lex *lx, const char *what) {
  ct_lex_skip(lx);
  if (lx->p < lx->end && *lx->p == '"') return ct_lex_string(lx);
  return ct_lex_ident(lx, what);
}

bool ct_lex_at_number(ct_lex *lx) {
  ct_lex_skip(lx);
  if (lx->p >= lx->end) return false;
  char c = *lx->p;
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || ct_lex_peek(lx, "inf") || ct_lex_peek(lx, "nan");
}

static const char *scan_digits(const char *q, const char *e) {
  while (q < e && *q >= '0' && *q <= '9') q++;
  return q;
}

ct_status ct_lex_number(ct_lex *lx, ct_lex_num *out) {
  ct_lex_skip(lx);
  const char *s = lx->p, *e = lx->end, *q = s;
  if (q < e && (*q == '-' || *q == '+')) q++;
  bool isf = false;
  if (e - q >= 3 && (!memcmp(q, "inf", 3) || !memcmp(q, "nan", 3))) {
    q += 3;
    isf = true;
  } else {
    const char *m = q;
    q = scan_digits(q, e);
    if (q < e && *q == '.') { isf = true; q = scan_digits(q + 1, e); }
    if (q == m || (q == m + 1 && *m == '.')) return ct_lex_error(lx, s, "expected a number");
    if (q < e && (*q == 'e' || *q == 'E')) {
      const char *x = q + 1;
      if (x < e && (*x == '-' || *x == '+')) x++;
      const char *y = scan_digits(x, e);
      if (y == x) return ct_lex_error(lx, s, "malformed number exponent");
      q = y;
      isf = true;
    }
  }
  if (q < e && ident_char(*q) && *q != '-' && *q != '.') return ct_lex_error(lx, s, "malformed number");
  char tok[64];
  if ((size_t)(q - s) >= sizeof tok) return ct_lex_error(lx, s, "number too long");
  memcpy(tok, s, (size_t)(q - s));
  tok[q - s] = '\0';
  errno = 0;
  out->is_float = isf;
  if (isf) out->f = strtod(tok, NULL);
  else out->i = strtoll(tok, NULL, 10);
  if (!isf && errno == ERANGE) return ct_lex_error(lx, s, "integer %s out of range", tok);
  lx->p = q;
  return CT_OK;
}

ct_status ct_lex_ref(ct_lex *lx, int *id) {
  ct_lex_skip(lx);
  const char *s = lx->p;
  if (lx->p >= lx->end || *lx->p != '%') return ct_lex_error(lx, s, "expected a value (%%N or %%none)");
  lx->p++;
  if (lx->end - lx->p >= 4 && !memcmp(lx->p, "none", 4) && !(lx->p + 4 < lx->end && ident_char(lx->p[4]))) {
    lx->p += 4;
    *id = -1;
    return CT_OK;
  }
  const char *q = scan_digits(lx->p, lx->end);
  if (q == lx->p || (q < lx->end && ident_char(*q))) return ct_lex_error(lx, s, "malformed value name (expected %%N)");
  long long n = 0;
  for (const char *c = lx->p; c < q; c++) {
    n = n * 10 + (*c - '0');
    if (n > CT_LEX_MAX_REF) return ct_lex_error(lx, s, "value number too large (limit %d)", CT_LEX_MAX_REF);
  }
  lx->p = q;
  *id = (int)n;
  return CT_OK;
}
