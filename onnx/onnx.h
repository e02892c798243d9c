/* onnx.h: the ONNX front end: ModelProto → Top IR (ct_graph), TensorProto → ct_tensor,
 * command-line option parsing for input shapes and image preprocessing. Formats from the
 * ONNX IR spec (onnx/docs/IR.md) and onnx.proto; opset forms from onnx/docs/Changelog.md. */
#ifndef CT_ONNX_H
#define CT_ONNX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/h5io.h"
#include "common/status.h"
#include "common/tensor.h"
#include "ir/ir.h"
#include "onnx/onnx.pb-c.h"

#define CT_ONNX_MAX_OVERRIDES 32 /* --input-shapes entries */
#define CT_ONNX_NAME_MAX 256     /* bytes of an input name in an override, incl. NUL */
#define CT_ONNX_MAX_CHANNELS 4   /* entries of mean[] / scale[] */

/* One --input-shapes entry: the graph input `name` gets shape dims[0..ndim). */
typedef struct ct_onnx_shape_override {
  char name[CT_ONNX_NAME_MAX];
  int ndim;
  int64_t dims[CT_MAX_DIMS];
} ct_onnx_shape_override;

/* Import options. Zero-initialize (`ct_onnx_options o = {0};`) for "none". Preprocessing is
 * stored as attributes on every image Input op (rank 4, NCHW, float, C = 3 for rgb/bgr, 1 for
 * gray, C ∈ {1, 3} when no pixel format is given): pixel_format (string), resize_dims (ints
 * [H, W]), keep_aspect_ratio (int 0/1), pad_type (string), pad_value (float), mean (floats),
 * scale (floats), meaning x = (pixel − mean[c]) · scale[c] for pixels 0..255, resized to
 * resize_dims then center-cropped to the input H×W — or, with a pad_type, fitted inside H×W
 * and padded with pad_value (letterbox, io/image.h). Nothing is stored when no preprocessing option is set. */
typedef struct ct_onnx_options {
  int n_overrides;
  ct_onnx_shape_override overrides[CT_ONNX_MAX_OVERRIDES];
  char pixel_format[8];          /* "" (none), "rgb", "bgr" or "gray" */
  int64_t resize_dims[2];        /* H, W; 0, 0 = none */
  bool keep_aspect_ratio;
  char pad_type[8];              /* "" (center crop), "normal" or "center" (letterbox) */
  double pad_value;              /* letterbox padding pixel value (0..255) */
  int n_mean, n_scale;           /* 0 = none; else 1 (all channels) or C */
  double mean[CT_ONNX_MAX_CHANNELS];
  double scale[CT_ONNX_MAX_CHANNELS];
  /* Graph inputs whose values are known at compile time (e.g. a conformance test's shape or
   * scales inputs): each tensor, matched to a graph input by its name (unnamed: entry i
   * matches the i-th graph input that is not an initializer), makes that input a Weight
   * holding a copy of it. Borrowed; NULL entries are skipped; 0 = none. */
  int n_const_inputs;
  const ct_tensor *const *const_inputs;
  /* Called with the path of every external data file a tensor of the model names, before
   * the file is read (a command registers it as one of its inputs, so that no output
   * overwrites it: common/outset.h); a status other than CT_OK stops the import with it.
   * NULL = none. */
  ct_status (*on_external_file)(void *user, const char *path, ct_diag *d);
  void *on_external_user;
} ct_onnx_options;

/* Imports the ONNX model at path into a new Top graph (*out; free with ct_graph_free).
 * Graph inputs that are not initializers become Input ops (shape from the model, replaced
 * by opt's override for that name), initializers and Constant nodes become Weight ops,
 * every node one op of the same ONNX op type, converted to the latest-opset form of
 * ir/ops.def (attributes that later opsets made inputs become constant Weight inputs;
 * Upsample becomes Resize; Softmax/LogSoftmax/Hardmax of opset < 13 get coerce_2d = 1).
 * ConstantOfShape's TENSOR attribute `value` becomes attributes `value` (FLOAT for float
 * types, else INT) and `value_dtype` (INT, the ONNX TensorProto.DataType). Shapes of node
 * outputs are left unknown (ndim -1): run ct_top_propagate next. opt may be NULL.
 * Errors (the message starts with path):
 *   CT_ERR_INPUT: unreadable/corrupt file, no graph, unsupported op or domain
 *     (`m.onnx: node "X" (op Foo, opset 13): unsupported op`), undefined input names,
 *     duplicate value names, unsupported attribute or tensor types, symbolic input dims
 *     without an override (naming input and dim), bad external data;
 *   CT_ERR_USAGE: an override or constant input names no graph input, an override has the
 *     wrong rank, a constant input's dtype or static dims differ from the model's,
 *     preprocessing options that fit no input;
 *   CT_ERR_LIMIT: out of memory, more than CT_MAX_DIMS dims. */
ct_status ct_onnx_import(const char *path, const ct_onnx_options *opt, ct_graph **out, ct_diag *d);

/* Converts a TensorProto to a new row-major tensor named tp->name (*out; ct_tensor_free).
 * Storage forms (onnx.proto TensorProto): raw_data (little-endian, byte-swapped on
 * big-endian hosts); typed fields: float_data (FLOAT), int32_data (INT32, INT16, INT8,
 * UINT16, UINT8, BOOL, and FLOAT16/BFLOAT16 as their uint16 bit patterns — one element per
 * int32 entry), int64_data (INT64), double_data (DOUBLE), uint64_data (UINT32, UINT64);
 * external data (data_location EXTERNAL; keys location/offset/length, location relative to
 * model_dir, which may be NULL for "."; absolute paths and ".." components are refused).
 * file names the source in messages. Errors: CT_ERR_INPUT for unsupported types (strings,
 * complex: "unsupported tensor type"), negative dims, element counts that do not match the
 * dims, external files that are missing or too short; CT_ERR_LIMIT out of memory or more than
 * CT_MAX_DIMS dims. */
ct_status ct_onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *model_dir, const char *file,
                                    ct_tensor **out, ct_diag *d);

/* The path of the external data file of tp (model_dir, NULL for ".", joined with its
 * `location` entry), malloc'd; NULL when tp's data is not external, it names no location,
 * or out of memory. The path is not checked (ct_onnx_tensor_from_proto refuses an unsafe one). */
char *ct_onnx_external_path(const Onnx__TensorProto *tp, const char *model_dir);

/* Reads a serialized TensorProto file (e.g. test_data_set_0/input_0.pb) into *out, named
 * by the proto's name field (NULL name when empty). External data resolves relative to the
 * file's folder. Errors: CT_ERR_INPUT unreadable or corrupt file (message names path) and
 * those of ct_onnx_tensor_from_proto; CT_ERR_LIMIT out of memory. */
ct_status ct_onnx_read_tensor_pb(const char *path, ct_tensor **out, ct_diag *d);
/* Reads a TensorProto file like ct_onnx_read_tensor_pb and appends the tensor to l (which
 * owns it). Errors: those of ct_onnx_read_tensor_pb; CT_ERR_LIMIT "path: out of memory" when
 * the list cannot grow (nothing appended then). */
ct_status ct_onnx_read_tensor_pb_into(const char *path, ct_tensor_list *l, ct_diag *d);

/* Parses an --input-shapes value "name:1x3x640x640,name2:1x10" (dims ≥ 0, ≤ CT_MAX_DIMS of
 * them; "name:scalar" or "name:" for rank 0) and appends the entries to opt. Names may hold
 * any character but ',' and the last ':' separates the dims. Errors: CT_ERR_USAGE naming the
 * bad entry (missing ':', empty name, bad number, too many dims or entries, duplicate name). */
ct_status ct_onnx_parse_input_shapes(const char *spec, ct_onnx_options *opt, ct_diag *d);

/* Parses a comma-separated list of at most cap finite numbers ("123.7,116.3,103.5") into
 * v (*n entries). what names the option in messages. Errors: CT_ERR_USAGE empty list, bad
 * number, more than cap entries. */
ct_status ct_onnx_parse_floats(const char *what, const char *s, double *v, int cap, int *n, ct_diag *d);

#endif
