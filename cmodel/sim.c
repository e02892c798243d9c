/* sim.c: `ctpu sim` as a library call: GMEM image (constants, inputs), instruction decode,
 * the clock loop with the functional hook, outputs, --dump-all shadows and per-layer
 * counters (docs/cmodel.md). */
#include "cmodel/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmodel/decode.h"
#include "cmodel/elem.h"
#include "cmodel/exec.h"
#include "quant/quant.h"

_Static_assert(CT_LMEM_MAX_BANKS == CT_CHIP_LMEM_BANKS_MAX, "the cmodel holds every bank count chip.def accepts");

/* What the STOREs of one layer wrote (a byte hull of GMEM with a shadow copy). */
typedef struct shadow {
  uint64_t lo, hi;        /* byte hull of the STOREs executed so far */
  uint64_t cap_lo, cap_hi; /* byte hull of all the program's STOREs of it: buf's extent */
  uint8_t *buf;           /* cap_hi - cap_lo bytes, allocated at the first STORE */
  int stores;
  ct_mem_region first;
} shadow;

typedef struct run_ctx {
  const ct_chip *chip;
  const ct_program *p;
  ct_lmem lmem;
  ct_gmem gmem;
  ct_sim_machine m;
  ct_sim_op *ops;
  ct_sim_mem mem;
  int n_layers;
  char **layer_names;     /* borrowed from p->debug */
  int *layer_of_debug;    /* per debug entry */
  shadow *shadows;        /* per layer, when dump_all */
  int extra_shadows;      /* STOREs without debug info: one shadow each, after the layers */
  const ct_sim_run_options *opt;
  uint32_t started;       /* instructions started so far (progress) */
} run_ctx;

ct_status ct_sim_machine_of(const ct_chip *chip, ct_sim_machine *m, ct_diag *d) {
  memset(m, 0, sizeof *m);
  ct_status st = ct_chip_validate(chip, "chip", d); /* chip.def's ranges: what ctpu chip accepts */
  if (st) return st;
  m->freq_mhz = chip->freq_mhz;
  m->load_engines = (int)chip->dma_load_engines;
  m->store_engines = (int)chip->dma_store_engines;
  m->queue_depth = (uint32_t)chip->queue_depth;
  m->sem_count = (uint32_t)chip->sem_count;
  m->mxu_rows = (uint64_t)chip->mxu_rows;
  m->mxu_cols = (uint64_t)chip->mxu_cols;
  return ct_ddr_init(&m->ddr, (uint64_t)chip->gmem_bytes_per_cycle,
                     (uint64_t)chip->gmem_latency_cycles, (uint64_t)chip->gmem_burst_bytes,
                     (uint64_t)chip->lmem_bank_port_bytes, m->load_engines + m->store_engines, d);
}

void ct_sim_run_output_free(ct_sim_run_output *out) {
  ct_sim_result_free(&out->res);
  ct_tensor_list_free(&out->outputs);
  ct_tensor_list_free(&out->dumps);
  for (int i = 0; i < out->n_layers; i++) {
    free(out->layers[i].name);
    free(out->layers[i].busy);
  }
  free(out->layers);
  memset(out, 0, sizeof *out);
}

/* Layer table: one entry per distinct debug-map layer name, in order of first use. */
static ct_status build_layers(run_ctx *x, ct_diag *d) {
  size_t nd = x->p->n_debug;
  x->layer_names = calloc(nd + 1, sizeof *x->layer_names);
  x->layer_of_debug = calloc(nd + 1, sizeof *x->layer_of_debug);
  if (!x->layer_names || !x->layer_of_debug) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (size_t i = 0; i < nd; i++) {
    const char *name = x->p->debug[i].layer ? x->p->debug[i].layer : "";
    int k = 0;
    while (k < x->n_layers && strcmp(x->layer_names[k], name)) k++;
    if (k == x->n_layers) x->layer_names[x->n_layers++] = (char *)(uintptr_t)name;
    x->layer_of_debug[i] = k;
  }
  return CT_OK;
}

static int layer_of(const run_ctx *x, uint32_t debug_id) {
  return debug_id && debug_id <= x->p->n_debug ? x->layer_of_debug[debug_id - 1] : -1;
}

/* The quant params of IO entry io on tensor t (per tensor, per channel, or none). */
static bool io_quant(ct_tensor *t, const ct_prog_io *io) {
  if (io->n_scale > 1) return ct_tensor_set_quant(t, io->n_scale, io->quant_axis, io->scales, io->zero_points);
  return !(io->scale > 0) || ct_tensor_set_quant(t, 1, 0, &io->scale, &io->zero_point);
}

/* Elements per index of IO entry io's quant axis (per channel), ≥ 1. */
static int64_t io_inner(const ct_prog_io *io) {
  int64_t inner = 1;
  for (int k = io->quant_axis + 1; io->n_scale > 1 && k < io->ndim; k++) inner *= io->shape[k];
  return inner > 0 ? inner : 1;
}

/* Converts input tensor t to the IO entry's dtype into buf (numel elements). */
static ct_status convert_input(const ct_prog_io *io, const ct_tensor *t, uint8_t *buf, ct_diag *d) {
  int64_t n = ct_tensor_numel(t);
  bool fi = ct_dtype_is_float(t->dtype), fo = ct_dtype_is_float(io->dtype);
  if (t->dtype == io->dtype) {
    memcpy(buf, t->data, t->nbytes);
    return CT_OK;
  }
  if (fi && !fo && !(io->scale > 0) && io->n_scale <= 1)
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": float data for a %s input without a scale",
                       io->name, ct_dtype_name(io->dtype));
  int64_t inner = io_inner(io);
  for (int64_t i = 0; i < n; i++) {
    double v = ct_tensor_get_f64(t, i);
    int64_t c = io->n_scale > 1 ? i / inner % io->n_scale : 0;
    if (fi && !fo)
      ct_elem_seti(buf, io->dtype, i, io->n_scale > 1 ? ct_quant_quantize(v, io->scales[c], io->zero_points[c], io->dtype)
                                                       : ct_quant_quantize(v, io->scale, io->zero_point, io->dtype));
    else if (fo)
      ct_elem_setf(buf, io->dtype, i, (float)v);
    else
      ct_elem_seti(buf, io->dtype, i, ct_quant_saturate(ct_tensor_get_i64(t, i), io->dtype));
  }
  return CT_OK;
}

static ct_status place_input(run_ctx *x, const ct_prog_io *io, const ct_tensor_list *inputs,
                             ct_diag *d) {
  const ct_tensor *t = ct_tensor_list_find(inputs, io->name);
  if (!t) return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\" is missing", io->name);
  char a[96], b[96];
  bool same = t->ndim == io->ndim;
  for (int i = 0; same && i < t->ndim; i++) same = t->shape[i] == io->shape[i];
  if (!same)
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": shape %s, the program expects %s", io->name,
                       ct_shape_str(t->ndim, t->shape, a, sizeof a),
                       ct_shape_str(io->ndim, io->shape, b, sizeof b));
  size_t bytes = (size_t)ct_tensor_numel(t) * ct_dtype_size(io->dtype);
  uint8_t *buf = malloc(bytes ? bytes : 1);
  if (!buf) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for input \"%s\"", io->name);
  ct_status st = convert_input(io, t, buf, d);
  if (!st) st = ct_gmem_write(&x->gmem, io->gmem_addr, buf, bytes, d);
  free(buf);
  if (st && st != CT_ERR_LIMIT) ct_diag_prefix(d, "input \"%s\": ", io->name);
  return st;
}

/* GMEM image: constants, then inputs. */
static ct_status load_image(run_ctx *x, const ct_tensor_list *inputs, ct_diag *d) {
  for (size_t i = 0; i < x->p->n_consts; i++) {
    const ct_prog_const *c = &x->p->consts[i];
    ct_status st = ct_gmem_write(&x->gmem, c->gmem_addr, c->data, c->bytes, d);
    if (st) return ct_diag_prefix(d, "constant \"%s\": ", c->name);
  }
  for (size_t i = 0; i < x->p->n_io; i++) {
    if (x->p->io[i].is_output || x->p->io[i].is_tensor) continue;
    ct_status st = place_input(x, &x->p->io[i], inputs, d);
    if (st) return st;
  }
  return CT_OK;
}

static ct_status read_outputs(run_ctx *x, ct_tensor_list *outs, ct_diag *d) {
  for (size_t i = 0; i < x->p->n_io; i++) {
    const ct_prog_io *io = &x->p->io[i];
    if (!io->is_output || io->is_tensor) continue;
    ct_tensor *t = ct_tensor_new(io->dtype, io->ndim, io->shape, io->name);
    if (!t || !io_quant(t, io)) {
      ct_tensor_free(t);
      return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for output \"%s\"", io->name);
    }
    ct_status st = ct_gmem_read(&x->gmem, io->gmem_addr, t->data, t->nbytes, d);
    if (st || !ct_tensor_list_push(outs, t)) {
      ct_tensor_free(t);
      return st ? ct_diag_prefix(d, "output \"%s\": ", io->name)
                : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    }
  }
  return CT_OK;
}

typedef struct shadow_ctx {
  const ct_gmem *g;
  shadow *s;
} shadow_ctx;

static bool shadow_run(void *ctx, uint64_t addr, uint64_t n) {
  shadow_ctx *c = ctx;
  return ct_gmem_read(c->g, addr, c->s->buf + (addr - c->s->cap_lo), n, NULL) == CT_OK;
}

static shadow *shadow_of(run_ctx *x, uint32_t i) {
  int k = layer_of(x, x->ops[i].debug_id);
  return &x->shadows[k >= 0 ? k : x->n_layers + (int)i];
}

/* Sizes every shadow to the byte hull of all its STOREs (known when decoded), so a STORE
 * copies into place instead of regrowing the buffer (quadratic in the layer's tiles). */
static void shadow_caps(run_ctx *x) {
  for (uint32_t i = 0; i < x->p->n_insns; i++) {
    if (x->p->insns[i].op != CT_ISA_STORE) continue;
    shadow *s = shadow_of(x, i);
    uint64_t lo, hi;
    ct_mem_region_span(&x->ops[i].regions[1], &lo, &hi);
    bool first = s->cap_hi == s->cap_lo;
    if (first || lo < s->cap_lo) s->cap_lo = lo;
    if (first || hi > s->cap_hi) s->cap_hi = hi;
  }
}

/* Copies what STORE insn i just wrote into its layer's shadow (hull grown to include it). */
static ct_status shadow_store(run_ctx *x, uint32_t i, ct_diag *d) {
  shadow *s = shadow_of(x, i);
  const ct_mem_region *r = &x->ops[i].regions[1];
  uint64_t lo, hi;
  ct_mem_region_span(r, &lo, &hi);
  if (!s->buf && !(s->buf = calloc((size_t)(s->cap_hi - s->cap_lo) + 1, 1)))
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for --dump-all");
  if (!s->stores) s->first = *r;
  if (!s->stores || lo < s->lo) s->lo = lo;
  if (!s->stores || hi > s->hi) s->hi = hi;
  s->stores++;
  shadow_ctx c = {&x->gmem, s};
  ct_mem_region_each_run(r, shadow_run, &c);
  return CT_OK;
}

static ct_status hook_exec(void *ctx, uint32_t i, ct_diag *d) {
  run_ctx *x = ctx;
  ct_status st = ct_sim_exec(&x->mem, &x->p->insns[i], i, d);
  if (!st && x->shadows && x->p->insns[i].op == CT_ISA_STORE) st = shadow_store(x, i, d);
  if (x->opt->progress && (++x->started & 63) == 0)
    x->opt->progress(x->opt->progress_user, x->started, (uint32_t)x->p->n_insns);
  return st;
}

static void hook_debug(void *ctx, uint32_t id, const char **layer, int64_t *group, int64_t *tile,
                       int64_t *step) {
  run_ctx *x = ctx;
  if (!id || id > x->p->n_debug) return;
  const ct_prog_debug *e = &x->p->debug[id - 1];
  *layer = e->layer;
  *group = e->group;
  *tile = e->tile;
  *step = e->step;
}

static void hook_describe(void *ctx, uint32_t i, char *buf, size_t n) {
  run_ctx *x = ctx;
  const ct_insn *in = &x->p->insns[i];
  const char *layer = NULL;
  int64_t g = -1, t = -1, s = -1;
  hook_debug(ctx, in->debug_id, &layer, &g, &t, &s);
  if (layer)
    snprintf(buf, n, "insn %u (%s, layer \"%s\" group %lld tile %lld step %lld)", i,
             ct_isa_op_name(in->op), layer, (long long)g, (long long)t, (long long)s);
  else
    snprintf(buf, n, "insn %u (%s)", i, ct_isa_op_name(in->op));
}

/* The dump of a layer the program describes (an output or a .tensor record of the same
 * name): its dtype, shape and scale / zero point, the stored bytes at their place in it
 * (bytes no STORE wrote stay 0). NULL when there is no such record or the stores fall outside
 * it; *oom on allocation failure. */
static ct_tensor *described_dump(const run_ctx *x, shadow *s, const char *name, bool *oom) {
  const ct_prog_io *io = ct_program_find_io(x->p, name);
  if (!io || !(io->is_output || io->is_tensor) || s->lo < io->gmem_addr) return NULL;
  ct_tensor *t = ct_tensor_new(io->dtype, io->ndim, io->shape, name);
  if (t && !io_quant(t, io)) ct_tensor_free(t), t = NULL;
  if (!t) return *oom = true, NULL;
  if (s->hi - io->gmem_addr > t->nbytes) return ct_tensor_free(t), NULL;
  if (s->cap_lo == io->gmem_addr && s->cap_hi - s->cap_lo == t->nbytes) { /* the buffer is the tensor */
    free(t->data);
    t->data = s->buf; /* zeros outside [lo, hi): calloc'd, and every STORE wrote inside it */
    s->buf = NULL;
    return t;
  }
  uint8_t *data = t->data;
  size_t at = (size_t)(s->lo - io->gmem_addr), end = (size_t)(s->hi - io->gmem_addr);
  memset(data, 0, at); /* only the bytes no STORE wrote */
  memcpy(data + at, s->buf + (s->lo - s->cap_lo), end - at);
  memset(data + end, 0, t->nbytes - end);
  return t;
}

/* One dumped tensor per shadow: as the program describes the layer's tensor (name, dtype,
 * shape, scale / zero point of `ctpu infer --dump-all`) when it does, else the single STORE's
 * 4-D shape, else a flat array. */
static ct_status collect_dumps(run_ctx *x, ct_tensor_list *out, ct_diag *d) {
  for (int k = 0; k < x->n_layers + (int)x->p->n_insns; k++) {
    shadow *s = &x->shadows[k];
    if (!s->stores) continue;
    char name[64];
    if (k >= x->n_layers) snprintf(name, sizeof name, "store@insn%d", k - x->n_layers);
    bool oom = false;
    ct_tensor *t = k < x->n_layers ? described_dump(x, s, x->layer_names[k], &oom) : NULL;
    if (oom) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for --dump-all");
    if (t) {
      if (!ct_tensor_list_push(out, t)) return ct_tensor_free(t), ct_diag_set(d, CT_ERR_LIMIT, "out of memory for --dump-all");
      continue;
    }
    const ct_insn *st = NULL;
    ct_dtype dt = CT_U8;
    for (uint32_t i = 0; i < x->p->n_insns && !st; i++)
      if (x->p->insns[i].op == CT_ISA_STORE && (k >= x->n_layers ? (int)i == k - x->n_layers
                                                    : layer_of(x, x->p->insns[i].debug_id) == k))
        st = &x->p->insns[i];
    if (st) dt = (ct_dtype)st->store.dtype;
    uint64_t lo, hi, eb = ct_dtype_size(dt);
    bool whole = s->stores == 1 && ct_mem_region_span(&s->first, &lo, &hi) &&
                 (uint64_t)ct_mem_region_numel(&s->first) * eb == hi - lo;
    int64_t flat = (int64_t)((s->hi - s->lo) / eb);
    t = whole ? ct_tensor_new(dt, 4, s->first.shape, NULL) : ct_tensor_new(dt, 1, &flat, NULL);
    if (!t || !ct_tensor_set_name(t, k < x->n_layers ? x->layer_names[k] : name) ||
        !ct_tensor_list_push(out, t)) {
      ct_tensor_free(t);
      return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for --dump-all");
    }
    memcpy(t->data, s->buf + (s->lo - s->cap_lo), t->nbytes);
  }
  return CT_OK;
}

static ct_status layer_counters(run_ctx *x, ct_sim_run_output *out, ct_diag *d) {
  int ne = ct_sim_engine_count(&x->m);
  out->layers = calloc((size_t)(x->n_layers ? x->n_layers : 1), sizeof *out->layers);
  if (!out->layers) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  out->n_layers = x->n_layers;
  for (int k = 0; k < x->n_layers; k++) {
    ct_layer_counters *l = &out->layers[k];
    l->name = malloc(strlen(x->layer_names[k]) + 1);
    l->busy = calloc((size_t)ne, sizeof *l->busy);
    if (!l->name || !l->busy) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    strcpy(l->name, x->layer_names[k]);
    l->group = -1;
    l->start = UINT64_MAX;
  }
  const ct_sim_result *r = &out->res;
  for (uint32_t i = 0; i < x->p->n_insns; i++) {
    int k = layer_of(x, x->ops[i].debug_id);
    if (k < 0 || r->start[i] == UINT64_MAX || r->end[i] == UINT64_MAX) continue;
    ct_layer_counters *l = &out->layers[k];
    if (l->group < 0) l->group = x->p->debug[x->ops[i].debug_id - 1].group;
    if (r->start[i] < l->start) l->start = r->start[i];
    if (r->end[i] > l->end) l->end = r->end[i];
    if (r->engine[i] >= 0) l->busy[r->engine[i]] += r->busy[i];
    for (int s = 0; s < CT_STALL_COUNT; s++) l->stall[s] += r->stall[(size_t)i * CT_STALL_COUNT + (size_t)s];
    l->macs += x->ops[i].macs;
    l->mxu_ideal += x->ops[i].mxu_ideal;
    l->ddr_bytes_read += x->ops[i].ddr_read;
    l->ddr_bytes_written += x->ops[i].ddr_written;
    l->insns++;
  }
  for (int k = 0; k < x->n_layers; k++)
    if (out->layers[k].start == UINT64_MAX) out->layers[k].start = 0;
  return CT_OK;
}

static ct_status setup(run_ctx *x, const ct_sim_run_options *opt, const ct_tensor_list *inputs,
                       ct_diag *d) {
  ct_status st = ct_sim_machine_of(x->chip, &x->m, d);
  if (!st) st = ct_lmem_init(&x->lmem, (uint64_t)x->chip->lmem_bytes, (uint32_t)x->chip->lmem_banks,
                             (uint32_t)x->chip->lmem_bank_port_bytes, d);
  if (!st) st = ct_gmem_init(&x->gmem, (uint64_t)x->chip->gmem_bytes, d);
  if (!st) st = build_layers(x, d);
  if (st) return st;
  x->mem = (ct_sim_mem){&x->lmem, &x->gmem};
  x->ops = calloc(x->p->n_insns ? x->p->n_insns : 1, sizeof *x->ops);
  if (!x->ops) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for %zu instructions", x->p->n_insns);
  if (opt->dump_all &&
      !(x->shadows = calloc((size_t)x->n_layers + x->p->n_insns + 1, sizeof *x->shadows)))
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory for --dump-all");
  for (uint32_t i = 0; i < x->p->n_insns; i++)
    if ((st = ct_sim_decode(x->chip, &x->lmem, &x->m.ddr, &x->p->insns[i], i, &x->ops[i], d)))
      return st;
  if (x->shadows) shadow_caps(x);
  return inputs ? load_image(x, inputs, d) : CT_OK;
}

static void teardown(run_ctx *x) {
  for (int k = 0; x->shadows && k < x->n_layers + (int)x->p->n_insns; k++) free(x->shadows[k].buf);
  free(x->shadows);
  free(x->ops);
  free(x->layer_names);
  free(x->layer_of_debug);
  ct_lmem_free(&x->lmem);
  ct_gmem_free(&x->gmem);
}

/* Bytes every schedule of p moves over DDR: its constants read once, its inputs read once and
 * its outputs written once (the stored layer tensors of --dump-all are not compulsory). */
static uint64_t compulsory_bytes(const ct_program *p) {
  uint64_t b = 0;
  for (size_t i = 0; i < p->n_consts; i++) b += p->consts[i].bytes;
  for (size_t i = 0; i < p->n_io; i++) {
    const ct_prog_io *io = &p->io[i];
    if (io->is_tensor) continue;
    uint64_t n = ct_dtype_size(io->dtype);
    for (int k = 0; k < io->ndim; k++) n *= (uint64_t)(io->shape[k] > 0 ? io->shape[k] : 0);
    b += n;
  }
  return b;
}

ct_status ct_sim_run(const ct_chip *chip, const ct_program *p, const ct_tensor_list *inputs,
                     const ct_sim_run_options *opt, ct_sim_run_output *out, ct_diag *d) {
  memset(out, 0, sizeof *out);
  ct_tensor_list_init(&out->outputs);
  ct_tensor_list_init(&out->dumps);
  run_ctx x = {0};
  x.chip = chip;
  x.p = p;
  x.opt = opt;
  ct_status st = setup(&x, opt, inputs, d);
  if (!st) {
    ct_sim_hooks hooks = {&x, opt->timing_only ? NULL : hook_exec, hook_describe, hook_debug};
    ct_sim_options o = {opt->functional, !opt->no_race_check, opt->trace, opt->max_cycles};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = ct_sim_core_run(&x.m, x.ops, (uint32_t)p->n_insns, &hooks, &o, &out->res, d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->res.counters.wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    out->res.counters.ddr_compulsory_bytes = compulsory_bytes(p);
    out->res.counters.ddr_bytes_per_cycle = (uint64_t)chip->gmem_bytes_per_cycle;
  }
  if (!st) st = read_outputs(&x, &out->outputs, d);
  if (!st && x.shadows) st = collect_dumps(&x, &out->dumps, d);
  if (!st) st = layer_counters(&x, out, d);
  teardown(&x);
  return st;
}

ct_status ct_sim_check_order(const ct_chip *chip, const ct_program *p, ct_diag *d) {
  ct_sim_run_options opt = {.functional = true, .timing_only = true};
  ct_sim_result res;
  memset(&res, 0, sizeof res);
  run_ctx x = {0};
  x.chip = chip, x.p = p, x.opt = &opt;
  ct_status st = setup(&x, &opt, NULL, d);
  if (!st) {
    ct_sim_hooks hooks = {&x, NULL, hook_describe, hook_debug};
    ct_sim_options o = {true, true, NULL, 0};
    st = ct_sim_core_run(&x.m, x.ops, (uint32_t)p->n_insns, &hooks, &o, &res, d);
  }
  ct_sim_result_free(&res);
  teardown(&x);
  return st;
}
