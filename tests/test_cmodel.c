/* test_cmodel.c: the cmodel (memory/, dma/, cmodel/) — timing derived by hand from the model
 * of docs/cmodel.md (isolated LOAD, MXU folds, bank conflicts, double buffering), race,
 * deadlock, bounds and illegal-opcode errors, --functional equivalence. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmodel/sim.h"
#include "memory/region.h"
#include "tests/testutil.h"

/* A dense LOAD of n·c·h·w elements of dt from GMEM src to LMEM dst. */
static ct_insn load(uint64_t dst, uint64_t src, int64_t n, int64_t c, int64_t h, int64_t w, ct_dtype dt) {
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = CT_ISA_LOAD;
  i.load.dst = (int64_t)dst;
  i.load.src = (int64_t)src;
  i.load.dtype = dt;
  i.load.n = n, i.load.c = c, i.load.h = h, i.load.w = w;
  i.load.src_sw = i.load.dst_sw = 1;
  i.load.src_sh = i.load.dst_sh = w;
  i.load.src_sc = i.load.dst_sc = h * w;
  i.load.src_sn = i.load.dst_sn = c * h * w;
  return i;
}

static ct_insn store(uint64_t dst, uint64_t src, int64_t n, int64_t c, int64_t h, int64_t w, ct_dtype dt) {
  ct_insn l = load(0, 0, n, c, h, w, dt), i;
  memset(&i, 0, sizeof i);
  i.op = CT_ISA_STORE;
  i.store.dst = (int64_t)dst, i.store.src = (int64_t)src, i.store.dtype = dt;
  i.store.n = n, i.store.c = c, i.store.h = h, i.store.w = w;
  i.store.src_sn = i.store.dst_sn = l.load.src_sn;
  i.store.src_sc = i.store.dst_sc = l.load.src_sc;
  i.store.src_sh = i.store.dst_sh = l.load.src_sh;
  i.store.src_sw = i.store.dst_sw = 1;
  return i;
}

/* int8 MATMUL [m,k] x [k,n] -> raw int32 [m,n]. */
static ct_insn matmul(uint64_t a, uint64_t b, uint64_t out, int64_t m, int64_t k, int64_t n) {
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = CT_ISA_MATMUL;
  i.matmul.a = (int64_t)a, i.matmul.b = (int64_t)b, i.matmul.out = (int64_t)out;
  i.matmul.batch = 1, i.matmul.m = m, i.matmul.k = k, i.matmul.n = n;
  i.matmul.dt_a = CT_I8, i.matmul.dt_b = CT_I8, i.matmul.dt_out = CT_I32;
  i.matmul.rq_mode = CT_ISA_RQ_NONE;
  return i;
}

static ct_insn eltwise_add(uint64_t a, uint64_t b, uint64_t out, int64_t w) {
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = CT_ISA_ELTWISE;
  i.eltwise.a = (int64_t)a, i.eltwise.b = (int64_t)b, i.eltwise.out = (int64_t)out;
  i.eltwise.n = 1, i.eltwise.c = 1, i.eltwise.h = 1, i.eltwise.w = w;
  i.eltwise.op = CT_ISA_ELT_ADD;
  i.eltwise.dt_a = i.eltwise.dt_b = i.eltwise.dt_out = CT_I8;
  i.eltwise.m_a = i.eltwise.m_b = 1;
  return i;
}

static ct_insn ctrl(ct_isa_op op) {
  ct_insn i;
  memset(&i, 0, sizeof i);
  i.op = op;
  return i;
}

static void add(ct_program *p, ct_insn i, uint32_t wait, uint32_t signal) {
  i.wait = wait;
  i.signal = signal;
  ck_assert_int_eq(ct_program_add_insn(p, &i, NULL), CT_OK);
}

/* Runs p on chip (NULL: defaults); returns the status and leaves results in out. */
static ct_status run(const ct_chip *chip, const ct_program *p, bool functional, ct_sim_run_output *out,
                     ct_diag *d) {
  ct_chip def;
  ct_chip_default(&def);
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  ct_sim_run_options o = {.functional = functional};
  ct_status st = ct_sim_run(chip ? chip : &def, p, &in, &o, out, d);
  ct_tensor_list_free(&in);
  return st;
}

START_TEST(test_isolated_load_is_latency_plus_bursts) {
  /* default chip: latency 100, 32 bytes/cycle, bursts of 64 bytes */
  ct_program p;
  ct_program_init(&p, 0);
  add(&p, load(0, 0, 1, 1, 1, 1000, CT_I8), 0, 0);    /* 1 run of 1000 B -> 1024 B moved */
  add(&p, load(4096, 0, 1, 1, 10, 10, CT_I8), 0, 0);  /* dense 100 B -> 1 run -> 128 B */
  ct_insn s = load(8192, 0, 1, 1, 10, 10, CT_I8);
  s.load.src_sh = 100;                                 /* 10 runs of 10 B -> 10 x 64 B */
  add(&p, s, 0, 0);
  ct_sim_run_output o;
  ct_diag d;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
  ck_assert_uint_eq(o.res.end[0] - o.res.start[0], 100 + 1024 / 32);
  ck_assert_uint_eq(o.res.end[1] - o.res.start[1], 100 + 128 / 32);
  ck_assert_uint_eq(o.res.end[2] - o.res.start[2], 100 + 640 / 32);
  /* one load engine: back to back, the first starts at cycle 0 */
  ck_assert_uint_eq(o.res.start[0], 0);
  ck_assert_uint_eq(o.res.start[1], o.res.end[0]);
  ck_assert_uint_eq(o.res.counters.total_cycles, 132 + 104 + 120);
  ck_assert_uint_eq(o.res.counters.ddr_bytes_read, 1024 + 128 + 640);
  /* load0: busy = data cycles, stall ddr = latencies, the rest idle; all add up */
  const ct_engine_counters *e = &o.res.counters.engines[0];
  ck_assert_str_eq(e->name, "load0");
  ck_assert_uint_eq(e->busy, 32 + 4 + 20);
  ck_assert_uint_eq(e->stall[CT_STALL_DDR], 300);
  for (int k = 0; k < o.res.counters.n_engines; k++) {
    const ct_engine_counters *c = &o.res.counters.engines[k];
    uint64_t sum = c->busy + c->idle;
    for (int r = 0; r < CT_STALL_COUNT; r++) sum += c->stall[r];
    ck_assert_uint_eq(sum, o.res.counters.total_cycles);
  }
  ct_sim_run_output_free(&o);
  ct_program_free(&p);
}
END_TEST

/* Striping (docs/cmodel.md "DMA"): at 256 B/cycle a 64 KiB LOAD into one 64 KiB bank is held
 * to its one 64-byte port: 100 + 65536 / 64 = 1124 cycles; into the halves of banks 0 and 1
 * it drives both ports: 100 + 32768 / 64 = 612; with dma.stripe_banks = 1 both take 1124. The
 * MOVE of 64 KiB from bank 2 to the halves of banks 4 and 5: 1024 cycles (its source's bank). */
START_TEST(test_dma_stripes_over_banks) {
  for (int stripe = 0; stripe < 2; stripe++) {
    ct_chip c;
    ct_chip_default(&c);
    c.gmem_bytes_per_cycle = 256;
    c.dma_stripe_banks = stripe ? 1024 : 1;
    ct_program p;
    ct_program_init(&p, 0);
    add(&p, load(0, 0, 1, 1, 64, 1024, CT_I8), 0, 0);
    add(&p, load(0x18000, 0, 1, 1, 64, 1024, CT_I8), 0, 0);
    ct_insn mv = ctrl(CT_ISA_MOVE);
    mv.move.src = 0x20000, mv.move.dst = 0x48000, mv.move.dtype = CT_I8;
    mv.move.n = mv.move.c = 1, mv.move.h = 64, mv.move.w = 1024;
    mv.move.src_sw = mv.move.dst_sw = 1, mv.move.src_sh = mv.move.dst_sh = 1024;
    mv.move.src_sc = mv.move.dst_sc = mv.move.src_sn = mv.move.dst_sn = 65536;
    add(&p, mv, 0, 0);
    ct_sim_run_output o;
    ct_diag d;
    ck_assert_int_eq(run(&c, &p, false, &o, &d), CT_OK);
    ck_assert_uint_eq(o.res.end[0] - o.res.start[0], 1124);
    ck_assert_uint_eq(o.res.end[1] - o.res.start[1], stripe ? 612 : 1124);
    ck_assert_uint_eq(o.res.end[2] - o.res.start[2], 1024);
    ct_sim_run_output_free(&o);
    ct_program_free(&p);
  }
}
END_TEST

START_TEST(test_matmul_fold_cycles_ws_and_os) {
  ct_program p;
  ct_program_init(&p, 0);
  /* WS on 32x32: Sr = k = 32, Sc = n = 32, T = m = 64: 1 fold of 2*32 + 32 + 64 - 2 = 158 */
  add(&p, matmul(0, 0x10000, 0x20000, 64, 32, 32), 0, 0);
  /* k = 64, n = 64: 2 x 2 folds of 158 = 632 */
  add(&p, matmul(0, 0x10000, 0x30000, 64, 64, 64), 0, 0);
  ct_sim_run_output o;
  ct_diag d;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
  ck_assert_uint_eq(o.res.end[0] - o.res.start[0], 158);
  ck_assert_uint_eq(o.res.end[1] - o.res.start[1], 632);
  ck_assert_uint_eq(o.res.counters.macs, 64 * 32 * 32 + 64 * 64 * 64);
  ct_sim_run_output_free(&o);
  /* OS: Sr = m = 64 (2 row folds), Sc = 32, T = k = 32: 2 x (2*32 + 32 + 32 - 2) = 252 */
  ct_chip os;
  ct_chip_default(&os);
  os.mxu_dataflow = CT_DATAFLOW_OS;
  ck_assert_int_eq(run(&os, &p, false, &o, &d), CT_OK);
  ck_assert_uint_eq(o.res.end[0] - o.res.start[0], 252);
  ct_sim_run_output_free(&o);
  /* bf16 at fp_rate 0.25: 4 x 158 */
  ct_program_free(&p);
  ct_program_init(&p, 0);
  ct_insn f = matmul(0, 0x10000, 0x20000, 64, 32, 32);
  f.matmul.dt_a = f.matmul.dt_b = CT_BF16;
  f.matmul.dt_out = CT_F32;
  add(&p, f, 0, 0);
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
  ck_assert_uint_eq(o.res.end[0] - o.res.start[0], 4 * 158);
  ct_sim_run_output_free(&o);
  ct_program_free(&p);
}
END_TEST

START_TEST(test_two_engines_on_one_bank_stall) {
  /* LOAD (cycle 0) writes bank 0 after its 100-cycle latency; ELTWISE (dispatched and
   * started at cycle 1) streams 3 x 4096 B through bank 0: port-limited to 12288 / 64 = 192
   * cycles (lanes: 4096 / 32 + 4 = 132). At cycle 100 the older LOAD takes bank 0 for its
   * 1024 / 32 = 32 data cycles, so the ELTWISE stalls 32 cycles: it ends at 1 + 192 + 32. */
  for (int same = 0; same < 2; same++) {
    ct_program p;
    ct_program_init(&p, 0);
    uint64_t base = same ? 0x1000 : 0x10000; /* bank 0 vs bank 1 (64 KiB banks) */
    add(&p, load(0, 0, 1, 1, 1, 1000, CT_I8), 0, 0);
    add(&p, eltwise_add(base, base + 4096, base + 8192, 4096), 0, 0);
    ct_sim_run_output o;
    ct_diag d;
    ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
    ck_assert_uint_eq(o.res.start[1], 1);
    ck_assert_uint_eq(o.res.end[0], 132);
    ck_assert_uint_eq(o.res.end[1], same ? 1 + 192 + 32 : 1 + 192);
    const ct_engine_counters *vpu = &o.res.counters.engines[3];
    ck_assert_str_eq(vpu->name, "vpu");
    ck_assert_uint_eq(vpu->stall[CT_STALL_BANK], same ? 32 : 0);
    ck_assert_uint_eq(o.res.counters.bank_conflict_cycles, same ? 32 : 0);
    ct_sim_run_output_free(&o);
    ct_program_free(&p);
  }
}
END_TEST

/* The MXU∧VPU overlap counter: a MATMUL 64×32×32 (1 fold, 2·32 + 32 + 64 − 2 = 158 cycles from
 * cycle 0, banks 0..2) and an ELTWISE of 3 × 4096 B in bank 4 (port-bound: 192 cycles from its
 * dispatch at cycle 1) are both busy in cycles [1, 158): 157. Chained by a semaphore, none. */
START_TEST(test_mxu_vpu_overlap_counter) {
  for (int chained = 0; chained < 2; chained++) {
    ct_program p;
    ct_program_init(&p, 0);
    add(&p, matmul(0, 0x10000, 0x20000, 64, 32, 32), 0, chained ? 1u : 0);
    add(&p, eltwise_add(0x40000, 0x41000, 0x42000, 4096), chained ? 1u : 0, 0);
    ct_sim_run_output o;
    ct_diag d;
    ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
    ck_assert_uint_eq(o.res.end[0] - o.res.start[0], 158);
    ck_assert_uint_eq(o.res.counters.mxu_vpu_overlap, chained ? 0 : 157);
    ct_sim_run_output_free(&o);
    ct_program_free(&p);
  }
}
END_TEST

/* Double-buffered tiled matmul: weights once, then N tiles of A (256 x 64 int8) ping-pong
 * between bank 0 and bank 1 (outputs in banks 3/4, weights bank 2); semaphores full0/1 (0, 1),
 * free0/1 (2, 3), weights (4). Program order: LW L0 L1 M0 L2 M1 L3 M2 M3 END. */
START_TEST(test_double_buffering_overlaps) {
  /* Hand derivation (default chip): load W = 100 + 2048/32 = 164, load tile = 100 +
   * 16384/32 = 612, matmul tile = 2 folds x (2*32 + 32 + 256 - 2) = 700 (compute-bound).
   * L0 ends 164 + 612 = 776, L1 1388; mxu tile i starts 776 + 700 i; total 776 + 700 N.
   * Without overlap it would be 164 + N (612 + 700). */
  const int N = 4;
  ct_program p;
  ct_program_init(&p, 0);
  add(&p, load(0x20000, 0, 1, 1, 64, 32, CT_I8), 0, 1u << 4);
  for (int i = 0; i < N; i++) {
    uint32_t b = (uint32_t)(i % 2);
    add(&p, load(b ? 0x10000 : 0, 0x100000 + (uint64_t)i * 16384, 1, 1, 256, 64, CT_I8),
        i >= 2 ? 1u << (2 + b) : 0, 1u << b);
    if (i == 0) continue; /* issue L0, L1 before M0 */
    for (int j = i - 1; j == i - 1; j++) {
      uint32_t bj = (uint32_t)(j % 2);
      add(&p, matmul(bj ? 0x10000 : 0, 0x20000, bj ? 0x40000 : 0x30000, 256, 64, 32),
          (1u << bj) | (j == 0 ? 1u << 4 : 0), 1u << (2 + bj));
    }
  }
  uint32_t bl = (uint32_t)((N - 1) % 2);
  add(&p, matmul(bl ? 0x10000 : 0, 0x20000, bl ? 0x40000 : 0x30000, 256, 64, 32), 1u << bl, 0);
  add(&p, ctrl(CT_ISA_END), 0, 0);
  ct_sim_run_output o;
  ct_diag d;
  ck_assert_msg(run(NULL, &p, false, &o, &d) == CT_OK, "%s", d.msg);
  ck_assert_uint_eq(o.res.counters.total_cycles, 776 + 700 * N);
  ck_assert_uint_lt(o.res.counters.total_cycles, 164 + N * (612 + 700));
  const ct_engine_counters *mxu = &o.res.counters.engines[2];
  ck_assert_uint_eq(mxu->busy, 700 * N);
  ck_assert_uint_eq(mxu->stall[CT_STALL_SEM], 776 - 3); /* M0 dispatched at cycle 3 */
  ck_assert_uint_eq(mxu->idle, 3);
  ct_sim_run_output_free(&o);
  ct_program_free(&p);
}
END_TEST

START_TEST(test_race_is_reported_with_both_instructions) {
  ct_program p;
  ct_program_init(&p, 0);
  uint32_t dbg;
  ck_assert_int_eq(ct_program_add_debug(&p, "conv1", 0, 3, 1, &dbg, NULL), CT_OK);
  ct_insn l = load(0, 0, 1, 1, 1, 256, CT_I8);
  l.debug_id = dbg;
  add(&p, l, 0, 0);
  add(&p, eltwise_add(128, 0x10000, 0x20000, 64), 0, 0); /* reads [128, 192): no semaphore */
  ct_sim_run_output o;
  ct_diag d;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_ERR_CHECK);
  ck_assert_ptr_nonnull(strstr(d.msg, "race: insn 0 (load, layer \"conv1\" group 0 tile 3 step 1) writes lmem"));
  ck_assert_ptr_nonnull(strstr(d.msg, "insn 1 (eltwise) reads"));
  ct_sim_run_output_free(&o);
  /* the same pair ordered by a semaphore is fine, and so are disjoint bytes */
  p.insns[0].signal = 1u << 5;
  p.insns[1].wait = 1u << 5;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
  ct_sim_run_output_free(&o);
  p.insns[0].signal = p.insns[1].wait = 0;
  p.insns[1].eltwise.a = 256;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
  ct_sim_run_output_free(&o);
  /* a strided write that interleaves with a read without sharing a byte is no race */
  p.insns[0].load.w = 1, p.insns[0].load.h = 64, p.insns[0].load.dst_sh = 2; /* even bytes */
  p.insns[1].eltwise.a = 1, p.insns[1].eltwise.w = 1;                         /* byte 1 */
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_OK);
  ct_sim_run_output_free(&o);
  ct_program_free(&p);
}
END_TEST

START_TEST(test_deadlock_names_waiters_and_semaphores) {
  ct_program p;
  ct_program_init(&p, 0);
  add(&p, eltwise_add(0, 4096, 8192, 64), 1u << 3, 0);       /* waits for sem 3: never */
  add(&p, load(0x10000, 0, 1, 1, 1, 64, CT_I8), 1u << 7, 1u << 3); /* waits for sem 7 */
  ct_sim_run_output o;
  ct_diag d;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_ERR_CHECK);
  ck_assert_ptr_nonnull(strstr(d.msg, "deadlock at cycle"));
  ck_assert_ptr_nonnull(strstr(d.msg, "insn 0 (eltwise) waits for semaphore(s) 3"));
  ck_assert_ptr_nonnull(strstr(d.msg, "insn 1 (load) waits for semaphore(s) 7"));
  ct_sim_run_output_free(&o);
  /* functional mode detects it too */
  ck_assert_int_eq(run(NULL, &p, true, &o, &d), CT_ERR_CHECK);
  ck_assert_ptr_nonnull(strstr(d.msg, "deadlock"));
  ct_sim_run_output_free(&o);
  ct_program_free(&p);
}
END_TEST

START_TEST(test_out_of_bounds_and_illegal_opcode) {
  ct_program p;
  ct_program_init(&p, 0);
  add(&p, load(0xFFF00, 0, 1, 1, 1, 1000, CT_I8), 0, 0); /* 1 MiB LMEM: ends past it */
  ct_sim_run_output o;
  ct_diag d;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "insn 0 (load)"));
  ct_sim_run_output_free(&o);
  p.insns[0] = load(0, (UINT64_C(1) << 30) - 10, 1, 1, 1, 100, CT_I8); /* GMEM is 1 GiB */
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "insn 0 (load)"));
  ct_sim_run_output_free(&o);
  p.insns[0].op = (ct_isa_op)200;
  ck_assert_int_eq(run(NULL, &p, false, &o, &d), CT_ERR_INPUT);
  ck_assert_ptr_nonnull(strstr(d.msg, "insn 0: illegal opcode 200"));
  ct_sim_run_output_free(&o);
  ct_program_free(&p);
}
END_TEST

START_TEST(test_region_runs_and_overlap) {
  int64_t shape[4] = {2, 3, 4, 5};
  ct_mem_region r;
  ct_mem_region_dense(&r, CT_SPACE_GMEM, false, 100, shape, 2);
  uint64_t run_bytes;
  ck_assert_int_eq(ct_mem_region_runs(&r, &run_bytes), 1);
  ck_assert_uint_eq(run_bytes, 240);
  ck_assert_uint_eq(ct_mem_region_burst_bytes(&r, 64), 256);
  r.stride[2] = 6; /* rows of 5 elements with a gap of 1: 24 runs of 10 bytes */
  r.stride[1] = 24, r.stride[0] = 72;
  ck_assert_int_eq(ct_mem_region_runs(&r, &run_bytes), 24);
  ck_assert_uint_eq(run_bytes, 10);
  ck_assert_uint_eq(ct_mem_region_burst_bytes(&r, 64), 24 * 64);
  ct_mem_region gap; /* the 2-byte gaps between rows: never overlap r */
  int64_t gs[4] = {1, 1, 23, 1};
  ct_mem_region_dense(&gap, CT_SPACE_GMEM, true, 110, gs, 2);
  gap.stride[2] = 6;
  ck_assert(!ct_mem_region_overlap(&r, &gap));
  gap.addr = 108;
  ck_assert(ct_mem_region_overlap(&r, &gap));
  gap.space = CT_SPACE_LMEM;
  ck_assert(!ct_mem_region_overlap(&r, &gap));
}
END_TEST

START_TEST(test_functional_matches_timed_and_c_reference) {
  /* LOAD A [16x40] and B [40x24] int8 from GMEM, MATMUL with bias-free per-tensor requant
   * (m = 1 << 20, s = 24, zp_out 3, relu), STORE out; compare with a plain C loop. */
  const int M = 16, K = 40, N = 24;
  int8_t a[16 * 40], b[40 * 24];
  srand(7);
  for (int i = 0; i < M * K; i++) a[i] = (int8_t)(rand() % 256 - 128);
  for (int i = 0; i < K * N; i++) b[i] = (int8_t)(rand() % 256 - 128);
  int32_t rq[2] = {1 << 20, 24};
  ct_program p;
  ct_program_init(&p, 0);
  ck_assert_int_eq(ct_program_add_const(&p, "a", CT_I8, 0x1000, a, sizeof a, NULL), CT_OK);
  ck_assert_int_eq(ct_program_add_const(&p, "b", CT_I8, 0x2000, b, sizeof b, NULL), CT_OK);
  ck_assert_int_eq(ct_program_add_const(&p, "rq", CT_I32, 0x3000, rq, sizeof rq, NULL), CT_OK);
  ct_prog_io out = {"y", true, CT_I8, 2, {M, N}, 0x4000, 0.5, 3, false, 0, 0, NULL, NULL};
  ck_assert_int_eq(ct_program_add_io(&p, &out, NULL), CT_OK);
  add(&p, load(0, 0x1000, 1, 1, M, K, CT_I8), 0, 1);
  add(&p, load(0x10000, 0x2000, 1, 1, K, N, CT_I8), 0, 2);
  add(&p, load(0x20000, 0x3000, 1, 1, 1, 2, CT_I32), 0, 4);
  ct_insn mm = matmul(0, 0x10000, 0x30000, M, K, N);
  mm.matmul.dt_out = CT_I8, mm.matmul.rq_mode = CT_ISA_RQ_TENSOR, mm.matmul.rq = 0x20000;
  mm.matmul.zp_out = 3, mm.matmul.act = CT_ISA_ACT_RELU;
  add(&p, mm, 7, 8);
  add(&p, store(0x4000, 0x30000, 1, 1, M, N, CT_I8), 8, 0);
  ct_sim_run_output o, f;
  ct_diag d;
  ck_assert_msg(run(NULL, &p, false, &o, &d) == CT_OK, "%s", d.msg);
  ck_assert_msg(run(NULL, &p, true, &f, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(o.outputs.n, 1);
  const int8_t *y = o.outputs.items[0]->data;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int64_t acc = 0;
      for (int k = 0; k < K; k++) acc += a[i * K + k] * b[k * N + j];
      int64_t v = ((acc * (1 << 20)) + (1 << 23)) >> 24; /* round half up */
      v += 3;
      if (v < 3) v = 3;
      if (v > 127) v = 127;
      ck_assert_int_eq(y[i * N + j], v);
    }
  ck_assert_mem_eq(o.outputs.items[0]->data, f.outputs.items[0]->data, (size_t)(M * N));
  ck_assert_double_eq(o.outputs.items[0]->scale[0], 0.5);
  ck_assert_int_eq(o.outputs.items[0]->zero_point[0], 3);
  ck_assert_uint_gt(o.res.counters.total_cycles, f.res.counters.total_cycles);
  ct_sim_run_output_free(&o);
  ct_sim_run_output_free(&f);
  ct_program_free(&p);
}
END_TEST


/* Checks the trace: thread_name M events for every engine, X events on one track never
 * overlap (ts + dur <= next ts, integer picoseconds), C counters present. */
static void check_trace(const char *path) {
  char *text = ct_test_read_file(path, NULL);
  ck_assert_ptr_nonnull(text);
  cJSON *root = cJSON_Parse(text);
  ck_assert_ptr_nonnull(root);
  cJSON *ev = cJSON_GetObjectItem(root, "traceEvents"), *e;
  int names = 0, xs = 0, counters = 0;
  double last_end[16] = {0};
  cJSON_ArrayForEach(e, ev) {
    const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
    int tid = cJSON_GetObjectItem(e, "tid")->valueint;
    if (!strcmp(ph, "M") && !strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "thread_name")) names++;
    if (!strcmp(ph, "C")) counters++;
    if (strcmp(ph, "X")) continue;
    xs++;
    double ts = cJSON_GetObjectItem(e, "ts")->valuedouble, dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
    ck_assert_int_lt(tid, 16);
    ck_assert_msg(ts * 1e6 + 0.5 >= last_end[tid] * 1e6, "overlap on track %d", tid);
    last_end[tid] = ts + dur;
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "opcode"));
  }
  ck_assert_int_eq(names, 5); /* load0 store0 mxu vpu ctrl */
  ck_assert_int_eq(xs, 5);
  ck_assert_int_gt(counters, 0);
  cJSON_Delete(root);
  free(text);
}

START_TEST(test_cli_outputs_and_corrupt_file) {
  const int M = 16, K = 40, N = 24;
  int8_t a[16 * 40] = {1}, b[40 * 24] = {2};
  int32_t rq[2] = {1 << 20, 24};
  ct_program p;
  ct_chip chip;
  ct_chip_default(&chip);
  ct_program_init(&p, ct_chip_signature(&chip));
  uint32_t dbg;
  ck_assert_int_eq(ct_program_add_debug(&p, "fc", 0, 0, 0, &dbg, NULL), CT_OK);
  ct_program_add_const(&p, "a", CT_I8, 0x1000, a, sizeof a, NULL);
  ct_program_add_const(&p, "b", CT_I8, 0x2000, b, sizeof b, NULL);
  ct_program_add_const(&p, "rq", CT_I32, 0x3000, rq, sizeof rq, NULL);
  ct_prog_io out = {"y", true, CT_I8, 2, {M, N}, 0x4000, 0.5, 3, false, 0, 0, NULL, NULL};
  ct_program_add_io(&p, &out, NULL);
  add(&p, load(0, 0x1000, 1, 1, M, K, CT_I8), 0, 1);
  add(&p, load(0x10000, 0x2000, 1, 1, K, N, CT_I8), 0, 2);
  add(&p, load(0x20000, 0x3000, 1, 1, 1, 2, CT_I32), 0, 4);
  ct_insn mm = matmul(0, 0x10000, 0x30000, M, K, N);
  mm.matmul.dt_out = CT_I8, mm.matmul.rq_mode = CT_ISA_RQ_TENSOR, mm.matmul.rq = 0x20000;
  mm.debug_id = dbg;
  add(&p, mm, 7, 8);
  ct_insn st = store(0x4000, 0x30000, 1, 1, M, N, CT_I8);
  st.debug_id = dbg;
  add(&p, st, 8, 0);
  const char *prog = ct_test_tmp_path("mm.ctpu");
  ck_assert_int_eq(ct_program_write(&p, prog, NULL), CT_OK);
  char msg[4096];
  int rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s -o %s --trace %s --summary %s --report %s --dump-all %s",
                            prog, ct_test_tmp_path("y.h5"), ct_test_tmp_path("t.json"),
                            ct_test_tmp_path("s.json"), ct_test_tmp_path("r.csv"), ct_test_tmp_path("d.h5"));
  ck_assert_msg(rc == 0, "%s", msg);
  check_trace(ct_test_tmp_path("t.json"));
  char *sum = ct_test_read_file(ct_test_tmp_path("s.json"), NULL);
  cJSON *js = cJSON_Parse(sum);
  ck_assert_ptr_nonnull(js);
  double total = cJSON_GetObjectItem(js, "total_cycles")->valuedouble;
  cJSON *eng = cJSON_GetObjectItem(js, "engines"), *e;
  cJSON_ArrayForEach(e, eng) {
    double s = cJSON_GetObjectItem(e, "busy")->valuedouble + cJSON_GetObjectItem(e, "idle")->valuedouble +
               cJSON_GetObjectItem(e, "stall_total")->valuedouble;
    ck_assert_double_eq(s, total);
  }
  ck_assert_double_eq(cJSON_GetObjectItem(js, "macs")->valuedouble, M * K * N);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(js, "mxu_utilization"));
  /* the roofline bound: MACs over the default 32 x 32 array, the constants + the output as
   * compulsory DDR bytes, and the schedule no faster than it */
  cJSON *lb = cJSON_GetObjectItem(js, "lower_bound");
  ck_assert_ptr_nonnull(lb);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(lb, "mxu_cycles")->valuedouble, (double)(M * K * N) / (32 * 32), 1e-9);
  ck_assert_double_eq(cJSON_GetObjectItem(lb, "ddr_compulsory_bytes")->valuedouble, (double)(sizeof a + sizeof b + sizeof rq + M * N));
  double bound = cJSON_GetObjectItem(lb, "cycles")->valuedouble;
  ck_assert(bound > 0 && bound <= total);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(lb, "total_over_bound")->valuedouble, total / bound, 1e-9);
  double eff = cJSON_GetObjectItem(lb, "schedule_efficiency")->valuedouble;
  ck_assert(eff > 0 && eff <= 1);
  cJSON_Delete(js);
  free(sum);
  char *csv = ct_test_read_file(ct_test_tmp_path("r.csv"), NULL);
  ck_assert_ptr_nonnull(strstr(csv, "layer,group,start,end,cycles,instructions,busy_load0,busy_store0,busy_mxu,busy_vpu,macs"));
  ck_assert_ptr_nonnull(strstr(csv, "\nfc,0,"));
  free(csv);
  ct_tensor *dump = NULL;
  ck_assert_int_eq(ct_h5_read_one(ct_test_tmp_path("d.h5"), "fc", &dump, NULL), CT_OK);
  ck_assert_int_eq(ct_tensor_numel(dump), M * N);
  ct_tensor_free(dump);
  /* corrupt: an unknown opcode byte in the first instruction -> exit 3 naming a byte */
  size_t n;
  char *img = ct_test_read_file(prog, &n);
  uint8_t *buf;
  size_t bn;
  ck_assert_int_eq(ct_program_serialize(&p, &buf, &bn, NULL), CT_OK);
  size_t off = 0;
  for (size_t k = 0; k + 64 <= bn; k++) /* the first LOAD word: opcode, no waits, signal 1 */
    if (buf[k] == CT_ISA_LOAD && !buf[k + 1] && !buf[k + 2] && !buf[k + 3] && !buf[k + 4] && buf[k + 5] == 1) {
      off = k;
      break;
    }
  ck_assert_uint_gt(off, 0);
  img[off] = (char)250;
  ck_assert(ct_test_write_file(ct_test_tmp_path("bad.ctpu"), img, n));
  rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s -o %s", ct_test_tmp_path("bad.ctpu"), ct_test_tmp_path("z.h5"));
  ck_assert_int_eq(rc, 3);
  ck_assert_msg(strstr(msg, "byte") != NULL, "%s", msg);
  free(buf);
  free(img);
  rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s", prog);
  ck_assert_int_eq(rc, 2);
  ct_program_free(&p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cmodel");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, test_isolated_load_is_latency_plus_bursts);
  tcase_add_test(t, test_dma_stripes_over_banks);
  tcase_add_test(t, test_matmul_fold_cycles_ws_and_os);
  tcase_add_test(t, test_two_engines_on_one_bank_stall);
  tcase_add_test(t, test_mxu_vpu_overlap_counter);
  tcase_add_test(t, test_double_buffering_overlaps);
  tcase_add_test(t, test_race_is_reported_with_both_instructions);
  tcase_add_test(t, test_deadlock_names_waiters_and_semaphores);
  tcase_add_test(t, test_out_of_bounds_and_illegal_opcode);
  tcase_add_test(t, test_region_runs_and_overlap);
  tcase_add_test(t, test_functional_matches_timed_and_c_reference);
  tcase_add_test(t, test_cli_outputs_and_corrupt_file);
  suite_add_tcase(s, t);
  return ct_test_run_suite(s);
}
