/* rnn_shape.c: shape functions of the recurrent ops LSTM, GRU, RNN (ONNX LSTM-14, GRU-14,
 * RNN-14): X (seq, batch, input) or, with layout 1, (batch, seq, input); W (dirs, gates·H, I),
 * R (dirs, gates·H, H). Outputs Y (seq, dirs, batch, H) / layout 1 (batch, seq, dirs, H),
 * Y_h and Y_c (dirs, batch, H) / layout 1 (batch, dirs, H). */
#include <string.h>

#include "ops/shape_util.h"

/* Gates per kind: LSTM 4 (i, o, f, c), GRU 3 (z, r, h), RNN 1. */
static int gates_of(ct_op_kind k) { return k == CT_OP_LSTM ? 4 : k == CT_OP_GRU ? 3 : 1; }

/* Checks optional input i has exactly the shape (nd dims). */
static ct_status opt_shape(const ct_op *op, int i, int nd, const int64_t *shape, const char *what, ct_diag *d) {
  if (i >= op->n_in || !op->in[i]) return CT_OK;
  const ct_value *v = op->in[i];
  if (v->ndim != nd || memcmp(v->shape, shape, sizeof *shape * (size_t)nd))
    return ct_km_err(d, CT_ERR_INPUT, op, "input %d (%s) has the wrong shape", i, what);
  return CT_OK;
}

/* LSTM / GRU / RNN: checks X, W, R, B, sequence_lens, initial states (and LSTM's P) and types
 * Y, Y_h (and LSTM's Y_c) in X's float dtype. Errors: CT_ERR_INPUT for wrong ranks/shapes, an
 * unknown direction, a non-float X; "unsupported" for layout other than 0/1. */
ct_status ct_shape_rnn(ct_graph *g, ct_op *op, ct_diag *d) {
  ct_value *x, *w, *r;
  ct_status st;
  if ((st = ct_sm_in(op, 0, &x, d)) || (st = ct_sm_in(op, 1, &w, d)) || (st = ct_sm_in(op, 2, &r, d))) return st;
  if (!ct_dtype_is_float(x->dtype) || w->dtype != x->dtype || r->dtype != x->dtype)
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported dtype %s (X, W and R must share a float dtype)",
                     ct_dtype_name(x->dtype));
  int64_t layout = ct_attr_rnn_layout(op);
  if (layout != 0 && layout != 1) return ct_km_err(d, CT_ERR_INPUT, op, "unsupported layout %lld", (long long)layout);
  const char *dir = ct_attr_rnn_direction(op);
  int64_t dirs = !strcmp(dir, "bidirectional") ? 2 : 1, G = gates_of(op->kind);
  if (dirs == 1 && strcmp(dir, "forward") && strcmp(dir, "reverse"))
    return ct_km_err(d, CT_ERR_INPUT, op, "unsupported direction \"%s\"", dir);
  if (x->ndim != 3 || w->ndim != 3 || r->ndim != 3) return ct_km_err(d, CT_ERR_INPUT, op, "X, W and R must be 3-D");
  int64_t seq = x->shape[layout ? 1 : 0], batch = x->shape[layout ? 0 : 1], H = r->shape[2];
  if ((ct_attr_has_rnn_hidden_size(op) && ct_attr_rnn_hidden_size(op) != H) || w->shape[0] != dirs || r->shape[0] != dirs ||
      w->shape[1] != G * H || r->shape[1] != G * H || w->shape[2] != x->shape[2])
    return ct_km_err(d, CT_ERR_INPUT, op, "W/R shapes do not match %lld directions, %lld gates, hidden size %lld",
                     (long long)dirs, (long long)G, (long long)H);
  int64_t bs[2] = {dirs, 2 * G * H}, sl[1] = {batch};
  int64_t hs[3] = {layout ? batch : dirs, layout ? dirs : batch, H}, ps[2] = {dirs, 3 * H};
  if ((st = opt_shape(op, 3, 2, bs, "B", d)) || (st = opt_shape(op, 4, 1, sl, "sequence_lens", d)) ||
      (st = opt_shape(op, 5, 3, hs, "initial_h", d)) ||
      (op->kind == CT_OP_LSTM && ((st = opt_shape(op, 6, 3, hs, "initial_c", d)) || (st = opt_shape(op, 7, 2, ps, "P", d)))))
    return st;
  if (!ct_attr_set_rnn_hidden_size(g, op, H)) return ct_km_err(d, CT_ERR_LIMIT, op, "out of memory");
  int64_t ys[4] = {layout ? batch : seq, layout ? seq : dirs, layout ? dirs : batch, H};
  ct_sm_out(op, 0, x->dtype, 4, ys);
  ct_sm_out(op, 1, x->dtype, 3, hs);
  ct_sm_out(op, 2, x->dtype, 3, hs);
  return CT_OK;
}
