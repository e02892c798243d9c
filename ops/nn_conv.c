/* nn_conv.c: ONNX nn family, convolutions: float32 kernels of Conv (1-D..3-D, groups,
 * dilations, fused activation) and ConvTranspose. Conv = im2col + GEMM per group (Chellapilla
 * et al. 2006; OpenBLAS sgemm, the im2col in AVX-512 where the CPU has it, nn_im2col.c),
 * 1x1 stride-1 = plain GEMM on the input in place, depthwise = direct loop; ConvTranspose =
 * GEMM + col2im. Their shape functions are in nn_shape.c. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn_im2col.h"
#include "ops/nn_util.h"
#include "common/clones.h"

/* Everything a conv needs, read once before the loops. */
typedef struct conv_job {
  ct_nn_geo g;
  int64_t n, c, oc, group, cg, ocg;   /* batch, channels, output channels, groups, per group */
  int64_t kvol, ivol, ovol;           /* elements of a kernel window / input / output plane */
  const float *x, *w, *b;
  float *y;
  float *scratch;                     /* depthwise: one dw_plan scratch per thread slot */
  ct_nn_act act;
  const ct_kernel_post *post;         /* NULL, or ctx->post: applied after act */
  bool direct;                        /* ordered kernel: 1 × 1, stride 1, no pads (no im2col) */
} conv_job;

/* Input range of output index o along dim i for kernel tap kk: returns the input index. */
static inline int64_t in_pos(const ct_nn_geo *g, int i, int64_t o, int64_t kk) {
  return o * g->s[i] - g->pb[i] + kk * g->dl[i];
}

/* dst[i] = src[i · s], i < n (s >= 1): the runs of im2col, inline (a memcpy call per run of
 * 7 to 100 floats cost more than the copy). */
static inline void im2col_run(float *restrict dst, const float *restrict src, int64_t n, int64_t s) {
  if (s == 1)
    for (int64_t i = 0; i < n; i++) dst[i] = src[i];
  else
    for (int64_t i = 0; i < n; i++) dst[i] = src[i * s];
}

/* im2col of the output columns [c0, c0 + nb) (flattened (od, oh, ow)) of one group of one
 * image: col[(c, kd, kh, kw)][p - c0], row stride nb, zeros in the padding. */
static void im2col(const conv_job *j, const float *x, float *col, int64_t c0, int64_t nb) {
  const ct_nn_geo *g = &j->g;
  int64_t OW = g->out[2], OHW = g->out[1] * OW, rows = j->cg * j->kvol, s = g->s[2];
  for (int64_t r = 0; r < rows; r++) {
    int64_t kw = r % g->k[2], kh = r / g->k[2] % g->k[1], kd = r / (g->k[2] * g->k[1]) % g->k[0], c = r / j->kvol;
    /* valid ow range [lo, hi): 0 <= ow*s - pb + kw*dl < in */
    int64_t off = kw * g->dl[2] - g->pb[2];
    int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s, hi = g->in[2] - off <= 0 ? 0 : (g->in[2] - off + s - 1) / s;
    int64_t od = c0 / OHW, oh = c0 / OW % g->out[1], a = c0 % OW; /* then stepped: no division per run */
    for (int64_t p = c0; p < c0 + nb; a = 0, oh = oh + 1 < g->out[1] ? oh + 1 : 0, od += oh == 0) {
      int64_t e = a + (OW - a < c0 + nb - p ? OW - a : c0 + nb - p); /* this run: ow in [a, e) */
      float *dd = col + r * nb + (p - c0) - a;
      int64_t id = in_pos(g, 0, od, kd), ih = in_pos(g, 1, oh, kh);
      int64_t l = a, h = a;
      const float *src = x;
      if (id >= 0 && id < g->in[0] && ih >= 0 && ih < g->in[1]) {
        l = lo < a ? a : lo > e ? e : lo;
        h = hi > e ? e : hi < l ? l : hi;
        src = x + ((c * g->in[0] + id) * g->in[1] + ih) * g->in[2] + off; /* + l * s >= 0 */
      }
      for (int64_t ow = a; ow < l; ow++) dd[ow] = 0;
      im2col_run(dd + l, src + l * s, h - l, s);
      for (int64_t ow = h; ow < e; ow++) dd[ow] = 0;
      p += e - a;
    }
  }
}

/* Y chunk (rows x n columns, row stride ldy) = W_g * B chunk (row stride ldb) + bias, then the
 * activation, while the chunk is still in cache: OpenBLAS sgemm (beta = 1 on the bias spares
 * its zeroing pass). */
static void gemm_chunk(const conv_job *j, const float *w, const float *bias, const float *src, float *y,
                       int64_t rows, int64_t n, int64_t kk, int64_t ldb, int64_t ldy) {
  for (int64_t r = 0; bias && r < rows; r++) {
    float *row = y + r * ldy;
    const float b = bias[r];
    int64_t m = n - n % 8;
    for (int64_t i = 0; i < m; i += 8)
      for (int k = 0; k < 8; k++) row[i + k] = b;
    for (int64_t i = m; i < n; i++) row[i] = b;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)kk, 1.0f, w, (int)kk, src, (int)ldb,
              bias ? 1.0f : 0.0f, y, (int)ldy);
  for (int64_t r = 0; !j->act.none && r < rows; r++) ct_nn_act_apply(&j->act, y + r * ldy, n);
  for (int64_t r = 0; j->post && r < rows; r++) j->post->row(y + r * ldy, n, j->post);
}

/* Task split of a general conv (see conv_gemm), fixed by the shapes alone (never by the
 * thread count, so results do not depend on it). */
typedef struct gemm_plan {
  const conv_job *j;
  bool direct;                 /* X is the GEMM's B already (1x1, stride 1, unpadded) */
  int64_t kk, nb, nch, rb, nrb; /* K; columns per chunk, chunks; rows per block, blocks */
  float *col;                  /* im2col scratch: kk * nb floats per thread slot */
} gemm_plan;

#define CT_NN_GEMM_TASKS 8                   /* tasks a big conv is split into at least */
#define CT_NN_GEMM_TASK_MACS ((int64_t)1 << 18) /* multiply-adds below which no task is split off */

/* Chunks of ~256 KiB of output (bias and act fused while it is in cache) and at most ~1 MiB
 * of im2col scratch (large fresh buffers cost a page fault per 4 KiB), made equal; then more
 * column chunks (>= 256 columns) and row blocks (>= 32 rows) until there are
 * CT_NN_GEMM_TASKS tasks (fewer for small convs: CT_NN_GEMM_TASK_MACS each), for the threads
 * to share. The split never depends on the thread count: OpenBLAS rounds differently for
 * different slicings, so this keeps results bit-identical for any
 * number of threads. */
static void gemm_plan_make(const conv_job *j, gemm_plan *p) {
  p->j = j;
  p->direct = j->kvol == 1 && j->g.s[0] * j->g.s[1] * j->g.s[2] == 1 &&
              j->g.pb[0] + j->g.pb[1] + j->g.pb[2] + j->g.pe[0] + j->g.pe[1] + j->g.pe[2] == 0;
  p->kk = j->cg * j->kvol;
  int64_t nb = 65536 / (j->ocg > 0 ? j->ocg : 1), ov = j->ovol > 0 ? j->ovol : 1, imgs = j->n * j->group;
  if (!p->direct && nb > 262144 / p->kk) nb = 262144 / p->kk;
  nb = nb < 64 ? 64 : nb;
  int64_t tasks = j->n * j->oc * j->ovol * p->kk / CT_NN_GEMM_TASK_MACS; /* tasks worth making */
  tasks = tasks < CT_NN_GEMM_TASKS ? tasks : CT_NN_GEMM_TASKS;
  int64_t nch = (ov + nb - 1) / nb, want = (tasks + imgs - 1) / (imgs > 0 ? imgs : 1);
  if (nch < want && nch < ov / 256) nch = want < ov / 256 ? want : ov / 256;
  nb = (ov + nch - 1) / nch;
  nb = (nb + 15) / 16 * 16;
  p->nb = nb > ov ? ov : nb;
  p->nch = (ov + p->nb - 1) / p->nb;
  int64_t nrb = (tasks + imgs * p->nch - 1) / (imgs * p->nch > 0 ? imgs * p->nch : 1);
  if (nrb > j->ocg / 32) nrb = j->ocg / 32;
  p->rb = nrb > 1 ? ((j->ocg + nrb - 1) / nrb + 15) / 16 * 16 : j->ocg;
  p->nrb = p->rb > 0 ? (j->ocg + p->rb - 1) / p->rb : 1;
}

/* Tasks [lo, hi) of a general conv; task t = ((image * group + g) * nch + chunk) * nrb +
 * block. The im2col of a chunk is kept for the following blocks of the same chunk. */
static void conv_tasks(void *arg, int64_t lo, int64_t hi, int slot) {
  const gemm_plan *p = arg;
  const conv_job *j = p->j;
  float *col = p->col ? p->col + (int64_t)slot * p->kk * p->nb : NULL;
  int64_t have = -1;
  for (int64_t t = lo; t < hi; t++) {
    int64_t blk = t % p->nrb, ch = t / p->nrb, c0 = ch % p->nch * p->nb, ig = ch / p->nch;
    int64_t n = ig / j->group, gi = ig % j->group, r0 = blk * p->rb;
    int64_t w = j->ovol - c0 < p->nb ? j->ovol - c0 : p->nb, rows = j->ocg - r0 < p->rb ? j->ocg - r0 : p->rb;
    const float *xg = j->x + (n * j->c + gi * j->cg) * j->ivol;
    float *yg = j->y + (n * j->oc + gi * j->ocg + r0) * j->ovol;
    if (!p->direct && have != ch) {
      const ct_nn_geo *g = &j->g;
      bool fast = g->k[0] == 1 && g->in[0] == 1 && g->dl[1] == 1 && g->dl[2] == 1;
      if (!fast || !ct_nn_im2col_s1(xg, j->cg, g->in[1], g->in[2], g->k[1], g->k[2], g->s[1], g->s[2], g->pb[1],
                                    g->pb[2], g->out[2], col, c0, w))
        im2col(j, xg, col, c0, w);
      have = ch;
    }
    gemm_chunk(j, j->w + (gi * j->ocg + r0) * p->kk, j->b ? j->b + gi * j->ocg + r0 : NULL,
               p->direct ? xg + c0 : col, yg + c0, rows, w, p->kk, p->direct ? j->ovol : w, j->ovol);
  }
}

/* General conv: per image and group, Y_g (ocg x ovol) = W_g (ocg x cg*kvol) * col, computed
 * in tasks of column chunks x row blocks (gemm_plan) shared by the threads of ctx->pool, each
 * a single-threaded sgemm on its slice (every output's dot product is summed as in one call). */
static ct_status conv_gemm(const conv_job *j, const ct_kernel_ctx *ctx, const ct_op *op, ct_diag *d) {
  gemm_plan p = {0};
  gemm_plan_make(j, &p);
  if (j->ovol <= 0 || j->ocg <= 0) return CT_OK;
  int64_t tasks = j->n * j->group * p.nch * p.nrb, work = j->n * j->oc * j->ovol * p.kk;
  int parts = ct_nn_parallel_parts(ctx, tasks, work);
  if (!p.direct && !(p.col = malloc(sizeof *p.col * (size_t)(parts * p.kk * p.nb)))) return ct_shape_nn_oom(d, op);
  ct_nn_parallel(ctx, tasks, work, conv_tasks, &p);
  free(p.col);
  return CT_OK;
}

/* o[i] += sum over taps k < kw_n (<= 16) of w[k] * t[k][i], i in [0, n), in blocks of 8 so
 * that GCC's -O2 vectorizes them, with a fused 3-tap fast path. */
CT_CLONES_AVX2_FMA static void dw_row(float *restrict o, int64_t n, const float *const *t, const float *w, int64_t kw_n) {
  int64_t m = n - n % 8;
  if (kw_n == 3) {
    const float w0 = w[0], w1 = w[1], w2 = w[2], *r0 = t[0], *r1 = t[1], *r2 = t[2];
    for (int64_t i = 0; i < m; i += 8)
      for (int k = 0; k < 8; k++) o[i + k] += w0 * r0[i + k] + w1 * r1[i + k] + w2 * r2[i + k];
    for (int64_t i = m; i < n; i++) o[i] += w0 * r0[i] + w1 * r1[i] + w2 * r2[i];
    return;
  }
  for (int64_t k = 0; k < kw_n; k++) {
    const float wk = w[k], *r = t[k];
    for (int64_t i = 0; i < m; i += 8)
      for (int q = 0; q < 8; q++) o[i + q] += wk * r[i + q];
    for (int64_t i = m; i < n; i++) o[i] += wk * r[i];
  }
}

/* o[i] = b + sum of the 9 taps w[k] * t[k][i], i in [0, n): a whole 3x3 plane in one pass. */
CT_CLONES_AVX2_FMA static void dw_row9(float *restrict o, int64_t n, const float *const *t, const float *w, float b) {
  const float *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3], *t4 = t[4], *t5 = t[5], *t6 = t[6], *t7 = t[7],
              *t8 = t[8];
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
  int64_t m = n - n % 8;
  for (int64_t i = 0; i < m; i += 8)
    for (int k = 0; k < 8; k++) {
      int64_t q = i + k;
      o[q] = b + w0 * t0[q] + w1 * t1[q] + w2 * t2[q] + w3 * t3[q] + w4 * t4[q] + w5 * t5[q] + w6 * t6[q] +
             w7 * t7[q] + w8 * t8[q];
    }
  for (int64_t q = m; q < n; q++)
    o[q] = b + w0 * t0[q] + w1 * t1[q] + w2 * t2[q] + w3 * t3[q] + w4 * t4[q] + w5 * t5[q] + w6 * t6[q] +
           w7 * t7[q] + w8 * t8[q];
}

/* Polyphase layout of a depthwise plane (the classic decomposition of a strided filter): the
 * zero-padded plane (PH x PW) is split by (row % sh, col % sw) into sh*sw sub-planes of
 * SH x SW = ceil(PH/sh) x ceil(PW/sw). Tap (kh, kw) of output (oh, ow) is then element
 * (oh + kh dh / sh) * SW + ow + kw dw / sw of sub-plane (kh dh % sh, kw dw % sw), so the
 * whole output plane is one flat loop over q = oh * SW + ow, q < L = (OH - 1) SW + OW
 * (columns ow >= OW of the flat result are ignored). Sizes in floats. */
#define CT_NN_DW_MAX_S 8 /* largest W stride of the depthwise path */
typedef struct dw_plan {
  int64_t sh, sw, SH, SW, sub, L, size; /* sub: floats per sub-plane; size: scratch per chunk */
} dw_plan;

static dw_plan dw_plan_make(const ct_nn_geo *g) {
  dw_plan p;
  p.sh = g->s[1], p.sw = g->s[2];
  p.SH = (g->in[1] + g->pb[1] + g->pe[1] + p.sh - 1) / p.sh;
  p.SW = (g->in[2] + g->pb[2] + g->pe[2] + p.sw - 1) / p.sw;
  p.sub = p.SH * p.SW;
  p.L = (g->out[1] - 1) * p.SW + g->out[2];
  p.size = p.sh * p.sw * p.sub + p.L;
  return p;
}

/* Start of tap (kh, kw) in the sub-planes `sub` (see dw_plan). */
static const float *dw_tap(const ct_nn_geo *g, const dw_plan *p, const float *sub, int64_t kh, int64_t kw) {
  int64_t r = kh * g->dl[1], c = kw * g->dl[2];
  return sub + ((r % p->sh) * p->sw + c % p->sw) * p->sub + r / p->sh * p->SW + c / p->sw;
}

/* dst[e] = src[2 e], e in [0, n): in blocks of 8 so that GCC's -O2 vectorizes it. */
CT_CLONES_AVX2_FMA static void dw_split2(float *restrict dst, const float *restrict src, int64_t n) {
  int64_t m = n - n % 8;
  for (int64_t e = 0; e < m; e += 8)
    for (int k = 0; k < 8; k++) dst[e + k] = src[2 * (e + k)];
  for (int64_t e = m; e < n; e++) dst[e] = src[2 * e];
}

/* Scatters plane x (H x W) into the sub-planes (padding cells are left as they are: zero). */
static void dw_fill(const ct_nn_geo *g, const dw_plan *p, const float *x, float *sub) {
  int64_t H = g->in[1], W = g->in[2], sw = p->sw, first[CT_NN_DW_MAX_S], cnt[CT_NN_DW_MAX_S], col[CT_NN_DW_MAX_S];
  for (int64_t cp = 0; cp < sw; cp++) { /* padded column pc = iw + pl with pc % sw == cp */
    first[cp] = ((cp - g->pb[2]) % sw + sw) % sw;
    cnt[cp] = first[cp] < W ? (W - first[cp] + sw - 1) / sw : 0;
    col[cp] = cp * p->sub + (first[cp] + g->pb[2]) / sw;
  }
  int64_t rp = g->pb[1] % p->sh, rr = g->pb[1] / p->sh; /* row phase and index of ih */
  for (int64_t ih = 0; ih < H; ih++) {
    const float *src = x + ih * W;
    float *row = sub + rp * sw * p->sub + rr * p->SW;
    for (int64_t cp = 0; cp < sw; cp++) {
      float *dst = row + col[cp];
      const float *s0 = src + first[cp];
      if (sw == 1) memcpy(dst, s0, sizeof *dst * (size_t)cnt[cp]);
      else if (sw == 2) dw_split2(dst, s0, cnt[cp]);
      else for (int64_t e = 0; e < cnt[cp]; e++) dst[e] = s0[sw * e];
    }
    if (++rp == p->sh) rp = 0, rr++;
  }
}

/* The flat output of one plane into o (L floats, see dw_plan): bias plus every tap. */
CT_CLONES_AVX2_FMA static void dw_plane(const conv_job *j, const dw_plan *p, const float *sub, const float *const *t9,
                                    const float *wk, float bias, float *o) {
  const ct_nn_geo *g = &j->g;
  int64_t KH = g->k[1], KW = g->k[2];
  if (t9) {
    dw_row9(o, p->L, t9, wk, bias);
    return;
  }
  for (int64_t q = 0; q < p->L; q++) o[q] = bias;
  const float *taps[16];
  for (int64_t kh = 0; kh < KH; kh++)
    for (int64_t k0 = 0; k0 < KW; k0 += 16) {
      int64_t cnt = KW - k0 < 16 ? KW - k0 : 16;
      for (int64_t kw = 0; kw < cnt; kw++) taps[kw] = dw_tap(g, p, sub, kh, k0 + kw);
      dw_row(o, p->L, taps, wk + kh * KW + k0, cnt);
    }
}

/* Depthwise conv (group == C == OC, 1-D/2-D) of planes [lo, hi) of n*c: each input plane is
 * scattered into the chunk's zero-padded sub-planes, computed as one flat loop (dw_plan),
 * then activated and its OW valid columns per row copied out. */
static void conv_dw(void *arg, int64_t lo, int64_t hi, int slot) {
  const conv_job *j = arg;
  const ct_nn_geo *g = &j->g;
  const dw_plan p = dw_plan_make(g);
  int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
  float *sub = j->scratch + slot * p.size, *o = sub + p.sh * p.sw * p.sub;
  const float *t9s[9], *const *t9 = g->k[1] == 3 && g->k[2] == 3 ? t9s : NULL;
  for (int64_t k = 0; t9 && k < 9; k++) t9s[k] = dw_tap(g, &p, sub, k / 3, k % 3);
  memset(sub, 0, sizeof *sub * (size_t)(p.sh * p.sw * p.sub));
  for (int64_t pl = lo; pl < hi; pl++) {
    int64_t c = pl % j->c;
    float *y = j->y + pl * OH * OW;
    dw_fill(g, &p, j->x + pl * H * W, sub);
    dw_plane(j, &p, sub, t9, j->w + c * g->k[1] * g->k[2], j->b ? j->b[c] : 0.0f, o);
    ct_nn_act_apply(&j->act, o, p.L); /* while the plane is in cache */
    if (j->post) j->post->row(o, p.L, j->post);
    if (OW == p.SW) memcpy(y, o, sizeof *y * (size_t)(OH * OW));
    else for (int64_t oh = 0; oh < OH; oh++) memcpy(y + oh * OW, o + oh * p.SW, sizeof *y * (size_t)OW);
  }
}

/* Adds the bias per output channel and applies the fused activation. */
static void conv_epilogue(const conv_job *j) {
  for (int64_t n = 0; n < j->n; n++)
    for (int64_t c = 0; c < j->oc; c++)
      ct_nn_bias_act(&j->act, j->b ? j->b[c] : 0.0f, j->y + (n * j->oc + c) * j->ovol, j->ovol);
}

/* Checks dtypes and channel counts and fills the job. transposed: W is (C, OC/group, k...). */
static ct_status conv_setup(const ct_op *op, ct_tensor *const *in, ct_tensor **out, bool transposed,
                            conv_job *j, ct_diag *d) {
  ct_status st;
  const ct_tensor *x = in[0], *w = in[1], *b = op->n_in > 2 ? in[2] : NULL, *y = out[0];
  if ((st = ct_nn_need(op, x, CT_F32, "input X", d)) || (st = ct_nn_need(op, w, CT_F32, "weight W", d)) ||
      (b && (st = ct_nn_need(op, b, CT_F32, "bias B", d))) || (st = ct_nn_need(op, y, CT_F32, "output Y", d)))
    return st;
  if (w->ndim != x->ndim) return ct_shape_nn_fail(d, op, "weight rank %d differs from input rank %d", w->ndim, x->ndim);
  if ((st = ct_nn_geo_read(op, x, w, y, &j->g, d)) || (st = ct_nn_act_parse(op, &j->act, d))) return st;
  j->n = x->shape[0], j->c = x->shape[1], j->oc = y->shape[1], j->group = ct_attr_conv_group(op);
  if (j->group < 1 || j->c % j->group || j->oc % j->group || y->shape[0] != j->n)
    return ct_shape_nn_fail(d, op, "group %lld does not divide channels", (long long)j->group);
  j->cg = j->c / j->group, j->ocg = j->oc / j->group;
  int64_t wc = transposed ? w->shape[0] : w->shape[1], woc = transposed ? w->shape[1] : w->shape[0];
  if (wc != (transposed ? j->c : j->cg) || woc != (transposed ? j->ocg : j->oc))
    return ct_shape_nn_fail(d, op, "weight shape does not match %lld input / %lld output channels", (long long)j->c,
                      (long long)j->oc);
  for (int i = 0; i < j->g.nsp; i++)
    if (w->shape[2 + i] != j->g.k[3 - j->g.nsp + i]) return ct_shape_nn_fail(d, op, "kernel_shape differs from the weight");
  if (b && ct_tensor_numel(b) != j->oc) return ct_shape_nn_fail(d, op, "bias has %lld values, expected %lld",
                                                          (long long)ct_tensor_numel(b), (long long)j->oc);
  j->kvol = j->g.k[0] * j->g.k[1] * j->g.k[2];
  j->ivol = j->g.in[0] * j->g.in[1] * j->g.in[2];
  j->ovol = j->g.out[0] * j->g.out[1] * j->g.out[2];
  j->x = x->data, j->w = w->data, j->b = b ? b->data : NULL, j->y = y->data;
  return CT_OK;
}

/* CT_ERR_INPUT unless the output's spatial sizes follow from the input's and the attributes. */
static ct_status check_spatial(const conv_job *j, const ct_op *op, ct_diag *d) {
  for (int i = 0; i < 3; i++) {
    int64_t span = j->g.in[i] + j->g.pb[i] + j->g.pe[i] - j->g.dl[i] * (j->g.k[i] - 1) - 1;
    if (span < 0 || span / j->g.s[i] + 1 != j->g.out[i])
      return ct_shape_nn_fail(d, op, "output spatial size %lld inconsistent with the attributes", (long long)j->g.out[i]);
  }
  return CT_OK;
}

/* Conv, f32, NCHW/OIHW (1-3 spatial dims), with optional bias, fused act and ctx->post (applied
 * after act, per row of output while it is in cache): depthwise
 * (group == C == OC, 1-D/2-D) by direct loops, otherwise im2col per group + GEMM (OpenBLAS
 * sgemm; no im2col for 1x1 stride 1 unpadded). CT_ERR_INPUT on dtype/shape mismatches, CT_ERR_LIMIT
 * out of memory. */
ct_status ct_kern_conv(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                       ct_diag *d) {
  conv_job j;
  ct_status st = conv_setup(op, in, out, false, &j, d);
  if (st) return st;
  j.post = ctx ? ctx->post : NULL;
  if ((st = check_spatial(&j, op, d))) return st;
  if (j.group == j.c && j.oc == j.c && j.g.k[0] == 1 && j.g.in[0] == 1 && j.g.out[0] == 1 &&
      j.g.s[2] <= CT_NN_DW_MAX_S) {
    int64_t work = j.n * j.c * j.ovol * j.kvol;
    int parts = ct_nn_parallel_parts(ctx, j.n * j.c, work);
    j.scratch = malloc(sizeof *j.scratch * (size_t)(parts * dw_plan_make(&j.g).size));
    if (!j.scratch) return ct_shape_nn_oom(d, op);
    ct_nn_parallel(ctx, j.n * j.c, work, conv_dw, &j); /* bias + act fused per row */
    free(j.scratch);
    return CT_OK;
  }
  ct_nn_blas_threads(ctx);
  return conv_gemm(&j, ctx, op, d);
}

/* The ISA's float CONV order: y[p] += col[r][p] · w[r] for r = (c, kd, kh, kw) ascending, one
 * f32 rounding per product and per sum (no FMA: common/clones.h), vectorized over p. */
CT_CLONES_AVX2 static void mac_rows(float *restrict y, const float *restrict col, int64_t ldc, const float *restrict w,
                                    int64_t rows, int64_t nb) {
  for (int64_t p = 0; p < nb; p++) y[p] = 0.0f;
  for (int64_t r = 0; r < rows; r++) {
    const float wv = w[r], *src = col + r * ldc;
    for (int64_t p = 0; p < nb; p++) y[p] += src[p] * wv;
  }
}

/* mac_rows for 4 output channels at once (w0 … w3 their weight rows): each col row is read
 * once for the four; every output still adds its products in r order, as mac_rows does. */
CT_CLONES_AVX2 static void mac_rows4(float *restrict y0, float *restrict y1, float *restrict y2, float *restrict y3,
                                     const float *restrict col, int64_t ldc, const float *restrict w, int64_t wstride,
                                     int64_t rows, int64_t nb) {
  for (int64_t p = 0; p < nb; p++) y0[p] = y1[p] = y2[p] = y3[p] = 0.0f;
  for (int64_t r = 0; r < rows; r++) {
    const float a = w[r], b = w[wstride + r], c = w[2 * wstride + r], d = w[3 * wstride + r], *src = col + r * ldc;
    for (int64_t p = 0; p < nb; p++) {
      const float v = src[p];
      y0[p] += v * a, y1[p] += v * b, y2[p] += v * c, y3[p] += v * d;
    }
  }
}

enum { ORD_CHUNK = 512 }; /* output columns per task: col = rows × 512 floats */

/* Tasks (image, group, chunk of output columns): im2col of the chunk, then each output
 * channel of the group by mac_rows. */
static void conv_ordered_tasks(void *arg, int64_t lo, int64_t hi, int slot) {
  conv_job *j = arg;
  int64_t rows = j->cg * j->kvol, nch = (j->ovol + ORD_CHUNK - 1) / ORD_CHUNK;
  float *col = j->scratch + slot * rows * ORD_CHUNK;
  for (int64_t t = lo; t < hi; t++) {
    int64_t n = t / (j->group * nch), g = t / nch % j->group, c0 = t % nch * ORD_CHUNK;
    int64_t nb = j->ovol - c0 < ORD_CHUNK ? j->ovol - c0 : ORD_CHUNK, ldc = nb;
    const float *src = col, *x = j->x + (n * j->c + g * j->cg) * j->ivol;
    if (j->direct) src = x + c0, ldc = j->ivol; /* 1 × 1, stride 1, unpadded: the input is the column matrix */
    else im2col(j, x, col, c0, nb);
    int64_t o = g * j->ocg, oe = (g + 1) * j->ocg;
    float *y = j->y + n * j->oc * j->ovol + c0;
    for (; o + 4 <= oe; o += 4)
      mac_rows4(y + o * j->ovol, y + (o + 1) * j->ovol, y + (o + 2) * j->ovol, y + (o + 3) * j->ovol, src, ldc,
                j->w + o * rows, rows, rows, nb);
    for (; o < oe; o++) mac_rows(y + o * j->ovol, src, ldc, j->w + o * rows, rows, nb);
  }
}

ct_status ct_kern_conv_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                               ct_diag *d) {
  conv_job j;
  ct_status st = conv_setup(op, in, out, false, &j, d);
  if (!st) st = check_spatial(&j, op, d);
  if (st) return st;
  if (j.act.leaky) return ct_shape_nn_fail(d, op, "unsupported fused act (leaky) in the ISA's float order");
  j.direct = j.kvol == 1 && j.ivol == j.ovol;
  for (int i = 0; i < 3; i++) j.direct = j.direct && j.g.s[i] == 1 && j.g.pb[i] == 0 && j.g.pe[i] == 0;
  int64_t rows = j.cg * j.kvol, tasks = j.n * j.group * ((j.ovol + ORD_CHUNK - 1) / ORD_CHUNK);
  int64_t work = j.n * j.oc * j.ovol * rows;
  int parts = ct_nn_parallel_parts(ctx, tasks, work);
  j.scratch = malloc(sizeof *j.scratch * (size_t)(parts * rows * ORD_CHUNK + 1));
  if (!j.scratch) return ct_shape_nn_oom(d, op);
  if (tasks > 0) ct_nn_parallel(ctx, tasks, work, conv_ordered_tasks, &j);
  free(j.scratch);
  conv_epilogue(&j);
  return CT_OK;
}

/* col2im of ConvTranspose for the input columns [c0, c0 + nb) (flattened (id, ih, iw)):
 * y[oc][i*s - pb + k*dl] += col[(oc, kd, kh, kw)][p - c0], col row stride nb. */
static void col2im(const conv_job *j, const float *col, float *y, int64_t c0, int64_t nb) {
  const ct_nn_geo *g = &j->g;
  int64_t W = g->in[2], HW = g->in[1] * W, rows = j->ocg * j->kvol;
  for (int64_t r = 0; r < rows; r++) {
    int64_t kw = r % g->k[2], kh = r / g->k[2] % g->k[1], kd = r / (g->k[2] * g->k[1]) % g->k[0], oc = r / j->kvol;
    float *yc = y + oc * j->ovol;
    for (int64_t p = c0; p < c0 + nb;) {
      int64_t id = p / HW, ih = p / W % g->in[1], a = p % W;
      int64_t e = a + (W - a < c0 + nb - p ? W - a : c0 + nb - p); /* this run: iw in [a, e) */
      const float *src = col + r * nb + (p - c0) - a;
      int64_t od = in_pos(g, 0, id, kd), oh = in_pos(g, 1, ih, kh);
      if (od >= 0 && od < g->out[0] && oh >= 0 && oh < g->out[1]) {
        float *dst = yc + (od * g->out[1] + oh) * g->out[2];
        for (int64_t iw = a; iw < e; iw++) {
          int64_t ow = in_pos(g, 2, iw, kw);
          if (ow >= 0 && ow < g->out[2]) dst[ow] += src[iw];
        }
      }
      p += e - a;
    }
  }
}

/* Per image and group: col (ocg*kvol x chunk) = W_g^T (W_g is cg x ocg*kvol row-major) times
 * X_g (cg x ivol) restricted to a column chunk (~1 MiB of col, reused), scattered by col2im. */
ct_status ct_kern_convtranspose(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                ct_diag *d) {
  conv_job j;
  ct_status st = conv_setup(op, in, out, true, &j, d);
  if (st) return st;
  j.post = NULL; /* not a ct_kernel_takes_post kernel */
  int64_t rows = j.ocg * j.kvol, nb = 262144 / (rows > 0 ? rows : 1);
  nb = nb < 64 ? 64 : nb;
  if (nb > j.ivol) nb = j.ivol;
  float *col = malloc(sizeof *col * (size_t)(rows * nb + 1));
  if (!col) return ct_shape_nn_oom(d, op);
  ct_nn_blas_threads(ctx);
  memset(j.y, 0, sizeof *j.y * (size_t)(j.n * j.oc * j.ovol));
  for (int64_t n = 0; n < j.n; n++)
    for (int64_t gi = 0; gi < j.group; gi++)
      for (int64_t c0 = 0; c0 < j.ivol; c0 += nb) {
        int64_t w = j.ivol - c0 < nb ? j.ivol - c0 : nb;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows, (int)w, (int)j.cg, 1.0f, j.w + gi * j.cg * rows,
                    (int)rows, j.x + (n * j.c + gi * j.cg) * j.ivol + c0, (int)j.ivol, 0.0f, col, (int)w);
        col2im(&j, col, j.y + (n * j.oc + gi * j.ocg) * j.ovol, c0, w);
      }
  free(col);
  conv_epilogue(&j);
  return CT_OK;
}

/* ConvTranspose in the ISA's float order: every output starts at +0.0 and adds the f32 products
 * x[c, i] · W[c, o, k] in (c, kd, kh, kw) order (each input position i reaching the output by
 * i·s − pb + k·dl), then the bias. With kernel = stride (the codegen's form, cg_convt.c) one
 * tap per channel reaches each output, so this is the 1 × 1 CONV over c the program runs. */
ct_status ct_kern_convtranspose_ordered(const ct_op *op, ct_tensor *const *in, ct_tensor **out,
                                        const ct_kernel_ctx *ctx, ct_diag *d) {
  (void)ctx;
  conv_job j;
  ct_status st = conv_setup(op, in, out, true, &j, d);
  if (st) return st;
  const ct_nn_geo *g = &j.g;
  memset(j.y, 0, sizeof *j.y * (size_t)(j.n * j.oc * j.ovol));
  for (int64_t n = 0; n < j.n; n++)
    for (int64_t gi = 0; gi < j.group; gi++)
      for (int64_t c = gi * j.cg; c < (gi + 1) * j.cg; c++)
        for (int64_t o = 0; o < j.ocg; o++) {
          const float *x = j.x + (n * j.c + c) * j.ivol, *w = j.w + (c * j.ocg + o) * j.kvol;
          float *y = j.y + (n * j.oc + gi * j.ocg + o) * j.ovol;
          for (int64_t t = 0; t < j.kvol; t++) {
            int64_t kd = t / (g->k[1] * g->k[2]), kh = t / g->k[2] % g->k[1], kw = t % g->k[2];
            for (int64_t i = 0; i < j.ivol; i++) {
              int64_t id = i / (g->in[1] * g->in[2]), ih = i / g->in[2] % g->in[1], iw = i % g->in[2];
              int64_t od = id * g->s[0] - g->pb[0] + kd * g->dl[0], oh = ih * g->s[1] - g->pb[1] + kh * g->dl[1];
              int64_t ow = iw * g->s[2] - g->pb[2] + kw * g->dl[2];
              if (od < 0 || od >= g->out[0] || oh < 0 || oh >= g->out[1] || ow < 0 || ow >= g->out[2]) continue;
              y[(od * g->out[1] + oh) * g->out[2] + ow] += x[i] * w[t];
            }
          }
        }
  conv_epilogue(&j);
  return CT_OK;
}
