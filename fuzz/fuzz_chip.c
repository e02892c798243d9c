/* fuzz_chip.c: chip JSON (isa/chip.c over cJSON). */
#include <stdlib.h>

#include "fuzz/fuzz_util.h"
#include "isa/chip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  char *s = ct_fuzz_str(data, n);
  if (!s) return 0;
  ct_chip c;
  ct_diag d;
  ct_chip_parse(s, "fuzz.json", &c, &d);
  free(s);
  return 0;
}
