/* cmd_lower.c: `ctpu lower MODEL.top --quantize MODE [...] -o MODEL.tpu`: lowers a Top module
 * to the Tpu dialect (compiler/lower.h), like TPU-MLIR's model_deploy --quantize. */
#include <stdio.h>
#include <string.h>

#include "compiler/lower.h"
#include "ir/text.h"
#include "isa/chip.h"
#include "ops/verify.h"
#include "tools/tools.h"

#define CMD "lower"

typedef struct lower_args {
  const char *model, *out, *calib, *qtable, *chip, *mode;
  bool asym, no_unsigned, f32_fallback, keep_wzp, lut16;
} lower_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu lower MODEL.top --quantize INT8|BF16|F16|F32 -o MODEL.tpu [options]\n"
          "  lowers a Top module to the Tpu dialect: MODEL.tpu (text) + MODEL.tpu.h5 (weights)\n"
          "  --quantize MODE            INT8, BF16, F16 or F32\n"
          "  --calibration-table T      INT8: thresholds per tensor (TPU-MLIR layout); not needed\n"
          "                             for QDQ models (their own scales are used)\n"
          "  --asymmetric               INT8 activations asymmetric (zero point from min/max)\n"
          "  --no-unsigned              INT8: i8 also for non-negative tensors (default u8)\n"
          "  --float-fallback-f32       INT8: ops without an integer form in F32 (default BF16)\n"
          "  --keep-weight-zp           QDQ: keep u8 weight zero points whose q - zp does not fit\n"
          "                             i8 (exact; the ISA cannot run them: no deploy)\n"
          "  --lut-input 8|16           INT8: a Conv result read only by a LUT activation is i8\n"
          "                             (default) or i16, looked up by the interpolated 16-bit LUT\n"
          "  --quantize-table Q         rows `op_or_tensor_name MODE` force those ops' modes\n"
          "  --chip C.json              chip configuration (its name is stored in the module)\n");
}

static int parse_args(int argc, char **argv, lower_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    bool v = i + 1 < argc;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
    if (!strcmp(s, "--quantize") && v) a->mode = argv[++i];
    else if (!strcmp(s, "--calibration-table") && v) a->calib = argv[++i];
    else if (!strcmp(s, "--quantize-table") && v) a->qtable = argv[++i];
    else if (!strcmp(s, "--chip") && v) a->chip = argv[++i];
    else if (!strcmp(s, "-o") && v) a->out = argv[++i];
    else if (!strcmp(s, "--lut-input") && v) {
      const char *b = argv[++i];
      if (strcmp(b, "8") && strcmp(b, "16")) return ct_tool_usage(CMD, "--lut-input %s: 8 or 16", b);
      a->lut16 = !strcmp(b, "16");
    } else if (!strcmp(s, "--asymmetric")) a->asym = true;
    else if (!strcmp(s, "--no-unsigned")) a->no_unsigned = true;
    else if (!strcmp(s, "--float-fallback-f32")) a->f32_fallback = true;
    else if (!strcmp(s, "--keep-weight-zp")) a->keep_wzp = true;
    else if (s[0] == '-') return ct_tool_usage(CMD, "unknown option \"%s\" (or missing value)", s);
    else if (!a->model) a->model = s;
    else return ct_tool_usage(CMD, "unexpected argument \"%s\"", s);
  }
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o MODEL.tpu)");
  if (!a->mode) return ct_tool_usage(CMD, "no mode given (--quantize INT8|BF16|F16|F32)");
  ct_qmode m = ct_qmode_from_name(a->mode);
  if (m == CT_QMODE_COUNT) return ct_tool_usage(CMD, "unknown mode \"%s\" (INT8, BF16, F16 or F32)", a->mode);
  return 0;
}

static ct_status run(const lower_args *a, ct_calib_table *ct, ct_qtable *qt, ct_diag *d) {
  ct_lower_options o = {.mode = ct_qmode_from_name(a->mode), .asymmetric = a->asym, .no_unsigned = a->no_unsigned,
                        .float_fallback_f32 = a->f32_fallback,
                        .keep_weight_zp = a->keep_wzp, .lut16 = a->lut16};
  ct_chip chip;
  ct_chip_default(&chip);
  ct_status st = a->chip ? ct_chip_load(a->chip, &chip, d) : CT_OK;
  if (!st && a->calib) st = ct_calib_table_read(a->calib, ct, d), o.calib = ct;
  if (!st && a->qtable) st = ct_qtable_read(a->qtable, qt, d), o.qtable = qt;
  o.chip = chip.name;
  ct_graph *g = NULL;
  if (!st) st = ct_ir_load_verified(a->model, &g, d);
  if (!st) st = ct_lower(g, &o, d);
  if (!st) st = ct_ir_save(g, a->out, d);
  ct_graph_free(g);
  return st;
}

int ct_cmd_lower(int argc, char **argv) {
  lower_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_calib_table ct;
  ct_qtable qt;
  ct_calib_table_init(&ct);
  ct_qtable_init(&qt);
  ct_status st = run(&a, &ct, &qt, &d);
  ct_calib_table_free(&ct);
  ct_qtable_free(&qt);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
