/* lg_csv.c: the plan as CSV (`ctpu plan -o PLAN.csv`): one row per layer group and a total
 * row; columns in docs/backend.md. */
#include <stdio.h>

#include "compiler/backend/lg_int.h"

/* Writes s as a CSV field (quoted, quotes doubled). */
static void field(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void tile_shape(FILE *f, const ct_lg_group *g) {
  for (int d = 0; d < g->tile_ndim; d++) fprintf(f, "%s%lld", d ? "x" : "", (long long)g->tile_shape[d]);
}

bool ct_lg_write_csv(const ct_lg_plan *p, FILE *f) {
  fprintf(f, "group,layers,first_layer,last_layer,ops,axis,tile_shape,tiles,pipelined,steps,lmem_bytes,"
             "est_cycles,compute_cycles,ddr_load_bytes,ddr_store_bytes,ddr_bytes\n");
  for (int k = 0; k < p->n_groups; k++) {
    const ct_lg_group *g = &p->groups[k];
    const ct_op *a = p->layers[g->first].op, *b = p->layers[g->first + g->n_layers - 1].op;
    fprintf(f, "%d,%d,", k, g->n_layers);
    field(f, a->loc), fputc(',', f), field(f, b->loc), fputc(',', f);
    fputc('"', f);
    for (int li = g->first; li < g->first + g->n_layers; li++)
      fprintf(f, "%s%s", li > g->first ? " " : "", ct_op_name(p->layers[li].op->kind));
    fputc('"', f);
    fprintf(f, ",%d,", g->axis);
    tile_shape(f, g);
    fprintf(f, ",%lld,%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", (long long)g->n_tiles, g->pipelined ? 1 : 0,
            (long long)g->n_steps, (long long)g->lmem_bytes, (long long)g->cycles, (long long)g->compute_cycles,
            (long long)g->ddr_load_bytes, (long long)g->ddr_store_bytes,
            (long long)(g->ddr_load_bytes + g->ddr_store_bytes));
  }
  fprintf(f, "total,%d,,,,,,,,,%lld,%lld,,,,%lld\n", p->n_layers, (long long)p->lmem_peak, (long long)p->total_cycles,
          (long long)p->ddr_bytes);
  return !ferror(f);
}
