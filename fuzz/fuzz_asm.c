/* fuzz_asm.c: the assembler (isa/asm.c) with the default chip; on success the program is
 * serialized, parsed back and disassembled. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/fuzz_util.h"
#include "isa/asm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  char *s = ct_fuzz_str(data, n);
  if (!s) return 0;
  ct_program p;
  ct_diag d;
  ct_chip chip;
  ct_chip_default(&chip);
  if (ct_asm_parse(s, "fuzz.s", "/nonexistent", &chip, &p, &d) == CT_OK) {
    uint8_t *buf = NULL;
    size_t len = 0;
    if (ct_program_serialize(&p, &buf, &len, &d) == CT_OK) {
      ct_program q;
      if (ct_program_parse(buf, len, &chip, "fuzz.ctpu", &q, &d) == CT_OK) ct_program_free(&q);
      free(buf);
    }
    FILE *f = fopen("/dev/null", "w");
    if (f) ct_disasm(&p, f, &d), fclose(f);
    ct_program_free(&p);
  }
  free(s);
  return 0;
}
