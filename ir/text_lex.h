/* text_lex.h: private to the text IR parser (text_parse.c): the character-level scanner
 * (whitespace and // comments, punctuation, identifiers, quoted strings, numbers, %N refs)
 * with FILE:LINE:COL error messages. Hand-written recursive descent, as MLIR's lexer. */
#ifndef CT_TEXT_LEX_H
#define CT_TEXT_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

typedef struct ct_lex {
  const char *src, *p, *end;  /* whole text, cursor, end */
  const char *file;           /* name for messages */
  ct_diag *d;
  char *buf;                  /* scratch for the last string/identifier (NUL-terminated) */
  size_t buf_cap, buf_len;
} ct_lex;

/* A number token: is_float tells which of i/f holds it. */
typedef struct ct_lex_num {
  bool is_float;
  int64_t i;
  double f;
} ct_lex_num;

/* Starts lexing text (len bytes, need not be NUL-terminated) of file `file` (for messages);
 * errors go to d. ct_lex_free releases the token buffer. */
void ct_lex_init(ct_lex *lx, const char *text, size_t len, const char *file, ct_diag *d);
void ct_lex_free(ct_lex *lx);
/* Sets d to CT_ERR_INPUT "FILE:LINE:COL: <message>" for position at; returns CT_ERR_INPUT. */
ct_status ct_lex_error(ct_lex *lx, const char *at, const char *fmt, ...) CT_PRINTF(3, 4);
/* Sets d to CT_ERR_LIMIT "FILE: out of memory"; returns CT_ERR_LIMIT. */
ct_status ct_lex_oom(ct_lex *lx);
/* Skips spaces, tabs, newlines and // comments. */
void ct_lex_skip(ct_lex *lx);
/* After skipping whitespace, true if the text continues with s. */
bool ct_lex_peek(ct_lex *lx, const char *s);
/* Consumes s if present (after whitespace); keywords must not be followed by an ident char. */
bool ct_lex_accept(ct_lex *lx, const char *s);
/* Consumes keyword kw if present and not followed by an identifier character. */
bool ct_lex_accept_kw(ct_lex *lx, const char *kw);
/* Consumes s or fails with "expected 's'". */
ct_status ct_lex_expect(ct_lex *lx, const char *s);
/* An identifier [A-Za-z_][A-Za-z0-9_.$-]* into lx->buf. */
ct_status ct_lex_ident(ct_lex *lx, const char *what);
/* A quoted string with escapes (\" \\ \n \t \xHH) into lx->buf (NUL inside is an error). */
ct_status ct_lex_string(ct_lex *lx);
/* An identifier or a quoted string into lx->buf. */
ct_status ct_lex_name(ct_lex *lx, const char *what);
/* A number: int (-12) or float (1.0, 1e-05, inf, -inf, nan). */
ct_status ct_lex_number(ct_lex *lx, ct_lex_num *out);
/* A value reference %N (*id = N) or %none (*id = -1). N ≤ 16777215. */
ct_status ct_lex_ref(ct_lex *lx, int *id);
/* True if the next non-blank char starts a number. */
bool ct_lex_at_number(ct_lex *lx);

#endif
