/* cmd_transform.c: `ctpu transform MODEL.onnx -o OUT.top`: the front end — ONNX import,
 * shape propagation + constant folding, canonicalize, verify, save (TPU-MLIR's
 * model_transform.py is the model of the command line). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "onnx/onnx.h"
#include "compiler/pass.h"
#include "compiler/propagate.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tools/files.h"
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

static int set_resize(void *args, const char *cmd, const ct_opt *o, const char *s) {
  transform_args *a = args;
  double v[2];
  int n;
  ct_diag d;
  if (ct_onnx_parse_floats(o->name, s, v, 2, &n, &d) || n != 2 || v[0] < 1 || v[1] < 1 || v[0] > 1e6 || v[1] > 1e6 ||
      v[0] != (int64_t)v[0] || v[1] != (int64_t)v[1])
    return ct_tool_usage(cmd, "%s needs H,W (positive integers), not \"%s\"", o->name, s);
  a->opt.resize_dims[0] = (int64_t)v[0];
  a->opt.resize_dims[1] = (int64_t)v[1];
  return 0;
}

static int set_shapes(void *args, const char *cmd, const ct_opt *o, const char *v) {
  (void)o;
  ct_diag d;
  return ct_onnx_parse_input_shapes(v, &((transform_args *)args)->opt, &d) ? ct_tool_usage(cmd, "%s", d.msg) : 0;
}

static int set_pixel_format(void *args, const char *cmd, const ct_opt *o, const char *v) {
  if (strcmp(v, "rgb") && strcmp(v, "bgr") && strcmp(v, "gray"))
    return ct_tool_usage(cmd, "%s must be rgb, bgr or gray, not \"%s\"", o->name, v);
  transform_args *a = args;
  snprintf(a->opt.pixel_format, sizeof a->opt.pixel_format, "%s", v);
  return 0;
}

static int set_pad_type(void *args, const char *cmd, const ct_opt *o, const char *v) {
  if (strcmp(v, "normal") && strcmp(v, "center")) return ct_tool_usage(cmd, "%s must be normal or center, not \"%s\"", o->name, v);
  transform_args *a = args;
  snprintf(a->opt.pad_type, sizeof a->opt.pad_type, "%s", v);
  a->opt.keep_aspect_ratio = true;
  return 0;
}

static int set_pad_value(void *args, const char *cmd, const ct_opt *o, const char *v) {
  transform_args *a = args;
  int n = 0;
  ct_diag d;
  if (ct_onnx_parse_floats(o->name, v, &a->opt.pad_value, 1, &n, &d)) return ct_tool_usage(cmd, "%s", d.msg);
  a->pad_value_given = true;
  if (!(a->opt.pad_value >= 0 && a->opt.pad_value <= 255))
    return ct_tool_usage(cmd, "%s must be a pixel value in 0..255, not \"%s\"", o->name, v);
  return 0;
}

/* --mean / --scale: up to CT_ONNX_MAX_CHANNELS numbers. */
static int set_floats(void *args, const char *cmd, const ct_opt *o, const char *v) {
  ct_onnx_options *p = &((transform_args *)args)->opt;
  bool mean = !strcmp(o->name, "--mean");
  ct_diag d;
  if (ct_onnx_parse_floats(o->name, v, mean ? p->mean : p->scale, CT_ONNX_MAX_CHANNELS, mean ? &p->n_mean : &p->n_scale, &d))
    return ct_tool_usage(cmd, "%s", d.msg);
  return 0;
}

static int add_const(void *args, const char *cmd, const ct_opt *o, const char *v) {
  transform_args *a = args;
  if (a->n_const == MAX_CONST_INPUTS) return ct_tool_usage(cmd, "more than %d %s", MAX_CONST_INPUTS, o->name);
  if (!v[0] || v[0] == '=' || v[strlen(v) - 1] == '=')
    return ct_tool_usage(cmd, "%s needs NAME=FILE.pb or FILE.pb, not \"%s\"", o->name, v);
  a->const_spec[a->n_const++] = v;
  return 0;
}

static const ct_opt opts[] = {
    CT_OPT_NEED_("-o", "OUT.top", transform_args, out, "output", "the Top module (text) and OUT.top.h5 (weights)"),
    CT_OPT_FN_("--input-shapes", "N:DxD..,N2:..", set_shapes, "fix input shapes (symbolic dims), e.g. images:1x3x640x640"),
    CT_OPT_FN_("--pixel-format", "rgb|bgr|gray", set_pixel_format, "image inputs: channel order of the pixels"),
    CT_OPT_FN_("--resize-dims", "H,W", set_resize, "image inputs: resize to H x W before the center crop"),
    CT_OPT_FLAG_("--keep-aspect-ratio", transform_args, opt.keep_aspect_ratio, "image inputs: resize keeping the aspect ratio"),
    CT_OPT_FN_("--pad-type", "normal|center", set_pad_type,
               "image inputs: fit the image inside H x W and pad it (letterbox; normal: image at the top left) instead of "
               "the center crop; implies --keep-aspect-ratio"),
    CT_OPT_FN_("--pad-value", "V", set_pad_value, "image inputs: padding pixel value 0..255 (default 0)"),
    CT_OPT_FN_("--mean", "a,b,c", set_floats, "image inputs: x = (pixel - mean) * scale, pixels 0..255"),
    CT_OPT_FN_("--scale", "a,b,c", set_floats, "image inputs: the scale of --mean's formula"),
    CT_OPT_FLAG_("--no-canonicalize", transform_args, no_canonicalize, "skip the canonicalize pipeline"),
    CT_OPT_FN_("--const-input", "NAME=FILE.pb", add_const,
               "bind graph input NAME to the tensor in FILE.pb (a compile-time constant, e.g. a Reshape shape); FILE.pb "
               "alone uses the tensor's own name. Repeatable; bound inputs are not inputs of infer"),
    CT_OPT_MAX_MEMORY,
};

const ct_cmd_spec ct_cmd_transform_spec = CT_CMD_SPEC1(
    CMD, "MODEL.onnx -o OUT.top [options]",
    "imports an ONNX model into the Top IR: OUT.top (text) + OUT.top.h5 (weights)",
    "model", transform_args, model, opts);

/* Parses argv into a; returns 0, an exit code, or -1 after printing --help. */
static int parse_args(int argc, char **argv, transform_args *a) {
  memset(a, 0, sizeof *a);
  int rc = ct_opts_parse(&ct_cmd_transform_spec, argc, argv, a);
  if (!rc && a->pad_value_given && !a->opt.pad_type[0]) return ct_tool_usage(CMD, "--pad-value needs --pad-type");
  return rc;
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

/* ct_onnx_options.on_external_file: an external data file is one of the command's inputs. */
static ct_status external_input(void *outset, const char *path, ct_diag *d) {
  return ct_outset_input(outset, path, d);
}

/* OUT.top and OUT.top.h5, all or nothing (common/outset.h); the model's external data files
 * are registered as inputs while it is read, and the commit checks the outputs against them. */
static ct_status run_outputs(transform_args *a, ct_diag *d) {
  ct_outset o;
  ct_outset_init(&o, CMD);
  const char *tmp;
  ct_status st = ct_outset_input(&o, a->model, d);
  if (!st) st = ct_tool_out_model(&o, a->out, &tmp, d);
  for (int i = 0; !st && i < a->n_const; i++) {
    const char *eq = strchr(a->const_spec[i], '=');
    st = ct_outset_input(&o, eq ? eq + 1 : a->const_spec[i], d);
  }
  a->opt.on_external_file = external_input, a->opt.on_external_user = &o;
  if (!st) st = load_consts(a, d);
  if (!st) st = run(a, tmp, d);
  st = ct_outset_end(&o, st, d);
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
