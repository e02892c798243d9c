/* search.c: layer-group search with the cmodel in the loop (search.h). */
#include "deploy/search.h"

#include <stdlib.h>
#include <string.h>

#include "cmodel/sim.h"
#include "common/clock.h"
#include "deploy/flow.h"
#include "isa/program.h"

typedef struct srch {
  const ct_graph *g;
  const ct_chip *chip;
  const ct_deploy_search_options *so;
  ct_deploy_search_result *r;
  double t0;
} srch;

static bool budget_left(const srch *s) {
  return s->r->evals < s->so->max_evals && (s->so->max_seconds <= 0 || ct_clock_seconds() - s->t0 < s->so->max_seconds);
}

/* Compiles g with o and simulates the program timing-only: *cycles, and the plan's partition
 * into lens[0..*n) when lens is not NULL. Errors: those of the compilation and the cmodel. */
static ct_status measure(srch *s, const ct_lg_options *o, uint64_t *cycles, int *lens, int *n, ct_diag *d) {
  ct_program prog;
  ct_lg_plan *p = NULL;
  int held;
  ct_program_init(&prog, ct_chip_signature(s->chip));
  s->r->evals++;
  ct_status st = ct_deploy_compile(s->g, s->chip, o, &p, &prog, &held, d);
  if (!st) {
    ct_sim_run_options ro = {.timing_only = true, .no_race_check = true};
    ct_sim_run_output out;
    st = ct_sim_run(s->chip, &prog, NULL, &ro, &out, d);
    if (!st) *cycles = out.res.counters.total_cycles;
    ct_sim_run_output_free(&out);
  }
  if (!st && lens) {
    *n = p->n_groups;
    for (int k = 0; k < p->n_groups; k++) lens[k] = p->groups[k].n_layers;
  }
  if (!st) s->r->legal++;
  ct_lg_plan_free(p);
  ct_program_free(&prog);
  return st;
}

/* A local move on group k of a partition: merge it with group k + 1 (MERGE), split it after
 * its first arg layers (SPLIT), or move the boundary with group k + 1 by arg layers (SHIFT:
 * arg > 0 gives group k + 1's first layers to k, arg < 0 gives k's last layers to k + 1). */
typedef enum { MERGE, SPLIT, SHIFT } move_kind;
typedef struct move {
  int k, arg;
  move_kind kind;
} move;

/* Every move of partition cur (n groups) into mv (capacity: moves_cap); returns the count. */
static int list_moves(const int *cur, int n, move *mv) {
  int c = 0;
  for (int k = 0; k < n; k++) {
    if (k + 1 < n) mv[c++] = (move){k, 0, MERGE};
    for (int a = 1; a < cur[k]; a++) mv[c++] = (move){k, a, SPLIT};
    for (int a = -2; k + 1 < n && a <= 2; a++)
      if (a && (a > 0 ? cur[k + 1] > a : cur[k] > -a)) mv[c++] = (move){k, a, SHIFT};
  }
  return c;
}

/* The partition move m makes of cur (n groups) into cand; returns its group count. */
static int apply_move(const int *cur, int n, move m, int *cand) {
  int c = 0;
  for (int i = 0; i < n; i++) {
    if (i != m.k) {
      cand[c++] = cur[i];
      continue;
    }
    if (m.kind == MERGE) cand[c++] = cur[i] + cur[i + 1], i++;
    else if (m.kind == SPLIT) cand[c++] = m.arg, cand[c++] = cur[i] - m.arg;
    else cand[c++] = cur[i] + m.arg, cand[c++] = cur[i + 1] - m.arg, i++;
  }
  return c;
}

/* The first local move of cur (from move index *at, cyclically) that lowers the cycles; true
 * when one did (cur, *n and the result updated). mv: room for every move (L + 5 per group). */
static bool improve(srch *s, const ct_lg_options *base, int *cur, int *n, int *cand, move *mv, int *at) {
  ct_lg_options o = *base;
  o.strategy = CT_LG_SEARCH, o.group_len = cand;
  int moves = list_moves(cur, *n, mv);
  for (int t = 0; t < moves && budget_left(s); t++) {
    int m = (*at + t) % moves, c = apply_move(cur, *n, mv[m], cand);
    o.n_group_len = c;
    uint64_t cyc;
    ct_diag d;
    ct_diag_clear(&d);
    if (measure(s, &o, &cyc, NULL, NULL, &d) || cyc >= s->r->best_cycles) continue;
    memcpy(cur, cand, sizeof *cur * (size_t)c);
    *n = c, *at = m;
    s->r->best_cycles = cyc, s->r->best_from = "search", s->r->improvements++;
    return true;
  }
  return false;
}

/* The strategies' plans: the best into cur / *n (dp's cycles in r->dp_cycles). */
static ct_status starts(srch *s, const ct_lg_options *base, int *cur, int *n, int *tmp, ct_diag *d) {
  static const ct_lg_strategy from[] = {CT_LG_DP, CT_LG_GREEDY, CT_LG_LONGEST, CT_LG_NONE};
  for (int i = 0; i < (int)(sizeof from / sizeof from[0]); i++) {
    ct_lg_options o = *base;
    o.strategy = from[i], o.group_len = NULL, o.n_group_len = 0;
    uint64_t cyc;
    int tn = 0;
    ct_diag dd;
    ct_diag_clear(&dd);
    ct_status st = measure(s, &o, &cyc, tmp, &tn, &dd);
    if (st && i == 0) return *d = dd, st;
    if (st) continue;
    if (i == 0) s->r->dp_cycles = cyc;
    if (i == 0 || cyc < s->r->best_cycles) {
      memcpy(cur, tmp, sizeof *cur * (size_t)tn);
      *n = tn, s->r->best_cycles = cyc, s->r->best_from = ct_lg_strategy_name(from[i]);
    }
  }
  return CT_OK;
}

ct_status ct_deploy_search(const ct_graph *g, const ct_chip *chip, const ct_lg_options *base,
                           const ct_deploy_search_options *so, ct_deploy_search_result *r, ct_diag *d) {
  memset(r, 0, sizeof *r);
  srch s = {g, chip, so, r, ct_clock_seconds()};
  size_t cap = (size_t)g->n_ops + 2; /* layers are live ops */
  int *cur = malloc(sizeof *cur * cap), *cand = malloc(sizeof *cand * cap), n = 0, at = 0;
  move *mv = malloc(sizeof *mv * cap * 6);
  ct_status st = cur && cand && mv ? starts(&s, base, cur, &n, cand, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  while (!st && budget_left(&s) && improve(&s, base, cur, &n, cand, mv, &at)) {
  }
  free(cand), free(mv);
  r->seconds = ct_clock_seconds() - s.t0;
  if (st) return free(cur), st;
  r->group_len = cur, r->n_groups = n;
  return CT_OK;
}

void ct_deploy_search_print(FILE *f, const ct_deploy_search_result *r) {
  double gain = r->dp_cycles ? 100.0 * ((double)r->best_cycles - (double)r->dp_cycles) / (double)r->dp_cycles : 0.0;
  fprintf(f, "deploy: search: dp %llu cycles, best %llu (%+.2f %%, from %s); %d candidates (%d compiled), %d moves accepted, "
             "%.1f s\n",
          (unsigned long long)r->dp_cycles, (unsigned long long)r->best_cycles, gain, r->best_from, r->evals, r->legal,
          r->improvements, r->seconds);
}

void ct_deploy_search_result_free(ct_deploy_search_result *r) {
  free(r->group_len);
  memset(r, 0, sizeof *r);
}
