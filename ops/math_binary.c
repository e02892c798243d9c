/* math_binary.c: ONNX math/logical family, broadcasting ops: shape functions and float kernels
 * of Add, Sub, Mul, Div, Pow, Mod, BitShift, And, Or, Xor, Equal, Less, Greater, LessOrEqual,
 * GreaterOrEqual, PRelu, Max, Min, Sum, Mean (variadic) and Where, with numpy broadcasting
 * (ops/broadcast.h). Semantics: ONNX operator spec; integer arithmetic wraps modulo 2^64 then
 * to the storage type (C conversion), int x/0 and x%0 = 0. */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "ops/broadcast.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/nn_util.h"
#include "ops/shape_util.h"
#include "common/clones.h"

typedef float (*bf32)(float, float);
typedef double (*bf64)(double, double);
typedef int64_t (*bi64)(int64_t, int64_t);

static uint64_t U(int64_t v) { return (uint64_t)v; }
static int64_t ipow(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
  uint64_t r = 1, x = U(b);
  for (; e; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return (int64_t)r;
}
static int64_t idiv(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? (int64_t)(0 - U(a)) : a / b; }
static int64_t imod_c(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
static int64_t imod_py(int64_t a, int64_t b) {
  int64_t r = imod_c(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
static double fmod_py(double a, double b) {
  double r = fmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
static double dmax(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double dmin(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

#define B3(name, fexpr, dexpr, iexpr)                                            \
  static float f_##name(float a, float b) { return (fexpr); }                   \
  static double d_##name(double a, double b) { return (dexpr); }                \
  static int64_t i_##name(int64_t a, int64_t b) { return (iexpr); }
B3(add, a + b, a + b, (int64_t)(U(a) + U(b)))
B3(sub, a - b, a - b, (int64_t)(U(a) - U(b)))
B3(mul, a * b, a * b, (int64_t)(U(a) * U(b)))
B3(div, a / b, a / b, idiv(a, b))
B3(pow, powf(a, b), pow(a, b), ipow(a, b))
B3(modc, fmodf(a, b), fmod(a, b), imod_c(a, b))
B3(modpy, (float)fmod_py(a, b), fmod_py(a, b), imod_py(a, b))
B3(max, (float)dmax(a, b), dmax(a, b), a > b ? a : b)
B3(min, (float)dmin(a, b), dmin(a, b), a < b ? a : b)
B3(prelu, a < 0 ? a * b : a, a < 0 ? a * b : a, a < 0 ? (int64_t)(U(a) * U(b)) : a)
B3(eq, a == b, a == b, a == b)
B3(lt, a < b, a < b, a < b)
B3(gt, a > b, a > b, a > b)
B3(le, a <= b, a <= b, a <= b)
B3(ge, a >= b, a >= b, a >= b)
B3(and, (a != 0) & (b != 0), (a != 0) & (b != 0), (a != 0) & (b != 0))
B3(or, (a != 0) | (b != 0), (a != 0) | (b != 0), (a != 0) | (b != 0))
B3(xor, (a != 0) ^ (b != 0), (a != 0) ^ (b != 0), (a != 0) ^ (b != 0))
B3(shl, a * 0 + b * 0, a * 0 + b * 0, b < 0 || b >= 64 ? 0 : (int64_t)(U(a) << b))
B3(shr, a * 0 + b * 0, a * 0 + b * 0, b < 0 || b >= 64 ? 0 : (int64_t)(U(a) >> b))
#undef B3

/* y[i] = a[i * sa] OP b[i * sb] for i < n, y apart from a and b. */
typedef void (*brow32)(const float *a, int64_t sa, const float *b, int64_t sb, float *y, int64_t n);

/* Runs `body` (an assignment to y[i]) for i < n, in blocks of 8 so that GCC's -O2
 * (very-cheap cost model) vectorizes it. */
#define BIN_LOOP(body)                                          \
  do {                                                          \
    int64_t m = n - n % 8, i, k;                                \
    for (k = 0; k < m; k += 8)                                  \
      for (i = k; i < k + 8; i++) body;                         \
    for (i = m; i < n; i++) body;                               \
  } while (0)
/* Row loop of one f32 arithmetic op: same-shape, scalar-b (per-channel rows), scalar-a and
 * general strides. */
#define BIN_ROW(name, OP)                                                                      \
  CT_CLONES_AVX2 static void r_##name(const float *restrict a, int64_t sa, const float *restrict b, \
                                  int64_t sb, float *restrict y, int64_t n) {                  \
    if (sa == 1 && sb == 1) BIN_LOOP(y[i] = a[i] OP b[i]);                                     \
    else if (sa == 1 && sb == 0) {                                                             \
      const float c = b[0];                                                                    \
      BIN_LOOP(y[i] = a[i] OP c);                                                              \
    } else if (sa == 0 && sb == 1) {                                                           \
      const float c = a[0];                                                                    \
      BIN_LOOP(y[i] = c OP b[i]);                                                              \
    } else {                                                                                   \
      for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] OP b[i * sb];                           \
    }                                                                                          \
  }
BIN_ROW(add, +)
BIN_ROW(sub, -)
BIN_ROW(mul, *)
BIN_ROW(div, /)
#undef BIN_ROW
#undef BIN_LOOP

/* The f32 row loop of op kind k (same results as its bf32), or NULL. */
static brow32 bin_row_of(ct_op_kind k) {
  static const struct {
    ct_op_kind kind;
    brow32 row;
  } rows[] = {{CT_OP_ADD, r_add}, {CT_OP_SUB, r_sub}, {CT_OP_MUL, r_mul}, {CT_OP_DIV, r_div}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == k) return rows[i].row;
  return NULL;
}

typedef struct bin_entry {
  ct_op_kind kind;
  const char *variant; /* NULL, or "fmod"/"LEFT"/"RIGHT" selecting by attribute */
  bf32 f;
  bf64 dd;
  bi64 ii;
} bin_entry;

static const bin_entry bin_table[] = {
    {CT_OP_ADD, NULL, f_add, d_add, i_add}, {CT_OP_SUB, NULL, f_sub, d_sub, i_sub},
    {CT_OP_MUL, NULL, f_mul, d_mul, i_mul}, {CT_OP_DIV, NULL, f_div, d_div, i_div},
    {CT_OP_POW, NULL, f_pow, d_pow, i_pow}, {CT_OP_MOD, "fmod", f_modc, d_modc, i_modc},
    {CT_OP_MOD, NULL, f_modpy, d_modpy, i_modpy}, {CT_OP_MAX, NULL, f_max, d_max, i_max},
    {CT_OP_MIN, NULL, f_min, d_min, i_min}, {CT_OP_SUM, NULL, f_add, d_add, i_add},
    {CT_OP_MEAN, NULL, f_add, d_add, i_add}, {CT_OP_PRELU, NULL, f_prelu, d_prelu, i_prelu},
    {CT_OP_EQUAL, NULL, f_eq, d_eq, i_eq}, {CT_OP_LESS, NULL, f_lt, d_lt, i_lt},
    {CT_OP_GREATER, NULL, f_gt, d_gt, i_gt}, {CT_OP_LESSOREQUAL, NULL, f_le, d_le, i_le},
    {CT_OP_GREATEROREQUAL, NULL, f_ge, d_ge, i_ge}, {CT_OP_AND, NULL, f_and, d_and, i_and},
    {CT_OP_OR, NULL, f_or, d_or, i_or}, {CT_OP_XOR, NULL, f_xor, d_xor, i_xor},
    {CT_OP_BITSHIFT, "LEFT", f_shl, d_shl, i_shl}, {CT_OP_BITSHIFT, NULL, f_shr, d_shr, i_shr},
};

/* The entry of op: variants are chosen by Mod's fmod = 1 or BitShift's direction. */
static const bin_entry *bin_lookup(const ct_op *op) {
  bool fm = ct_attr_mod_fmod(op) != 0;
  bool left = strcmp(ct_attr_bitshift_direction(op), "LEFT") == 0;
  for (size_t i = 0; i < sizeof bin_table / sizeof bin_table[0]; i++) {
    const bin_entry *e = &bin_table[i];
    if (e->kind != op->kind) continue;
    if (e->variant && !((e->variant[0] == 'f' && fm) || (e->variant[0] == 'L' && left))) continue;
    return e;
  }
  return NULL;
}

/* The f32 row path of bin_apply on the threads: rows [lo, hi) of the iterator (each from its
 * own seek), or, for an output of one row, chunks of BIN_CHUNK elements of it. Every element
 * is computed alone: the same results for any split. */
#define BIN_CHUNK 16384
typedef struct bin_job {
  brow32 row;
  const ct_bcast_iter *it;
  const float *a, *b;
  float *y;
  int64_t rows;
} bin_job;

static void bin_rows(void *arg, int64_t lo, int64_t hi, int slot) {
  (void)slot;
  const bin_job *j = arg;
  ct_bcast_iter it = *j->it;
  int64_t inner = it.inner, sa = it.istride[0], sb = it.istride[1];
  if (j->rows == 1) {
    for (int64_t t = lo; t < hi; t++) {
      int64_t e = t * BIN_CHUNK, n = inner - e < BIN_CHUNK ? inner - e : BIN_CHUNK;
      j->row(j->a + it.off[0] + e * sa, sa, j->b + it.off[1] + e * sb, sb, j->y + e, n);
    }
    return;
  }
  ct_bcast_iter_seek(&it, lo);
  for (int64_t r = lo; r < hi; r++, ct_bcast_iter_next(&it))
    j->row(j->a + it.off[0], sa, j->b + it.off[1], sb, j->y + r * inner, inner);
}

/* y = f(a, b) with broadcasting; a or b may alias y when it has y's full shape. The f32
 * arithmetic rows run on ctx's threads. */
static ct_status bin_apply(const ct_op *op, const bin_entry *e, const ct_tensor *a, const ct_tensor *b,
                           ct_tensor *y, const ct_kernel_ctx *ctx, ct_diag *d) {
  ct_bcast_iter it;
  int nd[2] = {a->ndim, b->ndim};
  const int64_t *sh[2] = {a->shape, b->shape};
  if (!ct_bcast_iter_init(&it, y->ndim, y->shape, 2, nd, sh)) {
    if (ct_tensor_numel(y) == 0) return CT_OK;
    return ct_ops_err(d, CT_ERR_INPUT, op, "operand shapes do not broadcast to the output");
  }
  bool fl = ct_dtype_is_float(a->dtype) || ct_dtype_is_float(b->dtype);
  bool fast = a->dtype == CT_F32 && b->dtype == CT_F32 && y->dtype == CT_F32;
  brow32 row = fast && y->data != a->data && y->data != b->data ? bin_row_of(op->kind) : NULL;
  if (row) {
    int64_t total = ct_tensor_numel(y), rows = total / it.inner;
    bin_job j = {row, &it, a->data, b->data, y->data, rows};
    int64_t tasks = rows == 1 ? (it.inner + BIN_CHUNK - 1) / BIN_CHUNK : rows;
    ct_nn_parallel(ctx, tasks, CT_NN_STREAM_WORK(total), bin_rows, &j);
    return CT_OK;
  }
  int64_t o = 0;
  do {
    int64_t ia = it.off[0], ib = it.off[1], sa = it.istride[0], sb = it.istride[1];
    if (fast) {
      const float *pa = a->data, *pb = b->data;
      float *py = y->data;
      for (int64_t j = 0; j < it.inner; j++) py[o + j] = e->f(pa[ia + j * sa], pb[ib + j * sb]);
    } else if (fl) {
      for (int64_t j = 0; j < it.inner; j++) {
        double v = e->dd(ct_tensor_get_f64(a, ia + j * sa), ct_tensor_get_f64(b, ib + j * sb));
        if (ct_ops_is_int(y->dtype)) ct_ops_set_i64(y, o + j, ct_ops_trunc_i64(v));
        else ct_tensor_set_f64(y, o + j, v);
      }
    } else {
      for (int64_t j = 0; j < it.inner; j++)
        ct_ops_set_i64(y, o + j, e->ii(ct_ops_get_i64(a, ia + j * sa), ct_ops_get_i64(b, ib + j * sb)));
    }
    o += it.inner;
  } while (ct_bcast_iter_next(&it));
  return CT_OK;
}

/* Binary ops (Add..Mod, Pow, comparisons, logical, BitShift, PRelu) with broadcasting. */
ct_status ct_kern_binary(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  const bin_entry *e = bin_lookup(op);
  if (!e) return ct_ops_err(d, CT_ERR_INTERNAL, op, "no binary function");
  if (!in[0] || !in[1]) return ct_ops_err(d, CT_ERR_INPUT, op, "missing operand");
  return bin_apply(op, e, in[0], in[1], out[0], ctx, d);
}

/* Max/Min/Sum/Mean-13: folds the inputs left to right into the output (broadcast copy of
 * input 0 first); Mean divides by the input count at the end. */
ct_status ct_kern_variadic(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                           ct_diag *d) {
  const bin_entry *e = bin_lookup(op);
  ct_tensor *y = out[0];
  if (!e) return ct_ops_err(d, CT_ERR_INTERNAL, op, "no variadic function");
  ct_status st = ct_ops_bcast_copy(op, in[0], y, d);
  for (int k = 1; k < op->n_in && !st; k++) {
    if (!in[k]) return ct_ops_err(d, CT_ERR_INPUT, op, "input %d is missing", k);
    st = bin_apply(op, e, y, in[k], y, ctx, d);
  }
  if (st || op->kind != CT_OP_MEAN || op->n_in == 1) return st;
  int64_t n = ct_tensor_numel(y);
  for (int64_t i = 0; i < n; i++) {
    if (ct_dtype_is_float(y->dtype)) ct_tensor_set_f64(y, i, ct_tensor_get_f64(y, i) / op->n_in);
    else ct_ops_set_i64(y, i, ct_ops_get_i64(y, i) / op->n_in);
  }
  return CT_OK;
}

/* Where-16: y = cond ? x : z with three-way broadcasting; any dtype (byte copies). */
ct_status ct_kern_where(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                        ct_diag *d) {
  (void)ctx;
  const ct_tensor *c = in[0], *x = in[1], *z = in[2];
  ct_tensor *y = out[0];
  ct_bcast_iter it;
  int nd[3] = {c->ndim, x->ndim, z->ndim};
  const int64_t *sh[3] = {c->shape, x->shape, z->shape};
  if (!ct_bcast_iter_init(&it, y->ndim, y->shape, 3, nd, sh)) {
    if (ct_tensor_numel(y) == 0) return CT_OK;
    return ct_ops_err(d, CT_ERR_INPUT, op, "operand shapes do not broadcast to the output");
  }
  size_t es = ct_dtype_size(y->dtype);
  const uint8_t *pc = c->data;
  const char *px = x->data, *pz = z->data;
  char *py = y->data;
  int64_t o = 0;
  do {
    for (int64_t j = 0; j < it.inner; j++, o++) {
      bool t = pc[it.off[0] + j * it.istride[0]] != 0;
      const char *src = t ? px + (size_t)(it.off[1] + j * it.istride[1]) * es
                          : pz + (size_t)(it.off[2] + j * it.istride[2]) * es;
      memcpy(py + (size_t)o * es, src, es);
    }
  } while (ct_bcast_iter_next(&it));
  return CT_OK;
}

/* ---- shape functions ---- */

/* Broadcast of inputs [0, n) (NULL inputs skipped) into nd/shape; checks equal dtypes of
 * inputs [first_same, n) when same_dtype. */
static ct_status bcast_inputs(const ct_op *op, int first, int n, bool same_dtype, int *nd,
                              int64_t *shape, ct_diag *d) {
  ct_value *v = NULL;
  ct_status st = ct_sm_in(op, first, &v, d);
  if (st) return st;
  *nd = v->ndim;
  for (int i = 0; i < v->ndim; i++) shape[i] = v->shape[i];
  for (int k = first + 1; k < n; k++) {
    ct_value *w = NULL;
    if ((st = ct_sm_in(op, k, &w, d))) return st;
    char b1[96], b2[96];
    if (same_dtype && w->dtype != v->dtype)
      return ct_ops_err(d, CT_ERR_INPUT, op, "input %d dtype %s differs from input %d dtype %s", k,
                       ct_dtype_name(w->dtype), first, ct_dtype_name(v->dtype));
    int64_t tmp[CT_MAX_DIMS];
    int tn;
    if (!ct_bcast_shape(*nd, shape, w->ndim, w->shape, &tn, tmp))
      return ct_ops_err(d, CT_ERR_INPUT, op, "shapes %s and %s do not broadcast (input %d)",
                       ct_shape_str(*nd, shape, b1, sizeof b1), ct_sm_shape(w, b2, sizeof b2), k);
    *nd = tn;
    for (int i = 0; i < tn; i++) shape[i] = tmp[i];
  }
  return CT_OK;
}

/* Arithmetic binary and variadic ops: broadcast shape, dtype of input 0 (Pow: exponent may
 * have another type). */
ct_status ct_shape_bcast(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd;
  int64_t shape[CT_MAX_DIMS];
  ct_status st = bcast_inputs(op, 0, op->n_in, op->kind != CT_OP_POW, &nd, shape, d);
  if (st) return st;
  ct_sm_out(op, 0, op->in[0]->dtype, nd, shape);
  return CT_OK;
}

/* Comparisons and logical ops: broadcast shape, bool output. */
ct_status ct_shape_compare(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd;
  int64_t shape[CT_MAX_DIMS];
  ct_status st = bcast_inputs(op, 0, op->n_in, true, &nd, shape, d);
  if (st) return st;
  ct_sm_out(op, 0, CT_BOOL, nd, shape);
  return CT_OK;
}

/* Where: cond bool, X and Y of one dtype; three-way broadcast. */
ct_status ct_shape_where(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd, nd2;
  int64_t shape[CT_MAX_DIMS], s2[CT_MAX_DIMS], out[CT_MAX_DIMS];
  ct_status st = bcast_inputs(op, 1, 3, true, &nd, shape, d);
  if (st || (st = bcast_inputs(op, 0, 1, false, &nd2, s2, d))) return st;
  if (op->in[0]->dtype != CT_BOOL)
    return ct_ops_err(d, CT_ERR_INPUT, op, "condition must be bool, got %s", ct_dtype_name(op->in[0]->dtype));
  int no;
  char b1[96], b2[96];
  if (!ct_bcast_shape(nd2, s2, nd, shape, &no, out))
    return ct_ops_err(d, CT_ERR_INPUT, op, "condition shape %s does not broadcast with %s",
                     ct_shape_str(nd2, s2, b1, sizeof b1), ct_shape_str(nd, shape, b2, sizeof b2));
  ct_sm_out(op, 0, op->in[1]->dtype, no, out);
  return CT_OK;
}

/* PRelu: slope unidirectionally broadcastable to X; output like X. */
ct_status ct_shape_prelu(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  ct_value *x = NULL, *s = NULL;
  ct_status st = ct_sm_in(op, 0, &x, d);
  if (st || (st = ct_sm_in(op, 1, &s, d))) return st;
  char b1[96], b2[96];
  if (!ct_bcast_to(s->ndim, s->shape, x->ndim, x->shape))
    return ct_ops_err(d, CT_ERR_INPUT, op, "slope shape %s does not broadcast to input shape %s",
                     ct_sm_shape(s, b1, sizeof b1), ct_sm_shape(x, b2, sizeof b2));
  if (s->dtype != x->dtype)
    return ct_ops_err(d, CT_ERR_INPUT, op, "slope dtype %s differs from input dtype %s",
                     ct_dtype_name(s->dtype), ct_dtype_name(x->dtype));
  ct_sm_out(op, 0, x->dtype, x->ndim, x->shape);
  return CT_OK;
}
