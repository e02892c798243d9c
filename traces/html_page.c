/* html_page.c: writes `ctpu report`'s page (html_report.h): the plotting library and the
 * page script inlined, the data as a JSON script element. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "traces/html_report.h"
#include "traces/report_js.h"

bool ct_html_have_library(void) { return ct_report_js_libs[0] != NULL; }

/* Writes s as the text of a script element: every "</script" (any case) becomes
 * "<\/script", which means the same inside a JavaScript string and cannot end the element. */
static void put_script(FILE *f, const char *s) {
  fputs("<script>", f);
  for (const char *p = s;;) {
    const char *q = strstr(p, "</");
    while (q && strncasecmp(q + 2, "script", 6)) q = strstr(q + 2, "</");
    if (!q) {
      fputs(p, f);
      break;
    }
    fwrite(p, 1, (size_t)(q - p), f);
    fputs("<\\/", f);
    p = q + 2;
  }
  fputs("</script>\n", f);
}

/* Writes the data JSON with every '<' as \u003c (JSON text has '<' only inside strings). */
static bool put_data(FILE *f, const cJSON *data) {
  char *s = cJSON_PrintUnformatted(data);
  if (!s) return false;
  fputs("<script id=\"ctpu-data\" type=\"application/json\">", f);
  for (const char *p = s; *p; p++) {
    if (*p == '<') fputs("\\u003c", f);
    else fputc(*p, f);
  }
  fputs("</script>\n", f);
  free(s);
  return true;
}

static const char head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ctpu report</title>\n"
    "<style>body{font:14px sans-serif;margin:16px 24px;color:#222;background:#fff}"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 2px}"
    ".note{color:#666;margin:0 0 6px}#ctpu-status{color:#666;font-size:11px}</style>\n";

bool ct_html_write(FILE *f, const cJSON *data) {
  fputs(head, f);
  for (int i = 0; ct_report_js_libs[i]; i++) put_script(f, ct_report_js_libs[i]);
  fputs("</head><body><h1 id=\"ctpu-title\">ctpu report</h1><p class=\"note\" id=\"ctpu-sub\"></p>\n"
        "<div id=\"ctpu-plots\"></div><pre id=\"ctpu-status\">loading</pre>\n", f);
  if (!put_data(f, data)) return false;
  put_script(f, ct_report_js_page);
  fputs("</body></html>\n", f);
  return !ferror(f);
}
