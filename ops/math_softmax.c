/* math_softmax.c: Softmax, LogSoftmax, Hardmax (ONNX math family; ONNX-13 along one axis, or
 * the opset < 13 form flattening to 2-D at axis when coerce_2d = 1; float32, max-subtracted for
 * stability) and DepthToSpace (DCR/CRD) / SpaceToDepth (ONNX tensor family, ONNX-13
 * reshape/transpose definitions, any dtype): shape functions and float kernels. */
#include <math.h>
#include <string.h>

#include "ops/nn_util.h"
#include "ops/shape.h"
#include "ops/nn_shape_util.h"

typedef enum sm_kind { SM_SOFT, SM_LOG, SM_HARD } sm_kind;

/* The decoded attributes of Softmax / LogSoftmax / Hardmax (defaults from ir/ops.def): the
 * axis normalized to [0, r) for input rank r (a scalar counts as rank 1), or to [0, r] in the
 * opset < 13 form coerce_2d = 1, whose axis defaults to 1 and flattens dims >= axis. */
typedef struct sm_params {
  bool coerce;
  int64_t axis;
} sm_params;

/* Decodes op's attributes for an input of rank ndim into p (shape function and kernel alike).
 * Errors: CT_ERR_INPUT `axis A out of range for rank R` naming the node. */
static ct_status sm_decode(const ct_op *op, int ndim, sm_params *p, ct_diag *d) {
  p->coerce = ct_attr_softmax_coerce_2d(op) != 0;
  int64_t axis = p->coerce && !ct_attr_has_softmax_axis(op) ? 1 : ct_attr_softmax_axis(op);
  int r = ndim ? ndim : 1;
  if (axis < -r || axis >= r + (p->coerce ? 1 : 0))
    return ct_shape_nn_fail(d, op, "axis %lld out of range for rank %d", (long long)axis, ndim);
  p->axis = axis < 0 ? axis + r : axis;
  return CT_OK;
}

/* One softmax row of `len` elements with stride `inner`. */
static void sm_row(sm_kind kind, const float *x, float *y, int64_t len, int64_t inner) {
  float mx = -INFINITY;
  int64_t arg = 0;
  for (int64_t i = 0; i < len; i++)
    if (x[i * inner] > mx || i == 0) mx = x[i * inner], arg = i;
  if (kind == SM_HARD) {
    for (int64_t i = 0; i < len; i++) y[i * inner] = i == arg ? 1.0f : 0.0f;
    return;
  }
  double s = 0;
  for (int64_t i = 0; i < len; i++) s += exp((double)x[i * inner] - mx);
  if (kind == SM_LOG) {
    double ls = log(s);
    for (int64_t i = 0; i < len; i++) y[i * inner] = (float)((double)x[i * inner] - mx - ls);
  } else {
    for (int64_t i = 0; i < len; i++) y[i * inner] = (float)(exp((double)x[i * inner] - mx) / s);
  }
}

static ct_status sm_run(const ct_op *op, ct_tensor *const *in, ct_tensor **out, sm_kind kind, ct_diag *d) {
  const ct_tensor *x = in[0];
  ct_status st;
  if ((st = ct_nn_need(op, x, CT_F32, "input", d)) || (st = ct_nn_need(op, out[0], CT_F32, "output", d)) ||
      (st = ct_nn_check_shape(op, out[0], x->ndim, x->shape, d)))
    return st;
  sm_params p;
  if ((st = sm_decode(op, x->ndim, &p, d))) return st;
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < x->ndim; i++) {
    if (i < p.axis) outer *= x->shape[i];
    else if (i == p.axis || p.coerce) len *= x->shape[i];
    else inner *= x->shape[i];
  }
  const float *xp = x->data;
  float *y = out[0]->data;
  if (len == 0) return CT_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      sm_row(kind, xp + o * len * inner + i, y + o * len * inner + i, len, inner);
  return CT_OK;
}

/* Softmax: exp(x - max) / sum, along axis (or the coerce_2d flattening). */
ct_status ct_kern_softmax(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  (void)ctx;
  return sm_run(op, in, out, SM_SOFT, d);
}

/* LogSoftmax: x - max - log(sum exp(x - max)). */
ct_status ct_kern_logsoftmax(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                             ct_diag *d) {
  (void)ctx;
  return sm_run(op, in, out, SM_LOG, d);
}

/* Hardmax: 1 at the first maximum of each row, 0 elsewhere. */
ct_status ct_kern_hardmax(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  (void)ctx;
  return sm_run(op, in, out, SM_HARD, d);
}

/* DepthToSpace (to_space) / SpaceToDepth on NCHW with block b. With (N, C, H, W) the
 * depth-side shape and i, j the offsets in a block, the depth channel is
 * DCR: (i*b + j)*C + c, CRD: c*b*b + i*b + j (SpaceToDepth uses DCR). */
static ct_status depth_space(const ct_op *op, ct_tensor *const *in, ct_tensor **out, bool to_space, ct_diag *d) {
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  if (!x || !y || x->ndim != 4 || x->dtype != y->dtype) return ct_shape_nn_fail(d, op, "input/output must be 4-D, same dtype");
  int64_t b = ct_attr_depthspace_blocksize(op);
  bool crd = to_space && strcmp(ct_attr_depthspace_mode(op), "CRD") == 0;
  if (b < 1) return ct_shape_nn_fail(d, op, "attribute blocksize must be >= 1");
  const ct_tensor *deep = to_space ? x : y, *wide = to_space ? y : x;
  int64_t n = deep->shape[0], cd = deep->shape[1], h = deep->shape[2], w = deep->shape[3];
  int64_t c = cd / (b * b);
  int64_t want[4] = {n, c, h * b, w * b};
  if (cd % (b * b) || wide->ndim != 4 || memcmp(wide->shape, want, sizeof want) != 0)
    return ct_shape_nn_fail(d, op, "input/output shapes do not match blocksize %lld", (long long)b);
  size_t es = ct_dtype_size(x->dtype);
  const char *xs = x->data;
  char *ys = y->data;
  for (int64_t ni = 0; ni < n; ni++)
    for (int64_t ci = 0; ci < c; ci++)
      for (int64_t i = 0; i < b; i++)
        for (int64_t j = 0; j < b; j++) {
          int64_t dc = crd ? ci * b * b + i * b + j : (i * b + j) * c + ci;
          for (int64_t hi = 0; hi < h; hi++)
            for (int64_t wi = 0; wi < w; wi++) {
              int64_t di = ((ni * cd + dc) * h + hi) * w + wi;
              int64_t si = ((ni * c + ci) * h * b + hi * b + i) * w * b + wi * b + j;
              if (to_space) memcpy(ys + (size_t)si * es, xs + (size_t)di * es, es);
              else memcpy(ys + (size_t)di * es, xs + (size_t)si * es, es);
            }
        }
  return CT_OK;
}

/* DepthToSpace (DCR/CRD), any dtype (element copies). */
ct_status ct_kern_depthtospace(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d) {
  (void)ctx;
  return depth_space(op, in, out, true, d);
}

/* SpaceToDepth (DCR order), any dtype (element copies). */
ct_status ct_kern_spacetodepth(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d) {
  (void)ctx;
  return depth_space(op, in, out, false, d);
}

/* ---- shape functions ---- */

/* Softmax, LogSoftmax, Hardmax: positive axis; coerce_2d = 1 (opset < 13) defaults axis to 1. */
ct_status ct_shape_softmax(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 0, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  const ct_value *x = op->in[0];
  sm_params p;
  if ((st = sm_decode(op, x->ndim, &p, d))) return st;
  if (!ct_attr_set_softmax_axis(g, op, p.axis)) return ct_shape_nn_oom(d, op);
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, x->shape, d);
}

/* DepthToSpace (mode DCR/CRD) and SpaceToDepth on NCHW. */
ct_status ct_shape_depthspace(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 4, d))) return st;
  const ct_value *x = op->in[0];
  if (x->ndim != 4) return ct_shape_nn_fail(d, op, "input must be 4-D NCHW");
  int64_t b = ct_attr_depthspace_blocksize(op);
  if (b < 1) return ct_shape_nn_fail(d, op, "attribute blocksize must be >= 1");
  int64_t s[4] = {x->shape[0], x->shape[1], x->shape[2], x->shape[3]};
  if (op->kind == CT_OP_DEPTHTOSPACE) {
    const char *mode = ct_attr_depthspace_mode(op);
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
      return ct_shape_nn_fail(d, op, "unsupported mode \"%s\"", mode);
    if (s[1] % (b * b))
      return ct_shape_nn_fail(d, op, "%lld channels not divisible by blocksize^2 = %lld", (long long)s[1],
                              (long long)(b * b));
    s[1] /= b * b, s[2] *= b, s[3] *= b;
  } else {
    if (s[2] % b || s[3] % b)
      return ct_shape_nn_fail(d, op, "H %lld and W %lld must be divisible by blocksize %lld", (long long)s[2],
                              (long long)s[3], (long long)b);
    s[1] *= b * b, s[2] /= b, s[3] /= b;
  }
  return ct_shape_nn_set_out(op, 0, x->dtype, 4, s, d);
}
