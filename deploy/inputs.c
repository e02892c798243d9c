/* inputs.c: input files of a program run (inputs.h). */
#include "deploy/inputs.h"

#include <string.h>

#include "onnx/onnx.h"

ct_status ct_deploy_read_input(const ct_program *prog, const char *path, ct_tensor_list *in, ct_diag *d) {
  size_t n = strlen(path);
  if (n < 3 || strcmp(path + n - 3, ".pb")) return ct_h5_read(path, in, d);
  ct_status st = ct_onnx_read_tensor_pb_into(path, in, d);
  ct_tensor *t = st ? NULL : in->items[in->n - 1];
  const ct_prog_io *io = t && t->name ? ct_program_find_io(prog, t->name) : NULL;
  if (!t || (io && !io->is_output && !io->is_tensor)) return st;
  for (size_t i = 0; i < prog->n_io; i++)
    if (!prog->io[i].is_output && !prog->io[i].is_tensor && !ct_tensor_list_find(in, prog->io[i].name))
      return ct_tensor_set_name(t, prog->io[i].name) ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  return ct_diag_set(d, CT_ERR_USAGE, "%s: more input files than program inputs", path);
}
