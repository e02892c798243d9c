/* qtable.h: the quantize table (mixed precision), TPU-MLIR's text layout, read and written
 * (docs/quant.md "Quantize table"): '#' comment lines and one row `op_name MODE` per op kept
 * in another precision than the --quantize default, MODE one of INT8, BF16, F16, F32. */
#ifndef CT_QTABLE_H
#define CT_QTABLE_H

#include <stdint.h>

#include "common/status.h"

/* Precision of one op (the --quantize modes of `ctpu lower`). ORDER: ct_qmode_name. */
typedef enum ct_qmode { CT_QMODE_INT8, CT_QMODE_BF16, CT_QMODE_F16, CT_QMODE_F32, CT_QMODE_COUNT } ct_qmode;

/* "INT8", "BF16", "F16", "F32"; NULL if out of range. */
const char *ct_qmode_name(ct_qmode m);
/* Mode of a name, case-insensitive ("bf16" = "BF16"); CT_QMODE_COUNT if unknown. */
ct_qmode ct_qmode_from_name(const char *s);

/* One row; line is its 1-based line in the file read (0 if added by code). */
typedef struct ct_qtable_row {
  char *name;
  ct_qmode mode;
  int line;
} ct_qtable_row;

/* Rows in file order. Zero-initialize or ct_qtable_init; ct_qtable_free releases. */
typedef struct ct_qtable {
  ct_qtable_row *rows;
  int64_t n, cap;
} ct_qtable;

void ct_qtable_init(ct_qtable *t);
void ct_qtable_free(ct_qtable *t);
/* Appends a row (name copied). Errors (CT_ERR_INPUT, no file prefix): `duplicate name "x"
 * (first on line 3)`, `name "a b" is empty, has a blank or starts with '#'`, `unknown mode
 * 7`; CT_ERR_LIMIT out of memory. */
ct_status ct_qtable_add(ct_qtable *t, const char *name, ct_qmode mode, int line, ct_diag *d);
/* The row named name, NULL if absent. */
const ct_qtable_row *ct_qtable_find(const ct_qtable *t, const char *name);

/* Parses text (modified in place), named file in messages. Blank and '#' lines are skipped.
 * Errors, CT_ERR_INPUT "FILE:LINE: ...": `expected 2 fields, got 3`, `unknown mode "INT4"
 * (INT8, BF16, F16 or F32)`, and those of ct_qtable_add. */
ct_status ct_qtable_parse(char *text, const char *file, ct_qtable *t, ct_diag *d);
/* Reads and parses the file at path. Errors: those of ct_qtable_parse, CT_ERR_INPUT if the
 * file cannot be read. */
ct_status ct_qtable_read(const char *path, ct_qtable *t, ct_diag *d);
/* Writes t atomically: "# ctpu quantize table", "# op_name quantize_mode", the rows with
 * upper-case modes. Errors: CT_ERR_INPUT if it cannot write. */
ct_status ct_qtable_write(const char *path, const ct_qtable *t, ct_diag *d);

#endif
