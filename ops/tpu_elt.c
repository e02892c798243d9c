/* tpu_elt.c: integer kernels of the Tpu dialect beyond the MAC ops, each what one isa.def
 * instruction computes through quant/: Add/Sub/Mul (ELTWISE, per-operand rescale, numpy
 * broadcasting), Concat (REQUANT of each input to the output's scale), AveragePool /
 * GlobalAveragePool (POOL avg), Lut (LUT), Requant (REQUANT) and Cast (CAST). */
#include <stdlib.h>
#include <string.h>

#include "ops/broadcast.h"
#include "ops/nn_util.h"
#include "ops/ops_util.h"
#include "ops/tpu_util.h"
#include "common/clones.h"

#define ROW_CHUNK 1024 /* elements per row step of the element-wise kernels (int32 buffers on the stack) */

/* v[i] = element off + i·stride of t (stored values as int32), i < n: a row load for stride
 * 1, one value repeated for 0. */
static void elt_operand(const ct_tensor *t, int64_t off, int64_t stride, int64_t n, int32_t *v) {
  if (stride == 1) {
    ct_tq_get_row_i32(t, off, n, 0, v);
  } else {
    int32_t c = ct_tq_get(t, off);
    for (int64_t i = 0; i < n; i++) v[i] = stride ? ct_tq_get(t, off + i * stride) : c;
  }
}


ct_status ct_tpu_eltwise(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  (void)ctx;
  ct_status st = ct_tq_need_int(op, in, out, 2, d);
  if (st) return st;
  int32_t m[2];
  int s[3];
  int nm = 0, ns = 0;
  const int64_t *mv = ct_attr_rq_multiplier(op, &nm), *sv = ct_attr_rq_rshift(op, &ns);
  if (nm != 2 || ns != 3) return ct_ops_err(d, CT_ERR_INPUT, op, "needs multiplier [m_a, m_b] and rshift [s_a, s_b, s_out]");
  for (int i = 0; i < 3; i++) {
    if (sv[i] < 0 || sv[i] > 63) return ct_ops_err(d, CT_ERR_INPUT, op, "rshift %lld outside 0..63", (long long)sv[i]);
    s[i] = (int)sv[i];
  }
  m[0] = (int32_t)mv[0], m[1] = (int32_t)mv[1];
  ct_quant_elt p = {.m_a = m[0], .m_b = m[1], .s_a = s[0], .s_b = s[1], .s_out = s[2], .out = out[0]->dtype};
  p.op = op->kind == CT_OP_ADD   ? CT_QUANT_ELT_ADD
         : op->kind == CT_OP_SUB ? CT_QUANT_ELT_SUB
         : op->kind == CT_OP_MAX ? CT_QUANT_ELT_MAX
         : op->kind == CT_OP_MIN ? CT_QUANT_ELT_MIN
                                 : CT_QUANT_ELT_MUL;
  if (op->n_in != 2) return ct_ops_err(d, CT_ERR_INPUT, op, "the integer form has two operands");
  p.zp_a = ct_tq_zp(op->in[0]), p.zp_b = ct_tq_zp(op->in[1]), p.zp_out = ct_tq_zp(op->out[0]);
  if ((st = ct_tq_act(op, &p.act, &p.act_hi, d))) return st;
  int nd[2] = {in[0]->ndim, in[1]->ndim};
  const int64_t *shp[2] = {in[0]->shape, in[1]->shape};
  ct_bcast_iter it;
  if (!ct_bcast_iter_init(&it, out[0]->ndim, out[0]->shape, 2, nd, shp)) return CT_OK;
  int64_t row = 0;
  int32_t a[ROW_CHUNK], b[ROW_CHUNK];
  do {
    for (int64_t j = 0; j < it.inner; j += ROW_CHUNK) {
      int64_t n = it.inner - j < ROW_CHUNK ? it.inner - j : ROW_CHUNK;
      elt_operand(in[0], it.off[0] + j * it.istride[0], it.istride[0], n, a);
      elt_operand(in[1], it.off[1] + j * it.istride[1], it.istride[1], n, b);
      if (!ct_quant_eltwise_row(&p, a, b, n, ct_tq_at(out[0], row * it.inner + j)))
        return ct_ops_err(d, CT_ERR_INPUT, op, "result type %s has no integer store", ct_dtype_name(out[0]->dtype));
    }
    row++;
  } while (ct_bcast_iter_next(&it));
  return CT_OK;
}

/* y[i] = ct_quant_requant_act(x[i] − zx, m, s, zy, act, hi, yt) for i < n (ct_quant_requant
 * is the act-less form), y an array of yt's C type, ROW_CHUNK at a time. */
static void requant_rows(const ct_tensor *x, int64_t n, int32_t zx, int32_t m, int s, int32_t zy, ct_quant_act act,
                         int32_t hi, ct_dtype yt, void *y) {
  int32_t v[ROW_CHUNK];
  size_t es = ct_dtype_size(yt);
  for (int64_t j = 0; j < n; j += ROW_CHUNK) {
    int64_t c = n - j < ROW_CHUNK ? n - j : ROW_CHUNK;
    ct_tq_get_row_i32(x, j, c, zx, v);
    ct_quant_requant_act_row_i32(v, c, m, s, zy, act, hi, yt, (char *)y + (size_t)j * es);
  }
}

ct_status ct_tpu_concat(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  (void)ctx;
  ct_status st = ct_tq_need_int(op, in, out, op->n_in, d);
  if (st) return st;
  ct_tensor *y = out[0];
  int axis;
  if (!ct_ops_axis(ct_attr_concat_axis(op), y->ndim, &axis)) return ct_ops_err(d, CT_ERR_INPUT, op, "bad axis");
  int32_t *m = malloc((size_t)op->n_in * sizeof *m);
  int *s = malloc((size_t)op->n_in * sizeof *s);
  if (!m || !s) st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  if (!st) st = ct_tq_rq(op, op->n_in, m, s, d);
  int64_t outer = 1, after = 1;
  for (int k = 0; k < axis; k++) outer *= y->shape[k];
  for (int k = axis + 1; k < y->ndim; k++) after *= y->shape[k];
  int32_t zy = ct_tq_zp(op->out[0]);
  size_t es = ct_dtype_size(y->dtype);
  int64_t row = y->shape[axis] * after, pos = 0; /* y's elements per outer index; input i's offset in a row */
  for (int i = 0; !st && i < op->n_in; i++) {
    int64_t inner = in[i]->shape[axis] * after;
    const char *src = in[i]->data; /* in[i] in y's type: itself when its requant is the identity */
    char *tmp = NULL;
    bool same = in[i]->dtype == y->dtype && ct_tq_zp(op->in[i]) == zy && s[i] >= 0 && s[i] < 31 && m[i] == 1 << s[i];
    if (!same && !(src = tmp = malloc(es * (size_t)(outer * inner) + 1))) {
      st = ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
      break;
    }
    if (!same) requant_rows(in[i], outer * inner, ct_tq_zp(op->in[i]), m[i], s[i], zy, CT_QUANT_ACT_NONE, 0, y->dtype, tmp);
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)y->data + (size_t)(o * row + pos) * es, src + (size_t)(o * inner) * es, (size_t)inner * es);
    free(tmp);
    pos += inner;
  }
  free(m), free(s);
  return st;
}

/* Sum of one window of a plane xp of x − zp; pad positions add 0 (they hold the zero point). */
static int64_t window_sum(const int32_t *xp, const ct_nn_geo *g, int64_t oh, int64_t ow) {
  int64_t acc = 0;
  for (int64_t kh = 0; kh < g->k[1]; kh++) {
    int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->dl[1];
    if (ih < 0 || ih >= g->in[1]) continue;
    for (int64_t kw = 0; kw < g->k[2]; kw++) {
      int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->dl[2];
      if (iw >= 0 && iw < g->in[2]) acc += xp[ih * g->in[2] + iw];
    }
  }
  return acc;
}

ct_status ct_tpu_avgpool(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  (void)ctx;
  ct_status st = ct_tq_need_int(op, in, out, 1, d);
  if (st) return st;
  const ct_tensor *x = in[0];
  ct_tensor *y = out[0];
  ct_nn_geo g = {.nsp = 2};
  if (x->ndim != 4) return ct_ops_err(d, CT_ERR_INPUT, op, "integer pooling needs NCHW input");
  if (op->kind == CT_OP_GLOBALAVERAGEPOOL) {
    for (int i = 0; i < 3; i++) g.s[i] = g.dl[i] = g.out[i] = 1;
    g.in[0] = g.k[0] = 1, g.in[1] = g.k[1] = x->shape[2], g.in[2] = g.k[2] = x->shape[3];
  } else if ((st = ct_nn_geo_read(op, x, NULL, y, &g, d))) {
    return st;
  }
  if (g.k[0] != 1 || g.in[0] != 1) return ct_ops_err(d, CT_ERR_INPUT, op, "integer pooling is 2-D");
  int32_t m;
  int s;
  if ((st = ct_tq_rq(op, 1, &m, &s, d))) return st;
  int32_t zx = ct_tq_zp(op->in[0]), zy = ct_tq_zp(op->out[0]);
  int64_t planes = x->shape[0] * x->shape[1], pos = 0, HW = g.in[1] * g.in[2];
  int32_t *xp = malloc(sizeof *xp * (size_t)(HW > 0 ? HW : 1));
  if (!xp) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  for (int64_t pl = 0; pl < planes; pl++) {
    ct_tq_get_row_i32(x, pl * HW, HW, zx, xp);
    for (int64_t oh = 0; oh < g.out[1]; oh++)
      for (int64_t ow = 0; ow < g.out[2]; ow++, pos++)
        ct_tq_set(y, pos, ct_quant_requant_act(window_sum(xp, &g, oh, ow), m, s, zy, CT_QUANT_ACT_NONE, 0, y->dtype));
  }
  free(xp);
  return CT_OK;
}

/* ReduceMean over contiguous axes (REDUCE): the input viewed as [outer, R, inner], out =
 * sat(rshift_round(Σ_R (x − zp_x) · m, s) + zp_y) with (m, s) = ct_quant_pool_params(.., R). */
ct_status ct_tpu_reducemean(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                            ct_diag *d) {
  (void)ctx;
  ct_status st = ct_tq_need_int(op, in, out, 1, d);
  const ct_tensor *x = in[0];
  bool red[CT_MAX_DIMS] = {false}, noop = false;
  if (st || (st = ct_ops_reduce_axes(op, x->ndim, op->n_in > 1 ? in[1] : NULL, red, &noop, d))) return st;
  int first = -1, last = -1;
  for (int k = 0; k < x->ndim; k++)
    if (red[k]) last = k, first = first < 0 ? k : first;
  for (int k = first; k >= 0 && k <= last; k++)
    if (!red[k]) return ct_ops_err(d, CT_ERR_INPUT, op, "integer ReduceMean needs contiguous axes");
  int64_t outer = 1, R = 1, inner = 1;
  for (int k = 0; k < x->ndim; k++) {
    if (first < 0 || k < first) outer *= x->shape[k];
    else if (k <= last) R *= x->shape[k];
    else inner *= x->shape[k];
  }
  int32_t m;
  int s;
  if ((st = ct_tq_rq(op, 1, &m, &s, d))) return st;
  int32_t zx = ct_tq_zp(op->in[0]), zy = ct_tq_zp(op->out[0]);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t sum = 0;
      for (int64_t r = 0; r < R; r++) sum += ct_tq_get(x, (o * R + r) * inner + i) - zx;
      ct_tq_set(out[0], o * inner + i, ct_quant_requant_act(sum, m, s, zy, CT_QUANT_ACT_NONE, 0, out[0]->dtype));
    }
  return CT_OK;
}

/* The 16-bit LUT (input i16): CT_QUANT_LUT16_ENTRIES int16 entries per table (channel k's at
 * k·entries when per_channel), looked up with interpolation (ct_quant_lut16_lookup). */
static ct_status lut16(const ct_op *op, const int64_t *tab, int n, bool per_channel, const ct_tensor *x, ct_tensor *y,
                       ct_diag *d) {
  int64_t C = x->ndim >= 2 ? x->shape[1] : 1, cnt = ct_tensor_numel(x), E = CT_QUANT_LUT16_ENTRIES;
  int16_t *t = malloc(sizeof *t * (size_t)n);
  if (!t) return ct_ops_err(d, CT_ERR_LIMIT, op, "out of memory");
  for (int i = 0; i < n; i++) t[i] = (int16_t)tab[i];
  int64_t plane = per_channel && cnt > 0 ? cnt / x->shape[0] / C : 1;
  for (int64_t i = 0; i < cnt; i++)
    ct_tq_set(y, i, ct_quant_lut16_lookup(t + (per_channel ? (i / plane) % C * E : 0), (int32_t)ct_tq_get(x, i), y->dtype));
  free(t);
  return CT_OK;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
/* y[i] = byte[x[i]] with AVX-512 VBMI: the 256-byte map in four registers, two 128-entry
 * permutes (vpermi2b) per 64 bytes and the top bit of x choosing between them. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void map_bytes_vbmi(const uint8_t byte[256],
                                                                                 const uint8_t *x, uint8_t *y,
                                                                                 int64_t n) {
  __m512i t0 = _mm512_loadu_si512((const void *)byte), t1 = _mm512_loadu_si512((const void *)(byte + 64));
  __m512i t2 = _mm512_loadu_si512((const void *)(byte + 128)), t3 = _mm512_loadu_si512((const void *)(byte + 192));
  for (int64_t i = 0; i < n; i += 64) {
    __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - i)) - 1);
    __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
    __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
  }
}
#define LUT_VBMI 1
#endif

#if CT_X86_SIMD
/* y[i] = byte[x[i]] for 32 bytes at a time with AVX2 alone: the map as 16 rows of 16 bytes;
 * each row looked up by the low nibble (pshufb) and kept where the high nibble is the row's.
 * Returns the bytes done (a multiple of 32). */
__attribute__((target("avx2"))) static int64_t map_bytes_avx2(const uint8_t byte[256], const uint8_t *x, uint8_t *y,
                                                              int64_t n) {
  __m256i rows[16];
  for (int k = 0; k < 16; k++) rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(byte + 16 * k)));
  const __m256i nib = _mm256_set1_epi8(0x0f);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(x + i)), lo = _mm256_and_si256(v, nib);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib), r = _mm256_setzero_si256();
    for (int k = 0; k < 16; k++)
      r = _mm256_or_si256(r, _mm256_and_si256(_mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)k)), _mm256_shuffle_epi8(rows[k], lo)));
    _mm256_storeu_si256((__m256i *)(y + i), r);
  }
  return i;
}
#endif

/* y[i] = byte[x[i]] for i < n (the 8-bit LUT by stored byte). */
static void map_bytes(const uint8_t byte[256], const uint8_t *x, uint8_t *y, int64_t n) {
#ifdef LUT_VBMI
  static int vbmi = -1; /* a benign race: every thread stores the same value */
  if (vbmi < 0) vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  if (vbmi) {
    map_bytes_vbmi(byte, x, y, n);
    return;
  }
#endif
  int64_t i = 0;
#if CT_X86_SIMD
  if (ct_cpu_avx2()) i = map_bytes_avx2(byte, x, y, n);
#endif
  for (; i < n; i++) y[i] = byte[x[i]];
}

/* One 8-bit LUT over blocks of `plane` elements (a channel's plane with per-channel tables). */
typedef struct lut_job {
  const int64_t *tab;
  ct_dtype it;
  const uint8_t *x;
  uint8_t *y;
  int64_t cnt, plane, C;
  bool per_channel;
} lut_job;

/* Blocks [lo, hi) of a lut_job: each block's byte map (per channel: its channel's table),
 * then the gather. */
static void lut_blocks(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const lut_job *j = arg;
  uint8_t byte[256];
  int64_t k = -1;
  for (int64_t b = lo; b < hi; b++) {
    int64_t i0 = b * j->plane, t = j->per_channel ? b % j->C * 256 : 0;
    if (t != k) /* the table by stored byte: entry ct_quant_lut_index of the byte's value */
      for (int r = 0; r < 256; r++) byte[r] = (uint8_t)j->tab[t + ct_quant_lut_index(j->it == CT_I8 ? (int8_t)r : r, j->it)];
    k = t;
    map_bytes(byte, j->x + i0, j->y + i0, j->cnt - i0 < j->plane ? j->cnt - i0 : j->plane);
  }
}

#define LUT_BLOCK ((int64_t)1 << 16) /* elements per block of a per-tensor table */

ct_status ct_tpu_lut(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  int n = 0;
  const int64_t *tab = ct_attr_lut_table(op, &n);
  ct_dtype it = in[0]->dtype, ot = out[0]->dtype;
  int64_t C = in[0]->ndim >= 2 ? in[0]->shape[1] : 1, cnt = ct_tensor_numel(in[0]), E = ct_quant_lut_entries(it);
  bool per_channel = n != E && in[0]->ndim >= 2 && n == E * C;
  if ((n != E && !per_channel) || (it != CT_I8 && it != CT_U8 && it != CT_I16) || (ot != CT_I8 && ot != CT_U8))
    return ct_ops_err(d, CT_ERR_INPUT, op, "needs a 256-entry table (or 256 per channel) and 8-bit input and output, or a 257-entry table and i16 input");
  if (it == CT_I16) return lut16(op, tab, n, per_channel, in[0], out[0], d);
  int64_t plane = per_channel && cnt > 0 ? cnt / in[0]->shape[0] / C : LUT_BLOCK;
  if (cnt <= 0 || plane <= 0) return CT_OK;
  lut_job j = {tab, it, in[0]->data, out[0]->data, cnt, plane, C, per_channel};
  ct_nn_parallel(ctx, (cnt + plane - 1) / plane, cnt, lut_blocks, &j);
  return CT_OK;
}

/* REQUANT: y = sat(rshift_round((x − zp_x)·m, s) + zp_y) with the fused act (relu / clip
 * at qact_hi); a Cast between integer types is the same without act. */
ct_status ct_tpu_requant(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  (void)ctx;
  ct_status st = ct_tq_need_int(op, in, out, 1, d);
  int32_t m;
  int s;
  if (st || (st = ct_tq_rq(op, 1, &m, &s, d))) return st;
  ct_quant_act act = CT_QUANT_ACT_NONE;
  int32_t hi = 0, zx = ct_tq_zp(op->in[0]), zy = ct_tq_zp(op->out[0]);
  if (op->kind == CT_OP_REQUANT && (st = ct_tq_act(op, &act, &hi, d))) return st;
  requant_rows(in[0], ct_tensor_numel(in[0]), zx, m, s, zy, act, hi, out[0]->dtype, out[0]->data);
  return CT_OK;
}

/* CAST: float → integer quantizes with the output's parameters (round half away from zero,
 * saturate: ct_quant_quantize); integer → float dequantizes with the input's; float → float
 * rounds to the output type (nearest even); integer → integer rescales (Requant's formula).
 * An integer or bool side without parameters holds plain values (a mask, indices, an ONNX
 * Cast of them): the Cast converts values as ONNX does (the Top kernel). */
/* Elements [i, i + c) of t as float32: f32 in place, bf16 widened (its bits are the high
 * half of the float32's), other types value by value into buf. */
static const float *float_row(const ct_tensor *t, int64_t i, int64_t c, float *buf) {
  if (t->dtype == CT_F32) return (const float *)t->data + i;
  if (t->dtype == CT_BF16) {
    const uint16_t *b = (const uint16_t *)t->data + i;
    for (int64_t j = 0; j < c; j++) {
      uint32_t u = (uint32_t)b[j] << 16;
      memcpy(buf + j, &u, sizeof u);
    }
    return buf;
  }
  for (int64_t j = 0; j < c; j++) buf[j] = (float)ct_tensor_get_f64(t, i + j);
  return buf;
}

/* CAST float → integer (ct_quant_quantize_row) of elements [a, b) from f32 / bf16 / f16
 * rows, whose values float32 holds exactly; other float types value by value. */
static void cast_quantize(const ct_tensor *x, const ct_value *yv, ct_tensor *y, int64_t a, int64_t b) {
  int32_t q[ROW_CHUNK];
  float f[ROW_CHUNK];
  bool rows = x->dtype == CT_F32 || x->dtype == CT_BF16 || x->dtype == CT_F16;
  for (int64_t i = a; rows && i < b; i += ROW_CHUNK) {
    int64_t c = b - i < ROW_CHUNK ? b - i : ROW_CHUNK;
    ct_quant_quantize_row(float_row(x, i, c, f), c, yv->scale[0], yv->zero_point[0], y->dtype, q);
    ct_tq_set_row(y, i, c, q);
  }
  for (int64_t i = a; !rows && i < b; i++)
    ct_tq_set(y, i, ct_quant_quantize(ct_tensor_get_f64(x, i), yv->scale[0], yv->zero_point[0], y->dtype));
}

/* CAST integer → float of elements [a, b): (q − zp)·scale in double, stored as y's type (f32
 * directly, bf16 by rows of the float32 values as ct_tensor_set_f64 rounds them, others value
 * by value). */
static void cast_dequantize(const ct_tensor *x, const ct_value *xv, ct_tensor *y, int64_t a, int64_t b) {
  float f[ROW_CHUNK];
  int32_t q[ROW_CHUNK];
  double sc = xv->scale[0];
  int32_t zp = xv->zero_point[0];
  for (int64_t i = a; i < b; i += ROW_CHUNK) {
    int64_t c = b - i < ROW_CHUNK ? b - i : ROW_CHUNK;
    float *dst = y->dtype == CT_F32 ? (float *)y->data + i : f;
    ct_tq_get_row_i32(x, i, c, 0, q);
    for (int64_t j = 0; j < c; j++) dst[j] = (float)ct_quant_dequantize(q[j], sc, zp);
    if (y->dtype == CT_BF16) ct_f32_to_bf16_row(f, (uint16_t *)y->data + i, c);
    else if (y->dtype != CT_F32)
      for (int64_t j = 0; j < c; j++) ct_tensor_set_f64(y, i + j, ct_quant_dequantize(q[j], sc, zp));
  }
}

/* A CAST's elements in blocks of ROW_CHUNK shared by the threads (each element alone: the
 * same results for any split). */
typedef struct cast_job {
  const ct_tensor *x;
  ct_tensor *y;
  const ct_value *qv; /* the quantized side's value */
  int64_t n;
  bool quantize;
} cast_job;

static void cast_blocks(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const cast_job *j = arg;
  int64_t a = lo * ROW_CHUNK, b = hi * ROW_CHUNK < j->n ? hi * ROW_CHUNK : j->n;
  if (j->quantize) cast_quantize(j->x, j->qv, j->y, a, b);
  else cast_dequantize(j->x, j->qv, j->y, a, b);
}

ct_status ct_tpu_cast(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx, ct_diag *d) {
  const ct_value *xv = op->in[0], *yv = op->out[0];
  bool fi = ct_dtype_is_float(in[0]->dtype), fo = ct_dtype_is_float(out[0]->dtype);
  int64_t n = ct_tensor_numel(in[0]);
  if ((!fi && xv->n_scale == 0) || (!fo && yv->n_scale == 0)) return ct_kernel_of(CT_OP_CAST)(op, in, out, ctx, d);
  if (!fi && !fo) return ct_tpu_requant(op, in, out, ctx, d);
  if (fi && !fo) {
    if (yv->n_scale != 1 || !ct_tq_is_storage(out[0]->dtype))
      return ct_ops_err(d, CT_ERR_INPUT, op, "a quantizing cast needs per-tensor parameters on its result");
    cast_job j = {in[0], out[0], yv, n, true};
    ct_nn_parallel(ctx, (n + ROW_CHUNK - 1) / ROW_CHUNK, n, cast_blocks, &j);
  } else if (!fi) {
    if (xv->n_scale != 1 || !ct_tq_is_storage(in[0]->dtype))
      return ct_ops_err(d, CT_ERR_INPUT, op, "a dequantizing cast needs per-tensor parameters on its operand");
    cast_job j = {in[0], out[0], xv, n, false};
    ct_nn_parallel(ctx, (n + ROW_CHUNK - 1) / ROW_CHUNK, n, cast_blocks, &j);
  } else {
    for (int64_t i = 0; i < n; i++) ct_tensor_set_f64(out[0], i, ct_tensor_get_f64(in[0], i));
  }
  return CT_OK;
}
