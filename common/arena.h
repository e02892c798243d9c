/* arena.h: region allocator for IR graphs and other data that dies together. Allocations
 * are 16-byte aligned and freed all at once. A test hook makes the Nth allocation fail so
 * out-of-memory paths can be exercised (docs/style.md "Errors"). */
#ifndef CT_ARENA_H
#define CT_ARENA_H

#include <stddef.h>

typedef struct ct_arena_block ct_arena_block;

typedef struct ct_arena {
  ct_arena_block *head;
  size_t block_bytes;   /* default block size (bytes) */
  size_t used_bytes;    /* bytes handed out, for statistics */
  long fail_after;      /* test hook: < 0 off; else allocations left before one fails */
} ct_arena;

/* Initializes an empty arena; block_bytes 0 picks 64 KiB. */
void ct_arena_init(ct_arena *a, size_t block_bytes);
/* Frees every block. The arena can be reused after ct_arena_init. */
void ct_arena_free(ct_arena *a);
/* Returns n zeroed bytes, 16-byte aligned, or NULL when out of memory (or the hook fires). */
void *ct_arena_alloc(ct_arena *a, size_t n);
/* Copies the NUL-terminated string s into the arena; NULL for s == NULL or out of memory. */
char *ct_arena_strdup(ct_arena *a, const char *s);
/* Copies n bytes; NULL when out of memory. */
void *ct_arena_memdup(ct_arena *a, const void *p, size_t n);
/* Test hook: the allocation after `n` more successful ones fails (n < 0 turns it off). */
void ct_arena_fail_after(ct_arena *a, long n);

#endif
