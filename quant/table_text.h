/* table_text.h: helpers shared by the line-oriented text tables (calibration table,
 * quantize table): line cutting, whitespace field splitting, exact short number formatting
 * (reading is ct_file_read, atomic writing ct_outfile: common/). */
#ifndef CT_TABLE_TEXT_H
#define CT_TABLE_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"

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

#endif
