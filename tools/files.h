/* files.h: the files a command reads and writes, registered with its output set
 * (common/outset.h) so that no output overwrites an input: a model and its weights file, a
 * data set and its samples, lists of files; and the writer of a text output. */
#ifndef CT_TOOLS_FILES_H
#define CT_TOOLS_FILES_H

#include <stdbool.h>
#include <stdio.h>

#include "common/outset.h"
#include "io/dataset.h"
#include "ir/ir.h"

/* Registers the module file model and its weights: model + ".h5" (the name ct_ir_save
 * gives) and, when g is given (model loaded), the weights file g names, relative to model's
 * folder. Errors: those of ct_outset_input (CT_ERR_LIMIT). */
ct_status ct_tool_in_model(ct_outset *o, const char *model, const ct_graph *g, ct_diag *d);
/* Registers the outputs out and out + ".h5" (a module and its weights, ct_ir_save); *tmp is
 * the path to save the module to (its weights go beside it). Errors: ct_outset_add's. */
ct_status ct_tool_out_model(ct_outset *o, const char *out, const char **tmp, ct_diag *d);
/* Registers the data set path, the labels.tsv a data set folder may hold, and (ds open)
 * every file of every sample. Errors: those of ct_outset_input. */
ct_status ct_tool_in_dataset(ct_outset *o, const char *path, const ct_dataset *ds, ct_diag *d);
/* ct_tool_in_dataset for the data set at path as g reads it (opened to list its samples,
 * then closed). Errors: those of ct_dataset_open and ct_outset_input. */
ct_status ct_tool_in_dataset_of(ct_outset *o, const char *path, const ct_graph *g, ct_diag *d);
/* Registers each of the n files. Errors: those of ct_outset_input. */
ct_status ct_tool_in_files(ct_outset *o, const char *const *files, int n, ct_diag *d);
/* Writes the text output whose temporary path is tmp (ct_outset_add) with write(f, user);
 * dest names it in messages. Errors: CT_ERR_INPUT "<dest>: cannot write" when tmp cannot be
 * created, write returns false, or closing fails. */
ct_status ct_tool_write_text(const char *tmp, const char *dest, bool (*write)(FILE *f, const void *user),
                             const void *user, ct_diag *d);

#endif
