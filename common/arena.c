/* arena.c: bump allocator over a linked list of blocks (see arena.h). */
#include "common/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ct_arena_block {
  ct_arena_block *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

void ct_arena_init(ct_arena *a, size_t block_bytes) {
  a->head = NULL;
  a->block_bytes = block_bytes ? block_bytes : 64 * 1024;
  a->used_bytes = 0;
  a->fail_after = -1;
}

void ct_arena_free(ct_arena *a) {
  ct_arena_block *b = a->head;
  while (b) {
    ct_arena_block *n = b->next;
    free(b);
    b = n;
  }
  a->head = NULL;
  a->used_bytes = 0;
}

void ct_arena_fail_after(ct_arena *a, long n) { a->fail_after = n; }

void *ct_arena_alloc(ct_arena *a, size_t n) {
  if (a->fail_after == 0) return NULL;
  if (a->fail_after > 0) a->fail_after--;
  if (n > SIZE_MAX - 64) return NULL;
  size_t need = (n + 15) & ~(size_t)15;
  ct_arena_block *b = a->head;
  if (!b || b->size - b->used < need) {
    size_t size = need > a->block_bytes ? need : a->block_bytes;
    b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->size = size;
    b->used = 0;
    if (a->head && need > a->block_bytes) { /* keep the current block for small requests */
      b->next = a->head->next;
      a->head->next = b;
    } else {
      b->next = a->head;
      a->head = b;
    }
  }
  void *p = b->data + b->used;
  b->used += need;
  a->used_bytes += need;
  memset(p, 0, n);
  return p;
}

char *ct_arena_strdup(ct_arena *a, const char *s) {
  return s ? ct_arena_memdup(a, s, strlen(s) + 1) : NULL;
}

void *ct_arena_memdup(ct_arena *a, const void *p, size_t n) {
  void *q = ct_arena_alloc(a, n ? n : 1);
  if (q && n) memcpy(q, p, n);
  return q;
}
