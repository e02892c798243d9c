/* ops_util.c: helpers shared by kernels and shape functions of every family (ops_util.h):
 * errors naming the node, axis checks, int inputs, wrapping integer stores, and the Slice /
 * Pad / Reduce parameter rules of the ONNX operator spec (Slice-13, Pad-18, ReduceSum-13). */
#include "ops/ops_util.h"

#include <math.h>

#include "ops/broadcast.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

ct_status ct_ops_err(ct_diag *d, ct_status code, const ct_op *op, const char *fmt, ...) {
  char msg[CT_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ct_diag_set(d, code, "node \"%s\" (op %s): %s", op->loc ? op->loc : "?", ct_op_name(op->kind),
                     msg);
}

bool ct_ops_axis(int64_t axis, int rank, int *out) {
  if (axis < -rank || axis >= rank) return false;
  *out = (int)(axis < 0 ? axis + rank : axis);
  return true;
}

bool ct_ops_next_index(int64_t *idx, int ndim, const int64_t *shape) {
  for (int k = ndim - 1; k >= 0; k--) {
    if (++idx[k] < shape[k]) return true;
    idx[k] = 0;
  }
  return false;
}

int64_t ct_ops_trunc_i64(double v) {
  if (isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

ct_status ct_ops_bcast_copy(const ct_op *op, const ct_tensor *src, ct_tensor *dst, ct_diag *d) {
  ct_bcast_iter it;
  if (src->dtype != dst->dtype)
    return ct_ops_err(d, CT_ERR_INPUT, op, "dtype %s differs from %s", ct_dtype_name(src->dtype),
                     ct_dtype_name(dst->dtype));
  if (!ct_bcast_iter_init(&it, dst->ndim, dst->shape, 1, &src->ndim, (const int64_t *const[]){src->shape})) {
    if (ct_tensor_numel(dst) == 0 && ct_bcast_to(src->ndim, src->shape, dst->ndim, dst->shape)) return CT_OK;
    return ct_ops_err(d, CT_ERR_INPUT, op, "input shape does not broadcast to the output");
  }
  size_t es = ct_dtype_size(dst->dtype);
  const char *ps = src->data;
  char *pd = dst->data;
  int64_t o = 0;
  do {
    if (it.istride[0] == 1) {
      memmove(pd + (size_t)o * es, ps + (size_t)it.off[0] * es, (size_t)it.inner * es);
    } else {
      for (int64_t j = 0; j < it.inner; j++)
        memcpy(pd + (size_t)(o + j) * es, ps + (size_t)(it.off[0] + j * it.istride[0]) * es, es);
    }
    o += it.inner;
  } while (ct_bcast_iter_next(&it));
  return CT_OK;
}

bool ct_ops_is_int(ct_dtype dt) { return !ct_dtype_is_float(dt) && dt != CT_BOOL; }

int64_t ct_ops_get_i64(const ct_tensor *t, int64_t i) {
  const char *p = (const char *)t->data + (size_t)i * ct_dtype_size(t->dtype);
  switch (t->dtype) {
    case CT_I8: return *(const int8_t *)p;
    case CT_U8: case CT_BOOL: return *(const uint8_t *)p;
    case CT_I16: return *(const int16_t *)p;
    case CT_U16: return *(const uint16_t *)p;
    case CT_I32: return *(const int32_t *)p;
    case CT_U32: return *(const uint32_t *)p;
    case CT_I64: return *(const int64_t *)p;
    case CT_U64: return (int64_t)*(const uint64_t *)p;
    default: return ct_tensor_get_i64(t, i);
  }
}

void ct_ops_set_i64(ct_tensor *t, int64_t i, int64_t v) {
  char *p = (char *)t->data + (size_t)i * ct_dtype_size(t->dtype);
  uint64_t u = (uint64_t)v;
  switch (t->dtype) {
    case CT_I8: case CT_U8: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); break; }
    case CT_BOOL: *(uint8_t *)p = v != 0; break;
    case CT_I16: case CT_U16: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
    case CT_I32: case CT_U32: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
    case CT_I64: case CT_U64: memcpy(p, &u, 8); break;
    default: ct_tensor_set_f64(t, i, (double)v); break;
  }
}

ct_status ct_ops_ints(const ct_op *op, const ct_tensor *t, const char *what, int max, int64_t *vals,
                     int *n, ct_diag *d) {
  if (!ct_ops_is_int(t->dtype))
    return ct_ops_err(d, CT_ERR_INPUT, op, "%s must be an integer tensor, got %s", what,
                     ct_dtype_name(t->dtype));
  if (t->ndim > 1) return ct_ops_err(d, CT_ERR_INPUT, op, "%s must be 1-D, got %d dims", what, t->ndim);
  int64_t cnt = ct_tensor_numel(t);
  if (cnt > max)
    return ct_ops_err(d, CT_ERR_INPUT, op, "%s has %lld entries, at most %d supported", what,
                     (long long)cnt, max);
  for (int64_t i = 0; i < cnt; i++) vals[i] = ct_ops_get_i64(t, i);
  *n = (int)cnt;
  return CT_OK;
}

void ct_ops_strides(int rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One axis of Slice-13: start/end adjusted and clamped, element count. */
static void slice_axis(int64_t dim, int64_t s, int64_t e, int64_t st, int64_t *start, int64_t *len) {
  if (s < 0) s += dim; /* no overflow: dim >= 0 */
  if (e < 0) e += dim;
  if (st > 0) {
    s = clamp64(s, 0, dim);
    e = clamp64(e, 0, dim);
    *len = e > s ? (e - s + st - 1) / st : 0;
  } else {
    s = clamp64(s, 0, dim - 1);
    e = clamp64(e, -1, dim - 1);
    *len = s > e ? (s - e + (-st) - 1) / (-st) : 0;
  }
  *start = s;
}

ct_status ct_ops_slice(const ct_op *op, int rank, const int64_t *shape, const ct_tensor *starts,
                      const ct_tensor *ends, const ct_tensor *axes, const ct_tensor *steps,
                      int64_t *start, int64_t *step, int64_t *len, ct_diag *d) {
  int64_t sv[CT_MAX_DIMS], ev[CT_MAX_DIMS], av[CT_MAX_DIMS], tv[CT_MAX_DIMS];
  int ns, ne, na, nt;
  ct_status st;
  if ((st = ct_ops_ints(op, starts, "starts", CT_MAX_DIMS, sv, &ns, d)) ||
      (st = ct_ops_ints(op, ends, "ends", CT_MAX_DIMS, ev, &ne, d)))
    return st;
  na = nt = ns;
  for (int i = 0; i < ns; i++) av[i] = i, tv[i] = 1;
  if (axes && (st = ct_ops_ints(op, axes, "axes", CT_MAX_DIMS, av, &na, d))) return st;
  if (steps && (st = ct_ops_ints(op, steps, "steps", CT_MAX_DIMS, tv, &nt, d))) return st;
  if (ne != ns || na != ns || nt != ns)
    return ct_ops_err(d, CT_ERR_INPUT, op, "starts/ends/axes/steps lengths differ (%d/%d/%d/%d)", ns,
                     ne, na, nt);
  bool seen[CT_MAX_DIMS] = {false};
  for (int i = 0; i < rank; i++) start[i] = 0, step[i] = 1, len[i] = shape[i];
  for (int i = 0; i < ns; i++) {
    int ax;
    if (!ct_ops_axis(av[i], rank, &ax) || seen[ax])
      return ct_ops_err(d, CT_ERR_INPUT, op, "axes[%d] = %lld is out of range or repeated for rank %d", i,
                       (long long)av[i], rank);
    if (tv[i] == 0) return ct_ops_err(d, CT_ERR_INPUT, op, "steps[%d] is 0", i);
    seen[ax] = true;
    step[ax] = tv[i];
    slice_axis(shape[ax], sv[i], ev[i], tv[i], &start[ax], &len[ax]);
  }
  return CT_OK;
}

ct_status ct_ops_pads(const ct_op *op, int rank, const int64_t *shape, const ct_tensor *pads,
                     const ct_tensor *axes, int64_t *before, int64_t *after, ct_diag *d) {
  int64_t pv[2 * CT_MAX_DIMS], av[CT_MAX_DIMS];
  int np, na = rank;
  ct_status st;
  if ((st = ct_ops_ints(op, pads, "pads", 2 * CT_MAX_DIMS, pv, &np, d))) return st;
  for (int i = 0; i < rank; i++) av[i] = i, before[i] = after[i] = 0;
  if (axes && (st = ct_ops_ints(op, axes, "axes", CT_MAX_DIMS, av, &na, d))) return st;
  if (np != 2 * na)
    return ct_ops_err(d, CT_ERR_INPUT, op, "pads has %d entries, expected %d (2 per axis)", np, 2 * na);
  for (int i = 0; i < na; i++) {
    int ax;
    if (!ct_ops_axis(av[i], rank, &ax))
      return ct_ops_err(d, CT_ERR_INPUT, op, "axes[%d] = %lld is out of range for rank %d", i,
                       (long long)av[i], rank);
    before[ax] = pv[i];
    after[ax] = pv[i + na];
  }
  for (int i = 0; i < rank; i++)
    if (shape[i] + before[i] + after[i] < 0)
      return ct_ops_err(d, CT_ERR_INPUT, op, "pads make dim %d negative (%lld%+lld%+lld)", i,
                       (long long)shape[i], (long long)before[i], (long long)after[i]);
  return CT_OK;
}

ct_status ct_ops_reduce_axes(const ct_op *op, int rank, const ct_tensor *axes, bool *reduce,
                            bool *noop, ct_diag *d) {
  int64_t av[CT_MAX_DIMS];
  int na = 0;
  ct_status st;
  if (axes && (st = ct_ops_ints(op, axes, "axes", CT_MAX_DIMS, av, &na, d))) return st;
  *noop = false;
  for (int i = 0; i < rank; i++) reduce[i] = na == 0;
  if (na == 0 && ct_attr_reduce_noop_with_empty_axes(op)) {
    *noop = true;
    for (int i = 0; i < rank; i++) reduce[i] = false;
  }
  for (int i = 0; i < na; i++) {
    int ax;
    if (!ct_ops_axis(av[i], rank, &ax))
      return ct_ops_err(d, CT_ERR_INPUT, op, "axes[%d] = %lld is out of range for rank %d", i,
                       (long long)av[i], rank);
    reduce[ax] = true;
  }
  return CT_OK;
}
