/* tensor.h: the dense tensor every module passes around: dtype, shape (≤ 8 dims), dense
 * row-major owned data, optional quantization parameters (per-tensor or per-channel). */
#ifndef CT_TENSOR_H
#define CT_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define CT_MAX_DIMS 8
/* Largest tensor ct_tensor_new allocates (256 GiB): beyond it a shape is taken as corrupt. */
#define CT_TENSOR_MAX_BYTES ((uint64_t)1 << 38)

typedef enum ct_dtype {
#define X(E, name, bytes, onnx, isf, iss) CT_##E,
#include "common/dtype.def"
#undef X
  CT_DTYPE_COUNT
} ct_dtype;

/* A tensor. Data is dense row-major (NCHW for activations, OIHW for conv weights; `layout`
 * names the dims); kernels that need element strides compute them from the shape
 * (ct_ops_strides). `data` is owned (ct_tensor_free). */
typedef struct ct_tensor {
  char *name;                   /* owned, may be NULL */
  ct_dtype dtype;
  int ndim;                     /* 0 = scalar */
  int64_t shape[CT_MAX_DIMS];
  void *data;                   /* owned, nbytes long */
  size_t nbytes;
  /* quantization: n_scale = 0 none, 1 per-tensor, C per-channel along quant_axis */
  int n_scale;
  int quant_axis;
  double *scale;                /* owned, n_scale entries */
  int32_t *zero_point;          /* owned, n_scale entries */
  char layout[16];              /* "" = row-major NCHW-style; else a tag such as "NHWC" */
} ct_tensor;

/* Bytes per element of dt (bool = 1). */
size_t ct_dtype_size(ct_dtype dt);
/* IR spelling of dt: "f32", "i8", ... */
const char *ct_dtype_name(ct_dtype dt);
/* Parses an IR spelling; returns false if unknown. */
bool ct_dtype_parse(const char *s, ct_dtype *out);
/* Maps ONNX TensorProto.DataType to ct_dtype; returns false for types ctpu does not hold. */
bool ct_dtype_from_onnx(int onnx_type, ct_dtype *out);
/* ONNX TensorProto.DataType of dt. */
int ct_dtype_to_onnx(ct_dtype dt);
bool ct_dtype_is_float(ct_dtype dt);
bool ct_dtype_is_signed(ct_dtype dt);

/* Number of elements of a shape (1 for ndim 0). Returns -1 on overflow or negative dims. */
int64_t ct_shape_numel(int ndim, const int64_t *shape);
/* Elements of t. */
int64_t ct_tensor_numel(const ct_tensor *t);

/* Allocates a zero-filled row-major tensor. Returns NULL if out of memory, if the shape is
 * invalid (ndim > CT_MAX_DIMS, negative dim, byte size overflow) or if its bytes exceed the
 * memory budget (common/limits.h; ct_tensor_alloc says which). name may be NULL. */
ct_tensor *ct_tensor_new(ct_dtype dt, int ndim, const int64_t *shape, const char *name);
/* ct_tensor_new without the zero fill: the data's contents are unspecified (for a result that
 * its kernel writes whole). Same errors. */
ct_tensor *ct_tensor_new_uninit(ct_dtype dt, int ndim, const int64_t *shape, const char *name);
/* Deep copy (data, name, quant params); NULL on out of memory. */
ct_tensor *ct_tensor_clone(const ct_tensor *t);
/* Frees t and everything it owns; NULL is fine. */
void ct_tensor_free(ct_tensor *t);
/* Replaces t's name (copied). Returns false on out of memory. */
bool ct_tensor_set_name(ct_tensor *t, const char *name);
/* Sets per-tensor (n = 1) or per-channel quant params (copied). false on out of memory. */
bool ct_tensor_set_quant(ct_tensor *t, int n, int axis, const double *scale, const int32_t *zp);

/* Element i (row-major flat index) converted to double / stored from double (float types:
 * round to nearest even; integer types: round half away from zero, then saturate). These
 * are for generic code paths (shape ops, conformance over many dtypes), not hot loops. */
double ct_tensor_get_f64(const ct_tensor *t, int64_t i);
void ct_tensor_set_f64(ct_tensor *t, int64_t i, double v);
/* Element i as int64 (floats truncated toward zero). */
int64_t ct_tensor_get_i64(const ct_tensor *t, int64_t i);

/* Converts t to dtype dt (new tensor; same shape and name); NULL on out of memory.
 * float→int: truncation toward zero as ONNX Cast (C cast semantics, saturating). */
ct_tensor *ct_tensor_cast(const ct_tensor *t, ct_dtype dt);

/* Formats a shape as "1x3x224x224" ("scalar" for ndim 0) into buf (size n); returns buf. */
char *ct_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);

/* IEEE half / bfloat16 conversions: to-half and to-bf16 round to nearest even. */
uint16_t ct_f32_to_f16(float f);
float ct_f16_to_f32(uint16_t h);
uint16_t ct_f32_to_bf16(float f);
float ct_bf16_to_f32(uint16_t b);
/* b[i] = ct_f32_to_bf16(f[i]) for n elements (the same bits; a loop compilers vectorize). */
void ct_f32_to_bf16_row(const float *f, uint16_t *b, int64_t n);

#endif
