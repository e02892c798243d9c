/* fuzz_util.c: scratch files and strings for the harnesses (see fuzz_util.h). */
#include "fuzz/fuzz_util.h"

#include "common/limits.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ct_fuzz_init(void) {
  static bool done;
  if (!done) ct_mem_budget_set((uint64_t)256 << 20);
  done = true;
}

const char *ct_fuzz_file(const uint8_t *data, size_t n, const char *suffix) {
  static char path[256];
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(path, sizeof path, "%s/ctpu-fuzz-%ld%s", dir, (long)getpid(), suffix);
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  bool ok = fwrite(data, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  return ok ? path : NULL;
}

char *ct_fuzz_str(const uint8_t *data, size_t n) {
  char *s = malloc(n + 1);
  if (s) memcpy(s, data, n), s[n] = '\0';
  return s;
}
