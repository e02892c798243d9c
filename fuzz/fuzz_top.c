/* fuzz_top.c: the .top/.tpu text parser (ir/text_parse.c) and, on success, the verifier and
 * the printer. */
#include <stdlib.h>

#include "fuzz/fuzz_util.h"
#include "ir/text.h"
#include "ops/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  ct_graph *g = NULL;
  ct_diag d;
  if (ct_ir_parse((const char *)data, n, "fuzz.top", &g, &d) == CT_OK) {
    char *s = NULL;
    size_t len = 0;
    ct_ir_verify(g, &d);
    if (ct_ir_print_string(g, &s, &len, &d) == CT_OK) free(s);
  }
  ct_graph_free(g);
  return 0;
}
