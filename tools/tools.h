/* tools.h: shared helpers of the ctpu subcommands (thin command-line layer). */
#ifndef CT_TOOLS_H
#define CT_TOOLS_H

#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"
#include "tools/opts.h"

#define CT_VERSION "0.1.0"

/* Each command: its function and its option table (fn##_spec, tools/opts.h). */
#define C(name, fn, summary) \
  int fn(int argc, char **argv); \
  extern const ct_cmd_spec fn##_spec;
#include "tools/commands.def"
#undef C

/* Prints "ctpu <cmd>: <message>" for d to stderr and returns d's code as exit code. */
int ct_tool_fail(const char *cmd, const ct_diag *d);
/* Parses "COS,EUC" (--tolerance of compare and deploy: cosine in [-1, 1], euclidean
 * similarity <= 1) into tol's cos / euc; false on any other text. */
struct ct_compare_tol;
bool ct_tool_parse_tol(const char *s, struct ct_compare_tol *tol);
/* A doc command (`ctpu isa-doc`, `ctpu ops-doc`, `ctpu cli-doc`): no arguments but --help/-h,
 * which prints spec's help; runs gen(stdout). Returns the exit code (2 after a usage error, 1
 * when stdout cannot be written). */
int ct_tool_doc(const ct_cmd_spec *spec, int argc, char **argv, void (*gen)(FILE *f));
/* True if stderr is a terminal (progress lines are shown only then). */
bool ct_tool_isatty(void);

#endif
