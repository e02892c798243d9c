/* test_text.c: ir/text.h — the text IR: hand-written files in tests/data/text parse and
 * print back byte-identical; parsed contents checked against hand-read values; every parser
 * error with its file:line:col; save/load with weights; corrupt/mismatched weights files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/h5io.h"
#include "ir/text.h"
#include "tests/testutil.h"

static char *data_file(const char *name, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/text/%s", CT_SOURCE_DIR, name);
  char *s = ct_test_read_file(path, n);
  ck_assert_msg(s != NULL, "cannot read %s", path);
  return s;
}

static ct_graph *parse_ok(const char *text, const char *file) {
  ct_graph *g = NULL;
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = ct_ir_parse(text, strlen(text), file, &g, &d);
  ck_assert_msg(st == CT_OK, "parse failed: %s", d.msg);
  return g;
}

static void roundtrip_file(const char *name) {
  size_t n;
  char *text = data_file(name, &n);
  ct_graph *g = parse_ok(text, name);
  char *out;
  size_t len;
  ct_diag d;
  ck_assert_int_eq(ct_ir_print_string(g, &out, &len, &d), CT_OK);
  ck_assert_str_eq(out, text);
  ck_assert_uint_eq(len, n);
  free(out);
  free(text);
  ct_graph_free(g);
}

START_TEST(test_files_roundtrip_byte_identical) {
  roundtrip_file("attrs.top");
  roundtrip_file("quant.tpu");
  roundtrip_file("empty.top");
  roundtrip_file("order.top");
}
END_TEST

static const ct_attr *attr(const ct_op *op, const char *name, ct_attr_kind kind) {
  const ct_attr *a = ct_op_attr(op, name);
  ck_assert_msg(a != NULL, "attribute %s missing", name);
  ck_assert_int_eq(a->kind, kind);
  return a;
}

START_TEST(test_parsed_attribute_kinds_and_values) {
  char *text = data_file("attrs.top", NULL);
  ct_graph *g = parse_ok(text, "attrs.top");
  ck_assert_str_eq(g->name, "attrs");
  ck_assert_str_eq(g->dialect, "top");
  ck_assert_str_eq(g->weights, "attrs.top.h5");
  ck_assert_int_eq(g->n_ops, 10);
  const ct_op *conv = g->ops[2];
  ck_assert_int_eq(conv->kind, CT_OP_CONV);
  ck_assert_int_eq(conv->n_in, 3);
  ck_assert_ptr_null(conv->in[2]);
  ck_assert_str_eq(conv->loc, "/conv/Conv");
  ck_assert_str_eq(conv->out[0]->name, "conv_out");
  /* attribute order as written */
  const char *order[] = {"group", "pads", "strides", "alpha", "tiny", "big", "neg", "pinf", "ninf", "nan",
                         "third", "names", "e_i", "e_f", "e_s", "i_min", "odd name"};
  ck_assert_int_eq(conv->n_attr, 17);
  for (int i = 0; i < 17; i++) ck_assert_str_eq(conv->attrs[i].name, order[i]);
  ck_assert_int_eq(attr(conv, "group", CT_ATTR_INT)->i, 1);
  ck_assert_int_eq(attr(conv, "pads", CT_ATTR_INTS)->n, 4);
  ck_assert(attr(conv, "alpha", CT_ATTR_FLOAT)->f == 1.0);
  ck_assert(attr(conv, "tiny", CT_ATTR_FLOAT)->f == 1e-05);
  ck_assert(attr(conv, "big", CT_ATTR_FLOAT)->f == 1e300);
  ck_assert(signbit(attr(conv, "neg", CT_ATTR_FLOAT)->f) && attr(conv, "neg", CT_ATTR_FLOAT)->f == 0);
  ck_assert(isinf(attr(conv, "pinf", CT_ATTR_FLOAT)->f) && attr(conv, "pinf", CT_ATTR_FLOAT)->f > 0);
  ck_assert(isinf(attr(conv, "ninf", CT_ATTR_FLOAT)->f) && attr(conv, "ninf", CT_ATTR_FLOAT)->f < 0);
  ck_assert(isnan(attr(conv, "nan", CT_ATTR_FLOAT)->f));
  ck_assert(attr(conv, "third", CT_ATTR_FLOAT)->f == 1.0 / 3.0);
  const ct_attr *names = attr(conv, "names", CT_ATTR_STRINGS);
  ck_assert_int_eq(names->n, 2);
  ck_assert_str_eq(names->strs[1], "b\"c");
  ck_assert_int_eq(attr(conv, "e_i", CT_ATTR_INTS)->n, 0);
  ck_assert_int_eq(attr(conv, "e_f", CT_ATTR_FLOATS)->n, 0);
  ck_assert_int_eq(attr(conv, "e_s", CT_ATTR_STRINGS)->n, 0);
  ck_assert(attr(conv, "i_min", CT_ATTR_INT)->i == INT64_MIN);
  ck_assert_int_eq(attr(conv, "odd name", CT_ATTR_INT)->i, -7);
  const ct_op *split = g->ops[4];
  ck_assert_int_eq(split->n_out, 2);
  ck_assert_str_eq(split->out[0]->name, "a");
  ck_assert_str_eq(split->out[1]->name, "b");
  const ct_op *relu = g->ops[5];
  ck_assert_str_eq(relu->loc, "weird \"name\"\twith\\ \x01 ctl \x7f" " and \xc3\xbcn\xc3\xaf" "code");
  ck_assert_str_eq(relu->out[0]->name, "r\n1");
  ck_assert_int_eq(g->ops[6]->out[0]->ndim, 0);
  ck_assert_int_eq(g->ops[7]->out[0]->ndim, 4);
  ck_assert_int_eq(g->ops[8]->out[0]->ndim, -1);
  ck_assert_int_eq(g->ops[9]->out[0]->shape[2], -1);
  const ct_attr *fl = attr(g->ops[9], "floats", CT_ATTR_FLOATS);
  ck_assert(fl->floats[0] == 0.1 && fl->floats[1] == -2.5 && fl->floats[2] == 1e-300);
  ck_assert_int_eq(g->n_outputs, 2);
  ck_assert_str_eq(g->outputs[0]->name, "a");
  ct_graph_free(g);
  free(text);
}
END_TEST

START_TEST(test_parsed_tpu_quant_types) {
  char *text = data_file("quant.tpu", NULL);
  ct_graph *g = parse_ok(text, "quant.tpu");
  ck_assert_str_eq(g->dialect, "tpu");
  ck_assert_str_eq(g->chip, "ctpu-default");
  const ct_value *in = g->ops[0]->out[0], *w = g->ops[1]->out[0], *c = g->ops[3]->out[0];
  ck_assert_int_eq(in->dtype, CT_I8);
  ck_assert_int_eq(in->n_scale, 1);
  ck_assert(in->scale[0] == 0.0213);
  ck_assert_int_eq(in->zero_point[0], 0);
  ck_assert_int_eq(w->n_scale, 2);
  ck_assert(w->scale[0] == 0.1 && w->scale[1] == 0.2);
  ck_assert_int_eq(w->zero_point[1], -3);
  ck_assert_int_eq(c->dtype, CT_U8);
  ck_assert_int_eq(c->zero_point[0], 128);
  ck_assert_int_eq(g->ops[4]->out[0]->dtype, CT_BF16);
  ck_assert_int_eq(g->ops[4]->out[0]->n_scale, 0);
  ct_graph_free(g);
  free(text);
}
END_TEST

START_TEST(test_value_numbers_kept_when_dense) {
  char *text = data_file("order.top", NULL);
  ct_graph *g = parse_ok(text, "order.top");
  ck_assert_str_eq(g->name, "model v2/odd");
  ck_assert_int_eq(g->ops[0]->out[0]->id, 1);
  ck_assert_int_eq(g->ops[1]->out[0]->id, 0);
  ck_assert_ptr_eq(g->values[0], g->ops[1]->out[0]);
  ct_graph_free(g);
  free(text);
  /* with a gap, values are renumbered in order of definition */
  const char *gap = "module @m {\n  %3 = top.Input() : tensor<f32> loc(\"x\")\n  %7 = top.Neg(%3) : tensor<f32> loc(\"y\")\n"
                    "  return %7 : tensor<f32>\n}\n";
  g = parse_ok(gap, "gap.top");
  ck_assert_int_eq(g->ops[0]->out[0]->id, 0);
  ck_assert_int_eq(g->ops[1]->out[0]->id, 1);
  ck_assert_str_eq(g->weights, "");
  ct_graph_free(g);
}
END_TEST

/* Shortest-repr floats: every double survives print → parse bit for bit. */
START_TEST(test_float_attributes_roundtrip_bit_exact) {
  ct_graph *g = ct_graph_new("f", "top");
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 0, NULL);
  ct_op *op = ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x);
  enum { N = 2000 };
  double *v = malloc(sizeof *v * N);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < N; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint64_t bits = s;
    memcpy(&v[i], &bits, 8);
    if (isnan(v[i])) v[i] = (double)i * 0.1;
  }
  v[0] = 5e-324, v[1] = 1.7976931348623157e308, v[2] = 0.1f, v[3] = 100.0, v[4] = -1e16;
  ck_assert(ct_op_set_floats(g, op, "v", N, v));
  ct_graph_set_outputs(g, 1, &x);
  char *out;
  ct_diag d;
  ck_assert_int_eq(ct_ir_print_string(g, &out, NULL, &d), CT_OK);
  ct_graph *h = parse_ok(out, "f.top");
  int n;
  const double *w = ct_op_get_floats(h->ops[0], "v", &n);
  ck_assert_int_eq(n, N);
  ck_assert_mem_eq(w, v, sizeof *v * N);
  ck_assert_ptr_nonnull(strstr(out, "100.0, -1e+16"));
  free(out);
  free(v);
  ct_graph_free(g);
  ct_graph_free(h);
}
END_TEST

/* Each parser error, with the line:col derived by hand from the text (1-based bytes). */
#define HEAD "module @m {\n  %0 = top.Input() : tensor<f32> loc(\"x\")\n"
static const struct {
  const char *text, *msg;
} parse_errors[] = {
    {"module @m {\n  %0 = top.Input( : tensor<f32> loc(\"x\")\n  return\n}\n",
     "t.top:2:19: expected a value (%N or %none)"},
    {"module @m {\n  %0 = top.Input() : tensor<f32> loc(\"x\"\n  return\n}\n", "t.top:3:3: expected ')'"},
    {"module @m {\n  %0 = top.Frobnicate() : tensor<f32> loc(\"x\")\n  return\n}\n",
     "t.top:2:8: unknown op \"top.Frobnicate\""},
    {HEAD "  %1 = top.Relu(%5) : tensor<f32> loc(\"y\")\n  return\n}\n", "t.top:3:17: use of undefined value %5"},
    {HEAD "  %1 = top.Relu(%1) : tensor<f32> loc(\"y\")\n  return\n}\n", "t.top:3:17: use of undefined value %1"},
    {HEAD "  %0 = top.Relu(%0) : tensor<f32> loc(\"y\")\n  return\n}\n", "t.top:3:3: duplicate definition of %0"},
    {HEAD "  %1 = top.Add(%0) : tensor<f32> loc(\"y\")\n  return\n}\n", "t.top:3:8: op Add takes 2..2 operands, got 1"},
    {HEAD "  %1, %2 = top.Relu(%0) : tensor<f32>, tensor<f32> loc(\"y\" -> [\"a\", \"b\"])\n  return\n}\n",
     "t.top:3:12: op Relu has 1..1 results, got 2"},
    {"module @m {\n  %0 = top.Input() : tensor<2xf33> loc(\"x\")\n  return\n}\n", "t.top:2:31: unknown element type \"f33\""},
    {"module @m {\n  %0 = top.Input() : tensor<1x2x3x4x5x6x7x8x9xf32> loc(\"x\")\n  return\n}\n",
     "t.top:2:45: more than 8 dimensions"},
    {"module @m {\n  %0 = top.Input() : tensor<f32> loc(\"a\\qb\")\n  return\n}\n", "t.top:2:40: bad escape '\\q' in string"},
    {"module @m {\n  %0 = top.Input() : tensor<f32> loc(\"a\\x00\")\n  return\n}\n", "t.top:2:40: string contains a NUL byte"},
    {"module @m {\n  %0 = top.Input() : tensor<f32> loc(\"abc)\n  return\n}\n", "t.top:2:38: unterminated string"},
    {"module @m attributes {chip = \"\", colour = \"red\"} {\n  return\n}\n",
     "t.top:1:34: unknown module attribute \"colour\""},
    {"module @m {\n  %0 = top.Input() {axes = []} : tensor<f32> loc(\"x\")\n  return\n}\n", "t.top:2:30: expected ':'"},
    {"module @m {\n  %0 = top.Input() {axes = [] : i32} : tensor<f32> loc(\"x\")\n  return\n}\n",
     "t.top:2:33: expected the kind of an empty list (i64, f64 or str)"},
    {"module @m {\n  %0 = top.Input() {a = 1, a = 2} : tensor<f32> loc(\"x\")\n  return\n}\n",
     "t.top:2:28: duplicate attribute \"a\""},
    {"module @m {\n  %0 = top.Input() {a = 99999999999999999999} : tensor<f32> loc(\"x\")\n  return\n}\n",
     "t.top:2:25: integer 99999999999999999999 out of range"},
    {"module @m {\n  %0 = top.Input() {a = [1, \"s\"]} : tensor<f32> loc(\"x\")\n  return\n}\n",
     "t.top:2:29: list mixes strings and numbers"},
    {HEAD "  %1 = tpu.Relu(%0) : tensor<f32> loc(\"y\")\n  return\n}\n", "t.top:3:8: op \"tpu.Relu\" in a \"top\" module"},
    {HEAD "  %1 = xyz.Relu(%0) : tensor<f32> loc(\"y\")\n  return\n}\n", "t.top:3:8: unknown dialect in op \"xyz.Relu\""},
    {HEAD "  return %0 : tensor<i8>\n}\n", "t.top:3:15: return type 0 differs from the type of value \"x\""},
    {HEAD "  return %0 : tensor<f32>\n}\n}\n", "t.top:5:1: expected end of file after the module"},
    {"module @m {\n}\n", "t.top:2:1: expected an op or 'return'"},
    {HEAD "  return", "t.top:3:9: expected '}', found end of file"},
    {HEAD "  %1 = top.Relu(%0) : tensor<f32> loc(\"y\" -> [\"a\", \"b\"])\n  return\n}\n",
     "t.top:3:52: more result names than the 1 results"},
    {HEAD "  %1 = top.Relu(%0) : tensor<f32>, tensor<f32> loc(\"y\")\n  return\n}\n",
     "t.top:3:34: more types than the 1 results"},
    {"module @m {\n  %0 = top.Input() : tensor<1x2xf32 !quant<[0.5, 0.25], [1]>> loc(\"x\")\n  return\n}\n",
     "t.top:2:57: expected 2 integer zero point(s)"},
    {"model @m {\n}\n", "t.top:1:1: expected 'module'"},
};

START_TEST(test_parse_errors_name_file_line_col) {
  for (size_t i = 0; i < sizeof parse_errors / sizeof parse_errors[0]; i++) {
    ct_graph *g = (ct_graph *)1;
    ct_diag d;
    ct_diag_clear(&d);
    ct_status st = ct_ir_parse(parse_errors[i].text, strlen(parse_errors[i].text), "t.top", &g, &d);
    ck_assert_msg(st == CT_ERR_INPUT, "case %zu: status %d (%s)", i, st, d.msg);
    ck_assert_ptr_null(g);
    ck_assert_msg(strcmp(d.msg, parse_errors[i].msg) == 0, "case %zu: got \"%s\", want \"%s\"", i, d.msg,
                  parse_errors[i].msg);
  }
}
END_TEST

/* Bad input never crashes: every truncation and every single-byte corruption of a valid
 * file is either parsed or rejected with a positioned message. */
START_TEST(test_truncated_and_corrupted_inputs) {
  size_t n;
  char *text = data_file("attrs.top", &n);
  ct_diag d;
  for (size_t k = 0; k + 1 < n; k++) { /* n - 1 drops only the final newline: valid */
    ct_graph *g = NULL;
    ct_status st = ct_ir_parse(text, k, "cut.top", &g, &d);
    ck_assert_msg(st == CT_ERR_INPUT, "prefix %zu: status %d", k, st);
    ck_assert(strncmp(d.msg, "cut.top:", 8) == 0);
  }
  const char subst[] = "%\\\"[]{}()<>,=:x0-.e!\n\x01";
  for (size_t k = 0; k < n; k++) {
    char keep = text[k];
    text[k] = subst[k % (sizeof subst - 1)];
    ct_graph *g = NULL;
    ct_status st = ct_ir_parse(text, n, "bad.top", &g, &d);
    ck_assert_msg(st == CT_OK || st == CT_ERR_INPUT, "byte %zu: status %d", k, st);
    ct_graph_free(g);
    text[k] = keep;
  }
  free(text);
}
END_TEST

/* ---- save / load ---- */

/* x: Input 1x2x3x3 f32; w: Weight 4x2x1x1 f32 (w[i] = i/2); s: Weight [2] i64; y = Conv(x, w). */
static ct_graph *weights_graph(void) {
  ct_graph *g = ct_graph_new("m", "top");
  int64_t xs[4] = {1, 2, 3, 3}, ws[4] = {4, 2, 1, 1}, ss[1] = {2}, ys[4] = {1, 4, 3, 3};
  ct_value *x = ct_graph_add_value(g, "x", CT_F32, 4, xs);
  ct_graph_add_op(g, CT_OP_INPUT, "x", 0, NULL, 1, &x);
  ct_tensor *wt = ct_tensor_new(CT_F32, 4, ws, "w");
  for (int i = 0; i < 8; i++) ((float *)wt->data)[i] = (float)i / 2;
  ct_value *w = ct_graph_add_weight(g, NULL, wt);
  ct_tensor *st = ct_tensor_new(CT_I64, 1, ss, "s");
  ((int64_t *)st->data)[0] = -5, ((int64_t *)st->data)[1] = 1LL << 40;
  ct_value *sv = ct_graph_add_weight(g, NULL, st);
  (void)sv;
  ct_value *y = ct_graph_add_value(g, "y", CT_F32, 4, ys);
  ct_value *in[3] = {x, w, NULL};
  ct_op *op = ct_graph_add_op(g, CT_OP_CONV, "conv", 3, in, 1, &y);
  int64_t k[2] = {1, 1};
  ct_op_set_ints(g, op, "kernel_shape", 2, k);
  ct_graph_set_outputs(g, 1, &y);
  return g;
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

START_TEST(test_save_load_roundtrip_with_weights) {
  ct_graph *g = weights_graph();
  ct_diag d;
  const char *path = ct_test_tmp_path("m.top");
  ck_assert_msg(ct_ir_save(g, path, &d) == CT_OK, "%s", d.msg);
  ck_assert_str_eq(g->weights, "m.top.h5");
  ck_assert(exists(ct_test_tmp_path("m.top.h5")));
  char *saved = ct_test_read_file(path, NULL), *printed;
  ck_assert_int_eq(ct_ir_print_string(g, &printed, NULL, &d), CT_OK);
  ck_assert_str_eq(saved, printed);
  ct_graph *h;
  ck_assert_msg(ct_ir_load(path, &h, &d) == CT_OK, "%s", d.msg);
  char *again;
  ck_assert_int_eq(ct_ir_print_string(h, &again, NULL, &d), CT_OK);
  ck_assert_str_eq(again, saved);
  const ct_value *w = ct_graph_find_value(h, "w"), *s = ct_graph_find_value(h, "s");
  ck_assert_ptr_nonnull(w->data);
  ck_assert_int_eq(w->data->dtype, CT_F32);
  ck_assert(((float *)w->data->data)[7] == 3.5f);
  ck_assert_int_eq(((int64_t *)s->data->data)[1], 1LL << 40);
  ck_assert_ptr_null(ct_graph_find_value(h, "x")->data);
  free(saved);
  free(printed);
  free(again);
  ct_graph_free(g);
  ct_graph_free(h);
}
END_TEST

START_TEST(test_save_without_weight_data_fails_cleanly) {
  ct_graph *g = weights_graph();
  ct_value *w = ct_graph_find_value(g, "w");
  ct_tensor_free(w->data);
  w->data = NULL;
  ct_diag d;
  const char *path = ct_test_tmp_path("nodata.top");
  ck_assert_int_eq(ct_ir_save(g, path, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "weight \"w\" has no data"));
  ck_assert(!exists(path));
  ck_assert(!exists(ct_test_tmp_path("nodata.top.h5")));
  ck_assert_str_eq(g->weights, "");
  ct_graph_free(g);
}
END_TEST

static void write_text(const char *name, const char *text) {
  ck_assert(ct_test_write_file(ct_test_tmp_path(name), text, strlen(text)));
}

static void load_fails(const char *name, const char *want) {
  ct_graph *g = (ct_graph *)1;
  ct_diag d;
  ct_diag_clear(&d);
  ck_assert_int_eq(ct_ir_load(ct_test_tmp_path(name), &g, &d), CT_ERR_INPUT);
  ck_assert_ptr_null(g);
  ck_assert_msg(strstr(d.msg, want) != NULL, "got \"%s\", want \"%s\"", d.msg, want);
}

#define WMOD(w) "module @m attributes {chip = \"\", weights = \"" w "\"} {\n"
/* Per-channel quant params name their axis when it is not 0; the text round-trips. */
START_TEST(test_quant_axis_roundtrip) {
  const char *text = "module @q {\n  %0 = tpu.Input() : tensor<1x2x4x4xi8 !quant<[0.1, 0.2], [0, -3], axis = 1>> loc(\"x\")\n"
                     "  return %0 : tensor<1x2x4x4xi8 !quant<[0.1, 0.2], [0, -3], axis = 1>>\n}\n";
  ct_graph *g = parse_ok(text, "q.tpu");
  ck_assert_int_eq(g->values[0]->n_scale, 2);
  ck_assert_int_eq(g->values[0]->quant_axis, 1);
  char *out;
  ct_diag d;
  ck_assert_int_eq(ct_ir_print_string(g, &out, NULL, &d), CT_OK);
  ck_assert_msg(strstr(out, "!quant<[0.1, 0.2], [0, -3], axis = 1>>") != NULL, "%s", out);
  free(out);
  ct_graph_free(g);
}
END_TEST

/* The op table's attribute schemas: an unknown or mistyped attribute in a .top file is an
 * error naming file:line, node and attribute; an integer written for a float is a float. */
START_TEST(test_load_checks_attribute_schema) {
  static const char *const head = "module @m {\n  %0 = top.Input() : tensor<1x4xf32> loc(\"x\")\n";
  static const struct { const char *op, *want; } cases[] = {
      {"top.Softmax(%0) {axis = 1.5}", "a.top:3: node \"s\" (op Softmax): attribute \"axis\": expected an int"},
      {"top.Softmax(%0) {axes = 1}", "a.top:3: node \"s\" (op Softmax): attribute \"axes\": unknown attribute"},
      {"top.Relu(%0) {axis = 1}", "a.top:3: node \"s\" (op Relu): attribute \"axis\": unknown attribute"},
      {"top.LeakyRelu(%0) {alpha = [1.0]}", "attribute \"alpha\": expected a float attribute"},
  };
  char text[512];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(text, sizeof text, "%s  %%1 = %s : tensor<1x4xf32> loc(\"s\")\n  return %%1 : tensor<1x4xf32>\n}\n", head,
             cases[i].op);
    write_text("a.top", text);
    load_fails("a.top", cases[i].want);
  }
  snprintf(text, sizeof text, "%s  %%1 = top.LeakyRelu(%%0) {alpha = 2} : tensor<1x4xf32> loc(\"s\")\n"
           "  return %%1 : tensor<1x4xf32>\n}\n", head);
  write_text("a.top", text);
  ct_graph *g;
  ct_diag d;
  ck_assert_msg(ct_ir_load(ct_test_tmp_path("a.top"), &g, &d) == CT_OK, "%s", d.msg);
  ck_assert_double_eq(ct_attr_leakyrelu_alpha(g->ops[1]), 2.0);
  ck_assert_int_eq(g->ops[1]->attrs[0].kind, CT_ATTR_FLOAT);
  ct_graph_free(g);
}
END_TEST

START_TEST(test_load_errors) {
  load_fails("absent.top", "absent.top: cannot read");
  write_text("bad.top", WMOD("bad.top.h5") "  %0 = top.Weight() : tensor<2xf32> loc(\"w\")\n  return %0 : tensor<2xf32>\n}\n");
  write_text("bad.top.h5", "this is not an HDF5 file");
  load_fails("bad.top", "bad.top.h5");
  write_text("syn.top", WMOD("") "  %0 = top.Weight() tensor<2xf32> loc(\"w\")\n  return\n}\n");
  load_fails("syn.top", "syn.top:2:21: expected ':'");
  write_text("now.top", WMOD("") "  %0 = top.Weight() : tensor<2xf32> loc(\"w\")\n  return\n}\n");
  load_fails("now.top", "now.top: module has Weight ops but names no weights file");
  write_text("gone.top", WMOD("gone.top.h5") "  %0 = top.Weight() : tensor<2xf32> loc(\"w\")\n  return\n}\n");
  load_fails("gone.top", "gone.top.h5");
  /* a real weights file whose tensors differ from the IR */
  ct_graph *g = weights_graph();
  ct_diag d;
  ck_assert_int_eq(ct_ir_save(g, ct_test_tmp_path("mm.top"), &d), CT_OK);
  ct_graph_free(g);
  write_text("shape.top", WMOD("mm.top.h5") "  %0 = top.Weight() : tensor<4x2xf32> loc(\"w\")\n  return\n}\n");
  load_fails("shape.top", "mm.top.h5: weight \"w\": IR says 4x2xf32, file has 4x2x1x1xf32");
  write_text("dtype.top", WMOD("mm.top.h5") "  %0 = top.Weight() : tensor<2xi32> loc(\"s\")\n  return\n}\n");
  load_fails("dtype.top", "mm.top.h5: weight \"s\": IR says 2xi32, file has 2xi64");
  write_text("name.top", WMOD("mm.top.h5") "  %0 = top.Weight() : tensor<2xi64> loc(\"nope\")\n  return\n}\n");
  load_fails("name.top", "mm.top.h5: no dataset for weight \"nope\"");
}
END_TEST

/* A few thousand ops (the size of the largest real model) print and parse in milliseconds. */
START_TEST(test_large_graph_speed) {
  ct_graph *g = ct_graph_new("big", "top");
  int64_t sh[4] = {1, 64, 56, 56};
  ct_value *v = ct_graph_add_value(g, "in", CT_F32, 4, sh);
  ct_graph_add_op(g, CT_OP_INPUT, "in", 0, NULL, 1, &v);
  int64_t pads[4] = {1, 1, 1, 1};
  for (int i = 0; i < 5000; i++) {
    char name[64];
    snprintf(name, sizeof name, "/block.%d/act/Relu_output_0", i);
    ct_value *o = ct_graph_add_value(g, name, CT_F32, 4, sh);
    ct_op *op = ct_graph_add_op(g, i % 2 ? CT_OP_RELU : CT_OP_SIGMOID, name + 1, 1, &v, 1, &o);
    ct_op_set_ints(g, op, "pads", 4, pads);
    ct_op_set_float(g, op, "alpha", 0.1 * i);
    v = o;
  }
  ct_graph_set_outputs(g, 1, &v);
  struct timespec t0, t1, t2;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char *text;
  size_t len;
  ct_diag d;
  ck_assert_int_eq(ct_ir_print_string(g, &text, &len, &d), CT_OK);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ct_graph *h = parse_ok(text, "big.top");
  clock_gettime(CLOCK_MONOTONIC, &t2);
  double pm = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  double qm = (t2.tv_sec - t1.tv_sec) * 1e3 + (t2.tv_nsec - t1.tv_nsec) / 1e6;
  printf("text: 5001 ops, %zu bytes: print %.1f ms, parse %.1f ms\n", len, pm, qm);
  ck_assert_int_eq(h->n_ops, 5001);
  ck_assert_msg(pm < 1000 && qm < 1000, "print %.1f ms / parse %.1f ms", pm, qm);
  free(text);
  ct_graph_free(g);
  ct_graph_free(h);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("text");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_files_roundtrip_byte_identical);
  tcase_add_test(tc, test_parsed_attribute_kinds_and_values);
  tcase_add_test(tc, test_parsed_tpu_quant_types);
  tcase_add_test(tc, test_value_numbers_kept_when_dense);
  tcase_add_test(tc, test_float_attributes_roundtrip_bit_exact);
  tcase_add_test(tc, test_parse_errors_name_file_line_col);
  tcase_add_test(tc, test_truncated_and_corrupted_inputs);
  tcase_add_test(tc, test_save_load_roundtrip_with_weights);
  tcase_add_test(tc, test_save_without_weight_data_fails_cleanly);
  tcase_add_test(tc, test_load_errors);
  tcase_add_test(tc, test_load_checks_attribute_schema);
  tcase_add_test(tc, test_quant_axis_roundtrip);
  tcase_add_test(tc, test_large_graph_speed);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return ct_test_run_suite(suite()); }
