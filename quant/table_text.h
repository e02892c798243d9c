/* table_text.h: helpers shared by the line-oriented text tables (calibration table,
 * quantize table): whole-file reading, whitespace field splitting, exact short number
 * formatting, and atomic writing (temporary name, then rename; docs/style.md "Errors"). */
#ifndef CT_TABLE_TEXT_H
#define CT_TABLE_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"

/* Reads the file at path into *text (malloc'd, NUL-terminated; caller frees). Errors:
 * CT_ERR_INPUT "PATH: cannot open: REASON" / "PATH: read error"; CT_ERR_LIMIT out of memory. */
ct_status ct_table_read_file(const char *path, char **text, ct_diag *d);

/* Cuts the next line out of *cursor (in place: the newline, and a '\r' before it, become
 * NUL) and advances *cursor past it; returns NULL at the end of the text. */
char *ct_table_next_line(char **cursor);

/* Splits line in place into whitespace-separated fields (space, tab); stores at most max
 * pointers in f and returns the number of fields found (which may exceed max). With f NULL
 * it only counts, leaving line untouched. */
int ct_table_split(char *line, char **f, int max);

/* True if line (after leading blanks) starts with '#'; *body gets the text from the '#'. */
bool ct_table_is_comment(const char *line, const char **body);
/* True if line holds only blanks. */
bool ct_table_is_blank(const char *line);

/* True if name can be a table field: non-empty, no blank, tab, CR or LF, not starting
 * with '#'. */
bool ct_table_name_ok(const char *name);

/* Parses a whole field as a double (strtod; "nan", "inf" accepted: callers check finiteness).
 * false if the field is not entirely a number. */
bool ct_table_number(const char *s, double *v);

/* Writes x with the fewest significant digits (≤ 17) that read back exactly, and without a
 * '+' in the exponent (1e20, not 1e+20: TPU-MLIR's table regex [-0-9.e]+). buf ≥ 32 bytes. */
void ct_table_format(double x, char *buf);

/* Atomic writing: opens PATH.tmp for writing (ct_table_open), then renames it to path
 * (ct_table_commit, which closes f; on a write error it removes the temporary instead).
 * Errors: CT_ERR_INPUT "PATH: cannot write: REASON"; CT_ERR_USAGE "PATH: path too long". */
ct_status ct_table_open(const char *path, FILE **f, ct_diag *d);
ct_status ct_table_commit(const char *path, FILE *f, ct_diag *d);

#endif
