/* isa.c: tables generated from isa/isa.def (names, engines, fields, kinds) and the 64-byte
 * little-endian encoder/decoder (bit layout in isa.def's header comment). */
#include "isa/isa.h"

#include <stdio.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "quant/quant.h"

/* The quantized-domain enums of quant/ and the ISA's named values are one numbering. */
_Static_assert((int)CT_ISA_ACT_RELU == (int)CT_QUANT_ACT_RELU, "ACT order");
_Static_assert((int)CT_ISA_ACT_CLAMP == (int)CT_QUANT_ACT_CLAMP, "ACT order");
_Static_assert((int)CT_ISA_ELT_MUL == (int)CT_QUANT_ELT_MUL, "ELT order");
_Static_assert((int)CT_ISA_ELT_MIN == (int)CT_QUANT_ELT_MIN, "ELT order");
_Static_assert(CT_ISA_OP_COUNT <= 256, "opcode is 8 bits");
_Static_assert(CT_DTYPE_COUNT <= 16, "DT fields are 4 bits");

/* One field table per opcode, in bit order; offsets into ct_insn's member of the opcode. */
#define CT_ISA_FIELD_ENTRY(o, f, lo, width, K, doc) {#f, lo, width, CT_ISA_K_##K, doc, offsetof(ct_insn, o.f)},
#define CT_ISA_OP(E, name, eng, FIELDS, sem) \
  static const ct_isa_field fields_##name[] = {FIELDS(CT_ISA_FIELD_ENTRY, name)};
#include "isa/isa.def"

static const struct {
  const char *name;
  ct_engine engine;
  const char *semantics;
  const ct_isa_field *fields;
  int n_fields;
} op_info[CT_ISA_OP_COUNT] = {
#define CT_ISA_OP(E, name, eng, FIELDS, sem) {#name, CT_ENG_##eng, sem, fields_##name, (int)(sizeof fields_##name / sizeof fields_##name[0])},
#include "isa/isa.def"
};

#define CT_ISA_VALUE_NAME(K, N, spelling) spelling,
#define CT_ISA_KIND(K, VALUES, doc) static const char *const values_##K[] = {VALUES(CT_ISA_VALUE_NAME) NULL};
#include "isa/isa.def"

static const struct {
  const char *name, *doc;
  const char *const *values;
} kind_info[CT_ISA_KIND_COUNT] = {
#define CT_ISA_KIND(K, VALUES, doc) {#K, doc, values_##K},
#include "isa/isa.def"
};

static const char *const engine_names[] = {"load", "store", "mxu", "vpu", "ctrl"}; /* ORDER ENGINE */
_Static_assert(sizeof engine_names / sizeof engine_names[0] == CT_ENG_COUNT, "engine_names");

const char *ct_isa_op_name(ct_isa_op op) { return (unsigned)op < CT_ISA_OP_COUNT ? op_info[op].name : "?"; }
const char *ct_isa_op_semantics(ct_isa_op op) {
  return (unsigned)op < CT_ISA_OP_COUNT ? op_info[op].semantics : "";
}
ct_engine ct_isa_op_engine(ct_isa_op op) {
  return (unsigned)op < CT_ISA_OP_COUNT ? op_info[op].engine : CT_ENG_CTRL;
}
const char *ct_engine_name(ct_engine e) { return (unsigned)e < CT_ENG_COUNT ? engine_names[e] : "?"; }
const char *ct_isa_kind_name(ct_isa_kind k) { return (unsigned)k < CT_ISA_KIND_COUNT ? kind_info[k].name : "?"; }
const char *ct_isa_kind_doc(ct_isa_kind k) { return (unsigned)k < CT_ISA_KIND_COUNT ? kind_info[k].doc : ""; }

bool ct_isa_op_parse(const char *name, ct_isa_op *op) {
  for (int i = 0; i < CT_ISA_OP_COUNT; i++)
    if (strcasecmp(name, op_info[i].name) == 0) {
      *op = (ct_isa_op)i;
      return true;
    }
  return false;
}

int ct_isa_kind_values(ct_isa_kind k, const char *const **names) {
  if ((unsigned)k >= CT_ISA_KIND_COUNT) return 0;
  int n = 0;
  while (kind_info[k].values[n]) n++;
  if (names) *names = kind_info[k].values;
  return n;
}

int ct_isa_fields(ct_isa_op op, const ct_isa_field **fields) {
  if ((unsigned)op >= CT_ISA_OP_COUNT) return 0;
  if (fields) *fields = op_info[op].fields;
  return op_info[op].n_fields;
}

const ct_isa_field *ct_isa_field_find(ct_isa_op op, const char *name) {
  const ct_isa_field *f;
  int n = ct_isa_fields(op, &f);
  for (int i = 0; i < n; i++)
    if (strcmp(f[i].name, name) == 0) return &f[i];
  return NULL;
}

static uint64_t width_mask(int w) { return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1; }

uint64_t ct_isa_field_bits(const ct_insn *insn, const ct_isa_field *f) {
  const char *p = (const char *)insn + f->offset;
  if (f->kind == CT_ISA_K_F32) {
    uint32_t u;
    memcpy(&u, p, 4);
    return u;
  }
  int64_t v;
  memcpy(&v, p, sizeof v);
  return (uint64_t)v & width_mask(f->width);
}

int64_t ct_isa_field_get(const ct_insn *insn, const ct_isa_field *f) {
  const char *p = (const char *)insn + f->offset;
  if (f->kind == CT_ISA_K_F32) {
    float x;
    memcpy(&x, p, 4);
    /* truncation toward zero, saturating; NaN gives 0 (a float -> int64 cast of NaN or of
     * a value beyond +-2^63 is undefined behaviour in C) */
    if (isnan(x)) return 0;
    if (x >= 9.2233720368547758e18f) return INT64_MAX;
    if (x <= -9.2233720368547758e18f) return INT64_MIN;
    return (int64_t)x;
  }
  int64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

void ct_isa_field_set_bits(ct_insn *insn, const ct_isa_field *f, uint64_t bits) {
  char *p = (char *)insn + f->offset;
  bits &= width_mask(f->width);
  if (f->kind == CT_ISA_K_F32) {
    uint32_t u = (uint32_t)bits;
    memcpy(p, &u, 4);
    return;
  }
  int64_t v = (int64_t)bits;
  if (f->kind == CT_ISA_K_S && f->width < 64 && (bits >> (f->width - 1)) & 1)
    v = (int64_t)(bits | ~width_mask(f->width));
  memcpy(p, &v, sizeof v);
}

/* ---- bit packing: bit i of the word is bit (i % 8) of byte i / 8 ---- */

static void put_bits(uint8_t *w, int lo, int width, uint64_t v) {
  uint64_t mask = width_mask(width);
  v &= mask;
  int first = lo >> 3, sh = lo & 7, nbytes = (sh + width + 7) >> 3;
  for (int k = 0; k < nbytes; k++) {
    int pos = 8 * k - sh; /* bit of v that lands on bit 0 of this byte */
    uint64_t vb = pos >= 0 ? v >> pos : v << -pos;
    uint64_t mb = pos >= 0 ? mask >> pos : mask << -pos;
    w[first + k] = (uint8_t)((w[first + k] & ~mb) | (vb & mb));
  }
}

static uint64_t get_bits(const uint8_t *w, int lo, int width) {
  uint64_t v = 0;
  int first = lo >> 3, sh = lo & 7, nbytes = (sh + width + 7) >> 3;
  for (int k = 0; k < nbytes; k++) {
    int pos = 8 * k - sh;
    uint64_t b = w[first + k];
    v |= pos >= 0 ? (pos < 64 ? b << pos : 0) : b >> -pos;
  }
  return v & width_mask(width);
}

/* Kinds whose every bit pattern is a valid value. */
static bool kind_is_plain(ct_isa_kind k) {
  return k == CT_ISA_K_U || k == CT_ISA_K_S || k == CT_ISA_K_F32 || k == CT_ISA_K_LA || k == CT_ISA_K_GA;
}

/* Range check of a field value before encoding; returns false with a message. */
static bool field_fits(const ct_insn *insn, const ct_isa_field *f, ct_diag *d) {
  if (f->kind == CT_ISA_K_F32) return true;
  int64_t v = ct_isa_field_get(insn, f);
  int64_t lo = 0, hi = (int64_t)width_mask(f->width);
  if (f->kind == CT_ISA_K_S) {
    lo = -(INT64_C(1) << (f->width - 1));
    hi = (INT64_C(1) << (f->width - 1)) - 1;
  } else if (f->kind == CT_ISA_K_DT) {
    hi = CT_DTYPE_COUNT - 1;
  } else if (ct_isa_kind_values(f->kind, NULL) > 0) {
    hi = ct_isa_kind_values(f->kind, NULL) - 1;
  }
  if (v >= lo && v <= hi) return true;
  ct_diag_set(d, CT_ERR_INPUT, "%s: field \"%s\": %lld is outside %lld..%lld (%d-bit %s)",
              ct_isa_op_name(insn->op), f->name, (long long)v, (long long)lo, (long long)hi, f->width,
              ct_isa_kind_name(f->kind));
  return false;
}

ct_status ct_isa_encode(const ct_insn *insn, uint8_t out[CT_ISA_INSN_BYTES], ct_diag *d) {
  if ((unsigned)insn->op >= CT_ISA_OP_COUNT)
    return ct_diag_set(d, CT_ERR_INPUT, "opcode %d is not an instruction", (int)insn->op);
  memset(out, 0, CT_ISA_INSN_BYTES);
  put_bits(out, 0, 8, (uint64_t)insn->op);
  put_bits(out, 8, 32, insn->wait);
  put_bits(out, 40, 32, insn->signal);
  put_bits(out, 72, 32, insn->debug_id);
  const ct_isa_field *f;
  int n = ct_isa_fields(insn->op, &f);
  for (int i = 0; i < n; i++) {
    if (!field_fits(insn, &f[i], d)) return CT_ERR_INPUT;
    put_bits(out, f[i].lo, f[i].width, ct_isa_field_bits(insn, &f[i]));
  }
  return CT_OK;
}

ct_status ct_isa_decode(const uint8_t in[CT_ISA_INSN_BYTES], ct_insn *insn, ct_diag *d) {
  memset(insn, 0, sizeof *insn);
  uint64_t op = get_bits(in, 0, 8);
  if (op >= CT_ISA_OP_COUNT) return ct_diag_set(d, CT_ERR_INPUT, "unknown opcode %llu (word byte 0)", (unsigned long long)op);
  insn->op = (ct_isa_op)op;
  insn->wait = (uint32_t)get_bits(in, 8, 32);
  insn->signal = (uint32_t)get_bits(in, 40, 32);
  insn->debug_id = (uint32_t)get_bits(in, 72, 32);
  const ct_isa_field *f;
  int n = ct_isa_fields(insn->op, &f);
  for (int i = 0; i < n; i++) {
    ct_isa_field_set_bits(insn, &f[i], get_bits(in, f[i].lo, f[i].width));
    if (!kind_is_plain(f[i].kind) && !field_fits(insn, &f[i], d))
      return ct_diag_prefix(d, "word byte %d: ", f[i].lo / 8);
  }
  /* Bits outside the opcode's fields must be zero: re-encoding must give the same word. */
  uint8_t again[CT_ISA_INSN_BYTES];
  ct_status st = ct_isa_encode(insn, again, d);
  if (st) return st;
  for (int b = 0; b < CT_ISA_INSN_BYTES; b++)
    if (in[b] != again[b])
      return ct_diag_set(d, CT_ERR_INPUT, "%s: unused bits set (word byte %d: 0x%02x)", ct_isa_op_name(insn->op), b,
                         in[b] ^ again[b]);
  return CT_OK;
}
