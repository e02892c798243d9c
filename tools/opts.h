/* opts.h: the command-line layer of ctpu. Each command declares its options once, in a
 * static table (name, value, help text, what the value sets and how it is checked), and
 * the one parser here reads argv by that table and prints the command's --help from it,
 * so the help cannot drift from what is parsed (LLVM's cl::opt: an option and its help are
 * one declaration). Usage errors print "ctpu CMD: <message>; see ctpu CMD --help" and
 * exit 2. */
#ifndef CT_TOOLS_OPTS_H
#define CT_TOOLS_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/status.h"

typedef struct ct_opt ct_opt;

/* What an option's value does to the command's argument struct (at offset off). */
typedef enum ct_opt_type {
  CT_OPT_FLAG,   /* no value: bool at off := true */
  CT_OPT_STR,    /* const char * at off := the value */
  CT_OPT_INT,    /* int at off := a whole number in [min, max] */
  CT_OPT_LLONG,  /* long long at off := a whole number in [min, max] */
  CT_OPT_UNIT,   /* double at off := a number in (0, 1] */
  CT_OPT_CHOICE, /* int at off := the index of the value in choices ("a|b|c") */
  CT_OPT_FILES,  /* every following argument up to the next one starting with '-' appended
                  * to the const char *[max] at off; int count at off2 */
  CT_OPT_FN,     /* fn(args, opt, value) */
  CT_OPT_FN_FLAG /* no value: fn(args, opt, NULL) */
} ct_opt_type;

/* Sets what option o of command cmd means in args; returns 0, or an exit code after
 * printing a message (ct_tool_usage: 2). value is NULL for CT_OPT_FN_FLAG. */
typedef int (*ct_opt_fn)(void *args, const char *cmd, const ct_opt *o, const char *value);

struct ct_opt {
  const char *name;    /* spelling: "--dataset", "-o" */
  ct_opt_type type;
  const char *value;   /* value name in the help ("N", "FILE..."); NULL for flags and choices */
  const char *help;    /* what the option does, with its default; wrapped by the help printer */
  size_t off, off2;    /* offsets in the command's argument struct */
  long long min, max;  /* CT_OPT_INT / CT_OPT_LLONG range; CT_OPT_FILES: max files */
  const char *choices; /* CT_OPT_CHOICE: the values, '|'-separated */
  ct_opt_fn fn;        /* CT_OPT_FN / CT_OPT_FN_FLAG */
  const char *needed;  /* non-NULL: the option is required; names it in "no <needed> given" */
};

/* Table entries: A is the command's argument struct type, F a field of it. */
#define CT_OPT_FLAG_(name, A, F, help) {name, CT_OPT_FLAG, NULL, help, offsetof(A, F), 0, 0, 0, NULL, NULL, NULL}
#define CT_OPT_STR_(name, value, A, F, help) {name, CT_OPT_STR, value, help, offsetof(A, F), 0, 0, 0, NULL, NULL, NULL}
#define CT_OPT_NEED_(name, value, A, F, needed, help) \
  {name, CT_OPT_STR, value, help, offsetof(A, F), 0, 0, 0, NULL, NULL, needed}
#define CT_OPT_INT_(name, value, A, F, lo, hi, help) {name, CT_OPT_INT, value, help, offsetof(A, F), 0, lo, hi, NULL, NULL, NULL}
#define CT_OPT_LLONG_(name, value, A, F, lo, hi, help) \
  {name, CT_OPT_LLONG, value, help, offsetof(A, F), 0, lo, hi, NULL, NULL, NULL}
#define CT_OPT_UNIT_(name, value, A, F, help) {name, CT_OPT_UNIT, value, help, offsetof(A, F), 0, 0, 0, NULL, NULL, NULL}
#define CT_OPT_CHOICE_(name, choices, A, F, help) \
  {name, CT_OPT_CHOICE, NULL, help, offsetof(A, F), 0, 0, 0, choices, NULL, NULL}
#define CT_OPT_FILES_(name, value, A, F, N, max, help) \
  {name, CT_OPT_FILES, value, help, offsetof(A, F), offsetof(A, N), 0, max, NULL, NULL, NULL}
#define CT_OPT_FN_(name, value, fn, help) {name, CT_OPT_FN, value, help, 0, 0, 0, 0, NULL, fn, NULL}
#define CT_OPT_FN_FLAG_(name, fn, help) {name, CT_OPT_FN_FLAG, NULL, help, 0, 0, 0, 0, NULL, fn, NULL}
/* `--max-memory BYTES[K|M|G]` (common/limits.h), for commands that allocate tensors. */
#define CT_OPT_MAX_MEMORY \
  CT_OPT_FN_("--max-memory", "BYTES[K|M|G]", ct_opt_max_memory, \
             "largest tensor to allocate (default: half the physical memory)")

/* `--lut-input 8|16` of lower and refine: bool at off := the value is 16. */
#define CT_OPT_LUT_INPUT(A, F) \
  {"--lut-input", CT_OPT_FN, "8|16", "INT8: a Conv result read only by a LUT activation is i8 (default) or i16, " \
   "looked up by the interpolated 16-bit LUT", offsetof(A, F), 0, 0, 0, NULL, ct_opt_lut_input, NULL}

/* A command: its name, the synopsis after "usage: ctpu CMD ", what it does, its positional
 * arguments (up to pos_max of them, stored in the const char *[pos_max] at pos_off; pos_noun
 * names the first in "no <pos_noun> given" when it is required) and its options. */
typedef struct ct_cmd_spec {
  const char *cmd, *synopsis, *about;
  const char *pos_noun;
  size_t pos_off;
  int pos_max;
  bool pos_required;
  const ct_opt *opts;
  int n_opts;
  void (*more)(FILE *f); /* printed after the options (e.g. opt's pass list), or NULL */
} ct_cmd_spec;

#define CT_OPTS_COUNT(t) ((int)(sizeof(t) / sizeof((t)[0])))
/* The spec of a command with one required positional (noun, stored in field F of A) and the
 * option table OPTS. */
#define CT_CMD_SPEC1(name, syn, about_, noun, A, F, OPTS)                                                       \
  {.cmd = name, .synopsis = syn, .about = about_, .pos_noun = noun, .pos_off = offsetof(A, F), .pos_max = 1, \
   .pos_required = true, .opts = OPTS, .n_opts = CT_OPTS_COUNT(OPTS)}

/* Parses argv[1..argc-1] (argv[0] is the command) into args by s: `--name VALUE`,
 * `--name=VALUE`, flags, positionals. -h / --help prints ct_opts_help(s, stdout). Returns 0
 * to go on, -1 after printing the help (the command then exits 0), or 2 after a usage error
 * (printed): an unknown option, an option without its value, a value its type refuses
 * ("--threads needs a number in 1..64, not \"x\""), a positional too many, a required
 * option or positional missing ("no model given", "no output given (-o OUT.top)"). */
int ct_opts_parse(const ct_cmd_spec *s, int argc, char **argv, void *args);

/* Prints s's help: "usage: ctpu CMD SYNOPSIS", the about text, one entry per option (name,
 * value, help), -h/--help, then s->more; text wrapped to 100 columns. */
void ct_opts_help(const ct_cmd_spec *s, FILE *f);

/* Writes s as a section of docs/cli.md: a heading, the synopsis, the about text and a table of
 * the options (value names and help as --help prints them; required ones marked). */
void ct_opts_markdown(const ct_cmd_spec *s, FILE *f);

/* Setter of CT_OPT_MAX_MEMORY: sets the process's tensor budget (ct_mem_budget_set). */
int ct_opt_max_memory(void *args, const char *cmd, const ct_opt *o, const char *value);
/* Setter of CT_OPT_LUT_INPUT ("--lut-input 12: 8 or 16" otherwise). */
int ct_opt_lut_input(void *args, const char *cmd, const ct_opt *o, const char *value);
/* Prints a usage error "ctpu <cmd>: <msg>; see ctpu <cmd> --help" and returns 2. */
int ct_tool_usage(const char *cmd, const char *fmt, ...) CT_PRINTF(2, 3);

#endif
