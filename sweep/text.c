/* text.c: the sweep's growing text buffer (text.h). */
#include "sweep/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(ct_sweep_text *t, size_t more) {
  if (t->oom) return false;
  if (t->n + more + 1 <= t->cap) return true;
  size_t cap = t->cap ? t->cap : 256;
  while (cap < t->n + more + 1) cap *= 2;
  char *p = realloc(t->p, cap);
  if (!p) return !(t->oom = true);
  t->p = p, t->cap = cap;
  return true;
}

void ct_sweep_text_printf(ct_sweep_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !reserve(t, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(t->p + t->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->n += (size_t)n;
}

void ct_sweep_text_shq(ct_sweep_text *t, const char *s) {
  ct_sweep_text_printf(t, "'");
  for (const char *q; (q = strchr(s, '\'')) != NULL; s = q + 1) ct_sweep_text_printf(t, "%.*s'\\''", (int)(q - s), s);
  ct_sweep_text_printf(t, "%s'", s);
}

void ct_sweep_text_csv(ct_sweep_text *t, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    ct_sweep_text_printf(t, "%s", s);
    return;
  }
  ct_sweep_text_printf(t, "\"");
  for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) ct_sweep_text_printf(t, "%.*s\"\"", (int)(q - s), s);
  ct_sweep_text_printf(t, "%s\"", s);
}

void ct_sweep_text_free(ct_sweep_text *t) {
  free(t->p);
  *t = (ct_sweep_text){0};
}
