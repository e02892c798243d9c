/* deploy_test.c: `ctpu deploy --test-input`: the program on the cmodel against the Tpu
 * reference run in-process, bit for bit (--compare-all: every stored tensor), the outputs
 * against a reference file by cosine / euclid (--test-reference), and the per-group CSV
 * (deploy_test.h). */
#include "tools/deploy_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dequant.h"
#include "common/h5io.h"
#include "io/inputs.h"
#include "reference/interp.h"
#include "tools/tools.h"

typedef struct cmp_ctx {
  const ct_tensor_list *dumps;
  int compared, mismatched;
  char first[512];
} cmp_ctx;

/* Compares a reference value with the dump of the same name (its STOREs' bytes). */
static void compare_one(cmp_ctx *c, const ct_tensor *ref, const char *name) {
  const ct_tensor *got = ct_tensor_list_find(c->dumps, name);
  if (!got || !ref) return;
  c->compared++;
  size_t n = got->nbytes < ref->nbytes ? got->nbytes : ref->nbytes;
  int64_t es = (int64_t)ct_dtype_size(ref->dtype), bad = -1;
  if (got->nbytes != ref->nbytes) bad = (int64_t)n / es;
  for (size_t i = 0; i < n && bad < 0; i++)
    if (((const uint8_t *)got->data)[i] != ((const uint8_t *)ref->data)[i]) bad = (int64_t)i / es;
  if (bad < 0) return;
  if (!c->mismatched++)
    snprintf(c->first, sizeof c->first, "\"%s\": element %lld is %g, the reference %g (%zu bytes stored, %zu in the "
             "reference)", name, (long long)bad, bad < ct_tensor_numel(got) ? ct_tensor_get_f64(got, bad) : 0.0,
             bad < ct_tensor_numel(ref) ? ct_tensor_get_f64(ref, bad) : 0.0, got->nbytes, ref->nbytes);
}

static ct_status on_op(void *user, const ct_op *op, const ct_tensor *const *in, const ct_tensor *const *out, ct_diag *d) {
  (void)in, (void)d;
  for (int i = 0; i < op->n_out; i++)
    if (op->out[i] && out[i]) compare_one(user, out[i], op->out[i]->name);
  return CT_OK;
}

/* The precision class of the Tpu module g (io/compare.h): its least precise value. */
static ct_compare_prec graph_prec(const ct_graph *g) {
  ct_compare_prec p = CT_PREC_F32;
  for (int i = 0; i < g->n_values; i++) {
    ct_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = g->values[i]->dtype, t.n_scale = g->values[i]->n_scale;
    ct_compare_prec q = ct_compare_prec_of(&t);
    if (q > p) p = q;
  }
  return p;
}

/* The program's outputs (dequantized, common/dequant.h) against the tensors of the same names
 * in path, by cosine and euclidean similarity under tol (model_deploy's --tolerance; NULL: the
 * default of the less precise of the module g and the file, as ctpu compare chooses it): one
 * line per output on stderr; *bad counts the outputs below the tolerance. CT_ERR_INPUT when
 * path cannot be read or lacks an output; CT_ERR_LIMIT out of memory. */
static ct_status check_ref_file(const char *path, const ct_graph *g, const ct_tensor_list *got, const ct_compare_tol *tol,
                                int *bad, ct_diag *d) {
  ct_tensor_list ref;
  ct_tensor_list_init(&ref);
  ct_status st = ct_h5_read(path, &ref, d);
  ct_compare_tol dflt = CT_COMPARE_TOL_DEFAULT;
  if (!st && !tol) {
    ct_compare_prec a = ct_compare_dump_prec((const ct_tensor *const *)ref.items, ref.n), b = graph_prec(g);
    dflt = ct_compare_prec_tol(a > b ? a : b);
  }
  for (int i = 0; !st && i < got->n; i++) {
    const ct_tensor *r = ct_tensor_list_find(&ref, got->items[i]->name);
    ct_tensor *x = NULL;
    if (!r) st = ct_diag_set(d, CT_ERR_INPUT, "%s: no tensor \"%s\"", path, got->items[i]->name);
    else st = ct_dequant(got->items[i], &x, d);
    if (st) break;
    ct_compare_metrics m;
    const ct_compare_tol *t = tol ? tol : &dflt;
    ct_compare_verdict v = ct_compare_tensor(r, x, &m) ? CT_CMP_SHAPE : ct_compare_judge(&m, t);
    bool ok = ct_compare_passes(v, &m, t);
    fprintf(stderr, "deploy: output \"%s\" vs %s: cosine %.6f, euclid %.6f, SQNR %.2f dB: %s\n", x->name, path, m.cosine,
            m.euclid, m.sqnr_db, ok ? ct_compare_verdict_name(v) : "FAIL");
    *bad += !ok;
    ct_tensor_free(x);
  }
  ct_tensor_list_free(&ref);
  return st;
}

/* The progress line while the cmodel runs (a terminal only: ct_tool_isatty). */
static void sim_progress(void *user, uint32_t started, uint32_t total) {
  (void)user;
  fprintf(stderr, "\rdeploy: simulating: %u / %u instructions started (%u %%)", started, total,
          total ? (unsigned)(100.0 * started / total) : 100u);
}

/* The per-group figures of the run (r->gs, n_groups entries): first start, last end, MACs of
 * each group's instructions, DDR bytes of its layers. */
static void group_figures(const ct_program *prog, ct_deploy_run *r, int n_groups) {
  for (uint32_t i = 0; i < r->so.res.n_ops && i < prog->n_insns; i++) {
    const ct_prog_debug *e = ct_program_debug_of(prog, &prog->insns[i]);
    if (!e || e->group < 0 || e->group >= n_groups || r->so.res.start[i] == UINT64_MAX) continue;
    ct_deploy_grp_sim *gsim = &r->gs[e->group];
    if (!gsim->ran || r->so.res.start[i] < gsim->start) gsim->start = r->so.res.start[i];
    if (!gsim->ran || r->so.res.end[i] > gsim->end) gsim->end = r->so.res.end[i];
    gsim->ran = true;
    gsim->macs += ct_isa_macs(&prog->insns[i]);
  }
  for (int k = 0; k < r->so.n_layers; k++) {
    const ct_layer_counters *l = &r->so.layers[k];
    if (l->group >= 0 && l->group < n_groups) r->gs[l->group].ddr += l->ddr_bytes_read + l->ddr_bytes_written;
  }
}

ct_status ct_deploy_test_run(const ct_deploy_test *a, const ct_graph *g, const ct_chip *chip, const ct_program *prog,
                             ct_deploy_run *r, int n_groups, ct_diag *d) {
  ct_tensor_list in, ref_out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&ref_out);
  ct_status st = ct_inputs_load(g, a->files, a->n_files, &in, d);
  ct_sim_run_options so = {.dump_all = a->compare_all};
  if (ct_tool_isatty()) so.progress = sim_progress;
  if (!st) st = ct_sim_run(chip, prog, &in, &so, &r->so, d);
  if (so.progress) fprintf(stderr, "\r\033[K");
  cmp_ctx cc = {.dumps = &r->so.dumps};
  ct_ref_options ro = {.threads = 1};
  if (a->compare_all) ro.on_op = on_op, ro.on_op_user = &cc;
  if (!st) st = ct_ref_run(g, &ro, &in, &ref_out, d);
  int bad = 0;
  for (int i = 0; !st && i < r->so.outputs.n; i++) {
    const ct_tensor *s = r->so.outputs.items[i], *t = ct_tensor_list_find(&ref_out, s->name);
    if (!t || t->nbytes != s->nbytes || memcmp(t->data, s->data, s->nbytes)) {
      if (!bad++) fprintf(stderr, "deploy: output \"%s\" differs from the Tpu reference\n", s->name);
    }
  }
  if (!st && a->ref) st = check_ref_file(a->ref, g, &r->so.outputs, a->tol, &bad, d);
  if (!st && a->compare_all)
    fprintf(stderr, "deploy: --compare-all: %d stored tensors compared, %d differ%s%s\n", cc.compared, cc.mismatched,
            cc.mismatched ? "; first: " : "", cc.mismatched ? cc.first : "");
  if (!st && (bad || cc.mismatched))
    st = ct_diag_set(d, CT_ERR_CHECK, "%d outputs and %d stored tensors differ from the reference", bad, cc.mismatched);
  if (!st) {
    r->simulated = true;
    group_figures(prog, r, n_groups);
  }
  ct_tensor_list_free(&in), ct_tensor_list_free(&ref_out);
  return st;
}

bool ct_deploy_groups_csv(const ct_lg_plan *p, const ct_deploy_run *r, FILE *f) {
  fprintf(f, "group,layers,first_layer,last_layer,tile_shape,tiles,lmem_bytes,est_cycles,sim_cycles,est_over_sim,"
             "mxu_util,ddr_bytes\n");
  double rc = (double)p->chip.mxu_rows * (double)p->chip.mxu_cols;
  for (int gi = 0; gi < p->n_groups; gi++) {
    const ct_lg_group *gr = &p->groups[gi];
    const ct_op *a = p->layers[gr->first].op, *b = p->layers[gr->first + gr->n_layers - 1].op;
    char shape[128] = "";
    for (int i = 0, o = 0; i < gr->tile_ndim && o < (int)sizeof shape - 24; i++)
      o += snprintf(shape + o, sizeof shape - (size_t)o, "%s%lld", i ? "x" : "", (long long)gr->tile_shape[i]);
    fprintf(f, "%d,%d,\"%s\",\"%s\",%s,%lld,%lld,%lld,", gi, gr->n_layers, a->loc ? a->loc : "", b->loc ? b->loc : "", shape,
            (long long)gr->n_tiles, (long long)gr->lmem_bytes, (long long)gr->cycles);
    const ct_deploy_grp_sim *s = r && r->simulated ? &r->gs[gi] : NULL;
    if (s && s->ran) {
      uint64_t cyc = s->end - s->start;
      fprintf(f, "%llu,%.4f,%.4f,%llu\n", (unsigned long long)cyc, cyc ? (double)gr->cycles / (double)cyc : 0.0,
              cyc ? (double)s->macs / ((double)cyc * rc) : 0.0, (unsigned long long)s->ddr);
    } else {
      fprintf(f, ",,,\n");
    }
  }
  return !ferror(f);
}

