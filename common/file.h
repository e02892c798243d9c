/* file.h: reading a whole file into memory, the one reader behind every format that is
 * parsed from a buffer (ONNX protobuf, PROGRAM.ctpu, IR text, chip JSON, tables, label lists). */
#ifndef CT_FILE_H
#define CT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* Reads the file at path into *data (malloc'd, the caller frees; NULL on error) and its size
 * into *n (n may be NULL). A NUL byte follows the last byte read, so text can be parsed in
 * place. max_bytes is the largest size accepted; 0 means the memory budget (ct_mem_budget,
 * limits.h). Regular files are sized first; pipes and devices are read to their end.
 * Errors: CT_ERR_INPUT "PATH: cannot read: REASON" (missing, unreadable, a directory, an
 * I/O error); CT_ERR_LIMIT "PATH: larger than the limit of M bytes" /
 * "PATH: out of memory". */
ct_status ct_file_read(const char *path, uint64_t max_bytes, char **data, size_t *n, ct_diag *d);

#endif
