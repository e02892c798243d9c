/* tensor.c: ct_tensor allocation, element access and dtype conversion (see tensor.h).
 * f16/bf16 conversions follow IEEE 754-2008 binary16 and Google's bfloat16, round to
 * nearest even. */
#include "common/tensor.h"

#include "common/clones.h"
#include "common/limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  size_t bytes;
  int onnx;
  bool is_float, is_signed;
} dtype_info[CT_DTYPE_COUNT] = {
#define X(E, name, bytes, onnx, isf, iss) {name, bytes, onnx, isf, iss},
#include "common/dtype.def"
#undef X
};

size_t ct_dtype_size(ct_dtype dt) { return dt < CT_DTYPE_COUNT ? dtype_info[dt].bytes : 0; }
const char *ct_dtype_name(ct_dtype dt) { return dt < CT_DTYPE_COUNT ? dtype_info[dt].name : "?"; }
bool ct_dtype_is_float(ct_dtype dt) { return dt < CT_DTYPE_COUNT && dtype_info[dt].is_float; }
bool ct_dtype_is_signed(ct_dtype dt) { return dt < CT_DTYPE_COUNT && dtype_info[dt].is_signed; }
int ct_dtype_to_onnx(ct_dtype dt) { return dt < CT_DTYPE_COUNT ? dtype_info[dt].onnx : 0; }

bool ct_dtype_parse(const char *s, ct_dtype *out) {
  for (int i = 0; i < CT_DTYPE_COUNT; i++)
    if (strcmp(s, dtype_info[i].name) == 0) { *out = (ct_dtype)i; return true; }
  return false;
}

bool ct_dtype_from_onnx(int onnx_type, ct_dtype *out) {
  for (int i = 0; i < CT_DTYPE_COUNT; i++)
    if (dtype_info[i].onnx == onnx_type) { *out = (ct_dtype)i; return true; }
  return false;
}

int64_t ct_shape_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return -1;
    if (shape[i] != 0 && n > INT64_MAX / shape[i]) return -1;
    n *= shape[i];
  }
  return n;
}

int64_t ct_tensor_numel(const ct_tensor *t) { return ct_shape_numel(t->ndim, t->shape); }

/* ct_tensor_new, with the data zero-filled when `zero`. */
static ct_tensor *tensor_new(ct_dtype dt, int ndim, const int64_t *shape, const char *name, bool zero) {
  if (ndim < 0 || ndim > CT_MAX_DIMS || dt >= CT_DTYPE_COUNT) return NULL;
  int64_t n = ct_shape_numel(ndim, shape);
  if (n < 0 || (uint64_t)n > CT_TENSOR_MAX_BYTES / ct_dtype_size(dt)) return NULL;
  if (ct_mem_budget_check(dt, ndim, shape, "", NULL)) return NULL;
  ct_tensor *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  t->nbytes = (size_t)n * ct_dtype_size(dt);
  t->data = zero ? calloc(t->nbytes ? t->nbytes : 1, 1) : malloc(t->nbytes ? t->nbytes : 1);
  if (!t->data || (name && !ct_tensor_set_name(t, name))) {
    ct_tensor_free(t);
    return NULL;
  }
  return t;
}

ct_tensor *ct_tensor_new(ct_dtype dt, int ndim, const int64_t *shape, const char *name) {
  return tensor_new(dt, ndim, shape, name, true);
}

ct_tensor *ct_tensor_new_uninit(ct_dtype dt, int ndim, const int64_t *shape, const char *name) {
  return tensor_new(dt, ndim, shape, name, false);
}

void ct_tensor_free(ct_tensor *t) {
  if (!t) return;
  free(t->name);
  free(t->data);
  free(t->scale);
  free(t->zero_point);
  free(t);
}

bool ct_tensor_set_name(ct_tensor *t, const char *name) {
  char *copy = NULL;
  if (name) {
    copy = strdup(name);
    if (!copy) return false;
  }
  free(t->name);
  t->name = copy;
  return true;
}

bool ct_tensor_set_quant(ct_tensor *t, int n, int axis, const double *scale, const int32_t *zp) {
  double *s = n > 0 ? malloc((size_t)n * sizeof *s) : NULL;
  int32_t *z = n > 0 ? malloc((size_t)n * sizeof *z) : NULL;
  if (n > 0 && (!s || !z)) {
    free(s);
    free(z);
    return false;
  }
  for (int i = 0; i < n; i++) {
    s[i] = scale[i];
    z[i] = zp ? zp[i] : 0;
  }
  free(t->scale);
  free(t->zero_point);
  t->scale = s;
  t->zero_point = z;
  t->n_scale = n;
  t->quant_axis = axis;
  return true;
}

ct_tensor *ct_tensor_clone(const ct_tensor *t) {
  ct_tensor *c = ct_tensor_new(t->dtype, t->ndim, t->shape, t->name);
  if (!c) return NULL;
  memcpy(c->data, t->data, t->nbytes);
  memcpy(c->layout, t->layout, sizeof c->layout);
  if (t->n_scale && !ct_tensor_set_quant(c, t->n_scale, t->quant_axis, t->scale, t->zero_point)) {
    ct_tensor_free(c);
    return NULL;
  }
  return c;
}

/* ---- IEEE half and bfloat16 ---- */

uint16_t ct_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
  return (uint16_t)h;
}

float ct_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) { mant <<= 1; exp--; }
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* The bf16 of the f32 with bits x: round to nearest even; NaN stays a (quiet) NaN. Written
 * as a select so that the row loop vectorizes; one definition for both entry points. */
static inline uint16_t bf16_of_bits(uint32_t x) {
  uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16, q = (x >> 16) | 0x40u;
  return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? q : r);
}

uint16_t ct_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return bf16_of_bits(x);
}

CT_CLONES_AVX2 static void ct_f32_to_bf16_row_clones(const float *restrict f, uint16_t *restrict b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t x;
    memcpy(&x, &f[i], 4);
    b[i] = bf16_of_bits(x);
  }
}

void ct_f32_to_bf16_row(const float *restrict f, uint16_t *restrict b, int64_t n) {
  ct_f32_to_bf16_row_clones(f, b, n);
}

float ct_bf16_to_f32(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* ---- generic element access ---- */

double ct_tensor_get_f64(const ct_tensor *t, int64_t i) {
  const void *p = (const char *)t->data + (size_t)i * ct_dtype_size(t->dtype);
  switch (t->dtype) {
    case CT_F32: return *(const float *)p;
    case CT_F64: return *(const double *)p;
    case CT_F16: return ct_f16_to_f32(*(const uint16_t *)p);
    case CT_BF16: return ct_bf16_to_f32(*(const uint16_t *)p);
    case CT_I8: return *(const int8_t *)p;
    case CT_U8: return *(const uint8_t *)p;
    case CT_BOOL: return *(const uint8_t *)p != 0;
    case CT_I16: return *(const int16_t *)p;
    case CT_U16: return *(const uint16_t *)p;
    case CT_I32: return *(const int32_t *)p;
    case CT_U32: return *(const uint32_t *)p;
    case CT_I64: return (double)*(const int64_t *)p;
    case CT_U64: return (double)*(const uint64_t *)p;
    case CT_DTYPE_COUNT: break;
  }
  return 0;
}

int64_t ct_tensor_get_i64(const ct_tensor *t, int64_t i) {
  const void *p = (const char *)t->data + (size_t)i * ct_dtype_size(t->dtype);
  switch (t->dtype) {
    case CT_I64: return *(const int64_t *)p;
    case CT_U64: return (int64_t)*(const uint64_t *)p;
    default: {
      double v = ct_tensor_get_f64(t, i);
      if (v >= 9.2e18) return INT64_MAX;
      if (v <= -9.2e18) return INT64_MIN;
      return (int64_t)v;
    }
  }
}

static double sat(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

void ct_tensor_set_f64(ct_tensor *t, int64_t i, double v) {
  void *p = (char *)t->data + (size_t)i * ct_dtype_size(t->dtype);
  double r = ct_dtype_is_float(t->dtype) || isnan(v) ? 0 : round(v); /* integers: round half away from zero */
  switch (t->dtype) {
    case CT_F32: *(float *)p = (float)v; break;
    case CT_F64: *(double *)p = v; break;
    case CT_F16: *(uint16_t *)p = ct_f32_to_f16((float)v); break;
    case CT_BF16: *(uint16_t *)p = ct_f32_to_bf16((float)v); break;
    case CT_I8: *(int8_t *)p = (int8_t)sat(r, -128, 127); break;
    case CT_U8: *(uint8_t *)p = (uint8_t)sat(r, 0, 255); break;
    case CT_BOOL: *(uint8_t *)p = v != 0; break;
    case CT_I16: *(int16_t *)p = (int16_t)sat(r, -32768, 32767); break;
    case CT_U16: *(uint16_t *)p = (uint16_t)sat(r, 0, 65535); break;
    case CT_I32: *(int32_t *)p = (int32_t)sat(r, -2147483648.0, 2147483647.0); break;
    case CT_U32: *(uint32_t *)p = (uint32_t)sat(r, 0, 4294967295.0); break;
    case CT_I64: *(int64_t *)p = (int64_t)sat(r, -9.2e18, 9.2e18); break;
    case CT_U64: *(uint64_t *)p = (uint64_t)sat(r, 0, 1.8e19); break;
    case CT_DTYPE_COUNT: break;
  }
}

/* The float ↔ 16-bit float casts of the BF16/F16 Tpu path as typed loops (the same
 * conversions as ct_tensor_get_f64 / ct_tensor_set_f64); false for other pairs. */
static bool cast_half(const ct_tensor *t, ct_tensor *c, int64_t n) {
  const float *f = t->data;
  const uint16_t *h = t->data;
  float *fo = c->data;
  uint16_t *ho = c->data;
  if (t->dtype == CT_F32 && c->dtype == CT_BF16) for (int64_t i = 0; i < n; i++) ho[i] = ct_f32_to_bf16(f[i]);
  else if (t->dtype == CT_BF16 && c->dtype == CT_F32) for (int64_t i = 0; i < n; i++) fo[i] = ct_bf16_to_f32(h[i]);
  else if (t->dtype == CT_F32 && c->dtype == CT_F16) for (int64_t i = 0; i < n; i++) ho[i] = ct_f32_to_f16(f[i]);
  else if (t->dtype == CT_F16 && c->dtype == CT_F32) for (int64_t i = 0; i < n; i++) fo[i] = ct_f16_to_f32(h[i]);
  else return false;
  return true;
}

ct_tensor *ct_tensor_cast(const ct_tensor *t, ct_dtype dt) {
  ct_tensor *c = ct_tensor_new(dt, t->ndim, t->shape, t->name);
  if (!c) return NULL;
  int64_t n = ct_tensor_numel(t);
  if (cast_half(t, c, n)) return c;
  bool to_int = !ct_dtype_is_float(dt) && dt != CT_BOOL;
  for (int64_t i = 0; i < n; i++) {
    if (t->dtype == CT_I64 && dt == CT_I64) {
      ((int64_t *)c->data)[i] = ((const int64_t *)t->data)[i];
      continue;
    }
    double v = ct_tensor_get_f64(t, i);
    if (to_int && ct_dtype_is_float(t->dtype)) v = trunc(v);
    if (dt == CT_I64 && !ct_dtype_is_float(t->dtype)) {
      ((int64_t *)c->data)[i] = ct_tensor_get_i64(t, i);
      continue;
    }
    ct_tensor_set_f64(c, i, v);
  }
  return c;
}

char *ct_shape_str(int ndim, const int64_t *shape, char *buf, size_t n) {
  if (ndim == 0) {
    snprintf(buf, n, "scalar");
    return buf;
  }
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? "x%lld" : "%lld", (long long)shape[i]);
  return buf;
}
