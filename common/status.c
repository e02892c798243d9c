/* status.c: diagnostics (see status.h). */
#include "common/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ct_diag_clear(ct_diag *d) {
  if (!d) return;
  d->code = CT_OK;
  d->msg[0] = '\0';
}

ct_status ct_diag_set(ct_diag *d, ct_status code, const char *fmt, ...) {
  if (!d) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
  d->code = code;
  return code;
}

ct_status ct_diag_prefix(ct_diag *d, const char *fmt, ...) {
  if (!d) return CT_ERR_INTERNAL;
  char head[CT_DIAG_MAX], old[CT_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  memcpy(old, d->msg, sizeof old);
  size_t k = strlen(head);
  if (k >= sizeof d->msg) k = sizeof d->msg - 1;
  memcpy(d->msg, head, k);
  size_t rest = strlen(old);
  if (rest > sizeof d->msg - 1 - k) rest = sizeof d->msg - 1 - k;
  memcpy(d->msg + k, old, rest);
  d->msg[k + rest] = '\0';
  return d->code;
}

const char *ct_status_name(ct_status s) {
  switch (s) {
    case CT_OK: return "ok";
    case CT_ERR_CHECK: return "check failed";
    case CT_ERR_USAGE: return "bad usage";
    case CT_ERR_INPUT: return "bad input";
    case CT_ERR_LIMIT: return "limit exceeded";
    case CT_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}
