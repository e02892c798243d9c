/* h5io.c: HDF5 tensor files through the HDF5 C library (see h5io.h). */
#include "common/h5io.h"

#include "common/limits.h"
#include "common/outset.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CT_H5_NAME_MAX 4096

void ct_tensor_list_init(ct_tensor_list *l) { memset(l, 0, sizeof *l); }

void ct_tensor_list_free(ct_tensor_list *l) {
  for (int i = 0; i < l->n; i++) ct_tensor_free(l->items[i]);
  free(l->items);
  memset(l, 0, sizeof *l);
}

bool ct_tensor_list_push(ct_tensor_list *l, ct_tensor *t) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 16;
    ct_tensor **p = realloc(l->items, (size_t)cap * sizeof *p);
    if (!p) return false;
    l->items = p;
    l->cap = cap;
  }
  l->items[l->n++] = t;
  return true;
}

ct_tensor *ct_tensor_list_find(const ct_tensor_list *l, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (l->items[i]->name && strcmp(l->items[i]->name, name) == 0) return l->items[i];
  return NULL;
}

bool ct_h5_escape(const char *name, char *buf, size_t n) {
  size_t k = 0;
  if (!name[0]) return n > 3 && (strcpy(buf, "%00"), true);
  for (size_t i = 0; name[i]; i++) {
    char c = name[i];
    const char *esc = c == '%' ? "%25" : c == '/' ? "%2F" : (i == 0 && c == '.') ? "%2E" : NULL;
    size_t len = esc ? 3 : 1;
    if (k + len + 1 > n) return false;
    if (esc) memcpy(buf + k, esc, 3); else buf[k] = c;
    k += len;
  }
  buf[k] = '\0';
  return true;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool ct_h5_unescape(const char *s, char *buf, size_t n) {
  size_t k = 0;
  if (strcmp(s, "%00") == 0) return n > 0 && (buf[0] = '\0', true);
  for (size_t i = 0; s[i]; i++) {
    char c = s[i];
    if (c == '%') {
      int hi = hexval(s[i + 1]), lo = hi < 0 ? -1 : hexval(s[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = (char)(hi * 16 + lo);
      i += 2;
    }
    if (k + 2 > n) return false;
    buf[k++] = c;
  }
  buf[k] = '\0';
  return true;
}

/* HDF5 native type that stores dt (f16/bf16 as uint16, bool as uint8). */
static hid_t h5_type(ct_dtype dt) {
  switch (dt) {
    case CT_F32: return H5T_NATIVE_FLOAT;
    case CT_F64: return H5T_NATIVE_DOUBLE;
    case CT_I8: return H5T_NATIVE_INT8;
    case CT_U8: case CT_BOOL: return H5T_NATIVE_UINT8;
    case CT_I16: return H5T_NATIVE_INT16;
    case CT_U16: case CT_F16: case CT_BF16: return H5T_NATIVE_UINT16;
    case CT_I32: return H5T_NATIVE_INT32;
    case CT_U32: return H5T_NATIVE_UINT32;
    case CT_I64: return H5T_NATIVE_INT64;
    case CT_U64: return H5T_NATIVE_UINT64;
    case CT_DTYPE_COUNT: break;
  }
  return -1;
}

struct ct_h5_writer {
  hid_t file;
  ct_outfile out; /* HDF5 writes out.tmp itself */
};

ct_status ct_h5_writer_open(ct_h5_writer **out, const char *path, ct_diag *d) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  ct_h5_writer *w = calloc(1, sizeof *w);
  if (!w) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  ct_status st = ct_outfile_begin(&w->out, path, false, d);
  if (st) {
    free(w);
    return st;
  }
  w->file = H5Fcreate(w->out.tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (w->file < 0) {
    ct_outfile_abort(&w->out);
    free(w);
    return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot create HDF5 file", path);
  }
  *out = w;
  return CT_OK;
}

static bool put_attr_str(hid_t obj, const char *name, const char *val) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen(val) + 1);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = a >= 0 && H5Awrite(a, t, val) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return ok;
}

static bool put_attr_arr(hid_t obj, const char *name, hid_t type, int n, const void *val) {
  hsize_t dim = (hsize_t)n;
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = a >= 0 && H5Awrite(a, type, val) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return ok;
}

static bool put_attrs(hid_t ds, const ct_tensor *t) {
  bool ok = put_attr_str(ds, "dtype", ct_dtype_name(t->dtype));
  if (t->layout[0]) ok = ok && put_attr_str(ds, "layout", t->layout);
  if (t->n_scale > 0) {
    int32_t axis = t->quant_axis;
    ok = ok && put_attr_arr(ds, "scale", H5T_NATIVE_DOUBLE, t->n_scale, t->scale) &&
         put_attr_arr(ds, "zero_point", H5T_NATIVE_INT32, t->n_scale, t->zero_point) &&
         put_attr_arr(ds, "quant_axis", H5T_NATIVE_INT32, 1, &axis);
  }
  return ok;
}

ct_status ct_h5_writer_add(ct_h5_writer *w, const ct_tensor *t, const char *name, ct_diag *d) {
  char esc[CT_H5_NAME_MAX];
  const char *nm = name ? name : t->name ? t->name : "";
  if (!ct_h5_escape(nm, esc, sizeof esc))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor name too long: \"%.64s...\"", w->out.path, nm);
  if (H5Lexists(w->file, esc, H5P_DEFAULT) > 0)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: duplicate tensor \"%s\"", w->out.path, nm);
  hsize_t dims[CT_MAX_DIMS];
  for (int i = 0; i < t->ndim; i++) dims[i] = (hsize_t)t->shape[i];
  hid_t sp = t->ndim ? H5Screate_simple(t->ndim, dims, NULL) : H5Screate(H5S_SCALAR);
  hid_t type = h5_type(t->dtype);
  hid_t ds = H5Dcreate2(w->file, esc, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = ds >= 0 && (t->nbytes == 0 || H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) >= 0) &&
            put_attrs(ds, t);
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  if (!ok) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot write tensor \"%s\"", w->out.path, nm);
  return CT_OK;
}

ct_status ct_h5_writer_commit(ct_h5_writer *w, ct_diag *d) {
  ct_status st;
  if (H5Fclose(w->file) < 0) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot finish writing HDF5 file", w->out.path);
    ct_outfile_abort(&w->out);
  } else {
    st = ct_outfile_commit(&w->out, d);
  }
  free(w);
  return st;
}

void ct_h5_writer_abort(ct_h5_writer *w) {
  if (!w) return;
  H5Fclose(w->file);
  ct_outfile_abort(&w->out);
  free(w);
}

ct_status ct_h5_write(const char *path, ct_tensor *const *ts, int n, ct_diag *d) {
  ct_h5_writer *w;
  ct_status st = ct_h5_writer_open(&w, path, d);
  if (st) return st;
  for (int i = 0; i < n; i++) {
    if ((st = ct_h5_writer_add(w, ts[i], NULL, d))) {
      ct_h5_writer_abort(w);
      return st;
    }
  }
  return ct_h5_writer_commit(w, d);
}

/* ---- reading ---- */

static bool get_attr_str(hid_t ds, const char *name, char *buf, size_t n) {
  if (H5Aexists(ds, name) <= 0) return false;
  hid_t a = H5Aopen(ds, name, H5P_DEFAULT);
  hid_t ft = H5Aget_type(a);
  bool ok = false;
  if (H5Tget_class(ft) == H5T_STRING && !H5Tis_variable_str(ft) && H5Tget_size(ft) < n) {
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5Tget_size(ft) + 1);
    memset(buf, 0, n);
    ok = H5Aread(a, mt, buf) >= 0;
    H5Tclose(mt);
  } else if (H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft)) {
    char *s = NULL;
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    if (H5Aread(a, mt, &s) >= 0 && s && strlen(s) < n) {
      strcpy(buf, s);
      ok = true;
    }
    H5free_memory(s);
    H5Tclose(mt);
  }
  H5Tclose(ft);
  H5Aclose(a);
  return ok;
}

/* Reads a 1-D numeric attribute into a malloc'd array of `type`; returns its length or -1. */
static int get_attr_arr(hid_t ds, const char *name, hid_t type, size_t elem, void **out) {
  *out = NULL;
  if (H5Aexists(ds, name) <= 0) return 0;
  hid_t a = H5Aopen(ds, name, H5P_DEFAULT);
  hid_t sp = H5Aget_space(a);
  hssize_t n = H5Sget_simple_extent_npoints(sp);
  int ret = -1;
  if (n > 0 && n < (1 << 24) && (*out = malloc((size_t)n * elem)) && H5Aread(a, type, *out) >= 0)
    ret = (int)n;
  H5Sclose(sp);
  H5Aclose(a);
  return ret;
}

/* dtype of a dataset: the `dtype` attribute if present, else from its HDF5 type. */
static bool dataset_dtype(hid_t ds, ct_dtype *dt) {
  char buf[32];
  if (get_attr_str(ds, "dtype", buf, sizeof buf)) return ct_dtype_parse(buf, dt);
  hid_t ft = H5Dget_type(ds);
  H5T_class_t cls = H5Tget_class(ft);
  size_t sz = H5Tget_size(ft);
  H5T_sign_t sg = H5Tget_sign(ft);
  H5Tclose(ft);
  if (cls == H5T_FLOAT) { *dt = sz == 8 ? CT_F64 : sz == 4 ? CT_F32 : CT_F16; return sz == 2 || sz == 4 || sz == 8; }
  if (cls != H5T_INTEGER) return false;
  bool s = sg == H5T_SGN_2;
  switch (sz) {
    case 1: *dt = s ? CT_I8 : CT_U8; return true;
    case 2: *dt = s ? CT_I16 : CT_U16; return true;
    case 4: *dt = s ? CT_I32 : CT_U32; return true;
    case 8: *dt = s ? CT_I64 : CT_U64; return true;
  }
  return false;
}

/* HDF5 type class of a dataset, for messages. */
static const char *class_name(hid_t ds) {
  hid_t ft = H5Dget_type(ds);
  H5T_class_t c = H5Tget_class(ft);
  H5Tclose(ft);
  switch (c) {
    case H5T_INTEGER: return "integer of an unsupported size";
    case H5T_FLOAT: return "float of an unsupported size";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum (h5py stores bool as an enum)";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown class";
  }
}

static ct_status read_dataset(hid_t file, const char *path, const char *link, ct_tensor **out, ct_diag *d) {
  char name[CT_H5_NAME_MAX];
  if (!ct_h5_unescape(link, name, sizeof name))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: dataset \"%s\": malformed escaped name", path, link);
  hid_t ds = H5Dopen2(file, link, H5P_DEFAULT);
  if (ds < 0) return ct_diag_set(d, CT_ERR_INPUT, "%s: \"%s\" is not a readable dataset", path, name);
  ct_status st = CT_OK;
  ct_dtype dt;
  hid_t sp = H5Dget_space(ds);
  int nd = H5Sget_simple_extent_ndims(sp);
  hsize_t dims[CT_MAX_DIMS];
  int64_t shape[CT_MAX_DIMS];
  ct_tensor *t = NULL;
  if (!dataset_dtype(ds, &dt)) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: dataset \"%s\": unsupported element type (%s; tensors hold numbers)", path, name,
                     class_name(ds));
  } else if (nd < 0 || nd > CT_MAX_DIMS) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: dataset \"%s\": rank %d exceeds %d", path, name, nd, CT_MAX_DIMS);
  } else if (H5Sget_simple_extent_type(sp) == H5S_NULL) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: dataset \"%s\": null dataspace (no value, not even a scalar)", path, name);
  } else if (H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: dataset \"%s\": unreadable dimensions", path, name);
  } else {
    char what[CT_H5_NAME_MAX + 64];
    snprintf(what, sizeof what, "%s: dataset \"%s\"", path, name);
    for (int i = 0; i < nd; i++) shape[i] = dims[i] > (hsize_t)INT64_MAX ? -1 : (int64_t)dims[i];
    int64_t bytes;
    if (!ct_shape_bytes(dt, nd, shape, &bytes))
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: dimensions overflow 64 bits", what);
    else if (!(st = ct_tensor_alloc(&t, dt, nd, shape, name, what, d)) && t->nbytes && H5Dread(ds, h5_type(dt), H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0)
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: dataset \"%s\": cannot read as %s", path, name, ct_dtype_name(dt));
  }
  if (!st) {
    void *sc, *zp, *ax;
    int ns = get_attr_arr(ds, "scale", H5T_NATIVE_DOUBLE, sizeof(double), &sc);
    int nz = get_attr_arr(ds, "zero_point", H5T_NATIVE_INT32, sizeof(int32_t), &zp);
    int na = get_attr_arr(ds, "quant_axis", H5T_NATIVE_INT32, sizeof(int32_t), &ax);
    if (ns < 0 || nz < 0 || na < 0 || (ns && nz && ns != nz))
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: dataset \"%s\": bad scale/zero_point attributes", path, name);
    else if (ns > 0 && !ct_tensor_set_quant(t, ns, na > 0 ? *(int32_t *)ax : 0, sc, nz ? zp : NULL))
      st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
    free(sc);
    free(zp);
    free(ax);
    get_attr_str(ds, "layout", t->layout, sizeof t->layout);
  }
  H5Sclose(sp);
  H5Dclose(ds);
  if (st) ct_tensor_free(t); else *out = t;
  return st;
}

typedef struct {
  const char *path;
  ct_tensor_list *out;
  ct_diag *d;
  ct_status st;
} read_ctx;

static herr_t read_iter(hid_t g, const char *link, const H5L_info_t *info, void *vctx) {
  (void)info;
  read_ctx *c = vctx;
  H5O_info_t oi;
  if (H5Oget_info_by_name2(g, link, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET)
    return 0;
  ct_tensor *t;
  if ((c->st = read_dataset(g, c->path, link, &t, c->d))) return -1;
  if (!ct_tensor_list_push(c->out, t)) {
    ct_tensor_free(t);
    c->st = ct_diag_set(c->d, CT_ERR_LIMIT, "%s: out of memory", c->path);
    return -1;
  }
  return 0;
}

static hid_t open_h5(const char *path, ct_diag *d) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  FILE *f = fopen(path, "rb");
  if (!f) {
    ct_diag_set(d, CT_ERR_INPUT, "%s: cannot open file", path);
    return -1;
  }
  fclose(f);
  if (H5Fis_hdf5(path) <= 0) {
    ct_diag_set(d, CT_ERR_INPUT, "%s: not an HDF5 file", path);
    return -1;
  }
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) ct_diag_set(d, CT_ERR_INPUT, "%s: corrupt HDF5 file", path);
  return file;
}

void ct_h5_preinit(void) {
  H5open();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

ct_status ct_h5_read_direct(const char *path, ct_tensor_list *out, ct_diag *d) {
  hid_t file = open_h5(path, d);
  if (file < 0) return d ? d->code : CT_ERR_INPUT;
  read_ctx c = {path, out, d, CT_OK};
  herr_t r = H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, NULL, read_iter, &c);
  H5Fclose(file);
  if (c.st) return c.st;
  if (r < 0) return ct_diag_set(d, CT_ERR_INPUT, "%s: corrupt HDF5 file (cannot list datasets)", path);
  return CT_OK;
}

ct_status ct_h5_read_one_direct(const char *path, const char *name, ct_tensor **out, ct_diag *d) {
  char esc[CT_H5_NAME_MAX];
  if (!ct_h5_escape(name, esc, sizeof esc))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor name too long", path);
  hid_t file = open_h5(path, d);
  if (file < 0) return d ? d->code : CT_ERR_INPUT;
  ct_status st;
  if (H5Lexists(file, esc, H5P_DEFAULT) <= 0)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: no dataset \"%s\"", path, name);
  else
    st = read_dataset(file, path, esc, out, d);
  H5Fclose(file);
  return st;
}
