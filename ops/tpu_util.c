/* tpu_util.c: attribute and type helpers of the integer Tpu kernels (tpu_util.h). */
#include <string.h>

#include "ops/ops_util.h"
#include "ops/tpu_util.h"
#include "common/clones.h"

bool ct_tq_is_storage(ct_dtype dt) {
  return dt == CT_I8 || dt == CT_U8 || dt == CT_I16 || dt == CT_U16 || dt == CT_I32;
}

/* One loop per storage type: the loads are then plain typed arrays that compilers vectorize
 * (CT_CLONES_V3). */
#define GET_ROW(D)                                                                      \
  switch (t->dtype) {                                                                   \
  case CT_I8: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const int8_t *)t->data)[off + i] - z); break;    \
  case CT_U8: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const uint8_t *)t->data)[off + i] - z); break;   \
  case CT_I16: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const int16_t *)t->data)[off + i] - z); break;  \
  case CT_U16: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const uint16_t *)t->data)[off + i] - z); break; \
  case CT_I32: for (int64_t i = 0; i < n; i++) dst[i] = (D)(((const int32_t *)t->data)[off + i] - z); break;  \
  default: for (int64_t i = 0; i < n; i++) dst[i] = (D)(0 - z); break;                 \
  }

CT_CLONES_V3 static void ct_tq_get_row_i32_clones(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int32_t *dst) {
  GET_ROW(int32_t)
}

void ct_tq_get_row_i32(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int32_t *dst) {
  ct_tq_get_row_i32_clones(t, off, n, z, dst);
}

CT_CLONES_V3 static void ct_tq_get_row_i16_clones(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int16_t *dst) {
  GET_ROW(int16_t)
}

void ct_tq_get_row_i16(const ct_tensor *t, int64_t off, int64_t n, int32_t z, int16_t *dst) {
  ct_tq_get_row_i16_clones(t, off, n, z, dst);
}
#undef GET_ROW

#define SET_ROW(T)                                                            \
  for (int64_t i = 0; i < n; i++) ((T *)t->data)[off + i] = (T)src[i];        \
  break;

CT_CLONES_V3 static void ct_tq_set_row_clones(ct_tensor *t, int64_t off, int64_t n, const int32_t *src) {
  switch (t->dtype) {
  case CT_I8: SET_ROW(int8_t)
  case CT_U8: SET_ROW(uint8_t)
  case CT_I16: SET_ROW(int16_t)
  case CT_U16: SET_ROW(uint16_t)
  case CT_I32: SET_ROW(int32_t)
  default: break;
  }
}
#undef SET_ROW

void ct_tq_set_row(ct_tensor *t, int64_t off, int64_t n, const int32_t *src) { ct_tq_set_row_clones(t, off, n, src); }

ct_status ct_tq_act(const ct_op *op, ct_quant_act *act, int32_t *hi, ct_diag *d) {
  const char *a = ct_attr_act_act(op); /* act set or rq set: the same names and defaults */
  *hi = (int32_t)ct_attr_act_qact_hi(op);
  if (!strcmp(a, "none")) *act = CT_QUANT_ACT_NONE;
  else if (!strcmp(a, "relu")) *act = CT_QUANT_ACT_RELU;
  else if (!strcmp(a, "clip") || !strcmp(a, "relu6")) *act = CT_QUANT_ACT_CLAMP;
  else return ct_ops_err(d, CT_ERR_INPUT, op, "fused activation \"%s\" has no integer form", a);
  return CT_OK;
}

ct_status ct_tq_rq(const ct_op *op, int64_t n, int32_t *m, int *s, ct_diag *d) {
  int nm = 0, ns = 0;
  const int64_t *mv = ct_attr_rq_multiplier(op, &nm); /* rq, act and convt sets: the same lists */
  const int64_t *sv = ct_attr_rq_rshift(op, &ns);
  if (!mv || !sv || nm != ns || (nm != n && nm != 1))
    return ct_ops_err(d, CT_ERR_INPUT, op, "needs multiplier and rshift with %lld (or 1) entries, has %d and %d",
                     (long long)n, nm, ns);
  for (int64_t i = 0; i < n; i++) {
    int64_t mm = mv[nm == 1 ? 0 : i], ss = sv[nm == 1 ? 0 : i];
    if (ss < 0 || ss > 63 || mm < INT32_MIN || mm > INT32_MAX)
      return ct_ops_err(d, CT_ERR_INPUT, op, "requant entry %lld (%lld, %lld) out of range", (long long)i,
                       (long long)mm, (long long)ss);
    m[i] = (int32_t)mm;
    s[i] = (int)ss;
  }
  return CT_OK;
}

ct_status ct_tq_need_int(const ct_op *op, ct_tensor *const *in, ct_tensor **out, int n_in, ct_diag *d) {
  for (int i = 0; i < n_in; i++)
    if (in[i] && !ct_tq_is_storage(in[i]->dtype))
      return ct_ops_err(d, CT_ERR_INPUT, op, "input %d is %s, the integer kernel needs integer storage", i,
                       ct_dtype_name(in[i]->dtype));
  for (int i = 0; i < op->n_out; i++)
    if (out[i] && !ct_tq_is_storage(out[i]->dtype))
      return ct_ops_err(d, CT_ERR_INPUT, op, "output %d is %s, the integer kernel needs integer storage", i,
                       ct_dtype_name(out[i]->dtype));
  return CT_OK;
}
