/* cmd_ops_doc.c: `ctpu ops-doc`, prints docs/ops.md generated from the op table (ir/ops.def)
 * by ops/ops_doc.c (a test fails when the committed file differs), and the runner shared by the
 * doc commands (ct_tool_doc). */
#include <stdio.h>
#include <string.h>

#include "ops/ops_doc.h"
#include "tools/tools.h"

int ct_tool_doc(const char *cmd, const char *help, int argc, char **argv, void (*gen)(FILE *f)) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: ctpu %s\n  %s\n", cmd, help);
      return 0;
    }
    return ct_tool_usage(cmd, "unexpected argument \"%s\"", argv[i]);
  }
  gen(stdout);
  return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

int ct_cmd_ops_doc(int argc, char **argv) {
  return ct_tool_doc("ops-doc", "prints docs/ops.md (generated from ir/ops.def)", argc, argv, ct_ops_doc);
}
