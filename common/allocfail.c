/* allocfail.c: allocation-failure injection (SQLite's malloc-failure tests). Built with the
 * CMake option CTPU_ALLOC_FAIL (on in the sanitizer build), every executable is linked with
 * `-Wl,--wrap=malloc,calloc,realloc,strdup,strndup`, so each allocation made by ctpu's own code
 * (not by libhdf5, cJSON, protobuf-c or libc internally) comes through here:
 *   CTPU_ALLOC_FAIL=N   the N-th allocation (1-based) returns NULL; later ones succeed
 *   CTPU_ALLOC_STATS=1  at exit, prints "ctpu alloc: N allocations from K sites" to stderr
 *   CTPU_ALLOC_TRACE=1  with CTPU_ALLOC_FAIL, prints the failing allocation's call stack
 *                       (binary+offset, for addr2line) to stderr
 * Without the option this file is empty. scripts/allocfail.sh sweeps N over real commands. */
#include <stddef.h>

#ifdef CTPU_ALLOC_FAIL
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

#define SITES 65536 /* open-addressing set of call sites (return addresses); no allocation */

static long alloc_count, fail_at = -1;
static int inited, stats, trace;
static uintptr_t sites[SITES];
static long n_sites;

static void report(void) {
  fprintf(stderr, "ctpu alloc: %ld allocations from %ld sites\n", alloc_count, n_sites);
}

static void init(void) {
  inited = 1;
  const char *f = getenv("CTPU_ALLOC_FAIL"), *s = getenv("CTPU_ALLOC_STATS");
  if (f && *f) fail_at = strtol(f, NULL, 10);
  trace = getenv("CTPU_ALLOC_TRACE") != NULL;
  if (s && *s == '1') {
    stats = 1;
    atexit(report);
  }
}

static void note_site(uintptr_t a) {
  size_t h = (size_t)(a * 0x9E3779B97F4A7C15ull) % SITES;
  for (size_t i = 0; i < SITES; i++, h = (h + 1) % SITES) {
    if (sites[h] == a) return;
    if (!sites[h]) {
      sites[h] = a;
      n_sites++;
      return;
    }
  }
}

/* True if this allocation must fail. */
static int hook(void *site) {
  if (!inited) init();
  alloc_count++;
  if (stats) note_site((uintptr_t)site);
  if (alloc_count != fail_at) return 0;
  if (trace) { /* backtrace() may allocate once (libgcc loading): count stays consistent */
    void *frames[16];
    int n = backtrace(frames, 16);
    fprintf(stderr, "ctpu alloc: allocation %ld fails here:\n", alloc_count);
    backtrace_symbols_fd(frames, n, 2);
  }
  return 1;
}

void *__wrap_malloc(size_t n) { return hook(__builtin_return_address(0)) ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return hook(__builtin_return_address(0)) ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return hook(__builtin_return_address(0)) ? NULL : __real_realloc(p, n); }

char *__wrap_strdup(const char *s) {
  if (hook(__builtin_return_address(0))) return NULL;
  size_t n = strlen(s) + 1;
  char *c = __real_malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

char *__wrap_strndup(const char *s, size_t n) {
  if (hook(__builtin_return_address(0))) return NULL;
  size_t k = strnlen(s, n);
  char *c = __real_malloc(k + 1);
  if (c) memcpy(c, s, k), c[k] = '\0';
  return c;
}
#else
typedef int ct_allocfail_unused; /* ISO C: a translation unit is not empty */
#endif
