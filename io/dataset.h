/* dataset.h: data sets of many samples for `ctpu calibrate` and `ctpu eval` (docs/calibration.md
 * "Data sets"): an image folder (optionally labeled by labels.tsv), a list file, an HDF5 data
 * set (`images` [+ `labels`]), or one input file (.h5 / .pb / image) as a data set of one
 * sample. Each sample becomes the input tensors of a graph, preprocessed as its Input ops
 * say (io/inputs.h, io/image.h). */
#ifndef CT_DATASET_H
#define CT_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/h5io.h"
#include "common/status.h"
#include "ir/ir.h"

typedef struct ct_dataset ct_dataset;

/* Opens the data set at path for graph g (kept by pointer: g must outlive the data set).
 * path is, by content:
 *  - a directory: with a `labels.tsv` (TAB-separated `file class_index ...`, a header line
 *    whose second field is not a number is skipped) its rows in order, labeled; else every
 *    regular file that is a JPEG/PNG image, an .h5 or a .pb (sorted by name), unlabeled, one
 *    sample per file (single-input models);
 *  - a `.tsv` file: labels as above, file names relative to its folder;
 *  - an HDF5 file with a dataset `images`: u8 N×H×W (gray) or N×H×W×C (HWC, C 1 or 3) images
 *    preprocessed as the Input op says (a gray N×H×W image of the input's size into a gray
 *    input is used as is: x = (pixel − mean)·scale), or f32 N×(input shape without its batch
 *    of 1) tensors used directly; `labels` (any integer type, N values) labels them;
 *  - an HDF5, .pb or image file otherwise: a data set of that one sample (io/inputs.h);
 *  - any other file: a list, one sample per line, the sample's input files separated by ','
 *    (one per Input op, or one .h5 for all), relative to the list's folder; blank lines and
 *    lines starting with '#' are skipped.
 * Errors (CT_ERR_INPUT naming the path, and the line for lists): unreadable path, a data set
 * with no sample (`DIR: no image, .h5 or .pb file`), labels.tsv rows without a class index,
 * `images` of another dtype or rank, a channel count other than 1 or 3, an f32 `images`
 * whose sample shape is not the input's, `labels` count differing from the images', an
 * HDF5 `images` data set for a model with more than one input; CT_ERR_LIMIT out of memory. */
ct_status ct_dataset_open(const char *path, const ct_graph *g, ct_dataset **out, ct_diag *d);

/* Frees ds (NULL is fine). */
void ct_dataset_free(ct_dataset *ds);

/* Number of samples (≥ 1). */
int64_t ct_dataset_size(const ct_dataset *ds);

/* True if every sample has a class label. */
bool ct_dataset_has_labels(const ct_dataset *ds);

/* Class label of sample i (0-based), -1 when unlabeled or i out of range. */
int64_t ct_dataset_label(const ct_dataset *ds, int64_t i);

/* A short name of sample i for messages ("photo.jpg", "data.h5[17]") into buf; returns buf. */
const char *ct_dataset_sample_name(const ct_dataset *ds, int64_t i, char *buf, size_t n);

/* The files sample i is read from (paths as opened), *files set to an array of that many
 * (owned by ds); 0 when the sample is a part of the data set file itself (HDF5 `images`, the
 * file at the path ds was opened with) or i is out of range. */
int ct_dataset_sample_files(const ct_dataset *ds, int64_t i, const char *const **files);

/* Loads sample i as the graph's input tensors (one per Input op, in graph order, named by
 * the input value) appended to out. Safe to call from several threads at once. Errors
 * (out left as it was): CT_ERR_USAGE i out of range; those of ct_inputs_load (wrong file
 * count, dtype/shape mismatch, unreadable or corrupt image naming it) and
 * ct_image_preprocess; CT_ERR_LIMIT out of memory. */
ct_status ct_dataset_load(const ct_dataset *ds, int64_t i, ct_tensor_list *out, ct_diag *d);

#endif
