/* table_text.c: line-oriented text table helpers (see table_text.h): splitting and exact
 * number formatting for the calibration and quantize tables. */
#include "quant/table_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *ct_table_next_line(char **cursor) {
  char *s = *cursor;
  if (!s || !*s) return NULL;
  char *e = strchr(s, '\n');
  if (e) {
    *e = '\0';
    *cursor = e + 1;
  } else {
    *cursor = s + strlen(s);
  }
  size_t len = strlen(s);
  if (len && s[len - 1] == '\r') s[len - 1] = '\0';
  return s;
}

static bool blank(char c) { return c == ' ' || c == '\t'; }

int ct_table_split(char *line, char **f, int max) {
  int n = 0;
  char *p = line;
  while (*p) {
    while (blank(*p)) {
      if (f) *p = '\0';
      p++;
    }
    if (!*p) break;
    if (n < max) f[n] = p;
    n++;
    while (*p && !blank(*p)) p++;
  }
  return n;
}

bool ct_table_is_comment(const char *line, const char **body) {
  while (blank(*line)) line++;
  if (*line != '#') return false;
  if (body) *body = line;
  return true;
}

bool ct_table_is_blank(const char *line) {
  while (blank(*line)) line++;
  return *line == '\0';
}

bool ct_table_name_ok(const char *name) {
  return name[0] && name[0] != '#' && !strpbrk(name, " \t\r\n");
}

bool ct_table_number(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return end != s && *end == '\0';
}

void ct_table_format(double x, char *buf) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) break;
  }
  char *plus = strchr(buf, '+');
  if (plus) memmove(plus, plus + 1, strlen(plus));
}

