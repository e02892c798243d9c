/* file.c: whole-file reading (see file.h). */
#include "common/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/limits.h"

static ct_status too_big(const char *path, uint64_t max_bytes, ct_diag *d) {
  return ct_diag_set(d, CT_ERR_LIMIT, "%s: larger than the limit of %llu bytes", path, (unsigned long long)max_bytes);
}

/* Reads f to its end into *buf (capacity *cap, grown by doubling), NUL-terminated. */
static ct_status read_all(FILE *f, const char *path, uint64_t max_bytes, char **buf, size_t *cap, size_t *n,
                          ct_diag *d) {
  for (;;) {
    if (*n + 1 >= *cap) {
      if (*n > max_bytes) return too_big(path, max_bytes, d);
      size_t want = *cap * 2;
      if (want > max_bytes + 2) want = (size_t)max_bytes + 2;
      char *nb = realloc(*buf, want);
      if (!nb) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
      *buf = nb, *cap = want;
    }
    size_t r = fread(*buf + *n, 1, *cap - *n - 1, f);
    *n += r;
    if (r == 0) break;
  }
  if (ferror(f)) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
  (*buf)[*n] = '\0';
  return CT_OK;
}

ct_status ct_file_read(const char *path, uint64_t max_bytes, char **data, size_t *n, ct_diag *d) {
  *data = NULL;
  if (n) *n = 0;
  if (max_bytes == 0) max_bytes = ct_mem_budget();
  if (max_bytes > SIZE_MAX - 2) max_bytes = SIZE_MAX - 2;
  FILE *f = fopen(path, "rb");
  if (!f) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
  struct stat sb;
  size_t cap = 4096, len = 0;
  ct_status st = CT_OK;
  bool known = fstat(fileno(f), &sb) == 0;
  if (known && S_ISDIR(sb.st_mode)) st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot read: %s", path, strerror(EISDIR));
  else if (known && S_ISREG(sb.st_mode) && sb.st_size >= 0) {
    if ((uint64_t)sb.st_size > max_bytes) st = too_big(path, max_bytes, d);
    else cap = (size_t)sb.st_size + 2; /* the file, its NUL, and room to see the end */
  }
  char *buf = st ? NULL : malloc(cap);
  if (!st && !buf) st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  errno = 0;
  if (!st) st = read_all(f, path, max_bytes, &buf, &cap, &len, d);
  fclose(f);
  if (st) {
    free(buf);
    return st;
  }
  *data = buf;
  if (n) *n = len;
  return CT_OK;
}
