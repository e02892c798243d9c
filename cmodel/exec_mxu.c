/* exec_mxu.c: functional CONV, DWCONV and MATMUL (isa.def semantics): integer operands go
 * through an im2col + int32 GEMM inner loop (blocked over output channels, contiguous over
 * output pixels so the compiler vectorizes it), then bias, requant and activation via
 * quant/ct_quant_requant_act; float operands accumulate in f32 in (c, ky, kx) / k order,
 * padded taps included (+0 · w). */
#include <stdlib.h>
#include <string.h>

#include "cmodel/elem.h"
#include "cmodel/exec.h"
#include "cmodel/exec_kern.h"
#include "quant/float_fn.h"
#include "quant/quant.h"

/* The output stage shared by CONV and MATMUL. */
typedef struct epi {
  uint8_t *mem;
  bool fp;
  int64_t acc_in, has_bias, rq_mode, act, zp_out, act_hi;
  uint64_t acc, bias, rq, out;
  ct_dtype dt_out, dt_acc;
} epi;

/* Stores accumulator value v (channel ch) as output element i: + partial sum + bias, int32
 * saturation (the accumulator is a saturating int32), then requant + act or raw. */
static void epi_int(const epi *e, int64_t i, int64_t ch, int64_t v) {
  if (e->acc_in) v += ct_elem_geti(e->mem + e->acc, CT_I32, i);
  if (e->has_bias) v += ct_elem_geti(e->mem + e->bias, CT_I32, ch);
  v = ct_quant_saturate(v, CT_I32);
  if (e->rq_mode == CT_ISA_RQ_NONE) {
    ct_elem_seti(e->mem + e->out, e->dt_out, i, ct_quant_saturate(v, e->dt_out));
    return;
  }
  int64_t k = e->rq_mode == CT_ISA_RQ_CHANNEL ? ch : 0;
  int32_t m = (int32_t)ct_elem_geti(e->mem + e->rq, CT_I32, 2 * k);
  int s = (int)ct_elem_geti(e->mem + e->rq, CT_I32, 2 * k + 1);
  int32_t y = ct_quant_requant_act(v, m, s < 0 ? 0 : s > 63 ? 63 : s, (int32_t)e->zp_out,
                                   (ct_quant_act)e->act, (int32_t)e->act_hi, e->dt_out);
  ct_elem_seti(e->mem + e->out, e->dt_out, i, y);
}

static void epi_float(const epi *e, int64_t i, int64_t ch, float v) {
  if (e->acc_in) v += ct_elem_getf(e->mem + e->acc, CT_F32, i);
  if (e->has_bias) v += ct_elem_getf(e->mem + e->bias, CT_F32, ch);
  v = ct_quant_fn_act(v, (int)e->act, ct_quant_float_act_hi(e->act_hi, e->zp_out));
  ct_elem_setf_result(e->mem + e->out, e->dt_out, i, v);
}

/* Convolution parameters copied out of the CONV or DWCONV member of ct_insn. */
typedef struct convp {
  int64_t n, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, pt, pl, dh, dw, groups, zp_in;
  uint64_t in, wt;
  ct_dtype dt_in, dt_w;
} convp;

#define CONV_COPY(P, E, X)                                                                  \
  do {                                                                                     \
    P = (convp){X.n, X.ic, X.ih, X.iw, X.oc, X.oh, X.ow, X.kh, X.kw, X.stride_h, X.stride_w, \
                X.pad_t, X.pad_l, X.dil_h, X.dil_w, X.groups ? X.groups : 1, X.zp_in,      \
                (uint64_t)X.in, (uint64_t)X.wt, (ct_dtype)X.dt_in, (ct_dtype)X.dt_w};       \
    E = (epi){NULL, ct_dtype_is_float((ct_dtype)X.dt_in), X.acc_in, X.has_bias, X.rq_mode,  \
              X.act, X.zp_out, X.act_hi, (uint64_t)X.acc, (uint64_t)X.bias, (uint64_t)X.rq, \
              (uint64_t)X.out, (ct_dtype)X.dt_out, CT_I32};                                \
  } while (0)

/* Builds the im2col matrix col[k][p] (k = (c, ky, kx) of group g, p = (y, x)) of input
 * values minus zp_in (0 in the padding) for batch b. */
static void im2col(const convp *c, const uint8_t *mem, int64_t b, int64_t g, int32_t *col) {
  int64_t icg = c->ic / c->groups, P = c->oh * c->ow, k = 0;
  for (int64_t ci = g * icg; ci < (g + 1) * icg; ci++) {
    int64_t base = (b * c->ic + ci) * c->ih * c->iw;
    for (int64_t ky = 0; ky < c->kh; ky++)
      for (int64_t kx = 0; kx < c->kw; kx++, k++) {
        int32_t *row = col + k * P;
        for (int64_t y = 0; y < c->oh; y++) {
          int64_t iy = y * c->sh - c->pt + ky * c->dh;
          for (int64_t x = 0; x < c->ow; x++) {
            int64_t ix = x * c->sw - c->pl + kx * c->dw;
            bool in = iy >= 0 && iy < c->ih && ix >= 0 && ix < c->iw;
            row[y * c->ow + x] = in ? (int32_t)(ct_elem_geti(mem + c->in, c->dt_in, base + iy * c->iw + ix) - c->zp_in) : 0;
          }
        }
      }
  }
}

/* acc[o][p] = Σ_k w[o][k] · col[k][p] over M × K × P, int32 (callers ensure no overflow)
 * or int64 when wide. */
static void gemm_i32(const int32_t *w, const int32_t *col, int64_t M, int64_t K, int64_t P,
                     int32_t *acc) {
  memset(acc, 0, (size_t)(M * P) * sizeof *acc);
  for (int64_t o = 0; o < M; o++) {
    int32_t *restrict a = acc + o * P;
    for (int64_t k = 0; k < K; k++) {
      int32_t wv = w[o * K + k];
      if (!wv) continue;
      const int32_t *restrict r = col + k * P;
      for (int64_t p = 0; p < P; p++) a[p] += wv * r[p];
    }
  }
}

static void gemm_i64(const int32_t *w, const int32_t *col, int64_t M, int64_t K, int64_t P,
                     int64_t *acc) {
  memset(acc, 0, (size_t)(M * P) * sizeof *acc);
  for (int64_t o = 0; o < M; o++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t p = 0; p < P; p++) acc[o * P + p] += (int64_t)w[o * K + k] * col[k * P + p];
}

/* True if K products of |a| ≤ amax and |b| ≤ bmax can overflow int32. */
static bool may_overflow(int64_t K, int64_t amax, int64_t bmax) {
  return amax && bmax && K > (INT64_C(2147483647) / amax) / bmax;
}

static int64_t absmax_minus(ct_dtype dt, int64_t zp) {
  int64_t lo = ct_quant_min(dt) - zp, hi = ct_quant_max(dt) - zp;
  return lo < 0 ? (-lo > hi ? -lo : hi) : hi;
}

/* One (batch, group) block of an integer convolution through im2col + GEMM. */
static void conv_int_block(const convp *c, const epi *e, uint8_t *mem, int64_t b, int64_t g,
                           int32_t *col, int32_t *w, void *acc, bool wide) {
  int64_t icg = c->ic / c->groups, ocg = c->oc / c->groups, K = icg * c->kh * c->kw;
  int64_t P = c->oh * c->ow;
  im2col(c, mem, b, g, col);
  for (int64_t o = 0; o < ocg; o++)
    for (int64_t k = 0; k < K; k++)
      w[o * K + k] = (int32_t)ct_elem_geti(mem + c->wt, c->dt_w, (g * ocg + o) * K + k);
  if (wide)
    gemm_i64(w, col, ocg, K, P, acc);
  else
    gemm_i32(w, col, ocg, K, P, acc);
  for (int64_t o = 0; o < ocg; o++) {
    int64_t ch = g * ocg + o, base = (b * c->oc + ch) * P;
    for (int64_t p = 0; p < P; p++)
      epi_int(e, base + p, ch, wide ? ((int64_t *)acc)[o * P + p] : ((int32_t *)acc)[o * P + p]);
  }
}

/* The integer epilogue of e for the row kernels. */
static ct_kern_epi kern_epi(const epi *e) {
  return (ct_kern_epi){e->mem, e->acc_in != 0, e->has_bias != 0, e->rq_mode, e->act, e->zp_out, e->act_hi,
                       e->acc, e->bias, e->rq, e->out, e->dt_out};
}

/* Channels [c0, c0 + nc) of image b as int16 (x − zp_in), nc · ih · iw values. */
static void load_plane(const convp *c, const uint8_t *mem, int64_t b, int64_t c0, int64_t nc, int16_t *plane) {
  ct_kern_load_i16(mem + c->in, c->dt_in, (b * c->ic + c0) * c->ih * c->iw, nc * c->ih * c->iw,
                   (int32_t)c->zp_in, plane);
}

/* Output columns [*lo, *hi) whose input column x·sw + off lies in [0, iw). */
static void valid_cols(const convp *c, int64_t off, int64_t *lo, int64_t *hi) {
  *lo = off >= 0 ? 0 : (-off + c->sw - 1) / c->sw;
  *hi = c->iw - off <= 0 ? 0 : (c->iw - off + c->sw - 1) / c->sw;
  if (*hi > c->ow) *hi = c->ow;
  if (*lo > *hi) *lo = *hi;
}

/* im2col of an int16 plane block: col[k][p], k = (c, ky, kx), 0 in the padding. */
static void im2col16(const convp *c, const int16_t *plane, int64_t icg, int16_t *col) {
  int64_t P = c->oh * c->ow, k = 0;
  for (int64_t ci = 0; ci < icg; ci++)
    for (int64_t ky = 0; ky < c->kh; ky++)
      for (int64_t kx = 0; kx < c->kw; kx++, k++) {
        int64_t off = kx * c->dw - c->pl, lo, hi;
        valid_cols(c, off, &lo, &hi);
        for (int64_t y = 0; y < c->oh; y++) {
          int16_t *dst = col + k * P + y * c->ow;
          int64_t iy = y * c->sh - c->pt + ky * c->dh;
          if (iy < 0 || iy >= c->ih) {
            memset(dst, 0, (size_t)c->ow * sizeof *dst);
            continue;
          }
          const int16_t *src = plane + (ci * c->ih + iy) * c->iw + off;
          memset(dst, 0, (size_t)lo * sizeof *dst);
          if (c->sw == 1)
            memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *dst);
          else
            for (int64_t x = lo; x < hi; x++) dst[x] = src[x * c->sw];
          memset(dst + hi, 0, (size_t)(c->ow - hi) * sizeof *dst);
        }
      }
}

/* acc[p] (P = oh·ow) += Σ_taps w[tap] · x of one channel: the plane padded with zeros to
 * pad (PH × PW), each tap a shifted (strided) row sweep. */
static void dw_taps(const convp *c, const int16_t *pad, int64_t PW, const int16_t *w, int32_t *acc) {
  memset(acc, 0, (size_t)(c->oh * c->ow) * sizeof *acc);
  for (int64_t ky = 0; ky < c->kh; ky++)
    for (int64_t kx = 0; kx < c->kw; kx++) {
      int32_t wv = w[ky * c->kw + kx];
      for (int64_t y = 0; wv && y < c->oh; y++) {
        const int16_t *restrict r = pad + (y * c->sh + ky * c->dh) * PW + kx * c->dw;
        int32_t *restrict a = acc + y * c->ow;
        if (c->sw == 1)
          for (int64_t x = 0; x < c->ow; x++) a[x] += wv * r[x];
        else
          for (int64_t x = 0; x < c->ow; x++) a[x] += wv * r[x * c->sw];
      }
    }
}

/* Input channel g of image b, x − zp_in as int16, into a zero-padded PH × PW plane. */
static void dw_pad(const convp *c, const uint8_t *mem, int64_t b, int64_t g, int64_t PH, int64_t PW, int16_t *pad) {
  memset(pad, 0, (size_t)(PH * PW) * sizeof *pad);
  int64_t lo = c->pl, hi = c->pl + c->iw < PW ? c->pl + c->iw : PW;
  for (int64_t py = 0; py < PH && lo < hi; py++) {
    int64_t iy = py - c->pt;
    if (iy < 0 || iy >= c->ih) continue;
    ct_kern_load_i16(mem + c->in, c->dt_in, ((b * c->ic + g) * c->ih + iy) * c->iw, hi - lo, (int32_t)c->zp_in,
                     pad + py * PW + lo);
  }
}

/* Stores channel ch of image b from the int32 sums acc[P] through the epilogue. */
static void store_channel(const convp *c, const ct_kern_epi *ke, const int32_t *acc, int64_t b, int64_t ch,
                          int64_t *v) {
  int64_t P = c->oh * c->ow;
  for (int64_t p = 0; p < P; p++) v[p] = acc[p];
  ct_kern_epi_row(ke, v, (b * c->oc + ch) * P, P, ch, false);
}

/* Depthwise (one input channel per group): direct taps over a padded int16 plane. */
static bool conv_dw16(const convp *c, const ct_kern_epi *ke, uint8_t *mem) {
  int64_t ocg = c->oc / c->groups, P = c->oh * c->ow, T = c->kh * c->kw;
  int64_t PH = (c->oh - 1) * c->sh + (c->kh - 1) * c->dh + 1, PW = (c->ow - 1) * c->sw + (c->kw - 1) * c->dw + 1;
  int16_t *pad = malloc((size_t)(PH * PW) * sizeof *pad), *w = malloc((size_t)(c->oc * T) * sizeof *w);
  int32_t *acc = malloc((size_t)P * sizeof *acc);
  int64_t *v = malloc((size_t)P * sizeof *v);
  bool ok = pad && w && acc && v;
  if (ok) ct_kern_load_i16(mem + c->wt, c->dt_w, 0, c->oc * T, 0, w);
  for (int64_t b = 0; ok && b < c->n; b++)
    for (int64_t g = 0; g < c->groups; g++) {
      dw_pad(c, mem, b, g, PH, PW, pad);
      for (int64_t o = g * ocg; o < (g + 1) * ocg; o++) {
        dw_taps(c, pad, PW, w + o * T, acc);
        store_channel(c, ke, acc, b, o, v);
      }
    }
  free(pad), free(w), free(acc), free(v);
  return ok;
}

/* The int16 im2col + GEMM path (products and sums within int32, operands within int16). */
static bool conv_int16(const convp *c, const ct_kern_epi *ke, uint8_t *mem) {
  int64_t icg = c->ic / c->groups, ocg = c->oc / c->groups, K = icg * c->kh * c->kw, P = c->oh * c->ow;
  bool direct = c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && !c->pt && !c->pl && c->oh == c->ih &&
                c->ow == c->iw; /* a 1×1 conv's columns are the input plane itself */
  int16_t *plane = malloc((size_t)(icg * c->ih * c->iw) * sizeof *plane + 2);
  int16_t *col = direct ? plane : malloc((size_t)(K * P) * sizeof *col + 2);
  int16_t *w = malloc((size_t)(ocg * K) * sizeof *w + 2);
  int32_t *acc = malloc((size_t)(ocg * P) * sizeof *acc + 4);
  int64_t *v = malloc((size_t)P * sizeof *v + 8);
  bool ok = plane && col && w && acc && v;
  for (int64_t b = 0; ok && b < c->n; b++)
    for (int64_t g = 0; g < c->groups; g++) {
      load_plane(c, mem, b, g * icg, icg, plane);
      if (!direct) im2col16(c, plane, icg, col);
      ct_kern_load_i16(mem + c->wt, c->dt_w, g * ocg * K, ocg * K, 0, w);
      if (!(ok = ct_kern_gemm16(w, col, ocg, K, P, acc))) break;
      for (int64_t o = 0; o < ocg; o++) store_channel(c, ke, acc + o * P, b, g * ocg + o, v);
    }
  free(plane), free(w), free(acc), free(v);
  if (!direct) free(col);
  return ok;
}

static ct_status conv_int(const convp *c, const epi *e, uint8_t *mem) {
  int64_t icg = c->ic / c->groups, ocg = c->oc / c->groups, K = icg * c->kh * c->kw;
  int64_t P = c->oh * c->ow;
  int64_t amax = absmax_minus(c->dt_in, c->zp_in), wmax = absmax_minus(c->dt_w, 0);
  bool wide = may_overflow(K, amax, wmax);
  if (!wide && amax <= 32767 && wmax <= 32767 && P > 0 && K > 0) {
    ct_kern_epi ke = kern_epi(e);
    return (icg == 1 ? conv_dw16(c, &ke, mem) : conv_int16(c, &ke, mem)) ? CT_OK : CT_ERR_LIMIT;
  }
  int32_t *col = malloc((size_t)(K * P) * sizeof *col), *w = malloc((size_t)(ocg * K) * sizeof *w);
  void *acc = malloc((size_t)(ocg * P) * (wide ? sizeof(int64_t) : sizeof(int32_t)));
  bool ok = col && w && acc;
  for (int64_t b = 0; ok && b < c->n; b++)
    for (int64_t g = 0; g < c->groups; g++) conv_int_block(c, e, mem, b, g, col, w, acc, wide);
  free(col);
  free(w);
  free(acc);
  return ok ? CT_OK : CT_ERR_LIMIT;
}

/* Float convolution: f32 accumulation over (c, ky, kx) ascending; a tap in the padding
 * multiplies +0 by its weight like any other (ONNX: the pads are zeros, so a NaN or infinite
 * weight there gives NaN, as in the reference's im2col). */
static void conv_float(const convp *c, const epi *e, uint8_t *mem) {
  int64_t icg = c->ic / c->groups, ocg = c->oc / c->groups;
  for (int64_t b = 0; b < c->n; b++)
    for (int64_t o = 0; o < c->oc; o++) {
      int64_t g = o / ocg;
      for (int64_t y = 0; y < c->oh; y++)
        for (int64_t x = 0; x < c->ow; x++) {
          float acc = 0;
          for (int64_t ci = 0; ci < icg; ci++)
            for (int64_t ky = 0; ky < c->kh; ky++)
              for (int64_t kx = 0; kx < c->kw; kx++) {
                int64_t iy = y * c->sh - c->pt + ky * c->dh, ix = x * c->sw - c->pl + kx * c->dw;
                bool in = iy >= 0 && iy < c->ih && ix >= 0 && ix < c->iw;
                int64_t ii = ((b * c->ic + g * icg + ci) * c->ih + iy) * c->iw + ix;
                int64_t wi = ((o * icg + ci) * c->kh + ky) * c->kw + kx;
                float xv = in ? ct_elem_getf(mem + c->in, c->dt_in, ii) : 0.0f; /* padding: +0 */
                acc += xv * ct_elem_getf(mem + c->wt, c->dt_w, wi);
              }
          epi_float(e, ((b * c->oc + o) * c->oh + y) * c->ow + x, o, acc);
        }
    }
}

ct_status ct_sim_exec_conv(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
  convp c;
  epi e;
  if (in->op == CT_ISA_DWCONV)
    CONV_COPY(c, e, in->dwconv);
  else
    CONV_COPY(c, e, in->conv);
  e.mem = m->lmem->data;
  e.dt_acc = e.fp ? CT_F32 : CT_I32;
  if (e.fp) {
    conv_float(&c, &e, m->lmem->data);
    return CT_OK;
  }
  if (conv_int(&c, &e, m->lmem->data))
    return ct_diag_set(d, CT_ERR_LIMIT, "insn %u (%s): out of memory for the im2col buffer",
                       index, ct_isa_op_name(in->op));
  return CT_OK;
}

/* Matmul parameters. */
typedef struct mmp {
  int64_t batch, m, k, n, b_trans, b_bcast, zp_a;
  uint64_t a, b;
  ct_dtype dt_a, dt_b;
} mmp;

/* B of batch bi as int32 [k][n] (transposed from [n][k] when b_trans). */
static void load_b(const mmp *p, const uint8_t *mem, int64_t bi, int32_t *bt) {
  int64_t base = (p->b_bcast ? 0 : bi) * p->k * p->n;
  for (int64_t kk = 0; kk < p->k; kk++)
    for (int64_t j = 0; j < p->n; j++)
      bt[kk * p->n + j] = (int32_t)ct_elem_geti(mem + p->b, p->dt_b,
                                                base + (p->b_trans ? j * p->k + kk : kk * p->n + j));
}

/* The int16 path of matmul_int: A − zp_a and B as int16, ct_kern_gemm16, the epilogue by row. */
static bool matmul_int16(const mmp *p, const ct_kern_epi *ke, uint8_t *mem) {
  int16_t *a = malloc((size_t)(p->m * p->k) * sizeof *a + 2), *bt = malloc((size_t)(p->k * p->n) * sizeof *bt + 2);
  int16_t *br = p->b_trans ? malloc((size_t)(p->k * p->n) * sizeof *br + 2) : NULL;
  int32_t *acc = malloc((size_t)(p->m * p->n) * sizeof *acc + 4);
  int64_t *v = malloc((size_t)p->n * sizeof *v + 8);
  bool ok = a && bt && acc && v && (br || !p->b_trans);
  for (int64_t bi = 0; ok && bi < p->batch; bi++) {
    ct_kern_load_i16(mem + p->a, p->dt_a, bi * p->m * p->k, p->m * p->k, (int32_t)p->zp_a, a);
    if (bi == 0 || !p->b_bcast) {
      int64_t base = (p->b_bcast ? 0 : bi) * p->k * p->n;
      ct_kern_load_i16(mem + p->b, p->dt_b, base, p->k * p->n, 0, p->b_trans ? br : bt);
      for (int64_t j = 0; p->b_trans && j < p->n; j++) /* [n][k] → [k][n] */
        for (int64_t kk = 0; kk < p->k; kk++) bt[kk * p->n + j] = br[j * p->k + kk];
    }
    if (!(ok = ct_kern_gemm16(a, bt, p->m, p->k, p->n, acc))) break;
    for (int64_t i = 0; i < p->m; i++) {
      for (int64_t j = 0; j < p->n; j++) v[j] = acc[i * p->n + j];
      ct_kern_epi_row(ke, v, (bi * p->m + i) * p->n, p->n, 0, true);
    }
  }
  free(a), free(bt), free(br), free(acc), free(v);
  return ok;
}

static ct_status matmul_int(const mmp *p, const epi *e, uint8_t *mem) {
  int64_t amax = absmax_minus(p->dt_a, p->zp_a), bmax = absmax_minus(p->dt_b, 0);
  bool wide = may_overflow(p->k, amax, bmax);
  if (!wide && amax <= 32767 && bmax <= 32767 && p->m > 0 && p->n > 0 && p->k > 0) {
    ct_kern_epi ke = kern_epi(e);
    return matmul_int16(p, &ke, mem) ? CT_OK : CT_ERR_LIMIT;
  }
  int32_t *a = malloc((size_t)(p->m * p->k) * sizeof *a), *bt = malloc((size_t)(p->k * p->n) * sizeof *bt);
  void *acc = malloc((size_t)(p->m * p->n) * (wide ? sizeof(int64_t) : sizeof(int32_t)));
  bool ok = a && bt && acc;
  for (int64_t bi = 0; ok && bi < p->batch; bi++) {
    for (int64_t i = 0; i < p->m * p->k; i++)
      a[i] = (int32_t)(ct_elem_geti(mem + p->a, p->dt_a, bi * p->m * p->k + i) - p->zp_a);
    load_b(p, mem, bi, bt);
    /* acc[i][j] = Σ_k a[i][k] · bt[k][j]: the conv GEMM with w = a, col = bt */
    if (wide)
      gemm_i64(a, bt, p->m, p->k, p->n, acc);
    else
      gemm_i32(a, bt, p->m, p->k, p->n, acc);
    for (int64_t i = 0; i < p->m * p->n; i++)
      epi_int(e, bi * p->m * p->n + i, i % p->n, wide ? ((int64_t *)acc)[i] : ((int32_t *)acc)[i]);
  }
  free(a);
  free(bt);
  free(acc);
  return ok ? CT_OK : CT_ERR_LIMIT;
}

static void matmul_float(const mmp *p, const epi *e, uint8_t *mem) {
  for (int64_t bi = 0; bi < p->batch; bi++) {
    int64_t bb = (p->b_bcast ? 0 : bi) * p->k * p->n;
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        float acc = 0;
        for (int64_t kk = 0; kk < p->k; kk++)
          acc += ct_elem_getf(mem + p->a, p->dt_a, (bi * p->m + i) * p->k + kk) *
                 ct_elem_getf(mem + p->b, p->dt_b, bb + (p->b_trans ? j * p->k + kk : kk * p->n + j));
        epi_float(e, (bi * p->m + i) * p->n + j, j, acc);
      }
  }
}

ct_status ct_sim_exec_matmul(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define X (in->matmul)
  mmp p = {X.batch, X.m, X.k, X.n, X.b_trans, X.b_bcast, X.zp_a, (uint64_t)X.a, (uint64_t)X.b,
           (ct_dtype)X.dt_a, (ct_dtype)X.dt_b};
  epi e = {m->lmem->data, ct_dtype_is_float((ct_dtype)X.dt_a), X.acc_in, X.has_bias, X.rq_mode,
           X.act, X.zp_out, X.act_hi, (uint64_t)X.acc, (uint64_t)X.bias, (uint64_t)X.rq,
           (uint64_t)X.out, (ct_dtype)X.dt_out, CT_I32};
#undef X
  if (e.fp) {
    matmul_float(&p, &e, m->lmem->data);
    return CT_OK;
  }
  if (matmul_int(&p, &e, m->lmem->data))
    return ct_diag_set(d, CT_ERR_LIMIT, "insn %u (matmul): out of memory", index);
  return CT_OK;
}
