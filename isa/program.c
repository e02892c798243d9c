/* program.c: ct_program in memory: builder, validation, lookups. The file format
 * (serialize/parse) is in program_file.c; its byte layout is documented in docs/isa.md. */
#include "isa/program.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"

void ct_program_init(ct_program *p, uint64_t sig) {
  memset(p, 0, sizeof *p);
  p->version = CT_PROGRAM_VERSION;
  p->chip_sig = sig;
}

void ct_program_free(ct_program *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n_consts; i++) {
    free(p->consts[i].name);
    free(p->consts[i].data);
  }
  for (size_t i = 0; i < p->n_io; i++) free(p->io[i].name), free(p->io[i].scales), free(p->io[i].zero_points);
  for (size_t i = 0; i < p->n_debug; i++) free(p->debug[i].layer);
  free(p->insns);
  free(p->consts);
  free(p->io);
  free(p->debug);
  uint64_t sig = p->chip_sig;
  ct_program_init(p, sig);
}

/* Makes room for one more element of size `sz` in *arr (count n, capacity *cap). */
static bool grow(void **arr, size_t n, size_t *cap, size_t sz) {
  if (n < *cap) return true;
  size_t nc = *cap ? *cap * 2 : 16;
  if (nc > SIZE_MAX / sz) return false;
  void *a = realloc(*arr, nc * sz);
  if (!a) return false;
  *arr = a;
  *cap = nc;
  return true;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s ? s : "", n);
  return c;
}

#define OOM(d) ct_diag_set(d, CT_ERR_LIMIT, "out of memory")

ct_status ct_program_add_insn(ct_program *p, const ct_insn *insn, ct_diag *d) {
  if (!grow((void **)&p->insns, p->n_insns, &p->cap_insns, sizeof *p->insns)) return OOM(d);
  p->insns[p->n_insns++] = *insn;
  return CT_OK;
}

ct_status ct_program_add_const(ct_program *p, const char *name, ct_dtype dt, uint64_t gmem_addr,
                               const void *data, uint64_t bytes, ct_diag *d) {
  if (!grow((void **)&p->consts, p->n_consts, &p->cap_consts, sizeof *p->consts)) return OOM(d);
  if (bytes > SIZE_MAX - 1) return OOM(d);
  ct_prog_const c = {dup_str(name), dt, gmem_addr, bytes, malloc((size_t)bytes + 1)};
  if (!c.name || !c.data) {
    free(c.name);
    free(c.data);
    return OOM(d);
  }
  if (bytes) memcpy(c.data, data, (size_t)bytes);
  p->consts[p->n_consts++] = c;
  return CT_OK;
}

ct_status ct_program_add_io(ct_program *p, const ct_prog_io *io, ct_diag *d) {
  if (!grow((void **)&p->io, p->n_io, &p->cap_io, sizeof *p->io)) return OOM(d);
  ct_prog_io e = *io;
  size_t n = io->n_scale > 1 ? (size_t)io->n_scale : 0;
  e.name = dup_str(io->name);
  e.scales = n ? malloc(n * sizeof *e.scales) : NULL, e.zero_points = n ? malloc(n * sizeof *e.zero_points) : NULL;
  if (!e.name || (n && (!e.scales || !e.zero_points || !io->scales || !io->zero_points))) {
    free(e.name), free(e.scales), free(e.zero_points);
    return n && (!io->scales || !io->zero_points) ? ct_diag_set(d, CT_ERR_INPUT, "IO \"%s\": per-channel parameters missing", io->name) : OOM(d);
  }
  if (n) memcpy(e.scales, io->scales, n * sizeof *e.scales), memcpy(e.zero_points, io->zero_points, n * sizeof *e.zero_points);
  if (!n) e.n_scale = 0;
  p->io[p->n_io++] = e;
  return CT_OK;
}

ct_status ct_program_add_debug(ct_program *p, const char *layer, int32_t group, int32_t tile, int32_t step,
                               uint32_t *id, ct_diag *d) {
  if (p->n_debug >= UINT32_MAX - 1) return ct_diag_set(d, CT_ERR_LIMIT, "more than 2^32-2 debug entries");
  if (!grow((void **)&p->debug, p->n_debug, &p->cap_debug, sizeof *p->debug)) return OOM(d);
  ct_prog_debug e = {dup_str(layer), group, tile, step};
  if (!e.layer) return OOM(d);
  p->debug[p->n_debug++] = e;
  if (id) *id = (uint32_t)p->n_debug;
  return CT_OK;
}

/* Bytes of a dense IO tensor, or UINT64_MAX on overflow / invalid dtype. */
static uint64_t io_bytes(const ct_prog_io *io) {
  int64_t b;
  if (io->ndim < 0 || io->ndim > CT_MAX_DIMS || !ct_shape_bytes(io->dtype, io->ndim, io->shape, &b)) return UINT64_MAX;
  return (uint64_t)b;
}

static ct_status check_gmem(const ct_chip *chip, uint64_t addr, uint64_t bytes, const char *what, const char *name,
                            ct_diag *d) {
  uint64_t size = (uint64_t)chip->gmem_bytes;
  if (addr > size || bytes > size - addr)
    return ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\": GMEM 0x%llx + %llu bytes exceeds gmem.bytes %llu", what, name,
                       (unsigned long long)addr, (unsigned long long)bytes, (unsigned long long)size);
  return CT_OK;
}

static ct_status validate_consts(const ct_program *p, const ct_chip *chip, size_t *index, ct_diag *d) {
  for (size_t i = 0; i < p->n_consts; i++) {
    *index = i;
    const ct_prog_const *c = &p->consts[i];
    size_t es = ct_dtype_size(c->dtype);
    if (es == 0 || c->bytes % es)
      return ct_diag_set(d, CT_ERR_INPUT, "const \"%s\": %llu bytes are not whole %s elements", c->name,
                         (unsigned long long)c->bytes, ct_dtype_name(c->dtype));
    for (size_t j = 0; j < i; j++)
      if (strcmp(p->consts[j].name, c->name) == 0)
        return ct_diag_set(d, CT_ERR_INPUT, "const \"%s\" is defined twice", c->name);
    if (chip && check_gmem(chip, c->gmem_addr, c->bytes, "const", c->name, d)) return CT_ERR_INPUT;
  }
  return CT_OK;
}

static ct_status validate_io(const ct_program *p, const ct_chip *chip, size_t *index, ct_diag *d) {
  for (size_t i = 0; i < p->n_io; i++) {
    *index = i;
    const ct_prog_io *io = &p->io[i];
    const char *what = io->is_tensor ? "tensor" : io->is_output ? "output" : "input";
    if (io->ndim < 0 || io->ndim > CT_PROGRAM_MAX_DIMS)
      return ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\": %d dimensions (max %d)", what, io->name, io->ndim,
                         CT_PROGRAM_MAX_DIMS);
    uint64_t nb = io_bytes(io);
    if (nb == UINT64_MAX)
      return ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\": invalid shape or dtype", what, io->name);
    if (!isfinite(io->scale) || io->scale < 0)
      return ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\": scale %g is not finite and >= 0", what, io->name, io->scale);
    if (io->n_scale > 1 && (io->quant_axis < 0 || io->quant_axis >= io->ndim || io->shape[io->quant_axis] != io->n_scale))
      return ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\": %d per-channel scales do not match axis %d of its shape", what,
                         io->name, io->n_scale, io->quant_axis);
    for (int k = 0; k < (io->n_scale > 1 ? io->n_scale : 0); k++)
      if (!isfinite(io->scales[k]) || io->scales[k] <= 0)
        return ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\": channel %d: scale %g is not finite and > 0", what, io->name, k,
                           io->scales[k]);
    int same = 0;
    for (size_t j = 0; j < i; j++)
      if (strcmp(p->io[j].name, io->name) == 0 && (same++ || !ct_program_io_passthrough(&p->io[j], io)))
        return ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\" is defined twice", what, io->name);
    if (chip && check_gmem(chip, io->gmem_addr, nb, what, io->name, d)) return CT_ERR_INPUT;
  }
  return CT_OK;
}

/* A GMEM interval of a constant (is_io false) or an IO tensor, for the overlap sweep. */
typedef struct span {
  uint64_t lo, hi;
  bool is_io;
  size_t idx;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : (x->is_io > y->is_io) - (x->is_io < y->is_io);
}

static const char *span_name(const ct_program *p, const span *s) {
  return s->is_io ? p->io[s->idx].name : p->consts[s->idx].name;
}

/* Constants must not overlap each other or an IO tensor (IO tensors may alias each other,
 * e.g. an in-place output). Sorted sweep: O(n log n). */
static ct_status check_overlaps(const ct_program *p, ct_prog_part *part, size_t *index, ct_diag *d) {
  size_t n = 0, total = p->n_consts + p->n_io;
  span *v = malloc((total ? total : 1) * sizeof *v);
  if (!v) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (size_t i = 0; i < p->n_consts; i++)
    if (p->consts[i].bytes) v[n++] = (span){p->consts[i].gmem_addr, p->consts[i].gmem_addr + p->consts[i].bytes, false, i};
  for (size_t i = 0; i < p->n_io; i++) {
    uint64_t b = io_bytes(&p->io[i]);
    if (b && b != UINT64_MAX) v[n++] = (span){p->io[i].gmem_addr, p->io[i].gmem_addr + b, true, i};
  }
  qsort(v, n, sizeof *v, span_cmp);
  const span *far_any = NULL, *far_const = NULL; /* furthest-reaching earlier spans */
  ct_status st = CT_OK;
  for (size_t i = 0; i < n && !st; i++) {
    const span *o = !v[i].is_io ? far_any : far_const;
    if (o && o->hi > v[i].lo) {
      *part = v[i].is_io ? CT_PART_IO : CT_PART_CONST;
      *index = v[i].idx;
      st = ct_diag_set(d, CT_ERR_INPUT, "%s \"%s\" overlaps %s \"%s\" in GMEM", v[i].is_io ? "IO" : "const",
                       span_name(p, &v[i]), o->is_io ? "IO" : "const", span_name(p, o));
    }
    if (!far_any || v[i].hi > far_any->hi) far_any = &v[i];
    if (!v[i].is_io && (!far_const || v[i].hi > far_const->hi)) far_const = &v[i];
  }
  free(v);
  return st;
}

ct_status ct_program_check(const ct_program *p, const ct_chip *chip, ct_prog_part *part, size_t *index, ct_diag *d) {
  *part = CT_PART_INSN;
  for (size_t i = 0; i < p->n_insns; i++) {
    const ct_insn *in = &p->insns[i];
    *index = i;
    if (ct_isa_check(in, chip, d)) return ct_diag_prefix(d, "insn %zu: ", i);
    if (in->debug_id > p->n_debug)
      return ct_diag_set(d, CT_ERR_INPUT, "insn %zu: %s: debug id %u > %zu debug entries", i, ct_isa_op_name(in->op),
                         in->debug_id, p->n_debug);
  }
  *part = CT_PART_CONST;
  ct_status st = validate_consts(p, chip, index, d);
  if (st) return st;
  *part = CT_PART_IO;
  st = validate_io(p, chip, index, d);
  return st ? st : check_overlaps(p, part, index, d);
}

ct_status ct_program_validate(const ct_program *p, const ct_chip *chip, const char *fname, ct_diag *d) {
  ct_prog_part part;
  size_t index;
  ct_status st = ct_program_check(p, chip, &part, &index, d);
  return st ? ct_diag_prefix(d, "%s: ", fname ? fname : "program") : CT_OK;
}

bool ct_program_io_passthrough(const ct_prog_io *a, const ct_prog_io *b) {
  if (a->is_tensor || b->is_tensor || a->is_output == b->is_output) return false;
  if (a->gmem_addr != b->gmem_addr || a->dtype != b->dtype || a->ndim != b->ndim) return false;
  for (int k = 0; k < a->ndim && k < CT_PROGRAM_MAX_DIMS; k++)
    if (a->shape[k] != b->shape[k]) return false;
  return true;
}

const ct_prog_io *ct_program_find_io(const ct_program *p, const char *name) {
  for (size_t i = 0; i < p->n_io; i++)
    if (strcmp(p->io[i].name, name) == 0) return &p->io[i];
  return NULL;
}

const ct_prog_const *ct_program_find_const(const ct_program *p, const char *name) {
  for (size_t i = 0; i < p->n_consts; i++)
    if (strcmp(p->consts[i].name, name) == 0) return &p->consts[i];
  return NULL;
}

const ct_prog_debug *ct_program_debug_of(const ct_program *p, const ct_insn *insn) {
  if (insn->debug_id == 0 || insn->debug_id > p->n_debug) return NULL;
  return &p->debug[insn->debug_id - 1];
}
