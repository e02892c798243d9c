/* cmd_transform.c: `ctpu transform MODEL.onnx -o OUT.top`: the front end — ONNX import,
 * shape propagation + constant folding, canonicalize, verify, save (TPU-MLIR's
 * model_transform.py is the model of the command line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "onnx/onnx.h"
#include "compiler/pass.h"
#include "compiler/propagate.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tools/tools.h"

#define CMD "transform"

#define MAX_CONST_INPUTS 64

typedef struct transform_args {
  const char *model, *out;
  bool no_canonicalize;
  bool pad_value_given;
  ct_onnx_options opt;
  int n_const;
  const char *const_spec[MAX_CONST_INPUTS]; /* NAME=FILE.pb or FILE.pb, as given */
  ct_tensor *consts[MAX_CONST_INPUTS];      /* read by load_consts */
} transform_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu transform MODEL.onnx -o OUT.top [options]\n"
          "  imports an ONNX model into the Top IR: OUT.top (text) + OUT.top.h5 (weights)\n"
          "  --input-shapes N:DxD..,N2:..  fix input shapes (symbolic dims), e.g. images:1x3x640x640\n"
          "  --pixel-format rgb|bgr|gray    image inputs: channel order of the pixels\n"
          "  --resize-dims H,W              image inputs: resize to H x W before the center crop\n"
          "  --keep-aspect-ratio            image inputs: resize keeping the aspect ratio\n"
          "  --pad-type normal|center       image inputs: fit the image inside H x W and pad it\n"
          "                                 (letterbox; normal: image at the top left) instead of\n"
          "                                 the center crop; implies --keep-aspect-ratio\n"
          "  --pad-value V                  image inputs: padding pixel value 0..255 (default 0)\n"
          "  --mean a,b,c                   image inputs: x = (pixel - mean) * scale, pixels 0..255\n"
          "  --scale a,b,c\n"
          "  --no-canonicalize              skip the canonicalize pipeline\n"
          "  --const-input NAME=FILE.pb     bind graph input NAME to the tensor in FILE.pb (a compile-time\n"
          "                                 constant, e.g. a Reshape shape); FILE.pb alone uses the tensor's\n"
          "                                 own name. Repeatable; bound inputs are not inputs of infer\n"
          "  --max-memory BYTES[K|M|G]  largest tensor to allocate (default: half the physical memory)\n");
}

static int parse_resize(const char *s, transform_args *a) {
  double v[2];
  int n;
  ct_diag d;
  if (ct_onnx_parse_floats("--resize-dims", s, v, 2, &n, &d) || n != 2 || v[0] < 1 || v[1] < 1 || v[0] > 1e6 ||
      v[1] > 1e6 || v[0] != (int64_t)v[0] || v[1] != (int64_t)v[1])
    return ct_tool_usage(CMD, "--resize-dims needs H,W (positive integers), not \"%s\"", s);
  a->opt.resize_dims[0] = (int64_t)v[0];
  a->opt.resize_dims[1] = (int64_t)v[1];
  return 0;
}

/* Handles one option that takes a value; returns 0, or an exit code. */
static int parse_valued(const char *s, const char *val, transform_args *a) {
  ct_diag d;
  ct_onnx_options *o = &a->opt;
  if (!strcmp(s, "-o")) a->out = val;
  else if (!strcmp(s, "--input-shapes")) {
    if (ct_onnx_parse_input_shapes(val, o, &d)) return ct_tool_usage(CMD, "%s", d.msg);
  } else if (!strcmp(s, "--pixel-format")) {
    if (strcmp(val, "rgb") && strcmp(val, "bgr") && strcmp(val, "gray"))
      return ct_tool_usage(CMD, "--pixel-format must be rgb, bgr or gray, not \"%s\"", val);
    snprintf(o->pixel_format, sizeof o->pixel_format, "%s", val);
  } else if (!strcmp(s, "--pad-type")) {
    if (strcmp(val, "normal") && strcmp(val, "center"))
      return ct_tool_usage(CMD, "--pad-type must be normal or center, not \"%s\"", val);
    snprintf(o->pad_type, sizeof o->pad_type, "%s", val);
    o->keep_aspect_ratio = true;
  } else if (!strcmp(s, "--pad-value")) {
    int n = 0;
    if (ct_onnx_parse_floats("--pad-value", val, &o->pad_value, 1, &n, &d)) return ct_tool_usage(CMD, "%s", d.msg);
    a->pad_value_given = true;
    if (!(o->pad_value >= 0 && o->pad_value <= 255))
      return ct_tool_usage(CMD, "--pad-value must be a pixel value in 0..255, not \"%s\"", val);
  } else if (!strcmp(s, "--resize-dims")) {
    return parse_resize(val, a);
  } else if (!strcmp(s, "--mean")) {
    if (ct_onnx_parse_floats("--mean", val, o->mean, CT_ONNX_MAX_CHANNELS, &o->n_mean, &d))
      return ct_tool_usage(CMD, "%s", d.msg);
  } else if (!strcmp(s, "--const-input")) {
    if (a->n_const == MAX_CONST_INPUTS) return ct_tool_usage(CMD, "more than %d --const-input", MAX_CONST_INPUTS);
    if (!val[0] || val[0] == '=' || val[strlen(val) - 1] == '=')
      return ct_tool_usage(CMD, "--const-input needs NAME=FILE.pb or FILE.pb, not \"%s\"", val);
    a->const_spec[a->n_const++] = val;
  } else if (!strcmp(s, "--scale")) {
    if (ct_onnx_parse_floats("--scale", val, o->scale, CT_ONNX_MAX_CHANNELS, &o->n_scale, &d))
      return ct_tool_usage(CMD, "%s", d.msg);
  } else {
    return ct_tool_usage(CMD, "unknown option \"%s\"", s);
  }
  return 0;
}

static bool takes_value(const char *s) {
  static const char *const valued[] = {"-o", "--input-shapes", "--pixel-format", "--resize-dims", "--mean", "--scale",
                                        "--const-input", "--pad-type", "--pad-value"};
  for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
    if (!strcmp(s, valued[i])) return true;
  return false;
}

/* Parses argv into a; returns 0, an exit code, or -1 after printing --help. */
static int parse_args(int argc, char **argv, transform_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
    if (!strcmp(s, "--no-canonicalize")) a->no_canonicalize = true;
    else if (!strcmp(s, "--keep-aspect-ratio")) a->opt.keep_aspect_ratio = true;
    else if (takes_value(s)) {
      if (i + 1 >= argc) return ct_tool_usage(CMD, "%s needs a value", s);
      int rc = parse_valued(s, argv[++i], a);
      if (rc) return rc;
    } else if (s[0] == '-' && s[1]) {
      return ct_tool_usage(CMD, "unknown option \"%s\"", s);
    } else if (!a->model) {
      a->model = s;
    } else {
      return ct_tool_usage(CMD, "unexpected argument \"%s\"", s);
    }
  }
  if (a->pad_value_given && !a->opt.pad_type[0]) return ct_tool_usage(CMD, "--pad-value needs --pad-type");
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o OUT.top)");
  return 0;
}

/* import → propagate → canonicalize → verify → save to tmp (the outset's temporary path). */
static ct_status run(const transform_args *a, const char *tmp, ct_diag *d) {
  ct_graph *g = NULL;
  ct_status st = ct_onnx_import(a->model, &a->opt, &g, d);
  if (st) return st;
  if ((st = ct_top_propagate(g, d)) != CT_OK) ct_diag_prefix(d, "%s: ", a->model);
  if (!st && !a->no_canonicalize && (st = ct_pass_run_pipeline(g, "canonicalize", NULL, d)) != CT_OK)
    ct_diag_prefix(d, "%s: canonicalize: ", a->model);
  if (!st && (st = ct_ir_verify(g, d)) != CT_OK) ct_diag_prefix(d, "%s: ", a->model);
  if (!st) st = ct_ir_save(g, tmp, d);
  ct_graph_free(g);
  return st;
}

/* Reads every --const-input tensor (named NAME when given) into a->consts / a->opt. */
static ct_status load_consts(transform_args *a, ct_diag *d) {
  for (int i = 0; i < a->n_const; i++) {
    const char *spec = a->const_spec[i], *eq = strchr(spec, '='), *file = eq ? eq + 1 : spec;
    ct_status st = ct_onnx_read_tensor_pb(file, &a->consts[i], d);
    if (st) return st;
    if (eq) {
      char name[CT_ONNX_NAME_MAX];
      if ((size_t)(eq - spec) >= sizeof name) return ct_diag_set(d, CT_ERR_USAGE, "--const-input: name too long");
      memcpy(name, spec, (size_t)(eq - spec));
      name[eq - spec] = '\0';
      if (!ct_tensor_set_name(a->consts[i], name)) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    } else if (!a->consts[i]->name || !a->consts[i]->name[0]) {
      return ct_diag_set(d, CT_ERR_USAGE, "--const-input %s: the tensor has no name; write NAME=%s", file, file);
    }
  }
  a->opt.n_const_inputs = a->n_const;
  a->opt.const_inputs = (const ct_tensor *const *)a->consts;
  return CT_OK;
}

/* OUT.top and OUT.top.h5, all or nothing (common/outset.h). */
static ct_status run_outputs(transform_args *a, ct_diag *d) {
  ct_outset o;
  ct_outset_init(&o, CMD);
  const char *tmp, *tmp_h5;
  ct_status st = ct_outset_input(&o, a->model, d);
  size_t n = strlen(a->out) + 4;
  char *h5 = malloc(n);
  if (!h5) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  snprintf(h5, n, "%s.h5", a->out);
  if (!st) st = ct_outset_add(&o, a->out, &tmp, d);
  if (!st) st = ct_outset_add(&o, h5, &tmp_h5, d);
  free(h5);
  for (int i = 0; !st && i < a->n_const; i++) {
    const char *eq = strchr(a->const_spec[i], '=');
    st = ct_outset_input(&o, eq ? eq + 1 : a->const_spec[i], d);
  }
  if (!st) st = load_consts(a, d);
  if (!st) st = run(a, tmp, d);
  if (st) ct_outset_abort(&o);
  else st = ct_outset_commit(&o, d);
  return st;
}

int ct_cmd_transform(int argc, char **argv) {
  transform_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_status st = run_outputs(&a, &d);
  for (int i = 0; i < a.n_const; i++) ct_tensor_free(a.consts[i]);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
