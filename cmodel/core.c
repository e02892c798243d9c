/* core.c: the cmodel clock loop (docs/architecture.md §3, §5): one global clock; per cycle the
 * dispatcher pushes ≤ 1 instruction in program order, each engine starts its queue head when
 * its semaphores allow, LMEM bank ports are arbitrated oldest-instruction-first, DDR
 * bandwidth is shared by the DMA engines moving data. When nothing can change until the next
 * completion or phase change, the clock jumps there (discrete-event skipping). */
#include "cmodel/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/core_int.h"
#include "memory/lmem.h"

int ct_sim_engine_count(const ct_sim_machine *m) { return m->load_engines + m->store_engines + 2; }

int ct_sim_engine_index(const ct_sim_machine *m, ct_sim_unit u, int k) {
  switch (u) {
    case CT_SIM_LOAD: return k >= 0 && k < m->load_engines ? k : -1;
    case CT_SIM_STORE: return k >= 0 && k < m->store_engines ? m->load_engines + k : -1;
    case CT_SIM_MXU: return m->load_engines + m->store_engines;
    case CT_SIM_VPU: return m->load_engines + m->store_engines + 1;
    default: return -1;
  }
}

void ct_sim_engine_name(const ct_sim_machine *m, int e, char *buf, size_t n) {
  if (e < m->load_engines)
    snprintf(buf, n, "load%d", e);
  else if (e < m->load_engines + m->store_engines)
    snprintf(buf, n, "store%d", e - m->load_engines);
  else
    snprintf(buf, n, "%s", e == m->load_engines + m->store_engines ? "mxu" : "vpu");
}

void ct_sim_result_free(ct_sim_result *res) {
  free(res->counters.engines);
  free(res->start);
  free(res->end);
  free(res->busy);
  free(res->stall);
  free(res->engine);
  memset(res, 0, sizeof *res);
}


static ct_status alloc_result(sim *s) {
  ct_sim_result *r = s->res;
  memset(r, 0, sizeof *r);
  r->n_ops = s->n;
  r->counters.n_engines = s->ne;
  r->counters.engines = calloc((size_t)s->ne, sizeof *r->counters.engines);
  size_t n = s->n ? s->n : 1;
  r->start = malloc(n * sizeof *r->start);
  r->end = malloc(n * sizeof *r->end);
  r->busy = calloc(n, sizeof *r->busy);
  r->stall = calloc(n * CT_STALL_COUNT, sizeof *r->stall);
  r->engine = malloc(n * sizeof *r->engine);
  if (!r->counters.engines || !r->start || !r->end || !r->busy || !r->stall || !r->engine)
    return ct_diag_set(s->d, CT_ERR_LIMIT, "out of memory for %u instructions", s->n);
  for (uint32_t i = 0; i < s->n; i++) {
    r->start[i] = r->end[i] = UINT64_MAX;
    r->engine[i] = ct_sim_engine_index(s->m, s->ops[i].unit, s->ops[i].dma_index);
  }
  for (int k = 0; k < s->ne; k++)
    ct_sim_engine_name(s->m, k, r->counters.engines[k].name, CT_ENGINE_NAME_MAX);
  r->counters.mxu_rows = s->m->mxu_rows;
  r->counters.mxu_cols = s->m->mxu_cols;
  r->counters.freq_mhz = s->m->freq_mhz;
  r->counters.functional = s->o->functional;
  return CT_OK;
}

static ct_status setup(sim *s) {
  ct_status st = alloc_result(s);
  if (st) return st;
  if (s->m->queue_depth == 0 || s->m->sem_count > 32 || s->ne > 62)
    return ct_diag_set(s->d, CT_ERR_INPUT, "chip: queue.depth must be > 0, sem.count ≤ 32 and "
                       "at most 60 DMA engines");
  s->e = calloc((size_t)s->ne, sizeof *s->e);
  s->sem = calloc(32, sizeof *s->sem);
  s->snap = calloc(s->n ? s->n : 1, sizeof *s->snap);
  if (!s->e || !s->sem || !s->snap) return ct_diag_set(s->d, CT_ERR_LIMIT, "out of memory");
  for (int k = 0; k < s->ne; k++) {
    s->e[k].run = -1;
    s->e[k].unit = k < s->m->load_engines ? CT_SIM_LOAD
                   : k < s->m->load_engines + s->m->store_engines ? CT_SIM_STORE
                   : k == s->ne - 2 ? CT_SIM_MXU : CT_SIM_VPU;
    if (!(s->e[k].q = malloc(s->m->queue_depth * sizeof *s->e[k].q)))
      return ct_diag_set(s->d, CT_ERR_LIMIT, "out of memory");
  }
  for (uint32_t i = 0; i < s->n; i++)
    if (s->res->engine[i] >= 0) s->e[s->res->engine[i]].pending++;
  s->ctrl = -1;
  if (s->o->race_check && !(s->race = ct_race_new(s->ne + 1, 32)))
    return ct_diag_set(s->d, CT_ERR_LIMIT, "out of memory for the race checker");
  if (s->o->trace) {
    char name[CT_ENGINE_NAME_MAX];
    for (int k = 0; k < s->ne; k++) {
      ct_sim_engine_name(s->m, k, name, sizeof name);
      ct_trace_track(s->o->trace, k + 1, name);
    }
    ct_trace_track(s->o->trace, s->ne + 1, "ctrl");
  }
  return CT_OK;
}

static void teardown(sim *s) {
  for (int k = 0; s->e && k < s->ne; k++) free(s->e[k].q);
  free(s->e);
  free(s->sem);
  free(s->snap);
  ct_race_free(s->race);
}

/* Emits the DDR bandwidth (bytes/cycle) and LMEM-in-use counters when they change. */
static void trace_counters(sim *s) {
  double ddr = 0, lmem = 0;
  for (int k = 0; k < s->ne; k++) {
    const engine *e = &s->e[k];
    if (e->run < 0) continue;
    lmem += (double)s->ops[e->run].lmem_bytes;
    if (e->dma && e->granted && e->x.uses_ddr && !ct_dma_xfer_in_latency(&e->x))
      ddr += (double)e->rate / (double)s->m->ddr.unit;
  }
  if (ddr != s->last_ddr) ct_trace_counter(s->o->trace, "ddr_bytes_per_cycle", s->t, ddr);
  if (lmem != s->last_lmem) ct_trace_counter(s->o->trace, "lmem_bytes_in_use", s->t, lmem);
  s->last_ddr = ddr;
  s->last_lmem = lmem;
}

/* One loop iteration: a cycle, or a jump over cycles in which nothing can change. */
static ct_status iterate(sim *s, bool *done) {
  bool active = false;
  ct_status st = ct_sim_dispatch(s, &active);
  if (!st) st = ct_sim_start_heads(s, &active);
  if (st) return st;
  ct_sim_arbitrate(s);
  uint64_t k = ct_sim_next_event(s);
  if (k == UINT64_MAX || k == 0) {
    if (ct_sim_finished(s)) {
      *done = true;
      return CT_OK;
    }
    if (!active) return ct_sim_deadlock(s);
    k = 1;
  }
  if (active) k = 1;
  if (s->o->max_cycles && s->t + k > s->o->max_cycles)
    return ct_diag_set(s->d, CT_ERR_LIMIT, "more than %llu cycles simulated (limit)",
                       (unsigned long long)s->o->max_cycles);
  if (s->o->trace) trace_counters(s);
  ct_sim_account(s, k);
  ct_sim_advance(s, k);
  st = ct_sim_complete(s);
  if (!st && s->race) {
    uint64_t live = 0; /* the dispatcher never touches memory */
    for (int e = 0; e < s->ne; e++)
      if (s->e[e].pending) live |= UINT64_C(1) << e;
    ct_race_prune(s->race, live);
  }
  return st;
}

ct_status ct_sim_core_run(const ct_sim_machine *m, const ct_sim_op *ops, uint32_t n,
                          const ct_sim_hooks *hooks, const ct_sim_options *opt,
                          ct_sim_result *res, ct_diag *d) {
  sim s = {0};
  s.m = m;
  s.ops = ops;
  s.n = n;
  s.h = hooks;
  s.o = opt;
  s.res = res;
  s.d = d;
  s.ne = ct_sim_engine_count(m);
  ct_status st = setup(&s);
  bool done = false;
  while (!st && !done) st = iterate(&s, &done);
  res->counters.total_cycles = s.t;
  for (int k = 0; k < s.ne && res->counters.engines; k++)
    res->counters.bank_conflict_cycles += res->counters.engines[k].stall[CT_STALL_BANK];
  teardown(&s);
  return st;
}
