/* onnx_internal.h: state shared by the ONNX front end's files (onnx_import.c builds the
 * graph, onnx_opset.c rewrites older-opset node forms into the latest form of ops.def).
 * Not a public API: only compiler/onnx_*.c include it. */
#ifndef CT_ONNX_INTERNAL_H
#define CT_ONNX_INTERNAL_H

#include "onnx/onnx.h"

/* The import in progress. */
typedef struct ct_onnx_ctx {
  const char *file;        /* model path, the prefix of every message */
  const char *dir;         /* model folder (external data) */
  const ct_onnx_options *opt; /* may be NULL */
  ct_graph *g;
  const Onnx__ModelProto *model;
  int64_t opset;           /* version of the default ("" / "ai.onnx") domain */
  ct_value **slots;        /* name → value, open addressing, power-of-two capacity */
  size_t cap, count;
} ct_onnx_ctx;

/* ct_onnx_tensor_from_proto on tp (relative to the model folder), after telling
 * c->opt->on_external_file the file of external data it names. */
ct_status ct_onnx_tensor_of(ct_onnx_ctx *c, const Onnx__TensorProto *tp, ct_tensor **out, ct_diag *d);

/* The value named name, or NULL. */
ct_value *ct_onnx_find(const ct_onnx_ctx *c, const char *name);
/* Records v under v->name. false if out of memory. */
bool ct_onnx_bind(ct_onnx_ctx *c, ct_value *v);

/* A new value named name, or "name#k" when taken, recorded in the map. NULL out of memory. */
ct_value *ct_onnx_new_value(ct_onnx_ctx *c, const char *name, ct_dtype dt, int ndim, const int64_t *shape);
/* Moves the last op of g->ops to just before `before` (keeps ops in topological order when
 * an op is created for a consumer that already exists). */
void ct_onnx_move_last_before(ct_onnx_ctx *c, const ct_op *before);
/* Adds a Weight op holding t (ownership taken; freed on failure) named name (made unique)
 * just before `before`. NULL out of memory. */
ct_value *ct_onnx_add_weight_before(ct_onnx_ctx *c, const ct_op *before, const char *name, ct_tensor *t);
/* Adds a Weight holding t (ownership taken) named "<op loc>/<what>" (made unique), placed
 * before op in g->ops, and makes it op's input idx (op->in grows, new slots NULL).
 * Errors: CT_ERR_LIMIT out of memory. */
ct_status ct_onnx_add_const_input(ct_onnx_ctx *c, ct_op *op, int idx, const char *what, ct_tensor *t,
                                  ct_diag *d);

/* The ops.def name of an ONNX op type (renamed legacy ops: Upsample → Resize, Scatter →
 * ScatterElements), else onnx_type itself. */
const char *ct_onnx_op_alias(const char *onnx_type);

/* Rewrites op (created from an ONNX node of onnx_type at the model's opset, attributes
 * already copied) into the latest-opset form of ir/ops.def. Errors: CT_ERR_INPUT for
 * legacy forms ctpu cannot express (message names the node), CT_ERR_LIMIT out of memory. */
ct_status ct_onnx_normalize(ct_onnx_ctx *c, const char *onnx_type, ct_op *op, ct_diag *d);

/* Reads the file path (ct_file_read) and unpacks it as a protobuf message of type desc
 * (protobuf-c's generic unpack; free with protobuf_c_message_free_unpacked). Errors: those of
 * ct_file_read; CT_ERR_INPUT "path: not a valid ONNX <what> (protobuf parse failed, N
 * bytes)" when the bytes do not parse. */
ct_status ct_onnx_read_message(const char *path, const ProtobufCMessageDescriptor *desc, const char *what,
                               ProtobufCMessage **out, ct_diag *d);

/* The folder of path, malloc'd: "." when path has no '/', "/" for a file at the root. NULL
 * when out of memory. External data and the model stem are resolved from it. */
char *ct_onnx_path_dir(const char *path);

#endif
