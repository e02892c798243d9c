/* main.c: the `ctpu` command: dispatches to one subcommand per tools/cmd_*.c (commands.def). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/limits.h"
#include "io/compare.h"
#include "tools/tools.h"

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} commands[] = {
#define C(name, fn, summary) {#name, fn, summary},
#include "tools/commands.def"
#undef C
};

int ct_tool_fail(const char *cmd, const ct_diag *d) {
  fprintf(stderr, "ctpu %s: %s\n", cmd, d->msg[0] ? d->msg : ct_status_name(d->code));
  return d->code ? (int)d->code : 1;
}

int ct_tool_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ctpu %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "; see ctpu %s --help\n", cmd);
  va_end(ap);
  return CT_ERR_USAGE;
}

int ct_tool_arg(const char *cmd, int argc, char **argv, int *i, void (*usage)(FILE *), const char **pos,
                const char **opt, const char **val) {
  const char *s = argv[*i];
  *opt = *val = NULL;
  if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
  if (s[0] != '-') {
    if (*pos) return ct_tool_usage(cmd, "unexpected argument \"%s\"", s);
    *pos = s;
    return 0;
  }
  if (*i + 1 >= argc) return ct_tool_usage(cmd, "option \"%s\" needs a value", s);
  *opt = s, *val = argv[++*i];
  return 0;
}

bool ct_tool_parse_tol(const char *s, struct ct_compare_tol *tol) {
  char *end;
  double c = strtod(s, &end);
  if (end == s || *end != ',') return false;
  const char *e2 = end + 1;
  double e = strtod(e2, &end);
  if (end == e2 || *end) return false;
  if (!(c >= -1 && c <= 1) || !(e <= 1)) return false;
  tol->cos = c;
  tol->euc = e;
  return true;
}

int ct_tool_int_opt(const char *cmd, const char *opt, const char *v, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (*v && !*end && !errno && x >= lo && x <= hi) return *out = x, 0;
  if (hi == LLONG_MAX) return ct_tool_usage(cmd, "%s needs a number >= %lld, not \"%s\"", opt, lo, v);
  return ct_tool_usage(cmd, "%s needs a number in %lld..%lld, not \"%s\"", opt, lo, hi, v);
}

int ct_tool_files(const char *cmd, int argc, char **argv, int *i, const char **files, int *n, int max) {
  const char *opt = argv[*i];
  int k = 0;
  for (; *i + 1 < argc && argv[*i + 1][0] != '-'; k++) {
    if (*n == max) return ct_tool_usage(cmd, "more than %d input files", max);
    files[(*n)++] = argv[++*i];
  }
  return k ? 0 : ct_tool_usage(cmd, "%s needs at least one file", opt);
}

int ct_tool_in_out_chip(const char *cmd, int argc, char **argv, void (*usage)(FILE *), const char **in,
                        const char **out, const char **chip) {
  *in = *out = *chip = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "-o") && i + 1 < argc) *out = argv[++i];
    else if (!strcmp(argv[i], "--chip") && i + 1 < argc) *chip = argv[++i];
    else if (argv[i][0] == '-') return ct_tool_usage(cmd, "unknown or incomplete option \"%s\"", argv[i]);
    else if (*in) return ct_tool_usage(cmd, "more than one input file");
    else *in = argv[i];
  }
  return -1;
}

bool ct_tool_isatty(void) { return isatty(STDERR_FILENO) != 0; }

int ct_cmd_version(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("ctpu %s\n", CT_VERSION);
  return 0;
}

static void usage(FILE *f) {
  fprintf(f, "usage: ctpu <command> [options]   (ctpu <command> --help for its options)\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

/* Commands that allocate tensors take `--max-memory BYTES[K|M|G]` (common/limits.h). */
static bool takes_max_memory(const char *cmd) {
  static const char *const cmds[] = {"transform", "opt", "infer", "compare", "sim", "asm"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (!strcmp(cmd, cmds[i])) return true;
  return false;
}

/* Takes `--max-memory V` out of argv (the subcommand's arguments) and sets the budget.
 * Returns 0, or 2 after a usage error. */
static int strip_max_memory(const char *cmd, int *argc, char **argv) {
  int k = 0;
  for (int i = 0; i < *argc; i++) {
    if (strcmp(argv[i], "--max-memory") != 0) {
      argv[k++] = argv[i];
      continue;
    }
    uint64_t b;
    if (i + 1 >= *argc || !ct_parse_bytes(argv[i + 1], &b))
      return ct_tool_usage(cmd, "--max-memory needs BYTES[K|M|G] (e.g. 512M), not \"%s\"", i + 1 < *argc ? argv[i + 1] : "");
    ct_mem_budget_set(b);
    i++;
  }
  *argc = k;
  argv[k] = NULL;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CT_ERR_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) {
      int n = argc - 1, rc = takes_max_memory(argv[1]) ? strip_max_memory(argv[1], &n, argv + 1) : 0;
      return rc ? rc : commands[i].fn(n, argv + 1);
    }
  fprintf(stderr, "ctpu: unknown command \"%s\"\n", argv[1]);
  usage(stderr);
  return CT_ERR_USAGE;
}
