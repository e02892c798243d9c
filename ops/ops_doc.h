/* ops_doc.h: the generator of docs/ops.md (the op reference, from the op table). */
#ifndef CT_OPS_DOC_H
#define CT_OPS_DOC_H

#include <stdio.h>

/* Writes docs/ops.md (Markdown) to f: one row per op (dialects, arity, attribute sets, which
 * shape function and kernels exist), then one table per attribute set (name, type, default,
 * meaning). Output depends only on the tables, so a test can compare it with the committed
 * file. Write errors are the caller's to check (ferror). */
void ct_ops_doc(FILE *f);

#endif
