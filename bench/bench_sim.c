/* bench_sim.c: speed of the cmodel (not a test). Without arguments: simulated cycles per
 * wall-second for a long DMA-bound program (engines mostly waiting: the clock jumps to the
 * next event) and a long compute-bound int8 MATMUL program, each timed-only and with
 * functional execution; plus functional int8 GMAC/s. With a compiled program
 * (`bench_sim PROG.ctpu MODEL.tpu INPUT [CHIP.json|-] [RUNS]`, bench_sim_models.sh): the
 * process CPU seconds of ct_sim_run (median of RUNS, default 5) per mode — as `deploy
 * --compare-all` runs it (timing + functional + race check + --dump-all), without the dump,
 * --no-race-check, --functional, both, timing only — with simulated cycles/s and GMAC/s.
 * Prints one line per case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmodel/sim.h"
#include "io/inputs.h"
#include "ops/verify.h"

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

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One mode of a real program: median CPU seconds of `runs` ct_sim_run calls. */
static int bench_mode(const char *name, const ct_chip *chip, const ct_program *p, const ct_tensor_list *in,
                      ct_sim_run_options o, int runs) {
  double t[64];
  uint64_t cycles = 0, macs = 0;
  for (int r = 0; r < runs; r++) {
    ct_sim_run_output out;
    ct_diag d;
    double t0 = cpu_now();
    ct_status st = ct_sim_run(chip, p, in, &o, &out, &d);
    t[r] = cpu_now() - t0;
    cycles = out.res.counters.total_cycles, macs = out.res.counters.macs;
    ct_sim_run_output_free(&out);
    if (st) return fprintf(stderr, "bench_sim: %s: %s\n", name, d.msg), 1;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  double m = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  printf("%-40s %12llu cycles %8.3f s cpu %10.3g cycles/s %8.3f GMAC/s\n", name, (unsigned long long)cycles, m,
         (double)cycles / m, (double)macs / m / 1e9);
  return 0;
}

/* argv: PROG.ctpu MODEL.tpu INPUT [CHIP.json|-] [RUNS]. */
static int bench_program(int argc, char **argv) {
  ct_chip chip;
  ct_program p;
  ct_tensor_list in;
  ct_graph *model = NULL;
  ct_diag d;
  ct_tensor_list_init(&in);
  ct_program_init(&p, 0);
  int runs = argc > 5 ? atoi(argv[5]) : 5;
  runs = runs < 1 ? 1 : runs > 64 ? 64 : runs;
  ct_status st = argc > 4 && strcmp(argv[4], "-") ? ct_chip_load(argv[4], &chip, &d) : (ct_chip_default(&chip), CT_OK);
  if (!st) st = ct_program_load(argv[1], &chip, &p, &d);
  if (!st) st = ct_ir_load_verified(argv[2], &model, &d);
  ct_input_slot slots[8];
  int n = 0;
  for (size_t i = 0; !st && i < p.n_io && n < 8; i++) {
    const ct_prog_io *io = &p.io[i];
    if (io->is_output || io->is_tensor) continue;
    const ct_value *v = ct_graph_find_value(model, io->name);
    slots[n++] = (ct_input_slot){io->name, io->dtype, io->ndim, io->shape, v && v->def && v->def->kind == CT_OP_INPUT ? v->def : NULL,
                                 true, "no Input op of that name"};
  }
  const char *files[1] = {argv[3]};
  if (!st) st = ct_inputs_load_slots(slots, n, files, 1, &in, &d);
  int rc = st ? (fprintf(stderr, "bench_sim: %s\n", d.msg), 1) : 0;
  printf("%s on %s (CPU seconds of ct_sim_run, median of %d)\n", argv[1], chip.name, runs);
  if (!rc) {
    rc |= bench_mode("deploy --compare-all (timed+fn+race+dump)", &chip, &p, &in, (ct_sim_run_options){.dump_all = true}, runs);
    rc |= bench_mode("timed + functional + race check", &chip, &p, &in, (ct_sim_run_options){0}, runs);
    rc |= bench_mode("--no-race-check", &chip, &p, &in, (ct_sim_run_options){.no_race_check = true}, runs);
    rc |= bench_mode("--functional", &chip, &p, &in, (ct_sim_run_options){.functional = true}, runs);
    rc |= bench_mode("--functional --no-race-check", &chip, &p, &in,
                     (ct_sim_run_options){.functional = true, .no_race_check = true}, runs);
    rc |= bench_mode("timing only (no functional execution)", &chip, &p, &in, (ct_sim_run_options){.timing_only = true}, runs);
  }
  ct_graph_free(model);
  ct_tensor_list_free(&in);
  ct_program_free(&p);
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 3) return bench_program(argc, argv);
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
