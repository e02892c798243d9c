/* fuzz_qtable.c: the quantize table parser (quant/qtable.c, TPU-MLIR's `op_name MODE` rows).
 * A table that parses must survive a round trip through ct_qtable_write; a difference aborts. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "quant/qtable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  char *s = ct_fuzz_str(data, n);
  if (!s) return 0;
  ct_qtable t, back;
  ct_qtable_init(&t);
  ct_qtable_init(&back);
  ct_diag d;
  if (ct_qtable_parse(s, "fuzz.qtable", &t, &d) == CT_OK) {
    const char *p = ct_fuzz_file((const uint8_t *)"", 0, ".qtable");
    if (p && ct_qtable_write(p, &t, &d) == CT_OK) {
      if (ct_qtable_read(p, &back, &d) != CT_OK || back.n != t.n) abort();
      for (int64_t i = 0; i < t.n; i++)
        if (strcmp(t.rows[i].name, back.rows[i].name) || t.rows[i].mode != back.rows[i].mode) abort();
    }
  }
  ct_qtable_free(&t);
  ct_qtable_free(&back);
  free(s);
  return 0;
}
