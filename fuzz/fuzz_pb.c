/* fuzz_pb.c: ONNX TensorProto .pb files (onnx/onnx_tensor.c). */
#include "fuzz/fuzz_util.h"
#include "onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  const char *p = ct_fuzz_file(data, n, ".pb");
  if (!p) return 0;
  ct_tensor *t = NULL;
  ct_diag d;
  ct_onnx_read_tensor_pb(p, &t, &d);
  ct_tensor_free(t);
  return 0;
}
