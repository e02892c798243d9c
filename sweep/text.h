/* text.h: a growing text buffer for the sweep's generated files (commands, scripts, CSV):
 * printf-style appends, sh single-quoting and RFC 4180 CSV fields. */
#ifndef CT_SWEEP_TEXT_H
#define CT_SWEEP_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

typedef struct ct_sweep_text {
  char *p;
  size_t n, cap;
  bool oom; /* an append ran out of memory: the text is incomplete */
} ct_sweep_text;

/* Appends printf(fmt, ...). */
void ct_sweep_text_printf(ct_sweep_text *t, const char *fmt, ...) CT_PRINTF(2, 3);
/* Appends s quoted for sh: 'a'\''b'. */
void ct_sweep_text_shq(ct_sweep_text *t, const char *s);
/* Appends s as a CSV field: as is, or in double quotes (quotes doubled) when it holds a comma,
 * a quote or a line break (RFC 4180). */
void ct_sweep_text_csv(ct_sweep_text *t, const char *s);
void ct_sweep_text_free(ct_sweep_text *t);

#endif
