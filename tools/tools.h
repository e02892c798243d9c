/* tools.h: shared helpers of the ctpu subcommands (thin command-line layer). */
#ifndef CT_TOOLS_H
#define CT_TOOLS_H

#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"

#define CT_VERSION "0.1.0"

#define C(name, fn, summary) int fn(int argc, char **argv);
#include "tools/commands.def"
#undef C

/* Prints "ctpu <cmd>: <message>" for d to stderr and returns d's code as exit code. */
int ct_tool_fail(const char *cmd, const ct_diag *d);
/* Prints a usage error "ctpu <cmd>: <msg>; see ctpu <cmd> --help" and returns 2. */
int ct_tool_usage(const char *cmd, const char *fmt, ...) CT_PRINTF(2, 3);
/* Parses option opt's value v as a whole number in [lo, hi] into *out. Returns 0, or prints
 * "ctpu <cmd>: <opt> needs a number in lo..hi, not "v"" (">= lo" when hi is LLONG_MAX)
 * and returns 2 (bad usage). */
int ct_tool_int_opt(const char *cmd, const char *opt, const char *v, long long lo, long long hi, long long *out);
/* One step of the argument loop of a command with one positional argument and options that
 * all take a value (eval, qtable): argv[*i] is --help / -h (prints usage(stdout), returns -1),
 * the positional (stored in *pos; *opt = NULL; returns 0) or an option (*opt, *val set, *i
 * advanced past the value; returns 0). Returns 2 after a usage error: a second positional
 * ("unexpected argument"), an option without its value. */
int ct_tool_arg(const char *cmd, int argc, char **argv, int *i, void (*usage)(FILE *), const char **pos,
                const char **opt, const char **val);
/* Parses "COS,EUC" (--tolerance of compare and deploy: cosine in [-1, 1], euclidean
 * similarity <= 1) into tol's cos / euc; false on any other text. */
struct ct_compare_tol;
bool ct_tool_parse_tol(const char *s, struct ct_compare_tol *tol);
/* Collects the file arguments after the option at argv[*i] ("--input a.pb b.pb ..."): every
 * following argument up to the next one starting with '-' is appended to files (*n entries so
 * far, at most max), and *i advances past them. Returns 0, or 2 after a usage error
 * ("more than <max> input files", "<option> needs at least one file"). */
int ct_tool_files(const char *cmd, int argc, char **argv, int *i, const char **files, int *n, int max);
/* Parses the arguments "FILE [-o OUT] [--chip CHIP.json] [--help|-h]" shared by asm and disasm:
 * sets *in, *out and *chip (NULL when absent). Returns -1 to go on, 0 after printing usage(stdout)
 * for --help, or 2 after a usage error (unknown or incomplete option, more than one input file). */
int ct_tool_in_out_chip(const char *cmd, int argc, char **argv, void (*usage)(FILE *), const char **in,
                        const char **out, const char **chip);
/* A doc command (`ctpu isa-doc`, `ctpu ops-doc`): no arguments but --help/-h, which prints
 * "usage: ctpu <cmd>\n  <help>\n"; runs gen(stdout). Returns the exit code (2 after a usage
 * error, 1 when stdout cannot be written). */
int ct_tool_doc(const char *cmd, const char *help, int argc, char **argv, void (*gen)(FILE *f));
/* True if stderr is a terminal (progress lines are shown only then). */
bool ct_tool_isatty(void);

#endif
