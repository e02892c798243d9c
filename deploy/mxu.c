/* mxu.c: the per-layer MXU report of `ctpu deploy --mxu-report` (mxu.h). */
#include "deploy/mxu.h"

#include <string.h>

#include "isa/cost.h"

/* The GEMM job of an MXU instruction (as cmodel/decode.c maps CONV and MATMUL). */
static bool insn_job(const ct_insn *in, ct_mxu_job *j) {
  if (in->op == CT_ISA_CONV) {
    const struct ct_insn_conv *c = &in->conv;
    int64_t g = c->groups ? c->groups : 1;
    *j = (ct_mxu_job){(uint64_t)g, (uint64_t)(c->n * c->oh * c->ow), (uint64_t)(c->ic / g * c->kh * c->kw),
                      (uint64_t)(c->oc / g), (ct_dtype)c->dt_in};
    return true;
  }
  if (in->op == CT_ISA_MATMUL) {
    const struct ct_insn_matmul *m = &in->matmul;
    *j = (ct_mxu_job){(uint64_t)(m->b_bcast ? 1 : m->batch), (uint64_t)(m->b_bcast ? m->batch * m->m : m->m),
                      (uint64_t)m->k, (uint64_t)m->n, (ct_dtype)m->dt_a};
    return true;
  }
  return false;
}

/* The whole layer's GEMM job from the op's shapes; false when op is not an MXU layer. */
static bool layer_job(const ct_op *op, ct_mxu_job *j) {
  const ct_value *x = op->in[0], *w = op->n_in > 1 ? op->in[1] : NULL, *y = op->out[0];
  if (op->kind == CT_OP_CONV && w && w->ndim == 4 && y->ndim == 4) {
    int64_t g = ct_attr_conv_group(op);
    if (g > 1 && g == y->shape[1]) return false; /* depthwise: DWCONV on the VPU */
    *j = (ct_mxu_job){(uint64_t)g, (uint64_t)(y->shape[0] * y->shape[2] * y->shape[3]),
                      (uint64_t)(w->shape[1] * w->shape[2] * w->shape[3]), (uint64_t)(y->shape[1] / g), x->dtype};
    return true;
  }
  if ((op->kind == CT_OP_GEMM || op->kind == CT_OP_MATMUL) && w && y->ndim >= 1 && x->ndim >= 1) {
    int64_t m = 1;
    for (int d = 0; d < y->ndim - 1; d++) m *= y->shape[d];
    int64_t k = x->shape[x->ndim - 1];
    if (op->kind == CT_OP_GEMM && ct_attr_gemm_transA(op)) k = x->shape[0];
    *j = (ct_mxu_job){1, (uint64_t)m, (uint64_t)k, (uint64_t)y->shape[y->ndim - 1], x->dtype};
    return true;
  }
  return false;
}

bool ct_deploy_mxu_report(const ct_lg_plan *p, const ct_program *prog, const ct_sim_result *res, FILE *f) {
  fprintf(f, "layer,op,pixels,red,filters,reps,scalesim_folds,scalesim_cycles,tiles,tile_folds,tile_cycles,"
             "sim_mxu_cycles,sim_over_scalesim\n");
  uint64_t tot[6] = {0};
  for (int li = 0; li < p->n_layers; li++) {
    const ct_op *op = p->layers[li].op;
    ct_mxu_job job;
    if (!op->loc || !layer_job(op, &job)) continue;
    ct_mxu_cost whole;
    ct_mxu_cost_of(&p->chip, &job, &whole);
    uint64_t tiles = 0, folds = 0, cyc = 0, sim = 0;
    for (uint32_t i = 0; i < prog->n_insns; i++) {
      const ct_insn *in = &prog->insns[i];
      const ct_prog_debug *e = ct_program_debug_of(prog, in);
      ct_mxu_job ij;
      if (!e || !e->layer || strcmp(e->layer, op->loc) || !insn_job(in, &ij)) continue;
      ct_mxu_cost c;
      ct_mxu_cost_of(&p->chip, &ij, &c);
      tiles++, folds += c.folds, cyc += c.cycles;
      if (res && i < res->n_ops && res->start[i] != UINT64_MAX) sim += res->end[i] - res->start[i];
    }
    fprintf(f, "\"%s\",%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.4f\n", op->loc, ct_op_name(op->kind),
            (unsigned long long)job.pixels, (unsigned long long)job.red, (unsigned long long)job.filters,
            (unsigned long long)job.reps, (unsigned long long)whole.folds, (unsigned long long)whole.cycles,
            (unsigned long long)tiles, (unsigned long long)folds, (unsigned long long)cyc, (unsigned long long)sim,
            whole.cycles ? (double)sim / (double)whole.cycles : 0.0);
    uint64_t row[6] = {whole.folds, whole.cycles, tiles, folds, cyc, sim};
    for (int k = 0; k < 6; k++) tot[k] += row[k];
  }
  fprintf(f, "total,,,,,,%llu,%llu,%llu,%llu,%llu,%llu,%.4f\n", (unsigned long long)tot[0], (unsigned long long)tot[1],
          (unsigned long long)tot[2], (unsigned long long)tot[3], (unsigned long long)tot[4], (unsigned long long)tot[5],
          tot[1] ? (double)tot[5] / (double)tot[1] : 0.0);
  return !ferror(f);
}
