/* samples.c: data-set samples and their float outputs, cosine sums of Tpu results, candidate
 * lowerings (samples.h). */
#include "ptq/samples.h"

#include <stdlib.h>

#include "common/dequant.h"
#include "io/dataset.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "reference/interp.h"

ct_status ct_ptq_samples_run(const ct_graph *g, int64_t n, ct_ref_sample_fn sample, void *user, ct_ptq_samples *s,
                             ct_diag *d) {
  s->inputs = calloc((size_t)n + 1, sizeof *s->inputs);
  s->ref_out = calloc((size_t)n + 1, sizeof *s->ref_out);
  ct_status st = s->inputs && s->ref_out ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int64_t i = 0; !st && i < n; i++) {
    s->n = i + 1;
    st = sample(user, i, &s->inputs[i], d);
    if (!st) st = ct_ref_run(g, &(ct_ref_options){0}, &s->inputs[i], &s->ref_out[i], d);
    if (st) ct_diag_prefix(d, "sample %lld: ", (long long)i);
  }
  return st;
}

static ct_status dataset_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  return ct_dataset_load(user, i, in, d);
}

ct_status ct_ptq_samples_load(const char *dataset, const ct_graph *g, int64_t max, ct_ptq_samples *s, ct_diag *d) {
  ct_dataset *ds = NULL;
  ct_status st = ct_dataset_open(dataset, g, &ds, d);
  if (st) return st;
  int64_t n = ct_dataset_size(ds);
  st = ct_ptq_samples_run(g, max < n ? max : n, dataset_sample, ds, s, d);
  ct_dataset_free(ds);
  return st;
}

void ct_ptq_samples_free(ct_ptq_samples *s) {
  for (int64_t i = 0; s->inputs && i < s->n; i++) ct_tensor_list_free(&s->inputs[i]);
  for (int64_t i = 0; s->ref_out && i < s->n; i++) ct_tensor_list_free(&s->ref_out[i]);
  free(s->inputs), free(s->ref_out);
  *s = (ct_ptq_samples){0};
}

ct_status ct_ptq_load_top(const char *model, const char *dataset, int64_t max, const char *why, ct_graph **g,
                          ct_ptq_samples *s, ct_diag *d) {
  ct_status st = ct_ir_load_verified(model, g, d);
  if (!st && ct_graph_dialect(*g) != CT_DIALECT_TOP) st = ct_diag_set(d, CT_ERR_INPUT, "%s: not a Top module (%s)", model, why);
  if (!st) st = ct_ptq_samples_load(dataset, *g, max, s, d);
  return st;
}

ct_status ct_ptq_cos_add(ct_cos_sums *sums, const ct_tensor *ref, const ct_tensor *t, ct_diag *d) {
  if (ct_tensor_numel(ref) != ct_tensor_numel(t)) return CT_OK;
  ct_tensor *x = NULL;
  ct_status st = ct_dequant(t, &x, d);
  if (!st) ct_eval_cos_add(sums, ref, x);
  ct_tensor_free(x);
  return st;
}

static ct_status load_file(void *user, ct_graph **out, ct_diag *d) { return ct_ir_load_verified(user, out, d); }

ct_ptq_source ct_ptq_source_file(const char *path) { return (ct_ptq_source){load_file, (void *)path}; }

ct_status ct_ptq_lower(const ct_ptq_source *src, const ct_lower_options *o, ct_graph **out, ct_diag *d) {
  *out = NULL;
  ct_status st = src->load(src->user, out, d);
  if (!st) st = ct_lower(*out, o, d);
  if (st) ct_graph_free(*out), *out = NULL;
  return st;
}
