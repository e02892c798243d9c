/* fuzz_onnx.c: ONNX import (onnx/onnx_import.c) + shape propagation + constant folding on
 * arbitrary bytes: must end in a status, never a crash, leak or UB. */
#include "compiler/propagate.h"
#include "fuzz/fuzz_util.h"
#include "onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  const char *p = ct_fuzz_file(data, n, ".onnx");
  if (!p) return 0;
  ct_graph *g = NULL;
  ct_diag d;
  if (ct_onnx_import(p, NULL, &g, &d) == CT_OK) ct_top_propagate(g, &d);
  ct_graph_free(g);
  return 0;
}
