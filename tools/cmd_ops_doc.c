/* cmd_ops_doc.c: `ctpu ops-doc`, prints docs/ops.md generated from the op table (ir/ops.def)
 * by ops/ops_doc.c; a test fails when the committed file differs. */
#include <stdio.h>
#include <string.h>

#include "ops/ops_doc.h"
#include "tools/tools.h"

int ct_cmd_ops_doc(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: ctpu ops-doc\n  prints docs/ops.md (generated from ir/ops.def)\n");
      return 0;
    }
    return ct_tool_usage("ops-doc", "unexpected argument \"%s\"", argv[i]);
  }
  ct_ops_doc(stdout);
  return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
