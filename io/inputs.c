/* inputs.c: loads the input files of every command that takes them (see inputs.h): HDF5 through common/h5io.h,
 * TensorProto .pb through the ONNX front end, JPEG/PNG through io/image.h. The file
 * kind is recognized by its signature bytes (HDF5 format spec §II.A superblock signature). */
#include "io/inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx/onnx.h"
#include "io/image.h"

typedef struct input_set {
  int n;
  const ct_input_slot *slots; /* the inputs to supply, in order */
  ct_tensor **got;            /* supplied tensors, NULL until loaded */
} input_set;

static bool is_hdf5(const char *path) {
  unsigned char m[8];
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool ok = fread(m, 1, sizeof m, f) == sizeof m && memcmp(m, "\x89HDF\r\n\x1a\n", 8) == 0;
  fclose(f);
  return ok;
}

static bool same_type(const ct_tensor *t, const ct_input_slot *v) {
  if ((t->dtype != v->dtype && !v->any_dtype) || t->ndim != v->ndim) return false;
  for (int i = 0; i < v->ndim; i++)
    if (t->shape[i] != v->shape[i]) return false;
  return true;
}

/* Checks t against slot k, names it, and stores it there (taking ownership). */
static ct_status accept(input_set *s, int k, ct_tensor *t, const char *file, ct_diag *d) {
  const ct_input_slot *v = &s->slots[k];
  char want[128], got[128];
  /* numpy has no bfloat16: ONNX's test data (and onnx.numpy_helper) store bf16 tensors as
   * UINT16 holding the same bits, so a u16 tensor for a bf16 input is taken as its bits */
  if (v->dtype == CT_BF16 && t->dtype == CT_U16) t->dtype = CT_BF16;
  if (!same_type(t, v)) {
    ct_diag_set(d, CT_ERR_INPUT, "%s: input \"%s\": expected %s %s, file has %s %s", file, v->name,
                ct_dtype_name(v->dtype), ct_shape_str(v->ndim, v->shape, want, sizeof want),
                ct_dtype_name(t->dtype), ct_shape_str(t->ndim, t->shape, got, sizeof got));
    ct_tensor_free(t);
    return CT_ERR_INPUT;
  }
  if (!ct_tensor_set_name(t, v->name)) {
    ct_tensor_free(t);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", file);
  }
  s->got[k] = t;
  return CT_OK;
}

static int next_free(const input_set *s) {
  for (int k = 0; k < s->n; k++)
    if (!s->got[k]) return k;
  return -1;
}

static ct_status load_hdf5(input_set *s, const char *file, ct_diag *d) {
  for (int k = 0; k < s->n; k++) {
    if (s->got[k]) continue;
    ct_tensor *t = NULL;
    ct_status st = ct_h5_read_one(file, s->slots[k].name, &t, d);
    if (st && d && strstr(d->msg, ": no dataset \""))
      return ct_diag_set(d, CT_ERR_INPUT, "%s: no dataset \"%s\" for input \"%s\"", file, s->slots[k].name,
                         s->slots[k].name);
    if (st == CT_OK) st = accept(s, k, t, file, d);
    if (st) return st;
  }
  return CT_OK;
}

/* True if the Input op carries any image-preprocessing attribute (an image given to an
 * input without them would be converted by silent defaults: refused). */
static bool has_preprocessing(const ct_op *op) {
  return ct_attr_has_input_pixel_format(op) || ct_attr_has_input_resize_dims(op) || ct_attr_has_input_mean(op) ||
         ct_attr_has_input_scale(op) || ct_attr_has_input_keep_aspect_ratio(op);
}

static ct_status load_image(input_set *s, int k, const char *file, ct_diag *d) {
  const ct_input_slot *v = &s->slots[k];
  if (!v->op)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: input \"%s\": an image needs the preprocessing of the model's Input op%s%s; "
                       "or give the input as a tensor file (.h5, .pb)", file, v->name, v->no_image ? ": " : "",
                       v->no_image ? v->no_image : "");
  ct_image_prep p;
  ct_status st = ct_image_prep_from_op(v->op, &p, d);
  if (st) return ct_diag_prefix(d, "%s: ", file);
  ct_image img;
  st = ct_image_load(file, &img, d);
  if (st) return st;
  if (!has_preprocessing(v->op)) {
    ct_image_free(&img);
    return ct_diag_set(d, CT_ERR_INPUT,
                       "%s: input \"%s\": the model has no image preprocessing (set it with ctpu transform --pixel-format, "
                       "--mean, --scale, --resize-dims) or give the input as a tensor file (.h5, .pb)", file, v->name);
  }

  ct_tensor *t = NULL;
  st = ct_image_preprocess(&img, &p, v->shape[1], v->shape[2], v->shape[3], v->name, &t, d);
  ct_image_free(&img);
  if (st) return ct_diag_prefix(d, "%s: ", file);
  s->got[k] = t;
  return CT_OK;
}

#define ACCEPTED "HDF5 files (.h5), ONNX TensorProto files (.pb) or JPEG/PNG images"

/* The free slot a .pb tensor named name goes to: the one of that name, else the next free. */
static int slot_for(const input_set *s, const char *name) {
  for (int k = 0; name && k < s->n; k++)
    if (!s->got[k] && !strcmp(s->slots[k].name, name)) return k;
  return next_free(s);
}

/* Loads one file into the next free input(s). */
static ct_status load_file(input_set *s, const char *file, ct_diag *d) {
  int k = next_free(s);
  if (k < 0) return CT_ERR_USAGE; /* the caller reports the count */
  if (is_hdf5(file)) return load_hdf5(s, file, d);
  if (ct_image_is_image_file(file)) return load_image(s, k, file, d);
  struct stat sb;
  if (stat(file, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: empty file; inputs are %s", file, ACCEPTED);
  ct_tensor *t = NULL;
  ct_status st = ct_onnx_read_tensor_pb(file, &t, d);
  size_t n = strlen(file);
  if (st == CT_ERR_INPUT && (n < 3 || strcmp(file + n - 3, ".pb") != 0)) {
    char why[256];
    snprintf(why, sizeof why, "%.200s", d ? d->msg : "");
    return ct_diag_set(d, CT_ERR_INPUT, "%s: not a tensor file ctpu reads; inputs are %s (read as .pb: %.200s)", file, ACCEPTED,
                       why);
  }
  if (st) return st;
  return accept(s, slot_for(s, t->name), t, file, d);
}

static ct_status count_error(const input_set *s, int given, ct_diag *d) {
  char names[512] = "";
  size_t k = 0;
  for (int i = 0; i < s->n && k + 8 < sizeof names; i++) {
    int w = snprintf(names + k, sizeof names - k, "%s\"%s\"", i ? ", " : "", s->slots[i].name);
    if (w < 0) break;
    k += (size_t)w < sizeof names - k ? (size_t)w : sizeof names - k - 1;
  }
  return ct_diag_set(d, CT_ERR_USAGE, "model has %d input%s (%s), %d given", s->n, s->n == 1 ? "" : "s", names,
                     given);
}

static ct_status load_all(input_set *s, const char *const *files, int n, ct_diag *d) {
  for (int i = 0; i < n; i++) {
    if (next_free(s) < 0) return count_error(s, n, d);
    ct_status st = load_file(s, files[i], d);
    if (st) return st;
  }
  if (next_free(s) >= 0) return count_error(s, n, d);
  return CT_OK;
}

ct_status ct_inputs_load_slots(const ct_input_slot *slots, int n_slots, const char *const *files, int n,
                               ct_tensor_list *out, ct_diag *d) {
  input_set s = {.n = n_slots, .slots = slots, .got = calloc((size_t)n_slots + 1, sizeof *s.got)};
  ct_status st = s.got ? load_all(&s, files, n, d) : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  int pushed = 0;
  for (int k = 0; st == CT_OK && k < s.n; k++) {
    if (ct_tensor_list_push(out, s.got[k])) pushed++;
    else st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  if (st) {
    out->n -= pushed; /* leave out as it was */
    for (int k = 0; s.got && k < s.n; k++) ct_tensor_free(s.got[k]);
  }
  free(s.got);
  return st;
}

ct_status ct_inputs_load(const ct_graph *g, const char *const *files, int n, ct_tensor_list *out, ct_diag *d) {
  int ni = ct_graph_inputs(g, NULL, 0);
  ct_value **vals = calloc((size_t)ni + 1, sizeof *vals);
  ct_input_slot *slots = calloc((size_t)ni + 1, sizeof *slots);
  ct_status st = vals && slots ? CT_OK : ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  if (!st) {
    ct_graph_inputs(g, vals, ni);
    for (int k = 0; k < ni; k++)
      slots[k] = (ct_input_slot){vals[k]->name, vals[k]->dtype, vals[k]->ndim, vals[k]->shape, vals[k]->def, false, NULL};
    st = ct_inputs_load_slots(slots, ni, files, n, out, d);
  }
  free(vals);
  free(slots);
  return st;
}
