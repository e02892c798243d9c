/* nn_norm_shape.c: shape functions of the normalization, softmax, resize and
 * depth/space ops. Shapes follow the ONNX operator spec (BatchNormalization-15,
 * LayerNormalization-17, Resize-13 "output_dimension = floor(input_dimension * scale)", ...). */
#include <math.h>
#include <string.h>

#include "ops/shape.h"
#include "ops/nn_shape_util.h"

/* The output has the input's type and shape. */
static ct_status same_as_input(ct_op *op, ct_diag *d) {
  const ct_value *x = op->in[0];
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, x->shape, d);
}

/* Checks input i is a 1-D tensor of n elements. */
static ct_status need_vec(const ct_op *op, int i, int64_t n, const char *what, ct_diag *d) {
  ct_status st = ct_shape_nn_input(op, i, 1, d);
  if (st) return st;
  if (ct_value_numel(op->in[i]) != n || op->in[i]->ndim != 1)
    return ct_shape_nn_fail(d, op, "%s (input %d) must have shape [%lld]", what, i, (long long)n);
  return CT_OK;
}

/* BatchNormalization, inference form (ONNX BatchNormalization-15, training_mode 0): scale, B,
 * input_mean, input_var are [C]; Y has X's shape. Training mode or its extra outputs are
 * "unsupported" (CT_ERR_INPUT). */
ct_status ct_shape_batchnorm(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  static const char *const names[] = {"", "scale", "B", "input_mean", "input_var"};
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 2, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  for (int i = 1; i < 5; i++)
    if ((st = need_vec(op, i, op->in[0]->shape[1], names[i], d))) return st;
  if (ct_attr_batchnorm_training_mode(op))
    return ct_shape_nn_fail(d, op, "unsupported training_mode = 1");
  for (int i = 1; i < op->n_out; i++)
    if (op->out[i]) return ct_shape_nn_fail(d, op, "unsupported training output %d", i);
  return same_as_input(op, d);
}

/* InstanceNormalization (ONNX-6): scale and B are [C]; Y has X's shape. */
ct_status ct_shape_instancenorm(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 2, d)) || (st = ct_shape_nn_float_input(op, 0, d)) ||
      (st = need_vec(op, 1, op->in[0]->shape[1], "scale", d)) ||
      (st = need_vec(op, 2, op->in[0]->shape[1], "B", d)))
    return st;
  return same_as_input(op, d);
}

/* True when v's shape, without leading 1s, is a suffix of shape[from..ndim) (the broadcast
 * the LayerNormalization kernel implements). */
static bool suffix_broadcasts(const ct_value *v, int ndim, const int64_t *shape, int from) {
  int lead = 0;
  while (lead < v->ndim && v->shape[lead] == 1) lead++;
  int rest = v->ndim - lead;
  if (rest > ndim - from) return false;
  for (int i = 0; i < rest; i++)
    if (v->shape[lead + i] != shape[ndim - rest + i]) return false;
  return true;
}

/* LayerNormalization (ONNX-17): normalizes dims [axis, rank); Scale/B must broadcast to them
 * (their shape without leading 1s a suffix of X's); writes a positive axis; optional Mean and
 * InvStdDev (f32) have X's shape with dims >= axis set to 1. */
ct_status ct_shape_layernorm(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 1, d)) || (st = ct_shape_nn_input(op, 1, 0, d)) ||
      (st = ct_shape_nn_float_input(op, 0, d)))
    return st;
  const ct_value *x = op->in[0];
  int64_t axis = ct_attr_layernorm_axis(op);
  if (axis < -x->ndim || axis >= x->ndim)
    return ct_shape_nn_fail(d, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (axis < 0) axis += x->ndim;
  for (int i = 1; i < op->n_in && i < 3; i++)
    if (op->in[i] && !suffix_broadcasts(op->in[i], x->ndim, x->shape, (int)axis))
      return ct_shape_nn_fail(d, op, "input %d does not broadcast to the normalized dims", i);
  if (!ct_attr_set_layernorm_axis(g, op, axis)) return ct_shape_nn_oom(d, op);
  int64_t shape[CT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) shape[i] = i < axis ? x->shape[i] : 1;
  if ((st = same_as_input(op, d)) || (st = ct_shape_nn_set_out(op, 1, CT_F32, x->ndim, shape, d)))
    return st;
  return ct_shape_nn_set_out(op, 2, CT_F32, x->ndim, shape, d);
}

/* MeanVarianceNormalization (ONNX-13): axes default [0, 2, 3], written explicit and positive. */
ct_status ct_shape_mvn(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 1, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  const ct_value *x = op->in[0];
  static const int64_t dflt[3] = {0, 2, 3};
  int n = 0;
  const int64_t *ax = ct_attr_mvn_axes(op, &n);
  if (!ax) { ax = dflt; n = 3; }
  int64_t axes[CT_MAX_DIMS];
  unsigned seen = 0;
  if (n > x->ndim) return ct_shape_nn_fail(d, op, "attribute axes has %d values for rank %d", n, x->ndim);
  for (int i = 0; i < n; i++) {
    axes[i] = ax[i] < 0 ? ax[i] + x->ndim : ax[i];
    if (axes[i] < 0 || axes[i] >= x->ndim || (seen >> axes[i] & 1u))
      return ct_shape_nn_fail(d, op, "axes[%d] = %lld is out of range or repeated", i, (long long)ax[i]);
    seen |= 1u << axes[i];
  }
  if (!ct_attr_set_mvn_axes(g, op, n, axes)) return ct_shape_nn_oom(d, op);
  return same_as_input(op, d);
}

/* LRN (ONNX-13): attribute size >= 1; Y has X's shape (N, C, ...). */
ct_status ct_shape_lrn(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 2, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  if (ct_attr_lrn_size(op) < 1) return ct_shape_nn_fail(d, op, "attribute size must be >= 1");
  return same_as_input(op, d);
}

/* Softmax, LogSoftmax, Hardmax: positive axis; coerce_2d = 1 (opset < 13) defaults axis to 1. */
ct_status ct_shape_softmax(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 0, d)) || (st = ct_shape_nn_float_input(op, 0, d))) return st;
  const ct_value *x = op->in[0];
  int64_t coerce = ct_attr_softmax_coerce_2d(op);
  int64_t axis = coerce && !ct_attr_has_softmax_axis(op) ? 1 : ct_attr_softmax_axis(op);
  int r = x->ndim ? x->ndim : 1;
  if (axis < -r || axis >= r + (coerce ? 1 : 0))
    return ct_shape_nn_fail(d, op, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
  if (axis < 0) axis += r;
  if (!ct_attr_set_softmax_axis(g, op, axis)) return ct_shape_nn_oom(d, op);
  return same_as_input(op, d);
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

/* True when the optional input i is present with at least one element. */
static bool has_data_input(const ct_op *op, int i) {
  return i < op->n_in && op->in[i] && ct_value_numel(op->in[i]) > 0;
}

/* Checks a string attribute (accessor get, name attr) against a NULL-terminated list of
 * accepted values. */
static ct_status check_choice(const ct_op *op, const char *attr, const char *(*get)(const ct_op *),
                              const char *const *ok, ct_diag *d) {
  const char *v = get(op);
  for (int i = 0; ok[i]; i++)
    if (strcmp(v, ok[i]) == 0) return CT_OK;
  return ct_shape_nn_fail(d, op, "unsupported %s \"%s\"", attr, v);
}

static ct_status resize_attrs(const ct_op *op, ct_diag *d) {
  static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
  static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                     "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
  static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
  ct_status st;
  if ((st = check_choice(op, "mode", ct_attr_resize_mode, modes, d)) ||
      (st = check_choice(op, "coordinate_transformation_mode", ct_attr_resize_coordinate_transformation_mode, ctms, d)) ||
      (st = check_choice(op, "nearest_mode", ct_attr_resize_nearest_mode, nms, d)))
    return st;
  if (ct_attr_resize_antialias(op)) return ct_shape_nn_fail(d, op, "unsupported antialias = 1");
  if (ct_attr_raw_resize_axes(op)) return ct_shape_nn_fail(d, op, "unsupported attribute axes");
  if (strcmp(ct_attr_resize_keep_aspect_ratio_policy(op), "stretch") != 0)
    return ct_shape_nn_fail(d, op, "unsupported keep_aspect_ratio_policy");
  return CT_OK;
}

/* Resize (ONNX Resize-13/19; inputs X, roi, scales, sizes): exactly one of scales / sizes, which
 * must be constant; output = floor(in * scale) or sizes. mode, coordinate_transformation_mode
 * and nearest_mode are checked; antialias, axes and keep_aspect_ratio_policy other than
 * "stretch" are "unsupported". */
ct_status ct_shape_resize(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_status st;
  if ((st = ct_shape_nn_input(op, 0, 1, d)) || (st = resize_attrs(op, d))) return st;
  const ct_value *x = op->in[0];
  bool hs = has_data_input(op, 2), hz = has_data_input(op, 3);
  if (hs == hz) return ct_shape_nn_fail(d, op, "exactly one of scales and sizes must be given");
  const ct_value *v = op->in[hs ? 2 : 3];
  if (!ct_value_is_const(v))
    return ct_shape_nn_fail(d, op, "unsupported non-constant %s (\"%s\")", hs ? "scales" : "sizes", v->name);
  if (ct_value_numel(v) != x->ndim)
    return ct_shape_nn_fail(d, op, "%s has %lld values for rank %d", hs ? "scales" : "sizes",
                            (long long)ct_value_numel(v), x->ndim);
  if (has_data_input(op, 1) && ct_value_numel(op->in[1]) != 2 * x->ndim)
    return ct_shape_nn_fail(d, op, "roi has %lld values, expected %d", (long long)ct_value_numel(op->in[1]),
                            2 * x->ndim);
  if ((st = strcmp(ct_attr_resize_mode(op), "nearest") == 0 ? ct_shape_nn_exact_f32_input(op, 0, d)
                                                                            : ct_shape_nn_float_input(op, 0, d)))
    return st;
  int64_t shape[CT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    if (hs) {
      double sc = (float)ct_tensor_get_f64(v->data, i);
      if (!(sc > 0) || !isfinite(sc)) return ct_shape_nn_fail(d, op, "scales[%d] must be positive", i);
      shape[i] = (int64_t)floor((double)x->shape[i] * sc);
    } else {
      shape[i] = ct_tensor_get_i64(v->data, i);
    }
    if (shape[i] < 1 || shape[i] > ((int64_t)1 << 40))
      return ct_shape_nn_fail(d, op, "output dim %d would be %lld", i, (long long)shape[i]);
  }
  return ct_shape_nn_set_out(op, 0, x->dtype, x->ndim, shape, d);
}
