/* atomic.c: atomic file output for isa/ (see atomic.h): temporary name with the process
 * id, exclusive create ("wbx", C11), rename into place. */
#include "isa/atomic.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ct_status ct_isa_write_atomic(const char *path, ct_status (*write)(FILE *f, const void *ctx, ct_diag *d),
                              const void *ctx, ct_diag *d) {
  size_t n = strlen(path) + 32;
  char *tmp = malloc(n);
  if (!tmp) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wbx");
  if (!f) {
    ct_status st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot create: %s", tmp, strerror(errno));
    free(tmp);
    return st;
  }
  ct_status st = write(f, ctx, d);
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0) bad = true;
  if (!st && bad) st = ct_diag_set(d, CT_ERR_INPUT, "%s: write error", path);
  if (!st && rename(tmp, path) != 0) st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot rename into place: %s", path, strerror(errno));
  if (st) remove(tmp);
  free(tmp);
  return st;
}
