/* cmd_disasm.c: `ctpu disasm FILE.ctpu [-o FILE.s] [--chip C.json]` prints a program as
 * assembly that `ctpu asm` turns back into identical bytes; `ctpu isa-doc` prints
 * docs/isa.md, generated from isa/isa.def and isa/chip.def. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/outset.h"
#include "isa/asm.h"
#include "tools/tools.h"

#define CMD "disasm"

typedef struct disasm_args {
  const char *in, *out, *chip;
} disasm_args;

static const ct_opt opts[] = {
    CT_OPT_STR_("-o", "FILE.s", disasm_args, out, "write the assembly to FILE.s (default: stdout)"),
    CT_OPT_STR_("--chip", "FILE", disasm_args, chip, "also check the program against this chip (signature, bounds)"),
};

const ct_cmd_spec ct_cmd_disasm_spec = CT_CMD_SPEC1(
    CMD, "FILE.ctpu [-o FILE.s] [--chip CHIP.json]",
    "prints the program as assembly (stdout, or FILE.s written atomically)",
    "program", disasm_args, in, opts);

/* FILE.s under a temporary name, renamed when complete (common/outset.h). */
static ct_status write_file(const disasm_args *a, const ct_program *p, ct_diag *d) {
  ct_outset o;
  const char *tmp;
  ct_outset_init(&o, CMD);
  ct_status st = ct_outset_input(&o, a->in, d);
  if (!st) st = ct_outset_input(&o, a->chip, d);
  if (!st) st = ct_outset_add(&o, a->out, &tmp, d);
  if (!st) st = ct_disasm_file(p, tmp, d);
  st = ct_outset_end(&o, st, d);
  return st;
}

int ct_cmd_disasm(int argc, char **argv) {
  disasm_args a = {0};
  int rc = ct_opts_parse(&ct_cmd_disasm_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_diag_clear(&d);
  ct_chip chip;
  if (a.chip && ct_chip_load(a.chip, &chip, &d)) return ct_tool_fail(CMD, &d);
  ct_program p;
  if (ct_program_load(a.in, a.chip ? &chip : NULL, &p, &d)) return ct_tool_fail(CMD, &d);
  ct_status st = a.out ? write_file(&a, &p, &d) : ct_disasm(&p, stdout, &d);
  ct_program_free(&p);
  return st ? ct_tool_fail(CMD, &d) : 0;
}

const ct_cmd_spec ct_cmd_isa_doc_spec = {.cmd = "isa-doc",
                                         .about = "prints docs/isa.md (generated from isa/isa.def and isa/chip.def)"};

int ct_cmd_isa_doc(int argc, char **argv) { return ct_tool_doc(&ct_cmd_isa_doc_spec, argc, argv, ct_isa_doc); }
