/* search.h: layer-group search with the cmodel in the loop (`ctpu deploy --layer-group search`,
 * docs/backend.md "Search"): candidate partitions of the topological order are compiled and
 * timed on the cmodel itself, as TVM's AutoTVM measures candidate schedules on the hardware,
 * instead of trusting the planner's cost model. */
#ifndef CT_DEPLOY_SEARCH_H
#define CT_DEPLOY_SEARCH_H

#include <stdint.h>
#include <stdio.h>

#include "common/status.h"
#include "compiler/backend/lg.h"
#include "ir/ir.h"
#include "isa/chip.h"

/* Budget of ct_deploy_search: it stops at whichever comes first. */
typedef struct ct_deploy_search_options {
  int max_evals;    /* candidates compiled and simulated (the strategies' plans included) */
  double max_seconds; /* wall-clock seconds; <= 0: no limit (then the result depends only on
                       * max_evals, as the search is deterministic) */
} ct_deploy_search_options;

/* What the search found. Free with ct_deploy_search_result_free. */
typedef struct ct_deploy_search_result {
  int *group_len;          /* the best partition (ct_lg_options.group_len), n_groups entries */
  int n_groups;
  uint64_t dp_cycles;      /* simulated cycles of `--layer-group dp` */
  uint64_t best_cycles;    /* simulated cycles of the best partition */
  const char *best_from;   /* "dp", "greedy", ... or "search" when a local move improved it */
  int evals, legal, improvements; /* candidates tried, those that compiled, accepted moves */
  double seconds;
} ct_deploy_search_result;

/* Searches partitions of the Tpu module g's layers into layer groups for chip: starts from
 * the plans of the strategies dp, greedy, longest and none (options base otherwise), keeps
 * the one with the fewest simulated cycles, then improves it by local moves — merge two
 * neighbouring groups, split a group in two, move a boundary by one layer — taking the first
 * move that lowers the cycles, until no move does or the budget is spent. Every candidate is
 * compiled (ct_deploy_compile) and simulated timing-only (cycles do not depend on the data);
 * candidates that are not legal groups or do not fit are skipped. Deterministic for a given
 * max_evals when max_seconds <= 0. Errors: those of compiling dp's plan (nothing to start
 * from), CT_ERR_LIMIT out of memory. */
ct_status ct_deploy_search(const ct_graph *g, const ct_chip *chip, const ct_lg_options *base,
                           const ct_deploy_search_options *so, ct_deploy_search_result *r, ct_diag *d);

/* Prints r as one line to f: "deploy: search: dp C cycles, best B (±x %, from S); N candidates
 * (M compiled), K moves accepted, T s". */
void ct_deploy_search_print(FILE *f, const ct_deploy_search_result *r);

/* Releases r's partition and zeroes it. */
void ct_deploy_search_result_free(ct_deploy_search_result *r);

#endif
