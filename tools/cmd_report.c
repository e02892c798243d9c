/* cmd_report.c: `ctpu report RUN/|RESULTS/ -o REPORT.html [--chip C.json]`: one self-contained
 * HTML page of plots (Vega-Lite, inlined) from the files of a run or a sweep (traces/html_report.h,
 * docs/report.md). */
#include <stdio.h>
#include <string.h>

#include "isa/chip.h"
#include "tools/files.h"
#include "tools/tools.h"
#include "traces/html_report.h"

#define CMD "report"

typedef struct report_args {
  const char *dir, *out, *chip;
} report_args;

static const ct_opt opts[] = {
    CT_OPT_NEED_("-o", "REPORT.html", report_args, out, "output", "the page (no network needed to view it)"),
    CT_OPT_STR_("--chip", "C.json", report_args, chip,
                "the chip the run was simulated on: MXU shape and DDR bandwidth for the roofline and utilization "
                "(default: the built-in chip)"),
};

const ct_cmd_spec ct_cmd_report_spec = CT_CMD_SPEC1(
    CMD, "RUN/|RESULTS/ -o REPORT.html [--chip C.json]",
    "writes one self-contained HTML page of plots (Vega-Lite, inlined) from the files of a run (summary JSON, "
    "per-layer CSV, groups CSV, compare table) or a sweep (results CSV) found in the folder (docs/report.md)",
    "folder", report_args, dir, opts);

static bool page_text(FILE *f, const void *data) { return ct_html_write(f, data); }

static void chip_figures(const ct_chip *c, ct_html_chip *h) {
  snprintf(h->name, sizeof h->name, "%s", c->name);
  h->freq_mhz = c->freq_mhz;
  h->mxu_rows = (double)c->mxu_rows, h->mxu_cols = (double)c->mxu_cols;
  h->ddr_bytes_per_cycle = (double)c->gmem_bytes_per_cycle;
  h->lmem_bytes = (double)c->lmem_bytes;
}

/* Names the kinds of input found in data on stderr. */
static void print_found(const report_args *a, const cJSON *data) {
  static const char *const keys[] = {"summary", "layers", "groups", "compare", "sweep"};
  fprintf(stderr, "report %s ->  %s:", a->dir, a->out);
  for (int k = 0; k < 5; k++)
    if (cJSON_GetObjectItemCaseSensitive(data, keys[k])) fprintf(stderr, " %s", keys[k]);
  fprintf(stderr, "\n");
}

/* Registers the files collected into data (its "files" member) as inputs of o and checks the
 * output against them: the page may not replace a file it shows. */
static ct_status add_inputs(ct_outset *o, const char *dir, const cJSON *data, ct_diag *d) {
  const cJSON *f;
  ct_status st = CT_OK;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(data, "files")) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, f->valuestring);
    if (!st) st = ct_outset_input(o, path, d);
  }
  return st ? st : ct_outset_check(o, d);
}

int ct_cmd_report(int argc, char **argv) {
  report_args a = {0};
  int rc = ct_opts_parse(&ct_cmd_report_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_chip chip;
  ct_html_chip hc;
  cJSON *data = NULL;
  ct_outset o;
  const char *tmp;
  ct_outset_init(&o, CMD);
  ct_status st = ct_outset_input(&o, a.chip, &d);
  if (!st) st = ct_outset_add(&o, a.out, &tmp, &d);
  if (!st) st = ct_chip_load(a.chip, &chip, &d);
  if (!st) chip_figures(&chip, &hc), st = ct_html_collect(a.dir, &hc, &data, &d);
  if (!st) st = add_inputs(&o, a.dir, data, &d);
  if (!st && !ct_html_have_library())
    st = ct_diag_set(&d, CT_ERR_INPUT, "this ctpu was built without the plotting library (Vega-Lite): run "
                                       "scripts/deps.sh, then re-run cmake and rebuild");
  if (!st) st = ct_tool_write_text(tmp, a.out, page_text, data, &d);
  st = ct_outset_end(&o, st, &d);
  if (!st) print_found(&a, data);
  cJSON_Delete(data);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
