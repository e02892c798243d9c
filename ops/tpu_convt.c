/* tpu_convt.c: the integer ConvTranspose of the Tpu dialect (2-D, groups; weights [C, OC/G,
 * kh, kw]): acc[oc][o] = bias[oc] + Σ (x − zp_x)·(w − zp_w) over the taps with o = i·stride −
 * pad_begin + k·dilation (the scatter form of the ONNX definition), then requant per output
 * channel (ct_quant_requant_act_row, no activation). As GEMM + col2im (Caffe's and oneDNN's
 * deconvolution): per group the products cols[(o, kh, kw)][(ih, iw)] = Σ_c w[c][o][kh][kw]·
 * x[c][ih][iw] by ct_quant_igemm, each added into its output position in int64. Every sum is an
 * exact integer (ct_quant_igemm_exact), so the result equals the direct scatter loop's, which
 * runs when the bound does not hold (16-bit operands of wide range). */
#include <stdlib.h>
#include <string.h>

#include "ops/nn_util.h"
#include "ops/ops_util.h"
#include "quant/igemm.h"
#include "ops/tpu_util.h"

#define CONVT_CHANNELS 16 /* output channels per GEMM: their int64 sums stay small */
#define CONVT_COLS 2048   /* input positions per GEMM */

typedef struct convt_job {
  const ct_tensor *b;
  ct_tensor *y;
  const ct_nn_geo *g;
  int64_t n, OC, cg, ocg, kk, ivol, ovol;
  int32_t zy;
  const int32_t *m;
  const int *s;
  const int16_t *xs;      /* image n as x − zp_x: [C][ivol] */
  const int16_t *wt;      /* w − zp_w per group as [ocg·kk][cg] (rows (o, kh, kw)) */
  bool acc32;             /* every output's sum provably within int32 (convt_acc32): int32 acc */
  bool oom;
} convt_job;

/* acc[(o − o0)][·] += the products t[r][q] (rows r = (o − o0, kh, kw), columns q: input
 * positions p0 + q, n of them) at their output positions; acc of type T (int64_t or
 * int32_t). Per input row, the valid columns [lo, hi) are found once (ow = iw·s − pad + kw·dl
 * inside [0, OW)) and added without a test. */
#define CONVT_SCATTER(T)                                                                                   \
  do {                                                                                                     \
    const ct_nn_geo *g = j->g;                                                                             \
    int64_t IW = g->in[2], OH = g->out[1], OW = g->out[2], sw = g->s[2];                                   \
    for (int64_t r = 0; r < rows; r++) {                                                                   \
      int64_t kh = (r % j->kk) / g->k[2], kw = r % g->k[2], off = kw * g->dl[2] - g->pb[2];                \
      int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw, hi = OW - 1 - off < 0 ? 0 : (OW - 1 - off) / sw + 1; \
      T *a = (T *)acc + (r / j->kk) * j->ovol;                                                             \
      const int32_t *tr = t + r * n;                                                                       \
      for (int64_t q = 0; q < n;) { /* one input row (or its part inside [p0, p0 + n)) at a time */       \
        int64_t ih = (p0 + q) / IW, iw0 = (p0 + q) % IW, run = IW - iw0 < n - q ? IW - iw0 : n - q;      \
        int64_t oh = ih * g->s[1] - g->pb[1] + kh * g->dl[1];                                              \
        if (oh >= 0 && oh < OH) {                                                                          \
          int64_t a0 = iw0 > lo ? iw0 : lo, a1 = iw0 + run < hi ? iw0 + run : hi;                          \
          T *ar = a + oh * OW;                                                                             \
          const int32_t *trr = tr + q;                                                                     \
          for (int64_t iw = a0; iw < a1; iw++) ar[off + iw * sw] += trr[iw - iw0];                         \
        }                                                                                                  \
        q += run;                                                                                          \
      }                                                                                                    \
    }                                                                                                      \
  } while (0)

static void convt_scatter(const convt_job *j, int64_t rows, int64_t p0, int64_t n, const int32_t *t, void *acc) {
  if (j->acc32) CONVT_SCATTER(int32_t);
  else CONVT_SCATTER(int64_t);
}
#undef CONVT_SCATTER

/* Output channels [o0, o1) of one group (gi): the GEMM over blocks of input positions, the
 * scatter, the requant. acc: CONVT_CHANNELS·ovol int64, t: CONVT_CHANNELS·kk·CONVT_COLS int32. */
static bool convt_block(convt_job *j, int64_t gi, int64_t o0, int64_t o1, int64_t *acc, int32_t *t) {
  int64_t rows = (o1 - o0) * j->kk, nb = j->ivol < CONVT_COLS ? j->ivol : CONVT_COLS;
  int32_t *acc32 = (int32_t *)acc;
  for (int64_t o = o0; o < o1; o++) {
    int64_t b = j->b ? ct_tq_get(j->b, gi * j->ocg + o) : 0;
    for (int64_t p = 0; j->acc32 && p < j->ovol; p++) acc32[(o - o0) * j->ovol + p] = (int32_t)b;
    for (int64_t p = 0; !j->acc32 && p < j->ovol; p++) acc[(o - o0) * j->ovol + p] = b;
  }
  const int16_t *a = j->wt + (gi * j->ocg * j->kk + o0 * j->kk) * j->cg, *x = j->xs + gi * j->cg * j->ivol;
  for (int64_t p0 = 0; p0 < j->ivol; p0 += nb) {
    int64_t n = j->ivol - p0 < nb ? j->ivol - p0 : nb;
    if (!ct_quant_igemm(rows, n, j->cg, a, j->cg, x + p0, j->ivol, NULL, t, n)) return false;
    convt_scatter(j, rows, p0, n, t, acc);
  }
  for (int64_t o = o0; o < o1; o++) {
    int64_t oc = gi * j->ocg + o;
    void *y = ct_tq_at(j->y, (j->n * j->OC + oc) * j->ovol);
    if (j->acc32)
      ct_quant_requant_act_row_i32(acc32 + (o - o0) * j->ovol, j->ovol, j->m[oc], j->s[oc], j->zy, CT_QUANT_ACT_NONE, 0,
                                   j->y->dtype, y);
    else
      ct_quant_requant_act_row(acc + (o - o0) * j->ovol, j->ovol, j->m[oc], j->s[oc], j->zy, CT_QUANT_ACT_NONE, 0,
                               j->y->dtype, y);
  }
  return true;
}

/* Output channels [lo, hi) of image j->n (a ct_workpool_fn), CONVT_CHANNELS of one group at a time. */
static void convt_channels(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  convt_job *j = arg;
  int64_t nb = j->ivol < CONVT_COLS ? j->ivol : CONVT_COLS;
  int64_t *acc = malloc(sizeof *acc * (size_t)(CONVT_CHANNELS * j->ovol + 1));
  int32_t *t = malloc(sizeof *t * (size_t)(CONVT_CHANNELS * j->kk * nb + 1));
  bool ok = acc && t;
  for (int64_t oc = lo; ok && oc < hi;) {
    int64_t gi = oc / j->ocg, o0 = oc % j->ocg, o1 = o0 + CONVT_CHANNELS;
    o1 = o1 > j->ocg ? j->ocg : o1;
    o1 = gi * j->ocg + o1 > hi ? hi - gi * j->ocg : o1;
    ok = convt_block(j, gi, o0, o1, acc, t);
    oc = gi * j->ocg + o1;
  }
  if (!ok) j->oom = true;
  free(acc), free(t);
}

/* The direct scatter loop (int64 sums): any operands. */
static void convt_direct(const ct_tensor *x, const ct_tensor *w, const ct_tensor *b, ct_tensor *y, const ct_nn_geo *g,
                         int64_t n, int64_t cg, int32_t zx, int32_t zw, int64_t *acc) {
  int64_t C = x->shape[1], OC = y->shape[1], ocg = OC / (C / cg), ivol = g->in[1] * g->in[2], ovol = g->out[1] * g->out[2];
  for (int64_t oc = 0; oc < OC; oc++)
    for (int64_t p = 0; p < ovol; p++) acc[oc * ovol + p] = b ? ct_tq_get(b, oc) : 0;
  for (int64_t c = 0; c < C; c++)
    for (int64_t ih = 0; ih < g->in[1]; ih++)
      for (int64_t iw = 0; iw < g->in[2]; iw++) {
        int32_t xv = ct_tq_get(x, (n * C + c) * ivol + ih * g->in[2] + iw) - zx;
        for (int64_t o = 0; xv && o < ocg; o++)
          for (int64_t kh = 0; kh < g->k[1]; kh++) {
            int64_t oh = ih * g->s[1] - g->pb[1] + kh * g->dl[1];
            for (int64_t kw = 0; oh >= 0 && oh < g->out[1] && kw < g->k[2]; kw++) {
              int64_t ow = iw * g->s[2] - g->pb[2] + kw * g->dl[2];
              if (ow < 0 || ow >= g->out[2]) continue;
              int32_t wv = ct_tq_get(w, ((c * ocg + o) * g->k[1] + kh) * g->k[2] + kw) - zw;
              acc[((c / cg) * ocg + o) * ovol + oh * g->out[2] + ow] += (int64_t)xv * wv;
            }
          }
      }
}

/* v[0..n) narrowed into d (int16); false (d partly written) when a value is outside int16. *mx
 * := max |v|. */
static bool narrow16(const int32_t *v, int64_t n, int16_t *d, int64_t *mx) {
  int32_t lo = 0, hi = 0;
  for (int64_t i = 0; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
    d[i] = (int16_t)v[i];
  }
  *mx = -(int64_t)lo > hi ? -(int64_t)lo : hi;
  return lo >= INT16_MIN && hi <= INT16_MAX;
}

/* j->wt := w − zw transposed per group to [ocg·kk][cg]; false when a value is outside
 * int16. *wmax := max |w − zw|. tmp: C·ocg·kk int32. */
static bool convt_weights(convt_job *j, const ct_tensor *w, int64_t C, int32_t zw, int32_t *tmp, int16_t *wt, int64_t *wmax) {
  int64_t per = j->ocg * j->kk;
  ct_tq_get_row_i32(w, 0, C * per, zw, tmp);
  for (int64_t c = 0; c < C; c++) {
    int64_t gi = c / j->cg, ci = c % j->cg;
    for (int64_t r = 0; r < per; r++) tmp[C * per + (gi * per + r) * j->cg + ci] = tmp[c * per + r];
  }
  j->wt = wt;
  return narrow16(tmp + C * per, C * per, wt, wmax);
}

/* Does every output's sum fit int32 in any order: max |b| plus, for each of the kk taps that
 * may reach it, cg products of at most wmax · xmax (ct_quant_igemm_exact over kk · cg)? */
static bool convt_acc32(const convt_job *j, int64_t wmax, int64_t xmax) {
  int64_t bmax = 0;
  for (int64_t o = 0; j->b && o < j->OC; o++) {
    int64_t v = llabs((int64_t)ct_tq_get(j->b, o));
    bmax = v > bmax ? v : bmax;
  }
  return ct_quant_igemm_exact(j->kk * j->cg, wmax, xmax, bmax);
}

/* Image n by the GEMM path when its sums are exact (true), else nothing (false). xi: C·ivol int32. */
static bool convt_image(convt_job *j, const ct_tensor *x, int64_t C, int32_t zx, bool wok, int64_t wmax, int32_t *xi,
                        int16_t *xs, const ct_kernel_ctx *ctx) {
  int64_t xmax = 0;
  ct_tq_get_row_i32(x, j->n * C * j->ivol, C * j->ivol, zx, xi);
  if (!wok || !narrow16(xi, C * j->ivol, xs, &xmax) || !ct_quant_igemm_exact(j->cg, wmax, xmax, 0)) return false;
  j->xs = xs, j->acc32 = convt_acc32(j, wmax, xmax);
  ct_nn_parallel(ctx, j->OC, j->OC * j->kk * j->cg * j->ivol, convt_channels, j);
  return true;
}

ct_status ct_tpu_convtranspose(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d) {
  const ct_tensor *x = in[0], *w = in[1], *b = op->n_in > 2 ? in[2] : NULL;
  ct_tensor *y = out[0];
  ct_status st = ct_tq_need_int(op, in, out, op->n_in, d);
  ct_nn_geo g;
  if (st || (st = ct_nn_geo_read(op, x, w, y, &g, d))) return st;
  int64_t C = x->shape[1], OC = y->shape[1], G = ct_attr_conv_group(op);
  if (G < 1 || C % G || OC % G || w->shape[0] != C || w->shape[1] != OC / G || g.k[0] != 1 || (b && ct_tensor_numel(b) != OC))
    return ct_ops_err(d, CT_ERR_INPUT, op, "integer ConvTranspose: inconsistent channels, groups, bias or a 3-D kernel");
  convt_job j = {.b = b, .y = y, .g = &g, .OC = OC, .cg = C / G, .ocg = OC / G, .kk = g.k[1] * g.k[2],
                 .ivol = g.in[1] * g.in[2], .ovol = g.out[1] * g.out[2], .zy = ct_tq_zp(op->out[0])};
  int32_t *m = malloc((size_t)OC * sizeof *m), zx = ct_tq_zp(op->in[0]), zw = ct_tq_zp(op->in[1]);
  int *s = malloc((size_t)OC * sizeof *s);
  int64_t wn = C * j.ocg * j.kk, xn = C * j.ivol, wmax = 0, *acc = NULL;
  int32_t *tmp = malloc(sizeof *tmp * (size_t)(2 * wn + xn + 1));
  int16_t *w16 = malloc(sizeof *w16 * (size_t)(wn + xn + 1));
  if (!m || !s || !tmp || !w16) st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  if (!st) st = ct_tq_rq(op, OC, m, s, d);
  j.m = m, j.s = s;
  bool wok = !st && convt_weights(&j, w, C, zw, tmp, w16, &wmax);
  for (int64_t n = 0; !st && n < x->shape[0]; n++) {
    j.n = n;
    if (convt_image(&j, x, C, zx, wok, wmax, tmp + 2 * wn, w16 + wn, ctx)) {
      if (j.oom) st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
      continue;
    }
    if (!acc && !(acc = malloc((size_t)(OC * j.ovol > 0 ? OC * j.ovol : 1) * sizeof *acc))) {
      st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
      break;
    }
    convt_direct(x, w, b, y, &g, n, j.cg, zx, zw, acc);
    for (int64_t oc = 0; oc < OC; oc++)
      ct_quant_requant_act_row(acc + oc * j.ovol, j.ovol, m[oc], s[oc], j.zy, CT_QUANT_ACT_NONE, 0, y->dtype,
                               ct_tq_at(y, (n * OC + oc) * j.ovol));
  }
  free(m), free(s), free(tmp), free(w16), free(acc);
  return st;
}
