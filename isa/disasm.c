/* disasm.c: ct_program → assembly text that ct_asm_parse turns back into identical bytes:
 * every field printed (named values by name, floats with 9 significant digits, which
 * round-trip IEEE single exactly), constants inline, explicit addresses and debug ids. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "isa/asm.h"
#include "common/outset.h"

/* Appends printf output at *pos of buf (size n), never overflowing. */
static void app(char *buf, size_t n, size_t *pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void app(char *buf, size_t n, size_t *pos, const char *fmt, ...) {
  if (*pos >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *pos, n - *pos, fmt, ap);
  va_end(ap);
  if (k > 0) *pos = *pos + (size_t)k < n ? *pos + (size_t)k : n - 1;
}

static void sems(char *buf, size_t n, size_t *pos, const char *key, uint32_t mask) {
  if (!mask) return;
  app(buf, n, pos, " %s=", key);
  const char *sep = "";
  for (int k = 0; k < CT_ISA_MAX_SEMS; k++)
    if (mask >> k & 1) {
      app(buf, n, pos, "%s%d", sep, k);
      sep = ",";
    }
}

char *ct_disasm_insn(const ct_insn *insn, char *buf, size_t n) {
  size_t pos = 0;
  if (n) buf[0] = '\0';
  char up[32];
  const char *name = ct_isa_op_name(insn->op);
  size_t k = 0;
  for (; name[k] && k < sizeof up - 1; k++) up[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 32 : name[k]);
  up[k] = '\0';
  app(buf, n, &pos, "%s", up);
  const ct_isa_field *f;
  int nf = ct_isa_fields(insn->op, &f);
  for (int i = 0; i < nf; i++) {
    const char *const *names;
    int nv = ct_isa_kind_values(f[i].kind, &names);
    int64_t v = ct_isa_field_get(insn, &f[i]);
    if (f[i].kind == CT_ISA_K_F32) {
      uint32_t bits = (uint32_t)ct_isa_field_bits(insn, &f[i]);
      float x;
      memcpy(&x, &bits, 4);
      if (isfinite(x)) app(buf, n, &pos, " %s=%.9g", f[i].name, (double)x);
      else app(buf, n, &pos, " %s=0x%08x", f[i].name, bits);
    } else if ((f[i].kind == CT_ISA_K_LA || f[i].kind == CT_ISA_K_GA) && v >= 0) {
      app(buf, n, &pos, " %s=0x%llx", f[i].name, (unsigned long long)v);
    } else if (f[i].kind == CT_ISA_K_DT && v >= 0 && v < CT_DTYPE_COUNT) {
      app(buf, n, &pos, " %s=%s", f[i].name, ct_dtype_name((ct_dtype)v));
    } else if (nv > 0 && v >= 0 && v < nv) {
      app(buf, n, &pos, " %s=%s", f[i].name, names[v]);
    } else {
      app(buf, n, &pos, " %s=%lld", f[i].name, (long long)v);
    }
  }
  sems(buf, n, &pos, "wait", insn->wait);
  sems(buf, n, &pos, "signal", insn->signal);
  if (insn->debug_id) app(buf, n, &pos, " dbg=%u", insn->debug_id);
  return buf;
}

/* Writes s quoted, escaping " \\ and newline, carriage return, tab. */
static void put_quoted(FILE *f, const char *s) {
  fputc('"', f);
  for (const char *p = s; *p; p++) {
    const char *e = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : *p == '\t' ? "\\t" : NULL;
    if (e) fputs(e, f);
    else fputc(*p, f);
  }
  fputc('"', f);
}

/* Writes s as a token: quoted when it is empty, contains whitespace, quotes, '#', '\\', or
 * starts with '.', '@', '['. */
static void put_name(FILE *f, const char *s) {
  bool plain = s[0] && s[0] != '.' && s[0] != '@' && s[0] != '[';
  for (const char *p = s; *p && plain; p++) plain = !strchr(" \t\r\n\"#\\", *p);
  if (plain) fputs(s, f);
  else put_quoted(f, s);
}

/* Integer constants as [v, ...]; float constants and anything else as raw 0xHEX bytes. */
static void put_const(FILE *f, const ct_prog_const *c) {
  fputs(".const ", f);
  put_name(f, c->name);
  fprintf(f, " %s ", ct_dtype_name(c->dtype));
  size_t es = ct_dtype_size(c->dtype), n = es ? (size_t)(c->bytes / es) : 0;
  if (!ct_dtype_is_float(c->dtype) && c->dtype != CT_BOOL && c->bytes > 0) {
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
      uint64_t u = 0;
      for (size_t k = 0; k < es; k++) u |= (uint64_t)c->data[i * es + k] << (8 * k);
      if (ct_dtype_is_signed(c->dtype) && es < 8 && (u >> (8 * es - 1) & 1)) u |= ~UINT64_C(0) << (8 * es);
      if (ct_dtype_is_signed(c->dtype)) fprintf(f, i ? ", %lld" : "%lld", (long long)u);
      else fprintf(f, i ? ", %llu" : "%llu", (unsigned long long)u);
    }
    fputc(']', f);
  } else if (c->bytes == 0) {
    fputs("[]", f);
  } else {
    fputs("0x", f);
    for (uint64_t i = 0; i < c->bytes; i++) fprintf(f, "%02x", c->data[i]);
  }
  fprintf(f, " at=0x%llx\n", (unsigned long long)c->gmem_addr);
}

static void put_io(FILE *f, const ct_prog_io *io) {
  char shape[256];
  fputs(io->is_tensor ? ".tensor " : io->is_output ? ".output " : ".input ", f);
  put_name(f, io->name);
  fprintf(f, " %s %s 0x%llx", ct_shape_str(io->ndim, io->shape, shape, sizeof shape), ct_dtype_name(io->dtype),
          (unsigned long long)io->gmem_addr);
  if (io->n_scale <= 1) {
    fprintf(f, " %.17g %d\n", io->scale, (int)io->zero_point);
    return;
  }
  fprintf(f, " @%d:", io->quant_axis); /* per channel: @AXIS:s,s,... z,z,... */
  for (int k = 0; k < io->n_scale; k++) fprintf(f, "%s%.17g", k ? "," : "", io->scales[k]);
  for (int k = 0; k < io->n_scale; k++) fprintf(f, "%s%d", k ? "," : " ", (int)io->zero_points[k]);
  fputc('\n', f);
}

ct_status ct_disasm(const ct_program *p, FILE *f, ct_diag *d) {
  fprintf(f, "# ctpu program, version %u, %zu instructions\n.chipsig 0x%016llx\n", p->version, p->n_insns,
          (unsigned long long)p->chip_sig);
  for (size_t i = 0; i < p->n_consts; i++) put_const(f, &p->consts[i]);
  for (size_t i = 0; i < p->n_io; i++) put_io(f, &p->io[i]);
  for (size_t i = 0; i < p->n_debug; i++) {
    fputs(".debug ", f);
    put_quoted(f, p->debug[i].layer);
    fprintf(f, " %d %d %d\n", (int)p->debug[i].group, (int)p->debug[i].tile, (int)p->debug[i].step);
  }
  char line[4096];
  for (size_t i = 0; i < p->n_insns; i++) {
    const ct_insn *in = &p->insns[i];
    fputs(ct_disasm_insn(in, line, sizeof line), f);
    if (in->debug_id == 0) fputs(" dbg=0", f);
    const ct_prog_debug *g = ct_program_debug_of(p, in);
    if (g && !strpbrk(g->layer, "\r\n"))
      fprintf(f, "  # %zu %s g%d t%d s%d", i, g->layer, (int)g->group, (int)g->tile, (int)g->step);
    fputc('\n', f);
  }
  if (ferror(f)) return ct_diag_set(d, CT_ERR_INPUT, "cannot write the disassembly");
  return CT_OK;
}

static ct_status write_text(FILE *f, const void *ctx, ct_diag *d) { return ct_disasm(ctx, f, d); }

ct_status ct_disasm_file(const ct_program *p, const char *path, ct_diag *d) {
  return ct_outfile_write(path, write_text, p, d);
}
