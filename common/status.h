/* status.h: error codes and diagnostics shared by every ctpu module.
 * A fallible function returns ct_status (0 = ok) and fills a ct_diag with a one-line
 * message naming the file and the place (node, field, byte offset, line); docs/style.md "Errors". */
#ifndef CT_STATUS_H
#define CT_STATUS_H

#include <stddef.h>

/* Status codes double as the process exit codes of docs/architecture.md §8. */
typedef enum ct_status {
  CT_OK = 0,
  CT_ERR_CHECK = 1,    /* a check failed: compare mismatch, race, deadlock, accuracy bound */
  CT_ERR_USAGE = 2,    /* bad command line */
  CT_ERR_INPUT = 3,    /* unreadable, corrupt or inconsistent input file */
  CT_ERR_LIMIT = 4,    /* a limit exceeded: out of memory, does not fit in LMEM */
  CT_ERR_INTERNAL = 5  /* a bug in ctpu: an internal invariant broke */
} ct_status;

#define CT_DIAG_MAX 1024

/* One diagnostic: the status and a one-line message (lower-case start, no trailing period). */
typedef struct ct_diag {
  ct_status code;
  char msg[CT_DIAG_MAX];
} ct_diag;

/* CT_PRINTF(f, a) after a prototype: argument f is a printf format checked against the
 * arguments from a on, where the compiler can (GCC, Clang); nothing elsewhere, so headers
 * stay standard C11 (docs/style.md). */
#if defined(__GNUC__)
#define CT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CT_PRINTF(f, a)
#endif

/* Clears d (code CT_OK, empty message). d may be NULL. */
void ct_diag_clear(ct_diag *d);

/* Sets d's code and printf-formatted message; returns code so callers can write
 * `return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\": ...", file, node);`. d may be NULL. */
ct_status ct_diag_set(ct_diag *d, ct_status code, const char *fmt, ...)
    CT_PRINTF(3, 4);

/* Prepends a printf-formatted context ("model.onnx: ") to d's message, keeping its code;
 * returns d's code. Used when an error travels up through a layer that knows the file. */
ct_status ct_diag_prefix(ct_diag *d, const char *fmt, ...) CT_PRINTF(2, 3);

/* Name of a status code ("bad input", ...), for messages. */
const char *ct_status_name(ct_status s);

#endif
