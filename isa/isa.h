/* isa.h: the ctpu instruction set generated from isa/isa.def: opcode enum, engines, the
 * decoded instruction ct_insn with named fields, field reflection, 64-byte encode/decode,
 * semantic checks and operand footprints (docs/architecture.md §4). */
/* Changes since first publication (36a0a4b): DMA ops gained `eng`; address fields are now
 * kinds LA/GA (still int64_t members; the disassembler prints them in hex). */
#ifndef CT_ISA_H
#define CT_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"
#include "isa/chip.h"

#define CT_ISA_INSN_BYTES 64   /* every instruction is one 64-byte little-endian word */
#define CT_ISA_HEADER_BITS 104 /* opcode 8, wait 32, signal 32, debug id 32 */
#define CT_ISA_MAX_SEMS 32     /* wait/signal sets are 32-bit masks */
#define CT_ISA_LMEM_ADDR_BITS 24
#define CT_ISA_LUT16_BYTES 514 /* a 16-bit LUT's table: 257 int16 (quant.h CT_QUANT_LUT16_ENTRIES) */
#define CT_ISA_GMEM_ADDR_BITS 40

/* The engines (docs/architecture.md §3). CTRL instructions (NOP, SYNC, END) are handled by the
 * dispatcher. ORDER ENGINE: SYNC's `engines` mask uses bits 0..3 in this order. */
typedef enum ct_engine { CT_ENG_LOAD, CT_ENG_STORE, CT_ENG_MXU, CT_ENG_VPU, CT_ENG_CTRL, CT_ENG_COUNT } ct_engine;

/* Opcodes, numbered as encoded: CT_ISA_NOP, CT_ISA_LOAD, CT_ISA_CONV, ... */
typedef enum ct_isa_op {
#define CT_ISA_OP(E, name, eng, FIELDS, sem) CT_ISA_##E,
#include "isa/isa.def"
  CT_ISA_OP_COUNT
} ct_isa_op;

/* Field value kinds: CT_ISA_K_U, CT_ISA_K_S, CT_ISA_K_F32, CT_ISA_K_DT, CT_ISA_K_ACT, ... */
typedef enum ct_isa_kind {
#define CT_ISA_KIND(K, VALUES, doc) CT_ISA_K_##K,
#include "isa/isa.def"
  CT_ISA_KIND_COUNT
} ct_isa_kind;

/* Named field values, numbered as encoded (CT_ISA_ACT_RELU, CT_ISA_ELT_ADD, ...). */
#define CT_ISA_VALUE_ENUM(K, N, spelling) CT_ISA_##K##_##N,
typedef enum ct_isa_act { CT_ISA_VALUES_ACT(CT_ISA_VALUE_ENUM) CT_ISA_ACT_COUNT } ct_isa_act;
typedef enum ct_isa_rq { CT_ISA_VALUES_RQ(CT_ISA_VALUE_ENUM) CT_ISA_RQ_COUNT } ct_isa_rq;
typedef enum ct_isa_elt { CT_ISA_VALUES_ELT(CT_ISA_VALUE_ENUM) CT_ISA_ELT_COUNT } ct_isa_elt;
typedef enum ct_isa_pool { CT_ISA_VALUES_POOL(CT_ISA_VALUE_ENUM) CT_ISA_POOL_COUNT } ct_isa_pool;
typedef enum ct_isa_red { CT_ISA_VALUES_RED(CT_ISA_VALUE_ENUM) CT_ISA_RED_COUNT } ct_isa_red;
typedef enum ct_isa_norm { CT_ISA_VALUES_NORM(CT_ISA_VALUE_ENUM) CT_ISA_NORM_COUNT } ct_isa_norm;
typedef enum ct_isa_ctm { CT_ISA_VALUES_CTM(CT_ISA_VALUE_ENUM) CT_ISA_CTM_COUNT } ct_isa_ctm;

/* C type of a decoded field of each kind: F32 fields are floats, all others int64_t
 * (unsigned fields hold their value, signed ones are sign-extended, DT a ct_dtype number,
 * named kinds the value's enum number). */
#define CT_ISA_CTYPE_U int64_t
#define CT_ISA_CTYPE_S int64_t
#define CT_ISA_CTYPE_F32 float
#define CT_ISA_CTYPE_LA int64_t
#define CT_ISA_CTYPE_GA int64_t
#define CT_ISA_CTYPE_DT int64_t
#define CT_ISA_CTYPE_ACT int64_t
#define CT_ISA_CTYPE_RQ int64_t
#define CT_ISA_CTYPE_ELT int64_t
#define CT_ISA_CTYPE_POOL int64_t
#define CT_ISA_CTYPE_RED int64_t
#define CT_ISA_CTYPE_NORM int64_t
#define CT_ISA_CTYPE_CTM int64_t

/* A decoded instruction. The operand fields of opcode X are the members of `x` (lower-case
 * opcode name, of type struct ct_insn_x), e.g. insn.conv.kh, insn.load.src_sn,
 * insn.eltwise.m_a (DWCONV has CONV's fields; LOAD/STORE/MOVE share names); their meaning, bit
 * positions and widths are in isa/isa.def and docs/isa.md. `debug_id` is 0 for none, else
 * 1 + the index of the entry in the program's debug map. */
typedef struct ct_insn {
  ct_isa_op op;
  uint32_t wait;   /* bit k: semaphore k must be > 0; all named ones are decremented at start */
  uint32_t signal; /* bit k: semaphore k is incremented at completion */
  uint32_t debug_id;
  union {
#define CT_ISA_FIELD_MEMBER(o, f, lo, width, K, doc) CT_ISA_CTYPE_##K f;
#define CT_ISA_OP(E, name, eng, FIELDS, sem) struct ct_insn_##name { FIELDS(CT_ISA_FIELD_MEMBER, name) } name;
#include "isa/isa.def"
#undef CT_ISA_FIELD_MEMBER
  };
} ct_insn;

/* One operand field of an opcode, for generic code (assembler, disassembler, docs, tests). */
typedef struct ct_isa_field {
  const char *name;
  int lo, width;       /* bit position in the 512-bit word and width in bits */
  ct_isa_kind kind;
  const char *doc;
  size_t offset;       /* offsetof(ct_insn, <op>.<name>) */
} ct_isa_field;

/* Lower-case opcode name ("conv"), or "?" when op is out of range. */
const char *ct_isa_op_name(ct_isa_op op);
/* One-line semantics of op from isa.def ("" when out of range). */
const char *ct_isa_op_semantics(ct_isa_op op);
/* Engine that executes op (CT_ENG_CTRL for NOP, SYNC, END and out-of-range values). */
ct_engine ct_isa_op_engine(ct_isa_op op);
/* Looks an opcode up by name, case-insensitively ("CONV", "conv"); false if unknown. */
bool ct_isa_op_parse(const char *name, ct_isa_op *op);
/* Engine name: "load", "store", "mxu", "vpu", "ctrl". */
const char *ct_engine_name(ct_engine e);
/* Kind name ("U", "ACT") and its doc line from isa.def. */
const char *ct_isa_kind_name(ct_isa_kind k);
const char *ct_isa_kind_doc(ct_isa_kind k);
/* Named values of a kind: returns how many (0 for U, S, F32, DT) and sets *names to the
 * asm spellings in encoding order ("none", "relu", "clamp"). */
int ct_isa_kind_values(ct_isa_kind k, const char *const **names);

/* The operand fields of op in bit order; returns their count (0 for an invalid op). */
int ct_isa_fields(ct_isa_op op, const ct_isa_field **fields);
/* Finds field `name` of op; NULL if op has no such field. */
const ct_isa_field *ct_isa_field_find(ct_isa_op op, const char *name);
/* Reads a field of insn as its encoded bit pattern (width bits, zero-extended: two's
 * complement for S, IEEE bits for F32). */
uint64_t ct_isa_field_bits(const ct_insn *insn, const ct_isa_field *f);
/* Reads a field as a signed value (S sign-extended; F32 truncated toward zero, saturating at
 * the int64 range, NaN read as 0). */
int64_t ct_isa_field_get(const ct_insn *insn, const ct_isa_field *f);
/* Stores an encoded bit pattern (lowest `width` bits of bits) into the field of insn. */
void ct_isa_field_set_bits(ct_insn *insn, const ct_isa_field *f, uint64_t bits);

/* Encodes insn into the 64-byte little-endian word `out` (bit layout: isa.def header).
 * Errors (CT_ERR_INPUT, message names the opcode and field): opcode out of range; a field
 * value that does not fit its width (U: 0..2^w-1, S: -2^(w-1)..2^(w-1)-1); a named value
 * or dtype out of range. `out` is unspecified on error. d may be NULL. */
ct_status ct_isa_encode(const ct_insn *insn, uint8_t out[CT_ISA_INSN_BYTES], ct_diag *d);

/* Decodes a 64-byte word. Errors (CT_ERR_INPUT, message names the byte/bit): unknown
 * opcode; a set bit outside the opcode's fields; a named value or dtype out of range.
 * Decoding a successfully encoded word returns the same ct_insn (fields not of this opcode
 * are zero). d may be NULL. */
ct_status ct_isa_decode(const uint8_t in[CT_ISA_INSN_BYTES], ct_insn *insn, ct_diag *d);

/* Semantic checks of one decoded instruction, beyond what decoding guarantees: dtypes
 * allowed for the opcode, non-zero shapes, conv/pool output sizes agree with
 * floor((i + pads - dil*(k-1) - 1) / stride) + 1 (ONNX Conv), groups divide channels, enum
 * combinations (e.g. rq_mode=none needs dt_out i32 or float). With a chip (may be NULL):
 * wait/signal bits < sem.count and every operand footprint (ct_isa_accesses) inside LMEM
 * (lmem.bytes) or GMEM (gmem.bytes). Returns CT_ERR_INPUT with a message naming the opcode
 * and the field. d may be NULL. */
ct_status ct_isa_check(const ct_insn *insn, const ct_chip *chip, ct_diag *d);

/* Memories named by operand addresses. */
typedef enum ct_mem { CT_MEM_LMEM, CT_MEM_GMEM } ct_mem;

/* One operand region: element (n, c, h, w) of the (shape[0], …, shape[3]) view lives at byte
 * addr + elem_bytes · (n·stride[0] + c·stride[1] + h·stride[2] + w·stride[3]) (strides in
 * elements; dense operands have row-major strides, DMA operands the instruction's); `bytes`
 * is its hull, from the first element to one past the last. */
typedef struct ct_isa_access {
  ct_mem mem;
  uint64_t addr;
  uint64_t bytes;
  bool write;
  int64_t shape[4], stride[4];
  uint32_t elem_bytes;
} ct_isa_access;

#define CT_ISA_MAX_ACCESS 6

/* Fills acc with the regions of insn's operands (inputs, weights, acc / bias / rq, tables:
 * reads, in that order; the result: a write, last; DMA: source then destination) and returns
 * how many (0 for NOP/SYNC/END). Sizes use the opcode's dtypes; a region of an instruction
 * that failed ct_isa_check may be bogus. The one description of what an instruction touches:
 * the bounds check, the cmodel's timing and race check and the compiler's schedule use it. */
int ct_isa_accesses(const ct_insn *insn, ct_isa_access acc[CT_ISA_MAX_ACCESS]);

/* Useful multiply-accumulates of a CONV, DWCONV or MATMUL (n*oc*oh*ow*(ic/groups)*kh*kw or
 * batch*m*n*k); 0 for other opcodes. Units: MACs. */
uint64_t ct_isa_macs(const ct_insn *insn);

#endif
