/* limits.h: sizes that come from files, checked once: overflow-safe arithmetic on element
 * counts, bytes, strides and kernel extents, and the process memory budget every tensor
 * allocation is checked against before it is attempted (docs/limits.md). */
#ifndef CT_LIMITS_H
#define CT_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"

/* *r = a * b for non-negative a, b (element counts, extents, strides). false (r untouched)
 * when a or b is negative or the product exceeds INT64_MAX. */
bool ct_mul_i64(int64_t a, int64_t b, int64_t *r);
/* *r = a + b for non-negative a, b; false when negative or above INT64_MAX. */
bool ct_add_i64(int64_t a, int64_t b, int64_t *r);
/* *r = a * b in size_t (bytes); false on wrap-around. */
bool ct_mul_size(size_t a, size_t b, size_t *r);
/* *r = a + b in size_t (bytes); false on wrap-around. */
bool ct_add_size(size_t a, size_t b, size_t *r);
/* Dilated kernel extent (k - 1) * dilation + 1 (ONNX Conv/Pool "effective kernel"); false when
 * k < 1, dilation < 1 or the extent exceeds INT64_MAX. */
bool ct_kernel_extent(int64_t k, int64_t dilation, int64_t *r);
/* Bytes of a dense tensor of dtype dt and the given shape; false when ndim is outside
 * 0..CT_MAX_DIMS, a dim is negative or the count/bytes overflow int64. A zero dim gives 0
 * bytes whatever the other dims are (no stride product is formed). */
bool ct_shape_bytes(ct_dtype dt, int ndim, const int64_t *shape, int64_t *bytes);

/* The memory budget (bytes): the largest single tensor ctpu will allocate. Default: half the
 * physical memory (sysconf), at least 64 MiB; set by `--max-memory` (ct_mem_budget_set). It is
 * the one process-wide setting, written once by the command line before any work starts. */
uint64_t ct_mem_budget(void);
void ct_mem_budget_set(uint64_t bytes);
/* CT_OK when a tensor of `bytes` fits the budget; else CT_ERR_LIMIT with
 * "<what>: <shape> <dtype> needs <N> bytes (<human>), over the memory budget of <B> (--max-memory)".
 * what names the tensor (e.g. `model.onnx: node "cos0": output "y"`). */
ct_status ct_mem_budget_check(ct_dtype dt, int ndim, const int64_t *shape, const char *what, ct_diag *d);
/* ct_tensor_new with a reason: checks the shape and the budget first (CT_ERR_LIMIT naming
 * `what` or, when what is NULL, the tensor name, with its shape and size, before anything is
 * allocated), then allocates (CT_ERR_LIMIT "out of memory" when calloc fails). */
ct_status ct_tensor_alloc(ct_tensor **out, ct_dtype dt, int ndim, const int64_t *shape, const char *name,
                          const char *what, ct_diag *d);
/* Parses "BYTES[K|M|G|T]" (binary multiples, case-insensitive, optional trailing "B" or "iB"):
 * "512M" → 536870912. false on junk, zero or overflow. */
bool ct_parse_bytes(const char *s, uint64_t *out);
/* Formats bytes as "192 GiB" / "12.5 MiB" / "100 B" into buf (n bytes); returns buf. */
char *ct_bytes_str(uint64_t bytes, char *buf, size_t n);

#endif
