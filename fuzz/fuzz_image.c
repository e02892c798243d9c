/* fuzz_image.c: JPEG and PNG decoding (io/image.c, libjpeg + libpng); the first byte picks
 * the file suffix so both decoders are reached from any corpus. */
#include "fuzz/fuzz_util.h"
#include "io/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  if (n < 1) return 0;
  const char *p = ct_fuzz_file(data, n, n >= 2 && data[0] == 0xFF && data[1] == 0xD8 ? ".jpg" : ".png");
  if (!p) return 0;
  ct_image img;
  ct_diag d;
  if (ct_image_load(p, &img, &d) == CT_OK) ct_image_free(&img);
  return 0;
}
