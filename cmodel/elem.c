/* elem.c: element access by dtype for the functional units (little-endian host memory). */
#include "cmodel/elem.h"

#include <string.h>

#include "quant/float_fn.h"
#include "quant/quant.h"

int64_t ct_elem_geti(const uint8_t *p, ct_dtype dt, int64_t i) {
  switch (dt) {
    case CT_I8: return ((const int8_t *)p)[i];
    case CT_U8: case CT_BOOL: return p[i];
    case CT_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case CT_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case CT_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case CT_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case CT_I64: case CT_U64: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    default: return 0;
  }
}

void ct_elem_seti(uint8_t *p, ct_dtype dt, int64_t i, int64_t v) {
  size_t n = ct_dtype_size(dt);
  uint64_t u = (uint64_t)v;
  uint8_t b[8];
  for (size_t k = 0; k < 8; k++) b[k] = (uint8_t)(u >> (8 * k));
  memcpy(p + (size_t)i * n, b, n);
}

float ct_elem_getf(const uint8_t *p, ct_dtype dt, int64_t i) {
  uint16_t h;
  float f;
  switch (dt) {
    case CT_F32: memcpy(&f, p + 4 * i, 4); return f;
    case CT_BF16: memcpy(&h, p + 2 * i, 2); return ct_quant_bf16_to_f32(h);
    case CT_F16: memcpy(&h, p + 2 * i, 2); return ct_quant_f16_to_f32(h);
    case CT_F64: { double v; memcpy(&v, p + 8 * i, 8); return (float)v; }
    default: return (float)ct_elem_geti(p, dt, i);
  }
}

void ct_elem_setf(uint8_t *p, ct_dtype dt, int64_t i, float v) {
  uint16_t h;
  switch (dt) {
    case CT_F32: memcpy(p + 4 * i, &v, 4); break;
    case CT_BF16: h = ct_quant_f32_to_bf16(v); memcpy(p + 2 * i, &h, 2); break;
    case CT_F16: h = ct_quant_f32_to_f16(v); memcpy(p + 2 * i, &h, 2); break;
    default: ct_elem_seti(p, dt, i, ct_quant_round_sat((double)v, dt)); break;
  }
}

void ct_elem_setf_result(uint8_t *p, ct_dtype dt, int64_t i, float v) {
  ct_elem_setf(p, dt, i, ct_quant_nan_canon(v));
}
