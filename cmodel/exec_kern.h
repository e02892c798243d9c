/* exec_kern.h: row kernels of the functional units (cmodel/exec_kern.c): typed loads and
 * stores of whole rows of a dense LMEM operand (the dtype switch once per row, not per
 * element), the int16 × int16 → int32 GEMM of CONV / MATMUL, and the integer MAC epilogue
 * (acc_in, bias, int32 saturation, then quant/'s ct_quant_requant_act). Elements are stored
 * little-endian at any byte address (docs/architecture.md §4). */
#ifndef CT_SIM_EXEC_KERN_H
#define CT_SIM_EXEC_KERN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/tensor.h"

/* out[j] = element i0 + j of the integer array of type dt at p, minus sub, for j < n
 * (ct_elem_geti semantics; the caller guarantees the difference fits int16 / int32). */
void ct_kern_load_i16(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, int32_t sub, int16_t *out);
void ct_kern_load_i32(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, int32_t sub, int32_t *out);
void ct_kern_load_i64(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, int64_t sub, int64_t *out);
/* out[j] = element i0 + j as float (ct_elem_getf semantics). */
void ct_kern_load_f32(const uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, float *out);
/* Stores v[j] (already in dt's range) as element i0 + j of integer type dt (ct_elem_seti). */
void ct_kern_store_i32(uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, const int32_t *v);
/* Stores v[j] as element i0 + j of float type dt: ct_elem_setf_result (canonical NaN). */
void ct_kern_store_f32_result(uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, const float *v);

/* acc[o][p] = Σ_k w[o][k] · col[k][p] for o < M, p < P (acc is M × P, row-major), by
 * quant/igemm.c (the Tpu reference's GEMM). The caller guarantees that no product or partial
 * sum leaves int32 (the integer sum is exact, so the order of the terms does not matter).
 * False (acc untouched) when out of memory. */
bool ct_kern_gemm16(const int16_t *w, const int16_t *col, int64_t M, int64_t K, int64_t P, int32_t *acc);

/* Elements i0 .. i0 + n − 1 of integer type dt at p = ct_quant_requant_act(v[j], m, s, zp, act,
 * hi, dt), through quant/'s row routine where it applies. */
void ct_kern_requant_store(uint8_t *p, ct_dtype dt, int64_t i0, int64_t n, const int64_t *v, int32_t m, int s,
                           int32_t zp, int64_t act, int32_t hi);

/* The integer MAC epilogue (CONV, DWCONV, MATMUL; docs/cmodel.md "Functional semantics"). */
typedef struct ct_kern_epi {
  uint8_t *mem;           /* LMEM base */
  bool acc_in, has_bias;
  int64_t rq_mode;        /* CT_ISA_RQ_* */
  int64_t act, zp_out, act_hi;
  uint64_t acc, bias, rq, out; /* LMEM addresses */
  ct_dtype dt_out;
} ct_kern_epi;

/* Output elements i0 .. i0 + n − 1 from their exact sums v[0 .. n) (v is overwritten):
 * + acc_in partial sums, + bias, saturated to int32, then requant + act by the (m, s) of rq
 * (s clamped to 0..63) or stored raw (rq_mode none, saturated to dt_out). The channel of
 * element j is ch (per_col false) or j (per_col: a MATMUL row, channel = column). */
void ct_kern_epi_row(const ct_kern_epi *e, int64_t *v, int64_t i0, int64_t n, int64_t ch, bool per_col);

#endif
