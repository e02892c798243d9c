/* cmd_infer.c: `ctpu infer MODEL.top --input FILE... -o OUT.h5`: float inference of a Top
 * module with the reference interpreter (reference/interp.h), like TPU-MLIR's model_runner. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "common/outset.h"
#include "ir/text.h"
#include "io/inputs.h"
#include "ops/verify.h"
#include "quant/quant.h"
#include "reference/interp.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "infer"
#define MAX_INPUT_FILES 64

typedef struct infer_args {
  const char *model, *out, *dump;
  bool dequant;
  const char *files[MAX_INPUT_FILES];
  int n_files, threads;
} infer_args;

static const ct_opt opts[] = {
    CT_OPT_FILES_("--input", "FILE...", infer_args, files, n_files, MAX_INPUT_FILES,
                  "HDF5 (datasets named by input), ONNX TensorProto .pb (in input order, or named as the input) or "
                  "JPEG/PNG images (preprocessed as the Input op says)"),
    CT_OPT_NEED_("-o", "OUT.h5", infer_args, out, "output", "the module outputs, one dataset per output name"),
    CT_OPT_STR_("--dump-all", "LAYERS.h5", infer_args, dump, "also write every input and computed tensor"),
    CT_OPT_INT_("--threads", "N", infer_args, threads, 1, 256, "kernel threads (default 1)"),
    CT_OPT_FLAG_("--dequant", infer_args, dequant,
                 "Tpu modules: write the outputs as f32 (quantized tensors dequantized by their scale / zero point, "
                 "bf16/f16 widened)"),
    CT_OPT_MAX_MEMORY,
};

const ct_cmd_spec ct_cmd_infer_spec = CT_CMD_SPEC1(
    CMD, "MODEL.top|MODEL.tpu --input FILE... -o OUT.h5 [--dump-all LAYERS.h5] [--threads N] [--dequant]",
    "runs the reference interpreter on MODEL (Tpu: integer kernels) (weights in the .h5 it names)",
    "model", infer_args, model, opts);

static void show_progress(void *user, int done, int total, const ct_op *op) {
  (void)user;
  fprintf(stderr, "\rctpu infer: %d/%d %-40.40s", done, total, op->loc ? op->loc : "");
  if (done == total) fputc('\n', stderr);
}

/* Loads inputs, runs, writes outputs; the dump writer (if any) is committed by the caller. */
static ct_status run(const infer_args *a, const ct_graph *g, const char *out_path, ct_h5_writer *dump, ct_diag *d) {
  ct_tensor_list in, out;
  ct_tensor_list_init(&in);
  ct_tensor_list_init(&out);
  ct_status st = ct_inputs_load(g, a->files, a->n_files, &in, d);
  ct_ref_options opt = {.threads = a->threads, .dump = dump};
  if (ct_tool_isatty()) opt.progress = show_progress;
  if (st == CT_OK) st = ct_ref_run(g, &opt, &in, &out, d);
  for (int i = 0; st == CT_OK && a->dequant && i < out.n; i++) {
    ct_tensor *f = ct_quant_dequant_tensor(out.items[i]);
    if (!f) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    else ct_tensor_free(out.items[i]), out.items[i] = f;
  }
  if (st == CT_OK) st = ct_h5_write(out_path, out.items, out.n, d);
  ct_tensor_list_free(&in);
  ct_tensor_list_free(&out);
  return st;
}

/* Registers the inputs (model, its weights, input files) and the outputs of an outset
 * (common/outset.h); sets the temporary paths to write. */
static ct_status add_outputs(ct_outset *o, const infer_args *a, const char **out, const char **dump, ct_diag *d) {
  ct_outset_init(o, CMD);
  ct_status st = ct_tool_in_model(o, a->model, NULL, d);
  if (!st) st = ct_tool_in_files(o, a->files, a->n_files, d);
  if (!st) st = ct_outset_add(o, a->out, out, d);
  if (!st && a->dump) st = ct_outset_add(o, a->dump, dump, d);
  if (st) ct_outset_abort(o);
  return st;
}

int ct_cmd_infer(int argc, char **argv) {
  infer_args a = {.threads = 1};
  int rc = ct_opts_parse(&ct_cmd_infer_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_outset o;
  const char *out_tmp = NULL, *dump_tmp = NULL;
  ct_status st = add_outputs(&o, &a, &out_tmp, &dump_tmp, &d);
  if (st) return ct_tool_fail(CMD, &d);
  ct_graph *g = NULL;
  st = ct_ir_load_verified(a.model, &g, &d);
  if (st == CT_OK) st = ct_tool_in_model(&o, a.model, g, &d);
  if (st == CT_OK) st = ct_outset_check(&o, &d);
  if (st == CT_OK && g->dialect && strcmp(g->dialect, "top") != 0 && strcmp(g->dialect, "tpu") != 0)
    st = ct_diag_set(&d, CT_ERR_INPUT, "%s: unsupported dialect \"%s\" (infer runs Top and Tpu modules)", a.model, g->dialect);
  ct_h5_writer *dump = NULL;
  if (st == CT_OK && a.dump) st = ct_h5_writer_open(&dump, dump_tmp, &d);
  if (st == CT_OK) st = run(&a, g, out_tmp, dump, &d);
  if (dump) {
    if (st == CT_OK) st = ct_h5_writer_commit(dump, &d);
    else ct_h5_writer_abort(dump);
  }
  st = ct_outset_end(&o, st, &d);
  ct_graph_free(g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
