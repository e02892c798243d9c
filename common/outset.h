/* outset.h: a command's outputs, all or nothing (docs/limits.md). Every output is written
 * under a temporary directory next to its destination, with its final base name (so files
 * that name each other, like X.top and its weights X.top.h5, stay consistent); only when the
 * whole command has succeeded are all of them renamed into place. An output that is one of
 * the command's inputs is refused before anything is written: the same file (device and
 * inode) when it exists, or the same resolved path (symbolic links, "." and ".." resolved);
 * so are an existing directory and a path named as two outputs. This is the one place that check is made.
 *
 * Use (every command that writes files should):
 *   ct_outset o;  ct_outset_init(&o, "transform");
 *   ct_outset_input(&o, model, d);                  // each input file, weights files included
 *   ct_outset_add(&o, out, &tmp_top, d);           // each output: write to the returned path
 *   ... write everything to the temporary paths ...
 *   st = ct_outset_end(&o, st, d);                // commit on success, else abort
 */
#ifndef CT_OUTSET_H
#define CT_OUTSET_H

#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"

#define CT_OUTSET_MAX 16

/* An input: its file identity when it exists, and its resolved path. */
typedef struct ct_outset_in {
  unsigned long long dev, ino;
  bool exists;
  char *real; /* resolved path (owned) */
} ct_outset_in;

typedef struct ct_outset {
  const char *cmd;
  int n_in, cap_in, n_out;
  ct_outset_in *in;            /* inputs (owned) */
  char *real[CT_OUTSET_MAX];   /* resolved destination paths (owned) */
  char *dest[CT_OUTSET_MAX];   /* final paths (owned) */
  char *tmp[CT_OUTSET_MAX];    /* temporary paths (owned) */
  char *dir[CT_OUTSET_MAX];    /* temporary directory of each output (owned; may repeat) */
} ct_outset;

/* Starts an empty set for command cmd (used in messages). Every set that was started ends
 * with ct_outset_commit or ct_outset_abort (they free it). */
void ct_outset_init(ct_outset *o, const char *cmd);
/* Registers an input file (a missing one by its resolved path only: its reader
 * reports it). path NULL is ignored. Errors: CT_ERR_LIMIT out of memory. */
ct_status ct_outset_input(ct_outset *o, const char *path, ct_diag *d);
/* Registers output dest and sets *tmp to the path to write it to (valid until commit/abort).
 * The temporary directory `<dir of dest>/.ctpu-<pid>-<k>.tmp` is created now, so an
 * unwritable destination fails before any work. Errors: CT_ERR_USAGE when dest is one of the
 * inputs, an existing directory, or already registered; CT_ERR_INPUT when its directory cannot
 * be written; CT_ERR_LIMIT when more than CT_OUTSET_MAX outputs or out of memory. The refusal
 * reads "<dest>: output is also an input of the command (refusing to overwrite it)". */
ct_status ct_outset_add(ct_outset *o, const char *dest, const char **tmp, ct_diag *d);
/* Checks every output again as ct_outset_add does, against every input registered so far
 * (inputs known only after reading, such as the weights file a model names or the files of a
 * data set, are registered late: check before the work). Errors: CT_ERR_USAGE as add. */
ct_status ct_outset_check(const ct_outset *o, ct_diag *d);
/* Renames every output that was written into place (an output whose temporary file does not
 * exist is skipped: optional outputs the command did not produce), removes the temporary
 * directories and frees the set. Before the first rename every destination is checked again
 * as ct_outset_add checks it, against every input (also those registered after its add, such
 * as a weights file named inside a model). Errors: those of the checks (CT_ERR_USAGE, nothing
 * renamed); CT_ERR_INPUT naming a destination that could not be renamed. */
ct_status ct_outset_commit(ct_outset *o, ct_diag *d);
/* Deletes every temporary file and directory and frees the set. Safe after a failed add. */
void ct_outset_abort(ct_outset *o);
/* The end of a command's set: ct_outset_commit when st is CT_OK, else ct_outset_abort.
 * Returns st, or commit's error. */
ct_status ct_outset_end(ct_outset *o, ct_status st, ct_diag *d);

/* One file written atomically: the home of every writer's temporary-name-and-rename (a
 * table, a trace, a summary, a program, an HDF5 file, an IR text). The bytes go to
 * `<path>.tmp<pid>`, which ct_outfile_commit renames to path, so a failure never leaves a
 * half-written path. Under an outset, path is itself the outset's temporary name. */
typedef struct ct_outfile {
  char *path; /* destination (owned) */
  char *tmp;  /* the temporary name to write (owned) */
  FILE *f;    /* tmp opened "wb" by ct_outfile_begin(open = true); NULL when the writer opens
               * tmp itself (an HDF5 file) */
} ct_outfile;

/* Names the temporary file of path and, when open is true, creates it (o->f). o is zeroed
 * first, so ct_outfile_abort is safe after a failure. Errors: CT_ERR_LIMIT "PATH: out of
 * memory"; CT_ERR_INPUT "PATH: cannot create: REASON". */
ct_status ct_outfile_begin(ct_outfile *o, const char *path, bool open, ct_diag *d);
/* Closes o->f (when open; a write error seen by ferror or fclose fails the commit), renames
 * the temporary file to path, and frees o. On failure the temporary file is removed and path
 * is untouched. Errors: CT_ERR_INPUT "PATH: cannot write: REASON". */
ct_status ct_outfile_commit(ct_outfile *o, ct_diag *d);
/* Closes o->f, removes the temporary file and frees o. Safe on a zeroed o. */
void ct_outfile_abort(ct_outfile *o);
/* The whole cycle for one writer: begin (open), write(f, ctx, d), commit, or abort when write
 * fails. Errors: those of write, begin and commit. */
ct_status ct_outfile_write(const char *path, ct_status (*write)(FILE *f, const void *ctx, ct_diag *d),
                           const void *ctx, ct_diag *d);

#endif
