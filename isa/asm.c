/* asm.c: the ctpu assembler: text (syntax in docs/isa.md) → ct_program. Two passes over the
 * lines: pass 1 defines constants, IO tensors and the chip signature (the symbols `@name`),
 * pass 2 assembles .debug entries and instructions, field names and widths from isa.def. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/h5io.h"
#include "isa/asm.h"

#define MAX_TOK 160

typedef struct asm_ctx {
  const char *fname, *base_dir;
  int line;
  ct_program *p;
  ct_diag *d;
  uint32_t cur_debug;
  uint64_t const_next;
  bool have_sig;
} asm_ctx;

#define ERR(c, ...) asm_err(c, __VA_ARGS__)
#define OOM(c) ct_diag_set((c)->d, CT_ERR_LIMIT, "%s:%d: out of memory", (c)->fname, (c)->line)
#define AT(c, st) asm_at(c, st)
static ct_status asm_err(asm_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static ct_status asm_err(asm_ctx *c, const char *fmt, ...) {
  char msg[CT_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ct_diag_set(c->d, CT_ERR_INPUT, "%s:%d: %s", c->fname, c->line, msg);
}

/* A callee's error (its code kept: out of memory stays CT_ERR_LIMIT) with file:line in front. */
static ct_status asm_at(asm_ctx *c, ct_status st) {
  return st ? ct_diag_prefix(c->d, "%s:%d: ", c->fname, c->line) : CT_OK;
}

/* Splits a line in place into tokens: whitespace separates; "..." is one token (escapes \",
 * \\, \n, \r, \t undone; quoted[i] set); [...] is one token; # outside quotes starts a comment.
 * Returns the count, or -1 for an unterminated quote/bracket or too many tokens. */
static int tokenize(char *s, char **tok, bool *quoted, int max) {
  int n = 0;
  while (*s) {
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (!*s || *s == '#') break;
    if (n == max) return -1;
    quoted[n] = *s == '"';
    if (*s == '"') {
      char *w = ++s;
      tok[n++] = w;
      while (*s && *s != '"') {
        if (*s == '\\' && s[1] && strchr("\"\\nrt", s[1])) {
          s++;
          *w++ = *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s == 't' ? '\t' : *s;
          s++;
          continue;
        }
        *w++ = *s++;
      }
      if (*s != '"') return -1;
      s++;
      *w = '\0';
      continue;
    }
    tok[n++] = s;
    if (*s == '[') {
      while (*s && *s != ']') s++;
      if (*s != ']') return -1;
      s++;
    } else {
      while (*s && *s != ' ' && *s != '\t' && *s != '\r') s++;
    }
    if (*s) *s++ = '\0';
  }
  return n;
}

/* Integer: decimal or 0x hex, optional sign; whole string. */
static bool parse_int(const char *s, int64_t *v) {
  if (!*s) return false;
  char *end;
  errno = 0;
  bool neg = *s == '-';
  const char *t = (*s == '-' || *s == '+') ? s + 1 : s;
  if (*t == '-' || *t == '+' || !*t) return false;
  unsigned long long u = strtoull(t, &end, 0);
  if (errno || *end) return false;
  if (neg ? u > (unsigned long long)INT64_MAX + 1 : u > (unsigned long long)INT64_MAX) return false;
  *v = neg ? (int64_t)(0 - u) : (int64_t)u;
  return true;
}

static bool parse_u64(const char *s, uint64_t *v) {
  char *end;
  errno = 0;
  if (!*s || *s == '-' || *s == '+') return false;
  *v = strtoull(s, &end, 0);
  return !errno && !*end;
}

static bool parse_f64(const char *s, double *v) {
  char *end;
  if (!*s) return false;
  *v = strtod(s, &end);
  return *end == '\0';
}

/* `@name` or `@name+off`: GMEM address of a constant or IO tensor. */
static bool parse_symbol(asm_ctx *c, const char *s, int64_t *v) {
  char name[256];
  const char *plus = strchr(s + 1, '+');
  size_t n = plus ? (size_t)(plus - s - 1) : strlen(s + 1);
  int64_t off = 0;
  if (n >= sizeof name || (plus && !parse_int(plus + 1, &off))) return false;
  memcpy(name, s + 1, n);
  name[n] = '\0';
  const ct_prog_const *k = ct_program_find_const(c->p, name);
  const ct_prog_io *io = ct_program_find_io(c->p, name);
  if (!k && !io) return false;
  *v = (int64_t)(k ? k->gmem_addr : io->gmem_addr) + off;
  return true;
}

/* Parses "1x3x224x224" (or "scalar") into shape; returns ndim or -1. */
static int parse_shape(const char *s, int64_t *shape) {
  if (strcmp(s, "scalar") == 0) return 0;
  int n = 0;
  while (*s) {
    if (n == CT_PROGRAM_MAX_DIMS) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno || v < 0 || (*end && *end != 'x')) return -1;
    shape[n++] = v;
    s = *end ? end + 1 : end;
    if (*end == 'x' && !*s) return -1;
  }
  return n;
}

/* Per-channel parameters `@AXIS:s_0,s_1,...` (scale field) and `z_0,z_1,...` (zero-point
 * field) into io: as many entries as io's dimension AXIS. False on any malformed part. */
static bool parse_channels(char *sc, char *zp, ct_prog_io *io) {
  char *colon = strchr(sc, ':');
  int64_t axis;
  if (!colon) return false;
  *colon = '\0';
  if (!parse_int(sc + 1, &axis) || axis < 0 || axis >= io->ndim) return false;
  int64_t n = 1, nz = 1;
  for (const char *q = colon + 1; *q; q++) n += *q == ',';
  for (const char *q = zp; *q; q++) nz += *q == ',';
  if (n < 2 || n != nz || n != io->shape[axis]) return false;
  io->n_scale = (int)n, io->quant_axis = (int)axis;
  io->scales = malloc(sizeof *io->scales * (size_t)n), io->zero_points = malloc(sizeof *io->zero_points * (size_t)n);
  if (!io->scales || !io->zero_points) return false;
  char *a = colon + 1, *b = zp;
  for (int64_t k = 0; k < n; k++) {
    char *ea = strchr(a, ','), *eb = strchr(b, ',');
    if (ea) *ea = '\0';
    if (eb) *eb = '\0';
    int64_t z;
    if (!parse_f64(a, &io->scales[k]) || !parse_int(b, &z) || z < INT32_MIN || z > INT32_MAX) return false;
    io->zero_points[k] = (int32_t)z;
    a = ea ? ea + 1 : a, b = eb ? eb + 1 : b;
  }
  return true;
}

/* Is io's name taken by another IO entry (an input passed through as an output aside)? */
static bool taken_io(const ct_program *p, const ct_prog_io *io) {
  int same = 0;
  for (size_t i = 0; i < p->n_io; i++)
    if (strcmp(p->io[i].name, io->name) == 0 && (same++ || !ct_program_io_passthrough(&p->io[i], io))) return true;
  return false;
}

static ct_status directive_io(asm_ctx *c, char **t, int n, bool out, bool tensor) {
  if (n != 7) return ERR(c, "%s: expected name shape dtype gmem_addr scale zero_point", t[0]);
  ct_prog_io io;
  memset(&io, 0, sizeof io);
  io.name = t[1];
  io.is_output = out, io.is_tensor = tensor;
  int64_t addr, zp;
  if ((io.ndim = parse_shape(t[2], io.shape)) < 0) return ERR(c, "%s: bad shape \"%s\"", t[0], t[2]);
  if (!ct_dtype_parse(t[3], &io.dtype)) return ERR(c, "%s: unknown dtype \"%s\"", t[0], t[3]);
  if (!parse_int(t[4], &addr) || addr < 0) return ERR(c, "%s: bad gmem address \"%s\"", t[0], t[4]);
  io.gmem_addr = (uint64_t)addr;
  if (t[5][0] == '@') { /* per channel */
    bool ok = parse_channels(t[5], t[6], &io);
    ct_status st = ok ? CT_OK : ERR(c, "%s: bad per-channel parameters (@AXIS:s,s,... and z,z,..., one per channel)", t[0]);
    if (!st && (taken_io(c->p, &io) || ct_program_find_const(c->p, io.name)))
      st = ERR(c, "%s: name \"%s\" is already defined", t[0], io.name);
    if (!st) st = AT(c, ct_program_add_io(c->p, &io, c->d));
    free(io.scales), free(io.zero_points);
    return st;
  }
  if (!parse_f64(t[5], &io.scale)) return ERR(c, "%s: bad scale \"%s\"", t[0], t[5]);
  if (!parse_int(t[6], &zp) || zp < INT32_MIN || zp > INT32_MAX) return ERR(c, "%s: bad zero point \"%s\"", t[0], t[6]);
  io.zero_point = (int32_t)zp;
  if (taken_io(c->p, &io) || ct_program_find_const(c->p, io.name))
    return ERR(c, "%s: name \"%s\" is already defined", t[0], io.name);
  return AT(c, ct_program_add_io(c->p, &io, c->d));
}

/* Stores one numeric value v as element i of dtype dt into buf; false if out of range. */
static bool store_elem(uint8_t *buf, size_t i, ct_dtype dt, double fv, int64_t iv, bool is_int) {
  size_t es = ct_dtype_size(dt);
  uint8_t *p = buf + i * es;
  if (ct_dtype_is_float(dt)) {
    double x = is_int ? (double)iv : fv;
    float f = (float)x;
    uint16_t h = dt == CT_F16 ? ct_f32_to_f16(f) : ct_f32_to_bf16(f);
    if (dt == CT_F64) memcpy(p, &x, 8);
    else if (dt == CT_F32) memcpy(p, &f, 4);
    else { p[0] = (uint8_t)h; p[1] = (uint8_t)(h >> 8); }
    return true;
  }
  if (!is_int) return false;
  bool sgn = ct_dtype_is_signed(dt);
  if (es < 8) {
    int64_t lo = sgn ? -(INT64_C(1) << (8 * es - 1)) : 0;
    int64_t hi = sgn ? (INT64_C(1) << (8 * es - 1)) - 1 : (INT64_C(1) << (8 * es)) - 1;
    if (iv < lo || iv > hi) return false;
  } else if (!sgn && iv < 0) {
    return false;
  }
  for (size_t k = 0; k < es; k++) p[k] = (uint8_t)((uint64_t)iv >> (8 * k));
  return true;
}

/* "[v, v, ...]" → malloc'd little-endian data of dtype dt. */
static ct_status const_values(asm_ctx *c, const char *list, ct_dtype dt, uint8_t **data, uint64_t *bytes) {
  size_t cap = 64, n = 0, es = ct_dtype_size(dt);
  uint8_t *buf = malloc(cap * es);
  const char *s = list + 1;
  while (buf) {
    while (*s == ' ' || *s == '\t' || *s == ',') s++;
    if (*s == ']') break;
    char item[64];
    size_t k = 0;
    while (*s && *s != ',' && *s != ']' && *s != ' ' && *s != '\t' && k < sizeof item - 1) item[k++] = *s++;
    item[k] = '\0';
    if (k == sizeof item - 1) {
      free(buf);
      return ERR(c, ".const: value %zu is longer than %zu characters", n, sizeof item - 2);
    }
    int64_t iv = 0;
    double fv = 0;
    bool is_int = parse_int(item, &iv);
    if (!is_int && !(ct_dtype_is_float(dt) && parse_f64(item, &fv))) {
      free(buf);
      return ERR(c, ".const: value %zu \"%s\" is not a %s number", n, item, ct_dtype_name(dt));
    }
    if (n == cap) {
      uint8_t *nb = realloc(buf, (cap *= 2) * es);
      if (!nb) { free(buf); buf = NULL; break; }
      buf = nb;
    }
    if (!store_elem(buf, n, dt, fv, iv, is_int)) {
      free(buf);
      return ERR(c, ".const: value %zu (%s) is out of range for %s", n, item, ct_dtype_name(dt));
    }
    n++;
  }
  if (!buf) return OOM(c);
  *data = buf;
  *bytes = (uint64_t)n * es;
  return CT_OK;
}

/* "0x0a0b..." → raw bytes (little-endian element data as stored). */
static ct_status const_hex(asm_ctx *c, const char *s, uint8_t **data, uint64_t *bytes) {
  size_t n = strlen(s + 2);
  if (n % 2) return ERR(c, ".const: odd number of hex digits");
  uint8_t *buf = malloc(n / 2 + 1);
  if (!buf) return OOM(c);
  for (size_t i = 0; i < n / 2; i++) {
    unsigned v;
    char two[3] = {s[2 + 2 * i], s[3 + 2 * i], 0};
    char *end;
    v = (unsigned)strtoul(two, &end, 16);
    if (*end || !two[0] || two[0] == '-' || two[0] == '+' || two[1] == '-' || two[1] == '+') {
      free(buf);
      return ERR(c, ".const: bad hex digit at position %zu", 2 * i);
    }
    buf[i] = (uint8_t)v;
  }
  *data = buf;
  *bytes = n / 2;
  return CT_OK;
}

/* "file.h5:dataset" (relative to the .s file's directory) → data converted to dt. */
static ct_status const_h5(asm_ctx *c, const char *spec, ct_dtype *dt, bool own_dt, uint8_t **data, uint64_t *bytes) {
  const char *colon = strrchr(spec, ':');
  if (!colon || colon == spec || !colon[1]) return ERR(c, ".const: expected [values], 0xHEX or file.h5:dataset");
  char path[4096];
  int np = spec[0] == '/' || !c->base_dir ? snprintf(path, sizeof path, "%.*s", (int)(colon - spec), spec)
                                          : snprintf(path, sizeof path, "%s/%.*s", c->base_dir, (int)(colon - spec), spec);
  if (np < 0 || (size_t)np >= sizeof path) return ERR(c, ".const: path too long");
  ct_tensor *t = NULL;
  ct_diag hd;
  ct_diag_clear(&hd);
  if (ct_h5_read_one(path, colon + 1, &t, &hd)) return ERR(c, ".const: %s", hd.msg);
  if (own_dt) *dt = t->dtype;
  ct_tensor *cv = t->dtype == *dt ? t : ct_tensor_cast(t, *dt);
  if (!cv) {
    ct_tensor_free(t);
    return OOM(c);
  }
  *bytes = cv->nbytes;
  *data = malloc(cv->nbytes + 1);
  if (*data) memcpy(*data, cv->data, cv->nbytes);
  if (cv != t) ct_tensor_free(cv);
  ct_tensor_free(t);
  return *data ? CT_OK : OOM(c);
}

/* .const name dtype ([values] | 0xHEX | file.h5:dataset) [at=ADDR], or
 * .const name file.h5:dataset [at=ADDR] (the dataset's own dtype). */
static ct_status directive_const(asm_ctx *c, char **t, int n) {
  ct_dtype dt = CT_F32;
  int64_t at = -1;
  bool own_dt = n >= 3 && !ct_dtype_parse(t[2], &dt) && strchr(t[2], ':') && t[2][0] != '[';
  const char *spec = own_dt ? t[2] : n >= 4 ? t[3] : "", *at_tok = n == (own_dt ? 4 : 5) ? t[n - 1] : NULL;
  if (n < (own_dt ? 3 : 4) || n > (own_dt ? 4 : 5)) return ERR(c, ".const: expected name dtype data [at=ADDR]");
  if (!own_dt && !ct_dtype_parse(t[2], &dt)) return ERR(c, ".const: unknown dtype \"%s\"", t[2]);
  if (at_tok && (strncmp(at_tok, "at=", 3) != 0 || !parse_int(at_tok + 3, &at) || at < 0))
    return ERR(c, ".const: expected at=ADDR, got \"%s\"", at_tok);
  if (ct_program_find_io(c->p, t[1]) || ct_program_find_const(c->p, t[1]))
    return ERR(c, ".const: name \"%s\" is already defined", t[1]);
  uint8_t *data = NULL;
  uint64_t bytes = 0;
  ct_status st = spec[0] == '[' ? const_values(c, spec, dt, &data, &bytes)
                 : strncmp(spec, "0x", 2) == 0 ? const_hex(c, spec, &data, &bytes)
                                               : const_h5(c, spec, &dt, own_dt, &data, &bytes);
  if (st) return st;
  uint64_t addr = at >= 0 ? (uint64_t)at : (c->const_next + 63) / 64 * 64;
  c->const_next = addr + bytes;
  st = ct_program_add_const(c->p, t[1], dt, addr, data, bytes, c->d);
  free(data);
  return AT(c, st);
}

/* .debug "layer" group tile [step] */
static ct_status directive_debug(asm_ctx *c, char **t, int n) {
  int64_t v[3] = {0, 0, 0};
  if (n < 4 || n > 5) return ERR(c, ".debug: expected \"layer\" group tile [step]");
  for (int i = 2; i < n; i++)
    if (!parse_int(t[i], &v[i - 2]) || v[i - 2] < INT32_MIN || v[i - 2] > INT32_MAX)
      return ERR(c, ".debug: bad number \"%s\"", t[i]);
  return AT(c, ct_program_add_debug(c->p, t[1], (int32_t)v[0], (int32_t)v[1], (int32_t)v[2], &c->cur_debug, c->d));
}

/* Pass-1 directives (symbols, placement, signature); pass-2 ones are skipped here. */
static ct_status directive_pass1(asm_ctx *c, char **t, int n) {
  int64_t v;
  if (!strcmp(t[0], ".const")) return directive_const(c, t, n);
  if (!strcmp(t[0], ".input") || !strcmp(t[0], ".output") || !strcmp(t[0], ".tensor"))
    return directive_io(c, t, n, t[0][1] == 'o', t[0][1] == 't');
  if (!strcmp(t[0], ".chipsig")) {
    if (n != 2 || !parse_u64(t[1], &c->p->chip_sig)) return ERR(c, ".chipsig: expected one unsigned number");
    c->have_sig = true;
    return CT_OK;
  }
  if (!strcmp(t[0], ".constbase")) {
    if (n != 2 || !parse_int(t[1], &v) || v < 0) return ERR(c, ".constbase: expected one address");
    c->const_next = (uint64_t)v;
    return CT_OK;
  }
  if (!strcmp(t[0], ".debug")) return CT_OK;
  return ERR(c, "unknown directive \"%s\"", t[0]);
}

/* Parses one field value (number, @symbol, dtype or value name, float) into insn. */
static ct_status set_field(asm_ctx *c, ct_insn *insn, const ct_isa_field *f, const char *val) {
  const char *op = ct_isa_op_name(insn->op);
  int64_t v = 0;
  if (f->kind == CT_ISA_K_F32) {
    double x = 0;
    if (!strncmp(val, "0x", 2) ? !parse_int(val, &v) || v < 0 || v > UINT32_MAX : !parse_f64(val, &x))
      return ERR(c, "%s: field \"%s\": \"%s\" is not a float (or 0x IEEE bits)", op, f->name, val);
    if (strncmp(val, "0x", 2)) {
      float fx = (float)x;
      uint32_t u;
      memcpy(&u, &fx, 4);
      v = u;
    }
    ct_isa_field_set_bits(insn, f, (uint64_t)v);
    return CT_OK;
  }
  const char *const *names;
  int nv = ct_isa_kind_values(f->kind, &names);
  bool ok = false;
  if (f->kind == CT_ISA_K_DT) {
    ct_dtype dt;
    if ((ok = ct_dtype_parse(val, &dt))) v = dt;
  }
  for (int i = 0; i < nv && !ok; i++)
    if (!strcmp(val, names[i])) ok = true, v = i;
  if (!ok && val[0] == '@') {
    if (!parse_symbol(c, val, &v)) return ERR(c, "%s: field \"%s\": undefined symbol \"%s\"", op, f->name, val);
    ok = true;
  }
  if (!ok && !parse_int(val, &v)) return ERR(c, "%s: field \"%s\": bad value \"%s\"", op, f->name, val);
  int64_t lo = f->kind == CT_ISA_K_S ? -(INT64_C(1) << (f->width - 1)) : 0;
  int64_t hi = f->kind == CT_ISA_K_S ? (INT64_C(1) << (f->width - 1)) - 1
               : f->kind == CT_ISA_K_DT ? CT_DTYPE_COUNT - 1
               : nv > 0 ? nv - 1 : (f->width >= 63 ? INT64_MAX : (INT64_C(1) << f->width) - 1);
  if (v < lo || v > hi)
    return ERR(c, "%s: field \"%s\": %lld is out of range %lld..%lld (%d bits)", op, f->name, (long long)v,
               (long long)lo, (long long)hi, f->width);
  memcpy((char *)insn + f->offset, &v, sizeof v);
  return CT_OK;
}

/* "0,3,7" → bit mask; "" or "-" → 0. */
static ct_status parse_sems(asm_ctx *c, const char *key, const char *val, uint32_t *mask) {
  *mask = 0;
  const char *s = val;
  if (!strcmp(s, "-")) return CT_OK;
  while (*s) {
    char *end;
    errno = 0;
    long k = strtol(s, &end, 10);
    if (end == s || errno || k < 0 || k >= CT_ISA_MAX_SEMS || (*end && *end != ','))
      return ERR(c, "%s: \"%s\" is not a list of semaphores 0..%d", key, val, CT_ISA_MAX_SEMS - 1);
    *mask |= UINT32_C(1) << k;
    s = *end ? end + 1 : end;
  }
  return CT_OK;
}

/* Header keys of every instruction: wait=, signal=, dbg=; returns 1 if key was one. */
static int header_key(asm_ctx *c, ct_insn *insn, const char *key, const char *val, ct_status *st) {
  int64_t v;
  if (!strcmp(key, "wait")) *st = parse_sems(c, key, val, &insn->wait);
  else if (!strcmp(key, "signal")) *st = parse_sems(c, key, val, &insn->signal);
  else if (!strcmp(key, "dbg")) {
    if (!parse_int(val, &v) || v < 0 || v > UINT32_MAX) *st = ERR(c, "dbg: bad debug id \"%s\"", val);
    else insn->debug_id = (uint32_t)v;
  } else
    return 0;
  return 1;
}

/* Parses opcode and fields of one tokenized instruction (ranges only, no semantics). */
static ct_status parse_insn(asm_ctx *c, char **t, int n, ct_insn *insn) {
  memset(insn, 0, sizeof *insn);
  if (!ct_isa_op_parse(t[0], &insn->op)) return ERR(c, "unknown opcode \"%s\"", t[0]);
  const char *op = ct_isa_op_name(insn->op);
  insn->debug_id = c->cur_debug;
  uint64_t seen[8] = {0}; /* bit set over field index (and 3 header keys) */
  const ct_isa_field *all;
  ct_isa_fields(insn->op, &all);
  for (int i = 1; i < n; i++) {
    char *eq = strchr(t[i], '=');
    if (!eq) return ERR(c, "%s: expected field=value, got \"%s\"", op, t[i]);
    *eq = '\0';
    const ct_isa_field *f = ct_isa_field_find(insn->op, t[i]);
    ct_status st = CT_OK;
    int idx = f ? (int)(f - all) : -1;
    if (!f && header_key(c, insn, t[i], eq + 1, &st)) idx = 500 + (t[i][0] == 'w' ? 0 : t[i][0] == 's' ? 1 : 2);
    else if (!f) return ERR(c, "%s: unknown field \"%s\"", op, t[i]);
    else st = set_field(c, insn, f, eq + 1);
    if (st) return st;
    if (seen[idx / 64 % 8] >> (idx % 64) & 1) return ERR(c, "%s: field \"%s\" given twice", op, t[i]);
    seen[idx / 64 % 8] |= UINT64_C(1) << (idx % 64);
  }
  return CT_OK;
}

static ct_status instruction(asm_ctx *c, char **t, int n, const ct_chip *chip) {
  ct_insn insn;
  ct_status st = parse_insn(c, t, n, &insn);
  if (st) return st;
  ct_diag cd;
  ct_diag_clear(&cd);
  if (ct_isa_check(&insn, chip, &cd)) return ERR(c, "%s", cd.msg);
  if (insn.debug_id > c->p->n_debug)
    return ERR(c, "%s: debug id %u is not defined", ct_isa_op_name(insn.op), insn.debug_id);
  return AT(c, ct_program_add_insn(c->p, &insn, c->d));
}

ct_status ct_asm_insn(const char *line, const ct_program *symbols, ct_insn *insn, ct_diag *d) {
  ct_program none;
  ct_program_init(&none, 0);
  asm_ctx c = {.fname = "insn", .line = 1, .p = (ct_program *)(symbols ? symbols : &none), .d = d};
  size_t len = strlen(line);
  char *buf = malloc(len + 1);
  if (!buf) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  memcpy(buf, line, len + 1);
  char *tok[MAX_TOK];
  bool quoted[MAX_TOK];
  int n = tokenize(buf, tok, quoted, MAX_TOK);
  ct_status st = n <= 0 ? ct_diag_set(d, CT_ERR_INPUT, "insn: expected one instruction") : parse_insn(&c, tok, n, insn);
  free(buf);
  return st;
}

/* Runs one pass over all lines. */
static ct_status run_pass(asm_ctx *c, const char *text, int pass, const ct_chip *chip) {
  const char *s = text;
  c->line = 0;
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    char *line = malloc(len + 1);
    if (!line) return ct_diag_set(c->d, CT_ERR_LIMIT, "out of memory");
    memcpy(line, s, len);
    line[len] = '\0';
    c->line++;
    char *tok[MAX_TOK];
    bool quoted[MAX_TOK];
    int n = tokenize(line, tok, quoted, MAX_TOK);
    ct_status st = CT_OK;
    if (n < 0) st = ERR(c, "unterminated quote or bracket, or more than %d tokens", MAX_TOK);
    else if (n > 0 && tok[0][0] == '.' && !quoted[0])
      st = pass == 1 ? directive_pass1(c, tok, n) : !strcmp(tok[0], ".debug") ? directive_debug(c, tok, n) : CT_OK;
    else if (n > 0 && pass == 2)
      st = instruction(c, tok, n, chip);
    free(line);
    if (st) return st;
    s += len + (nl ? 1 : 0);
  }
  return CT_OK;
}

ct_status ct_asm_parse(const char *text, const char *fname, const char *base_dir, const ct_chip *chip,
                       ct_program *p, ct_diag *d) {
  ct_chip def;
  ct_chip_default(&def);
  asm_ctx c = {.fname = fname ? fname : "asm", .base_dir = base_dir, .p = p, .d = d};
  ct_program_init(p, ct_chip_signature(chip ? chip : &def));
  ct_status st = run_pass(&c, text, 1, NULL);
  const ct_chip *vchip = chip ? chip : c.have_sig ? NULL : &def;
  if (!st && chip && p->chip_sig != ct_chip_signature(chip))
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: .chipsig 0x%016llx differs from the chip's signature 0x%016llx", c.fname,
                     (unsigned long long)p->chip_sig, (unsigned long long)ct_chip_signature(chip));
  if (!st) st = run_pass(&c, text, 2, vchip);
  if (!st) st = ct_program_validate(p, vchip, c.fname, d);
  if (st) ct_program_free(p);
  return st;
}

/* Reads the text file path into a malloc'd C string *text; CT_ERR_INPUT when it holds a NUL
 * byte, else the errors of ct_file_read. */
static ct_status read_text(const char *path, char **text, ct_diag *d) {
  char *raw;
  size_t n;
  ct_status st = ct_file_read(path, 0, &raw, &n, d);
  if (st) return st;
  if (strlen(raw) != n) {
    free(raw);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: contains a NUL byte (not a text file)", path);
  }
  *text = raw;
  return CT_OK;
}

ct_status ct_asm_file(const char *path, const ct_chip *chip, ct_program *p, ct_diag *d) {
  ct_program_init(p, 0);
  char *buf = NULL;
  ct_status st = read_text(path, &buf, d);
  if (st) return st;
  char dir[4096];
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
  if (slash == path) snprintf(dir, sizeof dir, "/");
  st = ct_asm_parse(buf, path, dir, chip, p, d);
  free(buf);
  return st;
}
