/* nn_sgemm.h: the float matrix product of the Top Conv kernel (ops/nn_conv.c) on CPUs with
 * AVX-512: Y = clamp(W·B + bias) read in place (no packing), each output's products added in
 * k order with one FMA rounding each, so results never depend on how a caller slices M or N
 * (thread counts). Private to ops/. */
#ifndef CT_OPS_NN_SGEMM_H
#define CT_OPS_NN_SGEMM_H

#include <stdbool.h>
#include <stdint.h>

/* True when ct_nn_sgemm runs here (x86-64 with AVX-512F, not disabled by
 * ct_nn_sgemm_enable(false)); callers use OpenBLAS otherwise. */
bool ct_nn_sgemm_ok(void);
/* Allows (true, the default) or forbids ct_nn_sgemm (tests and benchmarks compare both). */
void ct_nn_sgemm_enable(bool on);
/* Y[m][n] = clamp(Σ_{k<K} W[m][k]·B[k][n] + bias[m], lo, hi) for m < M, n < N, with W
 * row-major [M][ldw], B row-major [K][ldb] and Y row-major [M][ldy] (f32; Y apart from W and
 * B). The sum starts at 0 and adds the products in k order, each by one fused multiply-add
 * (one rounding), then the bias (none when bias is NULL), then the clamp v < lo ? lo : v,
 * v > hi ? hi : v (ct_nn_act_apply's; ±inf for none). Returns false, Y untouched, when
 * !ct_nn_sgemm_ok(). */
bool ct_nn_sgemm(int64_t M, int64_t N, int64_t K, const float *W, int64_t ldw, const float *B, int64_t ldb,
                 const float *bias, float lo, float hi, float *Y, int64_t ldy);

/* im2col of one image's channels [0, C) of a 2-D convolution with W stride sw (1 or 2) and
 * no dilation (H stride sh, pads pt / pl; x is C x H x W): col[(c, kh, kw)][p - c0] =
 * x[c][oh·sh − pt + kh][ow·sw − pl + kw] (0 in the padding) for the output columns p = oh·OW
 * + ow in [c0, c0 + nb), rows of nb floats; the same matrix as the general im2col. Returns
 * false, col untouched, when !ct_nn_sgemm_ok() or sw is not 1 or 2. */
bool ct_nn_im2col_s1(const float *x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t pt, int64_t pl, int64_t OW, float *col, int64_t c0, int64_t nb);

#endif
