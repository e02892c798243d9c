/* exec_vpu.c: functional VPU opcodes (isa.def semantics): ELTWISE with broadcast and
 * per-operand requant (quant/ct_quant_eltwise), LUT, POOL, REQUANT, CAST, REDUCE, and the
 * float EXP / SOFTMAX / NORM (f32 arithmetic, sums in double, stores rounded to nearest even). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel/elem.h"
#include "cmodel/exec.h"
#include "cmodel/exec_kern.h"
#include "quant/float_fn.h"
#include "quant/quant.h"
#include "quant/quant_resize.h"

_Static_assert((int)CT_ISA_CTM_COUNT == (int)CT_QUANT_CTM_COUNT, "isa.def CTM and quant_resize.h drift");

static bool is_int(int64_t dt) { return !ct_dtype_is_float((ct_dtype)dt); }

static ct_status bad(ct_diag *d, uint32_t index, const ct_insn *in, const char *what) {
  return ct_diag_set(d, CT_ERR_INPUT, "insn %u (%s): %s", index, ct_isa_op_name(in->op), what);
}

static float float_op(int64_t op, float a, float b) {
  switch (op) {
    case CT_ISA_ELT_ADD: return a + b;
    case CT_ISA_ELT_SUB: return a - b;
    case CT_ISA_ELT_MUL: return a * b;
    case CT_ISA_ELT_MAX: return a != a || b != b ? NAN : a > b ? a : b; /* NaN wins, as the reference's Max */
    case CT_ISA_ELT_DIV: return a / b;
    default: return a != a || b != b ? NAN : a < b ? a : b;
  }
}

/* One operand row of ELTWISE: n elements from index i (stride 1) or element i repeated
 * (broadcast along w), integers in ri or floats in rf. */
static void elt_row(const uint8_t *p, ct_dtype dt, int64_t i, int64_t n, bool bcast, int32_t *ri, float *rf) {
  if (ri && !bcast) ct_kern_load_i32(p, dt, i, n, 0, ri);
  if (rf && !bcast) ct_kern_load_f32(p, dt, i, n, rf);
  if (!bcast) return;
  if (ri) {
    ct_kern_load_i32(p, dt, i, 1, 0, ri);
    for (int64_t j = 1; j < n; j++) ri[j] = ri[0];
  } else {
    ct_kern_load_f32(p, dt, i, 1, rf);
    for (int64_t j = 1; j < n; j++) rf[j] = rf[0];
  }
}

/* Flat index of (i0, i1, i2, 0) in an operand of dims d (broadcast dims of extent 1). */
static int64_t elt_index(const int64_t d[4], int64_t i0, int64_t i1, int64_t i2) {
  return (((d[0] > 1 ? i0 : 0) * d[1] + (d[1] > 1 ? i1 : 0)) * d[2] + (d[2] > 1 ? i2 : 0)) * d[3];
}

/* ELTWISE by rows along w: the operand rows, then quant/'s ct_quant_eltwise (integers) or
 * the f32 operation and activation (floats) per element. */
static void eltwise_rows(const ct_insn *in, uint8_t *mem, const ct_quant_elt *q, bool ints, const int64_t dim[4],
                         const int64_t da[4], const int64_t db[4], void *ra, void *rb, void *ry) {
#define E (in->eltwise)
  int64_t W = dim[3], o = 0;
  float hi = ct_quant_float_act_hi(E.act_hi, E.zp_out);
  for (int64_t i0 = 0; i0 < dim[0]; i0++)
    for (int64_t i1 = 0; i1 < dim[1]; i1++)
      for (int64_t i2 = 0; i2 < dim[2]; i2++, o += W) {
        elt_row(mem + E.a, (ct_dtype)E.dt_a, elt_index(da, i0, i1, i2), W, da[3] == 1 && W > 1, ints ? ra : NULL,
                ints ? NULL : ra);
        elt_row(mem + E.b, (ct_dtype)E.dt_b, elt_index(db, i0, i1, i2), W, db[3] == 1 && W > 1, ints ? rb : NULL,
                ints ? NULL : rb);
        if (ints) {
          const int32_t *a = ra, *b = rb;
          int32_t *y = ry;
          for (int64_t j = 0; j < W; j++) y[j] = ct_quant_eltwise(q, a[j], b[j]);
          ct_kern_store_i32(mem + E.out, (ct_dtype)E.dt_out, o, W, y);
        } else {
          const float *a = ra, *b = rb;
          float *y = ry;
          for (int64_t j = 0; j < W; j++) y[j] = ct_quant_fn_act(float_op(E.op, a[j], b[j]), (int)E.act, hi);
          ct_kern_store_f32_result(mem + E.out, (ct_dtype)E.dt_out, o, W, y);
        }
      }
#undef E
}

static ct_status exec_eltwise(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define E (in->eltwise)
  uint8_t *mem = m->lmem->data;
  bool ints = is_int(E.dt_a) && is_int(E.dt_b) && is_int(E.dt_out);
  if (!ints && (is_int(E.dt_a) || is_int(E.dt_b) || is_int(E.dt_out)))
    return bad(d, index, in, "mixed integer and float operands");
  ct_quant_elt q = {(ct_quant_elt_op)E.op, (int32_t)E.m_a, (int32_t)E.zp_a, (int32_t)E.m_b,
                    (int32_t)E.zp_b, (int32_t)E.zp_out, (int32_t)E.act_hi, (int)E.s_a, (int)E.s_b,
                    (int)E.s_out, (ct_quant_act)E.act, (ct_dtype)E.dt_out};
  int64_t dim[4] = {E.n, E.c, E.h, E.w}, da[4], db[4];
  for (int i = 0; i < 4; i++) {
    da[i] = (E.bcast_a >> i) & 1 ? 1 : dim[i];
    db[i] = (E.bcast_b >> i) & 1 ? 1 : dim[i];
  }
  size_t row = (size_t)(dim[3] > 0 ? dim[3] : 1) * 4; /* int32 or float */
  void *ra = malloc(row), *rb = malloc(row), *ry = malloc(row);
  bool ok = ra && rb && ry;
  if (ok) eltwise_rows(in, mem, &q, ints, dim, da, db, ra, rb, ry);
  free(ra), free(rb), free(ry);
  return ok ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "insn %u (eltwise): out of memory", index);
#undef E
}

/* An 8-bit LUT (i8 / u8 in and out) through a byte map per table: map[b] = the table entry
 * ct_quant_lut_index gives for the input byte b. False (nothing done) for other types. */
static bool lut8(const ct_insn *in, uint8_t *mem) {
#define L (in->lut)
  bool i8 = L.dt_in == CT_I8;
  if ((!i8 && L.dt_in != CT_U8) || (L.dt_out != CT_I8 && L.dt_out != CT_U8)) return false;
  int64_t plane = L.h * L.w, planes = L.n * L.c;
  if (!L.per_channel) plane *= planes, planes = 1;
  uint8_t map[256];
  for (int64_t pl = 0; pl < planes; pl++) {
    uint64_t tab = L.table + (L.per_channel ? (uint64_t)(pl % L.c) * 256 : 0);
    for (int b = 0; b < 256; b++)
      map[b] = mem[tab + (uint64_t)ct_quant_lut_index(i8 ? (int8_t)b : b, (ct_dtype)L.dt_in)];
    const uint8_t *x = mem + L.in + pl * plane;
    uint8_t *y = mem + L.out + pl * plane;
    for (int64_t i = 0; i < plane; i++) y[i] = map[x[i]];
  }
  return true;
#undef L
}

static ct_status exec_lut(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define L (in->lut)
  (void)index;
  (void)d;
  uint8_t *mem = m->lmem->data;
  int64_t n = L.n * L.c * L.h * L.w, plane = L.h * L.w;
  if (L.dt_in == CT_I16) { /* 16-bit LUT: 257 int16 entries per table, interpolated */
    for (int64_t i = 0; i < n; i++) {
      uint64_t tab = L.table + (L.per_channel ? (uint64_t)((i / plane) % L.c) * CT_ISA_LUT16_BYTES : 0);
      int j, f;
      ct_quant_lut16_index((int32_t)ct_elem_geti(mem + L.in, CT_I16, i), &j, &f);
      int32_t t0 = (int32_t)ct_elem_geti(mem + tab, CT_I16, j), t1 = (int32_t)ct_elem_geti(mem + tab, CT_I16, j + 1);
      ct_elem_seti(mem + L.out, (ct_dtype)L.dt_out, i, ct_quant_lut16_interp(t0, t1, f, (ct_dtype)L.dt_out));
    }
    return CT_OK;
  }
  if (lut8(in, mem)) return CT_OK;
  for (int64_t i = 0; i < n; i++) {
    int idx = ct_quant_lut_index((int32_t)ct_elem_geti(mem + L.in, (ct_dtype)L.dt_in, i), (ct_dtype)L.dt_in);
    uint64_t tab = L.table + (L.per_channel ? (uint64_t)((i / plane) % L.c) * 256 : 0);
    uint8_t t = mem[tab + (uint64_t)idx];
    ct_elem_seti(mem + L.out, (ct_dtype)L.dt_out, i, L.dt_out == CT_I8 ? (int8_t)t : t);
  }
  return CT_OK;
#undef L
}

/* One pooling window: integer r (max − zp_in or Σ (x − zp_in)) or float max / mean. */
static void pool_window(const ct_insn *in, const uint8_t *mem, int64_t plane, int64_t y,
                        int64_t x, int64_t *r, float *f) {
#define P (in->pool)
  bool mx = P.mode == CT_ISA_POOL_MAX, fl = !is_int(P.dt);
  int64_t cnt = 0, acc = 0;
  float facc = 0;
  double dsum = 0; /* float mean: summed in double, as the reference kernels (ops/nn_pool.c) */
  for (int64_t ky = 0; ky < P.kh; ky++)
    for (int64_t kx = 0; kx < P.kw; kx++) {
      int64_t iy = y * P.stride_h - P.pad_t + ky, ix = x * P.stride_w - P.pad_l + kx;
      if (iy < 0 || iy >= P.ih || ix < 0 || ix >= P.iw) continue;
      int64_t i = (plane * P.ih + iy) * P.iw + ix;
      if (fl) {
        float v = ct_elem_getf(mem + P.in, (ct_dtype)P.dt, i);
        if (mx) facc = !cnt ? v : ct_quant_max_step(facc, v);
        else dsum += v;
      } else {
        int64_t v = ct_elem_geti(mem + P.in, (ct_dtype)P.dt, i);
        acc = mx ? (!cnt || v > acc ? v : acc) : acc + v - P.zp_in;
      }
      cnt++;
    }
  if (mx && cnt) acc -= P.zp_in;
  *r = acc;
  /* count_pad: the taps inside the padded extent [-pad_t, ih + pad_b) × [-pad_l, iw + pad_r)
   * (a ceil-mode window past it counts its padded part only: onnxruntime's divisor) */
  int64_t ys = y * P.stride_h - P.pad_t, xs = x * P.stride_w - P.pad_l;
  int64_t ye = ys + P.kh < P.ih + P.pad_b ? ys + P.kh : P.ih + P.pad_b;
  int64_t xe = xs + P.kw < P.iw + P.pad_r ? xs + P.kw : P.iw + P.pad_r;
  int64_t div = P.count_pad ? (ye - ys) * (xe - xs) : cnt;
  *f = mx ? facc : div ? (float)(dsum / (double)div) : 0.0f;
#undef P
}

/* r (max − zp_in or Σ (x − zp_in), 0 for a window wholly in the padding) of output row y
 * of an integer plane held as int32 x. */
static void pool_row_int(const ct_insn *in, const int32_t *x, int64_t y, int64_t *r) {
#define P (in->pool)
  bool mx = P.mode == CT_ISA_POOL_MAX;
  int64_t ys = y * P.stride_h - P.pad_t, ky0 = ys < 0 ? -ys : 0, ky1 = P.ih - ys < P.kh ? P.ih - ys : P.kh;
  for (int64_t ox = 0; ox < P.ow; ox++) {
    int64_t xs = ox * P.stride_w - P.pad_l, kx0 = xs < 0 ? -xs : 0, kx1 = P.iw - xs < P.kw ? P.iw - xs : P.kw;
    if (ky0 >= ky1 || kx0 >= kx1) {
      r[ox] = 0;
      continue;
    }
    int64_t acc = x[(ys + ky0) * P.iw + xs + kx0], cnt = (ky1 - ky0) * (kx1 - kx0);
    if (!mx) acc = 0;
    for (int64_t ky = ky0; ky < ky1; ky++) {
      const int32_t *row = x + (ys + ky) * P.iw + xs;
      if (mx)
        for (int64_t kx = kx0; kx < kx1; kx++) acc = row[kx] > acc ? row[kx] : acc;
      else
        for (int64_t kx = kx0; kx < kx1; kx++) acc += row[kx];
    }
    r[ox] = mx ? acc - P.zp_in : acc - cnt * P.zp_in;
  }
#undef P
}

/* Integer POOL by output rows: the plane as int32, the window results, requant by row. */
static bool pool_int(const ct_insn *in, uint8_t *mem) {
#define P (in->pool)
  int32_t *x = malloc((size_t)(P.ih * P.iw > 0 ? P.ih * P.iw : 1) * sizeof *x);
  int64_t *r = malloc((size_t)(P.ow > 0 ? P.ow : 1) * sizeof *r);
  bool ok = x && r;
  for (int64_t plane = 0; ok && plane < P.n * P.c; plane++) {
    ct_kern_load_i32(mem + P.in, (ct_dtype)P.dt, plane * P.ih * P.iw, P.ih * P.iw, 0, x);
    for (int64_t y = 0; y < P.oh; y++) {
      pool_row_int(in, x, y, r);
      ct_kern_requant_store(mem + P.out, (ct_dtype)P.dt, (plane * P.oh + y) * P.ow, P.ow, r, (int32_t)P.m, (int)P.s,
                            (int32_t)P.zp_out, CT_QUANT_ACT_NONE, 0);
    }
  }
  free(x), free(r);
  return ok;
#undef P
}

static ct_status exec_pool(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define P (in->pool)
  uint8_t *mem = m->lmem->data;
  if (is_int(P.dt)) return pool_int(in, mem) ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "insn %u (pool): out of memory", index);
  int64_t o = 0;
  for (int64_t plane = 0; plane < P.n * P.c; plane++)
    for (int64_t y = 0; y < P.oh; y++)
      for (int64_t x = 0; x < P.ow; x++, o++) {
        int64_t r;
        float f;
        pool_window(in, mem, plane, y, x, &r, &f);
        if (is_int(P.dt))
          ct_elem_seti(mem + P.out, (ct_dtype)P.dt, o,
                       ct_quant_requant_act(r, (int32_t)P.m, (int)P.s, (int32_t)P.zp_out,
                                            CT_QUANT_ACT_NONE, 0, (ct_dtype)P.dt));
        else
          ct_elem_setf_result(mem + P.out, (ct_dtype)P.dt, o, f);
      }
  return CT_OK;
#undef P
}

static ct_status exec_requant(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define R (in->requant)
  uint8_t *mem = m->lmem->data;
  int64_t hw = R.h * R.w, o = 0;
  int64_t *v = malloc((size_t)(hw > 0 ? hw : 1) * sizeof *v);
  if (!v) return ct_diag_set(d, CT_ERR_LIMIT, "insn %u (requant): out of memory", index);
  for (int64_t b = 0; b < R.n; b++)
    for (int64_t c = 0; c < R.c; c++) {
      int32_t mul = (int32_t)R.m;
      int s = (int)R.s;
      if (R.rq_mode == CT_ISA_RQ_CHANNEL) {
        mul = (int32_t)ct_elem_geti(mem + R.rq, CT_I32, 2 * c);
        int64_t sh = ct_elem_geti(mem + R.rq, CT_I32, 2 * c + 1);
        s = sh < 0 ? 0 : sh > 63 ? 63 : (int)sh;
      }
      ct_kern_load_i64(mem + R.in, (ct_dtype)R.dt_in, o, hw, R.zp_in, v);
      ct_kern_requant_store(mem + R.out, (ct_dtype)R.dt_out, o, hw, v, mul, s, (int32_t)R.zp_out, R.act,
                            (int32_t)R.act_hi);
      o += hw;
    }
  free(v);
  return CT_OK;
#undef R
}

static ct_status exec_cast(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define C (in->cast)
  uint8_t *mem = m->lmem->data;
  ct_dtype di = (ct_dtype)C.dt_in, dout = (ct_dtype)C.dt_out;
  bool fi = !is_int(di), fo = !is_int(dout);
  if (fi && !fo && !(C.scale > 0)) return bad(d, index, in, "scale: float->int cast needs scale > 0");
  int64_t n = C.n * C.c * C.h * C.w;
  for (int64_t i = 0; i < n; i++) {
    if (!fi && !fo)
      ct_elem_seti(mem + C.out, dout, i, ct_quant_saturate(ct_elem_geti(mem + C.in, di, i), dout));
    else if (!fi)
      ct_elem_setf(mem + C.out, dout, i,
                   (float)ct_quant_dequantize((int32_t)ct_elem_geti(mem + C.in, di, i), C.scale, (int32_t)C.zp));
    else if (!fo)
      ct_elem_seti(mem + C.out, dout, i,
                   ct_quant_quantize(ct_elem_getf(mem + C.in, di, i), C.scale, (int32_t)C.zp, dout));
    else
      ct_elem_setf(mem + C.out, dout, i, ct_elem_getf(mem + C.in, di, i));
  }
  return CT_OK;
#undef C
}

/* Splits dims (n, c, h, w) around axis into outer × len × inner. */
static void split_axis(const int64_t dim[4], int axis, int64_t *outer, int64_t *len, int64_t *inner) {
  *outer = *inner = 1;
  for (int i = 0; i < axis; i++) *outer *= dim[i];
  *len = dim[axis];
  for (int i = axis + 1; i < 4; i++) *inner *= dim[i];
}

static ct_status exec_reduce(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define R (in->reduce)
  (void)index;
  (void)d;
  uint8_t *mem = m->lmem->data;
  int64_t dim[4] = {R.n, R.c, R.h, R.w}, outer, len, inner;
  split_axis(dim, (int)(R.axis & 3), &outer, &len, &inner);
  bool mx = R.op == CT_ISA_RED_MAX, fl = !is_int(R.dt_in);
  for (int64_t a = 0; a < outer; a++)
    for (int64_t b = 0; b < inner; b++) {
      int64_t r = 0;
      float f = 0;
      for (int64_t k = 0; k < len; k++) {
        int64_t i = (a * len + k) * inner + b;
        if (fl) {
          float v = ct_elem_getf(mem + R.in, (ct_dtype)R.dt_in, i);
          f = !k ? v : mx ? ct_quant_max_step(f, v) : f + v;
        } else {
          int64_t v = ct_elem_geti(mem + R.in, (ct_dtype)R.dt_in, i);
          r = mx ? (!k || v > r ? v : r) : r + v - R.zp_in;
        }
      }
      if (mx && !fl) r -= R.zp_in;
      if (fl)
        ct_elem_setf_result(mem + R.out, (ct_dtype)R.dt_out, a * inner + b, mx ? f : f * R.scale);
      else
        ct_elem_seti(mem + R.out, (ct_dtype)R.dt_out, a * inner + b,
                     ct_quant_requant_act(r, (int32_t)R.m, (int)R.s, (int32_t)R.zp_out,
                                          CT_QUANT_ACT_NONE, 0, (ct_dtype)R.dt_out));
    }
  return CT_OK;
#undef R
}

static ct_status exec_exp(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
  (void)index;
  (void)d;
  uint8_t *mem = m->lmem->data;
  int64_t n = in->exp.n * in->exp.c * in->exp.h * in->exp.w;
  for (int64_t i = 0; i < n; i++)
    ct_elem_setf_result(mem + in->exp.out, (ct_dtype)in->exp.dt_out, i,
                 ct_quant_fn_f32((int)in->exp.func, ct_elem_getf(mem + in->exp.in, (ct_dtype)in->exp.dt_in, i),
                                 (double)in->exp.alpha, (double)in->exp.beta));
  return CT_OK;
}

static ct_status exec_softmax(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define S (in->softmax)
  (void)index;
  (void)d;
  uint8_t *mem = m->lmem->data;
  int64_t dim[4] = {S.n, S.c, S.h, S.w}, outer, len, inner;
  split_axis(dim, (int)(S.axis & 3), &outer, &len, &inner);
  for (int64_t a = 0; a < outer; a++)
    for (int64_t b = 0; b < inner; b++) {
      float mx = -INFINITY;
      for (int64_t k = 0; k < len; k++) {
        float v = ct_elem_getf(mem + S.in, (ct_dtype)S.dt_in, (a * len + k) * inner + b);
        if (v > mx) mx = v;
      }
      double sum = 0; /* in double, as the reference's softmax (ops/math_softmax.c) */
      for (int64_t k = 0; k < len; k++)
        sum += exp((double)ct_elem_getf(mem + S.in, (ct_dtype)S.dt_in, (a * len + k) * inner + b) - mx);
      for (int64_t k = 0; k < len; k++) {
        int64_t i = (a * len + k) * inner + b;
        double e = exp((double)ct_elem_getf(mem + S.in, (ct_dtype)S.dt_in, i) - mx);
        ct_elem_setf_result(mem + S.out, (ct_dtype)S.dt_out, i, (float)(e / sum));
      }
    }
  return CT_OK;
#undef S
}

static ct_status exec_norm(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define N (in->norm)
  (void)index;
  (void)d;
  uint8_t *mem = m->lmem->data;
  int64_t dim[4] = {N.n, N.c, N.h, N.w}, outer = 1, S = 1;
  for (int i = 0; i < 4; i++) *(i < (int)(N.axis & 3) ? &outer : &S) *= dim[i];
  for (int64_t a = 0; a < outer; a++) { /* in double, as the reference's norm_row (ops/nn_norm.c) */
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < S; j++) {
      double v = ct_elem_getf(mem + N.in, (ct_dtype)N.dt_in, a * S + j);
      s1 += v;
      s2 += v * v;
    }
    double mean = N.mode == CT_ISA_NORM_LAYER ? s1 / (double)S : 0, q = 0;
    for (int64_t j = 0; N.mode == CT_ISA_NORM_LAYER && j < S; j++) {
      double v = ct_elem_getf(mem + N.in, (ct_dtype)N.dt_in, a * S + j) - mean;
      q += v * v;
    }
    double is = 1.0 / sqrt((N.mode == CT_ISA_NORM_LAYER ? q : s2) / (double)S + (double)N.eps);
    for (int64_t j = 0; j < S; j++) {
      double y = (ct_elem_getf(mem + N.in, (ct_dtype)N.dt_in, a * S + j) - mean) * is;
      if (N.affine) y = y * ct_elem_getf(mem + N.gamma, CT_F32, j) + ct_elem_getf(mem + N.beta, CT_F32, j);
      ct_elem_setf_result(mem + N.out, (ct_dtype)N.dt_out, a * S + j, (float)y);
    }
  }
  return CT_OK;
#undef N
}

/* RESIZE: taps of every output row (whole-tensor index oh0 + r, read at row i − ih0 of the
 * input held) and column through quant/quant_resize.h, which the Tpu reference also uses. */
static ct_status exec_resize(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
#define R (in->resize)
  uint8_t *mem = m->lmem->data;
  ct_quant_lin_tap *t = malloc(sizeof *t * (size_t)(R.oh + R.ow));
  if (!t) return ct_diag_set(d, CT_ERR_LIMIT, "insn %u (resize): out of memory", index);
  for (int64_t r = 0; r < R.oh; r++) {
    ct_quant_resize_tap((ct_quant_ctm)R.ctm, R.full_ih, R.full_oh, R.scale_h, R.oh0 + r, &t[r]);
    t[r].i0 -= R.ih0, t[r].i1 -= R.ih0;
    if (t[r].i0 < 0 || t[r].i1 >= R.ih) {
      free(t);
      return bad(d, index, in, "an output row reads an input row outside the rows held");
    }
  }
  for (int64_t q = 0; q < R.ow; q++) ct_quant_resize_tap((ct_quant_ctm)R.ctm, R.iw, R.ow, R.scale_w, q, &t[R.oh + q]);
  bool fl = !is_int(R.dt_in);
  int64_t o = 0;
  for (int64_t pl = 0; pl < R.n * R.c; pl++)
    for (int64_t r = 0; r < R.oh; r++)
      for (int64_t q = 0; q < R.ow; q++, o++) {
        const ct_quant_lin_tap *h = &t[r], *w = &t[R.oh + q];
        int64_t b = pl * R.ih, k[4] = {(b + h->i0) * R.iw + w->i0, (b + h->i0) * R.iw + w->i1,
                                       (b + h->i1) * R.iw + w->i0, (b + h->i1) * R.iw + w->i1};
        if (fl) {
          float v[4];
          for (int j = 0; j < 4; j++) v[j] = ct_elem_getf(mem + R.in, (ct_dtype)R.dt_in, k[j]);
          ct_elem_setf(mem + R.out, (ct_dtype)R.dt_out, o, ct_quant_resize_lin_f(v, h, w));
        } else {
          int64_t v[4];
          for (int j = 0; j < 4; j++) v[j] = ct_elem_geti(mem + R.in, (ct_dtype)R.dt_in, k[j]);
          ct_elem_seti(mem + R.out, (ct_dtype)R.dt_out, o, ct_quant_resize_lin_q(v, h, w, (int32_t)R.zp, (ct_dtype)R.dt_out));
        }
      }
  free(t);
  return CT_OK;
#undef R
}

typedef ct_status (*exec_fn)(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d);

static ct_status exec_nothing(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
  (void)m, (void)in, (void)index, (void)d;
  return CT_OK;
}

ct_status ct_sim_exec(ct_sim_mem *m, const ct_insn *in, uint32_t index, ct_diag *d) {
  static const exec_fn fns[CT_ISA_OP_COUNT] = {
      [CT_ISA_NOP] = exec_nothing,          [CT_ISA_SYNC] = exec_nothing,
      [CT_ISA_END] = exec_nothing,          [CT_ISA_LOAD] = ct_sim_exec_dma,
      [CT_ISA_STORE] = ct_sim_exec_dma,     [CT_ISA_MOVE] = ct_sim_exec_dma,
      [CT_ISA_CONV] = ct_sim_exec_conv,     [CT_ISA_MATMUL] = ct_sim_exec_matmul,
      [CT_ISA_DWCONV] = ct_sim_exec_conv,   [CT_ISA_ELTWISE] = exec_eltwise,
      [CT_ISA_LUT] = exec_lut,              [CT_ISA_POOL] = exec_pool,
      [CT_ISA_REQUANT] = exec_requant,      [CT_ISA_CAST] = exec_cast,
      [CT_ISA_REDUCE] = exec_reduce,        [CT_ISA_EXP] = exec_exp,
      [CT_ISA_SOFTMAX] = exec_softmax,      [CT_ISA_NORM] = exec_norm,
      [CT_ISA_RESIZE] = exec_resize,
  };
  if ((unsigned)in->op >= CT_ISA_OP_COUNT || !fns[in->op])
    return ct_diag_set(d, CT_ERR_INPUT, "insn %u: illegal opcode %d", index, (int)in->op);
  return fns[in->op](m, in, index, d);
}
