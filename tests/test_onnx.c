/* test_onnx.c: the ONNX front end's import rules and opset normalization on small models built
 * in the test (tests/onnx_build.c). TensorProto reading and option parsing are tested in
 * test_onnx_tensor.c, the CLI in test_onnx_cli.c, the real models in test_onnx_models.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "tests/onnx_build.h"
#include "tests/testutil.h"

#define T_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define T_INT64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

/* ---- import ---- */

static const int64_t dims_x[4] = {1, 3, 4, 4};

/* Writes b to a fresh temporary model path and imports it. */
static ct_status import_model(ob_model *b, const char *file, const ct_onnx_options *o, ct_graph **g, ct_diag *d) {
  const char *path = ct_test_tmp_path(file);
  ck_assert(ob_write(b, path));
  ct_status st = ct_onnx_import(path, o, g, d);
  if (st) ck_assert_ptr_null(*g);
  else ck_assert_ptr_nonnull(*g);
  return st;
}

static ct_op *op_at(ct_graph *g, const char *loc) {
  for (int i = 0; i < g->n_ops; i++)
    if (!strcmp(g->ops[i]->loc, loc)) return g->ops[i];
  ck_abort_msg("no op \"%s\"", loc);
  return NULL;
}

static void assert_const_i64(const ct_value *v, int n, const int64_t *want) {
  ck_assert_ptr_nonnull(v);
  ck_assert_ptr_nonnull(v->data);
  ck_assert_int_eq(v->data->dtype, CT_I64);
  ck_assert_int_eq(ct_tensor_numel(v->data), n);
  ck_assert_mem_eq(v->data->data, want, sizeof *want * (size_t)n);
  ck_assert_int_eq(v->def->kind, CT_OP_WEIGHT);
}

static void assert_const_f32_scalar(const ct_value *v, float want) {
  ck_assert_ptr_nonnull(v);
  ck_assert_ptr_nonnull(v->data);
  ck_assert_int_eq(v->data->dtype, CT_F32);
  ck_assert_int_eq(v->data->ndim, 0);
  ck_assert_float_eq(((float *)v->data->data)[0], want);
}

/* Every op's inputs are defined by an op earlier in g->ops (topological order). */
static void assert_topological(const ct_graph *g) {
  for (int i = 0; i < g->n_ops; i++)
    for (int j = 0; j < g->ops[i]->n_in; j++) {
      const ct_value *v = g->ops[i]->in[j];
      if (!v) continue;
      int k = 0;
      while (k < i && g->ops[k] != v->def) k++;
      ck_assert_msg(k < i, "op %s uses %s before its definition", g->ops[i]->loc, v->name);
    }
}

/* A float-list attribute (LSTM's activation_alpha) arrives as doubles; an attribute the op
 * table does not list for the op is an "unsupported" error naming node and attribute. */
START_TEST(test_import_attribute_lists_and_unknown_names) {
  for (int bad = 0; bad < 2; bad++) {
    ob_model b;
    ob_init(&b, 14);
    int64_t xd[3] = {1, 1, 2}, wd[3] = {1, 4, 2}, rd[3] = {1, 4, 1};
    ob_input(&b, "x", T_FLOAT, 3, xd);
    ob_init_f32(&b, "w", 3, wd, (float[8]){0});
    ob_init_f32(&b, "r", 3, rd, (float[4]){0});
    Onnx__NodeProto *n = ob_node(&b, "LSTM", "lstm", (const char *[]){"x", "w", "r", NULL}, (const char *[]){"y", NULL});
    ob_attr_floats(&b, n, bad ? "activation_alfa" : "activation_alpha", 2, (float[]){0.5f, -1.25f});
    ob_output(&b, "y");
    ct_graph *g = NULL;
    ct_diag d;
    ct_status st = import_model(&b, "l.onnx", NULL, &g, &d);
    ob_free(&b);
    if (bad) {
      ck_assert_int_eq(st, CT_ERR_INPUT);
      ck_assert_msg(strstr(d.msg, "node \"lstm\"") && strstr(d.msg, "\"activation_alfa\"") &&
                        strstr(d.msg, "unsupported"), "%s", d.msg);
      continue;
    }
    ck_assert_msg(st == CT_OK, "%s", d.msg);
    int k;
    const double *fl = ct_op_get_floats(op_at(g, "lstm"), "activation_alpha", &k);
    ck_assert_int_eq(k, 2);
    ck_assert_double_eq(fl[1], -1.25);
    ct_graph_free(g);
  }
}
END_TEST

START_TEST(test_import_structure) {
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 4, dims_x);
  int64_t wd[4] = {2, 3, 1, 1};
  float w[6] = {1, 2, 3, 4, 5, 6};
  ob_init_f32(&b, "w", 4, wd, w);
  Onnx__NodeProto *conv = ob_node(&b, "Conv", "conv0", (const char *[]){"x", "w", "", NULL}, (const char *[]){"c", NULL});
  ob_attr_ints(&b, conv, "kernel_shape", 2, (int64_t[]){1, 1});
  ob_attr_s(&b, conv, "auto_pad", "NOTSET");
  ob_node(&b, "Relu", "", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_int_eq(import_model(&b, "s.onnx", NULL, &g, &d), CT_OK);
  ct_value *in[4];
  ck_assert_int_eq(ct_graph_inputs(g, in, 4), 1);
  ck_assert_str_eq(in[0]->name, "x");
  ck_assert_int_eq(in[0]->ndim, 4);
  ck_assert_int_eq(in[0]->shape[1], 3);
  ct_op *c = op_at(g, "conv0");
  ck_assert_int_eq(c->kind, CT_OP_CONV);
  ck_assert_int_eq(c->n_in, 3);
  ck_assert_ptr_eq(c->in[0], in[0]);
  ck_assert_ptr_null(c->in[2]);
  ck_assert_mem_eq(c->in[1]->data->data, w, sizeof w);
  int n;
  const int64_t *ks = ct_op_get_ints(c, "kernel_shape", &n);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(ks[1], 1);
  ck_assert_str_eq(ct_op_get_string(c, "auto_pad", ""), "NOTSET");
  ct_op *r = op_at(g, "Relu_1"); /* synthesized from op type and node index */
  ck_assert_int_eq(r->kind, CT_OP_RELU);
  ck_assert_int_eq(g->n_outputs, 1);
  ck_assert_ptr_eq(g->outputs[0], r->out[0]);
  ck_assert_str_eq(g->outputs[0]->name, "y");
  assert_topological(g);
  ct_graph_free(g);
  ob_free(&b);
}
END_TEST

START_TEST(test_constant_nodes_become_weights) {
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 4, dims_x);
  int64_t two = 2;
  Onnx__TensorProto *t = ob_tensor(&b, "", T_FLOAT, 1, &two);
  ob_raw(&b, t, (float[]){7.0f, -8.0f}, 8);
  ob_attr_t(&b, ob_node(&b, "Constant", "k0", NULL, (const char *[]){"c0", NULL}), "value", t);
  ob_attr_f(&b, ob_node(&b, "Constant", "k1", NULL, (const char *[]){"c1", NULL}), "value_float", 2.5f);
  ob_attr_ints(&b, ob_node(&b, "Constant", "k2", NULL, (const char *[]){"c2", NULL}), "value_ints", 3,
               (int64_t[]){4, -5, 6});
  ob_attr_i(&b, ob_node(&b, "Constant", "k3", NULL, (const char *[]){"c3", NULL}), "value_int", 9);
  Onnx__TensorProto *one = ob_tensor(&b, "", ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, (int64_t[]){1});
  one->n_int32_data = 1;
  one->int32_data = ob_alloc(&b, 4);
  one->int32_data[0] = 3;
  Onnx__NodeProto *cos = ob_node(&b, "ConstantOfShape", "cos", (const char *[]){"c2", NULL}, (const char *[]){"z", NULL});
  ob_attr_t(&b, cos, "value", one);
  ob_node(&b, "Add", "add", (const char *[]){"x", "c1", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ob_output(&b, "c0");
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_int_eq(import_model(&b, "k.onnx", NULL, &g, &d), CT_OK);
  ct_value *c0 = ct_graph_find_value(g, "c0");
  ck_assert_int_eq(c0->def->kind, CT_OP_WEIGHT);
  ck_assert_mem_eq(c0->data->data, ((float[]){7.0f, -8.0f}), 8);
  assert_const_f32_scalar(ct_graph_find_value(g, "c1"), 2.5f);
  assert_const_i64(ct_graph_find_value(g, "c2"), 3, (int64_t[]){4, -5, 6});
  ck_assert_int_eq(ct_graph_find_value(g, "c3")->data->ndim, 0);
  ct_op *co = op_at(g, "cos");
  ck_assert_int_eq(ct_op_get_int(co, "value", -1), 3);
  ck_assert_int_eq(ct_op_get_int(co, "value_dtype", -1), ONNX__TENSOR_PROTO__DATA_TYPE__INT32);
  ck_assert_ptr_eq(op_at(g, "add")->in[1], ct_graph_find_value(g, "c1"));
  assert_topological(g);
  ct_graph_free(g);
  ob_free(&b);
}
END_TEST

/* Builds x → Squeeze → y at the given opset, with axes [0, 2] as attribute or input. */
static ct_graph *squeeze_model(int64_t opset, bool as_input) {
  ob_model b;
  ob_init(&b, opset);
  ob_input(&b, "x", T_FLOAT, 4, (int64_t[]){1, 3, 1, 4});
  if (as_input) ob_init_i64(&b, "sq/axes", 2, (int64_t[]){0, 2});
  Onnx__NodeProto *n = ob_node(&b, "Squeeze", "sq", (const char *[]){"x", as_input ? "sq/axes" : NULL, NULL},
                               (const char *[]){"y", NULL});
  if (!as_input) ob_attr_ints(&b, n, "axes", 2, (int64_t[]){0, 2});
  ob_output(&b, "y");
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(import_model(&b, "sq.onnx", NULL, &g, &d) == CT_OK, "%s", d.msg);
  ob_free(&b);
  return g;
}

START_TEST(test_squeeze_opset11_attr_equals_opset13_input) {
  ct_graph *a = squeeze_model(11, false), *b = squeeze_model(13, true);
  ct_op *oa = op_at(a, "sq"), *ob = op_at(b, "sq");
  ck_assert_int_eq(oa->n_in, 2);
  ck_assert_int_eq(ob->n_in, 2);
  ck_assert_int_eq(oa->n_attr, ob->n_attr);
  ck_assert_ptr_null(ct_op_attr(oa, "axes"));
  assert_const_i64(oa->in[1], 2, (int64_t[]){0, 2});
  assert_const_i64(ob->in[1], 2, (int64_t[]){0, 2});
  ck_assert_str_eq(oa->in[1]->name, ob->in[1]->name);
  ck_assert_int_eq(a->n_ops, b->n_ops);
  for (int i = 0; i < a->n_ops; i++) ck_assert_int_eq(a->ops[i]->kind, b->ops[i]->kind);
  assert_topological(a);
  ct_graph_free(a);
  ct_graph_free(b);
}
END_TEST

/* An opset-9 model using the attribute forms of Clip, Slice, Pad, Split, ReduceMean, TopK,
 * Dropout, Softmax and Upsample. */
static void old_opset_model(ob_model *m) {
  ob_init(m, 9);
  ob_input(m, "x", T_FLOAT, 4, dims_x);
  Onnx__NodeProto *n = ob_node(m, "Clip", "clip", (const char *[]){"x", NULL}, (const char *[]){"a", NULL});
  ob_attr_f(m, n, "max", 6.0f);
  n = ob_node(m, "Slice", "slice", (const char *[]){"a", NULL}, (const char *[]){"s", NULL});
  ob_attr_ints(m, n, "starts", 1, (int64_t[]){1});
  ob_attr_ints(m, n, "ends", 1, (int64_t[]){3});
  ob_attr_ints(m, n, "axes", 1, (int64_t[]){2});
  n = ob_node(m, "Pad", "pad", (const char *[]){"s", NULL}, (const char *[]){"p", NULL});
  ob_attr_ints(m, n, "pads", 8, (int64_t[]){0, 0, 1, 1, 0, 0, 1, 1});
  ob_attr_f(m, n, "value", 0.5f);
  n = ob_node(m, "Split", "split", (const char *[]){"p", NULL}, (const char *[]){"p0", "p1", NULL});
  ob_attr_i(m, n, "axis", 1);
  ob_attr_ints(m, n, "split", 2, (int64_t[]){1, 2});
  n = ob_node(m, "Split", "split2", (const char *[]){"p", NULL}, (const char *[]){"q0", "q1", "q2", NULL});
  n = ob_node(m, "ReduceMean", "rm", (const char *[]){"p0", NULL}, (const char *[]){"m", NULL});
  ob_attr_ints(m, n, "axes", 2, (int64_t[]){2, 3});
  n = ob_node(m, "TopK", "topk", (const char *[]){"m", NULL}, (const char *[]){"tv", "ti", NULL});
  ob_attr_i(m, n, "k", 1);
  n = ob_node(m, "Dropout", "drop", (const char *[]){"p1", NULL}, (const char *[]){"dr", NULL});
  ob_attr_f(m, n, "ratio", 0.25f);
  n = ob_node(m, "Softmax", "sm", (const char *[]){"dr", NULL}, (const char *[]){"sm", NULL});
  n = ob_node(m, "Upsample", "up", (const char *[]){"sm", "scales", NULL}, (const char *[]){"up", NULL});
  ob_attr_s(m, n, "mode", "nearest");
  ob_init_f32(m, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2});
  ob_output(m, "up");
  ob_output(m, "tv");
}

START_TEST(test_old_opset_attributes_become_inputs) {
  ob_model b;
  old_opset_model(&b);
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(import_model(&b, "old.onnx", NULL, &g, &d) == CT_OK, "%s", d.msg);
  ct_op *clip = op_at(g, "clip");
  ck_assert_int_eq(clip->n_in, 3);
  ck_assert_ptr_null(clip->in[1]);
  assert_const_f32_scalar(clip->in[2], 6.0f);
  ct_op *sl = op_at(g, "slice");
  ck_assert_int_eq(sl->n_in, 4);
  assert_const_i64(sl->in[1], 1, (int64_t[]){1});
  assert_const_i64(sl->in[2], 1, (int64_t[]){3});
  assert_const_i64(sl->in[3], 1, (int64_t[]){2});
  ct_op *pad = op_at(g, "pad");
  assert_const_i64(pad->in[1], 8, (int64_t[]){0, 0, 1, 1, 0, 0, 1, 1});
  assert_const_f32_scalar(pad->in[2], 0.5f);
  ck_assert_ptr_null(ct_op_attr(pad, "pads"));
  ck_assert_ptr_null(ct_op_attr(pad, "value"));
  assert_const_i64(op_at(g, "split")->in[1], 2, (int64_t[]){1, 2});
  ck_assert_int_eq(op_at(g, "split2")->n_in, 1);
  ck_assert_int_eq(ct_op_get_int(op_at(g, "split2"), "num_outputs", 0), 3);
  assert_const_i64(op_at(g, "rm")->in[1], 2, (int64_t[]){2, 3});
  assert_const_i64(op_at(g, "topk")->in[1], 1, (int64_t[]){1});
  assert_const_f32_scalar(op_at(g, "drop")->in[1], 0.25f);
  ct_op *sm = op_at(g, "sm");
  ck_assert_int_eq(ct_op_get_int(sm, "coerce_2d", 0), 1);
  ck_assert_int_eq(ct_op_get_int(sm, "axis", -1), 1);
  ct_op *up = op_at(g, "up");
  ck_assert_int_eq(up->kind, CT_OP_RESIZE);
  ck_assert_int_eq(up->n_in, 3);
  ck_assert_ptr_null(up->in[1]);
  ck_assert_str_eq(up->in[2]->name, "scales");
  ck_assert_str_eq(ct_op_get_string(up, "coordinate_transformation_mode", ""), "asymmetric");
  ck_assert_str_eq(ct_op_get_string(up, "nearest_mode", ""), "floor");
  assert_topological(g);
  ct_graph_free(g);
  ob_free(&b);
}
END_TEST

START_TEST(test_legacy_broadcast_and_prelu_slope) {
  ob_model b;
  ob_init(&b, 6);
  ob_input(&b, "a", T_FLOAT, 3, (int64_t[]){2, 3, 4});
  ob_input(&b, "slope", T_FLOAT, 1, (int64_t[]){3});
  ob_init_f32(&b, "c", 1, (int64_t[]){3}, (float[]){1, 2, 3});
  Onnx__NodeProto *n = ob_node(&b, "Add", "add", (const char *[]){"a", "c", NULL}, (const char *[]){"s", NULL});
  ob_attr_i(&b, n, "broadcast", 1);
  ob_attr_i(&b, n, "axis", 1);
  ob_node(&b, "PRelu", "prelu", (const char *[]){"a", "slope", NULL}, (const char *[]){"p", NULL});
  ob_output(&b, "s");
  ob_output(&b, "p");
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(import_model(&b, "legacy.onnx", NULL, &g, &d) == CT_OK, "%s", d.msg);
  /* Add-6 axis 1: the constant [3] becomes [1, 3, 1] (same data) */
  ct_op *add = op_at(g, "add");
  ck_assert_ptr_null(ct_op_attr(add, "axis"));
  ck_assert_ptr_null(ct_op_attr(add, "broadcast"));
  const ct_tensor *ct = add->in[1]->data;
  ck_assert_int_eq(ct->ndim, 3);
  ck_assert_int_eq(ct->shape[0] * 100 + ct->shape[1] * 10 + ct->shape[2], 131);
  ck_assert_mem_eq(ct->data, ((float[]){1, 2, 3}), 12);
  /* PRelu-6 slope [3] per channel: a Reshape to [1, 3, 1] in front of the op */
  ct_op *pr = op_at(g, "prelu");
  ct_op *rs = pr->in[1]->def;
  ck_assert_int_eq(rs->kind, CT_OP_RESHAPE);
  ck_assert_str_eq(rs->in[0]->name, "slope");
  assert_const_i64(rs->in[1], 3, (int64_t[]){1, 3, 1});
  assert_topological(g);
  ct_graph_free(g);
  ob_free(&b);
}
END_TEST

START_TEST(test_input_shape_overrides_and_preprocess) {
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "img", T_FLOAT, 4, (int64_t[]){-1, 3, -1, -1});
  ob_input(&b, "len", T_INT64, 1, (int64_t[]){-1});
  ob_node(&b, "Relu", "r", (const char *[]){"img", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_int_eq(import_model(&b, "sym.onnx", NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "input \"img\": dim 0 (\"N\") is not fixed"));
  ct_onnx_options o = {0};
  ck_assert_int_eq(ct_onnx_parse_input_shapes("img:1x3x640x480,len:7", &o, &d), CT_OK);
  snprintf(o.pixel_format, sizeof o.pixel_format, "bgr");
  o.resize_dims[0] = 700;
  o.resize_dims[1] = 500;
  o.n_mean = 3;
  o.mean[2] = 114;
  o.n_scale = 1;
  o.scale[0] = 1.0 / 255;
  ck_assert_msg(import_model(&b, "sym.onnx", &o, &g, &d) == CT_OK, "%s", d.msg);
  ct_value *in[2];
  ck_assert_int_eq(ct_graph_inputs(g, in, 2), 2);
  ck_assert_int_eq(in[0]->shape[2], 640);
  ck_assert_int_eq(in[1]->shape[0], 7);
  const ct_op *ip = in[0]->def;
  ck_assert_str_eq(ct_op_get_string(ip, "pixel_format", ""), "bgr");
  int n;
  ck_assert_int_eq(ct_op_get_ints(ip, "resize_dims", &n)[1], 500);
  ck_assert_double_eq(ct_op_get_floats(ip, "mean", &n)[2], 114);
  ck_assert_int_eq(n, 3);
  ck_assert_int_eq(ct_op_get_int(ip, "keep_aspect_ratio", -1), 0);
  ck_assert_ptr_null(ct_op_attr(in[1]->def, "pixel_format"));
  ct_graph_free(g);
  /* wrong rank, unknown name, gray on a 3-channel input */
  ct_onnx_options o2 = {0};
  ct_onnx_parse_input_shapes("img:1x3x640,len:7", &o2, &d);
  ck_assert_int_eq(import_model(&b, "sym.onnx", &o2, &g, &d), CT_ERR_USAGE);
  ck_assert_ptr_nonnull(strstr(d.msg, "rank 4"));
  ct_onnx_options o3 = {0};
  ct_onnx_parse_input_shapes("img:1x3x6x6,len:7,foo:1", &o3, &d);
  ck_assert_int_eq(import_model(&b, "sym.onnx", &o3, &g, &d), CT_ERR_USAGE);
  ck_assert_ptr_nonnull(strstr(d.msg, "\"foo\""));
  o.n_mean = 0;
  snprintf(o.pixel_format, sizeof o.pixel_format, "gray");
  ck_assert_int_eq(import_model(&b, "sym.onnx", &o, &g, &d), CT_ERR_USAGE);
  ob_free(&b);
}
END_TEST

START_TEST(test_constant_graph_inputs) {
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 2, (int64_t[]){2, 3});
  ob_input(&b, "shape", T_INT64, 1, (int64_t[]){2});
  ob_node(&b, "Reshape", "rs", (const char *[]){"x", "shape", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  int64_t two = 2;
  ct_tensor *shape = ct_tensor_new(CT_I64, 1, &two, "shape");
  ((int64_t *)shape->data)[0] = 3;
  ((int64_t *)shape->data)[1] = 2;
  const ct_tensor *k[1] = {shape};
  ct_onnx_options o = {0};
  o.n_const_inputs = 1;
  o.const_inputs = k;
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(import_model(&b, "ci.onnx", &o, &g, &d) == CT_OK, "%s", d.msg);
  ct_value *in[2];
  ck_assert_int_eq(ct_graph_inputs(g, in, 2), 1); /* only x stays an Input */
  assert_const_i64(op_at(g, "rs")->in[1], 2, (int64_t[]){3, 2});
  ct_graph_free(g);
  /* unnamed: by position among the graph inputs (x is 0, shape is 1) */
  ct_tensor_set_name(shape, "");
  const ct_tensor *k2[2] = {NULL, shape};
  o.n_const_inputs = 2;
  o.const_inputs = k2;
  ck_assert_msg(import_model(&b, "ci.onnx", &o, &g, &d) == CT_OK, "%s", d.msg);
  assert_const_i64(op_at(g, "rs")->in[1], 2, (int64_t[]){3, 2});
  ct_graph_free(g);
  /* wrong dtype, unknown name */
  ct_tensor *f = ct_tensor_new(CT_F32, 1, &two, "shape");
  const ct_tensor *k3[1] = {f};
  o.n_const_inputs = 1;
  o.const_inputs = k3;
  ck_assert_int_eq(import_model(&b, "ci.onnx", &o, &g, &d), CT_ERR_USAGE);
  ck_assert_ptr_nonnull(strstr(d.msg, "constant input \"shape\""));
  ct_tensor_set_name(f, "nope");
  ck_assert_int_eq(import_model(&b, "ci.onnx", &o, &g, &d), CT_ERR_USAGE);
  ck_assert_ptr_nonnull(strstr(d.msg, "\"nope\""));
  ct_tensor_free(f);
  ct_tensor_free(shape);
  ob_free(&b);
}
END_TEST

START_TEST(test_import_errors) {
  ct_graph *g = NULL;
  ct_diag d;
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 4, dims_x);
  ob_node(&b, "FooBar", "weird", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  ck_assert_int_eq(import_model(&b, "e1.onnx", NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "e1.onnx: node \"weird\" (op FooBar, opset 13): unsupported op"));
  b.nodes[0]->domain = ob_str(&b, "com.microsoft");
  b.nodes[0]->op_type = ob_str(&b, "Relu");
  ck_assert_int_eq(import_model(&b, "e2.onnx", NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "(op com.microsoft.Relu, opset 0): unsupported op"));
  b.nodes[0]->domain = ob_str(&b, "");
  b.nodes[0]->input[0] = ob_str(&b, "nothere");
  ck_assert_int_eq(import_model(&b, "e3.onnx", NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "node \"weird\" (op Relu): input 0 (\"nothere\") is not defined"));
  b.nodes[0]->input[0] = ob_str(&b, "x");
  b.nodes[0]->output[0] = ob_str(&b, "x");
  ck_assert_int_eq(import_model(&b, "e4.onnx", NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "already defined"));
  b.nodes[0]->output[0] = ob_str(&b, "y");
  b.outputs[0]->name = ob_str(&b, "zz");
  ck_assert_int_eq(import_model(&b, "e5.onnx", NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "graph output 0 (\"zz\")"));
  ob_free(&b);
  ck_assert(ct_test_write_file(ct_test_tmp_path("junk.onnx"), "\x0a\xff\xff\xff\xff\x0f", 6));
  ck_assert_int_eq(ct_onnx_import(ct_test_tmp_path("junk.onnx"), NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "not a valid ONNX model"));
  ck_assert_int_eq(ct_onnx_import(ct_test_tmp_path("none.onnx"), NULL, &g, &d), CT_ERR_INPUT);
}
END_TEST

START_TEST(test_external_initializer_in_model_folder) {
  ob_model b;
  ob_init(&b, 13);
  ob_input(&b, "x", T_FLOAT, 1, (int64_t[]){3});
  int64_t three = 3;
  Onnx__TensorProto *t = ob_tensor(&b, "bias", T_FLOAT, 1, &three);
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  Onnx__StringStringEntryProto *e = ob_alloc(&b, sizeof *e);
  onnx__string_string_entry_proto__init(e);
  e->key = ob_str(&b, "location");
  e->value = ob_str(&b, "ext_weights.bin");
  t->n_external_data = 1;
  t->external_data = ob_alloc(&b, sizeof(void *));
  t->external_data[0] = e;
  ob_add_init(&b, t);
  ob_node(&b, "Add", "add", (const char *[]){"x", "bias", NULL}, (const char *[]){"y", NULL});
  ob_output(&b, "y");
  const float v[3] = {0.5f, 1.5f, 2.5f};
  ck_assert(ct_test_write_file(ct_test_tmp_path("ext_weights.bin"), v, sizeof v));
  ct_graph *g = NULL;
  ct_diag d;
  ck_assert_msg(import_model(&b, "ext.onnx", NULL, &g, &d) == CT_OK, "%s", d.msg);
  ck_assert_mem_eq(ct_graph_find_value(g, "bias")->data->data, v, sizeof v);
  ct_graph_free(g);
  e->value = ob_str(&b, "missing_weights.bin");
  ck_assert_int_eq(import_model(&b, "ext.onnx", NULL, &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "missing_weights.bin"));
  ob_free(&b);
}
END_TEST

static Suite *onnx_suite(void) {
  Suite *s = suite_create("onnx");
  TCase *ti = tcase_create("import");
  tcase_add_test(ti, test_import_structure);
  tcase_add_test(ti, test_import_attribute_lists_and_unknown_names);
  tcase_add_test(ti, test_constant_nodes_become_weights);
  tcase_add_test(ti, test_squeeze_opset11_attr_equals_opset13_input);
  tcase_add_test(ti, test_old_opset_attributes_become_inputs);
  tcase_add_test(ti, test_legacy_broadcast_and_prelu_slope);
  tcase_add_test(ti, test_input_shape_overrides_and_preprocess);
  tcase_add_test(ti, test_constant_graph_inputs);
  tcase_add_test(ti, test_import_errors);
  tcase_add_test(ti, test_external_initializer_in_model_folder);
  suite_add_tcase(s, ti);
  return s;
}

int main(void) { return ct_test_run_suite(onnx_suite()); }
