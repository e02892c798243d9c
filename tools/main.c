/* main.c: the `ctpu` command: dispatches to one subcommand per tools/cmd_*.c (commands.def). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  /* on a terminal a progress line may be open (\r-updated, no newline yet): clear it so the
   * message starts a line of its own */
  fprintf(stderr, "%sctpu %s: %s\n", ct_tool_isatty() ? "\r\033[K" : "", cmd, d->msg[0] ? d->msg : ct_status_name(d->code));
  return d->code ? (int)d->code : 1;
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

bool ct_tool_isatty(void) { return isatty(STDERR_FILENO) != 0; }

static const ct_cmd_spec version_spec = {.cmd = "version", .about = "prints the ctpu version (as ctpu --version, -V)"};

int ct_cmd_version(int argc, char **argv) {
  int rc = ct_opts_parse(&version_spec, argc, argv, NULL);
  if (rc) return rc < 0 ? 0 : rc;
  printf("ctpu %s\n", CT_VERSION);
  return 0;
}

static void usage(FILE *f) {
  fprintf(f, "usage: ctpu <command> [options]   (ctpu <command> --help for its options)\n"
             "       ctpu --version | -V          the version\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CT_ERR_USAGE;
  }
  const char *c = argv[1];
  if (!strcmp(c, "--help") || !strcmp(c, "-h") || (!strcmp(c, "help") && argc == 2)) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(c, "--version") || !strcmp(c, "-V")) return ct_cmd_version(1, argv + 1);
  bool help = !strcmp(c, "help"); /* ctpu help CMD = ctpu CMD --help */
  if (help) c = argv[2];
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(c, commands[i].name)) {
      static char help_opt[] = "--help";
      char *h[3] = {argv[2], help_opt, NULL};
      return help ? commands[i].fn(2, h) : commands[i].fn(argc - 1, argv + 1);
    }
  fprintf(stderr, "ctpu: unknown command \"%s\"\n", c);
  usage(stderr);
  return CT_ERR_USAGE;
}
