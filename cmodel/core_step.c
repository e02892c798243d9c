/* core_step.c: the phases of one clock cycle of the cmodel (docs/architecture.md §5): dispatch
 * (≤ 1 instruction per cycle, program order, stall on a full queue; control instructions run
 * here), engine starts (semaphore waits, race check, functional effect), LMEM bank-port
 * arbitration (oldest instruction first), DDR sharing, cycle accounting and completion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/core_int.h"
#include "memory/lmem.h"

void ct_sim_describe(const sim *s, uint32_t i, char *buf, size_t n) {
  if (s->h && s->h->describe)
    s->h->describe(s->h->ctx, i, buf, n);
  else
    snprintf(buf, n, "insn %u (%s)", i, s->ops[i].name ? s->ops[i].name : "?");
}

static bool waits_ok(const sim *s, uint32_t wait) {
  for (uint32_t b = 0; b < s->m->sem_count; b++)
    if (((wait >> b) & 1) && s->sem[b] == 0) return false;
  return true;
}

/* Decrements the waited semaphores and joins their tokens' clocks into agent a. */
static void take_sems(sim *s, int a, uint32_t wait) {
  for (uint32_t b = 0; b < s->m->sem_count; b++)
    if ((wait >> b) & 1) {
      s->sem[b]--;
      if (s->race) ct_race_take(s->race, a, b);
    }
}

static ct_status give_sems(sim *s, int a, uint32_t signal) {
  for (uint32_t b = 0; b < s->m->sem_count; b++)
    if ((signal >> b) & 1) {
      if (s->sem[b] == UINT32_MAX)
        return ct_diag_set(s->d, CT_ERR_LIMIT, "semaphore %u overflows", b);
      s->sem[b]++;
      if (s->race && !ct_race_signal(s->race, a, b))
        return ct_diag_set(s->d, CT_ERR_LIMIT, "out of memory for semaphore tokens");
    }
  return CT_OK;
}

static bool engine_idle(const engine *e) { return e->run < 0 && e->qlen == 0; }

static bool drained(const sim *s, uint32_t unit_mask) {
  for (int i = 0; i < s->ne; i++)
    if (((unit_mask >> s->e[i].unit) & 1) && !engine_idle(&s->e[i])) return false;
  return true;
}


/* Starts control instruction i on the dispatcher (its waits and drains hold). */
static ct_status ctrl_start(sim *s, uint32_t i) {
  const ct_sim_op *op = &s->ops[i];
  int a = s->ne; /* the dispatcher's clock */
  take_sems(s, a, op->wait);
  if (s->race) {
    ct_race_tick(s->race, a);
    for (int k = 0; k < s->ne; k++)
      if ((op->ctrl == CT_SIM_CTRL_END || ((op->drain_mask >> s->e[k].unit) & 1)))
        ct_race_join(s->race, a, k);
  }
  s->res->start[i] = s->t;
  s->ctrl = i;
  s->ctrl_left = s->o->functional || op->ctrl != CT_SIM_CTRL_NOP ? 0 : op->cycles;
  if (s->ctrl_left == 0) return ct_sim_complete(s);
  return CT_OK;
}

ct_status ct_sim_dispatch(sim *s, bool *active) {
  s->blocked_full = false;
  if (s->ended || s->pc >= s->n || s->ctrl >= 0) return CT_OK;
  uint32_t i = s->pc;
  const ct_sim_op *op = &s->ops[i];
  if (op->unit == CT_SIM_CTRL) {
    uint32_t drain = op->ctrl == CT_SIM_CTRL_END ? UINT32_MAX : op->drain_mask;
    if (!waits_ok(s, op->wait) || !drained(s, drain)) return CT_OK;
    *active = true;
    return ctrl_start(s, i);
  }
  int k = ct_sim_engine_index(s->m, op->unit, op->dma_index);
  if (k < 0)
    return ct_diag_set(s->d, CT_ERR_INPUT, "insn %u: no engine for unit %d instance %d", i,
                       (int)op->unit, op->dma_index);
  engine *e = &s->e[k];
  if (e->qlen == s->m->queue_depth) {
    s->blocked_full = true;
    return CT_OK;
  }
  if (s->race && (s->snap[i] = ct_race_snapshot(s->race, s->ne)) == UINT32_MAX)
    return ct_diag_set(s->d, CT_ERR_LIMIT, "out of memory for clock snapshots");
  e->q[(e->qhead + e->qlen) % s->m->queue_depth] = i;
  e->qlen++;
  s->pc++;
  *active = true;
  return CT_OK;
}

static ct_status race_error(sim *s, const ct_race_hit *h) {
  char a[256], b[256];
  ct_sim_describe(s, h->insn_a, a, sizeof a);
  ct_sim_describe(s, h->insn_b, b, sizeof b);
  uint64_t alo, ahi, blo, bhi;
  ct_mem_region_span(&h->region_a, &alo, &ahi);
  ct_mem_region_span(&h->region_b, &blo, &bhi);
  return ct_diag_set(s->d, CT_ERR_CHECK,
                     "race: %s %s %s bytes [0x%llx, 0x%llx) and %s %s overlapping bytes "
                     "[0x%llx, 0x%llx) on another engine with no semaphore chain ordering them",
                     a, h->region_a.write ? "writes" : "reads",
                     h->region_a.space == CT_SPACE_LMEM ? "lmem" : "gmem",
                     (unsigned long long)alo, (unsigned long long)ahi, b,
                     h->region_b.write ? "writes" : "reads", (unsigned long long)blo,
                     (unsigned long long)bhi);
}

/* Starts op i on engine k: semaphores, race check, functional effect, timing state. */
static ct_status engine_start(sim *s, int k, uint32_t i) {
  engine *e = &s->e[k];
  const ct_sim_op *op = &s->ops[i];
  take_sems(s, k, op->wait);
  if (s->race) {
    ct_race_tick(s->race, k);
    ct_race_join_snapshot(s->race, k, s->snap[i]);
    ct_race_hit hit;
    bool oom;
    if (ct_race_access(s->race, k, i, op->regions, op->n_regions, &hit, &oom))
      return race_error(s, &hit);
    if (oom) return ct_diag_set(s->d, CT_ERR_LIMIT, "out of memory for race records");
  }
  if (s->h && s->h->exec) {
    ct_status st = s->h->exec(s->h->ctx, i, s->d);
    if (st) return st;
  }
  e->qhead = (e->qhead + 1) % s->m->queue_depth;
  e->qlen--;
  e->run = i;
  e->start = s->t;
  s->res->start[i] = s->t;
  e->dma = op->is_dma && !s->o->functional;
  e->left = s->o->functional ? 1 : (op->cycles ? op->cycles : 1);
  if (e->dma) ct_dma_xfer_start(&s->m->ddr, &e->x, op->dma_moved, op->dma_port_cycles, op->dma_ddr);
  return CT_OK;
}

ct_status ct_sim_start_heads(sim *s, bool *active) {
  for (int k = 0; k < s->ne; k++) {
    engine *e = &s->e[k];
    if (e->run >= 0 || e->qlen == 0) continue;
    uint32_t i = e->q[e->qhead];
    if (!waits_ok(s, s->ops[i].wait)) continue;
    ct_status st = engine_start(s, k, i);
    if (st) return st;
    *active = true;
  }
  return CT_OK;
}

static bool wants_ports(const sim *s, const engine *e) {
  if (e->run < 0 || s->o->functional) return false;
  if (e->dma && ct_dma_xfer_in_latency(&e->x)) return false;
  return s->ops[e->run].n_bank_spans > 0;
}

void ct_sim_arbitrate(sim *s) {
  int order[64], n = 0;
  for (int k = 0; k < s->ne && n < 64; k++) {
    s->e[k].granted = s->e[k].run >= 0;
    if (!wants_ports(s, &s->e[k])) continue;
    int j = n++; /* insertion sort by (start cycle, engine index) */
    while (j > 0 && s->e[order[j - 1]].start > s->e[k].start) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = k;
  }
  ct_lmem_bankset claimed = {{0}};
  for (int j = 0; j < n; j++) {
    const ct_sim_op *op = &s->ops[s->e[order[j]].run];
    s->e[order[j]].granted = ct_lmem_port_claim(&claimed, op->bank_lo, op->bank_hi, op->n_bank_spans);
  }
  int n_ddr = 0;
  for (int k = 0; k < s->ne; k++) {
    const engine *e = &s->e[k];
    if (e->run >= 0 && e->dma && e->granted && !ct_dma_xfer_in_latency(&e->x) && e->x.uses_ddr)
      n_ddr++;
  }
  for (int k = 0; k < s->ne; k++)
    if (s->e[k].run >= 0 && s->e[k].dma) s->e[k].rate = ct_dma_rate(&s->m->ddr, &s->e[k].x, n_ddr);
}

uint64_t ct_sim_next_event(const sim *s) {
  uint64_t k = UINT64_MAX;
  for (int i = 0; i < s->ne; i++) {
    const engine *e = &s->e[i];
    if (e->run < 0 || !e->granted) continue;
    uint64_t ev = e->dma ? ct_dma_xfer_next_event(&e->x, e->rate) : e->left;
    if (ev == 0) ev = 1; /* an empty transfer still takes its cycle */
    if (ev < k) k = ev;
  }
  if (s->ctrl >= 0 && s->ctrl_left < k) k = s->ctrl_left;
  return k;
}

void ct_sim_account(sim *s, uint64_t k) {
  bool busy_unit[CT_SIM_UNIT_COUNT] = {false};
  for (int i = 0; i < s->ne; i++) {
    engine *e = &s->e[i];
    ct_engine_counters *c = &s->res->counters.engines[i];
    if (e->run >= 0) {
      int why = !e->granted ? CT_STALL_BANK : e->dma && ct_dma_xfer_in_latency(&e->x) ? CT_STALL_DDR : -1;
      if (why >= 0) {
        c->stall[why] += k;
        s->res->stall[(size_t)e->run * CT_STALL_COUNT + (size_t)why] += k;
      } else {
        c->busy += k;
        s->res->busy[e->run] += k;
        busy_unit[e->unit] = true;
      }
    } else if (e->qlen > 0) {
      c->stall[CT_STALL_SEM] += k;
      s->res->stall[(size_t)e->q[e->qhead] * CT_STALL_COUNT + CT_STALL_SEM] += k;
    } else if (s->blocked_full)
      c->stall[CT_STALL_QUEUE] += k;
    else
      c->idle += k;
  }
  if (busy_unit[CT_SIM_MXU] && busy_unit[CT_SIM_VPU]) s->res->counters.mxu_vpu_overlap += k;
}

void ct_sim_advance(sim *s, uint64_t k) {
  for (int i = 0; i < s->ne; i++) {
    engine *e = &s->e[i];
    if (e->run < 0 || !e->granted) continue;
    if (e->dma)
      ct_dma_xfer_advance(&e->x, k, e->rate);
    else
      e->left -= k < e->left ? k : e->left;
  }
  if (s->ctrl >= 0) s->ctrl_left -= k < s->ctrl_left ? k : s->ctrl_left;
  s->t += k;
}

static void trace_insn(sim *s, int tid, uint32_t i) {
  const char *layer = NULL;
  int64_t group = -1, tile = -1, step = -1;
  const ct_sim_op *op = &s->ops[i];
  if (s->h && s->h->debug && op->debug_id) s->h->debug(s->h->ctx, op->debug_id, &layer, &group, &tile, &step);
  if (!ct_trace_wants(s->o->trace, layer, s->res->start[i], s->t)) return;
  ct_trace_arg args[6] = {{"insn", NULL, i}, {"opcode", op->name ? op->name : "?", 0},
                          {"layer", layer ? layer : "", 0}, {"group", NULL, group},
                          {"tile", NULL, tile}, {"step", NULL, step}};
  ct_trace_complete(s->o->trace, tid, op->name ? op->name : "?", s->res->start[i], s->t, args, 6);
}

static ct_status finish_op(sim *s, int k, uint32_t i) {
  const ct_sim_op *op = &s->ops[i];
  s->res->end[i] = s->t;
  s->res->counters.instructions++;
  s->res->counters.macs += op->macs;
  s->res->counters.mxu_ideal_cycles += op->mxu_ideal;
  s->res->counters.ddr_bytes_read += op->ddr_read;
  s->res->counters.ddr_bytes_written += op->ddr_written;
  if (k < s->ne) s->res->counters.engines[k].insns++;
  if (s->o->trace) trace_insn(s, k + 1, i);
  return give_sems(s, k, op->signal);
}

ct_status ct_sim_complete(sim *s) {
  for (int k = 0; k < s->ne; k++) {
    engine *e = &s->e[k];
    if (e->run < 0) continue;
    if (e->dma ? !ct_dma_xfer_done(&e->x) : e->left > 0) continue;
    uint32_t i = (uint32_t)e->run;
    e->run = -1;
    e->pending--;
    ct_status st = finish_op(s, k, i);
    if (st) return st;
  }
  if (s->ctrl >= 0 && s->ctrl_left == 0) {
    uint32_t i = (uint32_t)s->ctrl;
    s->ctrl = -1;
    s->pc++;
    if (s->ops[i].ctrl == CT_SIM_CTRL_END) s->ended = true;
    return finish_op(s, s->ne, i);
  }
  return CT_OK;
}

bool ct_sim_finished(const sim *s) {
  if (s->ctrl >= 0 || (!s->ended && s->pc < s->n)) return false;
  for (int k = 0; k < s->ne; k++)
    if (!engine_idle(&s->e[k])) return false;
  return true;
}

/* Appends "semaphore(s) 1 (=0), 4 (=0)" for the zero semaphores of wait to buf. */
static void zero_sems(const sim *s, uint32_t wait, char *buf, size_t n) {
  size_t len = strlen(buf);
  const char *sep = "";
  for (uint32_t b = 0; b < s->m->sem_count && len + 16 < n; b++)
    if (((wait >> b) & 1) && s->sem[b] == 0) {
      len += (size_t)snprintf(buf + len, n - len, "%s%u", sep, b);
      sep = ", ";
    }
}

ct_status ct_sim_deadlock(sim *s) {
  char msg[CT_DIAG_MAX] = "", what[256];
  size_t len = 0;
  for (int k = 0; k < s->ne && len + 300 < sizeof msg; k++) {
    engine *e = &s->e[k];
    if (e->qlen == 0) continue;
    uint32_t i = e->q[e->qhead];
    ct_sim_describe(s, i, what, sizeof what);
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s waits for semaphore(s) ",
                            len ? "; " : "", what);
    zero_sems(s, s->ops[i].wait, msg, sizeof msg);
    len = strlen(msg);
  }
  if (!s->ended && s->pc < s->n && len + 300 < sizeof msg) {
    const ct_sim_op *op = &s->ops[s->pc];
    ct_sim_describe(s, s->pc, what, sizeof what);
    if (op->unit != CT_SIM_CTRL)
      snprintf(msg + len, sizeof msg - len, "%sthe dispatcher holds %s for a full queue",
               len ? "; " : "", what);
    else {
      snprintf(msg + len, sizeof msg - len, "%s%s on the dispatcher waits for semaphore(s) ",
               len ? "; " : "", what);
      zero_sems(s, op->wait, msg, sizeof msg);
    }
  }
  return ct_diag_set(s->d, CT_ERR_CHECK, "deadlock at cycle %llu: %s",
                     (unsigned long long)s->t, msg[0] ? msg : "no engine can progress");
}
