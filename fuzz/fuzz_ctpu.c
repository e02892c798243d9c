/* fuzz_ctpu.c: the .ctpu program loader (isa/program_load.c) with the default chip. */
#include "fuzz/fuzz_util.h"
#include "isa/program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  ct_chip chip;
  ct_chip_default(&chip);
  ct_program p;
  ct_diag d;
  if (ct_program_parse(data, n, &chip, "fuzz.ctpu", &p, &d) == CT_OK) ct_program_free(&p);
  return 0;
}
