/* cmd_chip.c: `ctpu chip --dump [--chip F.json]`: prints a chip configuration (the built-in
 * defaults, or F.json validated and completed with defaults) as JSON (isa/chip.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/chip.h"
#include "tools/tools.h"

#define CMD "chip"

typedef struct chip_args {
  const char *path;
  bool dump, sig;
} chip_args;

static const ct_opt opts[] = {
    CT_OPT_FLAG_("--dump", chip_args, dump, "print the chip configuration as JSON (defaults built in)"),
    CT_OPT_STR_("--chip", "FILE", chip_args, path, "read FILE (keys not given keep their defaults) and validate it"),
    CT_OPT_FLAG_("--signature", chip_args, sig, "also print the chip signature (hex) on a last line"),
};

const ct_cmd_spec ct_cmd_chip_spec = {.cmd = CMD,
                                 .synopsis = "--dump [--chip CHIP.json] [--signature]",
                                 .about = "prints a chip configuration, the built-in one or CHIP.json's (docs/isa.md)",
                                 .opts = opts,
                                 .n_opts = CT_OPTS_COUNT(opts)};

int ct_cmd_chip(int argc, char **argv) {
  chip_args a = {0};
  int rc = ct_opts_parse(&ct_cmd_chip_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  if (!a.dump && !a.sig) return ct_tool_usage(CMD, "nothing to do (give --dump)");
  ct_chip c;
  ct_diag d;
  ct_diag_clear(&d);
  if (ct_chip_load(a.path, &c, &d)) return ct_tool_fail(CMD, &d);
  if (a.dump) {
    char *js = ct_chip_to_json(&c);
    if (!js) {
      ct_diag_set(&d, CT_ERR_LIMIT, "out of memory");
      return ct_tool_fail(CMD, &d);
    }
    printf("%s\n", js);
    free(js);
  }
  if (a.sig) printf("0x%016llx\n", (unsigned long long)ct_chip_signature(&c));
  return 0;
}
