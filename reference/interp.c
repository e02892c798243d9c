/* interp.c: the float Top interpreter (see interp.h). A plain in-order walk over the ops:
 * last-use indices are computed first so each intermediate tensor is released right after
 * the op that reads it last (the liveness rule of any tensor-arena planner, e.g. TFLite's)
 * into a per-run pool whose buffers later outputs reuse (best fit), sparing page faults.
 * A Conv whose only reader is the next op, an activation, runs with it fused (fusable).
 * With a ct_ref_consts, ops whose operands are all constant run once per graph. */
#include "reference/interp.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"

#define LAST_OUTPUT INT_MAX /* module outputs live to the end */

typedef struct run_state {
  const ct_graph *g;
  const ct_ref_options *opt;
  const ct_tensor_list *inputs;
  ct_kernel_ctx ctx;
  ct_tensor **vals; /* by value id: the tensor currently holding the value, or NULL */
  bool *owned;      /* vals[id] was allocated here (not an input or constant) */
  int *last;        /* index in g->ops of the last op reading the value; -1 unused */
  size_t *cap;      /* by value id: bytes of the data buffer of an owned tensor */
  ct_tensor **pool; /* released intermediates for reuse; pool_cap[i] bytes of data each */
  size_t *pool_cap;
  int n_pool;       /* at most n_values: each value is released once */
  int op_index;     /* index in g->ops of the op running */
} run_state;

static bool value_id_ok(const run_state *s, const ct_value *v) {
  return v && v->id >= 0 && v->id < s->g->n_values && s->g->values[v->id] == v;
}

static void release(run_state *s, int id) {
  if (s->owned[id]) ct_tensor_free(s->vals[id]);
  s->vals[id] = NULL;
  s->owned[id] = false;
}

/* Like release, but an owned tensor goes to the pool (kept whole, with its buffer). */
static void release_to_pool(run_state *s, int id) {
  ct_tensor *t = s->vals[id];
  if (s->owned[id] && t->n_scale == 0 && s->n_pool < s->g->n_values) {
    s->pool[s->n_pool] = t;
    s->pool_cap[s->n_pool++] = s->cap[id];
    s->owned[id] = false;
  }
  release(s, id);
}

/* A tensor for value v: the pooled one with the smallest buffer that fits (its header reset
 * to v's dtype, shape and name; data zeroed unless `zero` is false), else a fresh
 * ct_tensor_new (ct_tensor_new_uninit without `zero`). *cap receives the buffer's bytes. NULL when out of memory. */
static ct_tensor *acquire(run_state *s, const ct_value *v, bool zero, size_t *cap) {
  int64_t n = ct_shape_numel(v->ndim, v->shape);
  size_t need = n >= 0 ? (size_t)n * ct_dtype_size(v->dtype) : 0;
  int best = -1;
  for (int i = 0; n >= 0 && i < s->n_pool; i++)
    if (s->pool_cap[i] >= need && (best < 0 || s->pool_cap[i] < s->pool_cap[best])) best = i;
  if (best < 0 || need == 0) {
    ct_tensor *t = (zero ? ct_tensor_new : ct_tensor_new_uninit)(v->dtype, v->ndim, v->shape, v->name);
    *cap = t ? t->nbytes : 0;
    return t;
  }
  ct_tensor *t = s->pool[best];
  *cap = s->pool_cap[best];
  s->pool[best] = s->pool[--s->n_pool];
  s->pool_cap[best] = s->pool_cap[s->n_pool];
  if (!ct_tensor_set_name(t, v->name)) {
    ct_tensor_free(t);
    return NULL;
  }
  t->dtype = v->dtype;
  t->ndim = v->ndim;
  memcpy(t->shape, v->shape, sizeof t->shape[0] * (size_t)v->ndim);
  t->nbytes = need;
  memset(t->layout, 0, sizeof t->layout);
  if (zero) memset(t->data, 0, need);
  return t;
}

/* Fills s->last; fails on a value that is not in g->values (a broken graph). */
static ct_status compute_last_uses(run_state *s, ct_diag *d) {
  const ct_graph *g = s->g;
  for (int i = 0; i < g->n_values; i++) s->last[i] = -1;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead) continue;
    for (int k = 0; k < op->n_in; k++) {
      if (!op->in[k]) continue;
      if (!value_id_ok(s, op->in[k]))
        return ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\": input %d is not a value of the graph", op->loc, k);
      s->last[op->in[k]->id] = i;
    }
    for (int k = 0; k < op->n_out; k++)
      if (!value_id_ok(s, op->out[k]))
        return ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\": output %d is not a value of the graph", op->loc, k);
  }
  for (int i = 0; i < g->n_outputs; i++) {
    if (!value_id_ok(s, g->outputs[i]))
      return ct_diag_set(d, CT_ERR_INTERNAL, "module output %d is not a value of the graph", i);
    s->last[g->outputs[i]->id] = LAST_OUTPUT;
  }
  return CT_OK;
}

static bool same_shape(const ct_tensor *t, const ct_value *v) {
  if (t->ndim != v->ndim) return false;
  for (int i = 0; i < v->ndim; i++)
    if (t->shape[i] != v->shape[i]) return false;
  return true;
}

static ct_status bind_input(run_state *s, const ct_op *op, ct_diag *d) {
  const ct_value *v = op->out[0];
  const ct_tensor *t = ct_tensor_list_find(s->inputs, v->name);
  if (!t) return ct_diag_set(d, CT_ERR_USAGE, "no input tensor for input \"%s\"", v->name);
  if (v->ndim < 0) return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": shape not inferred", v->name);
  char want[128], got[128];
  if (t->dtype != v->dtype || !same_shape(t, v))
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": expected %s %s, given %s %s", v->name,
                       ct_dtype_name(v->dtype), ct_shape_str(v->ndim, v->shape, want, sizeof want),
                       ct_dtype_name(t->dtype), ct_shape_str(t->ndim, t->shape, got, sizeof got));
  if ((size_t)ct_tensor_numel(t) * ct_dtype_size(t->dtype) > t->nbytes)
    return ct_diag_set(d, CT_ERR_INPUT, "input \"%s\": tensor data is shorter than its shape", v->name);
  s->vals[v->id] = (ct_tensor *)t;
  return CT_OK;
}

static bool all_outputs_const(const ct_op *op) {
  for (int k = 0; k < op->n_out; k++)
    if (!ct_value_is_const(op->out[k])) return false;
  return op->n_out > 0;
}

struct ct_ref_consts {
  const ct_graph *g;     /* the graph the tensors belong to */
  int n_values, n_ops;
  ct_tensor **vals;      /* by value id: a result of an op with constant operands, or NULL */
  ct_kernel_memo *memo;  /* by op index: the kernel's derived constant data (ct_kernel_memo) */
};

ct_ref_consts *ct_ref_consts_new(void) { return calloc(1, sizeof(ct_ref_consts)); }

/* Empties c (its graph forgotten). */
static void consts_clear(ct_ref_consts *c) {
  for (int i = 0; c->vals && i < c->n_values; i++) ct_tensor_free(c->vals[i]);
  for (int i = 0; c->memo && i < c->n_ops; i++)
    if (c->memo[i].data && c->memo[i].free_fn) c->memo[i].free_fn(c->memo[i].data);
  free(c->vals), free(c->memo);
  c->vals = NULL, c->memo = NULL, c->g = NULL, c->n_values = c->n_ops = 0;
}

/* Binds c to graph g (emptied first when it held another graph); false when out of memory. */
static bool consts_bind(ct_ref_consts *c, const ct_graph *g) {
  if (c->g == g && c->n_values == g->n_values && c->n_ops == g->n_ops) return true;
  consts_clear(c);
  c->vals = calloc((size_t)g->n_values + 1, sizeof *c->vals);
  c->memo = calloc((size_t)g->n_ops + 1, sizeof *c->memo);
  if (!c->vals || !c->memo) {
    free(c->vals), free(c->memo);
    c->vals = NULL, c->memo = NULL;
    return false;
  }
  c->g = g, c->n_values = g->n_values, c->n_ops = g->n_ops;
  return true;
}

void ct_ref_consts_free(ct_ref_consts *c) {
  if (!c) return;
  consts_clear(c);
  free(c);
}

/* The run's cache of constant-operand results when op may use it (every operand constant,
 * not an Input, Weight or folded op, no rewrite hook), bound to the run's graph; else NULL. */
static ct_ref_consts *consts_for(const run_state *s, const ct_op *op) {
  ct_ref_consts *c = s->opt ? s->opt->consts : NULL;
  if (!c || s->opt->rewrite || op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || op->n_in == 0 ||
      all_outputs_const(op))
    return NULL;
  for (int k = 0; k < op->n_in; k++)
    if (op->in[k] && !ct_value_is_const(op->in[k])) return NULL;
  return consts_bind(c, s->g) ? c : NULL;
}

/* The memo slot of op index oi in the run's ct_ref_consts (no rewrite hook), else NULL. */
static ct_kernel_memo *memo_for(const run_state *s, int oi) {
  ct_ref_consts *c = s->opt ? s->opt->consts : NULL;
  if (!c || s->opt->rewrite || oi < 0 || oi >= s->g->n_ops || !consts_bind(c, s->g)) return NULL;
  return &c->memo[oi];
}

/* Runs one computing op: gathers its input tensors, allocates its outputs, calls the kernel.
 * With `fuse` (an activation whose row is *post, see fusable): the kernel applies post and
 * writes fuse's outputs instead of op's, which are never materialized. */
static ct_status run_kernel(run_state *s, const ct_op *op, const ct_op *fuse, const ct_kernel_post *post,
                            ct_diag *d) {
  bool tpu = ct_graph_dialect(s->g) == CT_DIALECT_TPU; /* Tpu: integer or rounded float (ct_tpu_exec) */
  ct_kernel_fn fn = tpu ? ct_tpu_exec : ct_kernel_of(op->kind);
  if (!fn)
    return ct_diag_set(d, CT_ERR_INPUT, "node \"%s\": op %s has no reference kernel", op->loc, ct_op_name(op->kind));
  ct_tensor **in = calloc((size_t)op->n_in + 1, sizeof *in);
  ct_tensor **out = calloc((size_t)op->n_out + 1, sizeof *out);
  ct_status st = (in && out) ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "node \"%s\": out of memory", op->loc);
  for (int k = 0; st == CT_OK && k < op->n_in; k++) {
    const ct_value *v = op->in[k];
    if (!v) continue;
    in[k] = ct_value_is_const(v) ? v->data : s->vals[v->id];
    if (!in[k]) st = ct_diag_set(d, CT_ERR_INTERNAL, "node \"%s\": input %d (\"%s\") has no data", op->loc, k, v->name);
  }
  const ct_op *res = fuse ? fuse : op; /* whose result values the kernel fills */
  for (int k = 0; st == CT_OK && k < op->n_out; k++) {
    const ct_value *v = res->out[k];
    if (v->ndim < 0)
      st = ct_diag_set(d, CT_ERR_INPUT, "node \"%s\": output %d (\"%s\") has no inferred shape", op->loc, k, v->name);
    else if (!(out[k] = acquire(s, v, tpu || !ct_kernel_writes_all(op->kind), &s->cap[v->id])))
      st = ct_diag_set(d, CT_ERR_LIMIT, "node \"%s\": out of memory for output \"%s\"", op->loc, v->name);
  }
  ct_kernel_ctx ctx = s->ctx;
  ctx.post = post, ctx.memo = memo_for(s, s->op_index);
  if (st == CT_OK) st = fn(op, in, out, &ctx, d);
  for (int k = 0; k < op->n_out; k++) {
    if (st == CT_OK) {
      s->vals[res->out[k]->id] = out[k];
      s->owned[res->out[k]->id] = true;
    } else if (out) {
      ct_tensor_free(out[k]);
    }
  }
  free(in);
  free(out);
  return st;
}

/* Binds or computes op's outputs. */
static ct_status exec_op(run_state *s, const ct_op *op, ct_diag *d) {
  if (op->kind == CT_OP_INPUT) return bind_input(s, op, d);
  if (op->kind == CT_OP_WEIGHT || all_outputs_const(op)) {
    for (int k = 0; k < op->n_out; k++) {
      if (!ct_value_is_const(op->out[k]))
        return ct_diag_set(d, CT_ERR_INPUT, "node \"%s\": weight \"%s\" has no data", op->loc, op->out[k]->name);
      s->vals[op->out[k]->id] = op->out[k]->data;
    }
    return CT_OK;
  }
  ct_ref_consts *c = consts_for(s, op);
  bool have = c != NULL;
  for (int k = 0; have && k < op->n_out; k++) have = c->vals[op->out[k]->id] != NULL;
  if (have) { /* computed by an earlier run: used as they are, never freed by this one */
    for (int k = 0; k < op->n_out; k++) s->vals[op->out[k]->id] = c->vals[op->out[k]->id];
    return CT_OK;
  }
  ct_status st = run_kernel(s, op, NULL, NULL, d);
  for (int k = 0; st == CT_OK && c && k < op->n_out; k++) { /* kept for the next runs */
    int id = op->out[k]->id;
    ct_tensor_free(c->vals[id]);
    c->vals[id] = s->vals[id];
    s->owned[id] = false;
  }
  return st;
}

/* Calls opt->on_op (rewrite false) or opt->rewrite (rewrite true: ops that ran a kernel
 * only) for op with its operand and result tensors (values still live). */
static ct_status notify_op(run_state *s, const ct_op *op, bool rewrite, ct_diag *d) {
  if (rewrite && (op->kind == CT_OP_INPUT || op->kind == CT_OP_WEIGHT || all_outputs_const(op))) return CT_OK;
  ct_tensor **io = calloc((size_t)op->n_in + (size_t)op->n_out + 1, sizeof *io);
  if (!io) return ct_diag_set(d, CT_ERR_LIMIT, "node \"%s\": out of memory", op->loc);
  for (int k = 0; k < op->n_in; k++)
    if (op->in[k]) io[k] = ct_value_is_const(op->in[k]) ? op->in[k]->data : s->vals[op->in[k]->id];
  for (int k = 0; k < op->n_out; k++) io[op->n_in + k] = s->vals[op->out[k]->id];
  const ct_tensor *const *in = (const ct_tensor *const *)io;
  ct_status st = rewrite ? s->opt->rewrite(s->opt->rewrite_user, op, in, io + op->n_in, d)
                         : s->opt->on_op(s->opt->on_op_user, op, in, in + op->n_in, d);
  free(io);
  return st;
}

/* After op i: dumps its non-constant outputs, frees values whose last reader was op i and
 * outputs nobody reads. */
static ct_status after_op(run_state *s, int i, ct_diag *d) {
  const ct_op *op = s->g->ops[i];
  for (int k = 0; k < op->n_out; k++) {
    const ct_value *v = op->out[k];
    if (s->opt && s->opt->dump && op->kind != CT_OP_WEIGHT && !ct_value_is_const(v)) {
      ct_status st = ct_h5_writer_add(s->opt->dump, s->vals[v->id], v->name, d);
      if (st) return st;
    }
    if (s->last[v->id] < 0) release_to_pool(s, v->id);
  }
  for (int k = 0; k < op->n_in; k++)
    if (op->in[k] && s->last[op->in[k]->id] == i) release_to_pool(s, op->in[k]->id);
  return CT_OK;
}

/* Moves (or copies, for inputs and constants) the module outputs into a fresh list, then appends
 * it to outputs; a value returned twice is one output (ct_graph_output_repeated). */
static ct_status collect_outputs(run_state *s, ct_tensor_list *outputs, ct_diag *d) {
  const ct_graph *g = s->g;
  ct_tensor_list tmp;
  ct_tensor_list_init(&tmp);
  for (int i = 0; i < g->n_outputs; i++) {
    const ct_value *v = g->outputs[i];
    if (ct_graph_output_repeated(g, i)) continue;
    ct_tensor *t = s->vals[v->id];
    if (!t) t = v->data;
    if (!t) {
      ct_tensor_list_free(&tmp);
      return ct_diag_set(d, CT_ERR_INTERNAL, "module output \"%s\" was not computed", v->name);
    }
    bool move = s->owned[v->id];
    ct_tensor *o = move ? t : ct_tensor_clone(t);
    if (!o || !ct_tensor_set_name(o, v->name) || !ct_tensor_list_push(&tmp, o)) {
      if (o && !move) ct_tensor_free(o);
      ct_tensor_list_free(&tmp);
      return ct_diag_set(d, CT_ERR_LIMIT, "out of memory collecting output \"%s\"", v->name);
    }
    if (move) {
      s->vals[v->id] = NULL;
      s->owned[v->id] = false;
    }
  }
  for (int i = 0; i < tmp.n; i++)
    if (!ct_tensor_list_push(outputs, tmp.items[i])) {
      for (int j = i; j < tmp.n; j++) ct_tensor_free(tmp.items[j]);
      free(tmp.items);
      return ct_diag_set(d, CT_ERR_LIMIT, "out of memory collecting outputs");
    }
  free(tmp.items);
  return CT_OK;
}

/* The index of the live op after op i when the two may run fused (run_kernel's `fuse`, its
 * row into *post), else -1: op i is a Top kernel that takes a post, with one f32 result read
 * by that next op alone (not a module output), an activation with an f32 row and a result of
 * the same shape. Run-time fusion spares a pass over memory, but op i's result then never
 * exists: so never with a dump, on_op or rewrite hook, which must see every value. */
static int fusable(const run_state *s, int i, ct_kernel_post *post) {
  const ct_graph *g = s->g;
  const ct_op *op = g->ops[i];
  if (s->opt && (s->opt->dump || s->opt->on_op || s->opt->rewrite)) return -1;
  if (ct_graph_dialect(g) != CT_DIALECT_TOP || !ct_kernel_takes_post(op->kind) || op->n_out != 1 ||
      all_outputs_const(op))
    return -1;
  int j = i + 1;
  while (j < g->n_ops && g->ops[j]->dead) j++;
  if (j >= g->n_ops) return -1;
  const ct_op *act = g->ops[j];
  const ct_value *v = op->out[0], *w = act->n_out == 1 ? act->out[0] : NULL;
  if (!w || act->n_in != 1 || act->in[0] != v || s->last[v->id] != j || v->dtype != CT_F32 || w->dtype != CT_F32 ||
      ct_value_is_const(w) || v->ndim < 0 || w->ndim != v->ndim ||
      memcmp(v->shape, w->shape, sizeof v->shape[0] * (size_t)v->ndim) != 0)
    return -1;
  return ct_kernel_unary_post(act, post) ? j : -1;
}

static ct_status run_ops(run_state *s, ct_diag *d) {
  const ct_graph *g = s->g;
  int total = 0, done = 0;
  for (int i = 0; i < g->n_ops; i++) total += !g->ops[i]->dead;
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead) continue;
    ct_kernel_post post;
    int j = fusable(s, i, &post);
    s->op_index = i;
    ct_status st = j >= 0 ? run_kernel(s, op, g->ops[j], &post, d) : exec_op(s, op, d);
    if (st == CT_OK && s->opt && s->opt->rewrite) st = notify_op(s, op, true, d);
    if (st == CT_OK && s->opt && s->opt->on_op) st = notify_op(s, op, false, d);
    if (st == CT_OK) st = after_op(s, i, d);
    if (st == CT_OK && j >= 0) st = after_op(s, j, d);
    if (st) return st;
    if (s->opt && s->opt->progress) s->opt->progress(s->opt->progress_user, ++done, total, op);
    if (j >= 0 && s->opt && s->opt->progress) s->opt->progress(s->opt->progress_user, ++done, total, g->ops[j]);
    if (j >= 0) i = j;
  }
  return CT_OK;
}

ct_status ct_ref_run(const ct_graph *g, const ct_ref_options *opt, const ct_tensor_list *inputs,
                     ct_tensor_list *outputs, ct_diag *d) {
  int n_in = ct_graph_inputs(g, NULL, 0);
  int given = inputs ? inputs->n : 0;
  if (given != n_in)
    return ct_diag_set(d, CT_ERR_USAGE, "module \"%s\" has %d input%s, %d given", g->name ? g->name : "",
                       n_in, n_in == 1 ? "" : "s", given);
  ct_tensor_list none;
  ct_tensor_list_init(&none);
  run_state s = {.g = g, .opt = opt, .inputs = inputs ? inputs : &none};
  s.ctx.threads = opt && opt->threads > 1 ? opt->threads : 1;
  bool own_pool = !(opt && opt->pool);
  if (!own_pool) s.ctx.pool = opt->pool, s.ctx.threads = ct_workpool_threads(opt->pool);
  else s.ctx.pool = s.ctx.threads > 1 ? ct_workpool_new(s.ctx.threads) : NULL; /* NULL: kernels run serially */
  size_t nv = (size_t)g->n_values + 1;
  s.vals = calloc(nv, sizeof *s.vals);
  s.owned = calloc(nv, sizeof *s.owned);
  s.last = calloc(nv, sizeof *s.last);
  s.cap = calloc(nv, sizeof *s.cap);
  s.pool = calloc(nv, sizeof *s.pool);
  s.pool_cap = calloc(nv, sizeof *s.pool_cap);
  ct_status st = (s.vals && s.owned && s.last && s.cap && s.pool && s.pool_cap) ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (st == CT_OK) st = compute_last_uses(&s, d);
  if (st == CT_OK) st = run_ops(&s, d);
  if (st == CT_OK) st = collect_outputs(&s, outputs, d);
  for (int i = 0; s.vals && s.owned && i < g->n_values; i++) release(&s, i);
  for (int i = 0; i < s.n_pool; i++) ct_tensor_free(s.pool[i]);
  free(s.vals);
  free(s.owned);
  free(s.last);
  free(s.cap);
  free(s.pool);
  free(s.pool_cap);
  if (own_pool) ct_workpool_free(s.ctx.pool);
  return st;
}
