/* fuzz_h5.c: HDF5 tensor files through ct_h5_read, the reader every command uses: libhdf5
 * runs in a forked child (common/h5child.c), so this checks that no file takes ctpu down and
 * that the parent's side of the pipe copes with whatever the child sends or fails to send.
 * CT_FUZZ_H5_DIRECT=1 fuzzes the in-process reader instead (finds libhdf5's own crashes). */
#include <stdlib.h>

#include "common/h5io.h"
#include "fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  static int direct = -1;
  if (direct < 0) direct = getenv("CT_FUZZ_H5_DIRECT") != NULL;
  const char *p = ct_fuzz_file(data, n, ".h5");
  if (!p) return 0;
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ct_diag d;
  if (direct) ct_h5_read_direct(p, &l, &d);
  else ct_h5_read(p, &l, &d);
  ct_tensor_list_free(&l);
  return 0;
}
