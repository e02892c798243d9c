/* lg_layers.c: the planner's view of a graph — layers (ops that compute at run time), their
 * tiling traits (which axes a tile may cut, halos of windows along H, which engine computes),
 * producers and consumers. The traits follow TPU-MLIR's LayerGroup: conv/pool/eltwise slice
 * along N and H; ops that need a whole axis get a group of their own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/backend/lg_int.h"
#include "ops/tpu_util.h"

/* Ops that map output row r along H to input rows r (and C to C): activations, binary ops,
 * per-channel affine, casts. */
static const ct_op_kind eltwise_ops[] = {
    CT_OP_ABS, CT_OP_ACOS, CT_OP_ACOSH, CT_OP_ASIN, CT_OP_ASINH, CT_OP_ATAN, CT_OP_ATANH, CT_OP_CEIL, CT_OP_COS,
    CT_OP_COSH, CT_OP_ERF, CT_OP_EXP, CT_OP_FLOOR, CT_OP_ISINF, CT_OP_ISNAN, CT_OP_LOG, CT_OP_NEG, CT_OP_NOT,
    CT_OP_RECIPROCAL, CT_OP_RELU, CT_OP_ROUND, CT_OP_SIGMOID, CT_OP_SIGN, CT_OP_SIN, CT_OP_SINH, CT_OP_SOFTPLUS,
    CT_OP_SOFTSIGN, CT_OP_SQRT, CT_OP_TAN, CT_OP_TANH, CT_OP_ELU, CT_OP_SELU, CT_OP_CELU, CT_OP_LEAKYRELU,
    CT_OP_THRESHOLDEDRELU, CT_OP_HARDSIGMOID, CT_OP_HARDSWISH, CT_OP_SHRINK, CT_OP_MISH, CT_OP_GELU, CT_OP_SILU,
    CT_OP_CLIP, CT_OP_ADD, CT_OP_SUB, CT_OP_MUL, CT_OP_DIV, CT_OP_POW, CT_OP_MOD, CT_OP_MAX, CT_OP_MIN,
    CT_OP_SUM, CT_OP_MEAN, CT_OP_EQUAL, CT_OP_LESS, CT_OP_GREATER, CT_OP_LESSOREQUAL, CT_OP_GREATEROREQUAL,
    CT_OP_AND, CT_OP_OR, CT_OP_XOR, CT_OP_BITSHIFT, CT_OP_PRELU, CT_OP_WHERE, CT_OP_BATCHNORM, CT_OP_CAST,
    CT_OP_CASTLIKE, CT_OP_QUANTIZELINEAR, CT_OP_DEQUANTIZELINEAR, CT_OP_LRN, CT_OP_CONCAT,
    CT_OP_REQUANT, CT_OP_LUT /* Tpu dialect */};

static const ct_op_kind alias_ops[] = {CT_OP_RESHAPE, CT_OP_FLATTEN, CT_OP_SQUEEZE, CT_OP_UNSQUEEZE,
                                       CT_OP_IDENTITY, CT_OP_DROPOUT};

/* Ops that run on the MXU (GEMM-shaped). */
static const ct_op_kind mxu_ops[] = {CT_OP_CONV, CT_OP_CONVTRANSPOSE, CT_OP_GEMM, CT_OP_MATMUL, CT_OP_QLINEARCONV,
                                     CT_OP_QLINEARMATMUL, CT_OP_CONVINTEGER, CT_OP_MATMULINTEGER};

/* Ops whose `axis` attribute names an axis they need whole. */
static const ct_op_kind axis_ops[] = {CT_OP_SOFTMAX, CT_OP_LOGSOFTMAX, CT_OP_HARDMAX, CT_OP_CONCAT, CT_OP_SPLIT,
                                      CT_OP_GATHER, CT_OP_GATHERELEMENTS, CT_OP_SCATTERELEMENTS, CT_OP_CUMSUM,
                                      CT_OP_TOPK, CT_OP_ARGMAX, CT_OP_ARGMIN, CT_OP_FLATTEN, CT_OP_COMPRESS};

/* Ops that mix or reorder axes in ways the generic rule cannot see: no slicing at all. */
static const ct_op_kind unsliceable_ops[] = {
    CT_OP_EINSUM, CT_OP_LSTM, CT_OP_GRU, CT_OP_RNN, CT_OP_NONZERO, CT_OP_NONMAXSUPPRESSION, CT_OP_DET,
    CT_OP_DEPTHTOSPACE, CT_OP_SPACETODEPTH, CT_OP_GATHERND, CT_OP_SCATTERND, CT_OP_REVERSESEQUENCE,
    CT_OP_RESHAPE, CT_OP_ROIALIGN, CT_OP_GRIDSAMPLE, CT_OP_MAXUNPOOL, CT_OP_NEGATIVELOGLIKELIHOODLOSS,
    CT_OP_SOFTMAXCROSSENTROPYLOSS, CT_OP_TRILU, CT_OP_EYELIKE, CT_OP_ONEHOT, CT_OP_RANGE, CT_OP_SHAPE,
    CT_OP_SIZE, CT_OP_CONSTANTOFSHAPE, CT_OP_HANNWINDOW, CT_OP_HAMMINGWINDOW, CT_OP_BLACKMANWINDOW};

static bool in_list(ct_op_kind k, const ct_op_kind *l, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (l[i] == k) return true;
  return false;
}
#define IN(k, l) in_list(k, l, sizeof l / sizeof l[0])

int64_t ct_lg_numel(const ct_value *v) {
  int64_t n = 1;
  for (int i = 0; i < v->ndim; i++) n *= v->shape[i];
  return n;
}

int64_t ct_lg_elem_bytes(const ct_lg_options *o, const ct_value *v) {
  if (o && o->assume_bytes > 0) return o->assume_bytes;
  return (int64_t)ct_dtype_size(v->dtype);
}

bool ct_lg_is_weight(const ct_value *v) {
  if (ct_value_is_const(v)) return true;
  const ct_op *op = v->def;
  if (!op || op->kind != CT_OP_DEQUANTIZELINEAR) return false;
  for (int i = 0; i < op->n_in; i++)
    if (op->in[i] && !ct_value_is_const(op->in[i])) return false;
  return true;
}

static bool is_depthwise(const ct_op *op) {
  int64_t grp = ct_attr_conv_group(op);
  return op->kind == CT_OP_CONV && grp > 1 && op->in[0]->ndim == 4 && grp == op->in[0]->shape[1];
}

bool ct_lg_window2(const ct_op *op, lg_win2 *w) {
  int64_t k[CT_ATTR_LIST_MAX], s[CT_ATTR_LIST_MAX], dl[CT_ATTR_LIST_MAX], p[CT_ATTR_LIST_MAX];
  int nk = 0, ns = 0, nd = 0, np = 0;
  *w = (lg_win2){{0, 0}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false};
  if (!op->n_in || !op->in[0] || op->in[0]->ndim != 4) return false;
  bool has_k = ct_attr_window_kernel_shape_n(op, k, &nk);
  if (!ct_attr_window_strides_n(op, s, &ns) || !ct_attr_window_dilations_n(op, dl, &nd) || !ct_attr_window_pads_n(op, p, &np) ||
      (!has_k && ct_attr_has_window_kernel_shape(op)))
    return false; /* another count than the schema's (the verifier refuses it) */
  for (int i = 0; i < 2; i++) w->k[i] = has_k ? k[i] : 0, w->s[i] = s[i], w->d[i] = dl[i];
  for (int i = 0; i < 4; i++) w->p[i] = p[i];
  w->has_k = has_k;
  return true;
}

/* Window along H (input axis 2) of a Conv/pool with 4-D input: the H entries of its window
 * attributes (kernel from the weight when absent). */
static void window_h(const ct_op *op, ct_lg_layer *l) {
  lg_win2 w;
  ct_lg_window2(op, &w);
  bool conv = op->kind == CT_OP_CONV || op->kind == CT_OP_CONVTRANSPOSE;
  l->kh = w.has_k ? w.k[0] : (conv && op->in[1]->ndim == 4 ? op->in[1]->shape[2] : 1);
  l->sh = w.s[0], l->dh = w.d[0], l->pad_top = w.p[0];
}

bool ct_lg_slice_axis(const ct_op *op, int a, int64_t *start, int64_t *step) {
  *start = 0, *step = 1;
  const ct_value *in = op->in[0];
  if (op->kind != CT_OP_SLICE || a < 0 || a >= in->ndim) return false;
  for (int i = 1; i < op->n_in && i <= 4; i++)
    if (op->in[i] && !ct_value_is_const(op->in[i])) return false;
  const ct_tensor *st = op->in[1]->data, *ax = op->n_in > 3 && op->in[3] ? op->in[3]->data : NULL;
  const ct_tensor *sp = op->n_in > 4 && op->in[4] ? op->in[4]->data : NULL;
  for (int64_t i = 0; i < ct_tensor_numel(st); i++) {
    int64_t axis = ax ? (int64_t)ct_tensor_get_f64(ax, i) : i;
    if (axis < 0) axis += in->ndim;
    if (axis != a) continue;
    int64_t s0 = (int64_t)ct_tensor_get_f64(st, i), dim = in->shape[a];
    *step = sp ? (int64_t)ct_tensor_get_f64(sp, i) : 1;
    if (s0 < 0) s0 += dim;
    *start = s0 < 0 ? 0 : s0 > dim ? dim : s0;
  }
  return *step > 0;
}

/* The axis of an op of axis_ops: its attribute set's `axis` (the table's default when
 * absent); CumSum's axis is an operand: 0 here, as for a Compress without one. */
static int64_t op_axis(const ct_op *op) {
  switch (op->kind) {
  case CT_OP_SOFTMAX: case CT_OP_LOGSOFTMAX: case CT_OP_HARDMAX: return ct_attr_softmax_axis(op);
  case CT_OP_FLATTEN: return ct_attr_flatten_axis(op);
  case CT_OP_CONCAT: case CT_OP_SPLIT: return ct_attr_concat_axis(op);
  case CT_OP_GATHER: case CT_OP_GATHERELEMENTS: case CT_OP_SCATTERELEMENTS: return ct_attr_gather_axis(op);
  case CT_OP_TOPK: return ct_attr_topk_axis(op);
  case CT_OP_ARGMAX: case CT_OP_ARGMIN: return ct_attr_arg_axis(op);
  case CT_OP_COMPRESS: return ct_attr_compress_axis(op);
  default: return 0;
  }
}

/* Is output axis a excluded from slicing by the op's semantics? */
static bool axis_needed_whole(const ct_op *op, int a, int ndim) {
  ct_op_kind k = op->kind;
  if (IN(k, axis_ops)) {
    int64_t ax = op_axis(op);
    if (ax < 0) ax += ndim;
    return a == ax;
  }
  int n = 0;
  const int64_t *axes;
  switch (k) {
  case CT_OP_LAYERNORM: {
    int64_t ax = ct_attr_layernorm_axis(op);
    if (ax < 0) ax += ndim;
    return a >= ax;
  }
  case CT_OP_RESIZE: { /* linear: H tiles read their rows' taps (lg_tile.c), W whole */
    ct_tpu_lin lin;
    return ct_tpu_resize_lin(op, &lin) ? a == 3 : a >= 2;
  }
  case CT_OP_INSTANCENORM: case CT_OP_GLOBALAVERAGEPOOL: case CT_OP_GLOBALMAXPOOL:
  case CT_OP_MAXPOOL: case CT_OP_AVERAGEPOOL: case CT_OP_LPPOOL: case CT_OP_PAD:
    return a >= 2;
  case CT_OP_LRN: case CT_OP_CONVTRANSPOSE: return a >= 1;
  case CT_OP_MVN: case CT_OP_REDUCEMEAN: case CT_OP_REDUCESUM: case CT_OP_REDUCEMAX: case CT_OP_REDUCEMIN:
  case CT_OP_REDUCEPROD: case CT_OP_REDUCEL1: case CT_OP_REDUCEL2: case CT_OP_REDUCELOGSUM:
  case CT_OP_REDUCELOGSUMEXP: case CT_OP_REDUCESUMSQUARE:
    axes = k == CT_OP_MVN ? ct_attr_mvn_axes(op, &n) : NULL; /* Reduce*: axes is an operand (whole) */
    if (!axes) return k == CT_OP_MVN ? (a == 0 || a >= 2) : true;
    for (int i = 0; i < n; i++)
      if ((axes[i] < 0 ? axes[i] + ndim : axes[i]) == a) return true;
    return false;
  default: return false;
  }
}

/* Output axes a single-layer group of op may slice and the weight-split axis. */
static void slice_axes(const ct_op *op, ct_lg_layer *l) {
  const ct_value *o = op->out[0];
  int nd = o->ndim;
  l->n_axes = 0;
  l->wsplit_axis = -1;
  if (IN(op->kind, unsliceable_ops) || nd <= 0) return;
  bool mxu = IN(op->kind, mxu_ops);
  if (mxu) {
    bool wconst = op->n_in > 1 && op->in[1] && ct_lg_is_weight(op->in[1]);
    if (op->kind == CT_OP_CONV && nd == 4) {
      l->axes[l->n_axes++] = 0, l->axes[l->n_axes++] = 2;
      if (wconst && ct_attr_conv_group(op) == 1) l->axes[l->n_axes++] = 1, l->wsplit_axis = 1;
    } else if (op->kind == CT_OP_CONVTRANSPOSE && nd == 4 && op->in[0]->ndim == 4) {
      l->axes[l->n_axes++] = 0, l->axes[l->n_axes++] = 2;
      window_h(op, l);
      if (wconst && ct_attr_conv_group(op) == 1) l->axes[l->n_axes++] = 1, l->wsplit_axis = 1;
    } else if (op->kind == CT_OP_GEMM || op->kind == CT_OP_MATMUL) {
      for (int a = 0; a < nd - 1 && l->n_axes < CT_LG_MAX_AXES - 1; a++) l->axes[l->n_axes++] = a;
      if (wconst && nd >= 2) l->axes[l->n_axes++] = nd - 1, l->wsplit_axis = nd - 1;
    } else if (nd >= 1) {
      l->axes[l->n_axes++] = 0;
    }
    return;
  }
  for (int a = 0; a < nd && l->n_axes < CT_LG_MAX_AXES; a++) {
    if (o->shape[a] <= 1 || axis_needed_whole(op, a, nd)) continue;
    int64_t s0, st;
    if (op->kind == CT_OP_SLICE) { /* output row r reads input row start + r·step */
      if (ct_lg_slice_axis(op, a, &s0, &st)) l->axes[l->n_axes++] = a;
      continue;
    }
    if (op->kind == CT_OP_RESIZE && a == 2) { /* linear (axis_needed_whole): rows of taps, lg_tile.c */
      l->axes[l->n_axes++] = a;
      continue;
    }
    bool ok = true; /* every non-constant input matches along a (right-aligned) or is 1 */
    for (int i = 0; i < op->n_in && ok; i++) {
      const ct_value *v = op->in[i];
      if (!v || ct_lg_is_weight(v)) continue;
      int ia = op->kind == CT_OP_TRANSPOSE ? -1 : a - (nd - v->ndim);
      if (op->kind == CT_OP_TRANSPOSE) {
        int n = 0;
        int64_t perm[CT_ATTR_LIST_MAX];
        ia = ct_attr_transpose_perm_n(op, perm, &n) && n == nd ? (int)perm[a] : nd - 1 - a;
      }
      ok = ia < 0 || ia >= v->ndim || v->shape[ia] == o->shape[a] || v->shape[ia] == 1;
    }
    for (int j = 1; j < op->n_out && ok; j++) ok = op->out[j]->ndim == nd && op->out[j]->shape[a] == o->shape[a];
    if (ok) l->axes[l->n_axes++] = a;
  }
}

/* Fills the layer's trait, engine, window and weight bytes. */
static void classify(const lg_ctx *x, const ct_op *op, ct_lg_layer *l) {
  memset(l, 0, sizeof *l);
  l->op = op;
  l->kh = l->sh = l->dh = 1;
  const ct_value *o = op->out[0];
  bool four = o->ndim == 4 && op->n_in > 0 && op->in[0] && op->in[0]->ndim == 4;
  bool all4 = true;
  for (int j = 0; j < op->n_out; j++) all4 = all4 && op->out[j]->ndim == 4;
  if (IN(op->kind, alias_ops)) l->trait = CT_LG_ALIAS;
  else if ((op->kind == CT_OP_CONV || op->kind == CT_OP_MAXPOOL || op->kind == CT_OP_AVERAGEPOOL ||
            op->kind == CT_OP_LPPOOL) && four && all4)
    l->trait = CT_LG_WINDOW, window_h(op, l);
  else if (IN(op->kind, eltwise_ops) && all4 && o->ndim == 4 &&
           (op->kind != CT_OP_CONCAT || ct_attr_concat_axis(op) == 1 || ct_attr_concat_axis(op) == -3))
    l->trait = CT_LG_ELTWISE;
  else l->trait = CT_LG_WHOLE;
  l->unit = l->trait == CT_LG_ALIAS || ct_lg_border_cast(x->g, op) ? CT_LG_UNIT_NONE
            : (IN(op->kind, mxu_ops) && !is_depthwise(op)) ? CT_LG_UNIT_MXU : CT_LG_UNIT_VPU;
  for (int i = 0; i < op->n_in; i++)
    if (op->in[i] && ct_lg_is_weight(op->in[i])) l->weight_bytes += ct_lg_numel(op->in[i]) * ct_lg_elem_bytes(x->opt, op->in[i]);
  if (l->trait != CT_LG_ALIAS) slice_axes(op, l);
  if (l->trait == CT_LG_WINDOW && op->kind != CT_OP_CONV) /* pools: N, C, H */
    l->n_axes = 3, l->axes[0] = 0, l->axes[1] = 1, l->axes[2] = 2;
}

/* The form of a border Cast (ct_lg_border_cast), its readers aside. */
static bool border_form(const ct_op *op) {
  return op->kind == CT_OP_CAST && op->n_in == 1 && op->in[0] && op->in[0]->def && op->in[0]->def->kind == CT_OP_INPUT &&
         ct_dtype_is_float(op->in[0]->dtype) &&
         (ct_tq_is_storage(op->out[0]->dtype) ||
          (op->in[0]->dtype == CT_F32 && (op->out[0]->dtype == CT_BF16 || op->out[0]->dtype == CT_F16)));
}

bool ct_lg_border_cast(const ct_graph *g, const ct_op *op) {
  if (!border_form(op)) return false;
  for (int i = 0; i < g->n_ops; i++) { /* the input's only reader: one program input per module input */
    const ct_op *u = g->ops[i];
    for (int k = 0; !u->dead && k < u->n_in; k++)
      if (u->in[k] == op->in[0] && u != op) return false;
  }
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == op->in[0]) return false;
  return true;
}

static bool is_layer_op(const ct_op *op) {
  if (op->dead || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || op->n_out == 0) return false;
  for (int j = 0; j < op->n_out; j++)
    if (!ct_lg_is_weight(op->out[j])) return true;
  return false; /* folded */
}

static ct_status check_shapes(const ct_graph *g, const ct_op *op, ct_diag *d) {
  for (int i = 0; i < op->n_in + op->n_out; i++) {
    const ct_value *v = i < op->n_in ? op->in[i] : op->out[i - op->n_in];
    if (v && v->ndim < 0)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: node \"%s\": value \"%s\" has no shape (run shape inference first)",
                         g->source ? g->source : g->name, op->loc ? op->loc : "?", v->name);
  }
  return CT_OK;
}

/* Consumers of every value (CSR over value ids, consumer layers ascending). */
static ct_status build_consumers(lg_ctx *x, ct_diag *d) {
  int nv = x->g->n_values;
  x->cons_off = calloc((size_t)nv + 1, sizeof *x->cons_off);
  if (!x->cons_off) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int li = 0; li < x->n_layers; li++)
    for (int i = 0; i < x->layers[li].op->n_in; i++)
      if (x->layers[li].op->in[i]) x->cons_off[x->layers[li].op->in[i]->id + 1]++;
  for (int v = 0; v < nv; v++) x->cons_off[v + 1] += x->cons_off[v];
  x->cons = malloc(sizeof *x->cons * (size_t)(x->cons_off[nv] + 1));
  int *fill = calloc((size_t)nv, sizeof *fill);
  if (!x->cons || !fill) return free(fill), ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int li = 0; li < x->n_layers; li++)
    for (int i = 0; i < x->layers[li].op->n_in; i++) {
      const ct_value *v = x->layers[li].op->in[i];
      if (!v) continue;
      int *c = x->cons + x->cons_off[v->id];
      int k = fill[v->id]++;
      if (k == 0 || c[k - 1] != li) c[k] = li; else fill[v->id]--; /* same layer twice */
    }
  /* compact duplicates away: rewrite offsets with the filled counts */
  int w = 0;
  for (int v = 0; v < nv; v++) {
    int start = x->cons_off[v], n = fill[v];
    x->cons_off[v] = w;
    memmove(x->cons + w, x->cons + start, sizeof *x->cons * (size_t)n);
    w += n;
  }
  x->cons_off[nv] = w;
  free(fill);
  return CT_OK;
}

static void derive(lg_ctx *x) {
  for (int li = 0; li < x->n_layers; li++) {
    const ct_lg_layer *l = &x->layers[li];
    x->min_cons[li] = INT32_MAX;
    for (int j = 0; j < l->op->n_out; j++) {
      int id = l->op->out[j]->id;
      if (x->cons_off[id + 1] > x->cons_off[id] && x->cons[x->cons_off[id]] < x->min_cons[li])
        x->min_cons[li] = x->cons[x->cons_off[id]];
    }
    x->chainable[li] = l->trait == CT_LG_WINDOW || l->trait == CT_LG_ELTWISE;
  }
}

ct_status ct_lg_ctx_init(lg_ctx *x, const ct_graph *g, const ct_chip *chip, const ct_lg_options *opt, ct_diag *d) {
  memset(x, 0, sizeof *x);
  x->g = g, x->chip = chip, x->opt = opt;
  int nv = g->n_values, no = g->n_ops;
  for (int v = 0; v < nv; v++)
    if (g->values[v]->id != v)
      return ct_diag_set(d, CT_ERR_INTERNAL, "%s: value ids are not dense (compact the graph first)", g->name);
  x->layers = calloc((size_t)no + 1, sizeof *x->layers);
  x->layer_of_op = malloc(sizeof *x->layer_of_op * ((size_t)no + 1));
  x->prod = malloc(sizeof *x->prod * ((size_t)nv + 1));
  x->model_out = calloc((size_t)nv + 1, sizeof *x->model_out);
  x->min_cons = malloc(sizeof *x->min_cons * ((size_t)no + 1));
  x->chainable = calloc((size_t)no + 1, sizeof *x->chainable);
  x->rng = calloc((size_t)nv + 1, sizeof *x->rng);
  x->mark = calloc((size_t)nv + 1, sizeof *x->mark);
  x->prevhi = calloc((size_t)nv + 1, sizeof *x->prevhi);
  x->vbuf = calloc((size_t)nv + 1, sizeof *x->vbuf);
  if (!x->layers || !x->layer_of_op || !x->prod || !x->model_out || !x->min_cons || !x->chainable || !x->rng ||
      !x->mark || !x->prevhi || !x->vbuf)
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int v = 0; v < nv; v++) x->prod[v] = -1;
  for (int i = 0; i < g->n_outputs; i++) x->model_out[g->outputs[i]->id] = true;
  for (int oi = 0; oi < no; oi++) {
    const ct_op *op = g->ops[oi];
    x->layer_of_op[oi] = -1;
    if (!is_layer_op(op)) continue;
    ct_status st = check_shapes(g, op, d);
    if (st) return st;
    x->layer_of_op[oi] = x->n_layers;
    for (int j = 0; j < op->n_out; j++) x->prod[op->out[j]->id] = x->n_layers;
    classify(x, op, &x->layers[x->n_layers++]);
  }
  ct_status st = build_consumers(x, d);
  if (st) return st;
  derive(x);
  return CT_OK;
}

void ct_lg_ctx_free(lg_ctx *x) {
  free(x->layers), free(x->layer_of_op), free(x->prod), free(x->model_out), free(x->min_cons);
  free(x->chainable), free(x->rng), free(x->mark), free(x->prevhi), free(x->vbuf), free(x->cons_off), free(x->cons);
  memset(x, 0, sizeof *x);
}

bool ct_lg_escapes(const lg_ctx *x, const ct_value *v, int first, int n) {
  if (x->model_out[v->id]) return true;
  for (int k = x->cons_off[v->id]; k < x->cons_off[v->id + 1]; k++)
    if (x->cons[k] < first || x->cons[k] >= first + n) return true;
  return false;
}

bool ct_lg_group_legal(const lg_ctx *x, int first, int n) {
  if (n == 1) return true;
  int last = first + n - 1;
  for (int li = first; li <= last; li++) {
    if (!x->chainable[li]) return false;
    if (li < last && x->min_cons[li] > last) return false;
  }
  return true;
}
