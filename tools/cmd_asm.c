/* cmd_asm.c: `ctpu asm FILE.s -o FILE.ctpu [--chip C.json]`: assembles ctpu assembly
 * (syntax in docs/isa.md) into a validated .ctpu program, written atomically. */
#include <stdio.h>
#include <string.h>

#include "common/outset.h"
#include "isa/asm.h"
#include "tools/tools.h"

#define CMD "asm"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu asm FILE.s -o FILE.ctpu [--chip CHIP.json]\n"
          "  assembles FILE.s (syntax: docs/isa.md) into the program FILE.ctpu\n"
          "  --chip FILE   chip to validate addresses against and whose signature is recorded\n"
          "                (default: the built-in chip, or the file's .chipsig)\n"
          "  --max-memory BYTES[K|M|G]  largest tensor to allocate (default: half the physical memory)\n");
}

int ct_cmd_asm(int argc, char **argv) {
  const char *in, *out, *chip_path;
  int rc = ct_tool_in_out_chip(CMD, argc, argv, usage, &in, &out, &chip_path);
  if (rc >= 0) return rc;
  if (!in || !out) return ct_tool_usage(CMD, "need FILE.s and -o FILE.ctpu");
  ct_diag d;
  ct_diag_clear(&d);
  ct_chip chip;
  if (chip_path && ct_chip_load(chip_path, &chip, &d)) return ct_tool_fail(CMD, &d);
  ct_outset o;
  const char *tmp;
  ct_outset_init(&o, CMD);
  ct_status st = ct_outset_input(&o, in, &d);
  if (!st) st = ct_outset_input(&o, chip_path, &d);
  if (!st) st = ct_outset_add(&o, out, &tmp, &d);
  if (st) {
    ct_outset_abort(&o);
    return ct_tool_fail(CMD, &d);
  }
  ct_program p;
  if (ct_asm_file(in, chip_path ? &chip : NULL, &p, &d)) {
    ct_outset_abort(&o);
    return ct_tool_fail(CMD, &d);
  }
  st = ct_program_write(&p, tmp, &d);
  ct_program_free(&p);
  if (st) ct_outset_abort(&o);
  else st = ct_outset_commit(&o, &d);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
