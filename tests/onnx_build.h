/* onnx_build.h: a tiny builder of ONNX ModelProto/TensorProto messages for the front-end
 * tests (tests/test_onnx.c): protobuf-c structs filled by hand, packed with
 * onnx__model_proto__pack, so no binary model files are committed. */
#ifndef CT_ONNX_BUILD_H
#define CT_ONNX_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "onnx/onnx.pb-c.h"

#define OB_MAX 256

/* A model under construction; every allocation is owned by it (ob_free). */
typedef struct ob_model {
  Onnx__ModelProto m;
  Onnx__GraphProto g;
  Onnx__OperatorSetIdProto opset, *opsets[1];
  Onnx__NodeProto *nodes[OB_MAX];
  Onnx__TensorProto *inits[OB_MAX];
  Onnx__ValueInfoProto *inputs[OB_MAX], *outputs[OB_MAX];
  void *allocs[4 * OB_MAX * 8];
  int n_allocs;
} ob_model;

/* Starts a model with one default-domain opset import of version opset. */
void ob_init(ob_model *b, int64_t opset);
/* Frees everything the builder allocated. */
void ob_free(ob_model *b);
/* Zeroed memory owned by b. */
void *ob_alloc(ob_model *b, size_t n);
/* A string copy owned by b. */
char *ob_str(ob_model *b, const char *s);
/* A graph input of ONNX elem type with ndim dims; a dim < 0 is symbolic ("N"). ndim < 0
 * gives no shape at all. */
void ob_input(ob_model *b, const char *name, int elem, int ndim, const int64_t *dims);
/* A graph output (type left empty). */
void ob_output(ob_model *b, const char *name);
/* A TensorProto (name, type, dims), no data yet. */
Onnx__TensorProto *ob_tensor(ob_model *b, const char *name, int elem, int ndim, const int64_t *dims);
/* Sets raw_data (bytes copied). */
void ob_raw(ob_model *b, Onnx__TensorProto *t, const void *data, size_t n);
/* A float32 initializer with raw data. */
Onnx__TensorProto *ob_init_f32(ob_model *b, const char *name, int ndim, const int64_t *dims, const float *v);
/* An int64 initializer with int64_data. */
Onnx__TensorProto *ob_init_i64(ob_model *b, const char *name, int n, const int64_t *v);
/* Appends an existing TensorProto as initializer. */
void ob_add_init(ob_model *b, Onnx__TensorProto *t);
/* A node; in/out are NULL-terminated name lists ("" = absent). */
Onnx__NodeProto *ob_node(ob_model *b, const char *op, const char *name, const char *const *in,
                         const char *const *out);
void ob_attr_i(ob_model *b, Onnx__NodeProto *n, const char *name, int64_t v);
void ob_attr_f(ob_model *b, Onnx__NodeProto *n, const char *name, float v);
void ob_attr_s(ob_model *b, Onnx__NodeProto *n, const char *name, const char *v);
void ob_attr_ints(ob_model *b, Onnx__NodeProto *n, const char *name, int k, const int64_t *v);
void ob_attr_floats(ob_model *b, Onnx__NodeProto *n, const char *name, int k, const float *v);
void ob_attr_t(ob_model *b, Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t);
/* Packs the model and writes it to path; false on failure. */
bool ob_write(ob_model *b, const char *path);
/* Packs a TensorProto and writes it to path. */
bool ob_write_tensor(const Onnx__TensorProto *t, const char *path);

/* The next value of the LCG seeded by *s (Numerical Recipes' constants), uniform in
 * [-1, 1) in steps of 2^-23: test data that is the same on every platform. */
float ob_lcg_unit(uint32_t *s);
/* A constant f32 initializer `name` of shape dims (rank ndim), values ob_lcg_unit · 0.5,
 * i.e. uniform in [-0.5, 0.5); the values are owned by b. */
void ob_init_rand(ob_model *b, const char *name, int ndim, const int64_t *dims, uint32_t *seed);

#endif
