/* exec_dma.c: functional LOAD / STORE / MOVE: strided 4-D gather, optional h/w transpose,
 * strided scatter (isa.def CT_ISA_FIELDS_LOAD/STORE/MOVE). */
#include <stdlib.h>
#include <string.h>

#include "cmodel/decode.h"
#include "cmodel/exec.h"

/* (n, c, h, w) → (n, c, w, h) of eb-byte elements. */
static void transpose_hw(const uint8_t *src, uint8_t *dst, int64_t nc, int64_t h, int64_t w,
                         size_t eb) {
  for (int64_t p = 0; p < nc; p++)
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++)
        memcpy(dst + ((p * w + x) * h + y) * (int64_t)eb, src + ((p * h + y) * w + x) * (int64_t)eb, eb);
}

ct_status ct_sim_exec_dma(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
  ct_mem_region src, dst;
  ct_sim_dma_regions(in, &src, &dst);
  size_t bytes = (size_t)ct_mem_region_numel(&src) * src.elem_bytes;
  uint8_t *buf = malloc(bytes ? 2 * bytes : 1);
  if (!buf) return ct_diag_set(d, CT_ERR_LIMIT, "insn %u (%s): out of memory", index, ct_isa_op_name(in->op));
  ct_status st = CT_OK;
  if (src.space == CT_SPACE_GMEM)
    st = ct_gmem_gather(m->gmem, &src, buf, d);
  else
    ct_lmem_gather(m->lmem, &src, buf);
  uint8_t *out = buf;
  int64_t trans = in->op == CT_ISA_LOAD ? in->load.trans
                  : in->op == CT_ISA_STORE ? in->store.trans : in->move.trans;
  if (!st && trans && src.shape[2] > 1 && src.shape[3] > 1) { /* dst iterates (n, c, w, h) */
    out = buf + bytes;
    transpose_hw(buf, out, src.shape[0] * src.shape[1], src.shape[2], src.shape[3], src.elem_bytes);
  }
  if (!st) {
    if (dst.space == CT_SPACE_GMEM)
      st = ct_gmem_scatter(m->gmem, &dst, out, d);
    else
      ct_lmem_scatter(m->lmem, &dst, out);
  }
  free(buf);
  if (st) ct_diag_prefix(d, "insn %u (%s): ", index, ct_isa_op_name(in->op));
  return st;
}
