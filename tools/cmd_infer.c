/* cmd_infer.c: `ctpu infer MODEL.top --input FILE... -o OUT.h5`: float inference of a Top
 * module with the reference interpreter (reference/interp.h), like TPU-MLIR's model_runner. */
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
#include "tools/tools.h"

#define CMD "infer"
#define MAX_INPUT_FILES 64

typedef struct infer_args {
  const char *model, *out, *dump;
  bool dequant;
  const char *files[MAX_INPUT_FILES];
  int n_files, threads;
} infer_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu infer MODEL.top|MODEL.tpu --input FILE... -o OUT.h5 [--dump-all LAYERS.h5] [--threads N]\n"
          "                  [--dequant]\n"
          "  runs the reference interpreter on MODEL (Tpu: integer kernels) (weights in the .h5 it names)\n"
          "  --input FILE...       HDF5 (datasets named by input), ONNX TensorProto .pb (in input\n"
          "                        order) or JPEG/PNG images (preprocessed as the Input op says)\n"
          "  -o OUT.h5             the module outputs, one dataset per output name\n"
          "  --dump-all LAYERS.h5  also write every input and computed tensor\n"
          "  --threads N           kernel threads (default 1)\n"
          "  --max-memory BYTES[K|M|G]  largest tensor to allocate (default: half the physical memory)\n"
          "  --dequant             Tpu modules: write the outputs as f32 (quantized tensors\n"
          "                        dequantized by their scale / zero point, bf16/f16 widened)\n");
}

/* Parses --threads' value: 1..256. */
static bool parse_threads(const char *s, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 1 || v > 256) return false;
  *out = (int)v;
  return true;
}

/* Parses argv into a; returns 0, or an exit code (2 usage, or -1 for --help printed). */
static int parse_args(int argc, char **argv, infer_args *a) {
  memset(a, 0, sizeof *a);
  a->threads = 1;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    bool has_val = i + 1 < argc;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
    if (!strcmp(s, "--input")) {
      int rc = ct_tool_files(CMD, argc, argv, &i, a->files, &a->n_files, MAX_INPUT_FILES);
      if (rc) return rc;
    } else if (!strcmp(s, "-o") && has_val) {
      a->out = argv[++i];
    } else if (!strcmp(s, "--dump-all") && has_val) {
      a->dump = argv[++i];
    } else if (!strcmp(s, "--dequant")) {
      a->dequant = true;
    } else if (!strcmp(s, "--threads") && has_val) {
      if (!parse_threads(argv[++i], &a->threads)) return ct_tool_usage(CMD, "--threads needs a number 1..256, not \"%s\"", argv[i]);
    } else if (s[0] == '-') {
      return ct_tool_usage(CMD, "unknown option \"%s\" (or missing value)", s);
    } else if (!a->model) {
      a->model = s;
    } else {
      return ct_tool_usage(CMD, "unexpected argument \"%s\"", s);
    }
  }
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  if (!a->out) return ct_tool_usage(CMD, "no output given (-o OUT.h5)");
  return 0;
}

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
  size_t n = strlen(a->model) + 4;
  char *w = malloc(n);
  if (!w) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  snprintf(w, n, "%s.h5", a->model);
  ct_status st = ct_outset_input(o, a->model, d);
  if (!st) st = ct_outset_input(o, w, d);
  free(w);
  for (int i = 0; !st && i < a->n_files; i++) st = ct_outset_input(o, a->files[i], d);
  if (!st) st = ct_outset_add(o, a->out, out, d);
  if (!st && a->dump) st = ct_outset_add(o, a->dump, dump, d);
  if (st) ct_outset_abort(o);
  return st;
}

int ct_cmd_infer(int argc, char **argv) {
  infer_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_outset o;
  const char *out_tmp = NULL, *dump_tmp = NULL;
  ct_status st = add_outputs(&o, &a, &out_tmp, &dump_tmp, &d);
  if (st) return ct_tool_fail(CMD, &d);
  ct_graph *g = NULL;
  st = ct_ir_load_verified(a.model, &g, &d);
  if (st == CT_OK && g->dialect && strcmp(g->dialect, "top") != 0 && strcmp(g->dialect, "tpu") != 0)
    st = ct_diag_set(&d, CT_ERR_INPUT, "%s: unsupported dialect \"%s\" (infer runs Top and Tpu modules)", a.model, g->dialect);
  ct_h5_writer *dump = NULL;
  if (st == CT_OK && a.dump) st = ct_h5_writer_open(&dump, dump_tmp, &d);
  if (st == CT_OK) st = run(&a, g, out_tmp, dump, &d);
  if (dump) {
    if (st == CT_OK) st = ct_h5_writer_commit(dump, &d);
    else ct_h5_writer_abort(dump);
  }
  if (st == CT_OK) st = ct_outset_commit(&o, &d);
  else ct_outset_abort(&o);
  ct_graph_free(g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
