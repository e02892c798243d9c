/* text.h: the text form of the Top and Tpu IRs (docs/architecture.md §6): an MLIR-like module,
 * one op per line, printed and parsed so that print → parse → print is byte-identical, and
 * saved/loaded together with the weights HDF5 file. The grammar is in docs/formats.md. */
#ifndef CT_TEXT_H
#define CT_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "ir/ir.h"

/* Prints g to f in the text format (docs/formats.md):
 *   module @name attributes {chip = "...", weights = "..."} {
 *     %N = top.Op(%a, %none) {attr = ...} : tensor<1x3x8x8xf32> loc("node" -> "result")
 *     return %N : tensor<...>
 *   }
 * Live ops are printed in g->ops order; value numbers are the values' ids; dead ops are
 * skipped. Floats are printed with the shortest decimal that parses back to the same double
 * (NaN payloads and NaN signs are not kept). Errors: CT_ERR_INPUT when f cannot be written,
 * CT_ERR_INTERNAL when the graph is malformed (an op result is NULL). */
ct_status ct_ir_print(const ct_graph *g, FILE *f, ct_diag *d);

/* Prints g into a malloc'd NUL-terminated string (*out, *len bytes without the NUL).
 * Errors: as ct_ir_print; CT_ERR_LIMIT when out of memory. */
ct_status ct_ir_print_string(const ct_graph *g, char **out, size_t *len, ct_diag *d);

/* Parses len bytes of text into a new graph (*out; freed with ct_graph_free). filename
 * (may be NULL) only names the input in messages. Weight values get no data (see
 * ct_ir_load). Value ids are the %N numbers of the text when those are 0..n-1 without gaps;
 * otherwise values are renumbered in order of definition. The module's dialect is the op
 * prefix ("top"/"tpu"; "top" for a module without ops). Errors, all CT_ERR_INPUT with
 * "FILE:LINE:COL: " (1-based, bytes) in front: syntax (`expected ')'`), unknown op
 * (`unknown op "top.Foo"`), mixed dialects, use of an undefined or not-yet-defined %N,
 * duplicate %N, operand/result counts outside ops.def's arity, type/result count mismatch,
 * unknown dtype, more than CT_MAX_DIMS dims, unknown module attribute, NUL in a string;
 * CT_ERR_LIMIT when out of memory. */
ct_status ct_ir_parse(const char *text, size_t len, const char *filename, ct_graph **out, ct_diag *d);

/* Saves g as text at path and, at path + ".h5", the data of every Weight value and of every
 * other value that carries constant data (values folded by ct_top_propagate), one dataset
 * per value named by the value name (common/h5io.h). Sets g->weights to the base name of the
 * .h5 file before printing. Each file is written under a temporary name and renamed, so no
 * half-written file is left. Errors: CT_ERR_INPUT naming the weight when a Weight value has
 * no data or its data does not match the value's dtype/shape, or when a file cannot be
 * written; CT_ERR_LIMIT out of memory. */
ct_status ct_ir_save(ct_graph *g, const char *path, ct_diag *d);

/* Reads and parses path, then loads the data of every Weight value (and of any other value
 * with a dataset of its name: folded constants) from the weights file named in the module,
 * relative to path's folder. A module without Weight ops may name a missing file. Errors
 * (CT_ERR_INPUT): unreadable file, any ct_ir_parse error, missing or corrupt weights file,
 * no dataset for a Weight value, a dataset whose dtype/shape differs from the IR
 * (`m.top.h5: weight "w": IR says 8x3x3x3xf32, file has 8x3x3xf32`), Weight ops without a
 * weights file named; CT_ERR_LIMIT out of memory. */
ct_status ct_ir_load(const char *path, ct_graph **out, ct_diag *d);

/* Writes s as a quoted text-IR string: `"` and `\` escaped, \n \t, other control bytes
 * (< 0x20, 0x7f) as \xHH; bytes ≥ 0x80 are written as they are (UTF-8 passes through).
 * Returns false if f reports an error. Used by other printers (reports, asm). */
bool ct_ir_print_quoted(FILE *f, const char *s);

/* Formats v with the shortest "%.{1..17}g" form that strtod parses back to v, adding ".0"
 * when the result would read as an integer; "inf", "-inf", "nan". buf needs ≥ 32 bytes.
 * Returns buf. */
char *ct_ir_format_float(double v, char *buf, size_t n);

#endif
