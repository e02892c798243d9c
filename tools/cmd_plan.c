/* cmd_plan.c: `ctpu plan MODEL.top|.tpu [--chip C.json] [--layer-group none|greedy|dp]
 * [--assume-dtype i8] [-o PLAN.csv]`: the back end's layer groups, tiles, LMEM bytes,
 * estimated cycles and DDR bytes per group (compiler/backend/lg.h, docs/backend.md). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "compiler/backend/lg.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tools/files.h"
#include "tools/tools.h"

#define CMD "plan"

typedef struct plan_args {
  const char *model, *out, *chip;
  ct_lg_options opt;
} plan_args;

static int set_strategy(void *args, const char *cmd, const ct_opt *o, const char *v) {
  ct_lg_strategy *s = &((plan_args *)args)->opt.strategy;
  if (!ct_lg_strategy_parse(v, s) || *s == CT_LG_SEARCH)
    return ct_tool_usage(cmd, "%s must be none, greedy, dp, longest or max, not \"%s\"%s", o->name, v,
                         *s == CT_LG_SEARCH ? " (search measures on the cmodel: ctpu deploy --layer-group search)" : "");
  return 0;
}

static int set_dtype(void *args, const char *cmd, const ct_opt *o, const char *v) {
  ct_dtype dt;
  if (!ct_dtype_parse(v, &dt)) return ct_tool_usage(cmd, "%s: unknown dtype \"%s\"", o->name, v);
  ((plan_args *)args)->opt.assume_bytes = (int)ct_dtype_size(dt);
  return 0;
}

static const ct_opt opts[] = {
    CT_OPT_STR_("-o", "PLAN.csv", plan_args, out, "write the CSV to PLAN.csv (default: stdout)"),
    CT_OPT_STR_("--chip", "C.json", plan_args, chip, "chip configuration (default: the built-in chip)"),
    CT_OPT_FN_("--layer-group", "S", set_strategy, "none (one layer per group), greedy, dp (default), longest, max"),
    CT_OPT_FN_("--assume-dtype", "T", set_dtype, "bytes per element from T (i8, i16, f32, ...) instead of each value's dtype"),
    CT_OPT_INT_("--max-group", "N", plan_args, opt.max_group_layers, 1, 1000, "longest group considered (default 24)"),
};

const ct_cmd_spec ct_cmd_plan_spec = CT_CMD_SPEC1(
    CMD, "MODEL.top|.tpu [--chip C.json] [--layer-group none|greedy|dp] [--assume-dtype i8] [-o PLAN.csv]",
    "plans layer groups, tiles and memory for the chip; writes one CSV row per group (stdout without -o) and "
    "prints a summary line (total estimated cycles, DDR bytes, LMEM peak)",
    "model", plan_args, model, opts);

static bool write_csv(FILE *f, const void *p) { return ct_lg_write_csv(p, f); }

/* Writes the CSV to PLAN.csv (common/outset.h: under a temporary name, renamed on success) or
 * stdout; the model, its weights and the chip may not be overwritten. */
static ct_status write_plan(const ct_lg_plan *p, const plan_args *a, const ct_graph *g, ct_diag *d) {
  if (!a->out) return ct_lg_write_csv(p, stdout) ? CT_OK : ct_diag_set(d, CT_ERR_INPUT, "cannot write stdout");
  ct_outset o;
  const char *tmp;
  ct_outset_init(&o, CMD);
  ct_status st = ct_tool_in_model(&o, a->model, g, d);
  if (!st) st = ct_outset_input(&o, a->chip, d);
  if (!st) st = ct_outset_add(&o, a->out, &tmp, d);
  if (!st) st = ct_tool_write_text(tmp, a->out, write_csv, p, d);
  st = ct_outset_end(&o, st, d);
  return st;
}

int ct_cmd_plan(int argc, char **argv) {
  plan_args a = {.opt.strategy = CT_LG_DP};
  int rc = ct_opts_parse(&ct_cmd_plan_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_chip chip;
  ct_graph *g = NULL;
  ct_lg_plan *p = NULL;
  ct_status st = ct_chip_load(a.chip, &chip, &d);
  if (!st) st = ct_ir_load_verified(a.model, &g, &d);
  double t0 = ct_clock_seconds();
  if (!st) st = ct_lg_plan_graph(g, &chip, &a.opt, &p, &d);
  double planned_s = ct_clock_seconds() - t0;
  if (!st) st = write_plan(p, &a, g, &d);
  if (!st)
    fprintf(stderr, "plan %s (%s, %s): %d layers in %d groups, est. %lld cycles, DDR %lld bytes, LMEM peak %lld bytes, "
                    "GMEM %lld bytes, planned in %.3f s\n",
            a.model, chip.name, ct_lg_strategy_name(a.opt.strategy), p->n_layers, p->n_groups,
            (long long)p->total_cycles, (long long)p->ddr_bytes, (long long)p->lmem_peak, (long long)p->gmem_bytes,
            planned_s);
  ct_lg_plan_free(p);
  ct_graph_free(g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
