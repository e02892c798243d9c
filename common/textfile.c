/* textfile.c: whole-file text reading (see textfile.h). */
#include "common/textfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ct_status ct_text_file_read(const char *path, char **text, ct_diag *d) {
  *text = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char *nb = realloc(buf, cap * 2);
    if (!nb) free(buf);
    buf = nb;
    cap *= 2;
  }
  bool err = ferror(f);
  fclose(f);
  if (!buf) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  if (err) {
    free(buf);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: read error", path);
  }
  buf[n] = '\0';
  *text = buf;
  return CT_OK;
}
