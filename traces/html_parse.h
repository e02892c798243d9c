/* html_parse.h: the text formats `ctpu report` reads (traces/html_report.h), parsed into
 * cJSON: CSV files and the table `ctpu compare` prints. */
#ifndef CT_HTML_PARSE_H
#define CT_HTML_PARSE_H

#include <cjson/cJSON.h>

#include "common/status.h"

/* Parses CSV text (RFC 4180: ',' between fields, LF or CRLF between records, '"' quoting
 * with "" for a quote; blank lines skipped) into *rows, an array with one object per record
 * keyed by the header's field names: a field that is a whole finite number becomes a
 * number, an empty field null, any other field a string. Every column of required (a
 * NULL-terminated list, may be NULL) must be in the header and hold a number in every row.
 * name is the file, for messages. Errors: CT_ERR_INPUT "NAME:LINE: ..." (unterminated
 * quote, text after a closing quote, a record whose field count differs from the header's,
 * a required column missing or not a number); CT_ERR_LIMIT out of memory. */
ct_status ct_html_csv(const char *text, const char *name, const char *const *required, cJSON **rows, ct_diag *d);

/* Parses the table of `ctpu compare A B` (docs/cli.md): after its header row (first words
 * "name shape verdict cosine"), each row "NAME SHAPE DTYPE VERDICT COS EUC SQNR MAXDIFF ..."
 * with a verdict equal, close, similar or different becomes an object {name, verdict,
 * cosine, euclid, sqnr_db, max_diff} (an infinite SQNR, equal tensors, is null); other
 * lines are skipped. *rows is NULL when text holds no header. Errors: CT_ERR_INPUT
 * "NAME:LINE: ..." when a row's numbers do not parse; CT_ERR_LIMIT out of memory. */
ct_status ct_html_compare_table(const char *text, const char *name, cJSON **rows, ct_diag *d);

#endif
