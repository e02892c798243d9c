/* cmd_lower.c: `ctpu lower MODEL.top --quantize MODE [...] -o MODEL.tpu`: lowers a Top module
 * to the Tpu dialect (compiler/lower.h), like TPU-MLIR's model_deploy --quantize. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/outset.h"
#include "compiler/lower.h"
#include "ir/text.h"
#include "isa/chip.h"
#include "ops/verify.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "lower"

typedef struct lower_args {
  const char *model, *out, *calib, *qtable, *chip, *mode;
  bool asym, no_unsigned, f32_fallback, keep_wzp, lut16;
} lower_args;

static const ct_opt opts[] = {
    CT_OPT_NEED_("-o", "MODEL.tpu", lower_args, out, "output", "the Tpu module (text) and MODEL.tpu.h5 (weights)"),
    CT_OPT_NEED_("--quantize", "INT8|BF16|F16|F32", lower_args, mode, "mode", "the Tpu dialect's precision"),
    CT_OPT_STR_("--calibration-table", "T", lower_args, calib,
                "INT8: thresholds per tensor (TPU-MLIR layout); not needed for QDQ models (their own scales are used)"),
    CT_OPT_FLAG_("--asymmetric", lower_args, asym, "INT8 activations asymmetric (zero point from min/max within the threshold)"),
    CT_OPT_FLAG_("--no-unsigned", lower_args, no_unsigned, "INT8: i8 also for non-negative tensors (default u8)"),
    CT_OPT_FLAG_("--float-fallback-f32", lower_args, f32_fallback, "INT8: ops without an integer form in F32 (default BF16)"),
    CT_OPT_FLAG_("--keep-weight-zp", lower_args, keep_wzp,
                 "QDQ: keep u8 weight zero points whose q - zp does not fit i8 (exact; the ISA cannot run them: no "
                 "deploy)"),
    CT_OPT_LUT_INPUT(lower_args, lut16),
    CT_OPT_STR_("--quantize-table", "Q", lower_args, qtable, "rows `op_or_tensor_name MODE` force those ops' modes"),
    CT_OPT_STR_("--chip", "C.json", lower_args, chip, "chip configuration (its name is stored in the module)"),
};

const ct_cmd_spec ct_cmd_lower_spec = CT_CMD_SPEC1(
    CMD, "MODEL.top --quantize INT8|BF16|F16|F32 -o MODEL.tpu [options]",
    "lowers a Top module to the Tpu dialect: MODEL.tpu (text) + MODEL.tpu.h5 (weights)",
    "model", lower_args, model, opts);

/* Registers the inputs (model and weights, tables, chip) and the outputs. */
static ct_status add_files(ct_outset *os, const lower_args *a, const char **tmp, ct_diag *d) {
  ct_status st = ct_tool_in_model(os, a->model, NULL, d);
  const char *in[3] = {a->calib, a->qtable, a->chip};
  for (int i = 0; !st && i < 3; i++) st = ct_outset_input(os, in[i], d);
  if (!st) st = ct_tool_out_model(os, a->out, tmp, d);
  return st;
}

static ct_status run(const lower_args *a, ct_calib_table *ct, ct_qtable *qt, ct_outset *os, ct_diag *d) {
  ct_lower_options o = {.mode = ct_qmode_from_name(a->mode), .asymmetric = a->asym, .no_unsigned = a->no_unsigned,
                        .float_fallback_f32 = a->f32_fallback,
                        .keep_weight_zp = a->keep_wzp, .lut16 = a->lut16};
  ct_chip chip;
  ct_chip_default(&chip);
  const char *tmp = NULL;
  ct_status st = add_files(os, a, &tmp, d);
  if (!st && a->chip) st = ct_chip_load(a->chip, &chip, d);
  if (!st && a->calib) st = ct_calib_table_read(a->calib, ct, d), o.calib = ct;
  if (!st && a->qtable) st = ct_qtable_read(a->qtable, qt, d), o.qtable = qt;
  o.chip = chip.name;
  ct_graph *g = NULL;
  if (!st) st = ct_ir_load_verified(a->model, &g, d);
  if (!st) st = ct_tool_in_model(os, a->model, g, d);
  if (!st) st = ct_outset_check(os, d);
  if (!st) st = ct_lower(g, &o, d);
  if (!st) st = ct_ir_save(g, tmp, d);
  ct_graph_free(g);
  return st;
}

int ct_cmd_lower(int argc, char **argv) {
  lower_args a = {0};
  int rc = ct_opts_parse(&ct_cmd_lower_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  if (ct_qmode_from_name(a.mode) == CT_QMODE_COUNT)
    return ct_tool_usage(CMD, "unknown mode \"%s\" (INT8, BF16, F16 or F32)", a.mode);
  ct_diag d;
  ct_diag_clear(&d);
  ct_calib_table ct;
  ct_qtable qt;
  ct_calib_table_init(&ct);
  ct_qtable_init(&qt);
  ct_outset os;
  ct_outset_init(&os, CMD);
  ct_status st = run(&a, &ct, &qt, &os, &d);
  st = ct_outset_end(&os, st, &d);
  ct_calib_table_free(&ct);
  ct_qtable_free(&qt);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
