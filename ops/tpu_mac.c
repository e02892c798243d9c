/* tpu_mac.c: integer kernels of the Tpu dialect's multiply-accumulate ops — Conv (groups,
 * depthwise, pads, strides, dilations), Gemm and MatMul — as isa.def's CONV / DWCONV /
 * MATMUL compute them: an int32 accumulator of (x − zp_x)·(w − zp_w) plus the int32 bias,
 * then ct_quant_requant_act with the per-channel (multiplier, rshift) and the fused
 * activation (docs/tpu.md); a Gemm / MatMul with an i32 result and no multiplier stores the
 * saturated accumulator (a module output kept at accumulator precision). Sums are kept in int64 (an int32 accumulator could wrap when a
 * bias is near the int32 limits; the lowering keeps biases below 2^30). Conv is im2col (int16 columns) + an int32 dot loop,
 * or, for groups of at least CONV_GEMM_MIN_OC output channels, OpenBLAS's sgemm on the same
 * integers in chunks short enough to be exact (conv_channels_gemm); depthwise is ops/tpu_dw.c.
 * Loads and the requant epilogue go a row at a time (ct_tq_get_row_*, ct_quant_requant_act_row*). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn_util.h"
#include "ops/ops_util.h"
#include "ops/tpu_dw.h"
#include "quant/igemm.h"
#include "ops/tpu_util.h"
#include "common/clones.h"

typedef struct conv_job {
  const ct_op *op;
  const ct_tensor *w, *b;
  ct_tensor *y;
  const int16_t *col;     /* [K][P] of the current image/group */
  const int16_t *colp;    /* the same paired for ct_quant_igemm_paired (integer GEMM path) */
  int64_t K, P, og, grp, n, oc;
  const int32_t *m;
  const int *s;
  int32_t zw0, zy, hi;
  const int32_t *zw;      /* per-channel weight zero points or NULL */
  ct_quant_act act;
  bool oom;
  const float *colf;      /* the columns as floats (GEMM path), their chunk length, and */
  int64_t kc;             /* whether max|w − zp_w|·max|col| ≤ 2^24 (exact_sgemm_acc's small) */
  bool small;
  bool acc32;             /* small, and max|b| + K·max|w − zp_w|·max|col| ≤ INT32_MAX: int32 sums */
  int64_t bmax;           /* max |bias| */
  const int16_t *a16;     /* integer GEMM path: the group's weights − zp_w, [og][K] */
  const int32_t *bias32;  /* ... and its biases, [og] */
} conv_job;

/* A Conv's data derived from its weights, bias and quantization alone, kept across runs in
 * ctx->memo when the interpreter gives one (else made and freed per call): the requant
 * pairs, max |w − zp_w| and max |b| (wmax < 0: not computed yet), and for the integer GEMM
 * path every group's weights − zp_w as int16 and biases as int32 ([oc][K], [oc]; NULL until
 * a group first takes that path). */
typedef struct conv_memo {
  int32_t *m;
  int *s;
  int64_t wmax, bmax;
  int16_t *a16;
  int32_t *bias32;
} conv_memo;

static void conv_memo_free(void *p) {
  conv_memo *cm = p;
  if (cm) free(cm->m), free(cm->s), free(cm->a16), free(cm->bias32);
  free(cm);
}

#define CONV_GEMM_MIN_OC 1 /* output channels per group from which a Conv runs on sgemm */

/* Output channels [lo, hi) of one group: acc = bias + Σ_k (w − zp_w)·col, requantized. */
static void conv_channels(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  conv_job *j = arg;
  int64_t *acc = malloc((size_t)(j->P > 0 ? j->P : 1) * sizeof *acc); /* no int32 wrap-around */
  int32_t *wr = malloc((size_t)(j->K > 0 ? j->K : 1) * sizeof *wr);
  if (!acc || !wr) j->oom = true;
  for (int64_t o = lo; acc && wr && o < hi; o++) {
    int64_t oc = j->grp * j->og + o;
    int32_t b = j->b ? ct_tq_get(j->b, oc) : 0, zw = j->zw ? j->zw[oc] : j->zw0;
    ct_tq_get_row_i32(j->w, oc * j->K, j->K, zw, wr);
    for (int64_t p = 0; p < j->P; p++) acc[p] = b;
    for (int64_t k = 0; k < j->K; k++) {
      int32_t wv = wr[k];
      if (!wv) continue;
      const int16_t *c = j->col + k * j->P;
      for (int64_t p = 0; p < j->P; p++) acc[p] += (int32_t)(wv * c[p]);
    }
    ct_quant_requant_act_row(acc, j->P, j->m[oc], j->s[oc], j->zy, j->act, j->hi, j->y->dtype,
                             ct_tq_at(j->y, (j->n * j->oc + oc) * j->P));
  }
  free(acc), free(wr);
}

/* The chunk length of the GEMM path: the most columns whose products and partial sums stay
 * within ±2^24 (float32's exact integers), given max |w − zp_w| and max |col|. */
static int64_t exact_chunk(int64_t wmax, int64_t cmax) {
  int64_t per = wmax * cmax;
  return per <= 0 ? (int64_t)1 << 24 : ((int64_t)1 << 24) / per > 0 ? ((int64_t)1 << 24) / per : 1;
}

/* acc[M×N] += A[M×K]·B[K×N] (row-major floats holding integers; B stored [N×K] when tb) by
 * sgemm over chunks of at most kc of K, each chunk's result converted to int64 (exact when every product and partial
 * sum of a chunk is within ±2^24: exact_chunk); cf is an M×N scratch. small: max|a|·max|b|
 * ≤ 2^24, so every chunk's result is an integer within ±2^24 and converts through int32
 * (vectorizable) to the same value as through int64. With small, an int32 acc32 (acc NULL)
 * may take the sums instead when the caller has bounded every partial sum within int32. */
static void exact_sgemm_acc(int64_t M, int64_t N, int64_t K, const float *a, const float *b, bool tb, int64_t kc,
                            bool small, float *cf, int64_t *acc, int32_t *acc32) {
  for (int64_t k0 = 0; k0 < K; k0 += kc) {
    int64_t n = K - k0 < kc ? K - k0 : kc;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)n, 1.0f, a + k0, (int)K,
                tb ? b + k0 : b + k0 * N, (int)(tb ? K : N), 0.0f, cf, (int)N);
    if (acc32)
      for (int64_t i = 0; i < M * N; i++) acc32[i] += (int32_t)cf[i];
    else if (small)
      for (int64_t i = 0; i < M * N; i++) acc[i] += (int32_t)cf[i];
    else
      for (int64_t i = 0; i < M * N; i++) acc[i] += (int64_t)cf[i];
  }
}

/* Is the product bound of exact_chunk within float32's exact integers (exact_sgemm_acc's small)? */
static bool exact_small(int64_t amax, int64_t bmax) { return amax * bmax <= (int64_t)1 << 24; }

/* The GEMM path of conv_channels: acc = bias + Σ over chunks of kc columns of
 * sgemm(W − zp_w, col). Every product and partial sum of a chunk is an integer of magnitude
 * ≤ kc·max|w − zp_w|·max|col| ≤ 2^24 (ct_tpu_conv picks kc so), which float32 holds exactly,
 * so each chunk's sum is exact whatever order sgemm adds in, and the int64 total equals the
 * dot loop's bit for bit. */
static void conv_channels_gemm(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  conv_job *j = arg;
  int64_t rows = hi - lo, K = j->K, P = j->P;
  float *wf = calloc((size_t)(rows * K + 1), sizeof *wf), *cf = malloc(sizeof *cf * (size_t)(rows * P + 1));
  int64_t *acc = j->acc32 ? NULL : malloc(sizeof *acc * (size_t)(rows * P + 1));
  int32_t *acc32 = j->acc32 ? malloc(sizeof *acc32 * (size_t)(rows * P + 1)) : NULL;
  int32_t *wr = malloc(sizeof *wr * (size_t)(K + 1));
  if (!wf || !cf || !(acc || acc32) || !wr) {
    free(wf), free(cf), free(acc), free(acc32), free(wr);
    j->oom = true;
    return;
  }
  for (int64_t r = 0; r < rows; r++) {
    int64_t oc = j->grp * j->og + lo + r;
    int32_t zw = j->zw ? j->zw[oc] : j->zw0, b = j->b ? ct_tq_get(j->b, oc) : 0;
    ct_tq_get_row_i32(j->w, oc * K, K, zw, wr);
    for (int64_t k = 0; k < K; k++) wf[r * K + k] = (float)wr[k];
    for (int64_t p = 0; acc32 && p < P; p++) acc32[r * P + p] = b;
    for (int64_t p = 0; acc && p < P; p++) acc[r * P + p] = b;
  }
  exact_sgemm_acc(rows, P, K, wf, j->colf, false, j->kc, j->small, cf, acc, acc32);
  for (int64_t r = 0; r < rows; r++) {
    int64_t oc = j->grp * j->og + lo + r;
    void *y = ct_tq_at(j->y, (j->n * j->oc + oc) * P);
    if (acc32) ct_quant_requant_act_row_i32(acc32 + r * P, P, j->m[oc], j->s[oc], j->zy, j->act, j->hi, j->y->dtype, y);
    else ct_quant_requant_act_row(acc + r * P, P, j->m[oc], j->s[oc], j->zy, j->act, j->hi, j->y->dtype, y);
  }
  free(wf), free(cf), free(acc), free(acc32), free(wr);
}

#define IGEMM_COLS 2048 /* output columns per ct_quant_igemm call of the row split */
#define IGEMM_QUAD 4     /* output channels per task of the row split: whole rows of the 4-row micro-kernels */
#define IGEMM_BLOCK 512  /* output columns per task of the column split */

/* Output channels [r0, r0 + rows) × columns [p0, p0 + n) of one group on the integer path
 * (conv_grouped checked ct_quant_igemm_exact): acc = bias + (W − zp_w)·col by ct_quant_igemm on
 * the group's converted weights (j->a16, j->bias32) and the shared paired columns, into the
 * scratch c (rows·n int32), then requantized a row at a time. The sums are exact int32
 * integers, equal to the dot loop's, whatever the split. False when out of memory. */
static bool igemm_block(const conv_job *j, int64_t r0, int64_t rows, int64_t p0, int64_t n, int32_t *c) {
  if (!ct_quant_igemm_paired(rows, n, j->K, j->a16 + r0 * j->K, j->K, j->colp + 2 * p0, j->P, j->bias32 + r0, c, n))
    return false;
  for (int64_t r = 0; r < rows; r++) {
    int64_t oc = j->grp * j->og + r0 + r;
    ct_quant_requant_act_row_i32(c + r * n, n, j->m[oc], j->s[oc], j->zy, j->act, j->hi, j->y->dtype,
                                 ct_tq_at(j->y, (j->n * j->oc + oc) * j->P + p0));
  }
  return true;
}

/* The row split: quads [qlo, qhi) of IGEMM_QUAD output channels, every column (blocks of
 * IGEMM_COLS). */
static void conv_channels_igemm(void *arg, int64_t qlo, int64_t qhi, int slot) {
  (void)slot;
  conv_job *j = arg;
  int64_t lo = qlo * IGEMM_QUAD, hi = qhi * IGEMM_QUAD < j->og ? qhi * IGEMM_QUAD : j->og;
  int64_t nb = j->P < IGEMM_COLS ? j->P : IGEMM_COLS;
  int32_t *c = malloc(sizeof *c * (size_t)((hi - lo) * nb + 1));
  bool ok = c != NULL;
  for (int64_t p0 = 0; ok && p0 < j->P; p0 += nb) ok = igemm_block(j, lo, hi - lo, p0, j->P - p0 < nb ? j->P - p0 : nb, c);
  if (!ok) j->oom = true;
  free(c);
}

/* The column split, for a conv with many output columns: blocks [lo, hi) of IGEMM_BLOCK
 * columns, every output channel; each task reads only its columns (the row split has every
 * task stream all of them). */
static void conv_cols_igemm(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  conv_job *j = arg;
  int32_t *c = malloc(sizeof *c * (size_t)(j->og * IGEMM_BLOCK + 1));
  bool ok = c != NULL;
  for (int64_t b = lo; ok && b < hi; b++) {
    int64_t p0 = b * IGEMM_BLOCK;
    ok = igemm_block(j, 0, j->og, p0, j->P - p0 < IGEMM_BLOCK ? j->P - p0 : IGEMM_BLOCK, c);
  }
  if (!ok) j->oom = true;
  free(c);
}

/* Widens [*lo, *hi] to hold v[0..n). */
CT_CLONES_V3 static void i32_range(const int32_t *v, int64_t n, int64_t *lo, int64_t *hi) {
  int32_t l = (int32_t)*lo, h = (int32_t)*hi;
  for (int64_t i = 0; i < n; i++) {
    l = v[i] < l ? v[i] : l;
    h = v[i] > h ? v[i] : h;
  }
  *lo = l, *hi = h;
}

/* dst[i] = (float)v[i] for i < n; returns max(0, max |v[i]|) in int64 (|INT32_MIN| too). */
static int64_t floats_absmax(const int32_t *v, int64_t n, float *dst) {
  int64_t lo = 0, hi = 0;
  for (int64_t i = 0; i < n; i++) dst[i] = (float)v[i];
  i32_range(v, n, &lo, &hi);
  return -lo > hi ? -lo : hi;
}

/* max |w − zp_w| over the weights of op (per-channel zero points zw, else zw0), the
 * difference in int64; -1 when out of memory. */
static int64_t weight_absmax(const ct_tensor *w, int64_t oc, int64_t K, const int32_t *zw, int32_t zw0) {
  int32_t *wr = malloc(sizeof *wr * (size_t)(K + 1));
  int64_t mx = wr ? 0 : -1;
  for (int64_t o = 0; wr && K > 0 && o < oc; o++) { /* |w − z| is largest at the row's min or max */
    int64_t z = zw ? zw[o] : zw0, lo = INT32_MAX, hi = INT32_MIN;
    ct_tq_get_row_i32(w, o * K, K, 0, wr);
    i32_range(wr, K, &lo, &hi);
    mx = llabs(lo - z) > mx ? llabs(lo - z) : mx;
    mx = llabs(hi - z) > mx ? llabs(hi - z) : mx;
  }
  free(wr);
  return mx;
}

/* colf := col as floats (n of them); returns max |col|. */
CT_CLONES_V3 static int col_floats(const int16_t *col, int64_t n, float *colf) {
  int cmax = 0;
  for (int64_t i = 0; i < n; i++) {
    int v = col[i];
    colf[i] = (float)v;
    v = v < 0 ? -v : v;
    cmax = v > cmax ? v : cmax;
  }
  return cmax;
}

/* The channels [lo, hi) of conv_input's conversion. */
typedef struct input_job {
  const ct_tensor *x;
  int64_t base, vol; /* element of the group's first channel; elements per channel */
  int32_t zx;
  int16_t *xs;
} input_job;

static void input_channels(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const input_job *j = arg;
  ct_tq_get_row_i16(j->x, j->base + lo * j->vol, (hi - lo) * j->vol, j->zx, j->xs + lo * j->vol);
}

/* xs := x − zp_x of image n, channels [c0, c0 + cg) (int16, [cg][D][H][W]): one typed read
 * per input element instead of one per tap; the channels shared by ctx's threads. */
static void conv_input(const ct_tensor *x, const ct_nn_geo *g, int64_t n, int64_t c0, int64_t cg, int32_t zx, int16_t *xs,
                       const ct_kernel_ctx *ctx) {
  int64_t vol = g->in[0] * g->in[1] * g->in[2];
  input_job j = {x, (n * x->shape[1] + c0) * vol, vol, zx, xs};
  ct_nn_parallel(ctx, cg, cg * vol, input_channels, &j);
}

/* The largest |v − zx| of any value v of storage type dt: a bound on every column value that
 * needs no pass over them. */
static int64_t input_bound(ct_dtype dt, int32_t zx) {
  int64_t a = llabs(ct_quant_min(dt) - zx), b = llabs(ct_quant_max(dt) - zx);
  return a > b ? a : b;
}

/* dst[2·ow] = a[ow], dst[2·ow + 1] = b[ow], ow < n: two rows interleaved into a pair row. */
CT_CLONES_V3 static void interleave_rows(const int16_t *a, const int16_t *b, int64_t n, int16_t *dst) {
  for (int64_t i = 0; i < n; i++) dst[2 * i] = a[i], dst[2 * i + 1] = b[i];
}

/* The paired columns of a pointwise Conv straight from its input x (image n, channels [c0,
 * c0 + K), vol elements each): pair row p interleaves channels 2p and 2p + 1 (zeros past K)
 * as x − zp_x — conv_input and ct_quant_igemm_pair_rows in one pass, on ctx's threads. */
typedef struct xpair_job {
  const ct_tensor *x;
  int64_t base, K, vol;
  int32_t zx;
  int16_t *bp, *scratch; /* scratch: 2·vol int16 per thread slot */
} xpair_job;

static void xpair_tasks(void *arg, int64_t lo, int64_t hi, int slot) {
  const xpair_job *j = arg;
  int16_t *ta = j->scratch + (int64_t)slot * 2 * j->vol, *tb = ta + j->vol;
  for (int64_t p = lo; p < hi; p++) {
    ct_tq_get_row_i16(j->x, j->base + 2 * p * j->vol, j->vol, j->zx, ta);
    if (2 * p + 1 < j->K) ct_tq_get_row_i16(j->x, j->base + (2 * p + 1) * j->vol, j->vol, j->zx, tb);
    else memset(tb, 0, sizeof *tb * (size_t)j->vol);
    interleave_rows(ta, tb, j->vol, j->bp + 2 * p * j->vol);
  }
}

static bool pair_input(const ct_tensor *x, int64_t base, int64_t K, int64_t vol, int32_t zx, int16_t *bp,
                       const ct_kernel_ctx *ctx) {
  xpair_job j = {x, base, K, vol, zx, bp, NULL};
  int parts = ct_nn_parallel_parts(ctx, (K + 1) / 2, K * vol);
  if (!(j.scratch = malloc(sizeof *j.scratch * (size_t)(2 * parts * vol + 1)))) return false;
  ct_nn_parallel(ctx, (K + 1) / 2, K * vol, xpair_tasks, &j);
  free(j.scratch);
  return true;
}

/* A 1×1 (×1) kernel with unit strides and no pads: the columns are the input itself. */
static bool conv_pointwise(const ct_nn_geo *g) {
  for (int d = 0; d < 3; d++)
    if (g->k[d] != 1 || g->s[d] != 1 || g->pb[d] || g->pe[d]) return false;
  return true;
}

/* The outputs ow in [*lo, *hi) (within [0, OW)) whose input column ow·s + off is in [0, IW). */
static void im2col_span(int64_t off, int64_t s, int64_t IW, int64_t OW, int64_t *lo, int64_t *hi) {
  int64_t l = off >= 0 ? 0 : (-off + s - 1) / s, h = IW - 1 - off < 0 ? 0 : (IW - 1 - off) / s + 1;
  *lo = l < OW ? l : OW, *hi = h < OW ? h : OW;
  if (*hi < *lo) *hi = *lo;
}

/* im2col of one group from xs (conv_input): col[(c, kd, kh, kw)][(od, oh, ow)], 0 in the pads
 * (a pointwise kernel's columns are xs itself: conv_grouped). paired: in the layout of
 * ct_quant_igemm_pair_rows instead (rows 2p and 2p + 1 interleaved; an odd K's last row paired
 * with zeros). A task builds rows [lo, hi) (paired: pair rows), each column row a plane at a
 * time (im2col_plane) or an output row at a time (im2col_out_row), a pair row's two rows
 * through scratch and then interleaved. */
typedef struct im2col_job {
  const int16_t *xs;
  const ct_nn_geo *g;
  bool paired;
  int64_t rows;     /* K = cg · kvol */
  int16_t *col;
  int16_t *scratch; /* paired: 2 · OW int16 per thread slot */
} im2col_job;

/* What a column row r = (c, kd, kh, kw) reads, fixed for all its output rows: channel c's
 * plane, the kernel tap, and the outputs [lo, hi) whose input column ow·s + off is inside. */
typedef struct col_row {
  const int16_t *xc; /* NULL: r ≥ K, all zeros */
  int64_t kd, kh, off, lo, hi;
} col_row;

static void col_row_of(const im2col_job *j, int64_t r, col_row *cr) {
  const ct_nn_geo *g = j->g;
  int64_t kvol = g->k[0] * g->k[1] * g->k[2], c = r / kvol, t = r % kvol, kw = t % g->k[2];
  cr->kd = t / (g->k[1] * g->k[2]), cr->kh = t / g->k[2] % g->k[1];
  cr->off = kw * g->dl[2] - g->pb[2];
  im2col_span(cr->off, g->s[2], g->in[2], g->out[2], &cr->lo, &cr->hi);
  cr->xc = r < j->rows ? j->xs + c * g->in[0] * g->in[1] * g->in[2] : NULL;
}

/* Output row (od, oh) of column row cr into dst: dst[ow] = the input at column ow·s + off
 * for ow in [lo, hi), 0 elsewhere and in a pad row; the runs inline (a memcpy call per run
 * of 7 to 100 elements costs more than the copy). */
static void im2col_out_row(const im2col_job *j, const col_row *cr, int64_t od, int64_t oh, int16_t *dst) {
  const ct_nn_geo *g = j->g;
  int64_t id = od * g->s[0] - g->pb[0] + cr->kd * g->dl[0], ih = oh * g->s[1] - g->pb[1] + cr->kh * g->dl[1];
  int64_t OW = g->out[2], s = g->s[2], lo = cr->lo, hi = cr->hi;
  if (!cr->xc || id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) lo = hi = OW; /* a pad row */
  const int16_t *xr = cr->xc ? cr->xc + (id * g->in[1] + ih) * g->in[2] + cr->off : NULL;
  for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0;
  if (s == 1)
    for (int64_t ow = lo; ow < hi; ow++) dst[ow] = xr[ow];
  else
    for (int64_t ow = lo; ow < hi; ow++) dst[ow] = xr[ow * s];
  for (int64_t ow = hi; ow < OW; ow++) dst[ow] = 0;
}

/* Does im2col_plane apply: a 2-D conv (depth 1) with unit H and W strides? */
static bool im2col_planar(const ct_nn_geo *g) {
  return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->s[1] == 1 && g->s[2] == 1;
}

/* Column row cr of an im2col_planar conv over every output position at once: the output rows
 * whose input row is inside (one run of them) copy their [lo, hi), everything else is 0; one
 * copy for the whole run when no column is padded and the rows are the input's own. */
static void im2col_plane(const im2col_job *j, const col_row *cr, int16_t *dst) {
  const ct_nn_geo *g = j->g;
  int64_t OH = g->out[1], OW = g->out[2], H = g->in[1], W = g->in[2], P = OH * OW;
  int64_t dh = cr->kh * g->dl[1] - g->pb[1]; /* ih = oh + dh */
  int64_t oh0 = dh < 0 ? -dh : 0, oh1 = H - dh < OH ? H - dh : OH;
  if (!cr->xc || oh1 <= oh0 || cr->hi <= cr->lo) {
    memset(dst, 0, sizeof *dst * (size_t)P);
    return;
  }
  memset(dst, 0, sizeof *dst * (size_t)(oh0 * OW));
  const int16_t *src = cr->xc + (oh0 + dh) * W + cr->off;
  if (cr->lo == 0 && cr->hi == OW && OW == W) {
    memcpy(dst + oh0 * OW, src, sizeof *dst * (size_t)((oh1 - oh0) * OW));
  } else {
    for (int64_t oh = oh0; oh < oh1; oh++, src += W) {
      int16_t *d = dst + oh * OW;
      for (int64_t ow = 0; ow < cr->lo; ow++) d[ow] = 0;
      for (int64_t ow = cr->lo; ow < cr->hi; ow++) d[ow] = src[ow];
      for (int64_t ow = cr->hi; ow < OW; ow++) d[ow] = 0;
    }
  }
  memset(dst + oh1 * OW, 0, sizeof *dst * (size_t)((OH - oh1) * OW));
}

static void im2col_rows(void *arg, int64_t lo, int64_t hi, int slot) {
  const im2col_job *j = arg;
  const ct_nn_geo *g = j->g;
  bool planar = im2col_planar(g);
  int64_t OW = g->out[2], P = g->out[0] * g->out[1] * OW, span = planar ? P : OW;
  int16_t *ta = j->paired ? j->scratch + (int64_t)slot * 2 * span : NULL, *tb = ta ? ta + span : NULL;
  for (int64_t r = lo; r < hi; r++) {
    int16_t *dst = j->col + r * (j->paired ? 2 : 1) * P;
    col_row ca, cb;
    col_row_of(j, j->paired ? 2 * r : r, &ca);
    if (j->paired) col_row_of(j, 2 * r + 1, &cb);
    if (planar) { /* whole planes */
      if (!j->paired) {
        im2col_plane(j, &ca, dst);
      } else {
        im2col_plane(j, &ca, ta), im2col_plane(j, &cb, tb);
        interleave_rows(ta, tb, P, dst);
      }
      continue;
    }
    for (int64_t od = 0; od < g->out[0]; od++)
      for (int64_t oh = 0; oh < g->out[1]; oh++) {
        if (!j->paired) {
          im2col_out_row(j, &ca, od, oh, dst);
          dst += OW;
          continue;
        }
        im2col_out_row(j, &ca, od, oh, ta), im2col_out_row(j, &cb, od, oh, tb);
        interleave_rows(ta, tb, OW, dst);
        dst += 2 * OW;
      }
  }
}

/* The int16 columns of cg input channels (row (c, kd, kh, kw), P = output positions; paired:
 * the layout of ct_quant_igemm_pair_rows, an odd last row paired with zeros), the rows (pair
 * rows) shared by ctx's threads. False when out of memory. */
static bool conv_im2col(const int16_t *xs, const ct_nn_geo *g, int64_t cg, bool paired, int16_t *col,
                        const ct_kernel_ctx *ctx) {
  int64_t P = g->out[0] * g->out[1] * g->out[2], r = cg * g->k[0] * g->k[1] * g->k[2], tasks = paired ? (r + 1) / 2 : r;
  im2col_job j = {xs, g, paired, r, col, NULL};
  int parts = ct_nn_parallel_parts(ctx, tasks, r * P);
  int64_t span = im2col_planar(g) ? P : g->out[2]; /* elements im2col_rows builds at once */
  if (paired && !(j.scratch = malloc(sizeof *j.scratch * (size_t)(2 * parts * span + 1)))) return false;
  ct_nn_parallel(ctx, tasks, r * P, im2col_rows, &j);
  free(j.scratch);
  return true;
}

/* The depthwise path (every group one input and one output channel): ops/tpu_dw.c. */
static ct_status conv_depthwise(const ct_op *op, const conv_job *j, const ct_tensor *x, const ct_nn_geo *g, int32_t zx,
                                const ct_kernel_ctx *ctx, ct_diag *d) {
  ct_tpu_dw_job dj = {.x = x, .w = j->w, .b = j->b, .y = j->y, .geo = g, .oc = j->oc, .P = j->P, .m = j->m, .s = j->s,
                      .zw = j->zw, .zw0 = j->zw0, .zx = zx, .zy = j->zy, .hi = j->hi, .act = j->act};
  for (int64_t n = 0; n < x->shape[0]; n++) {
    dj.n = n;
    ct_nn_parallel(ctx, j->oc, j->oc * j->K * j->P, ct_tpu_dw_channels, &dj);
    if (dj.oom) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  }
  return CT_OK;
}

/* One group's inputs for conv_pick: xs (conv_input, xn values; xbound bounds their
 * magnitudes), the geometry and group width,
 * whether the kernel is pointwise (its columns are xs) and whether a GEMM path applies; and
 * the column buffers, each allocated on first use and kept for the next groups: col (int16,
 * K·P), colp (the paired layout of ct_quant_igemm_pair_rows), colf (col as floats). */
typedef struct conv_cols {
  int16_t *xs, *col, *colp;
  conv_memo *memo;          /* the Conv's converted weights and biases */
  float *colf;
  int64_t xn, cg, xbound; /* xbound: input_bound of the input's type (no pass over xs) */
  const ct_tensor *x;      /* the Conv's input, and its zero point */
  int32_t zx;
  bool xdirect;            /* pointwise with sums exact by xbound: no xs (colp comes from x) */
  const ct_nn_geo *g;
  const ct_kernel_ctx *ctx; /* the threads the column building shares */
  bool pw, gemm;
} conv_cols;

/* *buf, or a new buffer of n elements of size esz when it is NULL; NULL when out of memory. */
static void *conv_buf(void *buf, int64_t n, size_t esz) { return buf ? buf : malloc(esz * (size_t)(n > 0 ? n : 1)); }

/* Builds one group's columns and picks their kernel: the dot loop below CONV_GEMM_MIN_OC
 * output channels (gemm false) on the int16 columns (im2col into cc->col unless pointwise);
 * else ct_quant_igemm when its int32 sums are exact (weights within int16 and ct_quant_igemm_exact
 * with max |xs|, which bounds every column value), on columns built straight into the paired
 * layout cc->colp and the weights converted once per Conv into cc->memo — split by output channels, or
 * with at least 2·IGEMM_BLOCK columns by column blocks; else the chunked sgemm on the columns
 * as floats (cc->colf). NULL when out of memory. */
static ct_workpool_fn conv_pick(conv_job *j, conv_cols *cc, int64_t wmax) {
  int64_t KP = j->K * j->P;
  bool exact = cc->gemm && wmax <= INT16_MAX &&
               (ct_quant_igemm_exact(j->K, wmax, cc->xbound, j->bmax) ||
                ct_quant_igemm_exact(j->K, wmax, ct_quant_i16_absmax(cc->xs, cc->xn), j->bmax));
  if (exact) {
    if (!(cc->colp = conv_buf(cc->colp, (j->K + 1) / 2 * 2 * j->P, sizeof *cc->colp))) return NULL;
    if (cc->pw) { /* the pairs straight from the input, once per group, shared by the threads */
      if (!pair_input(cc->x, (j->n * cc->x->shape[1] + j->grp * cc->cg) * j->P, j->K, j->P, cc->zx, cc->colp, cc->ctx))
        return NULL;
    } else if (!conv_im2col(cc->xs, cc->g, cc->cg, true, cc->colp, cc->ctx)) {
      return NULL;
    }
    j->colp = cc->colp;
    /* every group's weights − zp_w (|w − zp_w| ≤ 32767: no wrap) and biases, once per Conv */
    conv_memo *cm = cc->memo;
    if (!cm->a16) {
      if (!(cm->a16 = malloc(sizeof *cm->a16 * (size_t)(j->oc * j->K + 1))) ||
          !(cm->bias32 = malloc(sizeof *cm->bias32 * (size_t)(j->oc + 1)))) {
        free(cm->a16), cm->a16 = NULL;
        return NULL;
      }
      for (int64_t oc = 0; oc < j->oc; oc++) {
        ct_tq_get_row_i16(j->w, oc * j->K, j->K, j->zw ? j->zw[oc] : j->zw0, cm->a16 + oc * j->K);
        cm->bias32[oc] = j->b ? ct_tq_get(j->b, oc) : 0;
      }
    }
    j->a16 = cm->a16 + j->grp * j->og * j->K, j->bias32 = cm->bias32 + j->grp * j->og;
    return j->P < 2 * IGEMM_BLOCK ? conv_channels_igemm : conv_cols_igemm;
  }
  if (!cc->pw) {
    if (!(cc->col = conv_buf(cc->col, KP, sizeof *cc->col))) return NULL;
    if (!conv_im2col(cc->xs, cc->g, cc->cg, false, cc->col, cc->ctx)) return NULL;
  }
  j->col = cc->pw ? cc->xs : cc->col;
  if (!cc->gemm) return conv_channels;
  if (!(cc->colf = conv_buf(cc->colf, KP, sizeof *cc->colf))) return NULL;
  int cmax = col_floats(j->col, KP, cc->colf);
  j->colf = cc->colf, j->kc = exact_chunk(wmax, cmax), j->small = exact_small(wmax, cmax);
  j->acc32 = j->small && j->bmax + j->K * wmax * cmax <= INT32_MAX; /* bounds every partial sum */
  return conv_channels_gemm;
}

/* The im2col path of groups of cg input channels: per image and group the int16 columns
 * (a pointwise kernel's are the input itself), then the kernel conv_pick chooses. */
static ct_status conv_grouped(const ct_op *op, conv_job *j, conv_memo *cm, const ct_tensor *x, const ct_nn_geo *g,
                              int64_t G, int64_t cg, int32_t zx, const ct_kernel_ctx *ctx, ct_diag *d) {
  int64_t vol = g->in[0] * g->in[1] * g->in[2];
  bool gemm = j->og >= CONV_GEMM_MIN_OC && j->K > 1 && j->P > 1;
  conv_cols cc = {.xs = conv_buf(NULL, cg * vol, sizeof(int16_t)), .xn = cg * vol, .cg = cg, .g = g, .ctx = ctx,
                  .pw = conv_pointwise(g), .gemm = gemm, .xbound = input_bound(x->dtype, zx), .memo = cm};
  if (gemm && cm->wmax < 0) {
    cm->wmax = weight_absmax(j->w, j->oc, j->K, j->zw, j->zw0);
    for (int64_t o = 0; j->b && o < j->oc; o++) {
      int64_t v = llabs((int64_t)ct_tq_get(j->b, o));
      cm->bmax = v > cm->bmax ? v : cm->bmax;
    }
  }
  int64_t wmax = gemm ? cm->wmax : 0;
  j->bmax = cm->bmax;
  cc.x = x, cc.zx = zx;
  cc.xdirect = cc.pw && gemm && wmax <= INT16_MAX && ct_quant_igemm_exact(j->K, wmax, cc.xbound, j->bmax);
  ct_status st = !cc.xs || wmax < 0 ? ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory") : CT_OK;
  if (gemm) ct_nn_blas_threads(ctx);
  for (int64_t n = 0; !st && n < x->shape[0]; n++)
    for (int64_t grp = 0; !st && grp < G; grp++) {
      if (!cc.xdirect) conv_input(x, g, n, grp * cg, cg, zx, cc.xs, ctx);
      j->n = n, j->grp = grp;
      ct_workpool_fn fn = conv_pick(j, &cc, wmax);
      int64_t tasks = fn == conv_cols_igemm       ? (j->P + IGEMM_BLOCK - 1) / IGEMM_BLOCK
                      : fn == conv_channels_igemm ? (j->og + IGEMM_QUAD - 1) / IGEMM_QUAD
                                                  : j->og;
      if (fn) ct_nn_parallel(ctx, tasks, j->og * j->K * j->P, fn, j);
      if (!fn || j->oom) st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
    }
  free(cc.col), free(cc.colf), free(cc.colp), free(cc.xs);
  return st;
}

/* A new conv_memo of a Conv with oc output channels: its requant pairs (ct_tq_rq), the rest
 * to compute. Errors: ct_tq_rq's, CT_ERR_LIMIT when out of memory. */
static ct_status conv_memo_new(const ct_op *op, int64_t oc, conv_memo **out, ct_diag *d) {
  conv_memo *cm = calloc(1, sizeof *cm);
  if (cm) cm->m = malloc((size_t)(oc + 1) * sizeof *cm->m), cm->s = malloc((size_t)(oc + 1) * sizeof *cm->s), cm->wmax = -1;
  ct_status st = cm && cm->m && cm->s ? ct_tq_rq(op, oc, cm->m, cm->s, d) : ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  if (st) conv_memo_free(cm), cm = NULL;
  *out = cm;
  return st;
}

ct_status ct_tpu_conv(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  const ct_tensor *x = in[0], *w = in[1], *b = op->n_in > 2 ? in[2] : NULL;
  ct_tensor *y = out[0];
  ct_status st = ct_tq_need_int(op, in, out, op->n_in, d);
  if (st) return st;
  ct_nn_geo g;
  if ((st = ct_nn_geo_read(op, x, w, y, &g, d))) return st;
  conv_job j = {.op = op, .w = w, .b = b, .y = y, .oc = y->shape[1]};
  int64_t G = ct_attr_conv_group(op), C = x->shape[1];
  if (G < 1 || C % G || j.oc % G || w->shape[1] != C / G || (b && ct_tensor_numel(b) != j.oc))
    return ct_ops_err(d, CT_ERR_INPUT, op, "inconsistent channels, groups or bias");
  int64_t cg = C / G;
  j.og = j.oc / G;
  j.K = cg * g.k[0] * g.k[1] * g.k[2];
  j.P = g.out[0] * g.out[1] * g.out[2];
  conv_memo *cm = ct_kernel_memo_data(ctx);
  bool kept = cm != NULL;
  if (!cm && (st = conv_memo_new(op, j.oc, &cm, d))) return st;
  if (!st) st = ct_tq_act(op, &j.act, &j.hi, d);
  const ct_value *wv = op->in[1];
  j.m = cm->m, j.s = cm->s, j.zy = ct_tq_zp(op->out[0]), j.zw0 = ct_tq_zp(wv);
  j.zw = wv->n_scale > 1 && wv->n_scale == j.oc ? wv->zero_point : NULL;
  int32_t zx = ct_tq_zp(op->in[0]);
  if (!st) st = cg == 1 && j.og == 1 ? conv_depthwise(op, &j, x, &g, zx, ctx, d) : conv_grouped(op, &j, cm, x, &g, G, cg, zx, ctx, d);
  if (!kept && (st || !ct_kernel_memo_keep(ctx, cm, conv_memo_free))) conv_memo_free(cm);
  return st;
}

/* y[r, c] = requant(bias[c] + Σ_k (a[r, k] − za)·(b[k, c] − zb[c])) over rows of A. */
typedef struct mm_args {
  const ct_tensor *a, *b, *bias;
  ct_tensor *y;
  int64_t M, K, N, a_off, b_off, y_off;
  bool tb;                /* b stored [N, K] */
  int32_t za, zy, hi;
  const int32_t *zb, *m;  /* per column (N entries) */
  const int *s;
  ct_quant_act act;
  bool raw;               /* i32 result without requant: the saturated accumulator (rq_mode none) */
  const float *bf;        /* NULL, or B − zb as floats (as stored) with max |B − zb| bmax: mm_b_floats */
  int64_t bmax;
} mm_args;

/* y := requant(acc) (or the saturated accumulator of a raw product) for row r, column c. */
static void mm_store(const mm_args *q, int64_t r, int64_t c, int64_t acc) {
  ct_tq_set(q->y, q->y_off + r * q->N + c,
            q->raw ? (int32_t)ct_quant_saturate(acc, CT_I32) : ct_quant_requant_act(acc, q->m[c], q->s[c], q->zy, q->act, q->hi, q->y->dtype));
}

#define MM_GEMM_MIN_MACS 4096 /* products below which the dot loop is faster than sgemm */

/* bf := B − zb of q's block as floats, as stored (rows of K when tb, else of N; K·N of them);
 * returns max |B − zb|, or −1 when out of memory. */
static int64_t mm_b_floats(const mm_args *q, float *bf) {
  int64_t K = q->K, N = q->N, bmax = 0, len = q->tb ? K : N;
  int32_t *row = malloc(sizeof *row * (size_t)(len + 1));
  if (!row) return -1;
  for (int64_t i = 0; i < (q->tb ? N : K); i++) {
    ct_tq_get_row_i32(q->b, q->b_off + i * len, len, q->tb ? q->zb[i] : 0, row);
    for (int64_t c = 0; !q->tb && c < N; c++) row[c] -= q->zb[c];
    int64_t v = floats_absmax(row, len, bf + i * len);
    bmax = v > bmax ? v : bmax;
  }
  free(row);
  return bmax;
}

/* mm_block on sgemm, exact as conv_channels_gemm: A − za and B − zb (q->bf, or made here) as
 * floats, K in chunks whose products and partial sums stay within ±2^24. False when out of
 * memory (nothing written). */
static bool mm_block_gemm(const mm_args *q) {
  int64_t M = q->M, K = q->K, N = q->N, amax = 0, bmax = q->bmax;
  float *af = malloc(sizeof *af * (size_t)(M * K)), *cf = malloc(sizeof *cf * (size_t)(M * N));
  float *own = q->bf ? NULL : malloc(sizeof *own * (size_t)(K * N));
  const float *bf = q->bf ? q->bf : own;
  int64_t *acc = malloc(sizeof *acc * (size_t)(M * N));
  int32_t *row = malloc(sizeof *row * (size_t)(K + 1));
  bool ok = af && bf && cf && acc && row;
  for (int64_t r = 0; ok && r < M; r++) {
    ct_tq_get_row_i32(q->a, q->a_off + r * K, K, q->za, row);
    int64_t v = floats_absmax(row, K, af + r * K);
    amax = v > amax ? v : amax;
  }
  if (ok && own) ok = (bmax = mm_b_floats(q, own)) >= 0;
  for (int64_t i = 0; ok && i < M * N; i++) acc[i] = q->bias ? ct_tq_get(q->bias, i % N) : 0;
  if (ok) exact_sgemm_acc(M, N, K, af, bf, q->tb, exact_chunk(amax, bmax), exact_small(amax, bmax), cf, acc, NULL);
  for (int64_t i = 0; ok && i < M * N; i++) mm_store(q, i / N, i % N, acc[i]);
  free(af), free(own), free(cf), free(acc), free(row);
  return ok;
}

/* A Gemm's constant B as mm_block_gemm's floats, kept in ctx->memo (ct_kernel_memo). */
typedef struct mm_memo {
  float *bf;
  int64_t bmax;
} mm_memo;

static void mm_memo_free(void *p) {
  mm_memo *mm = p;
  if (mm) free(mm->bf);
  free(mm);
}

/* Sets q->bf / q->bmax from ctx->memo, making them on the first call, when B is constant and
 * the product takes sgemm; else leaves them for mm_block_gemm to make per call. */
static void mm_use_memo(mm_args *q, const ct_value *bv, const ct_kernel_ctx *ctx) {
  if (!ctx->memo || !ct_value_is_const(bv) || q->M * q->N * q->K < MM_GEMM_MIN_MACS) return;
  mm_memo *mm = ct_kernel_memo_data(ctx);
  if (!mm) {
    if (!(mm = calloc(1, sizeof *mm)) || !(mm->bf = malloc(sizeof *mm->bf * (size_t)(q->K * q->N + 1))) ||
        (mm->bmax = mm_b_floats(q, mm->bf)) < 0) {
      mm_memo_free(mm);
      return;
    }
    ct_kernel_memo_keep(ctx, mm, mm_memo_free); /* ctx->memo is there: checked above */
  }
  q->bf = mm->bf, q->bmax = mm->bmax;
}

static void mm_block(const mm_args *q) {
  if (q->M * q->N * q->K >= MM_GEMM_MIN_MACS && mm_block_gemm(q)) return;
  for (int64_t r = 0; r < q->M; r++)
    for (int64_t c = 0; c < q->N; c++) {
      int64_t acc = q->bias ? ct_tq_get(q->bias, c) : 0;
      for (int64_t k = 0; k < q->K; k++) {
        int64_t bi = q->b_off + (q->tb ? c * q->K + k : k * q->N + c);
        acc += (int64_t)(ct_tq_get(q->a, q->a_off + r * q->K + k) - q->za) * (ct_tq_get(q->b, bi) - q->zb[c]);
      }
      mm_store(q, r, c, acc);
    }
}

/* Per-column requant and weight zero points of an N-column product; none for a raw product
 * (i32 result, no multiplier attribute: the accumulator itself, at scale s_a·s_b[c]). */
static ct_status mm_params(const ct_op *op, const ct_value *bv, int64_t N, int32_t **m, int **s, int32_t **zb,
                           bool *raw, ct_diag *d) {
  *m = malloc((size_t)N * sizeof **m), *s = malloc((size_t)N * sizeof **s), *zb = malloc((size_t)N * sizeof **zb);
  if (!*m || !*s || !*zb) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  for (int64_t c = 0; c < N; c++) (*zb)[c] = bv->n_scale == N && N > 1 ? bv->zero_point[c] : ct_tq_zp(bv);
  *raw = ct_tq_raw_out(op);
  return *raw ? CT_OK : ct_tq_rq(op, N, *m, *s, d);
}

ct_status ct_tpu_gemm(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  ct_nn_blas_threads(ctx);
  ct_status st = ct_tq_need_int(op, in, out, op->n_in, d);
  if (st) return st;
  const ct_tensor *a = in[0], *b = in[1], *c = op->n_in > 2 ? in[2] : NULL;
  bool tb = ct_attr_gemm_transB(op) != 0;
  if (ct_attr_gemm_transA(op) || a->ndim != 2 || b->ndim != 2)
    return ct_ops_err(d, CT_ERR_INPUT, op, "integer Gemm needs 2-D A (not transposed) and B");
  mm_args q = {.a = a, .b = b, .bias = c, .y = out[0], .M = a->shape[0], .K = a->shape[1], .tb = tb};
  q.N = tb ? b->shape[0] : b->shape[1];
  if ((tb ? b->shape[1] : b->shape[0]) != q.K || (c && (ct_tensor_numel(c) != q.N || c->ndim > 2 || (c->ndim == 2 && c->shape[0] != 1))))
    return ct_ops_err(d, CT_ERR_INPUT, op, "inconsistent Gemm shapes (bias must be [N] or [1, N])");
  if (ct_attr_gemm_alpha(op) != 1 || (c && ct_attr_gemm_beta(op) != 1))
    return ct_ops_err(d, CT_ERR_INPUT, op, "integer Gemm needs alpha = beta = 1 (lowering folds them into the weights and bias)");
  int32_t *m = NULL, *zb = NULL;
  int *s = NULL;
  st = mm_params(op, op->in[1], q.N, &m, &s, &zb, &q.raw, d);
  if (!st) st = ct_tq_act(op, &q.act, &q.hi, d);
  q.m = m, q.s = s, q.zb = zb, q.za = ct_tq_zp(op->in[0]), q.zy = ct_tq_zp(op->out[0]);
  if (!st) mm_use_memo(&q, op->in[1], ctx);
  if (!st) mm_block(&q);
  free(m), free(s), free(zb);
  return st;
}

ct_status ct_tpu_matmul(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  ct_nn_blas_threads(ctx);
  ct_status st = ct_tq_need_int(op, in, out, 2, d);
  if (st) return st;
  const ct_tensor *a = in[0], *b = in[1];
  if (a->ndim < 2 || b->ndim < 2) return ct_ops_err(d, CT_ERR_INPUT, op, "integer MatMul needs operands of rank >= 2");
  mm_args q = {.a = a, .b = b, .y = out[0], .M = a->shape[a->ndim - 2], .K = a->shape[a->ndim - 1]};
  q.N = b->shape[b->ndim - 1];
  int64_t ba = ct_tensor_numel(a) / (q.M * q.K > 0 ? q.M * q.K : 1), bb = ct_tensor_numel(b) / (q.K * q.N > 0 ? q.K * q.N : 1);
  if (b->shape[b->ndim - 2] != q.K || (bb != 1 && bb != ba))
    return ct_ops_err(d, CT_ERR_INPUT, op, "integer MatMul: inner dims or batch dims do not match");
  int32_t *m = NULL, *zb = NULL;
  int *s = NULL;
  st = mm_params(op, op->in[1], q.N, &m, &s, &zb, &q.raw, d);
  if (!st) st = ct_tq_act(op, &q.act, &q.hi, d);
  q.m = m, q.s = s, q.zb = zb, q.za = ct_tq_zp(op->in[0]), q.zy = ct_tq_zp(op->out[0]);
  for (int64_t i = 0; !st && i < ba; i++) {
    q.a_off = i * q.M * q.K, q.b_off = bb == 1 ? 0 : i * q.K * q.N, q.y_off = i * q.M * q.N;
    mm_block(&q);
  }
  free(m), free(s), free(zb);
  return st;
}
