/* opts.c: the one argument parser and help printer of the ctpu commands, driven by each
 * command's option table (opts.h). */
#include "tools/opts.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"

#define HELP_COLS 100 /* help lines are wrapped to this width */
#define NAME_COLS 28  /* the option column (an option wider than this puts its help below) */

int ct_tool_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ctpu %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "; see ctpu %s --help\n", cmd);
  va_end(ap);
  return 2;
}

int ct_opt_max_memory(void *args, const char *cmd, const ct_opt *o, const char *value) {
  (void)args;
  uint64_t b;
  if (!ct_parse_bytes(value, &b)) return ct_tool_usage(cmd, "%s needs BYTES[K|M|G] (e.g. 512M), not \"%s\"", o->name, value);
  ct_mem_budget_set(b);
  return 0;
}

int ct_opt_lut_input(void *args, const char *cmd, const ct_opt *o, const char *value) {
  if (strcmp(value, "8") && strcmp(value, "16")) return ct_tool_usage(cmd, "%s %s: 8 or 16", o->name, value);
  *(bool *)(void *)((char *)args + o->off) = !strcmp(value, "16");
  return 0;
}

/* ---- help ---- */

/* Writes text from column col (the cursor is there) wrapped at HELP_COLS, continuation lines
 * indented by indent; '\n' in text starts a new line. Ends with a newline. */
static void wrap(FILE *f, const char *text, int col, int indent) {
  const char *p = text;
  bool line_start = true;
  while (*p) {
    if (*p == '\n') {
      fputc('\n', f), p++;
      if (*p && *p != '\n') fprintf(f, "%*s", indent, "");
      col = indent, line_start = true;
      continue;
    }
    if (*p == ' ') {
      p++;
      continue;
    }
    size_t w = strcspn(p, " \n");
    if (!line_start && col + 1 + (int)w > HELP_COLS) {
      fprintf(f, "\n%*s", indent, "");
      col = indent, line_start = true;
    }
    if (!line_start) fputc(' ', f), col++;
    fwrite(p, 1, w, f);
    col += (int)w, p += w, line_start = false;
  }
  fputc('\n', f);
}

static const char *value_name(const ct_opt *o) {
  if (o->type == CT_OPT_FLAG || o->type == CT_OPT_FN_FLAG) return NULL;
  return o->value ? o->value : o->choices ? o->choices : "VALUE";
}

static void help_entry(FILE *f, const char *name, const char *value, const char *help) {
  int n = fprintf(f, "  %s%s%s", name, value ? " " : "", value ? value : "");
  if (n + 1 > NAME_COLS) fprintf(f, "\n%*s", NAME_COLS, "");
  else fprintf(f, "%*s", NAME_COLS - n, "");
  wrap(f, help, NAME_COLS, NAME_COLS);
}

void ct_opts_help(const ct_cmd_spec *s, FILE *f) {
  int n = fprintf(f, "usage: ctpu %s", s->cmd);
  if (s->synopsis && *s->synopsis) fputc(' ', f), wrap(f, s->synopsis, n + 1, n + 1);
  else fputc('\n', f);
  fprintf(f, "  ");
  wrap(f, s->about, 2, 2);
  fprintf(f, "\noptions:\n");
  for (int i = 0; i < s->n_opts; i++) help_entry(f, s->opts[i].name, value_name(&s->opts[i]), s->opts[i].help);
  help_entry(f, "-h, --help", NULL, "print this help");
  if (s->more) s->more(f);
}

/* ---- markdown (docs/cli.md) ---- */

/* Writes text with '|' escaped (a table cell), or with each '\n' a paragraph break. */
static void md_text(FILE *f, const char *text, bool cell) {
  for (const char *p = text; *p; p++) {
    if (cell && *p == '|') fputs("\\|", f);
    else if (*p == '\n') fputs(cell ? " " : "\n\n", f);
    else fputc(*p, f);
  }
}

void ct_opts_markdown(const ct_cmd_spec *s, FILE *f) {
  fprintf(f, "\n## `ctpu %s`\n\n", s->cmd);
  fprintf(f, "```\nctpu %s%s%s\n```\n\n", s->cmd, s->synopsis && *s->synopsis ? " " : "", s->synopsis ? s->synopsis : "");
  fputc(toupper((unsigned char)s->about[0]), f); /* a sentence of the page */
  md_text(f, s->about + 1, false);
  fprintf(f, ".\n");
  if (s->n_opts == 0) return;
  fprintf(f, "\n| option | meaning |\n|---|---|\n");
  for (int i = 0; i < s->n_opts; i++) {
    const ct_opt *o = &s->opts[i];
    const char *v = value_name(o);
    fprintf(f, "| `%s%s", o->name, v ? " " : "");
    if (v) md_text(f, v, true);
    fprintf(f, "` | ");
    md_text(f, o->help, true);
    fprintf(f, "%s |\n", o->needed ? " (required)" : "");
  }
}

/* ---- parsing ---- */

static const ct_opt *find(const ct_cmd_spec *s, const char *arg, size_t n) {
  for (int i = 0; i < s->n_opts; i++)
    if (strlen(s->opts[i].name) == n && !strncmp(s->opts[i].name, arg, n)) return &s->opts[i];
  return NULL;
}

static int parse_ll(const char *cmd, const ct_opt *o, const char *v, long long *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (*v && !*end && !errno && x >= o->min && x <= o->max) return *out = x, 0;
  if (o->max == LLONG_MAX) return ct_tool_usage(cmd, "%s needs a number >= %lld, not \"%s\"", o->name, o->min, v);
  return ct_tool_usage(cmd, "%s needs a number in %lld..%lld, not \"%s\"", o->name, o->min, o->max, v);
}

static int parse_choice(const char *cmd, const ct_opt *o, const char *v, int *out) {
  int k = 0;
  for (const char *p = o->choices; *p; k++) {
    size_t n = strcspn(p, "|");
    if (strlen(v) == n && !strncmp(p, v, n)) return *out = k, 0;
    p += n + (p[n] == '|');
  }
  char list[256] = "";
  size_t at = 0;
  int i = 0;
  for (const char *p = o->choices; *p && at < sizeof list - 8; i++) {
    size_t n = strcspn(p, "|");
    const char *sep = i == 0 ? "" : p[n] ? ", " : " or ";
    at += (size_t)snprintf(list + at, sizeof list - at, "%s%.*s", sep, (int)n, p);
    p += n + (p[n] == '|');
  }
  return ct_tool_usage(cmd, "%s must be %s, not \"%s\"", o->name, list, v);
}

/* CT_OPT_FILES: value (from --name=value) or the arguments after argv[*i]. */
static int take_files(const char *cmd, const ct_opt *o, int argc, char **argv, int *i, const char *value, char *args) {
  const char **files = (const char **)(void *)(args + o->off);
  int *n = (int *)(void *)(args + o->off2), k = 0;
  for (;; k++) {
    const char *f = value;
    if (!f && *i + 1 < argc && argv[*i + 1][0] != '-') f = argv[++*i];
    if (!f) break;
    value = NULL;
    if (*n == o->max) return ct_tool_usage(cmd, "more than %lld files for %s", o->max, o->name);
    files[(*n)++] = f;
  }
  return k ? 0 : ct_tool_usage(cmd, "%s needs at least one file", o->name);
}

/* Applies the value v of option o to args. */
static int apply(const char *cmd, const ct_opt *o, const char *v, char *args) {
  void *at = args + o->off;
  long long x;
  int rc = 0;
  switch (o->type) {
    case CT_OPT_STR: *(const char **)at = v; return 0;
    case CT_OPT_INT:
      if (!(rc = parse_ll(cmd, o, v, &x))) *(int *)at = (int)x;
      return rc;
    case CT_OPT_LLONG: return parse_ll(cmd, o, v, (long long *)at);
    case CT_OPT_UNIT: {
      char *end;
      double d = strtod(v, &end);
      if (end == v || *end || !(d > 0 && d <= 1)) return ct_tool_usage(cmd, "%s needs a number in (0, 1], not \"%s\"", o->name, v);
      *(double *)at = d;
      return 0;
    }
    case CT_OPT_CHOICE: return parse_choice(cmd, o, v, (int *)at);
    case CT_OPT_FN: return o->fn(args, cmd, o, v);
    default: return 0;
  }
}

/* One option at argv[*i] (value: the text after '=' of --name=value, or NULL). */
static int take(const ct_cmd_spec *s, const ct_opt *o, int argc, char **argv, int *i, const char *value, char *args) {
  if (o->type == CT_OPT_FLAG || o->type == CT_OPT_FN_FLAG) {
    if (value) return ct_tool_usage(s->cmd, "%s takes no value", o->name);
    if (o->type == CT_OPT_FN_FLAG) return o->fn(args, s->cmd, o, NULL);
    *(bool *)(void *)(args + o->off) = true;
    return 0;
  }
  if (o->type == CT_OPT_FILES) return take_files(s->cmd, o, argc, argv, i, value, args);
  if (!value && *i + 1 >= argc) return ct_tool_usage(s->cmd, "%s needs a value", o->name);
  return apply(s->cmd, o, value ? value : argv[++*i], args);
}

/* The required positional and options are there. */
static int check_needed(const ct_cmd_spec *s, int npos, const char *args) {
  if (s->pos_required && npos == 0) return ct_tool_usage(s->cmd, "no %s given", s->pos_noun);
  for (int i = 0; i < s->n_opts; i++) {
    const ct_opt *o = &s->opts[i];
    if (o->needed && o->type == CT_OPT_STR && !*(const char *const *)(const void *)(args + o->off))
      return ct_tool_usage(s->cmd, "no %s given (%s %s)", o->needed, o->name, o->value);
  }
  return 0;
}

int ct_opts_parse(const ct_cmd_spec *s, int argc, char **argv, void *args) {
  char *a = args;
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) return ct_opts_help(s, stdout), -1;
    if (arg[0] != '-' || !arg[1]) {
      if (npos == s->pos_max) return ct_tool_usage(s->cmd, "unexpected argument \"%s\"", arg);
      ((const char **)(void *)(a + s->pos_off))[npos++] = arg;
      continue;
    }
    const char *eq = !strncmp(arg, "--", 2) ? strchr(arg, '=') : NULL;
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    const ct_opt *o = find(s, arg, n);
    if (!o) return ct_tool_usage(s->cmd, "unknown option \"%.*s\"", (int)n, arg);
    int rc = take(s, o, argc, argv, &i, eq ? eq + 1 : NULL, a);
    if (rc) return rc;
  }
  return check_needed(s, npos, a);
}
