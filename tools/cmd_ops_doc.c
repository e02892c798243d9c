/* cmd_ops_doc.c: `ctpu ops-doc`, prints docs/ops.md generated from the op table (ir/ops.def)
 * by ops/ops_doc.c (a test fails when the committed file differs), and the runner shared by the
 * doc commands (ct_tool_doc). */
#include <stdio.h>
#include <string.h>

#include "ops/ops_doc.h"
#include "tools/tools.h"

int ct_tool_doc(const ct_cmd_spec *spec, int argc, char **argv, void (*gen)(FILE *f)) {
  int rc = ct_opts_parse(spec, argc, argv, NULL);
  if (rc) return rc < 0 ? 0 : rc;
  gen(stdout);
  return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

const ct_cmd_spec ct_cmd_ops_doc_spec = {.cmd = "ops-doc", .about = "prints docs/ops.md (generated from ir/ops.def)"};

int ct_cmd_ops_doc(int argc, char **argv) { return ct_tool_doc(&ct_cmd_ops_doc_spec, argc, argv, ct_ops_doc); }
