/* lg_plan.c: the planner's entry point — grouping strategies (none: one layer per group;
 * greedy: from each layer the legal group that saves the most estimated cycles against one
 * layer per group; dp: the minimum total estimated cycles over all partitions of the
 * topological order into legal contiguous groups, TPU-MLIR's dynamic-programming LayerGroup;
 * longest: the longest legal group that fits and is estimated no slower than its layers one
 * per group; max: the longest legal group that fits, TPU-MLIR's simple grouping), then LMEM buffers
 * per group and GMEM addresses. */
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"

static const char *const strategy_names[] = {"none", "greedy", "dp", "longest", "max", "search"};
enum { N_STRATEGIES = sizeof strategy_names / sizeof strategy_names[0] };

bool ct_lg_strategy_parse(const char *s, ct_lg_strategy *out) {
  for (int i = 0; i < N_STRATEGIES; i++)
    if (!strcmp(s, strategy_names[i])) return *out = (ct_lg_strategy)i, true;
  return false;
}

const char *ct_lg_strategy_name(ct_lg_strategy s) { return (unsigned)s < N_STRATEGIES ? strategy_names[s] : "?"; }

static ct_status no_fit(const lg_ctx *x, int li, int64_t need, ct_diag *d) {
  const ct_op *op = x->layers[li].op;
  if (x->oom) return ct_diag_set(d, CT_ERR_LIMIT, "layer groups: out of memory");
  return ct_diag_set(d, CT_ERR_LIMIT, "%s: layer \"%s\" (%s): smallest tile needs %lld bytes of LMEM, the chip has %lld",
                     x->g->source ? x->g->source : x->g->name, op->loc ? op->loc : "?", ct_op_name(op->kind),
                     (long long)need, (long long)x->chip->lmem_bytes);
}

/* Cycles of group [first, first+n), or -1 when illegal or not fitting. */
static int64_t group_cycles(lg_ctx *x, int first, int n, int64_t *need) {
  ct_lg_group gr;
  *need = 0;
  if (!ct_lg_group_legal(x, first, n)) return -1;
  if (!ct_lg_best_tiling(x, first, n, &gr, false, need)) return -1;
  return gr.cycles;
}

static int max_len(const lg_ctx *x) { return x->opt->max_group_layers > 0 ? x->opt->max_group_layers : 24; }

/* The partition the options give (CT_LG_SEARCH) into len[]: every group legal, every layer
 * covered once. */
static ct_status given_partition(const lg_ctx *x, int *len, int *n_groups, ct_diag *d) {
  const ct_lg_options *o = x->opt;
  if (!o->group_len || o->n_group_len < 1 || o->n_group_len > x->n_layers)
    return ct_diag_set(d, CT_ERR_INPUT, "layer groups: the search strategy needs a partition of the %d layers", x->n_layers);
  int first = 0;
  for (int k = 0; k < o->n_group_len; k++) {
    int n = o->group_len[k];
    if (n < 1 || n > x->n_layers - first || (n > 1 && !ct_lg_group_legal(x, first, n)))
      return ct_diag_set(d, CT_ERR_INPUT, "layer groups: group %d (%d layers from layer %d of %d) is not a legal group", k, n,
                         first, x->n_layers);
    len[k] = n, first += n;
  }
  if (first != x->n_layers)
    return ct_diag_set(d, CT_ERR_INPUT, "layer groups: the partition covers %d of the %d layers", first, x->n_layers);
  *n_groups = o->n_group_len;
  return CT_OK;
}

/* Group sizes by strategy into len[] (len[k] = layers of group k); returns the group count. */
static ct_status partition(lg_ctx *x, int *len, int *n_groups, ct_diag *d) {
  int L = x->n_layers, ng = 0, ml = max_len(x);
  int64_t need;
  if (x->opt->strategy == CT_LG_SEARCH) return given_partition(x, len, n_groups, d);
  if (x->opt->strategy == CT_LG_DP) {
    int64_t *cost = malloc(sizeof *cost * ((size_t)L + 1));
    int *pick = malloc(sizeof *pick * ((size_t)L + 1));
    if (!cost || !pick) return free(cost), free(pick), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    cost[0] = 0;
    for (int j = 0; j < L; j++) {
      int64_t c1 = group_cycles(x, j, 1, &need);
      if (c1 < 0) return free(cost), free(pick), no_fit(x, j, need, d);
      cost[j + 1] = cost[j] + c1, pick[j + 1] = 1;
      for (int n = 2; n <= ml && j - n + 1 >= 0 && x->chainable[j - n + 1] && x->chainable[j]; n++) {
        int64_t c = group_cycles(x, j - n + 1, n, &need);
        if (c >= 0 && cost[j - n + 1] + c < cost[j + 1]) cost[j + 1] = cost[j - n + 1] + c, pick[j + 1] = n;
      }
    }
    int k = 0;
    for (int j = L; j > 0; j -= pick[j]) len[k++] = pick[j];
    for (int i = 0; i < k / 2; i++) { int t = len[i]; len[i] = len[k - 1 - i], len[k - 1 - i] = t; }
    free(cost), free(pick);
    *n_groups = k;
    return CT_OK;
  }
  int64_t *single = malloc(sizeof *single * ((size_t)L + 1));
  if (!single) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int i = 0; i < L; i++)
    if ((single[i] = group_cycles(x, i, 1, &need)) < 0) return free(single), no_fit(x, i, need, d);
  for (int i = 0; i < L;) {
    int n = 1;
    int64_t best_save = 0, alone = single[i];
    if (x->opt->strategy == CT_LG_GREEDY) /* the group from i that saves the most vs one layer each */
      for (int m = 2; m <= ml && i + m <= L && x->chainable[i + m - 1]; m++) {
        alone += single[i + m - 1];
        int64_t c = group_cycles(x, i, m, &need);
        if (c >= 0 && alone - c > best_save) best_save = alone - c, n = m;
      }
    else if (x->opt->strategy == CT_LG_LONGEST) /* the longest group from i not slower than one layer each */
      for (int m = 2; m <= ml && i + m <= L && x->chainable[i + m - 1]; m++) {
        alone += single[i + m - 1];
        int64_t c = group_cycles(x, i, m, &need);
        if (c >= 0 && c <= alone) n = m;
      }
    else if (x->opt->strategy == CT_LG_MAX)
      for (int m = 2; m <= ml && i + m <= L && x->chainable[i + m - 1]; m++)
        if (group_cycles(x, i, m, &need) >= 0) n = m;
    len[ng++] = n;
    i += n;
  }
  free(single);
  *n_groups = ng;
  return CT_OK;
}

static ct_status build_groups(lg_ctx *x, ct_lg_plan *p, const int *len, int ng, ct_diag *d) {
  p->groups = calloc((size_t)ng + 1, sizeof *p->groups);
  if (!p->groups) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  int first = 0;
  for (int k = 0; k < ng; k++) {
    int64_t need;
    if (!ct_lg_best_tiling(x, first, len[k], &p->groups[k], true, &need)) return no_fit(x, first, need, d);
    p->n_groups = k + 1;
    ct_lg_group *g = &p->groups[k];
    p->ddr_bytes += g->ddr_load_bytes + g->ddr_store_bytes;
    if (g->lmem_bytes > p->lmem_peak) p->lmem_peak = g->lmem_bytes;
    first += len[k];
  }
  ct_lg_prefetch(x, p);
  for (int k = 0; k < ng; k++) p->total_cycles += p->groups[k].cycles;
  return CT_OK;
}

ct_status ct_lg_plan_graph(const ct_graph *g, const ct_chip *chip, const ct_lg_options *opt, ct_lg_plan **out,
                           ct_diag *d) {
  *out = NULL;
  ct_lg_plan *p = calloc(1, sizeof *p);
  if (!p) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  p->g = g, p->chip = *chip, p->opt = *opt;
  lg_ctx x;
  ct_status st = ct_lg_ctx_init(&x, g, &p->chip, &p->opt, d);
  int *len = st ? NULL : malloc(sizeof *len * ((size_t)x.n_layers + 1));
  int ng = 0;
  if (!st && !len) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) st = partition(&x, len, &ng, d);
  if (!st) st = build_groups(&x, p, len, ng, d);
  if (!st && x.oom) st = ct_diag_set(d, CT_ERR_LIMIT, "layer groups: out of memory"); /* an estimate is not to be trusted */
  if (!st) st = ct_lg_alloc_gmem(&x, p, d);
  free(len);
  if (!st) { /* the plan keeps the layers and the op → layer map */
    p->layers = x.layers, p->n_layers = x.n_layers, p->layer_of_op = x.layer_of_op;
    x.layers = NULL, x.layer_of_op = NULL;
  }
  ct_lg_ctx_free(&x);
  if (st) return ct_lg_plan_free(p), st;
  *out = p;
  return CT_OK;
}

void ct_lg_plan_free(ct_lg_plan *p) {
  if (!p) return;
  for (int k = 0; k < p->n_groups; k++) free(p->groups[k].bufs);
  free(p->groups), free(p->gmem), free(p->layers), free(p->layer_of_op);
  free(p);
}


void ct_lg_annotate(const ct_lg_plan *p, ct_graph *g) {
  for (int k = 0; k < p->n_gmem; k++) {
    ct_value *v = g->values[p->gmem[k].value];
    v->annot.gmem_addr = p->gmem[k].addr, v->annot.bytes = p->gmem[k].bytes;
  }
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_lg_group *gr = &p->groups[gi];
    for (int i = 0; i < gr->n_bufs; i++)
      if (gr->bufs[i].copy == 0) g->values[gr->bufs[i].value]->annot.lmem_addr = gr->bufs[i].addr;
  }
  for (int oi = 0; oi < g->n_ops; oi++) {
    int li = p->layer_of_op[oi];
    if (li < 0) continue;
    int gi = 0;
    while (gi + 1 < p->n_groups && p->groups[gi + 1].first <= li) gi++;
    g->ops[oi]->annot.group = gi, g->ops[oi]->annot.tile = -1, g->ops[oi]->annot.step = -1;
  }
}
