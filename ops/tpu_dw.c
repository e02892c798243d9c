/* tpu_dw.c: the depthwise path of the integer Conv (ops/tpu_mac.c: one input and one output
 * channel per group): each channel's x − zp_x in a zero-padded int16 plane, the taps summed in
 * place — in int32 where a bound proves every partial sum fits (dw_narrow), else int64 — then
 * requantized a row at a time (ct_quant_requant_act_row*), as isa.def's DWCONV computes it. */
#include <stdlib.h>
#include <string.h>

#include "ops/tpu_dw.h"
#include "common/clones.h"

/* xp := channel c of image n as x − zp_x, zero-padded by the pads (the zero point is
 * what the pads hold): [in0 + pb0 + pe0][in1 + pb1 + pe1][in2 + pb2 + pe2] int16. */
static void dw_plane(const ct_tpu_dw_job *j, int64_t c, int16_t *xp, const int64_t *pd) {
  const ct_nn_geo *g = j->geo;
  int64_t base = (j->n * j->x->shape[1] + c) * g->in[0] * g->in[1] * g->in[2];
  memset(xp, 0, sizeof *xp * (size_t)(pd[0] * pd[1] * pd[2]));
  for (int64_t d = 0; d < g->in[0]; d++)
    for (int64_t h = 0; h < g->in[1]; h++, base += g->in[2])
      ct_tq_get_row_i16(j->x, base, g->in[2], j->zx, xp + ((d + g->pb[0]) * pd[1] + h + g->pb[1]) * pd[2] + g->pb[2]);
}

/* Can a depthwise channel's sums run in int32: every tap weight fits int16, and |b| +
 * Σ|w|·2^15 — a bound on every partial sum, as the int16 plane holds |x − zp_x| ≤ 2^15 —
 * fits int32? Then each int16·int16 product and every partial sum is an exact int32, the
 * same integers as the int64 sums. Fills w16 with the weights when true. */
static bool dw_narrow(const int32_t *wt, int64_t taps, int32_t b, int16_t *w16) {
  int64_t bound = llabs((int64_t)b);
  for (int64_t t = 0; t < taps; t++) {
    if (wt[t] < INT16_MIN || wt[t] > INT16_MAX) return false;
    w16[t] = (int16_t)wt[t];
    bound += llabs((int64_t)wt[t]) << 15;
  }
  return bound <= INT32_MAX;
}

/* acc[ow] = b + Σ_t w[t]·row[off[t] + ow·sw] in int32 (dw_narrow holds), ow < OW; the unit
 * and 2 strides as constants so that the loops vectorize. */
CT_CLONES_V3 static void dw_row_i32(const int16_t *row, const int64_t *off, const int16_t *w, int64_t taps, int64_t OW,
                                   int64_t sw, int32_t b, int32_t *acc) {
  for (int64_t ow = 0; ow < OW; ow++) acc[ow] = b;
  for (int64_t t = 0; t < taps; t++) {
    const int16_t *p = row + off[t];
    int16_t wv = w[t];
    if (sw == 1)
      for (int64_t ow = 0; ow < OW; ow++) acc[ow] += wv * p[ow];
    else if (sw == 2)
      for (int64_t ow = 0; ow < OW; ow++) acc[ow] += wv * p[2 * ow];
    else
      for (int64_t ow = 0; ow < OW; ow++) acc[ow] += wv * p[ow * sw];
  }
}

/* dw_row_i32 in int64 with int32 weights: any weights and bias. */
static void dw_row_i64(const int16_t *row, const int64_t *off, const int32_t *w, int64_t taps, int64_t OW, int64_t sw,
                       int32_t b, int64_t *acc) {
  for (int64_t ow = 0; ow < OW; ow++) acc[ow] = b;
  for (int64_t t = 0; t < taps; t++) {
    const int16_t *p = row + off[t];
    int64_t wv = w[t];
    if (sw == 1)
      for (int64_t ow = 0; ow < OW; ow++) acc[ow] += wv * p[ow];
    else
      for (int64_t ow = 0; ow < OW; ow++) acc[ow] += wv * p[ow * sw];
  }
}

/* Scratch of dw_channels: the padded plane, the tap weights (int32 and int16), the tap
 * offsets and one output row's accumulators (int64 and int32). */
typedef struct dw_scratch {
  int16_t *xp, *w16;
  int32_t *wt, *acc32;    /* acc32: one row, or a flat depth slice (dw_channel_flat) */
  int64_t *off, *acc;
  char *yb;               /* a flat depth slice's requantized outputs (4 bytes each at most) */
} dw_scratch;

static bool dw_scratch_new(dw_scratch *sc, int64_t plane, int64_t taps, int64_t OW) {
  size_t np = (size_t)(plane > 0 ? plane : 1), nt = (size_t)(taps > 0 ? taps : 1), nw = (size_t)(OW > 0 ? OW : 1);
  size_t na = np > nw ? np : nw;
  sc->xp = malloc(sizeof *sc->xp * (np + 16)); /* slack: dw_row_s2_avx2 reads one past a tap */
  sc->w16 = malloc(sizeof *sc->w16 * nt), sc->wt = malloc(sizeof *sc->wt * nt);
  sc->acc32 = malloc(sizeof *sc->acc32 * na), sc->off = malloc(sizeof *sc->off * nt), sc->acc = malloc(sizeof *sc->acc * nw);
  sc->yb = malloc(sizeof(int32_t) * np);
  return sc->xp && sc->w16 && sc->wt && sc->acc32 && sc->off && sc->acc && sc->yb;
}

static void dw_scratch_free(dw_scratch *sc) {
  free(sc->xp), free(sc->w16), free(sc->wt), free(sc->acc32), free(sc->off), free(sc->acc), free(sc->yb);
}

#define DW_BLOCK 512 /* flat outputs summed per block: the block's int32 sums stay in L1 */

/* acc[q] = b + Σ_t w[t]·x[q + off[t]] in int32 (dw_narrow holds) for q < L; dw_narrow's
 * bound holds for every partial sum in any order, so the grouping of the taps is exact. */
CT_CLONES_V3 static void dw_flat_i32(const int16_t *x, const int64_t *off, const int16_t *w, int64_t taps, int64_t L,
                                    int32_t b, int32_t *acc) {
  for (int64_t q0 = 0; q0 < L; q0 += DW_BLOCK) {
    int64_t n = L - q0 < DW_BLOCK ? L - q0 : DW_BLOCK;
    int32_t *a = acc + q0;
    for (int64_t q = 0; q < n; q++) a[q] = b;
    int64_t t = 0;
    for (; t + 3 <= taps; t += 3) { /* three taps per pass over the block: a third of the acc traffic */
      const int16_t *p0 = x + q0 + off[t], *p1 = x + q0 + off[t + 1], *p2 = x + q0 + off[t + 2];
      int32_t w0 = w[t], w1 = w[t + 1], w2 = w[t + 2];
      for (int64_t q = 0; q < n; q++) a[q] += w0 * p0[q] + w1 * p1[q] + w2 * p2[q];
    }
    for (; t < taps; t++) {
      const int16_t *p = x + q0 + off[t];
      int16_t wv = w[t];
      for (int64_t q = 0; q < n; q++) a[q] += wv * p[q];
    }
  }
}

#if CT_X86_SIMD
#include <immintrin.h>

/* dw_flat_i32 for 16 outputs at a time with AVX2 alone: the taps in pairs, each pair one
 * pmaddwd (_mm256_madd_epi16: w[t]·x + w[t + 1]·x' in int32) on the two rows' int16s
 * interleaved (unpacklo / unpackhi give outputs 0–3, 8–11 and 4–7, 12–15 of the 16), the
 * sums kept in registers over every tap and put back in order once. The pair sums and every
 * partial sum are within dw_narrow's bound, so they are the same int32 integers as
 * dw_flat_i32's. Returns the outputs done (a multiple of 16); the caller finishes the rest. */
__attribute__((target("avx2"))) static int64_t dw_flat_avx2(const int16_t *x, const int64_t *off, const int16_t *w,
                                                            int64_t taps, int64_t L, int32_t b, int32_t *acc) {
  enum { PAIRS = 16 }; /* up to 32 taps (3 × 3, 5 × 5); more fall back to dw_flat_i32 */
  if (taps > 2 * PAIRS) return 0;
  __m256i wp[PAIRS];
  const int16_t *q1[PAIRS], *q0[PAIRS];
  int np = (int)((taps + 1) / 2);
  for (int p = 0; p < np; p++) {
    int64_t t = 2 * p, t1 = t + 1 < taps ? t + 1 : t; /* an odd last tap pairs with itself at weight 0 */
    int16_t w1 = t + 1 < taps ? w[t + 1] : 0;
    wp[p] = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)w[t] | (uint32_t)(uint16_t)w1 << 16));
    q0[p] = x + off[t], q1[p] = x + off[t1];
  }
  const __m256i bv = _mm256_set1_epi32(b);
  int64_t q = 0;
  for (; q + 16 <= L; q += 16) {
    __m256i lo = bv, hi = bv;
    for (int p = 0; p < np; p++) {
      __m256i a = _mm256_loadu_si256((const __m256i *)(q0[p] + q)), c = _mm256_loadu_si256((const __m256i *)(q1[p] + q));
      lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, c), wp[p]));
      hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, c), wp[p]));
    }
    _mm256_storeu_si256((__m256i *)(acc + q), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256((__m256i *)(acc + q + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  return q;
}

/* dw_row_i32 with stride 2 for 8 outputs at a time with AVX2 alone: the 16 int16s from
 * row + off + 2·ow are 8 pairs (row[off + 2·ow], row[off + 2·ow + 1]), so one pmaddwd adds
 * two taps whose offsets are adjacent (a kernel row's kw and kw + 1), or one tap paired with
 * weight 0. The pair sums and every partial sum are within dw_narrow's bound: the same int32
 * integers as dw_row_i32. Reads one int16 past the last tap (the plane has slack for it).
 * Returns the outputs done (a multiple of 8). */
__attribute__((target("avx2"))) static int64_t dw_row_s2_avx2(const int16_t *row, const int64_t *off, const int16_t *w,
                                                              int64_t taps, int64_t OW, int32_t b, int32_t *acc) {
  enum { PAIRS = 32 };
  if (taps > PAIRS) return 0;
  __m256i wp[PAIRS];
  const int16_t *src[PAIRS];
  int np = 0;
  for (int64_t t = 0; t < taps; np++) {
    bool two = t + 1 < taps && off[t + 1] == off[t] + 1;
    uint16_t w1 = two ? (uint16_t)w[t + 1] : 0;
    wp[np] = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)w[t] | (uint32_t)w1 << 16));
    src[np] = row + off[t];
    t += two ? 2 : 1;
  }
  const __m256i bv = _mm256_set1_epi32(b);
  int64_t ow = 0;
  for (; ow + 8 <= OW; ow += 8) {
    __m256i s = bv;
    for (int p = 0; p < np; p++)
      s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(src[p] + 2 * ow)), wp[p]));
    _mm256_storeu_si256((__m256i *)(acc + ow), s);
  }
  return ow;
}

#endif

/* dw_flat_i32 through dw_flat_avx2 where the CPU has AVX2. */
static void dw_flat(const int16_t *x, const int64_t *off, const int16_t *w, int64_t taps, int64_t L, int32_t b,
                    int32_t *acc) {
  int64_t done = 0;
#if CT_X86_SIMD
  if (ct_cpu_avx2()) done = dw_flat_avx2(x, off, w, taps, L, b, acc);
#endif
  if (done < L) dw_flat_i32(x + done, off, w, taps, L - done, b, acc + done);
}

/* dw_row_i32 through dw_row_s2_avx2 for stride 2 where the CPU has AVX2. */
static void dw_row(const int16_t *row, const int64_t *off, const int16_t *w, int64_t taps, int64_t OW, int64_t sw,
                   int32_t b, int32_t *acc) {
  int64_t done = 0;
#if CT_X86_SIMD
  if (sw == 2 && ct_cpu_avx2()) done = dw_row_s2_avx2(row, off, w, taps, OW, b, acc);
#endif
  if (done < OW) dw_row_i32(row + done * sw, off, w, taps, OW - done, sw, b, acc + done);
}

/* Unit strides in H and W, and output sizes that the padded plane holds (OH + (kh − 1)·dl ≤
 * padded H, likewise W): output (oh, ow) of a depth slice then reads its taps at flat index
 * oh·pd2 + ow of the slice, so a slice's rows are one flat run of (OH − 1)·pd2 + OW sums
 * (pd2 − OW of them between rows unused), every read within the plane. */
static bool dw_flat_ok(const ct_nn_geo *g, const int64_t *pd) {
  return g->s[1] == 1 && g->s[2] == 1 && g->out[1] >= 1 && g->out[2] >= 1 &&
         g->out[1] + (g->k[1] - 1) * g->dl[1] <= pd[1] && g->out[2] + (g->k[2] - 1) * g->dl[2] <= pd[2];
}

/* dw_channel for dw_flat_ok geometry in int32: each depth slice summed as one flat run,
 * requantized as one row, and its OH rows of OW outputs copied out. */
static void dw_channel_flat(const ct_tpu_dw_job *j, int64_t c, const int64_t *pd, dw_scratch *sc, int32_t b) {
  const ct_nn_geo *g = j->geo;
  int64_t taps = g->k[0] * g->k[1] * g->k[2], OH = g->out[1], OW = g->out[2], L = (OH - 1) * pd[2] + OW;
  size_t es = ct_dtype_size(j->y->dtype);
  int64_t out = (j->n * j->oc + c) * j->P;
  for (int64_t od = 0; od < g->out[0]; od++) {
    dw_flat(sc->xp + od * g->s[0] * pd[1] * pd[2], sc->off, sc->w16, taps, L, b, sc->acc32);
    ct_quant_requant_act_row_i32(sc->acc32, L, j->m[c], j->s[c], j->zy, j->act, j->hi, j->y->dtype, sc->yb);
    for (int64_t oh = 0; oh < OH; oh++, out += OW) memcpy(ct_tq_at(j->y, out), sc->yb + (size_t)(oh * pd[2]) * es, (size_t)OW * es);
  }
}

/* Channel c of image j->n from its padded plane sc->xp: each output row's taps summed in
 * place (int32 when dw_narrow proves it exact, else int64), then requantized as a row. */
static void dw_channel(const ct_tpu_dw_job *j, int64_t c, const int64_t *pd, dw_scratch *sc) {
  const ct_nn_geo *g = j->geo;
  int64_t taps = g->k[0] * g->k[1] * g->k[2], OW = g->out[2], sw = g->s[2];
  int32_t zw = j->zw ? j->zw[c] : j->zw0, b = j->b ? ct_tq_get(j->b, c) : 0;
  ct_tq_get_row_i32(j->w, c * taps, taps, zw, sc->wt);
  bool narrow = dw_narrow(sc->wt, taps, b, sc->w16);
  if (narrow && dw_flat_ok(g, pd)) {
    dw_channel_flat(j, c, pd, sc, b);
    return;
  }
  int64_t out = (j->n * j->oc + c) * j->P;
  for (int64_t od = 0; od < g->out[0]; od++)
    for (int64_t oh = 0; oh < g->out[1]; oh++, out += OW) {
      const int16_t *row = sc->xp + ((od * g->s[0]) * pd[1] + oh * g->s[1]) * pd[2];
      if (narrow) {
        dw_row(row, sc->off, sc->w16, taps, OW, sw, b, sc->acc32);
        ct_quant_requant_act_row_i32(sc->acc32, OW, j->m[c], j->s[c], j->zy, j->act, j->hi, j->y->dtype, ct_tq_at(j->y, out));
      } else {
        dw_row_i64(row, sc->off, sc->wt, taps, OW, sw, b, sc->acc);
        ct_quant_requant_act_row(sc->acc, OW, j->m[c], j->s[c], j->zy, j->act, j->hi, j->y->dtype, ct_tq_at(j->y, out));
      }
    }
}

/* No columns and no bounds checks: the padded plane holds every tap the output sizes reach. */
void ct_tpu_dw_channels(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  ct_tpu_dw_job *j = arg;
  const ct_nn_geo *g = j->geo;
  int64_t pd[3], taps = g->k[0] * g->k[1] * g->k[2], t = 0;
  for (int d = 0; d < 3; d++) pd[d] = g->in[d] + g->pb[d] + g->pe[d];
  dw_scratch sc;
  if (!dw_scratch_new(&sc, pd[0] * pd[1] * pd[2], taps, g->out[2])) {
    j->oom = true;
    dw_scratch_free(&sc);
    return;
  }
  for (int64_t kd = 0; kd < g->k[0]; kd++) /* tap offsets in the padded plane */
    for (int64_t kh = 0; kh < g->k[1]; kh++)
      for (int64_t kw = 0; kw < g->k[2]; kw++) sc.off[t++] = ((kd * g->dl[0]) * pd[1] + kh * g->dl[1]) * pd[2] + kw * g->dl[2];
  for (int64_t c = lo; c < hi; c++) {
    dw_plane(j, c, sc.xp, pd);
    dw_channel(j, c, pd, &sc);
  }
  dw_scratch_free(&sc);
}
