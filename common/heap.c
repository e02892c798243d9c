/* heap.c: allocator tuning for commands that run the interpreter over many samples (heap.h). */
#include "common/heap.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

void ct_heap_keep_freed(void) {
#ifdef __GLIBC__
  /* glibc serves blocks above M_MMAP_THRESHOLD (dynamic, from 128 KiB) with fresh mmap'd pages
   * and returns freed heap tops to the kernel; each sample then page-faults and zeroes its
   * activation buffers again (measured on MobileNetV2 calibration: half the CPU time). Keeping
   * blocks up to 256 MiB in the heap lets sample n + 1 reuse sample n's memory. */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}
