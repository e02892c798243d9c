/* cmd_eval.c: `ctpu eval MODEL --dataset D [--agreement OTHER]`: top-1 / top-5 accuracy of a
 * classifier over a labeled data set (io/dataset.h) with the reference interpreter
 * (ptq/eval.h), and the top-1 agreement between two models. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/heap.h"
#include "io/dataset.h"
#include "ir/text.h"
#include "ops/verify.h"
#include "ptq/eval.h"
#include "tools/tools.h"

#define CMD "eval"

typedef struct eval_args {
  const char *model, *other, *dataset;
  long long input_num;
  int threads;
} eval_args;

static const ct_opt opts[] = {
    CT_OPT_NEED_("--dataset", "DIR|FILE.h5", eval_args, dataset, "data set",
                 "a folder with labels.tsv (file TAB class_index), or an HDF5 file with `images` and `labels`; images "
                 "are preprocessed as the Input op says"),
    CT_OPT_LLONG_("--input-num", "N", eval_args, input_num, 1, LLONG_MAX, "use the first N samples (default all)"),
    CT_OPT_STR_("--agreement", "OTHER", eval_args, other,
                "also run OTHER on the same inputs and report the share of samples whose top-1 classes agree (the "
                "data set may then be unlabeled)"),
    CT_OPT_INT_("--threads", "N", eval_args, threads, 1, 64, "samples run in parallel (default 1)"),
};

const ct_cmd_spec ct_cmd_eval_spec = CT_CMD_SPEC1(
    CMD, "MODEL --dataset DIR|FILE.h5 [--input-num N] [--agreement OTHER] [--threads N]",
    "top-1 / top-5 accuracy of MODEL's first output (class scores) over a labeled data set",
    "model", eval_args, model, opts);

static void progress(void *user, int64_t done, int64_t total) {
  (void)user;
  fprintf(stderr, "\rctpu eval: %lld/%lld", (long long)done, (long long)total);
  if (done == total) fputc('\n', stderr);
}

static ct_status load_sample(void *user, int64_t i, ct_tensor_list *in, ct_diag *d) {
  return ct_dataset_load(user, i, in, d);
}

static ct_status evaluate(const eval_args *a, const ct_graph *g, const ct_graph *other, ct_dataset *ds, ct_diag *d) {
  int64_t n = ct_dataset_size(ds);
  if (a->input_num > 0 && a->input_num < n) n = a->input_num;
  bool labeled = ct_dataset_has_labels(ds);
  if (!labeled && !other)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: the data set has no labels (labels.tsv, or `labels` in the HDF5 file)", a->dataset);
  int64_t *labels = labeled ? malloc(sizeof *labels * (size_t)n) : NULL;
  if (labeled && !labels) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int64_t i = 0; labeled && i < n; i++) labels[i] = ct_dataset_label(ds, i);
  ct_eval_options o = {.threads = a->threads};
  if (ct_tool_isatty()) o.progress = progress;
  ct_eval_result r;
  ct_status st = ct_eval(g, other, n, load_sample, ds, labels, &o, &r, d);
  free(labels);
  if (st) return st;
  printf("samples %lld\n", (long long)r.n);
  if (labeled) {
    printf("top1 %.4f (%lld)\n", (double)r.top1 / (double)r.n, (long long)r.top1);
    printf("top5 %.4f (%lld)\n", (double)r.top5 / (double)r.n, (long long)r.top5);
  }
  if (other) printf("agreement %.4f (%lld)\n", (double)r.agree / (double)r.n, (long long)r.agree);
  if (other) printf("cosine mean %.6f min %.6f\n", r.mean_cos, r.min_cos);
  return CT_OK;
}

int ct_cmd_eval(int argc, char **argv) {
  eval_args a = {.threads = 1};
  int rc = ct_opts_parse(&ct_cmd_eval_spec, argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  ct_heap_keep_freed();
  ct_diag d;
  ct_diag_clear(&d);
  ct_graph *g = NULL, *other = NULL;
  ct_dataset *ds = NULL;
  ct_status st = ct_ir_load_verified(a.model, &g, &d);
  if (st == CT_OK && a.other) st = ct_ir_load_verified(a.other, &other, &d);
  if (st == CT_OK) st = ct_dataset_open(a.dataset, g, &ds, &d);
  if (st == CT_OK) st = evaluate(&a, g, other, ds, &d);
  ct_dataset_free(ds);
  ct_graph_free(g);
  ct_graph_free(other);
  return st ? ct_tool_fail(CMD, &d) : 0;
}
