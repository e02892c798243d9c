/* html_report.h: `ctpu report`, a self-contained HTML page of plots (docs/report.md) built
 * from the files a run or a sweep left in a folder: the summary JSON and per-layer CSV of
 * the cmodel (report.h), the groups CSV of `ctpu deploy`, a `ctpu compare` table, a sweep's
 * results CSV. The files' data go into the page as one JSON object; the page's script
 * (traces/report_page.js) draws the plots with Vega-Lite, inlined from the build. */
#ifndef CT_HTML_REPORT_H
#define CT_HTML_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"

/* The chip figures the plots need: roofs and utilization denominators. */
typedef struct ct_html_chip {
  char name[64];
  double freq_mhz;
  double mxu_rows, mxu_cols;     /* MXU shape: rows · cols int8 MACs per cycle */
  double ddr_bytes_per_cycle;    /* DDR bandwidth roof */
  double lmem_bytes;
} ct_html_chip;

/* Reads every .json, .csv and .txt file directly in dir and recognizes each by its content
 * (docs/report.md "Inputs"): a summary JSON ("total_cycles" and "engines", at the top or in
 * a member "sim"), a per-layer CSV (header "layer,group,start,end,..."), a groups CSV
 * ("group,layers,first_layer,..."), a `ctpu compare` table (a row "name shape verdict
 * cosine ..."), a sweep's results CSV (columns point and cycles or sim_cycles); other files
 * are ignored, and so are JSON files over 1 MB (traces). Sets *data (owned by the caller,
 * cJSON_Delete) to the page's data object: chip, title, files (the file name of each kind
 * found, by kind) and one member per kind found (summary, layers, groups, compare, sweep;
 * CSV rows as objects, numeric fields as numbers, empty fields as null).
 * Errors: CT_ERR_INPUT when dir cannot be read, holds none of the kinds, holds two files of
 * one kind, or a file is corrupt: JSON that does not parse, a CSV row whose field count
 * differs from its header's or with an unterminated quote, a required column that is missing
 * or not a number ("FILE:LINE: ..."); CT_ERR_LIMIT out of memory. */
ct_status ct_html_collect(const char *dir, const ct_html_chip *chip, cJSON **data, ct_diag *d);

/* True when the build embedded the plotting library (traces/report_js.h). */
bool ct_html_have_library(void);

/* Writes the page to f: the plotting library and the page script inlined, data as a JSON
 * script element ('<' escaped, so no text of the data can close it). Returns false on a
 * write error. */
bool ct_html_write(FILE *f, const cJSON *data);

#endif
