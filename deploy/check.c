/* check.c: a program's cmodel run against the Tpu reference interpreter (flow.h): outputs and,
 * with compare_all, every stored tensor bit for bit; outputs against a float reference file
 * by cosine / euclidean similarity; per-group figures of the run. */
#include "deploy/flow.h"

#include <stdlib.h>
#include <string.h>

#include "common/dequant.h"
#include "common/h5io.h"
#include "io/inputs.h"
#include "reference/interp.h"

/* Compares a reference value with the dump of the same name (its STOREs' bytes). */
static void compare_one(ct_deploy_run *r, const ct_tensor *ref, const char *name) {
  const ct_tensor *got = ct_tensor_list_find(&r->so.dumps, name);
  if (!got || !ref) return;
  r->compared++;
  size_t n = got->nbytes < ref->nbytes ? got->nbytes : ref->nbytes;
  int64_t es = (int64_t)ct_dtype_size(ref->dtype), bad = -1;
  if (got->nbytes != ref->nbytes) bad = (int64_t)n / es;
  for (size_t i = 0; i < n && bad < 0; i++)
    if (((const uint8_t *)got->data)[i] != ((const uint8_t *)ref->data)[i]) bad = (int64_t)i / es;
  if (bad < 0) return;
  if (!r->mismatched++)
    snprintf(r->first, sizeof r->first, "\"%s\": element %lld is %g, the reference %g (%zu bytes stored, %zu in the "
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
 * r->ref line per output; r->bad counts those below the tolerance. */
static ct_status check_ref_file(const char *path, const ct_graph *g0, const ct_compare_tol *tol, ct_deploy_run *r,
                                ct_diag *d) {
  const ct_tensor_list *got = &r->so.outputs;
  ct_tensor_list ref;
  ct_tensor_list_init(&ref);
  ct_status st = ct_h5_read(path, &ref, d);
  ct_compare_tol dflt = CT_COMPARE_TOL_DEFAULT;
  if (!st && !tol) {
    ct_compare_prec a = ct_compare_dump_prec((const ct_tensor *const *)ref.items, ref.n), b = graph_prec(g0);
    dflt = ct_compare_prec_tol(a > b ? a : b);
    tol = &dflt;
  }
  if (!st && !(r->ref = calloc((size_t)got->n + 1, sizeof *r->ref))) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int i = 0; !st && i < got->n; i++) {
    const ct_tensor *t = ct_tensor_list_find(&ref, got->items[i]->name);
    ct_tensor *g = NULL;
    if (!t) st = ct_diag_set(d, CT_ERR_INPUT, "%s: no tensor \"%s\"", path, got->items[i]->name);
    else st = ct_dequant(got->items[i], &g, d);
    if (st) break;
    ct_deploy_ref_line *l = &r->ref[r->n_ref++];
    ct_compare_verdict v = ct_compare_tensor(t, g, &l->m) ? CT_CMP_SHAPE : ct_compare_judge(&l->m, tol);
    l->name = got->items[i]->name;
    l->ok = ct_compare_passes(v, &l->m, tol);
    l->verdict = l->ok ? ct_compare_verdict_name(v) : "FAIL";
    r->bad += !l->ok;
    ct_tensor_free(g);
  }
  ct_tensor_list_free(&ref);
  return st;
}

/* Per-group figures of a finished run: its span — from its first instruction's start, or
 * from the end of the groups before it when it starts earlier (its prefetched LOADs run
 * during the previous group: ct_lg_group.prefetched), to its last instruction's end; MACs and
 * DDR bytes summed over the group's layers from the cmodel's per-layer counters, so that they
 * count what the summary counts (MXU MACs: a DWCONV runs on the VPU and has none). */
static void group_figures(const ct_program *prog, int n_groups, ct_deploy_run *r) {
  for (uint32_t i = 0; i < r->so.res.n_ops && i < prog->n_insns; i++) {
    const ct_prog_debug *e = ct_program_debug_of(prog, &prog->insns[i]);
    if (!e || e->group < 0 || e->group >= n_groups || r->so.res.start[i] == UINT64_MAX) continue;
    ct_deploy_group_sim *gs = &r->gs[e->group];
    if (!gs->ran || r->so.res.start[i] < gs->start) gs->start = r->so.res.start[i];
    if (!gs->ran || r->so.res.end[i] > gs->end) gs->end = r->so.res.end[i];
    gs->ran = true;
  }
  uint64_t before = 0; /* the end of the groups so far */
  for (int gi = 0; gi < n_groups; gi++) {
    ct_deploy_group_sim *gs = &r->gs[gi];
    if (!gs->ran) continue;
    if (gs->start < before && before < gs->end) gs->start = before;
    if (gs->end > before) before = gs->end;
  }
  for (int k = 0; k < r->so.n_layers; k++) {
    const ct_layer_counters *l = &r->so.layers[k];
    if (l->group < 0 || l->group >= n_groups) continue;
    ct_deploy_group_sim *gs = &r->gs[l->group];
    gs->ddr += l->ddr_bytes_read + l->ddr_bytes_written;
    gs->macs += l->macs;
    gs->mxu_ideal += l->mxu_ideal;
    gs->stall_sem += l->stall[CT_STALL_SEM];
    for (int e = 0; e < r->so.res.counters.n_engines; e++) {
      const char *n = r->so.res.counters.engines[e].name;
      uint64_t *to = !strcmp(n, "mxu") ? &gs->busy_mxu : !strcmp(n, "vpu") ? &gs->busy_vpu : &gs->busy_dma;
      *to += l->busy[e];
    }
  }
}

/* The cmodel's outputs against the reference's, bit for bit: r->first_diff, r->bad. */
static void compare_outputs(const ct_tensor_list *ref_out, ct_deploy_run *r) {
  for (int i = 0; i < r->so.outputs.n; i++) {
    const ct_tensor *s = r->so.outputs.items[i], *t = ct_tensor_list_find(ref_out, s->name);
    if (!t || t->nbytes != s->nbytes || memcmp(t->data, s->data, s->nbytes))
      if (!r->bad++) r->first_diff = s->name;
  }
}

ct_status ct_deploy_check(const ct_deploy_check_options *o, const ct_graph *g, const ct_chip *chip,
                          const ct_program *prog, int n_groups, ct_deploy_run *r, ct_diag *d) {
  if (!(r->gs = calloc((size_t)n_groups + 1, sizeof *r->gs))) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  ct_tensor_list in, ref_out;
  ct_tensor_list_init(&in), ct_tensor_list_init(&ref_out);
  ct_status st = ct_inputs_load(g, o->files, o->n_files, &in, d);
  ct_sim_run_options so = {.dump_all = o->compare_all, .progress = o->progress, .progress_user = o->progress_user};
  if (!st) st = ct_sim_run(chip, prog, &in, &so, &r->so, d);
  ct_ref_options ro = {.threads = 1};
  if (o->compare_all) ro.on_op = on_op, ro.on_op_user = r;
  if (!st) st = ct_ref_run(g, &ro, &in, &ref_out, d);
  if (!st) compare_outputs(&ref_out, r);
  if (!st && o->ref) st = check_ref_file(o->ref, g, o->tol, r, d);
  r->done = !st;
  if (!st && (r->bad || r->mismatched))
    st = ct_diag_set(d, CT_ERR_CHECK, "%d outputs and %d stored tensors differ from the reference", r->bad, r->mismatched);
  if (!st) r->simulated = true, group_figures(prog, n_groups, r);
  ct_tensor_list_free(&in), ct_tensor_list_free(&ref_out);
  return st;
}

void ct_deploy_run_free(ct_deploy_run *r) {
  ct_sim_run_output_free(&r->so);
  free(r->gs), free(r->ref);
  memset(r, 0, sizeof *r);
}
