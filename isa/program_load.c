/* program_load.c: the .ctpu parser. Nothing in the file is trusted: every offset, size and
 * count is checked against the file length (overflow-safe) before use, strings must lie in
 * the string table and be NUL-terminated, every instruction must decode; errors name the
 * byte offset (layout: program_file.c, docs/isa.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/program.h"

#include "common/file.h"

#define HDR_BYTES 128
#define CONST_BYTES 32
#define IO_BYTES 96
#define DEBUG_BYTES 16

static uint32_t get32(const uint8_t *b) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)b[i] << (8 * i);
  return v;
}
static uint64_t get64(const uint8_t *b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
  return v;
}

typedef struct reader {
  const uint8_t *b;
  size_t n;
  const char *fname;
  uint64_t insn, n_insn, cons, n_cons, blob, n_blob, io, n_io, dbg, n_dbg, str, n_str;
} reader;

#define BAD(r, off, ...) bad(r, d, (uint64_t)(off), __VA_ARGS__)
static ct_status bad(const reader *r, ct_diag *d, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ct_status bad(const reader *r, ct_diag *d, uint64_t off, const char *fmt, ...) {
  char msg[CT_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ct_diag_set(d, CT_ERR_INPUT, "%s: byte %llu: %s", r->fname, (unsigned long long)off, msg);
}

/* Checks that section [off, off + count*entry) lies after the header and inside the file. */
static ct_status check_section(const reader *r, int hdr_at, const char *what, uint64_t off, uint64_t count,
                               uint64_t entry, ct_diag *d) {
  if (entry && count > UINT64_MAX / entry) return BAD(r, hdr_at + 8, "%s: count %llu is too large", what, (unsigned long long)count);
  uint64_t size = count * entry;
  if (off < HDR_BYTES || off > r->n || size > r->n - off)
    return BAD(r, hdr_at, "%s: offset %llu + %llu bytes lies outside the file (%zu bytes)", what,
               (unsigned long long)off, (unsigned long long)size, r->n);
  return CT_OK;
}

static ct_status read_header(reader *r, const ct_program *p, ct_diag *d) {
  const uint8_t *b = r->b;
  if (memcmp(b, "CTPU", r->n < 4 ? r->n : 4) != 0) return BAD(r, 0, "bad magic (not a .ctpu program)");
  if (r->n < HDR_BYTES) return BAD(r, r->n, "truncated header (%zu of %d bytes)", r->n, HDR_BYTES);
  if (p->version != CT_PROGRAM_VERSION)
    return BAD(r, 4, "unsupported version %u (expected %d)", p->version, CT_PROGRAM_VERSION);
  if (get64(b + 16) != r->n)
    return BAD(r, 16, "file size field %llu but the file has %zu bytes (truncated?)", (unsigned long long)get64(b + 16), r->n);
  if (get64(b + 120) != 0) return BAD(r, 120, "reserved header field is not zero");
  r->insn = get64(b + 24), r->n_insn = get64(b + 32), r->cons = get64(b + 40), r->n_cons = get64(b + 48);
  r->blob = get64(b + 56), r->n_blob = get64(b + 64), r->io = get64(b + 72), r->n_io = get64(b + 80);
  r->dbg = get64(b + 88), r->n_dbg = get64(b + 96), r->str = get64(b + 104), r->n_str = get64(b + 112);
  ct_status st;
  if ((st = check_section(r, 24, "instructions", r->insn, r->n_insn, CT_ISA_INSN_BYTES, d)) ||
      (st = check_section(r, 40, "constant table", r->cons, r->n_cons, CONST_BYTES, d)) ||
      (st = check_section(r, 56, "constant blob", r->blob, r->n_blob, 1, d)) ||
      (st = check_section(r, 72, "IO table", r->io, r->n_io, IO_BYTES, d)) ||
      (st = check_section(r, 88, "debug map", r->dbg, r->n_dbg, DEBUG_BYTES, d)) ||
      (st = check_section(r, 104, "string table", r->str, r->n_str, 1, d)))
    return st;
  if (r->n_str == 0 || r->n_str > UINT32_MAX || r->b[r->str + r->n_str - 1] != 0)
    return BAD(r, 112, "string table must be 1..2^32-1 bytes and end with a NUL byte");
  if (r->n_dbg >= UINT32_MAX) return BAD(r, 96, "too many debug entries");
  return CT_OK;
}

/* Copies the string at table offset `off` (field at byte `at`); NULL with a message. */
static char *read_str(const reader *r, uint64_t at, uint32_t off, ct_diag *d) {
  if (off >= r->n_str) {
    BAD(r, at, "string offset %u is outside the string table (%llu bytes)", off, (unsigned long long)r->n_str);
    return NULL;
  }
  const char *s = (const char *)r->b + r->str + off;
  size_t n = strlen(s) + 1; /* terminated: the table ends with NUL */
  char *c = malloc(n);
  if (!c) ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  else memcpy(c, s, n);
  return c;
}

static ct_status read_insns(const reader *r, ct_program *p, ct_diag *d) {
  if (r->n_insn && !(p->insns = calloc((size_t)r->n_insn, sizeof *p->insns)))
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory (%llu instructions)", (unsigned long long)r->n_insn);
  p->cap_insns = (size_t)r->n_insn;
  for (uint64_t i = 0; i < r->n_insn; i++) {
    uint64_t at = r->insn + i * CT_ISA_INSN_BYTES;
    if (ct_isa_decode(r->b + at, &p->insns[i], d))
      return ct_diag_prefix(d, "%s: byte %llu: insn %llu: ", r->fname, (unsigned long long)at, (unsigned long long)i);
    p->n_insns++;
  }
  return CT_OK;
}

static ct_status read_consts(const reader *r, ct_program *p, ct_diag *d) {
  for (uint64_t i = 0; i < r->n_cons; i++) {
    uint64_t at = r->cons + i * CONST_BYTES;
    const uint8_t *e = r->b + at;
    uint32_t dt = get32(e + 4);
    uint64_t off = get64(e + 16), bytes = get64(e + 24);
    if (dt >= CT_DTYPE_COUNT) return BAD(r, at + 4, "const %llu: invalid dtype %u", (unsigned long long)i, dt);
    if (off > r->n_blob || bytes > r->n_blob - off)
      return BAD(r, at + 16, "const %llu: blob range %llu + %llu exceeds the blob (%llu bytes)", (unsigned long long)i,
                 (unsigned long long)off, (unsigned long long)bytes, (unsigned long long)r->n_blob);
    char *name = read_str(r, at, get32(e), d);
    if (!name) return d ? d->code : CT_ERR_INPUT;
    ct_status st = ct_program_add_const(p, name, (ct_dtype)dt, get64(e + 8), r->b + r->blob + off, bytes, d);
    free(name);
    if (st) return st;
  }
  return CT_OK;
}

/* Per-channel parameters of IO record i (byte 7 = axis + 1, bytes 12..15 = count, the scale
 * field = their blob offset: count f64 scales, then count i32 zero points); both 0: per
 * tensor. Checked against the record's shape and the blob before use. */
static ct_status read_io_quant(const reader *r, const uint8_t *e, uint64_t at, uint64_t i, ct_prog_io *io, ct_diag *d) {
  uint32_t n = get32(e + 12);
  if (e[7] == 0 && n == 0) return CT_OK;
  int axis = e[7] - 1;
  if (axis < 0 || axis >= io->ndim || n < 2 || (uint64_t)io->shape[axis] != n)
    return BAD(r, at + 7, "IO %llu: per-channel axis %d and count %u do not match its shape", (unsigned long long)i, axis, n);
  uint64_t off = get64(e + 16);
  if (off > r->n_blob || (r->n_blob - off) / 12 < n)
    return BAD(r, at + 16, "IO %llu: per-channel parameters outside the blob", (unsigned long long)i);
  io->scale = 0, io->n_scale = (int)n, io->quant_axis = axis;
  io->scales = malloc(sizeof *io->scales * n), io->zero_points = malloc(sizeof *io->zero_points * n);
  if (!io->scales || !io->zero_points) {
    free(io->scales), free(io->zero_points);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  const uint8_t *q = r->b + r->blob + off;
  for (uint32_t k = 0; k < n; k++) {
    uint64_t v = get64(q + 8 * (uint64_t)k);
    memcpy(&io->scales[k], &v, 8);
    io->zero_points[k] = (int32_t)get32(q + 8 * (uint64_t)n + 4 * (uint64_t)k);
  }
  return CT_OK;
}

static ct_status read_io(const reader *r, ct_program *p, ct_diag *d) {
  for (uint64_t i = 0; i < r->n_io; i++) {
    uint64_t at = r->io + i * IO_BYTES;
    const uint8_t *e = r->b + at;
    ct_prog_io io;
    memset(&io, 0, sizeof io);
    if (e[4] > 2) return BAD(r, at + 4, "IO %llu: bad flags", (unsigned long long)i);
    if (e[5] >= CT_DTYPE_COUNT) return BAD(r, at + 5, "IO %llu: invalid dtype %u", (unsigned long long)i, e[5]);
    if (e[6] > CT_PROGRAM_MAX_DIMS) return BAD(r, at + 6, "IO %llu: %u dimensions (max %d)", (unsigned long long)i, e[6], CT_PROGRAM_MAX_DIMS);
    io.is_output = e[4] == 1;
    io.is_tensor = e[4] == 2;
    io.dtype = (ct_dtype)e[5];
    io.ndim = e[6];
    io.zero_point = (int32_t)get32(e + 8);
    uint64_t sb = get64(e + 16);
    memcpy(&io.scale, &sb, 8);
    io.gmem_addr = get64(e + 24);
    for (int k = 0; k < CT_PROGRAM_MAX_DIMS; k++) {
      uint64_t v = get64(e + 32 + 8 * k);
      if (v > INT64_MAX || (k >= io.ndim && v != 0)) return BAD(r, at + 32 + 8 * k, "IO %llu: bad dimension %d", (unsigned long long)i, k);
      io.shape[k] = (int64_t)v;
    }
    ct_status st = read_io_quant(r, e, at, i, &io, d);
    if (st) return st;
    if (!(io.name = read_str(r, at, get32(e), d))) return free(io.scales), free(io.zero_points), d ? d->code : CT_ERR_INPUT;
    st = ct_program_add_io(p, &io, d);
    free(io.name), free(io.scales), free(io.zero_points);
    if (st) return st;
  }
  return CT_OK;
}

static ct_status read_debug(const reader *r, ct_program *p, ct_diag *d) {
  for (uint64_t i = 0; i < r->n_dbg; i++) {
    uint64_t at = r->dbg + i * DEBUG_BYTES;
    const uint8_t *e = r->b + at;
    char *layer = read_str(r, at, get32(e), d);
    if (!layer) return d ? d->code : CT_ERR_INPUT;
    ct_status st = ct_program_add_debug(p, layer, (int32_t)get32(e + 4), (int32_t)get32(e + 8), (int32_t)get32(e + 12), NULL, d);
    free(layer);
    if (st) return st;
  }
  return CT_OK;
}

ct_status ct_program_parse(const uint8_t *buf, size_t n, const ct_chip *chip, const char *fname, ct_program *p,
                           ct_diag *d) {
  reader r = {.b = buf, .n = n, .fname = fname ? fname : "program"};
  ct_program_init(p, 0);
  if (n >= 16) {
    p->version = get32(buf + 4);
    p->chip_sig = get64(buf + 8);
  }
  ct_status st = read_header(&r, p, d);
  if (!st) st = read_insns(&r, p, d);
  if (!st) st = read_consts(&r, p, d);
  if (!st) st = read_io(&r, p, d);
  if (!st) st = read_debug(&r, p, d);
  if (!st && chip && p->chip_sig != ct_chip_signature(chip))
    st = BAD(&r, 8, "chip signature 0x%016llx differs from the chip's 0x%016llx (lmem.bytes, gmem.bytes, sem.count)",
             (unsigned long long)p->chip_sig, (unsigned long long)ct_chip_signature(chip));
  ct_prog_part part;
  size_t idx;
  if (!st && (st = ct_program_check(p, chip, &part, &idx, d))) {
    uint64_t off = part == CT_PART_INSN ? r.insn + idx * CT_ISA_INSN_BYTES
                   : part == CT_PART_CONST ? r.cons + idx * CONST_BYTES : r.io + idx * IO_BYTES;
    ct_diag_prefix(d, "%s: byte %llu: ", r.fname, (unsigned long long)off);
  }
  if (st) ct_program_free(p);
  return st;
}

ct_status ct_program_load(const char *path, const ct_chip *chip, ct_program *p, ct_diag *d) {
  ct_program_init(p, 0);
  char *buf;
  size_t n;
  ct_status st = ct_file_read(path, 0, &buf, &n, d);
  if (st) return st;
  st = ct_program_parse((const uint8_t *)buf, n, chip, path, p, d);
  free(buf);
  return st;
}
