/* math_einsum.c: ONNX math family, Einsum (Einsum-12, numpy einsum conventions): the equation
 * plan shared by the shape function and the kernel, both of them, and a generic loop kernel:
 * each output element sums, over the labels absent from the output, the product of the
 * operands (repeated labels read diagonals by adding their strides; broadcast ellipsis dims of
 * size 1 get stride 0). */
#include <ctype.h>
#include <string.h>

#include "ops/math_einsum.h"
#include "ops/ops_util.h"
#include "ops/kernel.h"
#include "ops/shape_util.h"

#define ELL 52 /* first ellipsis label */

static int letter(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1; }

/* ASCII order of label ids (uppercase before lowercase), for the implicit output. */
static int ascii_rank(int l) { return l < 26 ? 26 + l : l - 26; }

/* Parses one term (between ',' / "->" separators) into labels; ELL marks the ellipsis. */
static ct_status term(const ct_op *op, const char *s, size_t len, int *lab, int *n, ct_diag *d) {
  *n = 0;
  bool ell = false;
  for (size_t i = 0; i < len; i++) {
    if (isspace((unsigned char)s[i])) continue;
    if (s[i] == '.' && i + 3 <= len && !strncmp(s + i, "...", 3) && !ell) {
      ell = true;
      lab[(*n)++] = ELL, i += 2;
    } else if (letter(s[i]) >= 0 && *n < CT_MAX_DIMS) {
      lab[(*n)++] = letter(s[i]);
    } else {
      return ct_ops_err(d, CT_ERR_INPUT, op, "malformed equation term \"%.*s\"", (int)len, s);
    }
  }
  return CT_OK;
}

/* Resolves operand k's term against its shape: expands the ellipsis into its dims
 * (right-aligned ELL + i labels over ell_nd dims) and records label sizes. */
static ct_status bind(const ct_op *op, ct_ke_einsum *p, int k, const int *lab, int n, int nd, const int64_t *shape,
                      int ell_nd, ct_diag *d) {
  bool has_ell = false;
  for (int i = 0; i < n; i++) has_ell = has_ell || lab[i] == ELL;
  int own = has_ell ? nd - (n - 1) : 0, j = 0;
  if (own < 0 || (!has_ell && n != nd))
    return ct_ops_err(d, CT_ERR_INPUT, op, "term %d has %d labels for rank %d", k, n, nd);
  for (int i = 0; i < n; i++) {
    int cnt = lab[i] == ELL ? own : 1;
    for (int e = 0; e < cnt; e++, j++) {
      int l = lab[i] == ELL ? ELL + ell_nd - own + e : lab[i];
      int64_t s = shape[j];
      p->in_lab[k][j] = l;
      if (p->size[l] < 0 || (l >= ELL && p->size[l] == 1)) p->size[l] = s;
      else if (p->size[l] != s && !(l >= ELL && s == 1))
        return ct_ops_err(d, CT_ERR_INPUT, op, "label of dim %d of operand %d has size %lld, elsewhere %lld", j, k,
                         (long long)s, (long long)p->size[l]);
    }
  }
  p->in_nd[k] = nd;
  return CT_OK;
}

/* The implicit output: ellipsis dims, then letters used exactly once, in ASCII order. */
static void implicit_out(ct_ke_einsum *p, int ell_nd) {
  int uses[ELL] = {0};
  for (int k = 0; k < p->n_in; k++)
    for (int j = 0; j < p->in_nd[k]; j++)
      if (p->in_lab[k][j] < ELL) uses[p->in_lab[k][j]]++;
  p->out_nd = 0;
  for (int i = 0; i < ell_nd; i++) p->out_lab[p->out_nd++] = ELL + i;
  for (int r = 0; r < ELL; r++)
    for (int l = 0; l < ELL; l++)
      if (ascii_rank(l) == r && uses[l] == 1 && p->out_nd < CT_MAX_DIMS) p->out_lab[p->out_nd++] = l;
}

/* Explicit output term: letters and the ellipsis expanded to ell_nd dims. */
static ct_status explicit_out(const ct_op *op, ct_ke_einsum *p, const int *lab, int n, int ell_nd, ct_diag *d) {
  p->out_nd = 0;
  for (int i = 0; i < n; i++) {
    int cnt = lab[i] == ELL ? ell_nd : 1;
    for (int e = 0; e < cnt; e++) {
      int l = lab[i] == ELL ? ELL + e : lab[i];
      if (p->out_nd == CT_MAX_DIMS) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: output rank > %d", CT_MAX_DIMS);
      if (p->size[l] < 0) return ct_ops_err(d, CT_ERR_INPUT, op, "output label %d is in no input", l);
      for (int o = 0; o < p->out_nd; o++)
        if (p->out_lab[o] == l) return ct_ops_err(d, CT_ERR_INPUT, op, "output label repeated");
      p->out_lab[p->out_nd++] = l;
    }
  }
  return CT_OK;
}

ct_status ct_ke_einsum_plan(const ct_op *op, const char *eq, int n_in, const int *ndims,
                            const int64_t *const *shapes, ct_ke_einsum *p, ct_diag *d) {
  memset(p, 0, sizeof *p);
  for (int l = 0; l < CT_KE_EINSUM_LABELS; l++) p->size[l] = -1;
  if (n_in < 1 || n_in > CT_KE_EINSUM_MAX_IN) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: %d operands", n_in);
  p->n_in = n_in;
  const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq), *s = eq;
  int lab[CT_KE_EINSUM_MAX_IN][CT_MAX_DIMS], n[CT_KE_EINSUM_MAX_IN], ell_nd = 0, k = 0;
  ct_status st;
  for (; k < n_in; k++) {
    const char *c = memchr(s, ',', (size_t)(end - s));
    const char *te = c ? c : end;
    if ((st = term(op, s, (size_t)(te - s), lab[k], &n[k], d))) return st;
    for (int i = 0; i < n[k]; i++)
      if (lab[k][i] == ELL && ndims[k] - (n[k] - 1) > ell_nd) ell_nd = ndims[k] - (n[k] - 1);
    if (!c && k != n_in - 1) break;
    if (c && k == n_in - 1) return ct_ops_err(d, CT_ERR_INPUT, op, "equation has more terms than %d inputs", n_in);
    s = te + 1;
  }
  if (k != n_in) return ct_ops_err(d, CT_ERR_INPUT, op, "equation has fewer terms than %d inputs", n_in);
  for (k = 0; k < n_in; k++)
    if ((st = bind(op, p, k, lab[k], n[k], ndims[k], shapes[k], ell_nd, d))) return st;
  if (!arrow) {
    implicit_out(p, ell_nd);
  } else {
    int ol[CT_MAX_DIMS + 1], on;
    if ((st = term(op, arrow + 2, strlen(arrow + 2), ol, &on, d)) || (st = explicit_out(op, p, ol, on, ell_nd, d)))
      return st;
  }
  for (int l = 0; l < CT_KE_EINSUM_LABELS; l++) {
    bool out = false;
    for (int o = 0; o < p->out_nd; o++) out = out || p->out_lab[o] == l;
    if (p->size[l] >= 0) p->n_labels_used++;
    if (p->size[l] >= 0 && !out) p->sum_lab[p->sum_n++] = l;
  }
  return CT_OK;
}

/* Element stride of label l in operand k (sum over its dims with that label; 0 when the
 * operand's dim is a broadcast 1). */
static int64_t label_stride(const ct_ke_einsum *p, int k, const int64_t *shape, int l) {
  int64_t st[CT_MAX_DIMS], s = 0;
  ct_ops_strides(p->in_nd[k], shape, st);
  for (int j = 0; j < p->in_nd[k]; j++)
    if (p->in_lab[k][j] == l && shape[j] == p->size[l]) s += st[j];
  return s;
}

/* Einsum: any float dtype (all operands and the output the same), accumulated in double. */
ct_status ct_kern_einsum(const ct_op *op, ct_tensor *const *in, ct_tensor **out, const ct_kernel_ctx *ctx,
                         ct_diag *d) {
  (void)ctx;
  int nd[CT_KE_EINSUM_MAX_IN];
  const int64_t *sh[CT_KE_EINSUM_MAX_IN];
  for (int k = 0; k < op->n_in && k < CT_KE_EINSUM_MAX_IN; k++) nd[k] = in[k]->ndim, sh[k] = in[k]->shape;
  ct_ke_einsum p;
  ct_status st = ct_ke_einsum_plan(op, ct_attr_einsum_equation(op), op->n_in, nd, sh, &p, d);
  if (st) return st;
  int64_t so[CT_KE_EINSUM_MAX_IN][CT_MAX_DIMS], ss[CT_KE_EINSUM_MAX_IN][CT_KE_EINSUM_LABELS], sumsh[CT_KE_EINSUM_LABELS];
  for (int k = 0; k < p.n_in; k++) {
    for (int o = 0; o < p.out_nd; o++) so[k][o] = label_stride(&p, k, in[k]->shape, p.out_lab[o]);
    for (int s = 0; s < p.sum_n; s++) ss[k][s] = label_stride(&p, k, in[k]->shape, p.sum_lab[s]);
  }
  for (int s = 0; s < p.sum_n; s++) sumsh[s] = p.size[p.sum_lab[s]];
  int64_t n = ct_tensor_numel(out[0]), inner = ct_shape_numel(p.sum_n, sumsh), oi[CT_MAX_DIMS] = {0};
  for (int64_t e = 0; e < n; e++) {
    int64_t base[CT_KE_EINSUM_MAX_IN] = {0}, si[CT_KE_EINSUM_LABELS] = {0};
    for (int k = 0; k < p.n_in; k++)
      for (int o = 0; o < p.out_nd; o++) base[k] += oi[o] * so[k][o];
    double acc = 0;
    for (int64_t r = 0; r < inner; r++) {
      double prod = 1;
      for (int k = 0; k < p.n_in; k++) {
        int64_t off = base[k];
        for (int s = 0; s < p.sum_n; s++) off += si[s] * ss[k][s];
        prod *= ct_tensor_get_f64(in[k], off);
      }
      acc += prod;
      ct_ops_next_index(si, p.sum_n, sumsh);
    }
    ct_tensor_set_f64(out[0], e, acc);
    ct_ops_next_index(oi, p.out_nd, out[0]->shape);
  }
  return CT_OK;
}

/* ---- shape function ---- */

/* Einsum: output dims = sizes of the output labels, dtype of input 0 (all inputs alike). */
ct_status ct_shape_einsum(ct_graph *g, ct_op *op, ct_diag *d) {
  (void)g;
  int nd[CT_KE_EINSUM_MAX_IN];
  const int64_t *sh[CT_KE_EINSUM_MAX_IN];
  if (op->n_in > CT_KE_EINSUM_MAX_IN) return ct_ops_err(d, CT_ERR_INPUT, op, "unsupported: %d operands", op->n_in);
  for (int k = 0; k < op->n_in; k++) {
    ct_value *v;
    ct_status st = ct_sm_in(op, k, &v, d);
    if (st) return st;
    if (v->dtype != op->in[0]->dtype) return ct_ops_err(d, CT_ERR_INPUT, op, "operands have different dtypes");
    nd[k] = v->ndim, sh[k] = v->shape;
  }
  const char *eq = ct_attr_has_einsum_equation(op) ? ct_attr_einsum_equation(op) : NULL;
  if (!eq) return ct_ops_err(d, CT_ERR_INPUT, op, "attribute equation is missing");
  ct_ke_einsum p;
  ct_status st = ct_ke_einsum_plan(op, eq, op->n_in, nd, sh, &p, d);
  if (st) return st;
  int64_t shape[CT_MAX_DIMS];
  for (int o = 0; o < p.out_nd; o++) shape[o] = p.size[p.out_lab[o]];
  ct_sm_out(op, 0, op->in[0]->dtype, p.out_nd, shape);
  return CT_OK;
}
