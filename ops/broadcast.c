/* broadcast.c: numpy multidirectional broadcasting (onnx/docs/Broadcasting.md) and the row
 * iterator of broadcast.h; adjacent dims that are contiguous for every input are merged so
 * same-shape operands run as a single row. */
#include "ops/broadcast.h"

#include <string.h>

bool ct_bcast_shape(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out) {
  int n = na > nb ? na : nb;
  if (na < 0 || nb < 0 || n > CT_MAX_DIMS) return false;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return false;
  }
  *nout = n;
  return true;
}

bool ct_bcast_to(int nfrom, const int64_t *from, int nto, const int64_t *to) {
  if (nfrom < 0 || nfrom > nto) return false;
  for (int i = 0; i < nfrom; i++) {
    int64_t f = from[i], t = to[i + nto - nfrom];
    if (f != t && f != 1) return false;
  }
  return true;
}

void ct_bcast_strides(int nin, const int64_t *in, int nout, const int64_t *out, int64_t *strides) {
  int64_t s = 1;
  for (int i = nout - 1; i >= 0; i--) {
    int ii = i - (nout - nin);
    int64_t d = ii >= 0 ? in[ii] : 1;
    strides[i] = (d == 1 && out[i] != 1) || ii < 0 ? 0 : s;
    if (ii >= 0) s *= d;
  }
}

/* Drops size-1 dims, then merges adjacent dims (from the back) whose strides make one
 * contiguous run for every input. */
static void merge_dims(ct_bcast_iter *it) {
  int nd = 0; /* drop size-1 dims first: their index is always 0 */
  for (int d = 0; d < it->ndim; d++) {
    if (it->shape[d] == 1) continue;
    it->shape[nd] = it->shape[d];
    for (int k = 0; k < it->n_in; k++) it->stride[k][nd] = it->stride[k][d];
    nd++;
  }
  if (nd == 0) {
    it->shape[0] = 1;
    for (int k = 0; k < it->n_in; k++) it->stride[k][0] = 0;
    nd = 1;
  }
  it->ndim = nd;
  int w = it->ndim - 1; /* merged dims are written from the back */
  for (int d = it->ndim - 2; d >= 0; d--) {
    bool m = true;
    for (int k = 0; k < it->n_in; k++)
      if (it->stride[k][d] != it->stride[k][w] * it->shape[w]) m = false;
    if (m) {
      it->shape[w] *= it->shape[d];
      continue;
    }
    w--;
    it->shape[w] = it->shape[d];
    for (int k = 0; k < it->n_in; k++) it->stride[k][w] = it->stride[k][d];
  }
  nd = it->ndim - w;
  memmove(it->shape, it->shape + w, (size_t)nd * sizeof it->shape[0]);
  for (int k = 0; k < it->n_in; k++)
    memmove(it->stride[k], it->stride[k] + w, (size_t)nd * sizeof it->stride[k][0]);
  it->ndim = nd;
}

bool ct_bcast_iter_init(ct_bcast_iter *it, int nout, const int64_t *out, int n_in,
                        const int *in_ndims, const int64_t *const *in_shapes) {
  memset(it, 0, sizeof *it);
  if (n_in < 1 || n_in > CT_BCAST_MAX_IN || nout < 0 || nout > CT_MAX_DIMS) return false;
  for (int i = 0; i < nout; i++)
    if (out[i] <= 0) return false;
  it->n_in = n_in;
  it->ndim = nout > 0 ? nout : 1;
  for (int i = 0; i < it->ndim; i++) it->shape[i] = nout > 0 ? out[i] : 1;
  for (int k = 0; k < n_in; k++) {
    if (!ct_bcast_to(in_ndims[k], in_shapes[k], nout, out)) return false;
    if (nout > 0) ct_bcast_strides(in_ndims[k], in_shapes[k], nout, out, it->stride[k]);
    else it->stride[k][0] = 0;
  }
  merge_dims(it);
  it->inner = it->shape[it->ndim - 1];
  for (int k = 0; k < n_in; k++) it->istride[k] = it->stride[k][it->ndim - 1];
  return true;
}

bool ct_bcast_iter_next(ct_bcast_iter *it) {
  for (int d = it->ndim - 2; d >= 0; d--) {
    it->idx[d]++;
    for (int k = 0; k < it->n_in; k++) it->off[k] += it->stride[k][d];
    if (it->idx[d] < it->shape[d]) return true;
    for (int k = 0; k < it->n_in; k++) it->off[k] -= it->stride[k][d] * it->shape[d];
    it->idx[d] = 0;
  }
  return false;
}

void ct_bcast_iter_seek(ct_bcast_iter *it, int64_t row) {
  for (int k = 0; k < it->n_in; k++) it->off[k] = 0;
  for (int d = it->ndim - 2; d >= 0; d--) {
    it->idx[d] = row % it->shape[d], row /= it->shape[d];
    for (int k = 0; k < it->n_in; k++) it->off[k] += it->idx[d] * it->stride[k][d];
  }
}
