/* report_js.h: the scripts `ctpu report` inlines into its page, embedded at build time by
 * traces/embed_js.cmake: the page script (traces/report_page.js) and the plotting library
 * (Vega, Vega-Lite, vega-embed from npm, installed by scripts/deps.sh into .cache/npm). */
#ifndef CT_REPORT_JS_H
#define CT_REPORT_JS_H

/* traces/report_page.js, NUL-terminated. */
extern const char *const ct_report_js_page;
/* The library files in load order (vega, vega-lite, vega-embed), each NUL-terminated; the
 * list ends with NULL and is empty when the build did not find the library. */
extern const char *const ct_report_js_libs[];

#endif
