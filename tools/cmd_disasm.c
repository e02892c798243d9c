/* cmd_disasm.c: `ctpu disasm FILE.ctpu [-o FILE.s] [--chip C.json]` prints a program as
 * assembly that `ctpu asm` turns back into identical bytes; `ctpu isa-doc` prints
 * docs/isa.md, generated from isa/isa.def and isa/chip.def. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isa/asm.h"
#include "tools/tools.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu disasm FILE.ctpu [-o FILE.s] [--chip CHIP.json]\n"
          "  prints the program as assembly (stdout, or FILE.s written atomically)\n"
          "  --chip FILE   also check the program against this chip (signature, bounds)\n");
}

/* Writes the disassembly to path via a temporary file + rename. */
static ct_status write_atomic(const ct_program *p, const char *path, ct_diag *d) {
  size_t n = strlen(path) + 16;
  char *tmp = malloc(n);
  if (!tmp) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  snprintf(tmp, n, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  ct_status st = f ? ct_disasm(p, f, d) : ct_diag_set(d, CT_ERR_INPUT, "%s: cannot create", path);
  if (f && fclose(f) != 0 && !st) st = ct_diag_set(d, CT_ERR_INPUT, "%s: write error", path);
  if (!f && fd >= 0) close(fd);
  if (!st && rename(tmp, path) != 0) st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot rename into place", path);
  if (st && fd >= 0) remove(tmp);
  free(tmp);
  return st;
}

int ct_cmd_disasm(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *chip_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--chip") && i + 1 < argc) chip_path = argv[++i];
    else if (argv[i][0] == '-') return ct_tool_usage("disasm", "unknown or incomplete option \"%s\"", argv[i]);
    else if (in) return ct_tool_usage("disasm", "more than one input file");
    else in = argv[i];
  }
  if (!in) return ct_tool_usage("disasm", "need FILE.ctpu");
  ct_diag d;
  ct_diag_clear(&d);
  ct_chip chip;
  if (chip_path && ct_chip_load(chip_path, &chip, &d)) return ct_tool_fail("disasm", &d);
  ct_program p;
  if (ct_program_load(in, chip_path ? &chip : NULL, &p, &d)) return ct_tool_fail("disasm", &d);
  ct_status st = out ? write_atomic(&p, out, &d) : ct_disasm(&p, stdout, &d);
  ct_program_free(&p);
  return st ? ct_tool_fail("disasm", &d) : 0;
}

int ct_cmd_isa_doc(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: ctpu isa-doc\n  prints docs/isa.md (generated from isa/isa.def and isa/chip.def)\n");
      return 0;
    }
    return ct_tool_usage("isa-doc", "unexpected argument \"%s\"", argv[i]);
  }
  ct_isa_doc(stdout);
  return 0;
}
