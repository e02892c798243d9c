/* h5io.h: HDF5 tensor files (docs/architecture.md §8): one dataset per tensor at the root,
 * named by the tensor name escaped reversibly ('%' → %25, '/' → %2F, leading '.' → %2E,
 * empty → %00); attributes `dtype` (IR spelling), `scale`/`zero_point` (arrays, when
 * quantized), `quant_axis`, `layout`. f16/bf16 are stored as uint16 with their dtype
 * attribute. Files are readable with h5py and h5dump. Writes go to a temporary name and
 * are renamed on success, so no half-written file is left behind. */
#ifndef CT_H5IO_H
#define CT_H5IO_H

#include <stddef.h>

#include "common/status.h"
#include "common/tensor.h"

/* A growable list of owned tensors. */
typedef struct ct_tensor_list {
  int n, cap;
  ct_tensor **items;
} ct_tensor_list;

void ct_tensor_list_init(ct_tensor_list *l);
/* Frees the list and every tensor in it. */
void ct_tensor_list_free(ct_tensor_list *l);
/* Appends t (the list takes ownership). false on out of memory (t is then not owned). */
bool ct_tensor_list_push(ct_tensor_list *l, ct_tensor *t);
/* The tensor named name, or NULL. */
ct_tensor *ct_tensor_list_find(const ct_tensor_list *l, const char *name);

/* Escapes a tensor name into an HDF5 link name (see above). Returns false if buf (n bytes)
 * is too small. */
bool ct_h5_escape(const char *name, char *buf, size_t n);
/* Inverse of ct_h5_escape. false if buf is too small or s has a malformed escape. */
bool ct_h5_unescape(const char *s, char *buf, size_t n);

/* Incremental writer: open, add tensors one by one, then commit (rename into place) or
 * abort (delete the temporary file). */
typedef struct ct_h5_writer ct_h5_writer;

/* Opens the temporary file of path (ct_outfile) for writing. Errors: CT_ERR_INPUT (cannot
 * create), CT_ERR_LIMIT (no memory). */
ct_status ct_h5_writer_open(ct_h5_writer **w, const char *path, ct_diag *d);
/* Writes t as a dataset named by t->name (or `name` if not NULL). Duplicate names: error
 * CT_ERR_INPUT naming the tensor. */
ct_status ct_h5_writer_add(ct_h5_writer *w, const ct_tensor *t, const char *name, ct_diag *d);
/* Closes and renames the file into place; frees w. */
ct_status ct_h5_writer_commit(ct_h5_writer *w, ct_diag *d);
/* Closes and deletes the temporary file; frees w. NULL is fine. */
void ct_h5_writer_abort(ct_h5_writer *w);

/* Writes n tensors to path (atomic, as above). */
ct_status ct_h5_write(const char *path, ct_tensor *const *ts, int n, ct_diag *d);

/* Reads every dataset at the root of path into out (appended, in name order). The file is
 * read in a child process (common/h5child.c) with rlimits, so a corrupt file on which libhdf5
 * itself crashes, loops or leaks ends as CT_ERR_INPUT "PATH: corrupt HDF5 file" and never
 * takes ctpu down. Errors: CT_ERR_INPUT naming the file (missing, not HDF5, corrupt) or the
 * dataset (unsupported type, null dataspace, bad attribute, dims overflowing 64 bits);
 * CT_ERR_LIMIT naming the dataset, shape and bytes when one is over the memory budget. */
ct_status ct_h5_read(const char *path, ct_tensor_list *out, ct_diag *d);

/* Reads one tensor by name, isolated like ct_h5_read. CT_ERR_INPUT if missing
 * ("file.h5: no dataset \"x\"") or unreadable. */
ct_status ct_h5_read_one(const char *path, const char *name, ct_tensor **out, ct_diag *d);

/* Initializes libhdf5 in this process (once; the forked readers then start warm). */
void ct_h5_preinit(void);

/* The same two readers in this process, without isolation: for the child itself, for files
 * ctpu just wrote, and for the fuzz harness (which wants libhdf5's crashes to be seen). */
ct_status ct_h5_read_direct(const char *path, ct_tensor_list *out, ct_diag *d);
ct_status ct_h5_read_one_direct(const char *path, const char *name, ct_tensor **out, ct_diag *d);

#endif
