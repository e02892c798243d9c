/* elem.h: reading and writing one element of a dense LMEM operand by dtype (little-endian
 * storage, docs/architecture.md §4): integers as int64, floats as float (bf16/f16 widened
 * exactly; stores round to nearest even through quant/). */
#ifndef CT_SIM_ELEM_H
#define CT_SIM_ELEM_H

#include <stdint.h>

#include "common/tensor.h"

/* Element i of an integer array of type dt (i8 u8 i16 u16 i32 u32 i64; others: 0). */
int64_t ct_elem_geti(const uint8_t *p, ct_dtype dt, int64_t i);
/* Stores v (already saturated by the caller) as element i of type dt (two's complement
 * truncation to the width). */
void ct_elem_seti(uint8_t *p, ct_dtype dt, int64_t i, int64_t v);
/* Element i as float: f32, bf16, f16 exactly; integer types converted. */
float ct_elem_getf(const uint8_t *p, ct_dtype dt, int64_t i);
/* Stores v as element i of float type dt (bf16/f16: round to nearest even). */
void ct_elem_setf(uint8_t *p, ct_dtype dt, int64_t i, float v);
/* Stores the result v of float arithmetic as element i of float type dt: ct_elem_setf of v
 * with any NaN made the canonical NaN (quant/float_fn.h ct_quant_nan_canon). CAST and the
 * input conversion use ct_elem_setf (conversions keep a NaN's sign). */
void ct_elem_setf_result(uint8_t *p, ct_dtype dt, int64_t i, float v);

#endif
