/* cmd_disasm.c: `ctpu disasm FILE.ctpu [-o FILE.s] [--chip C.json]` prints a program as
 * assembly that `ctpu asm` turns back into identical bytes; `ctpu isa-doc` prints
 * docs/isa.md, generated from isa/isa.def and isa/chip.def. */
#include <stdio.h>
#include <string.h>

#include "isa/asm.h"
#include "tools/tools.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu disasm FILE.ctpu [-o FILE.s] [--chip CHIP.json]\n"
          "  prints the program as assembly (stdout, or FILE.s written atomically)\n"
          "  --chip FILE   also check the program against this chip (signature, bounds)\n");
}

int ct_cmd_disasm(int argc, char **argv) {
  const char *in, *out, *chip_path;
  int rc = ct_tool_in_out_chip("disasm", argc, argv, usage, &in, &out, &chip_path);
  if (rc >= 0) return rc;
  if (!in) return ct_tool_usage("disasm", "need FILE.ctpu");
  ct_diag d;
  ct_diag_clear(&d);
  ct_chip chip;
  if (chip_path && ct_chip_load(chip_path, &chip, &d)) return ct_tool_fail("disasm", &d);
  ct_program p;
  if (ct_program_load(in, chip_path ? &chip : NULL, &p, &d)) return ct_tool_fail("disasm", &d);
  ct_status st = out ? ct_disasm_file(&p, out, &d) : ct_disasm(&p, stdout, &d);
  ct_program_free(&p);
  return st ? ct_tool_fail("disasm", &d) : 0;
}

int ct_cmd_isa_doc(int argc, char **argv) {
  return ct_tool_doc("isa-doc", "prints docs/isa.md (generated from isa/isa.def and isa/chip.def)", argc, argv,
                     ct_isa_doc);
}
