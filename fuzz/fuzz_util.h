/* fuzz_util.h: helpers shared by the libFuzzer harnesses (fuzz/README.md): a per-process
 * scratch file for parsers that take a path. */
#ifndef CT_FUZZ_UTIL_H
#define CT_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Once per process: a memory budget of 256 MiB (common/limits.h), below libFuzzer's
 * -malloc_limit_mb, so a file asking for a huge tensor is the clean exit-4 error it is in
 * ctpu, not a fuzzer "crash". */
void ct_fuzz_init(void);
/* Writes data to this process's scratch file whose name ends in suffix (".onnx", ".h5", ...)
 * and returns its path (static storage), or NULL if it cannot be written. */
const char *ct_fuzz_file(const uint8_t *data, size_t n, const char *suffix);
/* data as a NUL-terminated string (malloc'd; free()); NULL when out of memory. */
char *ct_fuzz_str(const uint8_t *data, size_t n);

#endif
