/* kern_misc_harness.c: the one-op harness of kern_misc_harness.h. */
#include "tests/kern_misc_harness.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A tensor of dtype dt and shape (nd dims) with values vals (NULL = zeros). */
ct_tensor *mk(ct_dtype dt, int nd, const int64_t *shape, const double *vals) {
  ct_tensor *t = ct_tensor_new(dt, nd, shape, NULL);
  ck_assert_ptr_nonnull(t);
  if (vals)
    for (int64_t i = 0; i < ct_tensor_numel(t); i++) ct_tensor_set_f64(t, i, vals[i]);
  return t;
}

/* Builds op kind with inputs ins (NULL = absent; constant when the bit of const_mask is set,
 * else a plain value of that shape) and n_out outputs. Takes ownership of ins. */
tc tc_new(ct_op_kind kind, int n_in, ct_tensor **ins, unsigned nonconst_mask, int n_out) {
  tc c;
  memset(&c, 0, sizeof c);
  c.g = ct_graph_new("t", "top");
  ct_value *iv[8] = {NULL}, *ov[4] = {NULL};
  for (int i = 0; i < n_in; i++) {
    if (!ins[i]) continue;
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    if (nonconst_mask & (1u << i)) {
      iv[i] = ct_graph_add_value(c.g, name, ins[i]->dtype, ins[i]->ndim, ins[i]->shape);
      ct_graph_add_op(c.g, CT_OP_INPUT, name, 0, NULL, 1, &iv[i]);
      ct_tensor_free(ins[i]);
    } else {
      ck_assert(ct_tensor_set_name(ins[i], name));
      iv[i] = ct_graph_add_weight(c.g, name, ins[i]);
    }
  }
  for (int k = 0; k < n_out; k++) ov[k] = ct_graph_add_value(c.g, NULL, CT_F32, -1, NULL);
  c.op = ct_graph_add_op(c.g, kind, "node0", n_in, iv, n_out, ov);
  ck_assert_ptr_nonnull(c.op);
  return c;
}

/* Runs the shape function then the kernel; returns the first failing status. */
ct_status tc_run(tc *c) {
  ct_shape_fn sf = ct_shape_fn_of(c->op->kind);
  ct_kernel_fn kf = ct_kernel_of(c->op->kind);
  ck_assert_msg(sf && kf, "op %s lacks shape fn or kernel", ct_op_name(c->op->kind));
  ct_status st = sf(c->g, c->op, &c->d);
  if (st) return st;
  ct_tensor *ins[8] = {NULL};
  for (int i = 0; i < c->op->n_in; i++) ins[i] = c->op->in[i] ? c->op->in[i]->data : NULL;
  for (int k = 0; k < c->op->n_out; k++) {
    ct_value *v = c->op->out[k];
    c->out[k] = ct_tensor_new(v->dtype, v->ndim, v->shape, NULL);
    ck_assert_ptr_nonnull(c->out[k]);
  }
  ct_kernel_ctx ctx = {.threads = 1};
  return kf(c->op, ins, c->out, &ctx, &c->d);
}

void tc_free(tc *c) {
  for (int k = 0; k < 4; k++) ct_tensor_free(c->out[k]);
  ct_graph_free(c->g);
}

/* Asserts t has shape (nd dims) and values want (tolerance 1e-6 relative). */
void expect(const ct_tensor *t, ct_dtype dt, int nd, const int64_t *shape, const double *want) {
  ck_assert_int_eq(t->dtype, dt);
  ck_assert_int_eq(t->ndim, nd);
  for (int i = 0; i < nd; i++) ck_assert_int_eq(t->shape[i], shape[i]);
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) {
    double g = ct_tensor_get_f64(t, i), w = want[i];
    if (isnan(w)) {
      ck_assert_msg(isnan(g), "element %lld: got %g, want NaN", (long long)i, g);
      continue;
    }
    ck_assert_msg(fabs(g - w) <= 1e-6 * (1 + fabs(w)), "element %lld: got %.9g, want %.9g", (long long)i, g, w);
  }
}

/* Runs a one-input one-output op and checks the result. */
void run1(ct_op_kind k, ct_tensor *x, ct_dtype dt, int nd, const int64_t *shape, const double *want) {
  tc c = tc_new(k, 1, (ct_tensor *[]){x}, 0, 1);
  ck_assert_int_eq(tc_run(&c), CT_OK);
  expect(c.out[0], dt, nd, shape, want);
  tc_free(&c);
}
