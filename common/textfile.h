/* textfile.h: reading a whole text file (tables, label lists, list files) into memory. */
#ifndef CT_TEXTFILE_H
#define CT_TEXTFILE_H

#include "common/status.h"

/* Reads the file at path into *text (malloc'd, NUL-terminated; the caller frees; NULL on
 * error). Errors: CT_ERR_INPUT "PATH: cannot open: REASON" / "PATH: read error"; CT_ERR_LIMIT
 * "PATH: out of memory". */
ct_status ct_text_file_read(const char *path, char **text, ct_diag *d);

#endif
