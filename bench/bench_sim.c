/* bench_sim.c: speed of the cmodel (not a test): simulated cycles per wall-second for a long
 * DMA-bound program (engines mostly waiting: the clock jumps to the next event) and a long
 * compute-bound int8 MATMUL program, each timed-only and with functional execution; plus
 * functional int8 GMAC/s. Prints one line per case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"

static ct_insn dma_load(uint64_t dst, uint64_t src, int64_t bytes) {
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = CT_ISA_LOAD;
  i.load.dst = (int64_t)dst, i.load.src = (int64_t)src, i.load.dtype = CT_I8;
  i.load.n = i.load.c = i.load.h = 1, i.load.w = bytes;
  i.load.src_sw = i.load.dst_sw = 1;
  i.load.src_sh = i.load.dst_sh = i.load.src_sc = i.load.dst_sc = i.load.src_sn = i.load.dst_sn = bytes;
  return i;
}

static ct_insn mm(int64_t m, int64_t k, int64_t n) {
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = CT_ISA_MATMUL;
  i.matmul.a = 0, i.matmul.b = 0x40000, i.matmul.out = 0x80000;
  i.matmul.batch = 1, i.matmul.m = m, i.matmul.k = k, i.matmul.n = n;
  i.matmul.dt_a = i.matmul.dt_b = CT_I8, i.matmul.dt_out = CT_I32, i.matmul.rq_mode = CT_ISA_RQ_NONE;
  return i;
}

/* Runs p; prints cycles, wall time, cycles/s and GMAC/s. */
static int bench(const char *name, const ct_chip *chip, const ct_program *p, bool functional,
                 bool timing_only) {
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  ct_sim_run_options o = {.functional = functional, .timing_only = timing_only};
  ct_sim_run_output out;
  ct_diag d;
  ct_status st = ct_sim_run(chip, p, &in, &o, &out, &d);
  if (st) {
    fprintf(stderr, "bench_sim: %s: %s\n", name, d.msg);
    ct_sim_run_output_free(&out);
    return 1;
  }
  const ct_sim_counters *c = &out.res.counters;
  printf("%-36s %12llu cycles %8.3f s %10.3g cycles/s %8.3f GMAC/s\n", name,
         (unsigned long long)c->total_cycles, c->wall_seconds,
         (double)c->total_cycles / c->wall_seconds, (double)c->macs / c->wall_seconds / 1e9);
  ct_sim_run_output_free(&out);
  return 0;
}

int main(void) {
  ct_chip chip;
  ct_chip_default(&chip);
  ct_program dma, mxu;
  ct_program_init(&dma, 0);
  ct_program_init(&mxu, 0);
  /* DMA-bound: 20000 loads of 64 KiB (100 + 2048 cycles each), ping-pong over 2 buffers */
  for (int i = 0; i < 20000; i++) {
    ct_insn l = dma_load((uint64_t)(i % 2) * 0x10000, (uint64_t)(i % 64) * 0x10000, 0x10000);
    ct_program_add_insn(&dma, &l, NULL);
  }
  /* compute-bound: 64 int8 matmuls 256 x 512 x 256 (33.5 M MACs each) */
  for (int i = 0; i < 64; i++) {
    ct_insn m = mm(256, 512, 256);
    ct_program_add_insn(&mxu, &m, NULL);
  }
  int rc = bench("dma-bound, timing only", &chip, &dma, false, true);
  rc |= bench("dma-bound, timed + functional", &chip, &dma, false, false);
  rc |= bench("dma-bound, functional only", &chip, &dma, true, false);
  rc |= bench("mxu-bound int8, timing only", &chip, &mxu, false, true);
  rc |= bench("mxu-bound int8, timed + functional", &chip, &mxu, false, false);
  rc |= bench("mxu-bound int8, functional only", &chip, &mxu, true, false);
  ct_program_free(&dma);
  ct_program_free(&mxu);
  return rc;
}
