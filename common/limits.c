/* limits.c: overflow-checked size arithmetic and the memory budget (see limits.h). The
 * checks are the portable C11 forms (divide before multiplying), as CERT INT30-C/INT32-C. */
#include "common/limits.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

bool ct_mul_i64(int64_t a, int64_t b, int64_t *r) {
  if (a < 0 || b < 0) return false;
  if (a != 0 && b > INT64_MAX / a) return false;
  *r = a * b;
  return true;
}

bool ct_add_i64(int64_t a, int64_t b, int64_t *r) {
  if (a < 0 || b < 0 || a > INT64_MAX - b) return false;
  *r = a + b;
  return true;
}

bool ct_mul_size(size_t a, size_t b, size_t *r) {
  if (a != 0 && b > SIZE_MAX / a) return false;
  *r = a * b;
  return true;
}

bool ct_add_size(size_t a, size_t b, size_t *r) {
  if (a > SIZE_MAX - b) return false;
  *r = a + b;
  return true;
}

bool ct_kernel_extent(int64_t k, int64_t dilation, int64_t *r) {
  int64_t e;
  if (k < 1 || dilation < 1 || !ct_mul_i64(k - 1, dilation, &e) || !ct_add_i64(e, 1, &e)) return false;
  *r = e;
  return true;
}

bool ct_shape_bytes(ct_dtype dt, int ndim, const int64_t *shape, int64_t *bytes) {
  if (ndim < 0 || ndim > CT_MAX_DIMS || dt >= CT_DTYPE_COUNT) return false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return false;
    if (shape[i] == 0) return (*bytes = 0), true;
  }
  int64_t n = (int64_t)ct_dtype_size(dt);
  for (int i = 0; i < ndim; i++)
    if (!ct_mul_i64(n, shape[i], &n)) return false;
  *bytes = n;
  return true;
}

static uint64_t budget_bytes; /* 0 = not set yet: the default is computed on first use */

static uint64_t default_budget(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)8 << 30;
  uint64_t b = phys / 2;
  return b < ((uint64_t)64 << 20) ? (uint64_t)64 << 20 : b;
}

uint64_t ct_mem_budget(void) {
  if (!budget_bytes) budget_bytes = default_budget();
  return budget_bytes;
}

void ct_mem_budget_set(uint64_t bytes) { budget_bytes = bytes; }

char *ct_bytes_str(uint64_t bytes, char *buf, size_t n) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, u++;
  if (u == 0) snprintf(buf, n, "%" PRIu64 " B", bytes);
  else snprintf(buf, n, v == (double)(uint64_t)v ? "%.0f %s" : "%.1f %s", v, unit[u]);
  return buf;
}

ct_status ct_mem_budget_check(ct_dtype dt, int ndim, const int64_t *shape, const char *what, ct_diag *d) {
  int64_t bytes;
  char sh[128], hb[32], bb[32];
  bool ok = ct_shape_bytes(dt, ndim, shape, &bytes);
  ct_shape_str(ndim < 0 || ndim > CT_MAX_DIMS ? 0 : ndim, shape, sh, sizeof sh);
  ct_bytes_str(ct_mem_budget(), bb, sizeof bb);
  if (!ok)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: %s %s: size overflows 64 bits, over the memory budget of %s (--max-memory)",
                       what, sh, ct_dtype_name(dt), bb);
  if ((uint64_t)bytes > ct_mem_budget())
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: %s %s needs %s, over the memory budget of %s (--max-memory)", what, sh,
                       ct_dtype_name(dt), ct_bytes_str((uint64_t)bytes, hb, sizeof hb), bb);
  return CT_OK;
}

bool ct_parse_bytes(const char *s, uint64_t *out) {
  char *end;
  if (!s || *s < '0' || *s > '9') return false;
  unsigned long long v = strtoull(s, &end, 10);
  int shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
  }
  if (shift && (*end == 'i' || *end == 'I')) end++;
  if (*end == 'b' || *end == 'B') end++;
  if (*end || v == 0 || v > (UINT64_MAX >> shift)) return false;
  *out = (uint64_t)v << shift;
  return true;
}

ct_status ct_tensor_alloc(ct_tensor **out, ct_dtype dt, int ndim, const int64_t *shape, const char *name,
                          const char *what, ct_diag *d) {
  char buf[300];
  if (!what) {
    snprintf(buf, sizeof buf, "tensor \"%.256s\"", name ? name : "?");
    what = buf;
  }
  *out = NULL;
  ct_status st = ct_mem_budget_check(dt, ndim, shape, what, d);
  if (st) return st;
  if (ndim < 0 || ndim > CT_MAX_DIMS) return ct_diag_set(d, CT_ERR_INPUT, "%s: rank %d exceeds %d", what, ndim, CT_MAX_DIMS);
  if (!(*out = ct_tensor_new(dt, ndim, shape, name))) {
    char sh[128];
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory allocating %s %s", what,
                       ct_shape_str(ndim, shape, sh, sizeof sh), ct_dtype_name(dt));
  }
  return CT_OK;
}
