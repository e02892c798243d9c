/* ir.h: the graph IR shared by the Top dialect (float, chip-independent) and the Tpu dialect
 * (quantized): SSA values with static shapes, ops in topological order, typed attributes.
 * Graph building (this file) is kept apart from evaluation (reference/) as ggml does. */
#ifndef CT_IR_H
#define CT_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/status.h"
#include "common/tensor.h"

typedef enum ct_op_kind {
#define OP(E, name, dialects, min_in, max_in, min_out, max_out, s1, s2, s3, shape, top, tpu, writes) CT_OP_##E,
#include "ir/ops.def"
  CT_OP_COUNT
} ct_op_kind;

/* The two dialects (docs/architecture.md §6), as bits: ops.def's dialect column is a mask. */
typedef enum ct_dialect {
  CT_DIALECT_TOP = 1, /* float, chip-independent */
  CT_DIALECT_TPU = 2  /* quantized, lowered for a chip */
} ct_dialect;

typedef enum ct_attr_kind {
  CT_ATTR_INT,     /* i */
  CT_ATTR_FLOAT,   /* f (double; ONNX floats are stored exactly) */
  CT_ATTR_STRING,  /* s */
  CT_ATTR_INTS,    /* n, ints */
  CT_ATTR_FLOATS,  /* n, floats */
  CT_ATTR_STRINGS  /* n, strs */
} ct_attr_kind;

typedef struct ct_attr {
  const char *name;
  ct_attr_kind kind;
  int64_t i;
  double f;
  const char *s;
  int n;
  int64_t *ints;
  double *floats;
  const char **strs;
} ct_attr;

typedef struct ct_op ct_op;

/* Back-end annotations of a value (layer grouping, tiling, allocation fill them; -1 = not
 * assigned). Stored in the value itself: ct_graph_compact and ct_graph_toposort keep them. */
typedef struct ct_value_annot {
  int64_t gmem_addr;            /* bytes from GMEM base */
  int64_t lmem_addr;            /* bytes from LMEM base (within the value's layer group) */
  int64_t bytes;                /* allocated size in bytes */
} ct_value_annot;

/* Back-end annotations of an op (-1 = not assigned); kept like ct_value_annot. */
typedef struct ct_op_annot {
  int group;                    /* layer group */
  int tile;                     /* tile (slice) index within the group */
  int step;                     /* time step of the group's software pipeline */
} ct_op_annot;

/* An SSA value: one tensor-typed result of one op. */
typedef struct ct_value {
  int id;                       /* index in graph->values; printed %id */
  const char *name;             /* tensor name (ONNX output / initializer name), unique */
  ct_dtype dtype;               /* element type (Tpu dialect: storage type) */
  int ndim;                     /* -1 = shape not yet inferred */
  int64_t shape[CT_MAX_DIMS];
  ct_tensor *data;              /* constant data (Weight ops, folded values) or NULL; owned */
  ct_op *def;                   /* producing op */
  /* Tpu dialect quant params: real = scale · (q − zero_point). n_scale 0 = none, 1 = per
   * tensor, else per channel along quant_axis (n_scale == shape[quant_axis]). scale and
   * zero_point have n_scale entries, are allocated in the graph arena (ct_value_set_quant,
   * the parser) and are never freed separately: memory set by hand must outlive the graph. */
  int n_scale;
  int quant_axis;               /* meaningful when n_scale > 1; 0 when written without axis */
  double *scale;
  int32_t *zero_point;
  ct_value_annot annot;         /* back end: addresses (-1 = unassigned) */
} ct_value;

/* One op: inputs (NULL = absent optional), outputs, attributes, source location. */
struct ct_op {
  int id;                       /* creation order, unique in the graph */
  ct_op_kind kind;
  const char *loc;              /* ONNX node name (or initializer/input name) */
  int n_in, n_out, n_attr, cap_attr;
  ct_value **in;
  ct_value **out;
  ct_attr *attrs;
  bool dead;                    /* erased; removed by ct_graph_compact */
  int line;                     /* line of the op in the text file it was parsed from, 0 = none */
  ct_op_annot annot;            /* back end: group, tile, time step (-1 = unassigned) */
};

/* A module: values and ops (ops in topological order), outputs, module attributes. */
typedef struct ct_graph {
  ct_arena arena;               /* strings, op/attr arrays */
  const char *name;             /* module name */
  const char *dialect;          /* "top" or "tpu" */
  const char *chip;             /* module attribute chip = "" */
  const char *weights;          /* module attribute weights = "x.top.h5" */
  const char *source;           /* file the graph was parsed from (messages), NULL = built */
  ct_op **ops;
  int n_ops, cap_ops;
  ct_value **values;
  int n_values, cap_values;
  ct_value **outputs;           /* the module's return values */
  int n_outputs;
  int next_op_id;
} ct_graph;

/* Shape function of an op kind (implemented in ops/, looked up with ct_shape_fn_of): sets
 * op's output types. Errors: CT_ERR_INPUT naming the op's loc and the field when the inputs
 * are inconsistent (e.g. `node "Conv_3": input 1 has 3 channels, expected 4`) or a
 * shape-determining input is not constant. Declared here so ir/ (the verifier) can take one
 * without depending on ops/. */
typedef ct_status (*ct_shape_fn)(ct_graph *g, ct_op *op, ct_diag *d);

/* ---- op table (ops.def) ---- */
/* IR name of an op kind ("Conv"); the text format prints it as "top.Conv". */
const char *ct_op_name(ct_op_kind k);
/* Looks an op up by IR/ONNX name; false if unknown. */
bool ct_op_lookup(const char *name, ct_op_kind *out);
/* Arity limits from ops.def (max -1 = variadic). */
void ct_op_arity(ct_op_kind k, int *min_in, int *max_in, int *min_out, int *max_out);
/* Dialects (ct_dialect bits) the op exists in, from ops.def. */
unsigned ct_op_dialects(ct_op_kind k);
/* The dialect of a graph: CT_DIALECT_TPU when g->dialect is "tpu", else CT_DIALECT_TOP. */
ct_dialect ct_graph_dialect(const ct_graph *g);

/* ---- graph building ---- */
/* New empty graph in the given dialect ("top"/"tpu"); NULL if out of memory. */
ct_graph *ct_graph_new(const char *name, const char *dialect);
/* Frees the graph, its values' constant data and everything in its arena. NULL is fine. */
void ct_graph_free(ct_graph *g);
/* Adds a value with a name (copied; NULL gives "v<id>"), dtype and shape (ndim -1 =
 * unknown). NULL if out of memory. The value has no producer until an op names it. */
ct_value *ct_graph_add_value(ct_graph *g, const char *name, ct_dtype dt, int ndim, const int64_t *shape);
/* Appends an op (inputs/outputs arrays are copied; output values get def = op). loc copied.
 * NULL if out of memory. */
ct_op *ct_graph_add_op(ct_graph *g, ct_op_kind kind, const char *loc, int n_in, ct_value *const *in,
                       int n_out, ct_value *const *out);
/* Convenience: adds a Weight op producing a constant value that takes ownership of t
 * (named t->name, or name if given). NULL if out of memory (t is then freed). */
ct_value *ct_graph_add_weight(ct_graph *g, const char *name, ct_tensor *t);
/* Marks op dead (it stays in g->ops until ct_graph_compact). */
void ct_graph_erase_op(ct_graph *g, ct_op *op);
/* Replaces every use of `from` as an op input or module output by `to`. Returns the count. */
int ct_graph_replace_uses(ct_graph *g, ct_value *from, ct_value *to);
/* Number of uses of v (op inputs of live ops + module outputs). O(ops). */
int ct_graph_count_uses(const ct_graph *g, const ct_value *v);
/* Removes dead ops and values no live op defines; renumbers value ids densely. */
void ct_graph_compact(ct_graph *g);
/* Sorts live ops topologically (stable: keeps the current order where legal). Returns
 * CT_ERR_INPUT on a cycle. */
ct_status ct_graph_toposort(ct_graph *g, ct_diag *d);
/* Sets the module outputs (array copied). false if out of memory. */
bool ct_graph_set_outputs(ct_graph *g, int n, ct_value *const *outs);
/* Whether module output i is a value already returned at an earlier position (a return that
 * lists one value twice, e.g. after an identity fold: the value is one output, named once). */
bool ct_graph_output_repeated(const ct_graph *g, int i);
/* The value named name, or NULL. O(values). */
ct_value *ct_graph_find_value(const ct_graph *g, const char *name);
/* The Input ops' values, in order, into out (cap entries); returns how many there are. */
int ct_graph_inputs(const ct_graph *g, ct_value **out, int cap);

/* ---- values ---- */
static inline bool ct_value_is_const(const ct_value *v) { return v && v->data; }
/* Elements of v's shape; -1 if unknown. */
int64_t ct_value_numel(const ct_value *v);
/* Sets v's dtype and shape. */
void ct_value_set_type(ct_value *v, ct_dtype dt, int ndim, const int64_t *shape);
/* Sets v's quant params: n scales and zero points (copied into g's arena), per-channel axis
 * (used when n > 1). n = 0 clears them. false when out of memory (v unchanged). The verifier
 * checks them (integer storage type, count = shape[axis], zero points in the type's range). */
bool ct_value_set_quant(ct_graph *g, ct_value *v, int n, const double *scale, const int32_t *zero_point, int axis);

/* ---- attributes ---- */
/* The attribute named name, or NULL. */
const ct_attr *ct_op_attr(const ct_op *op, const char *name);
/* Typed getters with a default when absent (or of another kind). ct_op_get_int reads a float
 * attribute truncated toward zero, saturating at the int64 limits (NaN gives dflt). */
int64_t ct_op_get_int(const ct_op *op, const char *name, int64_t dflt);
double ct_op_get_float(const ct_op *op, const char *name, double dflt);
const char *ct_op_get_string(const ct_op *op, const char *name, const char *dflt);
/* Ints/floats array (NULL and *n = 0 when absent). */
const int64_t *ct_op_get_ints(const ct_op *op, const char *name, int *n);
const double *ct_op_get_floats(const ct_op *op, const char *name, int *n);
/* Setters: add or replace (values copied into the graph arena). false if out of memory. */
bool ct_op_set_int(ct_graph *g, ct_op *op, const char *name, int64_t v);
bool ct_op_set_float(ct_graph *g, ct_op *op, const char *name, double v);
bool ct_op_set_string(ct_graph *g, ct_op *op, const char *name, const char *v);
bool ct_op_set_ints(ct_graph *g, ct_op *op, const char *name, int n, const int64_t *v);
bool ct_op_set_floats(ct_graph *g, ct_op *op, const char *name, int n, const double *v);
bool ct_op_set_strings(ct_graph *g, ct_op *op, const char *name, int n, const char *const *v);
/* Removes an attribute if present. */
void ct_op_del_attr(ct_op *op, const char *name);

/* The attribute schemas and typed accessors (they need the declarations above). */
#include "ir/attr.h"

#endif
