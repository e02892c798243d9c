/* filecheck.h: a small FileCheck-style matcher for the pass tests (after LLVM FileCheck:
 * https://llvm.org/docs/CommandGuide/FileCheck.html): directives CHECK, CHECK-NEXT,
 * CHECK-SAME, CHECK-NOT, CHECK-LABEL, with {{regex}} and [[VAR:regex]] / [[VAR]] patterns. */
#ifndef CT_FILECHECK_H
#define CT_FILECHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Checks `output` against the directives in `checks`. A directive is a line containing
 * "<prefix>:", "<prefix>-NEXT:", "<prefix>-SAME:", "<prefix>-NOT:" or "<prefix>-LABEL:"
 * (prefix e.g. "CHECK"; anything before it on the line, such as "//", is ignored); its
 * pattern is the rest of the line, trimmed. Patterns match within one output line: literal
 * text (runs of blanks match runs of blanks), `{{ERE}}` a POSIX extended regex,
 * `[[NAME:ERE]]` matches ERE and binds NAME, `[[NAME]]` the text bound before.
 * Semantics as FileCheck: CHECK/LABEL search forward from the end of the previous match;
 * NEXT must match on the line after it, SAME on the same line after it; NOT patterns must
 * not occur between the previous match and the next positive match (or the end).
 * Returns true if every directive holds (and there is at least one). On failure writes a
 * one-line reason naming the directive's line number in `checks` into err (n bytes). */
bool ct_filecheck(const char *checks, const char *output, const char *prefix, char *err, size_t n);

#endif
