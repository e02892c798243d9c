/* load.c: the model `ctpu deploy` compiles (load.h): ONNX import + canonicalize (the steps of
 * `ctpu transform`), lowering (those of `ctpu lower`), or a Tpu module as it is. */
#include "deploy/load.h"

#include <string.h>

#include "compiler/lower.h"
#include "compiler/pass.h"
#include "compiler/propagate.h"
#include "ir/text.h"
#include "onnx/onnx.h"
#include "ops/verify.h"

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && !strcmp(s + n - k, suf);
}

static ct_status import_onnx(const ct_deploy_src *s, ct_graph **g, ct_diag *d) {
  ct_onnx_options o;
  memset(&o, 0, sizeof o);
  if (s->input_shapes && ct_onnx_parse_input_shapes(s->input_shapes, &o, d)) return CT_ERR_USAGE;
  ct_status st = ct_onnx_import(s->model, &o, g, d);
  if (!st && (st = ct_top_propagate(*g, d)) != CT_OK) ct_diag_prefix(d, "%s: ", s->model);
  if (!st && (st = ct_pass_run_pipeline(*g, "canonicalize", NULL, d)) != CT_OK) ct_diag_prefix(d, "%s: ", s->model);
  if (!st && (st = ct_ir_verify(*g, d)) != CT_OK) ct_diag_prefix(d, "%s: ", s->model);
  return st;
}

ct_status ct_deploy_load(const ct_deploy_src *s, ct_graph **out, ct_diag *d) {
  *out = NULL;
  bool onnx = ends_with(s->model, ".onnx");
  if (s->input_shapes && !onnx) return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes needs an ONNX model");
  ct_lower_options o;
  memset(&o, 0, sizeof o);
  if (s->quantize) {
    o.mode = ct_qmode_from_name(s->quantize);
    if (o.mode == CT_QMODE_COUNT)
      return ct_diag_set(d, CT_ERR_USAGE, "--quantize must be INT8, BF16, F16 or F32, not \"%s\"", s->quantize);
  }
  ct_graph *g = NULL;
  ct_status st = onnx ? import_onnx(s, &g, d) : ct_ir_load_verified(s->model, &g, d);
  ct_calib_table ct;
  ct_calib_table_init(&ct);
  if (!st && !strcmp(g->dialect, "tpu") && s->quantize)
    st = ct_diag_set(d, CT_ERR_USAGE, "%s: already a Tpu module (lowered): drop --quantize", s->model);
  else if (!st && strcmp(g->dialect, "tpu") && !s->quantize)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: a %s module; deploy takes a Tpu module (ctpu lower --quantize INT8) or "
                     "--quantize MODE to lower it first", s->model, g->dialect);
  else if (!st && strcmp(g->dialect, "tpu")) {
    if (s->calib) st = ct_calib_table_read(s->calib, &ct, d), o.calib = &ct;
    o.chip = s->chip_name;
    if (!st) st = ct_lower(g, &o, d);
  } else if (!st && s->calib) {
    st = ct_diag_set(d, CT_ERR_USAGE, "--calibration-table needs a model to lower (.onnx or .top) and --quantize");
  }
  ct_calib_table_free(&ct);
  if (st) ct_graph_free(g);
  else *out = g;
  return st;
}
