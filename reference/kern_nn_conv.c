/* kern_nn_conv.c: float32 Conv (1-D..3-D, groups, dilations, fused activation) and
 * ConvTranspose reference kernels. Conv = im2col + OpenBLAS sgemm per group (Chellapilla et
 * al. 2006), 1x1 stride-1 = plain GEMM, depthwise = direct loop; ConvTranspose = GEMM + col2im. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "reference/kern_nn_util.h"

/* The depthwise loop is compiled twice on x86-64 GCC/Clang, AVX2+FMA and baseline, and picked
 * at load time (function multiversioning); elsewhere it is plain C. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__)
#define CT_SIMD_CLONES __attribute__((target_clones("avx2,fma", "default")))
#else
#define CT_SIMD_CLONES
#endif

/* Everything a conv needs, read once before the loops. */
typedef struct conv_job {
  ct_kn_geo g;
  int64_t n, c, oc, group, cg, ocg;   /* batch, channels, output channels, groups, per group */
  int64_t kvol, ivol, ovol;           /* elements of a kernel window / input / output plane */
  const float *x, *w, *b;
  float *y;
  ct_kn_act act;
} conv_job;

/* Input range of output index o along dim i for kernel tap kk: returns the input index. */
static inline int64_t in_pos(const ct_kn_geo *g, int i, int64_t o, int64_t kk) {
  return o * g->s[i] - g->pb[i] + kk * g->dl[i];
}

/* im2col of one group of one image: col[(c, kd, kh, kw)][(od, oh, ow)], zeros in the padding. */
static void im2col(const conv_job *j, const float *x, float *col) {
  const ct_kn_geo *g = &j->g;
  int64_t ow_n = g->out[2];
  for (int64_t c = 0; c < j->cg; c++)
    for (int64_t kd = 0; kd < g->k[0]; kd++)
      for (int64_t kh = 0; kh < g->k[1]; kh++)
        for (int64_t kw = 0; kw < g->k[2]; kw++) {
          float *dst = col + (((c * g->k[0] + kd) * g->k[1] + kh) * g->k[2] + kw) * j->ovol;
          /* valid ow range: 0 <= ow*s - pb + kw*dl < in */
          int64_t off = kw * g->dl[2] - g->pb[2], s = g->s[2];
          int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
          int64_t hi = g->in[2] - off <= 0 ? 0 : (g->in[2] - off + s - 1) / s;
          if (hi > ow_n) hi = ow_n;
          if (lo > hi) lo = hi;
          for (int64_t od = 0; od < g->out[0]; od++) {
            int64_t id = in_pos(g, 0, od, kd);
            for (int64_t oh = 0; oh < g->out[1]; oh++, dst += ow_n) {
              int64_t ih = in_pos(g, 1, oh, kh);
              if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
                memset(dst, 0, sizeof *dst * (size_t)ow_n);
                continue;
              }
              const float *src = x + ((c * g->in[0] + id) * g->in[1] + ih) * g->in[2] + off;
              for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0;
              if (s == 1) memcpy(dst + lo, src + lo, sizeof *dst * (size_t)(hi - lo));
              else for (int64_t ow = lo; ow < hi; ow++) dst[ow] = src[ow * s];
              for (int64_t ow = hi; ow < ow_n; ow++) dst[ow] = 0;
            }
          }
        }
}

/* General conv: per image and group, im2col then Y_g (ocg x ovol) = W_g (ocg x cg*kvol) * col. */
static ct_status conv_gemm(const conv_job *j, const ct_op *op, ct_diag *d) {
  bool direct = j->kvol == 1 && j->g.s[0] * j->g.s[1] * j->g.s[2] == 1 &&
                j->g.pb[0] + j->g.pb[1] + j->g.pb[2] + j->g.pe[0] + j->g.pe[1] + j->g.pe[2] == 0;
  float *col = NULL;
  if (!direct) {
    col = malloc(sizeof *col * (size_t)(j->cg * j->kvol * j->ovol));
    if (!col) return ct_kn_oom(d, op);
  }
  int64_t kk = j->cg * j->kvol;
  for (int64_t n = 0; n < j->n; n++)
    for (int64_t gi = 0; gi < j->group; gi++) {
      const float *xg = j->x + (n * j->c + gi * j->cg) * j->ivol;
      const float *src = xg;
      if (!direct) {
        im2col(j, xg, col);
        src = col;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->ocg, (int)j->ovol, (int)kk, 1.0f,
                  j->w + gi * j->ocg * kk, (int)kk, src, (int)j->ovol, 0.0f,
                  j->y + (n * j->oc + gi * j->ocg) * j->ovol, (int)j->ovol);
    }
  free(col);
  return CT_OK;
}

/* out_row[ow] += w * in_row[ow*s + off] for ow in [lo, hi): the interior, in blocks of 8 so
 * that GCC's -O2 vectorizes the stride-1 case. */
static inline void dw_taps(float *restrict o, const float *restrict r, int64_t lo, int64_t hi, int64_t s,
                           int64_t off, const float *wk, int64_t kw_n, int64_t dl) {
  if (s == 1 && kw_n == 3) { /* 3-tap interior fast path */
    const float w0 = wk[0], w1 = wk[1], w2 = wk[2];
    const float *r0 = r + off, *r1 = r + off + dl, *r2 = r + off + 2 * dl;
    int64_t ow = lo;
    for (; ow + 8 <= hi; ow += 8)
      for (int k = 0; k < 8; k++) o[ow + k] += w0 * r0[ow + k] + w1 * r1[ow + k] + w2 * r2[ow + k];
    for (; ow < hi; ow++) o[ow] += w0 * r0[ow] + w1 * r1[ow] + w2 * r2[ow];
    return;
  }
  for (int64_t kw = 0; kw < kw_n; kw++) {
    const float w = wk[kw], *rr = r + off + kw * dl;
    int64_t ow = lo;
    if (s == 1)
      for (; ow + 8 <= hi; ow += 8)
        for (int k = 0; k < 8; k++) o[ow + k] += w * rr[ow + k];
    if (s == 2)
      for (; ow + 8 <= hi; ow += 8)
        for (int k = 0; k < 8; k++) o[ow + k] += w * rr[2 * (ow + k)];
    for (; ow < hi; ow++) o[ow] += w * rr[ow * s];
  }
}

/* Depthwise conv (group == C == OC, 1-D/2-D) of planes [lo, hi) of n*c: direct loops. */
CT_SIMD_CLONES static void conv_dw(void *arg, int64_t lo, int64_t hi) {
  const conv_job *j = arg;
  const ct_kn_geo *g = &j->g;
  int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2], KH = g->k[1], KW = g->k[2];
  int64_t sw = g->s[2], dw = g->dl[2], pl = g->pb[2];
  /* interior ow: every tap in range: ow*sw - pl >= 0 and ow*sw - pl + (KW-1)*dw < W */
  int64_t owl = (pl + sw - 1) / sw, owh = W - pl - (KW - 1) * dw <= 0 ? 0 : (W - pl - (KW - 1) * dw + sw - 1) / sw;
  if (owh > OW) owh = OW;
  if (owl > owh) owl = owh;
  for (int64_t p = lo; p < hi; p++) {
    int64_t c = p % j->c;
    const float *x = j->x + p * H * W, *wk = j->w + c * KH * KW;
    float *y = j->y + p * OH * OW;
    for (int64_t oh = 0; oh < OH; oh++) {
      float *o = y + oh * OW;
      for (int64_t ow = 0; ow < OW; ow++) o[ow] = 0;
      for (int64_t kh = 0; kh < KH; kh++) {
        int64_t ih = in_pos(g, 1, oh, kh);
        if (ih < 0 || ih >= H) continue;
        const float *r = x + ih * W, *wr = wk + kh * KW;
        dw_taps(o, r, owl, owh, sw, -pl, wr, KW, dw);
        for (int64_t ow = 0; ow < OW; ow++) {
          if (ow == owl) ow = owh;
          if (ow >= OW) break;
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t iw = in_pos(g, 2, ow, kw);
            if (iw >= 0 && iw < W) o[ow] += wr[kw] * r[iw];
          }
        }
      }
    }
  }
}

/* Adds the bias per output channel and applies the fused activation. */
static void conv_epilogue(const conv_job *j) {
  for (int64_t n = 0; n < j->n; n++)
    for (int64_t c = 0; c < j->oc; c++)
      ct_kn_bias_act(&j->act, j->b ? j->b[c] : 0.0f, j->y + (n * j->oc + c) * j->ovol, j->ovol);
}

/* Checks dtypes and channel counts and fills the job. transposed: W is (C, OC/group, k...). */
static ct_status conv_setup(const ct_op *op, ct_tensor *const *in, ct_tensor **out, bool transposed,
                            conv_job *j, ct_diag *d) {
  ct_status st;
  const ct_tensor *x = in[0], *w = in[1], *b = op->n_in > 2 ? in[2] : NULL, *y = out[0];
  if ((st = ct_kn_need(op, x, CT_F32, "input X", d)) || (st = ct_kn_need(op, w, CT_F32, "weight W", d)) ||
      (b && (st = ct_kn_need(op, b, CT_F32, "bias B", d))) || (st = ct_kn_need(op, y, CT_F32, "output Y", d)))
    return st;
  if (w->ndim != x->ndim) return ct_kn_fail(d, op, "weight rank %d differs from input rank %d", w->ndim, x->ndim);
  if ((st = ct_kn_geo_read(op, x, w, y, &j->g, d)) || (st = ct_kn_act_parse(op, &j->act, d))) return st;
  j->n = x->shape[0], j->c = x->shape[1], j->oc = y->shape[1], j->group = ct_op_get_int(op, "group", 1);
  if (j->group < 1 || j->c % j->group || j->oc % j->group || y->shape[0] != j->n)
    return ct_kn_fail(d, op, "group %lld does not divide channels", (long long)j->group);
  j->cg = j->c / j->group, j->ocg = j->oc / j->group;
  int64_t wc = transposed ? w->shape[0] : w->shape[1], woc = transposed ? w->shape[1] : w->shape[0];
  if (wc != (transposed ? j->c : j->cg) || woc != (transposed ? j->ocg : j->oc))
    return ct_kn_fail(d, op, "weight shape does not match %lld input / %lld output channels", (long long)j->c,
                      (long long)j->oc);
  for (int i = 0; i < j->g.nsp; i++)
    if (w->shape[2 + i] != j->g.k[3 - j->g.nsp + i]) return ct_kn_fail(d, op, "kernel_shape differs from the weight");
  if (b && ct_tensor_numel(b) != j->oc) return ct_kn_fail(d, op, "bias has %lld values, expected %lld",
                                                          (long long)ct_tensor_numel(b), (long long)j->oc);
  j->kvol = j->g.k[0] * j->g.k[1] * j->g.k[2];
  j->ivol = j->g.in[0] * j->g.in[1] * j->g.in[2];
  j->ovol = j->g.out[0] * j->g.out[1] * j->g.out[2];
  j->x = x->data, j->w = w->data, j->b = b ? b->data : NULL, j->y = y->data;
  return CT_OK;
}

ct_status ct_kern_conv(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  conv_job j;
  ct_status st = conv_setup(op, in, out, false, &j, d);
  if (st) return st;
  for (int i = 0; i < 3; i++) {
    int64_t span = j.g.in[i] + j.g.pb[i] + j.g.pe[i] - j.g.dl[i] * (j.g.k[i] - 1) - 1;
    if (span < 0 || span / j.g.s[i] + 1 != j.g.out[i])
      return ct_kn_fail(d, op, "output spatial size %lld inconsistent with the attributes", (long long)j.g.out[i]);
  }
  if (j.group == j.c && j.oc == j.c && j.g.k[0] == 1 && j.g.in[0] == 1 && j.g.out[0] == 1) {
    ct_kn_parallel(ctx ? ctx->threads : 1, j.n * j.c, conv_dw, &j);
  } else {
    ct_kn_blas_threads(ctx);
    if ((st = conv_gemm(&j, op, d))) return st;
  }
  conv_epilogue(&j);
  return CT_OK;
}

/* col2im of ConvTranspose: y[oc][i*s - pb + k*dl] += col[(oc, kd, kh, kw)][(id, ih, iw)]. */
static void col2im(const conv_job *j, const float *col, float *y) {
  const ct_kn_geo *g = &j->g;
  for (int64_t oc = 0; oc < j->ocg; oc++)
    for (int64_t kd = 0; kd < g->k[0]; kd++)
      for (int64_t kh = 0; kh < g->k[1]; kh++)
        for (int64_t kw = 0; kw < g->k[2]; kw++) {
          const float *src = col + (((oc * g->k[0] + kd) * g->k[1] + kh) * g->k[2] + kw) * j->ivol;
          float *yc = y + oc * j->ovol;
          for (int64_t id = 0; id < g->in[0]; id++) {
            int64_t od = in_pos(g, 0, id, kd);
            for (int64_t ih = 0; ih < g->in[1]; ih++, src += g->in[2]) {
              int64_t oh = in_pos(g, 1, ih, kh);
              if (od < 0 || od >= g->out[0] || oh < 0 || oh >= g->out[1]) continue;
              float *dst = yc + (od * g->out[1] + oh) * g->out[2];
              for (int64_t iw = 0; iw < g->in[2]; iw++) {
                int64_t ow = in_pos(g, 2, iw, kw);
                if (ow >= 0 && ow < g->out[2]) dst[ow] += src[iw];
              }
            }
          }
        }
}

ct_status ct_kern_convtranspose(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                ct_diag *d) {
  conv_job j;
  ct_status st = conv_setup(op, in, out, true, &j, d);
  if (st) return st;
  int64_t rows = j.ocg * j.kvol;
  float *col = malloc(sizeof *col * (size_t)(rows * j.ivol));
  if (!col) return ct_kn_oom(d, op);
  ct_kn_blas_threads(ctx);
  memset(j.y, 0, sizeof *j.y * (size_t)(j.n * j.oc * j.ovol));
  for (int64_t n = 0; n < j.n; n++)
    for (int64_t gi = 0; gi < j.group; gi++) {
      /* col (ocg*kvol x ivol) = W_g^T, W_g being (cg x ocg*kvol) row-major, times X_g (cg x ivol) */
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows, (int)j.ivol, (int)j.cg, 1.0f,
                  j.w + gi * j.cg * rows, (int)rows, j.x + (n * j.c + gi * j.cg) * j.ivol, (int)j.ivol, 0.0f, col,
                  (int)j.ivol);
      col2im(&j, col, j.y + (n * j.oc + gi * j.ocg) * j.ovol);
    }
  free(col);
  conv_epilogue(&j);
  return CT_OK;
}
