/* kern_nn_harness.c: single-op graph harness for the neural-network kernel tests (see
 * kern_nn_harness.h). */
#include "tests/kern_nn_harness.h"

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/shape.h"

knh *knh_new(ct_op_kind kind, int n_in, ct_tensor *const *ins, int n_out) {
  knh *h = calloc(1, sizeof *h);
  ck_assert_ptr_nonnull(h);
  h->g = ct_graph_new("t", "top");
  h->threads = 1;
  ct_value *iv[KNH_MAX_IN] = {NULL}, *ov[KNH_MAX_OUT] = {NULL};
  ck_assert(n_in <= KNH_MAX_IN && n_out <= KNH_MAX_OUT);
  for (int i = 0; i < n_in; i++) {
    if (!ins[i]) continue;
    char nm[16];
    snprintf(nm, sizeof nm, "in%d", i);
    iv[i] = ct_graph_add_weight(h->g, nm, ct_tensor_clone(ins[i]));
    ck_assert_ptr_nonnull(iv[i]);
  }
  for (int i = 0; i < n_out; i++) ov[i] = ct_graph_add_value(h->g, NULL, CT_F32, -1, NULL);
  h->op = ct_graph_add_op(h->g, kind, "n0", n_in, iv, n_out, ov);
  ck_assert_ptr_nonnull(h->op);
  return h;
}

void knh_ints(knh *h, const char *name, int n, ...) {
  int64_t v[16];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) v[i] = va_arg(ap, long long);
  va_end(ap);
  ck_assert(ct_op_set_ints(h->g, h->op, name, n, v));
}

void knh_int(knh *h, const char *name, int64_t v) { ck_assert(ct_op_set_int(h->g, h->op, name, v)); }
void knh_float(knh *h, const char *name, double v) { ck_assert(ct_op_set_float(h->g, h->op, name, v)); }
void knh_str(knh *h, const char *name, const char *v) { ck_assert(ct_op_set_string(h->g, h->op, name, v)); }

ct_status knh_shape(knh *h) {
  ct_shape_fn f = ct_shape_fn_of(h->op->kind);
  ck_assert_ptr_nonnull(f);
  ct_diag_clear(&h->d);
  return f(h->g, h->op, &h->d);
}

ct_status knh_run(knh *h) {
  ct_status st = knh_shape(h);
  if (st) return st;
  ct_tensor *ins[KNH_MAX_IN] = {NULL};
  for (int i = 0; i < h->op->n_in; i++) ins[i] = h->op->in[i] ? h->op->in[i]->data : NULL;
  for (int i = 0; i < h->op->n_out; i++) {
    const ct_value *v = h->op->out[i];
    h->out[i] = ct_tensor_new(v->dtype, v->ndim, v->shape, NULL);
    ck_assert_ptr_nonnull(h->out[i]);
  }
  ct_kernel_fn k = ct_kernel_of(h->op->kind);
  ck_assert_ptr_nonnull(k);
  ct_kernel_ctx ctx = {.threads = h->threads, .pool = h->threads > 1 ? ct_workpool_new(h->threads) : NULL,
                       .post = h->post};
  ct_status rc = k(h->op, ins, h->out, &ctx, &h->d);
  ct_workpool_free(ctx.pool);
  return rc;
}

void knh_free(knh *h) {
  for (int i = 0; i < KNH_MAX_OUT; i++) ct_tensor_free(h->out[i]);
  ct_graph_free(h->g);
  free(h);
}

ct_tensor *knh_rand(int ndim, const int64_t *shape, uint32_t *seed) {
  ct_tensor *t = ct_tensor_new(CT_F32, ndim, shape, NULL);
  ck_assert_ptr_nonnull(t);
  float *p = t->data;
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) {
    uint32_t x = *seed;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    *seed = x;
    p[i] = (float)((double)x / 2147483648.0 - 1.0);
  }
  return t;
}

ct_tensor *knh_vals(int ndim, const int64_t *shape, const float *vals) {
  ct_tensor *t = ct_tensor_new(CT_F32, ndim, shape, NULL);
  ck_assert_ptr_nonnull(t);
  float *p = t->data;
  for (int64_t i = 0; i < ct_tensor_numel(t); i++) p[i] = vals[i];
  return t;
}

void knh_expect_close(const ct_tensor *t, const float *want, int64_t n, double atol, double rtol) {
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(ct_tensor_numel(t), n);
  for (int64_t i = 0; i < n; i++) {
    double a = ct_tensor_get_f64(t, i), b = want[i];
    ck_assert_msg(fabs(a - b) <= atol + rtol * fabs(b), "element %lld: got %.7g, want %.7g", (long long)i, a, b);
  }
}

void knh_expect_shape(const ct_tensor *t, int ndim, const int64_t *shape) {
  ck_assert_int_eq(t->ndim, ndim);
  for (int i = 0; i < ndim; i++) ck_assert_int_eq(t->shape[i], shape[i]);
}
