/* testutil.h: helpers shared by the Check suites: paths, the shared data folder, running
 * the ctpu binary, temporary files. */
#ifndef CT_TESTUTIL_H
#define CT_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/status.h"
#include "common/tensor.h"
#include "ir/ir.h"

/* Runs the doc generator gen into memory and asserts that the committed file doc (path from
 * the source root, e.g. "docs/ops.md") holds exactly that text, else fails naming cmd (the
 * command that regenerates it). Returns the generated text (free() it). */
char *ct_test_doc_current(void (*gen)(FILE *f), const char *doc, const char *cmd);

/* Path of the shared data folder (../shared from the source root), or NULL if absent. */
const char *ct_test_shared(void);
/* Exits with 77 (CTest "skipped") after printing why, if ../shared is absent. */
void ct_test_require_shared(const char *suite);
/* Formats a path under ../shared into a static-lifetime buffer from a small ring. */
const char *ct_test_shared_path(const char *fmt, ...) CT_PRINTF(1, 2);
/* A fresh temporary directory for this process (created once, under the build tree; removed
 * with its files when the process that made it exits, unless CT_KEEP_TEST_TMP is set), and a
 * path inside it. */
const char *ct_test_tmpdir(void);
const char *ct_test_tmp_path(const char *name);
/* Runs the ctpu binary with a shell command line of arguments (e.g. "transform a.onnx -o
 * b.top"), capturing stderr (and stdout) into `out` (size n, may be NULL); returns the exit
 * code (-1 if it did not exit normally, e.g. a crash). */
int ct_test_run_ctpu(char *out, size_t n, const char *fmt, ...) CT_PRINTF(3, 4);
/* True if path can be opened for reading. */
bool ct_test_file_exists(const char *path);
/* Writes n bytes to path; false on failure. */
bool ct_test_write_file(const char *path, const void *data, size_t n);
/* Writes sweep chip k (0..31, the chip sweep of the back-end tests: MXU 8×8…64×64 and 16×64, LMEM
 * 256 KiB…4 MiB, 4…32 banks, 8…128 B/cycle DDR, WS/OS, 1 or 2 DMA engines of each kind) as
 * dotted-key chip JSON named "<prefix>_sweep<k>.json" in the test's temporary folder and
 * returns its path (ct_test_tmp_path's storage); NULL if it cannot be written. */
const char *ct_test_sweep_chip(int k, const char *prefix);
/* The est_over_sim column (the 10th) of the simulated rows of a deploy OUT.groups.csv: up
 * to max ratios into r, the row text (without newline) of the one farthest from 1 into
 * worst (n bytes). Returns the number of simulated rows, -1 when the file cannot be read. */
int ct_test_group_ratios(const char *csv, double *r, int max, char *worst, size_t n);
/* Reads a whole file (ct_file_read: malloc'd, NUL-terminated); NULL on failure. *n gets the
 * size if n. */
char *ct_test_read_file(const char *path, size_t *n);
/* True if element i of got agrees with ref as the ONNX test runner judges: floats
 * |got − ref| ≤ atol + rtol·|ref| (bf16: at least one unit in ref's last place), NaN matches
 * NaN, equal infinities match; integers and bools exactly. */
bool ct_test_onnx_element_ok(const ct_tensor *got, const ct_tensor *ref, int64_t i, double atol, double rtol);
/* Sets the 2-D window attributes of op (a Conv or pool): kernel_shape k[2], strides st[2],
 * dilations dl[2], pads[4]; false when op is NULL or out of memory. */
bool ct_test_window_attrs(ct_graph *g, ct_op *op, const int64_t *k, const int64_t *st, const int64_t *dl,
                          const int64_t *pads);
/* A graph input value `name` with its Input op (the test fails when g cannot take it). */
ct_value *ct_test_add_input(ct_graph *g, const char *name, ct_dtype dt, int ndim, const int64_t *shape);
/* An f32 tensor holding start, start + 1, start + 2, ... (the test fails on out of memory). */
ct_tensor *ct_test_f32_ramp(const char *name, int ndim, const int64_t *shape, float start);
/* Runs a suite with CK_NORMAL output and returns the exit code for main(). */
int ct_test_run_suite(Suite *s);

#endif
