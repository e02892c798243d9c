/* nn_im2col.h: the im2col of the Top Conv kernel (ops/nn_conv.c) in AVX-512 or AVX2 where
 * the CPU has it. Private to ops/. */
#ifndef CT_OPS_NN_IM2COL_H
#define CT_OPS_NN_IM2COL_H

#include <stdbool.h>
#include <stdint.h>

/* im2col of one image's channels [0, C) of a 2-D convolution with W stride sw (1 or 2) and
 * no dilation (H stride sh, pads pt / pl; x is C x H x W): col[(c, kh, kw)][p - c0] =
 * x[c][oh·sh − pt + kh][ow·sw − pl + kw] (0 in the padding) for the output columns p = oh·OW
 * + ow in [c0, c0 + nb), rows of nb floats; the same matrix as the general im2col. Returns
 * false, col untouched, when sw is not 1 or 2, or the CPU lacks AVX-512F and either AVX2
 * or sw = 1. */
bool ct_nn_im2col_s1(const float *x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t pt, int64_t pl, int64_t OW, float *col, int64_t c0, int64_t nb);

#endif
