/* cmd_chip.c: `ctpu chip --dump [--chip F.json]`: prints a chip configuration (the built-in
 * defaults, or F.json validated and completed with defaults) as JSON (isa/chip.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/chip.h"
#include "tools/tools.h"

#define CMD "chip"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ctpu chip --dump [--chip CHIP.json] [--signature]\n"
          "  --dump         print the chip configuration as JSON (defaults built in)\n"
          "  --chip FILE    read FILE (keys not given keep their defaults) and validate it\n"
          "  --signature    also print the chip signature (hex) on a last line\n");
}

int ct_cmd_chip(int argc, char **argv) {
  const char *path = NULL;
  bool dump = false, sig = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--dump")) dump = true;
    else if (!strcmp(argv[i], "--signature")) sig = true;
    else if (!strcmp(argv[i], "--chip") && i + 1 < argc) path = argv[++i];
    else return ct_tool_usage(CMD, "unknown or incomplete option \"%s\"", argv[i]);
  }
  if (!dump && !sig) return ct_tool_usage(CMD, "nothing to do (give --dump)");
  ct_chip c;
  ct_diag d;
  ct_diag_clear(&d);
  if (ct_chip_load(path, &c, &d)) return ct_tool_fail(CMD, &d);
  if (dump) {
    char *js = ct_chip_to_json(&c);
    if (!js) {
      ct_diag_set(&d, CT_ERR_LIMIT, "out of memory");
      return ct_tool_fail(CMD, &d);
    }
    printf("%s\n", js);
    free(js);
  }
  if (sig) printf("0x%016llx\n", (unsigned long long)ct_chip_signature(&c));
  return 0;
}
