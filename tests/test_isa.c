/* test_isa.c: isa/ — the table's bit layout, encode/decode round trips with random fields for
 * every opcode, a hand-derived encoding, disasm → asm identical bytes, assembler and decoder
 * errors, semantic checks and footprints, the .ctpu loader on every truncation and random
 * byte flips, the CLI, and docs/isa.md being the generated text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/h5io.h"
#include "isa/asm.h"
#include "isa/isa.h"
#include "isa/program.h"
#include "tests/testutil.h"

#define ALL_OPS CT_SOURCE_DIR "/tests/data/isa/all_ops.s"

static uint64_t rnd64(void) {
  return ((uint64_t)rand() << 42) ^ ((uint64_t)rand() << 21) ^ (uint64_t)rand();
}

/* Random value that fits field f (by kind and width). */
static void random_field(ct_insn *in, const ct_isa_field *f) {
  const char *const *names;
  int nv = ct_isa_kind_values(f->kind, &names);
  uint64_t bits = rnd64() & (f->width >= 64 ? ~0ull : (1ull << f->width) - 1);
  if (f->kind == CT_ISA_K_DT) bits = (uint64_t)(rand() % CT_DTYPE_COUNT);
  else if (nv > 0) bits = (uint64_t)(rand() % nv);
  ct_isa_field_set_bits(in, f, bits);
}

START_TEST(test_table_fields_fit_and_do_not_overlap) {
  for (int op = 0; op < CT_ISA_OP_COUNT; op++) {
    const ct_isa_field *f;
    int n = ct_isa_fields((ct_isa_op)op, &f);
    uint8_t used[64] = {0};
    ck_assert_int_gt(n, 0);
    for (int i = 0; i < n; i++) {
      ck_assert_msg(f[i].lo >= CT_ISA_HEADER_BITS && f[i].lo + f[i].width <= 512, "%s.%s", ct_isa_op_name(op), f[i].name);
      ck_assert(f[i].width >= 1 && f[i].width <= 64);
      if (f[i].kind == CT_ISA_K_F32) ck_assert_int_eq(f[i].width, 32);
      if (f[i].kind == CT_ISA_K_DT) ck_assert_int_eq(f[i].width, 4);
      int nv = ct_isa_kind_values(f[i].kind, NULL);
      if (nv) ck_assert_int_le(nv, 1 << f[i].width);
      for (int b = f[i].lo; b < f[i].lo + f[i].width; b++) {
        ck_assert_msg(!(used[b / 8] >> (b % 8) & 1), "%s.%s overlaps at bit %d", ct_isa_op_name(op), f[i].name, b);
        used[b / 8] |= (uint8_t)(1u << (b % 8));
      }
      ck_assert_ptr_eq(ct_isa_field_find((ct_isa_op)op, f[i].name), &f[i]);
    }
    ct_isa_op back;
    ck_assert(ct_isa_op_parse(ct_isa_op_name((ct_isa_op)op), &back));
    ck_assert_int_eq(back, op);
  }
  ct_isa_op o;
  ck_assert(ct_isa_op_parse("CoNv", &o) && o == CT_ISA_CONV);
  ck_assert(!ct_isa_op_parse("frob", &o));
  ck_assert_int_eq(ct_isa_op_engine(CT_ISA_CONV), CT_ENG_MXU);
  ck_assert_int_eq(ct_isa_op_engine(CT_ISA_DWCONV), CT_ENG_VPU);
  ck_assert_int_eq(ct_isa_op_engine(CT_ISA_MOVE), CT_ENG_LOAD);
  ck_assert_int_eq(ct_isa_op_engine(CT_ISA_STORE), CT_ENG_STORE);
  ck_assert_int_eq(ct_isa_op_engine(CT_ISA_END), CT_ENG_CTRL);
}
END_TEST

/* NOP cycles=0x1234 wait={0,9} signal={31} debug 0x01020304, derived from the layout in
 * isa.def: opcode bits 0..7, wait 8..39, signal 40..71, debug 72..103, cycles 104..119. */
START_TEST(test_hand_derived_encoding) {
  ct_insn in;
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_NOP;
  in.wait = 1u | 1u << 9;
  in.signal = 1u << 31;
  in.debug_id = 0x01020304;
  in.nop.cycles = 0x1234;
  uint8_t w[64], want[64] = {0};
  want[0] = (uint8_t)CT_ISA_NOP;
  want[1] = 0x01; /* wait bit 0 = word bit 8 */
  want[2] = 0x02; /* wait bit 9 = word bit 17 */
  want[8] = 0x80; /* signal bit 31 = word bit 71 */
  want[9] = 0x04, want[10] = 0x03, want[11] = 0x02, want[12] = 0x01;
  want[13] = 0x34, want[14] = 0x12;
  ck_assert_int_eq(ct_isa_encode(&in, w, NULL), CT_OK);
  ck_assert_mem_eq(w, want, 64);
  /* a signed field: ELTWISE m_a = -2 is stored as 16-bit two's complement */
  const ct_isa_field *f = ct_isa_field_find(CT_ISA_ELTWISE, "m_a");
  ck_assert_ptr_nonnull(f);
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_ELTWISE;
  in.eltwise.m_a = -2;
  ck_assert_int_eq(ct_isa_encode(&in, w, NULL), CT_OK);
  ck_assert_uint_eq(ct_isa_field_bits(&in, f), 0xfffe);
  ct_insn back;
  ck_assert_int_eq(ct_isa_decode(w, &back, NULL), CT_OK);
  ck_assert_int_eq(back.eltwise.m_a, -2);
}
END_TEST

START_TEST(test_encode_decode_round_trip_random_fields) {
  srand(11);
  for (int op = 0; op < CT_ISA_OP_COUNT; op++) {
    const ct_isa_field *f;
    int n = ct_isa_fields((ct_isa_op)op, &f);
    for (int it = 0; it < 300; it++) {
      ct_insn in, out;
      memset(&in, 0, sizeof in);
      in.op = (ct_isa_op)op;
      in.wait = (uint32_t)rnd64(), in.signal = (uint32_t)rnd64(), in.debug_id = (uint32_t)rnd64();
      for (int i = 0; i < n; i++) random_field(&in, &f[i]);
      uint8_t w[64], w2[64];
      ct_diag d;
      ck_assert_msg(ct_isa_encode(&in, w, &d) == CT_OK, "%s", d.msg);
      ck_assert_msg(ct_isa_decode(w, &out, &d) == CT_OK, "%s", d.msg);
      ck_assert_int_eq(out.op, op);
      ck_assert_uint_eq(out.wait, in.wait);
      ck_assert_uint_eq(out.signal, in.signal);
      ck_assert_uint_eq(out.debug_id, in.debug_id);
      for (int i = 0; i < n; i++) {
        ck_assert_uint_eq(ct_isa_field_bits(&out, &f[i]), ct_isa_field_bits(&in, &f[i]));
        ck_assert_int_eq(ct_isa_field_get(&out, &f[i]), ct_isa_field_get(&in, &f[i]));
      }
      ck_assert_int_eq(ct_isa_encode(&out, w2, NULL), CT_OK);
      ck_assert_mem_eq(w, w2, 64);
      /* the same instruction through its text form */
      char line[4096];
      ct_insn txt;
      ck_assert_msg(ct_asm_insn(ct_disasm_insn(&in, line, sizeof line), NULL, &txt, &d) == CT_OK, "%s: %s", line, d.msg);
      txt.debug_id = in.debug_id;
      ck_assert_int_eq(ct_isa_encode(&txt, w2, NULL), CT_OK);
      ck_assert_mem_eq(w, w2, 64);
    }
  }
}
END_TEST

START_TEST(test_encode_and_decode_errors) {
  ct_insn in;
  ct_diag d;
  uint8_t w[64];
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CONV;
  in.conv.kh = 256; /* 8 bits */
  ck_assert_int_eq(ct_isa_encode(&in, w, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "conv: field \"kh\": 256 is outside 0..255 (8-bit U)");
  in.conv.kh = 1;
  in.conv.zp_in = -32769;
  ck_assert_int_eq(ct_isa_encode(&in, w, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "\"zp_in\"") != NULL);
  in.conv.zp_in = 0;
  in.conv.act = 3;
  ck_assert_int_eq(ct_isa_encode(&in, w, &d), CT_ERR_INPUT);
  in.op = (ct_isa_op)CT_ISA_OP_COUNT;
  ck_assert_int_eq(ct_isa_encode(&in, w, &d), CT_ERR_INPUT);
  /* decoding */
  memset(w, 0, 64);
  w[0] = 200;
  ck_assert_int_eq(ct_isa_decode(w, &in, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "unknown opcode 200 (word byte 0)");
  w[0] = CT_ISA_NOP;
  w[63] = 0x80; /* NOP uses bits up to 119 only */
  ck_assert_int_eq(ct_isa_decode(w, &in, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "nop: unused bits set (word byte 63: 0x80)");
  memset(&in, 0, sizeof in);
  in.op = CT_ISA_CONV;
  ck_assert_int_eq(ct_isa_encode(&in, w, NULL), CT_OK);
  const ct_isa_field *act = ct_isa_field_find(CT_ISA_CONV, "act");
  w[act->lo / 8] |= (uint8_t)(3u << (act->lo % 8)); /* act = 3: no such value (if in one byte) */
  if (act->lo % 8 <= 6) {
    ck_assert_int_eq(ct_isa_decode(w, &in, &d), CT_ERR_INPUT);
    ck_assert(strstr(d.msg, "\"act\"") != NULL);
  }
}
END_TEST

static ct_insn conv_ok(void) {
  ct_insn in;
  ck_assert_int_eq(ct_asm_insn("CONV in=0 wt=4096 out=8192 n=1 ic=8 ih=16 iw=16 oc=16 oh=8 ow=8 kh=3 kw=3 stride_h=2 "
                               "stride_w=2 pad_t=1 pad_l=1 pad_b=0 pad_r=0 dil_h=1 dil_w=1 groups=2 dt_in=i8 dt_w=i8 "
                               "dt_out=i8 rq_mode=channel rq=12288",
                               NULL, &in, NULL),
                   CT_OK);
  return in;
}

START_TEST(test_semantic_checks_and_footprints) {
  ct_chip chip;
  ct_chip_default(&chip);
  ct_diag d;
  ct_insn in = conv_ok();
  ck_assert_msg(ct_isa_check(&in, &chip, &d) == CT_OK, "%s", d.msg);
  /* oh = floor((16 + 1 + 0 - 2 - 1) / 2) + 1 = 8; footprints derived by hand */
  ct_isa_access a[CT_ISA_MAX_ACCESS];
  int n = ct_isa_accesses(&in, a);
  ck_assert_int_eq(n, 4);
  ck_assert_uint_eq(a[0].bytes, 8 * 16 * 16);          /* input */
  ck_assert_uint_eq(a[1].bytes, 16 * 4 * 9);           /* weights OIHW, ic/groups = 4 */
  ck_assert_uint_eq(a[2].bytes, 16 * 8);               /* per-channel (m, s) pairs */
  ck_assert(a[3].write && a[3].bytes == 16 * 8 * 8 && a[3].addr == 8192);
  ck_assert_uint_eq(ct_isa_macs(&in), 16ull * 8 * 8 * 4 * 9);
  ct_insn bad = in;
  bad.conv.oh = 9;
  ck_assert_int_eq(ct_isa_check(&bad, NULL, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "conv: output 9x8 does not match") != NULL);
  bad = in, bad.conv.groups = 3;
  ck_assert_int_eq(ct_isa_check(&bad, NULL, &d), CT_ERR_INPUT);
  bad = in, bad.conv.dt_in = CT_BF16;
  ck_assert_int_eq(ct_isa_check(&bad, NULL, &d), CT_ERR_INPUT); /* float input, i8 weights */
  bad = in, bad.conv.rq_mode = CT_ISA_RQ_NONE;
  ck_assert_int_eq(ct_isa_check(&bad, NULL, &d), CT_ERR_INPUT); /* needs dt_out i32 */
  bad = in, bad.conv.out = (1 << 20) - 100;
  ck_assert_int_eq(ct_isa_check(&bad, NULL, &d), CT_OK); /* no chip: no bounds */
  ck_assert_int_eq(ct_isa_check(&bad, &chip, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "exceeds lmem.bytes") != NULL);
  bad = in, bad.wait = 1u << 20;
  chip.sem_count = 16;
  ck_assert_int_eq(ct_isa_check(&bad, &chip, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "sem.count") != NULL);
  /* LOAD hull: (1*64 + 2*8 + 3*1 + 1) elements of i16 */
  ck_assert_int_eq(ct_asm_insn("LOAD dst=16 src=1000 dtype=i16 n=2 c=3 h=4 w=5 src_sn=64 src_sc=8 src_sh=1 src_sw=0 "
                               "dst_sn=60 dst_sc=20 dst_sh=5 dst_sw=1 eng=1",
                               NULL, &in, NULL),
                   CT_OK);
  n = ct_isa_accesses(&in, a);
  ck_assert_int_eq(n, 2);
  ck_assert(a[0].mem == CT_MEM_GMEM && a[0].addr == 1000 && a[0].bytes == (64 + 16 + 3 + 1) * 2 && !a[0].write);
  ck_assert(a[1].mem == CT_MEM_LMEM && a[1].bytes == (60 + 40 + 15 + 4 + 1) * 2 && a[1].write);
  ck_assert_int_eq(ct_isa_check(&in, &chip, &d), CT_ERR_INPUT); /* eng 1, one load engine */
  ck_assert(strstr(d.msg, "dma.load_engines") != NULL);
  /* the function unit's codes 0..22 (19..22: comparisons with alpha); ELTWISE div only on
   * float operands */
  ck_assert_int_eq(ct_asm_insn("EXP in=0 out=64 n=1 c=1 h=1 w=8 dt_in=f32 dt_out=bf16 func=22", NULL, &in, NULL), CT_OK);
  ck_assert_msg(ct_isa_check(&in, NULL, &d) == CT_OK, "%s", d.msg);
  in.exp.func = 23;
  ck_assert_int_eq(ct_isa_check(&in, NULL, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "func 23") != NULL);
  ck_assert_int_eq(ct_asm_insn("ELTWISE a=0 b=64 out=128 n=1 c=1 h=1 w=8 op=div dt_a=bf16 dt_b=bf16 dt_out=bf16", NULL, &in,
                               NULL),
                   CT_OK);
  ck_assert_msg(ct_isa_check(&in, NULL, &d) == CT_OK, "%s", d.msg);
  in.eltwise.dt_a = in.eltwise.dt_b = in.eltwise.dt_out = CT_I8;
  ck_assert_int_eq(ct_isa_check(&in, NULL, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "div needs float") != NULL);
}
END_TEST

/* Assembles all_ops.s, disassembles, assembles again: identical bytes; covers every opcode. */
START_TEST(test_disasm_asm_identical_bytes_every_opcode) {
  ct_program p, q;
  ct_diag d;
  ck_assert_msg(ct_asm_file(ALL_OPS, NULL, &p, &d) == CT_OK, "%s", d.msg);
  bool seen[CT_ISA_OP_COUNT] = {false};
  for (size_t i = 0; i < p.n_insns; i++) seen[p.insns[i].op] = true;
  for (int op = 0; op < CT_ISA_OP_COUNT; op++) ck_assert_msg(seen[op], "all_ops.s lacks %s", ct_isa_op_name(op));
  char *text = NULL;
  size_t tn = 0;
  FILE *f = open_memstream(&text, &tn);
  ck_assert_int_eq(ct_disasm(&p, f, &d), CT_OK);
  fclose(f);
  ck_assert_msg(ct_asm_parse(text, "re.s", NULL, NULL, &q, &d) == CT_OK, "%s", d.msg);
  uint8_t *b1, *b2;
  size_t n1, n2;
  ck_assert_int_eq(ct_program_serialize(&p, &b1, &n1, &d), CT_OK);
  ck_assert_int_eq(ct_program_serialize(&q, &b2, &n2, &d), CT_OK);
  ck_assert_uint_eq(n1, n2);
  ck_assert_mem_eq(b1, b2, n1);
  /* hand-checked content */
  ck_assert_str_eq(p.io[0].name, "in put");
  const ct_prog_io *pc = ct_program_find_io(&q, "pc"); /* per-channel parameters survive disasm → asm */
  ck_assert(pc && pc->n_scale == 2 && pc->quant_axis == 1 && pc->scales[1] == 0.0001 && pc->zero_points[1] == 3);
  ck_assert_str_eq(p.debug[1].layer, "conv \"q\"");
  ck_assert_uint_eq(ct_program_find_const(&p, "w")->gmem_addr, 0x1000);
  ck_assert_uint_eq(ct_program_find_const(&p, "rq")->gmem_addr, 0x1040); /* 9 bytes, next 64-aligned */
  ck_assert_uint_eq(p.insns[3].load.src, 0x1001);                         /* @w+1 */
  ck_assert_uint_eq(p.insns[p.n_insns - 1].end.code, 7); /* END, the last one */
  free(text);
  free(b1);
  free(b2);
  ct_program_free(&p);
  ct_program_free(&q);
}
END_TEST

/* Each bad source gives CT_ERR_INPUT and a message starting with its file:line. */
START_TEST(test_assembler_errors_name_file_and_line) {
  static const struct {
    const char *src, *want;
  } cases[] = {
      {"NOP\nFROB x=1\n", "k.s:2: unknown opcode \"FROB\""},
      {"CONV kh=3 bogus=1\n", "k.s:1: conv: unknown field \"bogus\""},
      {"NOP cycles=65536\n", "k.s:1: nop: field \"cycles\": 65536 is out of range 0..65535 (16 bits)"},
      {"NOP cycles=12abc\n", "k.s:1: nop: field \"cycles\": bad value \"12abc\""},
      {"NOP cycles=1 cycles=2\n", "k.s:1: nop: field \"cycles\" given twice"},
      {"NOP cycles\n", "k.s:1: nop: expected field=value, got \"cycles\""},
      {"\n\nLOAD src=@nothing\n", "k.s:3: load: field \"src\": undefined symbol \"@nothing\""},
      {"NOP wait=32\n", "k.s:1: wait: \"32\" is not a list of semaphores 0..31"},
      {"NOP dbg=1\n", "k.s:1: nop: debug id 1 is not defined"},
      {".frob 1\n", "k.s:1: unknown directive \".frob\""},
      {".input x 1x?x3 i8 0 1 0\n", "k.s:1: .input: bad shape \"1x?x3\""},
      {".tensor t 1x3 u8 0 @1:0.5,0.25 0,0\n", "k.s:1: .tensor: bad per-channel parameters"},
      {".tensor t 1x2 u8 0 @2:0.5,0.25 0,0\n", "k.s:1: .tensor: bad per-channel parameters"},
      {".tensor t 1x2 u8 0 @1:0.5,x 0,0\n", "k.s:1: .tensor: bad per-channel parameters"},
      {".tensor t 1x2 u8 0 @1:0.5,0 0,0\n", "k.s: tensor \"t\": channel 1: scale 0 is not finite and > 0"},
      {".const c i8 [1, 300]\n", "k.s:1: .const: value 1 (300) is out of range for i8"},
      {".const c i9 [1]\n", "k.s:1: .const: unknown dtype \"i9\""},
      {".const c i8 [1]\n.const c i8 [2]\n", "k.s:2: .const: name \"c\" is already defined"},
      {".debug \"open 1 2\n", "k.s:1: unterminated quote or bracket"},
      {"ELTWISE op=xor\n", "k.s:1: eltwise: field \"op\": bad value \"xor\""},
      {"POOL n=1 c=1 ih=4 iw=4 oh=2 ow=2 kh=2 kw=2 stride_h=2 stride_w=2 dt=i32\n", "k.s:1: pool: type i32"},
      {".const c i8 0x1\n", "k.s:1: .const: odd number of hex digits"},
      {".const c i64 [1, 00000000000000000000000000000000000000000000000000000000000000000000001]\n",
       "k.s:1: .const: value 1 is longer than 62 characters"},
      {".const c i8 missing.h5:x\n", "k.s:1: .const: "},
      {".chipsig -1\n", "k.s:1: .chipsig: expected one unsigned number"},
      {".const a i32 [1, 2] at=0x100\n.const b i8 [1] at=0x107\n", "k.s: const \"b\" overlaps const \"a\" in GMEM"},
      {".input x 4x4 f32 0x0 1 0\n.const b i8 [1] at=0x3f\n", "k.s: const \"b\" overlaps IO \"x\" in GMEM"},
      {".input x 4x4 f32 0x0 1 0\n.output x 4x4 f32 0x40 1 0\n", "k.s:2: .output: name \"x\" is already defined"},
      {".input x 4x4 f32 0x0 1 0\n.input x 4x4 f32 0x0 1 0\n", "k.s:2: .input: name \"x\" is already defined"},
      {".input x 2 f32 0x0 1 0\n.output x 2 f32 0x0 1 0\n.output x 2 f32 0x0 1 0\n",
       "k.s:3: .output: name \"x\" is already defined"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ct_program p;
    ct_diag d;
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_asm_parse(cases[i].src, "k.s", NULL, NULL, &p, &d), CT_ERR_INPUT);
    ck_assert_msg(strncmp(d.msg, cases[i].want, strlen(cases[i].want)) == 0, "case %zu: got \"%s\", want \"%s\"", i,
                  d.msg, cases[i].want);
    ck_assert_uint_eq(p.n_insns, 0);
  }
}
END_TEST

/* POOL output sizes: a tile holding only the last ceil-mode window has fewer input rows than
 * the window (floor-mode size 0, one window starting inside): valid; a window that starts
 * past the input is not. */
START_TEST(test_pool_ceil_tile) {
  static const struct {
    const char *src;
    ct_status want;
  } cases[] = {
      {"POOL n=1 c=1 ih=1 iw=4 oh=1 ow=2 kh=2 kw=2 stride_h=2 stride_w=2 dt=f32\n", CT_OK},
      {"POOL n=1 c=1 ih=6 iw=4 oh=4 ow=2 kh=2 kw=2 stride_h=2 stride_w=2 pad_t=1 dt=f32\n", CT_OK},
      {"POOL n=1 c=1 ih=1 iw=4 oh=2 ow=2 kh=2 kw=2 stride_h=2 stride_w=2 dt=f32\n", CT_ERR_INPUT},
      {"POOL n=1 c=1 ih=1 iw=4 oh=1 ow=2 kh=3 kw=2 stride_h=1 stride_w=2 dt=f32\n", CT_ERR_INPUT},
      {"POOL n=1 c=1 ih=6 iw=4 oh=5 ow=2 kh=2 kw=2 stride_h=2 stride_w=2 pad_t=1 dt=f32\n", CT_ERR_INPUT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ct_program p;
    ct_diag d;
    ct_diag_clear(&d);
    ct_status st = ct_asm_parse(cases[i].src, "k.s", NULL, NULL, &p, &d);
    ck_assert_msg(st == cases[i].want, "case %zu: status %d (%s)", i, (int)st, d.msg);
    if (st == CT_OK) ct_program_free(&p);
    else ck_assert_msg(strstr(d.msg, "pool: output") != NULL, "case %zu: %s", i, d.msg);
  }
}
END_TEST

/* A module input passed through as an output: an .input and an .output of one name at the
 * same bytes assemble (the validator accepts them); the input is found first by name. */
START_TEST(test_assembler_passthrough_io) {
  ct_program p;
  ct_diag d;
  ct_diag_clear(&d);
  ck_assert_int_eq(ct_asm_parse(".input x 4x4 f32 0x0 1 0\n.output x 4x4 f32 0x0 1 0\nEND\n", "k.s", NULL, NULL, &p, &d), CT_OK);
  ck_assert_uint_eq(p.n_io, 2);
  ck_assert(!ct_program_find_io(&p, "x")->is_output);
  ct_program_free(&p);
}
END_TEST

/* Mutated sources (byte flips, truncations, inserted junk) never crash the assembler; a
 * rejection is CT_ERR_INPUT with a message naming the file (and the line, unless the error
 * concerns the whole program). */
START_TEST(test_assembler_survives_mutated_sources) {
  size_t n;
  char *src = ct_test_read_file(ALL_OPS, &n);
  ck_assert_ptr_nonnull(src);
  static const char junk[] = "=@[]\"#,.x0-9 \n\tQ";
  srand(3);
  int rejected = 0;
  for (int it = 0; it < 1500; it++) {
    char *m = malloc(n + 1);
    memcpy(m, src, n + 1);
    size_t len = it % 5 == 0 ? (size_t)rand() % n : n;
    m[len] = '\0';
    for (int k = 0; k < 1 + it % 4 && len; k++) m[(size_t)rand() % len] = junk[rand() % (sizeof junk - 1)];
    ct_program p;
    ct_diag d;
    ct_diag_clear(&d);
    ct_status st = ct_asm_parse(m, "m.s", NULL, NULL, &p, &d);
    if (st) {
      rejected++;
      ck_assert_int_eq(st, CT_ERR_INPUT);
      ck_assert_msg(strncmp(d.msg, "m.s:", 4) == 0, "%s", d.msg);
    }
    ct_program_free(&p);
    free(m);
  }
  ck_assert_int_gt(rejected, 500);
  free(src);
}
END_TEST

static uint8_t *all_ops_image(size_t *n) {
  ct_program p;
  ct_diag d;
  uint8_t *b;
  ck_assert_msg(ct_asm_file(ALL_OPS, NULL, &p, &d) == CT_OK, "%s", d.msg);
  ck_assert_int_eq(ct_program_serialize(&p, &b, n, &d), CT_OK);
  ct_program_free(&p);
  return b;
}

START_TEST(test_loader_rejects_every_truncation_with_offset) {
  size_t n;
  uint8_t *b = all_ops_image(&n);
  ct_chip chip;
  ct_chip_default(&chip);
  ct_program p;
  ct_diag d;
  ck_assert_int_eq(ct_program_parse(b, n, &chip, "a.ctpu", &p, &d), CT_OK);
  ck_assert_uint_eq(p.n_insns, 24); /* all_ops.s: 24 instructions */
  ct_program_free(&p);
  for (size_t k = 0; k < n; k++) {
    uint8_t *cut = malloc(k ? k : 1); /* exact-size copy so ASan sees over-reads */
    memcpy(cut, b, k);
    ck_assert_int_eq(ct_program_parse(cut, k, &chip, "a.ctpu", &p, &d), CT_ERR_INPUT);
    ck_assert_msg(strncmp(d.msg, "a.ctpu: byte ", 13) == 0, "prefix %zu: %s", k, d.msg);
    ck_assert_uint_eq(p.n_insns, 0);
    free(cut);
  }
  free(b);
}
END_TEST

START_TEST(test_loader_survives_random_byte_flips) {
  size_t n;
  uint8_t *b = all_ops_image(&n);
  ct_chip chip;
  ct_chip_default(&chip);
  srand(5);
  int rejected = 0;
  for (int it = 0; it < 4000; it++) {
    uint8_t *c = malloc(n);
    memcpy(c, b, n);
    int flips = 1 + it % 3;
    for (int k = 0; k < flips; k++) c[(size_t)rand() % (it % 2 ? 128 : n)] ^= (uint8_t)(1u << (rand() % 8));
    ct_program p;
    ct_diag d;
    ct_diag_clear(&d);
    ct_status st = ct_program_parse(c, n, &chip, "f.ctpu", &p, &d);
    if (st) {
      rejected++;
      ck_assert_int_eq(st, CT_ERR_INPUT);
      ck_assert_msg(strncmp(d.msg, "f.ctpu: ", 8) == 0 && (strstr(d.msg, "byte ") || strstr(d.msg, "insn ")),
                    "%s", d.msg);
    }
    ct_program_free(&p);
    free(c);
  }
  ck_assert_int_gt(rejected, 1000);
  /* a specific, hand-placed corruption: opcode of instruction 2 (at 128 + 2*64) */
  b[128 + 128] = 0xee;
  ct_program p;
  ct_diag d;
  ck_assert_int_eq(ct_program_parse(b, n, NULL, "x.ctpu", &p, &d), CT_ERR_INPUT);
  ck_assert_str_eq(d.msg, "x.ctpu: byte 256: insn 2: unknown opcode 238 (word byte 0)");
  free(b);
}
END_TEST

START_TEST(test_loader_checks_chip_signature_and_bounds) {
  size_t n;
  uint8_t *b = all_ops_image(&n);
  ct_chip chip;
  ct_chip_default(&chip);
  chip.lmem_bytes = 1 << 16;
  ct_program p;
  ct_diag d;
  ck_assert_int_eq(ct_program_parse(b, n, &chip, "s.ctpu", &p, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "s.ctpu: byte 8: chip signature") != NULL);
  ck_assert_int_eq(ct_program_parse(b, n, NULL, "s.ctpu", &p, &d), CT_OK);
  /* the writer reports an unwritable place and leaves nothing behind */
  ck_assert_int_eq(ct_program_write(&p, "/nonexistent_dir/x.ctpu", &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "/nonexistent_dir/x.ctpu") != NULL);
  const char *ok = ct_test_tmp_path("w.ctpu");
  ck_assert_int_eq(ct_program_write(&p, ok, &d), CT_OK);
  size_t wn;
  char *wb = ct_test_read_file(ok, &wn);
  ck_assert(wb && wn == n && memcmp(wb, b, n) == 0);
  free(wb);
  ct_program_free(&p);
  /* same program assembled for the small chip: NORM's gamma at 65536 lies outside LMEM */
  ck_assert_int_eq(ct_asm_file(ALL_OPS, &chip, &p, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "all_ops.s:") != NULL && strstr(d.msg, "exceeds lmem.bytes") != NULL);
  free(b);
}
END_TEST

START_TEST(test_cli_asm_disasm_round_trip_and_errors) {
  char out[4096];
  const char *p1 = ct_test_tmp_path("a.ctpu"), *s2 = ct_test_tmp_path("a2.s"), *p2 = ct_test_tmp_path("a2.ctpu");
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "asm %s -o %s", ALL_OPS, p1), 0);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "disasm %s -o %s", p1, s2), 0);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "asm %s -o %s", s2, p2), 0);
  size_t n1, n2;
  char *a = ct_test_read_file(p1, &n1), *b = ct_test_read_file(p2, &n2);
  ck_assert(a && b && n1 == n2 && memcmp(a, b, n1) == 0);
  free(a);
  free(b);
  const char *bad = ct_test_tmp_path("bad.s");
  ck_assert(ct_test_write_file(bad, "NOP\nNOP cycles=-1\n", 18));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "asm %s -o %s", bad, p2), 3);
  ck_assert(strstr(out, "bad.s:2: nop: field \"cycles\"") != NULL);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "disasm %s", bad), 3); /* text is not a program */
  ck_assert(strstr(out, "bad magic") != NULL);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "asm"), 2);
}
END_TEST

/* .const from an HDF5 dataset (path relative to the .s file), converted to the const dtype. */
START_TEST(test_const_from_h5_dataset) {
  int64_t shape[2] = {2, 3};
  ct_tensor *t = ct_tensor_new(CT_F32, 2, shape, "w/0");
  float v[6] = {1.5f, -2.0f, 3.25f, 0.0f, 100.0f, -7.5f};
  memcpy(t->data, v, sizeof v);
  ct_diag d;
  ck_assert_msg(ct_h5_write(ct_test_tmp_path("consts.h5"), &t, 1, &d) == CT_OK, "%s", d.msg);
  const char *src = ct_test_tmp_path("h5const.s");
  const char *text = ".const a consts.h5:w/0\n.const b bf16 consts.h5:w/0 at=0x4000\n"
                     ".scalar_is_not_a_directive\n";
  ck_assert(ct_test_write_file(src, text, strlen(text)));
  ct_program p;
  ck_assert_int_eq(ct_asm_file(src, NULL, &p, &d), CT_ERR_INPUT); /* line 3 */
  ck_assert(strstr(d.msg, "h5const.s:3: unknown directive") != NULL);
  ck_assert(ct_test_write_file(src, text, strlen(text) - strlen(".scalar_is_not_a_directive\n")));
  ck_assert_msg(ct_asm_file(src, NULL, &p, &d) == CT_OK, "%s", d.msg);
  ck_assert_uint_eq(p.n_consts, 2);
  ck_assert_uint_eq(p.consts[0].bytes, 24);
  ck_assert_int_eq(p.consts[0].dtype, CT_F32); /* the dataset's own type */
  ck_assert_mem_eq(p.consts[0].data, v, 24);
  ck_assert_uint_eq(p.consts[1].gmem_addr, 0x4000);
  ck_assert_uint_eq(p.consts[1].bytes, 12);
  ck_assert_uint_eq(p.consts[1].data[2] | p.consts[1].data[3] << 8, 0xc000); /* bf16(-2.0) */
  ct_program_free(&p);
  ct_tensor_free(t);
}
END_TEST

START_TEST(test_docs_isa_md_is_generated_text) {
  char *text = ct_test_doc_current(ct_isa_doc, "docs/isa.md", "ctpu isa-doc");
  ck_assert(strstr(text, "### DWCONV") != NULL);
  /* the example program of the syntax section assembles */
  char *ex = strstr(text, "Example: a 1");
  ck_assert_ptr_nonnull(ex);
  char *start = strstr(ex, "```\n") + 4, *end = strstr(start, "```");
  *end = '\0';
  ct_program p;
  ct_diag d;
  ck_assert_msg(ct_asm_parse(start, "isa.md", NULL, NULL, &p, &d) == CT_OK, "%s", d.msg);
  ck_assert_uint_eq(p.n_insns, 6);
  ct_program_free(&p);
  free(text);
}
END_TEST

int main(void) {
  Suite *s = suite_create("isa");
  TCase *tc = tcase_create("isa");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_table_fields_fit_and_do_not_overlap);
  tcase_add_test(tc, test_hand_derived_encoding);
  tcase_add_test(tc, test_encode_decode_round_trip_random_fields);
  tcase_add_test(tc, test_encode_and_decode_errors);
  tcase_add_test(tc, test_semantic_checks_and_footprints);
  tcase_add_test(tc, test_pool_ceil_tile);
  tcase_add_test(tc, test_disasm_asm_identical_bytes_every_opcode);
  tcase_add_test(tc, test_assembler_errors_name_file_and_line);
  tcase_add_test(tc, test_assembler_passthrough_io);
  tcase_add_test(tc, test_assembler_survives_mutated_sources);
  tcase_add_test(tc, test_loader_rejects_every_truncation_with_offset);
  tcase_add_test(tc, test_loader_survives_random_byte_flips);
  tcase_add_test(tc, test_loader_checks_chip_signature_and_bounds);
  tcase_add_test(tc, test_cli_asm_disasm_round_trip_and_errors);
  tcase_add_test(tc, test_const_from_h5_dataset);
  tcase_add_test(tc, test_docs_isa_md_is_generated_text);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
