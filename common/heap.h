/* heap.h: allocator tuning for processes that run the interpreter over many samples
 * (calibrate, eval, refine). */
#ifndef CT_COMMON_HEAP_H
#define CT_COMMON_HEAP_H

/* Keeps freed memory in the process heap (glibc mallopt: blocks up to 32 MiB served from
 * the heap, tops trimmed only above 512 MiB, one arena for all threads; no-op elsewhere), so
 * that sample n + 1 reuses sample n's pages instead of faulting in fresh ones. A process-wide setting: for commands,
 * not for library code. */
void ct_heap_keep_freed(void);

#endif
