/* cmd_plan.c: `ctpu plan MODEL.top|.tpu [--chip C.json] [--layer-group none|greedy|dp]
 * [--assume-dtype i8] [-o PLAN.csv]`: the back end's layer groups, tiles, LMEM bytes,
 * estimated cycles and DDR bytes per group (compiler/backend/lg.h, docs/backend.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/backend/lg.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "tools/tools.h"

#define CMD "plan"

typedef struct plan_args {
  const char *model, *out, *chip;
  ct_lg_options opt;
} plan_args;

static void usage(FILE *f) {
  fprintf(f, "usage: ctpu plan MODEL.top|.tpu [--chip C.json] [--layer-group none|greedy|dp] [--assume-dtype i8]\n"
             "                 [-o PLAN.csv]\n"
             "  plans layer groups, tiles and memory for the chip; writes one CSV row per group (stdout\n"
             "  without -o) and prints a summary line (total estimated cycles, DDR bytes, LMEM peak)\n"
             "  --layer-group S     none (one layer per group), greedy, dp (default), longest\n"
             "  --assume-dtype T    bytes per element from T (i8, i16, f32, ...) instead of each value's dtype\n"
             "  --max-group N       longest group considered (default 24)\n");
}

static int parse_valued(const char *s, const char *val, plan_args *a) {
  if (!strcmp(s, "-o")) a->out = val;
  else if (!strcmp(s, "--chip")) a->chip = val;
  else if (!strcmp(s, "--layer-group")) {
    if (!ct_lg_strategy_parse(val, &a->opt.strategy))
      return ct_tool_usage(CMD, "--layer-group must be none, greedy, dp or longest, not \"%s\"", val);
  } else if (!strcmp(s, "--assume-dtype")) {
    ct_dtype dt;
    if (!ct_dtype_parse(val, &dt)) return ct_tool_usage(CMD, "--assume-dtype: unknown dtype \"%s\"", val);
    a->opt.assume_bytes = (int)ct_dtype_size(dt);
  } else if (!strcmp(s, "--max-group")) {
    char *end;
    long v = strtol(val, &end, 10);
    if (*end || v < 1 || v > 1000) return ct_tool_usage(CMD, "--max-group needs 1..1000, not \"%s\"", val);
    a->opt.max_group_layers = (int)v;
  } else return ct_tool_usage(CMD, "unknown option \"%s\"", s);
  return 0;
}

static int parse_args(int argc, char **argv, plan_args *a) {
  memset(a, 0, sizeof *a);
  a->opt.strategy = CT_LG_DP;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout), -1;
    if (!strcmp(s, "-o") || !strcmp(s, "--chip") || !strcmp(s, "--layer-group") || !strcmp(s, "--assume-dtype") ||
        !strcmp(s, "--max-group")) {
      if (i + 1 >= argc) return ct_tool_usage(CMD, "%s needs a value", s);
      int rc = parse_valued(s, argv[++i], a);
      if (rc) return rc;
    } else if (s[0] == '-' && s[1]) return ct_tool_usage(CMD, "unknown option \"%s\"", s);
    else if (!a->model) a->model = s;
    else return ct_tool_usage(CMD, "unexpected argument \"%s\"", s);
  }
  if (!a->model) return ct_tool_usage(CMD, "no model given");
  return 0;
}

/* Writes the CSV to out (temporary name, renamed on success) or stdout. */
static ct_status write_plan(const ct_lg_plan *p, const char *out, ct_diag *d) {
  if (!out) return ct_lg_write_csv(p, stdout) ? CT_OK : ct_diag_set(d, CT_ERR_INPUT, "cannot write stdout");
  size_t n = strlen(out) + 5;
  char *tmp = malloc(n);
  if (!tmp) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  snprintf(tmp, n, "%s.tmp", out);
  FILE *f = fopen(tmp, "w");
  bool ok = f && ct_lg_write_csv(p, f);
  if (f && fclose(f)) ok = false;
  if (ok && rename(tmp, out)) ok = false;
  if (!ok) remove(tmp);
  free(tmp);
  return ok ? CT_OK : ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write", out);
}

int ct_cmd_plan(int argc, char **argv) {
  plan_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_diag d;
  ct_chip chip;
  ct_graph *g = NULL;
  ct_lg_plan *p = NULL;
  ct_status st = ct_chip_load(a.chip, &chip, &d);
  if (!st) st = ct_ir_load_verified(a.model, &g, &d);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (!st) st = ct_lg_plan_graph(g, &chip, &a.opt, &p, &d);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (!st) st = write_plan(p, a.out, &d);
  if (!st)
    fprintf(stderr, "plan %s (%s, %s): %d layers in %d groups, est. %lld cycles, DDR %lld bytes, LMEM peak %lld bytes, "
                    "GMEM %lld bytes, planned in %.3f s\n",
            a.model, chip.name, ct_lg_strategy_name(a.opt.strategy), p->n_layers, p->n_groups,
            (long long)p->total_cycles, (long long)p->ddr_bytes, (long long)p->lmem_peak, (long long)p->gmem_bytes,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  ct_lg_plan_free(p);
  ct_graph_free(g);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
