/* cmd_asm.c: `ctpu asm FILE.s -o FILE.ctpu [--chip C.json]`: assembles ctpu assembly
 * (syntax in docs/isa.md) into a validated .ctpu program, written atomically. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/outset.h"
#include "isa/asm.h"
#include "tools/tools.h"

#define CMD "asm"

typedef struct asm_args {
  const char *in, *out, *chip;
} asm_args;

static const ct_opt opts[] = {
    CT_OPT_NEED_("-o", "FILE.ctpu", asm_args, out, "output", "the program"),
    CT_OPT_STR_("--chip", "FILE", asm_args, chip,
                "chip to validate addresses against and whose signature is recorded (default: the built-in chip, or "
                "the file's .chipsig)"),
    CT_OPT_MAX_MEMORY,
};

const ct_cmd_spec ct_cmd_asm_spec = CT_CMD_SPEC1(
    CMD, "FILE.s -o FILE.ctpu [--chip CHIP.json]",
    "assembles FILE.s (syntax: docs/isa.md) into the program FILE.ctpu",
    "assembly file", asm_args, in, opts);

static ct_status run(const asm_args *a, ct_diag *d) {
  ct_chip chip;
  if (a->chip && ct_chip_load(a->chip, &chip, d)) return d->code;
  ct_outset o;
  const char *tmp;
  ct_outset_init(&o, CMD);
  ct_status st = ct_outset_input(&o, a->in, d);
  if (!st) st = ct_outset_input(&o, a->chip, d);
  if (!st) st = ct_outset_add(&o, a->out, &tmp, d);
  ct_program p;
  if (!st && !(st = ct_asm_file(a->in, a->chip ? &chip : NULL, &p, d))) {
    st = ct_program_write(&p, tmp, d);
    ct_program_free(&p);
  }
  st = ct_outset_end(&o, st, d);
  return st;
}

int ct_cmd_asm(int argc, char **argv) {
  asm_args a = {0};
  int rc = ct_opts_parse(&ct_cmd_asm_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  return run(&a, &d) ? ct_tool_fail(CMD, &d) : 0;
}
