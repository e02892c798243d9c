/* program_file.c: the .ctpu byte format: serializer, atomic writer and a parser that checks
 * every offset, size, count and string against the file before using it (layout in
 * docs/isa.md "Program file"). All integers little-endian. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"
#include "isa/program.h"

#define HDR_BYTES 128
#define CONST_BYTES 32
#define IO_BYTES 96
#define DEBUG_BYTES 16

/* Header fields (byte offsets). */
enum {
  H_MAGIC = 0, H_VERSION = 4, H_SIG = 8, H_FILE = 16, H_INSN_OFF = 24, H_INSN_N = 32, H_CONST_OFF = 40,
  H_CONST_N = 48, H_BLOB_OFF = 56, H_BLOB_N = 64, H_IO_OFF = 72, H_IO_N = 80, H_DBG_OFF = 88, H_DBG_N = 96,
  H_STR_OFF = 104, H_STR_N = 112, H_RESERVED = 120
};

static void put32(uint8_t *b, uint32_t v) {
  for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *b, uint64_t v) {
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}
/* ---- serializer ---- */

typedef struct layout {
  uint64_t insn, cons, blob, blob_n, io, dbg, str, str_n, total;
} layout;

static uint64_t strings_bytes(const ct_program *p) {
  uint64_t n = 1; /* offset 0 is the empty string */
  for (size_t i = 0; i < p->n_consts; i++) n += strlen(p->consts[i].name) + 1;
  for (size_t i = 0; i < p->n_io; i++) n += strlen(p->io[i].name) + 1;
  for (size_t i = 0; i < p->n_debug; i++) n += strlen(p->debug[i].layer) + 1;
  return n;
}

static layout plan(const ct_program *p) {
  layout l;
  l.insn = HDR_BYTES;
  l.cons = l.insn + (uint64_t)p->n_insns * CT_ISA_INSN_BYTES;
  l.io = l.cons + (uint64_t)p->n_consts * CONST_BYTES;
  l.dbg = l.io + (uint64_t)p->n_io * IO_BYTES;
  l.str = l.dbg + (uint64_t)p->n_debug * DEBUG_BYTES;
  l.str_n = strings_bytes(p);
  l.blob = (l.str + l.str_n + 63) / 64 * 64;
  l.blob_n = 0;
  for (size_t i = 0; i < p->n_consts; i++) l.blob_n += p->consts[i].bytes;
  for (size_t i = 0; i < p->n_io; i++) /* per-channel parameters: n f64 scales, n i32 zero points */
    if (p->io[i].n_scale > 1) l.blob_n += (uint64_t)p->io[i].n_scale * 12;
  l.total = l.blob + l.blob_n;
  return l;
}

static void write_header(uint8_t *b, const ct_program *p, const layout *l) {
  memcpy(b + H_MAGIC, "CTPU", 4);
  put32(b + H_VERSION, p->version);
  put64(b + H_SIG, p->chip_sig);
  put64(b + H_FILE, l->total);
  put64(b + H_INSN_OFF, l->insn);
  put64(b + H_INSN_N, p->n_insns);
  put64(b + H_CONST_OFF, l->cons);
  put64(b + H_CONST_N, p->n_consts);
  put64(b + H_BLOB_OFF, l->blob);
  put64(b + H_BLOB_N, l->blob_n);
  put64(b + H_IO_OFF, l->io);
  put64(b + H_IO_N, p->n_io);
  put64(b + H_DBG_OFF, l->dbg);
  put64(b + H_DBG_N, p->n_debug);
  put64(b + H_STR_OFF, l->str);
  put64(b + H_STR_N, l->str_n);
}

/* Appends s to the string table at *pos; returns its offset. */
static uint32_t add_str(uint8_t *b, const layout *l, uint64_t *pos, const char *s) {
  size_t n = strlen(s) + 1;
  uint64_t off = *pos;
  memcpy(b + l->str + off, s, n);
  *pos += n;
  return (uint32_t)off;
}

static void write_tables(uint8_t *b, const ct_program *p, const layout *l) {
  uint64_t spos = 1, bpos = 0;
  for (size_t i = 0; i < p->n_consts; i++) {
    const ct_prog_const *c = &p->consts[i];
    uint8_t *e = b + l->cons + i * CONST_BYTES;
    put32(e, add_str(b, l, &spos, c->name));
    put32(e + 4, (uint32_t)c->dtype);
    put64(e + 8, c->gmem_addr);
    put64(e + 16, bpos);
    put64(e + 24, c->bytes);
    if (c->bytes) memcpy(b + l->blob + bpos, c->data, (size_t)c->bytes);
    bpos += c->bytes;
  }
  for (size_t i = 0; i < p->n_io; i++) {
    const ct_prog_io *io = &p->io[i];
    uint8_t *e = b + l->io + i * IO_BYTES;
    put32(e, add_str(b, l, &spos, io->name));
    e[4] = io->is_tensor ? 2 : io->is_output ? 1 : 0;
    e[5] = (uint8_t)io->dtype;
    e[6] = (uint8_t)io->ndim;
    put32(e + 8, (uint32_t)io->zero_point);
    uint64_t sb;
    memcpy(&sb, &io->scale, 8);
    if (io->n_scale > 1) { /* per channel: axis + 1, count, and the parameters' blob offset */
      e[7] = (uint8_t)(io->quant_axis + 1);
      put32(e + 12, (uint32_t)io->n_scale);
      sb = bpos;
      for (int k = 0; k < io->n_scale; k++) {
        uint64_t v;
        memcpy(&v, &io->scales[k], 8);
        put64(b + l->blob + bpos + 8 * (uint64_t)k, v);
        put32(b + l->blob + bpos + 8 * (uint64_t)io->n_scale + 4 * (uint64_t)k, (uint32_t)io->zero_points[k]);
      }
      bpos += (uint64_t)io->n_scale * 12;
    }
    put64(e + 16, sb);
    put64(e + 24, io->gmem_addr);
    for (int k = 0; k < CT_PROGRAM_MAX_DIMS; k++) put64(e + 32 + 8 * k, k < io->ndim ? (uint64_t)io->shape[k] : 0);
  }
  for (size_t i = 0; i < p->n_debug; i++) {
    const ct_prog_debug *g = &p->debug[i];
    uint8_t *e = b + l->dbg + i * DEBUG_BYTES;
    put32(e, add_str(b, l, &spos, g->layer));
    put32(e + 4, (uint32_t)g->group);
    put32(e + 8, (uint32_t)g->tile);
    put32(e + 12, (uint32_t)g->step);
  }
}

ct_status ct_program_serialize(const ct_program *p, uint8_t **buf, size_t *n, ct_diag *d) {
  *buf = NULL;
  *n = 0;
  layout l = plan(p);
  if (l.str_n > UINT32_MAX) return ct_diag_set(d, CT_ERR_LIMIT, "string table larger than 4 GiB");
  if (l.total > SIZE_MAX) return ct_diag_set(d, CT_ERR_LIMIT, "program too large");
  uint8_t *b = calloc(1, (size_t)l.total);
  if (!b) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory (%llu bytes)", (unsigned long long)l.total);
  write_header(b, p, &l);
  for (size_t i = 0; i < p->n_insns; i++)
    if (ct_isa_encode(&p->insns[i], b + l.insn + i * CT_ISA_INSN_BYTES, d)) {
      free(b);
      return ct_diag_prefix(d, "insn %zu: ", i);
    }
  write_tables(b, p, &l);
  *buf = b;
  *n = (size_t)l.total;
  return CT_OK;
}

typedef struct image {
  const uint8_t *buf;
  size_t n;
} image;

static ct_status write_image(FILE *f, const void *ctx, ct_diag *d) {
  const image *im = ctx;
  (void)d;
  fwrite(im->buf, 1, im->n, f); /* short writes show up as ferror */
  return CT_OK;
}

ct_status ct_program_write(const ct_program *p, const char *path, ct_diag *d) {
  uint8_t *buf;
  size_t n;
  if (ct_program_serialize(p, &buf, &n, d)) return ct_diag_prefix(d, "%s: ", path);
  image im = {buf, n};
  ct_status st = ct_outfile_write(path, write_image, &im, d);
  free(buf);
  return st;
}
