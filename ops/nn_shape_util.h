/* nn_shape_util.h: helpers of the nn shape functions (nn_shape.c): diagnostics naming the node,
 * input checks, int-list attributes. The two diagnostics (ct_shape_nn_fail, ct_shape_nn_oom)
 * also serve the kernels. */
#ifndef CT_OPS_NN_SHAPE_UTIL_H
#define CT_OPS_NN_SHAPE_UTIL_H

#include "ir/ir.h"

/* Window geometry of a conv/pool over nsp spatial dims: kernel k, strides s, dilations dl,
 * pads (begins then ends, ONNX order), input and output sizes (elements). */
typedef struct ct_shape_nn_geo {
  int nsp;
  int64_t k[CT_MAX_DIMS], s[CT_MAX_DIMS], dl[CT_MAX_DIMS], pads[2 * CT_MAX_DIMS];
  int64_t in[CT_MAX_DIMS], out[CT_MAX_DIMS];
} ct_shape_nn_geo;

/* Sets d to CT_ERR_INPUT with `node "LOC" (op NAME): <printf message>`; returns CT_ERR_INPUT. */
ct_status ct_shape_nn_fail(ct_diag *d, const ct_op *op, const char *fmt, ...)
    CT_PRINTF(3, 4);
/* CT_ERR_LIMIT "out of memory" naming the node. */
ct_status ct_shape_nn_oom(ct_diag *d, const ct_op *op);
/* Checks input i is present with a known shape of rank >= min_ndim; CT_ERR_INPUT otherwise. */
ct_status ct_shape_nn_input(const ct_op *op, int i, int min_ndim, ct_diag *d);
/* Checks input i is f32 (the dtype of the float kernels); CT_ERR_INPUT "unsupported dtype" otherwise. */
ct_status ct_shape_nn_float_input(const ct_op *op, int i, ct_diag *d);
/* Checks input i has a dtype whose values f32 holds exactly (f32, f16, bf16, u8, i8, u16, i16):
 * the data-moving kernels (max pools, nearest Resize) run other dtypes through f32.
 * CT_ERR_INPUT "unsupported dtype" otherwise. */
ct_status ct_shape_nn_exact_f32_input(const ct_op *op, int i, ct_diag *d);
/* Sets output i's type; an absent optional output (i > 0) is skipped; CT_ERR_INPUT if output 0 is absent. */
ct_status ct_shape_nn_set_out(ct_op *op, int i, ct_dtype dt, int ndim, const int64_t *shape, ct_diag *d);
/* Reads the int-list attribute of accessor get (named name in messages), exactly n values,
 * into out (all dflt when absent); CT_ERR_INPUT when its length differs. */
ct_status ct_shape_nn_ints(const ct_op *op, const char *name, ct_attr_ints_fn get, int n, int64_t dflt,
                           int64_t *out, ct_diag *d);
/* Checks the fused-activation attribute act (absent, "none", relu, relu6, leaky_relu, clip);
 * CT_ERR_INPUT "unsupported act" otherwise. */
ct_status ct_shape_nn_check_act(const ct_op *op, ct_diag *d);

#endif
