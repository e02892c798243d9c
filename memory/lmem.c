/* lmem.c: LMEM byte array, bank masks, per-bank byte counts and port-limited cycles
 * (docs/architecture.md §3: bank = addr ÷ (bytes ÷ banks), one port per bank). */
#include "memory/lmem.h"

#include <stdlib.h>
#include <string.h>

ct_status ct_lmem_init(ct_lmem *m, uint64_t bytes, uint32_t banks, uint32_t port_bytes,
                       ct_diag *d) {
  memset(m, 0, sizeof *m);
  if (bytes == 0 || banks == 0 || banks > CT_LMEM_MAX_BANKS || bytes % banks)
    return ct_diag_set(d, CT_ERR_INPUT, "lmem: %u banks cannot split %llu bytes (1..%d banks "
                       "dividing the size)", banks, (unsigned long long)bytes, CT_LMEM_MAX_BANKS);
  if (port_bytes == 0) return ct_diag_set(d, CT_ERR_INPUT, "lmem: bank_port_bytes is 0");
  m->data = calloc((size_t)bytes, 1);
  if (!m->data)
    return ct_diag_set(d, CT_ERR_LIMIT, "lmem: out of memory for %llu bytes",
                       (unsigned long long)bytes);
  m->bytes = bytes;
  m->banks = banks;
  m->bank_bytes = bytes / banks;
  m->port_bytes = port_bytes;
  return CT_OK;
}

void ct_lmem_free(ct_lmem *m) {
  free(m->data);
  memset(m, 0, sizeof *m);
}

bool ct_lmem_bank_span(const ct_lmem *m, const ct_mem_region *r, uint32_t *b0, uint32_t *b1) {
  uint64_t lo, hi;
  if (!ct_mem_region_span(r, &lo, &hi) || lo >= m->bytes || hi <= lo) return false;
  if (hi > m->bytes) hi = m->bytes;
  *b0 = (uint32_t)(lo / m->bank_bytes), *b1 = (uint32_t)((hi - 1) / m->bank_bytes);
  return true;
}

typedef struct bank_ctx {
  const ct_lmem *m;
  uint64_t *per_bank;
} bank_ctx;

static bool count_run(void *ctx, uint64_t addr, uint64_t n) {
  bank_ctx *c = ctx;
  while (n > 0) {
    uint64_t b = addr / c->m->bank_bytes;
    if (b >= c->m->banks) return false;
    uint64_t room = (b + 1) * c->m->bank_bytes - addr, k = n < room ? n : room;
    c->per_bank[b] += k;
    addr += k;
    n -= k;
  }
  return true;
}

void ct_lmem_bank_bytes(const ct_lmem *m, const ct_mem_region *r, uint64_t *per_bank) {
  bank_ctx c = {m, per_bank};
  ct_mem_region_each_run(r, count_run, &c);
}

uint64_t ct_lmem_busiest_bank_bytes(const ct_lmem *m, const ct_mem_region *rs, int n) {
  uint64_t per_bank[CT_LMEM_MAX_BANKS], worst = 0;
  memset(per_bank, 0, sizeof *per_bank * m->banks);
  for (int i = 0; i < n; i++)
    if (rs[i].space == CT_SPACE_LMEM) ct_lmem_bank_bytes(m, &rs[i], per_bank);
  for (uint32_t b = 0; b < m->banks; b++)
    if (per_bank[b] > worst) worst = per_bank[b];
  return worst;
}

uint64_t ct_lmem_port_cycles(const ct_lmem *m, const ct_mem_region *rs, int n) {
  return (ct_lmem_busiest_bank_bytes(m, rs, n) + m->port_bytes - 1) / m->port_bytes;
}

typedef struct copy_ctx {
  uint8_t *mem;
  uint8_t *buf;
  bool to_mem;
} copy_ctx;

static bool copy_run(void *ctx, uint64_t addr, uint64_t n) {
  copy_ctx *c = ctx;
  if (c->to_mem)
    memcpy(c->mem + addr, c->buf, (size_t)n);
  else
    memcpy(c->buf, c->mem + addr, (size_t)n);
  c->buf += n;
  return true;
}

void ct_lmem_gather(const ct_lmem *m, const ct_mem_region *r, void *dst) {
  copy_ctx c = {m->data, dst, false};
  ct_mem_region_each_run(r, copy_run, &c);
}

void ct_lmem_scatter(ct_lmem *m, const ct_mem_region *r, const void *src) {
  copy_ctx c = {m->data, (uint8_t *)(uintptr_t)src, true};
  ct_mem_region_each_run(r, copy_run, &c);
}

/* The bits of banks [lo, hi] that fall in word w of a ct_lmem_bankset (lo <= hi). */
static uint64_t word_bits(uint32_t w, uint32_t lo, uint32_t hi) {
  uint32_t a = w * 64, l = lo > a ? lo - a : 0, h = hi < a + 63 ? hi - a : 63;
  return (~UINT64_C(0) << l) & (~UINT64_C(0) >> (63 - h));
}

bool ct_lmem_port_claim(ct_lmem_bankset *claimed, const uint16_t *lo, const uint16_t *hi, int n) {
  for (int i = 0; i < n; i++)
    for (uint32_t w = lo[i] / 64u; w <= hi[i] / 64u; w++)
      if (claimed->w[w] & word_bits(w, lo[i], hi[i])) return false;
  for (int i = 0; i < n; i++)
    for (uint32_t w = lo[i] / 64u; w <= hi[i] / 64u; w++) claimed->w[w] |= word_bits(w, lo[i], hi[i]);
  return true;
}
