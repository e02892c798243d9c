/* nn_pool.c: ONNX nn family, pooling: float32 kernels (max pools also integers via f32) of
 * MaxPool (optional int64 Indices, storage_order), AveragePool (count_include_pad), LpPool,
 * GlobalAveragePool and GlobalMaxPool over 1-D..3-D windows (MaxPool-12, AveragePool-11,
 * LpPool-11; divisor with count_include_pad as onnxruntime's pool kernels). 1-D/2-D max pools
 * are separable (row max, then column max); average pools sum padded rows with vector loops in
 * the same order as the generic loop. Shape functions: nn_shape.c. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn_util.h"
#include "quant/float_fn.h"
#include "common/clones.h"

typedef enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

/* A pooling run: geometry, per-dim valid tap ranges and padded-window counts, pointers. */
typedef struct pool_job {
  ct_nn_geo g;
  pool_kind kind;
  bool include_pad, col_major;
  double p;
  int64_t ivol, ovol;
  const float *x;
  float *y;
  int64_t *idx;                         /* Indices output or NULL */
  int64_t *klo[3], *khi[3], *npad[3];   /* per dim, per output position */
  bool fast;                            /* 1-D/2-D max or average pool without Indices */
  bool w_hole;                          /* some output column's window has no input column */
  int64_t pw, scr;                      /* fast path: padded row width, scratch floats per slot */
  float *scratch;                       /* fast path: scr floats per thread slot */
} pool_job;

/* Valid tap range [klo, khi) (input inside [0, in)) and the count of taps inside the
 * padded extent [-pb, in + pe) for every output position along dim i. */
static void pool_ranges(pool_job *j, int i) {
  const ct_nn_geo *g = &j->g;
  for (int64_t o = 0; o < g->out[i]; o++) {
    int64_t start = o * g->s[i] - g->pb[i], lo = g->k[i], hi = 0, np = 0;
    for (int64_t k = 0; k < g->k[i]; k++) {
      int64_t pos = start + k * g->dl[i];
      if (pos >= 0 && pos < g->in[i]) {
        if (k < lo) lo = k;
        hi = k + 1;
      }
      np += pos < g->in[i] + g->pe[i];
    }
    j->klo[i][o] = lo < hi ? lo : 0;
    j->khi[i][o] = lo < hi ? hi : 0;
    j->npad[i][o] = np;
  }
}

/* One output element of plane x at output position (od, oh, ow). */
static float pool_one(const pool_job *j, const float *x, int64_t od, int64_t oh, int64_t ow, int64_t *arg) {
  const ct_nn_geo *g = &j->g;
  double acc = 0;
  float best = -FLT_MAX;
  int64_t besti = -1, cnt = 0;
  for (int64_t kd = j->klo[0][od]; kd < j->khi[0][od]; kd++) {
    int64_t id = od * g->s[0] - g->pb[0] + kd * g->dl[0];
    for (int64_t kh = j->klo[1][oh]; kh < j->khi[1][oh]; kh++) {
      int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->dl[1];
      for (int64_t kw = j->klo[2][ow]; kw < j->khi[2][ow]; kw++) {
        int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->dl[2];
        int64_t pos = (id * g->in[1] + ih) * g->in[2] + iw;
        float v = x[pos];
        if (j->kind == POOL_MAX) {
          if (besti < 0 || (best == best && (v > best || v != v))) best = v, besti = j->col_major ? id + ih * g->in[0] + iw * g->in[0] * g->in[1] : pos;
        } else {
          acc += j->kind == POOL_AVG ? v : j->p == 2 ? (double)v * v : pow(fabs(v), j->p);
        }
        cnt++;
      }
    }
  }
  if (j->kind == POOL_MAX) {
    *arg = besti < 0 ? 0 : besti;
    return best;
  }
  if (j->kind == POOL_LP) return (float)(j->p == 2 ? sqrt(acc) : pow(acc, 1.0 / j->p));
  if (j->include_pad) cnt = j->npad[0][od] * j->npad[1][oh] * j->npad[2][ow];
  return cnt ? (float)(acc / (double)cnt) : 0.0f;
}

static void pool_planes(void *arg, int64_t lo, int64_t hi, int part) {
  (void)part;
  const pool_job *j = arg;
  const ct_nn_geo *g = &j->g;
  for (int64_t p = lo; p < hi; p++) {
    const float *x = j->x + p * j->ivol;
    int64_t o = p * j->ovol;
    for (int64_t od = 0; od < g->out[0]; od++)
      for (int64_t oh = 0; oh < g->out[1]; oh++)
        for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {
          int64_t a = 0;
          j->y[o] = pool_one(j, x, od, oh, ow, &a);
          if (j->idx) j->idx[o] = p * j->ivol + a;
        }
  }
}

/* o[i] = ct_quant_max_step(o[i], a[i]) (NaN wins), i < n, in blocks of 8 so that -O2 vectorizes. */
CT_CLONES_AVX2 static void vmax(float *restrict o, const float *restrict a, int64_t n) {
  int64_t m = n - n % 8, i;
  for (i = 0; i < m; i += 8)
    for (int k = 0; k < 8; k++) o[i + k] = ct_quant_max_step(o[i + k], a[i + k]);
  for (i = m; i < n; i++) o[i] = ct_quant_max_step(o[i], a[i]);
}

/* acc[i] += a[i s] in double, i < n (vectorized for s == 1). */
CT_CLONES_AVX2 static void vadd_d(double *restrict acc, const float *restrict a, int64_t s, int64_t n) {
  if (s != 1) {
    for (int64_t i = 0; i < n; i++) acc[i] += a[i * s];
    return;
  }
  int64_t m = n - n % 8, i;
  for (i = 0; i < m; i += 8)
    for (int k = 0; k < 8; k++) acc[i + k] += a[i + k];
  for (i = m; i < n; i++) acc[i] += a[i];
}

/* buf (j->pw floats) = row src (W floats) placed at offset pb, `fill` elsewhere. */
static void pad_row(const pool_job *j, const float *src, float fill, float *buf) {
  int64_t W = j->g.in[2], pb = j->g.pb[2];
  for (int64_t q = 0; q < pb; q++) buf[q] = fill;
  memcpy(buf + pb, src, sizeof *buf * (size_t)W);
  for (int64_t q = pb + W; q < j->pw; q++) buf[q] = fill;
}

/* Max pool of one plane, separably: each input row is padded with -inf and max-filtered
 * along W into hb (H x OW), then each output row is the max of its window's rows of hb.
 * Exact (max is associative); a NaN in the window gives NaN (ct_quant_max_step). An
 * empty window gives -FLT_MAX as the generic loop. */
static void max_plane(const pool_job *j, const float *x, float *y, float *scr) {
  const ct_nn_geo *g = &j->g;
  int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2], s = g->s[2], dl = g->dl[2];
  float *buf = scr, *hb = scr + j->pw;
  for (int64_t ih = 0; ih < H; ih++) {
    float *h = hb + ih * OW;
    pad_row(j, x + ih * W, -INFINITY, buf);
    if (s == 1) {
      memcpy(h, buf, sizeof *h * (size_t)OW);
      for (int64_t k = 1; k < g->k[2]; k++) vmax(h, buf + k * dl, OW);
    } else {
      for (int64_t ow = 0; ow < OW; ow++) {
        float m = buf[ow * s];
        for (int64_t k = 1; k < g->k[2]; k++) m = ct_quant_max_step(m, buf[ow * s + k * dl]);
        h[ow] = m;
      }
    }
    for (int64_t ow = 0; j->w_hole && ow < OW; ow++)
      if (j->klo[2][ow] == j->khi[2][ow]) h[ow] = -FLT_MAX;
  }
  for (int64_t oh = 0; oh < OH; oh++) {
    float *o = y + oh * OW;
    int64_t lo = j->klo[1][oh], hi = j->khi[1][oh], ih0 = oh * g->s[1] - g->pb[1];
    if (lo == hi) {
      for (int64_t ow = 0; ow < OW; ow++) o[ow] = -FLT_MAX;
      continue;
    }
    memcpy(o, hb + (ih0 + lo * g->dl[1]) * OW, sizeof *o * (size_t)OW);
    for (int64_t kh = lo + 1; kh < hi; kh++) vmax(o, hb + (ih0 + kh * g->dl[1]) * OW, OW);
  }
}

/* Average pool of one plane: rows padded with zeros (scratch H x pw), each output row's sums
 * accumulated in double over kh then kw as pool_one does (the added zeros change nothing),
 * divided by the count of in-bounds taps, or with count_include_pad of padded-extent taps. */
static void avg_plane(const pool_job *j, const float *x, float *y, float *scr) {
  const ct_nn_geo *g = &j->g;
  int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
  double *acc = (double *)(void *)scr;
  float *rows = scr + 2 * OW;
  for (int64_t ih = 0; ih < H; ih++) pad_row(j, x + ih * W, 0.0f, rows + ih * j->pw);
  for (int64_t oh = 0; oh < OH; oh++) {
    for (int64_t ow = 0; ow < OW; ow++) acc[ow] = 0;
    for (int64_t kh = j->klo[1][oh]; kh < j->khi[1][oh]; kh++) {
      const float *r = rows + (oh * g->s[1] - g->pb[1] + kh * g->dl[1]) * j->pw;
      for (int64_t kw = 0; kw < g->k[2]; kw++) vadd_d(acc, r + kw * g->dl[2], g->s[2], OW);
    }
    int64_t nh = j->include_pad ? j->npad[1][oh] : j->khi[1][oh] - j->klo[1][oh];
    for (int64_t ow = 0; ow < OW; ow++) {
      int64_t cnt = nh * (j->include_pad ? j->npad[2][ow] : j->khi[2][ow] - j->klo[2][ow]);
      y[oh * OW + ow] = cnt ? (float)(acc[ow] / (double)cnt) : 0.0f;
    }
  }
}

static void pool_planes_fast(void *arg, int64_t lo, int64_t hi, int slot) {
  const pool_job *j = arg;
  float *scr = j->scratch + slot * j->scr;
  for (int64_t p = lo; p < hi; p++)
    (j->kind == POOL_MAX ? max_plane : avg_plane)(j, j->x + p * j->ivol, j->y + p * j->ovol, scr);
}

/* Chooses the fast path (1-D/2-D max or average pool, no Indices) and sizes its scratch:
 * padded row width pw covers the input and every window; per slot the max path needs pw +
 * H * OW floats, the average path 2 OW (OW doubles) + H * pw. */
static void pool_fast_plan(pool_job *j) {
  const ct_nn_geo *g = &j->g;
  j->fast = g->nsp <= 2 && !j->idx && j->kind != POOL_LP;
  int64_t need = (g->out[2] - 1) * g->s[2] + (g->k[2] - 1) * g->dl[2] + 1, inw = g->pb[2] + g->in[2];
  j->pw = need > inw ? need : inw;
  j->scr = j->kind == POOL_MAX ? j->pw + g->in[1] * g->out[2] : 2 * g->out[2] + g->in[1] * j->pw;
  j->scr += j->scr % 2; /* keeps every slot's doubles aligned */
  j->w_hole = false;
  for (int64_t ow = 0; ow < g->out[2]; ow++) j->w_hole = j->w_hole || j->klo[2][ow] == j->khi[2][ow];
}

/* Runs a windowed pool. Tap positions are monotonic in k, so every tap in [klo, khi) of each
 * dim is inside the input and the window loops need no bounds checks. */
static ct_status pool_run(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          pool_kind kind, ct_diag *d) {
  pool_job j = {.kind = kind};
  ct_status st;
  if ((st = ct_nn_need(op, in[0], CT_F32, "input X", d)) || (st = ct_nn_need(op, out[0], CT_F32, "output Y", d)) ||
      (st = ct_nn_geo_read(op, in[0], NULL, out[0], &j.g, d)))
    return st;
  if (out[0]->shape[0] != in[0]->shape[0] || out[0]->shape[1] != in[0]->shape[1])
    return ct_shape_nn_fail(d, op, "output batch/channels differ from the input");
  if (op->n_out > 1 && out[1]) {
    if ((st = ct_nn_need(op, out[1], CT_I64, "output Indices", d)) ||
        (st = ct_nn_check_shape(op, out[1], out[0]->ndim, out[0]->shape, d)))
      return st;
    j.idx = out[1]->data;
  }
  j.include_pad = ct_attr_pool_count_include_pad(op) != 0;
  j.col_major = ct_attr_pool_storage_order(op) == 1;
  j.p = (double)ct_attr_pool_p(op);
  j.ivol = j.g.in[0] * j.g.in[1] * j.g.in[2];
  j.ovol = j.g.out[0] * j.g.out[1] * j.g.out[2];
  j.x = in[0]->data, j.y = out[0]->data;
  int64_t tot = j.g.out[0] + j.g.out[1] + j.g.out[2];
  int64_t *buf = malloc(sizeof *buf * (size_t)(3 * tot));
  if (!buf) return ct_shape_nn_oom(d, op);
  int64_t *q = buf;
  for (int i = 0; i < 3; i++) {
    j.klo[i] = q, j.khi[i] = q + j.g.out[i], j.npad[i] = q + 2 * j.g.out[i];
    q += 3 * j.g.out[i];
    pool_ranges(&j, i);
  }
  int64_t planes = in[0]->shape[0] * in[0]->shape[1], work = planes * j.ovol * j.g.k[0] * j.g.k[1] * j.g.k[2];
  pool_fast_plan(&j);
  if (j.fast && !(j.scratch = malloc(sizeof *j.scratch * (size_t)(ct_nn_parallel_parts(ctx, planes, work) * j.scr)))) {
    free(buf);
    return ct_shape_nn_oom(d, op);
  }
  ct_nn_parallel(ctx, planes, work, j.fast ? pool_planes_fast : pool_planes, &j);
  free(j.scratch);
  free(buf);
  return CT_OK;
}

/* MaxPool, f32 (f16/bf16/8- and 16-bit integers through f32), optional int64 Indices
 * (flattened over N, C and spatial; storage_order 1 = column-major spatial index). */
ct_status ct_kern_maxpool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  if (in[0] && in[0]->dtype != CT_F32) return ct_nn_via_f32(ct_kern_maxpool, op, in, out, ctx, d);
  return pool_run(op, in, out, ctx, POOL_MAX, d);
}

/* AveragePool, f32: mean of the in-bounds taps, or with count_include_pad over the taps
 * inside the padded extent. */
ct_status ct_kern_avgpool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                          ct_diag *d) {
  return pool_run(op, in, out, ctx, POOL_AVG, d);
}

/* LpPool, f32: (sum of |x|^p over the in-bounds taps)^(1/p). */
ct_status ct_kern_lppool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  if (ct_attr_pool_p(op) < 1) return ct_shape_nn_fail(d, op, "attribute p must be >= 1");
  return pool_run(op, in, out, ctx, POOL_LP, d);
}

/* GlobalAveragePool / GlobalMaxPool: one value per (n, c) plane. */
/* Planes [lo, hi) of a global pooling: each plane's max, or its mean summed in double in
 * index order (one plane per thread: the same results for any split). */
typedef struct gpool_job {
  const float *x;
  float *y;
  int64_t vol;
  bool is_max;
} gpool_job;

static void gpool_planes(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const gpool_job *j = arg;
  for (int64_t p = lo; p < hi; p++) {
    const float *xp = j->x + p * j->vol;
    if (j->is_max) {
      float m = j->vol ? xp[0] : -FLT_MAX;
      for (int64_t i = 1; i < j->vol; i++) m = ct_quant_max_step(m, xp[i]);
      j->y[p] = m;
    } else {
      double s = 0;
      for (int64_t i = 0; i < j->vol; i++) s += xp[i];
      j->y[p] = j->vol ? (float)(s / (double)j->vol) : 0.0f;
    }
  }
}

static ct_status global_pool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, bool is_max,
                             const ct_kernel_ctx *ctx, ct_diag *d) {
  const ct_tensor *x = in[0];
  ct_status st;
  if ((st = ct_nn_need(op, x, CT_F32, "input X", d)) || (st = ct_nn_need(op, out[0], CT_F32, "output Y", d)))
    return st;
  if (x->ndim < 2) return ct_shape_nn_fail(d, op, "input must have rank >= 2");
  int64_t shape[CT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) shape[i] = i < 2 ? x->shape[i] : 1;
  if ((st = ct_nn_check_shape(op, out[0], x->ndim, shape, d))) return st;
  int64_t planes = x->shape[0] * x->shape[1], vol = planes ? ct_tensor_numel(x) / planes : 0;
  gpool_job j = {x->data, out[0]->data, vol, is_max};
  ct_nn_parallel(ctx, planes, planes * vol, gpool_planes, &j);
  return CT_OK;
}

/* GlobalAveragePool, f32: mean of each (n, c) plane. */
ct_status ct_kern_globalavgpool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                ct_diag *d) {
  return global_pool(op, in, out, false, ctx, d);
}

/* GlobalMaxPool: max of each (n, c) plane (non-f32 through f32). */
ct_status ct_kern_globalmaxpool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                                ct_diag *d) {
  if (in[0] && in[0]->dtype != CT_F32) return ct_nn_via_f32(ct_kern_globalmaxpool, op, in, out, ctx, d);
  return global_pool(op, in, out, true, ctx, d);
}
