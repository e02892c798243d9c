/* onnx_build.c: hand-filled protobuf-c ONNX messages for tests (see onnx_build.h); field
 * meanings from onnx.proto. */
#include "tests/onnx_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *ob_alloc(ob_model *b, size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p || b->n_allocs == (int)(sizeof b->allocs / sizeof b->allocs[0])) abort(); /* test bug */
  b->allocs[b->n_allocs++] = p;
  return p;
}

char *ob_str(ob_model *b, const char *s) {
  char *p = ob_alloc(b, strlen(s) + 1);
  strcpy(p, s);
  return p;
}

void ob_init(ob_model *b, int64_t opset) {
  memset(b, 0, sizeof *b);
  onnx__model_proto__init(&b->m);
  onnx__graph_proto__init(&b->g);
  onnx__operator_set_id_proto__init(&b->opset);
  b->opset.domain = ob_str(b, "");
  b->opset.has_version = 1;
  b->opset.version = opset;
  b->opsets[0] = &b->opset;
  b->m.has_ir_version = 1;
  b->m.ir_version = 7;
  b->m.n_opset_import = 1;
  b->m.opset_import = b->opsets;
  b->m.graph = &b->g;
  b->g.name = ob_str(b, "testnet");
  b->g.node = b->nodes;
  b->g.initializer = b->inits;
  b->g.input = b->inputs;
  b->g.output = b->outputs;
}

void ob_free(ob_model *b) {
  for (int i = 0; i < b->n_allocs; i++) free(b->allocs[i]);
  b->n_allocs = 0;
}

static Onnx__ValueInfoProto *value_info(ob_model *b, const char *name) {
  Onnx__ValueInfoProto *v = ob_alloc(b, sizeof *v);
  onnx__value_info_proto__init(v);
  v->name = ob_str(b, name);
  return v;
}

void ob_input(ob_model *b, const char *name, int elem, int ndim, const int64_t *dims) {
  Onnx__ValueInfoProto *v = value_info(b, name);
  Onnx__TypeProto *tp = ob_alloc(b, sizeof *tp);
  Onnx__TypeProto__Tensor *tt = ob_alloc(b, sizeof *tt);
  onnx__type_proto__init(tp);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = elem;
  if (ndim >= 0) {
    Onnx__TensorShapeProto *sp = ob_alloc(b, sizeof *sp);
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = (size_t)ndim;
    sp->dim = ob_alloc(b, sizeof *sp->dim * (size_t)(ndim + 1));
    for (int i = 0; i < ndim; i++) {
      Onnx__TensorShapeProto__Dimension *dm = ob_alloc(b, sizeof *dm);
      onnx__tensor_shape_proto__dimension__init(dm);
      if (dims[i] >= 0) {
        dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dm->dim_value = dims[i];
      } else {
        dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        dm->dim_param = ob_str(b, "N");
      }
      sp->dim[i] = dm;
    }
    tt->shape = sp;
  }
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  v->type = tp;
  b->inputs[b->g.n_input++] = v;
}

void ob_output(ob_model *b, const char *name) { b->outputs[b->g.n_output++] = value_info(b, name); }

Onnx__TensorProto *ob_tensor(ob_model *b, const char *name, int elem, int ndim, const int64_t *dims) {
  Onnx__TensorProto *t = ob_alloc(b, sizeof *t);
  onnx__tensor_proto__init(t);
  t->name = ob_str(b, name);
  t->has_data_type = 1;
  t->data_type = elem;
  t->n_dims = (size_t)ndim;
  t->dims = ob_alloc(b, sizeof *t->dims * (size_t)(ndim + 1));
  if (ndim) memcpy(t->dims, dims, sizeof *t->dims * (size_t)ndim);
  return t;
}

void ob_raw(ob_model *b, Onnx__TensorProto *t, const void *data, size_t n) {
  t->has_raw_data = 1;
  t->raw_data.len = n;
  t->raw_data.data = ob_alloc(b, n);
  if (n) memcpy(t->raw_data.data, data, n);
}

void ob_add_init(ob_model *b, Onnx__TensorProto *t) { b->inits[b->g.n_initializer++] = t; }

Onnx__TensorProto *ob_init_f32(ob_model *b, const char *name, int ndim, const int64_t *dims, const float *v) {
  Onnx__TensorProto *t = ob_tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, ndim, dims);
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= (size_t)dims[i];
  ob_raw(b, t, v, n * sizeof(float));
  ob_add_init(b, t);
  return t;
}

Onnx__TensorProto *ob_init_i64(ob_model *b, const char *name, int n, const int64_t *v) {
  int64_t dim = n;
  Onnx__TensorProto *t = ob_tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &dim);
  t->n_int64_data = (size_t)n;
  t->int64_data = ob_alloc(b, sizeof(int64_t) * (size_t)(n + 1));
  if (n) memcpy(t->int64_data, v, sizeof(int64_t) * (size_t)n);
  ob_add_init(b, t);
  return t;
}

static char **names(ob_model *b, const char *const *l, size_t *n) {
  size_t k = 0;
  while (l && l[k]) k++;
  char **r = ob_alloc(b, sizeof *r * (k + 1));
  for (size_t i = 0; i < k; i++) r[i] = ob_str(b, l[i]);
  *n = k;
  return r;
}

Onnx__NodeProto *ob_node(ob_model *b, const char *op, const char *name, const char *const *in,
                         const char *const *out) {
  Onnx__NodeProto *n = ob_alloc(b, sizeof *n);
  onnx__node_proto__init(n);
  n->op_type = ob_str(b, op);
  n->name = ob_str(b, name ? name : "");
  n->input = names(b, in, &n->n_input);
  n->output = names(b, out, &n->n_output);
  n->attribute = ob_alloc(b, sizeof *n->attribute * 16);
  b->nodes[b->g.n_node++] = n;
  return n;
}

static Onnx__AttributeProto *attr(ob_model *b, Onnx__NodeProto *n, const char *name, int type) {
  Onnx__AttributeProto *a = ob_alloc(b, sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = ob_str(b, name);
  a->has_type = 1;
  a->type = (Onnx__AttributeProto__AttributeType)type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

void ob_attr_i(ob_model *b, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

void ob_attr_f(ob_model *b, Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}

void ob_attr_s(ob_model *b, Onnx__NodeProto *n, const char *name, const char *v) {
  Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.len = strlen(v);
  a->s.data = (uint8_t *)ob_str(b, v);
}

void ob_attr_ints(ob_model *b, Onnx__NodeProto *n, const char *name, int k, const int64_t *v) {
  Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t)k;
  a->ints = ob_alloc(b, sizeof *a->ints * (size_t)(k + 1));
  if (k) memcpy(a->ints, v, sizeof *a->ints * (size_t)k);
}

void ob_attr_floats(ob_model *b, Onnx__NodeProto *n, const char *name, int k, const float *v) {
  Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  a->n_floats = (size_t)k;
  a->floats = ob_alloc(b, sizeof *a->floats * (size_t)(k + 1));
  if (k) memcpy(a->floats, v, sizeof *a->floats * (size_t)k);
}

void ob_attr_t(ob_model *b, Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t) {
  Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = t;
}

static bool write_bytes(const char *path, const uint8_t *buf, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(buf, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

bool ob_write(ob_model *b, const char *path) {
  size_t n = onnx__model_proto__get_packed_size(&b->m);
  uint8_t *buf = malloc(n + 1);
  if (!buf) return false;
  onnx__model_proto__pack(&b->m, buf);
  bool ok = write_bytes(path, buf, n);
  free(buf);
  return ok;
}

bool ob_write_tensor(const Onnx__TensorProto *t, const char *path) {
  size_t n = onnx__tensor_proto__get_packed_size(t);
  uint8_t *buf = malloc(n + 1);
  if (!buf) return false;
  onnx__tensor_proto__pack(t, buf);
  bool ok = write_bytes(path, buf, n);
  free(buf);
  return ok;
}

float ob_lcg_unit(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

void ob_init_rand(ob_model *b, const char *name, int ndim, const int64_t *dims, uint32_t *seed) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= dims[i];
  float *v = ob_alloc(b, sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = ob_lcg_unit(seed) * 0.5f;
  ob_init_f32(b, name, ndim, dims, v);
}
