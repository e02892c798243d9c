/* text_io.c: saving and loading a module as `.top`/`.tpu` text plus its weights HDF5 file
 * (docs/architecture.md §8; see text.h). Files are written under a temporary name and renamed
 * (POSIX rename is atomic), so a failure leaves no half-written file. */
#include "ir/text.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/h5io.h"
#include "common/outset.h"
#include "ir/verify.h"

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static bool same_shape(int na, const int64_t *a, int nb, const int64_t *b) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* "8x3x3x3xf32" (or "scalar f32") into buf. */
static const char *type_str(ct_dtype dt, int ndim, const int64_t *shape, char *buf, size_t n) {
  char s[160];
  ct_shape_str(ndim, shape, s, sizeof s);
  snprintf(buf, n, ndim > 0 ? "%sx%s" : "%s %s", s, ct_dtype_name(dt));
  return buf;
}

/* The weight value's data must exist and match its IR type. */
static ct_status check_weight(const ct_value *v, const ct_tensor *t, const char *file, ct_diag *d) {
  char a[200], b[200];
  if (!t) return ct_diag_set(d, CT_ERR_INPUT, "%s: weight \"%s\" has no data", file, v->name);
  if (t->dtype != v->dtype || !same_shape(t->ndim, t->shape, v->ndim, v->shape))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: weight \"%s\": IR says %s, file has %s", file, v->name,
                       type_str(v->dtype, v->ndim, v->shape, a, sizeof a),
                       type_str(t->dtype, t->ndim, t->shape, b, sizeof b));
  return CT_OK;
}

static ct_status write_weights(const ct_graph *g, const char *h5path, ct_h5_writer **wout, ct_diag *d) {
  ct_h5_writer *w;
  ct_status st = ct_h5_writer_open(&w, h5path, d);
  if (st) return st;
  for (int i = 0; i < g->n_ops && !st; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead) continue;
    for (int j = 0; j < op->n_out && !st; j++) {
      const ct_value *v = op->out[j];
      if (!v || (!v->data && op->kind != CT_OP_WEIGHT)) continue;
      st = check_weight(v, v->data, h5path, d);
      if (!st) st = ct_h5_writer_add(w, v->data, v->name, d);
    }
  }
  if (st) {
    ct_h5_writer_abort(w);
    return st;
  }
  *wout = w;
  return CT_OK;
}

/* Prints g into the temporary file of path (committed by the caller); CT_OK or an error
 * naming path, the temporary file then removed. */
static ct_status write_text(const ct_graph *g, ct_outfile *o, const char *path, ct_diag *d) {
  ct_status st = ct_outfile_begin(o, path, true, d);
  if (!st && (st = ct_ir_print(g, o->f, d))) ct_outfile_abort(o);
  return st;
}

ct_status ct_ir_save(ct_graph *g, const char *path, ct_diag *d) {
  size_t n = strlen(path);
  char *h5 = malloc(n + 4);
  if (!h5) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  snprintf(h5, n + 4, "%s.h5", path);
  const char *old = g->weights;
  ct_h5_writer *w = NULL;
  ct_outfile text = {0};
  ct_status st = CT_OK;
  if (!(g->weights = ct_arena_strdup(&g->arena, base_name(h5)))) st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  if (!st) st = write_weights(g, h5, &w, d);
  if (!st && (st = write_text(g, &text, path, d))) ct_h5_writer_abort(w);
  if (!st) st = ct_h5_writer_commit(w, d);
  if (!st) st = ct_outfile_commit(&text, d);
  else ct_outfile_abort(&text);
  if (st) g->weights = old ? old : "";
  free(h5);
  return st;
}

/* Moves the dataset named v->name out of l into v->data (checking its type); a Weight
 * value without a dataset is an error, any other value keeps no data. */
static ct_status attach(ct_tensor_list *l, ct_value *v, bool required, const char *h5path, ct_diag *d) {
  for (int j = 0; j < l->n; j++) {
    ct_tensor *t = l->items[j];
    if (!t->name || strcmp(t->name, v->name) != 0) continue;
    ct_status st = check_weight(v, t, h5path, d);
    if (st) return st;
    ct_tensor_free(v->data);
    v->data = t;
    l->items[j] = l->items[--l->n]; /* taken over by v */
    return CT_OK;
  }
  return required ? ct_diag_set(d, CT_ERR_INPUT, "%s: no dataset for weight \"%s\"", h5path, v->name) : CT_OK;
}

/* Attaches the data of every Weight value (and of folded constant values) from the file. */
static ct_status load_weights(ct_graph *g, const char *h5path, ct_diag *d) {
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ct_status st = ct_h5_read(h5path, &l, d);
  for (int i = 0; i < g->n_ops && !st; i++) {
    ct_op *op = g->ops[i];
    for (int j = 0; j < op->n_out && !st; j++) st = attach(&l, op->out[j], op->kind == CT_OP_WEIGHT, h5path, d);
  }
  ct_tensor_list_free(&l);
  return st;
}

static bool has_weights(const ct_graph *g) {
  for (int i = 0; i < g->n_ops; i++)
    if (g->ops[i]->kind == CT_OP_WEIGHT) return true;
  return false;
}

ct_status ct_ir_load(const char *path, ct_graph **out, ct_diag *d) {
  *out = NULL;
  size_t len = 0;
  char *text;
  ct_status st = ct_file_read(path, 0, &text, &len, d);
  if (st) return st;
  ct_graph *g;
  st = ct_ir_parse(text, len, path, &g, d);
  free(text);
  if (!st && (st = ct_ir_check_attrs(g, d))) ct_graph_free(g);
  if (st) return st;
  bool named = g->weights && g->weights[0];
  if (!named && has_weights(g)) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: module has Weight ops but names no weights file", path);
  } else if (named) {
    size_t dir = (size_t)(base_name(path) - path), n = dir + strlen(g->weights) + 1;
    char *h5 = malloc(n);
    if (!h5) st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
    else if (g->weights[0] == '/') snprintf(h5, n, "%s", g->weights);
    else snprintf(h5, n, "%.*s%s", (int)dir, path, g->weights);
    /* a module without Weight ops may name a weights file that is not there */
    if (h5 && (has_weights(g) || access(h5, F_OK) == 0)) st = load_weights(g, h5, d);
    free(h5);
  }
  if (st) {
    ct_graph_free(g);
    return st;
  }
  *out = g;
  return CT_OK;
}
