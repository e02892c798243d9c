/* exec_kern.c: row kernels of the functional units (see exec_kern.h). Loops are written per
 * storage type so that the compiler vectorizes them; every integer rounding and saturation
 * is quant/'s (ct_quant_requant_act, ct_quant_saturate), every float store elem.c's. */
#include "cmodel/exec_kern.h"

#include <string.h>

#include "cmodel/elem.h"
#include "common/clones.h"
#include "isa/isa.h"
#include "quant/igemm.h"
#include "quant/quant.h"

/* One typed loop per storage type: R is the C type of the result row. */
#define LOAD_CASES(R)                                                                     \
  switch (dt) {                                                                           \
    case CT_I8:                                                                           \
      for (int64_t j = 0; j < n; j++) out[j] = (R)((int8_t)p[i0 + j] - sub);             \
      return;                                                                             \
    case CT_U8: case CT_BOOL:                                                             \
      for (int64_t j = 0; j < n; j++) out[j] = (R)(p[i0 + j] - sub);                      \
      return;                                                                             \
    case CT_I16:                                                                          \
      for (int64_t j = 0; j < n; j++) {                                                   \
        int16_t v;                                                                        \
        memcpy(&v, p + 2 * (i0 + j), 2);                                                  \
        out[j] = (R)(v - sub);                                                            \
      }                                                                                   \
      return;                                                                             \
    case CT_U16:                                                                          \
      for (int64_t j = 0; j < n; j++) {                                                   \
        uint16_t v;                                                                       \
        memcpy(&v, p + 2 * (i0 + j), 2);                                                  \
        out[j] = (R)(v - sub);                                                            \
      }                                                                                   \
      return;                                                                             \
    case CT_I32:                                                                          \
      for (int64_t j = 0; j < n; j++) {                                                   \
        int32_t v;                                                                        \
        memcpy(&v, p + 4 * (i0 + j), 4);                                                  \
        out[j] = (R)((int64_t)v - sub);                                                   \
      }                                                                                   \
      return;                                                                             \
    default:                                                                              \
      for (int64_t j = 0; j < n; j++) out[j] = (R)(ct_elem_geti(p, dt, i0 + j) - sub);    \
      return;                                                                             \
  }

void ct_kern_load_i16(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, int32_t sub, int16_t *out) {
  LOAD_CASES(int16_t)
}

void ct_kern_load_i32(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, int32_t sub, int32_t *out) {
  LOAD_CASES(int32_t)
}

void ct_kern_load_i64(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, int64_t sub, int64_t *out) {
  LOAD_CASES(int64_t)
}
#undef LOAD_CASES

void ct_kern_load_f32(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, float *out) {
  if (dt == CT_F32) {
    memcpy(out, p + 4 * i0, (size_t)n * 4);
    return;
  }
  for (int64_t j = 0; j < n; j++) out[j] = ct_elem_getf(p, dt, i0 + j);
}

void ct_kern_store_i32(uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, const int32_t *v) {
  switch (dt) {
    case CT_I8: case CT_U8: case CT_BOOL:
      for (int64_t j = 0; j < n; j++) p[i0 + j] = (uint8_t)v[j];
      return;
    case CT_I16: case CT_U16:
      for (int64_t j = 0; j < n; j++) {
        uint16_t u = (uint16_t)v[j];
        memcpy(p + 2 * (i0 + j), &u, 2);
      }
      return;
    case CT_I32: case CT_U32:
      memcpy(p + 4 * i0, v, (size_t)n * 4);
      return;
    default:
      for (int64_t j = 0; j < n; j++) ct_elem_seti(p, dt, i0 + j, v[j]);
      return;
  }
}

void ct_kern_store_f32_result(uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, const float *v) {
  for (int64_t j = 0; j < n; j++) ct_elem_setf_result(p, dt, i0 + j, v[j]);
}

bool ct_kern_gemm16(const int16_t *w, const int16_t *col, int64_t M, int64_t K, int64_t P, int32_t *acc) {
  return ct_quant_igemm(M, P, K, w, K, col, P, NULL, acc, P);
}

static int32_t rd_i32(const uint8_t *p, int64_t i) {
  int32_t v;
  memcpy(&v, p + 4 * i, 4);
  return v;
}

void ct_kern_requant_store(uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, const int64_t *v, int32_t m, int s,
                           int32_t zp, int64_t act, int32_t hi) {
  size_t eb = ct_dtype_size(dt);
  uint8_t *y = p + (uint64_t)i0 * eb;
  if (((uintptr_t)y % eb) == 0 && ct_quant_requant_act_row(v, n, m, s, zp, (ct_quant_act)act, hi, dt, y)) return;
  for (int64_t j = 0; j < n; j++)
    ct_elem_seti(p, dt, i0 + j, ct_quant_requant_act(v[j], m, s, zp, (ct_quant_act)act, hi, dt));
}

/* Requant + act of v[0 .. n) with one (m, s) into the output row at i0. */
static void requant_row(const ct_kern_epi *e, const int64_t *v, int64_t i0, int64_t n, int32_t m, int s) {
  ct_kern_requant_store(e->mem + e->out, e->dt_out, i0, n, v, m, s, (int32_t)e->zp_out, e->act, (int32_t)e->act_hi);
}

static void rq_of(const ct_kern_epi *e, int64_t k, int32_t *m, int *s) {
  *m = rd_i32(e->mem + e->rq, 2 * k);
  int32_t sh = rd_i32(e->mem + e->rq, 2 * k + 1);
  *s = sh < 0 ? 0 : sh > 63 ? 63 : (int)sh;
}

void ct_kern_epi_row(const ct_kern_epi *e, int64_t *v, int64_t i0, int64_t n, int64_t ch, bool per_col) {
  if (e->acc_in)
    for (int64_t j = 0; j < n; j++) v[j] += rd_i32(e->mem + e->acc, i0 + j);
  if (e->has_bias) {
    if (per_col)
      for (int64_t j = 0; j < n; j++) v[j] += rd_i32(e->mem + e->bias, j);
    else
      for (int64_t j = 0, b = rd_i32(e->mem + e->bias, ch); j < n; j++) v[j] += b;
  }
  for (int64_t j = 0; j < n; j++) v[j] = ct_quant_saturate(v[j], CT_I32);
  if (e->rq_mode == CT_ISA_RQ_NONE) {
    for (int64_t j = 0; j < n; j++) ct_elem_seti(e->mem + e->out, e->dt_out, i0 + j, ct_quant_saturate(v[j], e->dt_out));
    return;
  }
  int32_t m;
  int s;
  if (e->rq_mode != CT_ISA_RQ_CHANNEL || !per_col) {
    rq_of(e, e->rq_mode == CT_ISA_RQ_CHANNEL ? ch : 0, &m, &s);
    requant_row(e, v, i0, n, m, s);
    return;
  }
  for (int64_t j = 0; j < n; j++) {
    rq_of(e, j, &m, &s);
    requant_row(e, v + j, i0 + j, 1, m, s);
  }
}
