/* dataset.c: data sets of samples (see dataset.h): folders, labels.tsv, list files, HDF5
 * `images`/`labels` arrays, single input files. Samples are loaded on demand. */
#include "io/dataset.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/file.h"
#include "io/image.h"
#include "io/inputs.h"

typedef enum ds_kind { DS_FILES, DS_H5_U8, DS_H5_F32 } ds_kind;

typedef struct ds_sample {
  char **files; /* owned paths */
  int nf;
} ds_sample;

struct ct_dataset {
  const ct_graph *g;
  ds_kind kind;
  char *path;
  int64_t n, cap;
  ds_sample *samples; /* DS_FILES */
  int64_t *labels;    /* n entries, or NULL */
  ct_tensor *images;  /* DS_H5_*: N×... */
  const ct_op *input; /* DS_H5_*: the single Input op */
  int64_t ih, iw, ic; /* DS_H5_U8: image height, width, channels */
  pthread_mutex_t lock; /* serializes loads of non-image files (HDF5 is not thread-safe) */
};

void ct_dataset_free(ct_dataset *ds) {
  if (!ds) return;
  for (int64_t i = 0; ds->samples && i < ds->n; i++) {
    for (int k = 0; k < ds->samples[i].nf; k++) free(ds->samples[i].files[k]);
    free(ds->samples[i].files);
  }
  free(ds->samples);
  free(ds->labels);
  ct_tensor_free(ds->images);
  free(ds->path);
  pthread_mutex_destroy(&ds->lock);
  free(ds);
}

int64_t ct_dataset_size(const ct_dataset *ds) { return ds->n; }
bool ct_dataset_has_labels(const ct_dataset *ds) { return ds->labels != NULL; }

int64_t ct_dataset_label(const ct_dataset *ds, int64_t i) {
  return ds->labels && i >= 0 && i < ds->n ? ds->labels[i] : -1;
}

const char *ct_dataset_sample_name(const ct_dataset *ds, int64_t i, char *buf, size_t n) {
  if (ds->kind == DS_FILES && i >= 0 && i < ds->n) {
    const char *f = ds->samples[i].files[0], *slash = strrchr(f, '/');
    snprintf(buf, n, "%s%s", slash ? slash + 1 : f, ds->samples[i].nf > 1 ? ",..." : "");
  } else {
    snprintf(buf, n, "%s[%lld]", ds->path, (long long)i);
  }
  return buf;
}

int ct_dataset_sample_files(const ct_dataset *ds, int64_t i, const char *const **files) {
  if (ds->kind != DS_FILES || i < 0 || i >= ds->n) return 0;
  *files = (const char *const *)ds->samples[i].files;
  return ds->samples[i].nf;
}

/* ---- building the sample list ---- */

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* dir + "/" + name, or name when absolute (malloc). */
static char *join(const char *dir, const char *name) {
  if (name[0] == '/' || !dir[0]) return strdup(name);
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Folder of a file path ("." when none; malloc). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  size_t n = (size_t)(slash - path);
  char *p = malloc(n + 2);
  if (p) {
    memcpy(p, path, n ? n : 1);
    p[n ? n : 1] = '\0';
  }
  return p;
}

/* Appends a sample of nf files (each joined to dir) with a label (-1 none). */
static ct_status add_sample(ct_dataset *ds, const char *dir, char **names, int nf, int64_t label, ct_diag *d) {
  if (ds->n == ds->cap) {
    int64_t cap = ds->cap ? ds->cap * 2 : 64;
    ds_sample *s = realloc(ds->samples, sizeof *s * (size_t)cap);
    if (s) ds->samples = s;
    int64_t *l = s ? realloc(ds->labels, sizeof *l * (size_t)cap) : NULL;
    if (!s || !l) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", ds->path);
    ds->labels = l;
    ds->cap = cap;
  }
  ds_sample *s = &ds->samples[ds->n];
  s->nf = 0;
  s->files = calloc((size_t)nf, sizeof *s->files);
  if (!s->files) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", ds->path);
  ds->labels[ds->n++] = label;
  for (int k = 0; k < nf; k++) {
    if (!(s->files[k] = join(dir, names[k]))) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", ds->path);
    s->nf++;
  }
  return CT_OK;
}

/* Reads a whole text file (malloc, NUL-terminated). */
/* Next line of *p (split in place, '\r' stripped); NULL at the end. */
static char *next_line(char **p) {
  if (!**p) return NULL;
  char *line = *p, *nl = strchr(line, '\n');
  if (nl) *nl = '\0', *p = nl + 1;
  else *p = line + strlen(line);
  size_t n = strlen(line);
  if (n && line[n - 1] == '\r') line[n - 1] = '\0';
  return line;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
  return s;
}

/* labels.tsv rows: file TAB class_index [TAB ...]; a header row is skipped. */
static ct_status parse_labels(ct_dataset *ds, const char *tsv, char *text, ct_diag *d) {
  char *dir = dir_of(tsv), *p = text, *line;
  if (!dir) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", tsv);
  ct_status st = CT_OK;
  for (int ln = 1; st == CT_OK && (line = next_line(&p)); ln++) {
    if (!*trim(line)) continue;
    char *tab = strchr(line, '\t');
    char *end = NULL;
    long long cls = tab ? strtoll(tab + 1, &end, 10) : 0;
    bool ok = tab && end != tab + 1 && (*end == '\0' || *end == '\t') && cls >= 0;
    if (!ok && ln == 1) continue; /* header */
    if (!ok) {
      st = ct_diag_set(d, CT_ERR_INPUT, "%s:%d: expected \"file<TAB>class_index\"", tsv, ln);
      break;
    }
    *tab = '\0';
    st = add_sample(ds, dir, &line, 1, cls, d);
  }
  free(dir);
  return st;
}

/* A list: one sample per line, files separated by ','. */
static ct_status parse_list(ct_dataset *ds, char *text, ct_diag *d) {
  char *dir = dir_of(ds->path), *p = text, *line;
  char *names[64];
  if (!dir) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", ds->path);
  ct_status st = CT_OK;
  for (int ln = 1; st == CT_OK && (line = next_line(&p)); ln++) {
    line = trim(line);
    if (!*line || *line == '#') continue;
    int nf = 0;
    char *tok = strtok(line, ",");
    for (; tok && nf < 64; tok = strtok(NULL, ",")) names[nf++] = trim(tok);
    if (tok) st = ct_diag_set(d, CT_ERR_INPUT, "%s:%d: more than 64 files in one sample", ds->path, ln);
    for (int k = 0; k < nf && st == CT_OK; k++)
      if (!*names[k]) st = ct_diag_set(d, CT_ERR_INPUT, "%s:%d: empty file name", ds->path, ln);
    if (st == CT_OK) st = add_sample(ds, dir, names, nf, -1, d);
  }
  free(dir);
  return st;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every image, .h5 and .pb file of a folder, sorted by name. */
static ct_status scan_dir(ct_dataset *ds, ct_diag *d) {
  DIR *dir = opendir(ds->path);
  if (!dir) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot read folder: %s", ds->path, strerror(errno));
  char **names = NULL;
  int64_t n = 0, cap = 0;
  ct_status st = CT_OK;
  struct dirent *e;
  while (st == CT_OK && (e = readdir(dir))) {
    if (e->d_name[0] == '.') continue;
    char *full = join(ds->path, e->d_name);
    struct stat sb;
    bool keep = full && stat(full, &sb) == 0 && S_ISREG(sb.st_mode) &&
                (ends_with(e->d_name, ".h5") || ends_with(e->d_name, ".pb") || ct_image_is_image_file(full));
    free(full);
    if (!keep) continue;
    if (n == cap) {
      char **nn = realloc(names, sizeof *nn * (size_t)(cap = cap ? cap * 2 : 64));
      if (!nn) break;
      names = nn;
    }
    if (!(names[n] = strdup(e->d_name))) break;
    n++;
  }
  closedir(dir);
  if (e) st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", ds->path);
  if (names) qsort(names, (size_t)n, sizeof *names, cmp_str);
  for (int64_t i = 0; st == CT_OK && i < n; i++) st = add_sample(ds, ds->path, &names[i], 1, -1, d);
  for (int64_t i = 0; i < n; i++) free(names[i]);
  free(names);
  if (st == CT_OK) {
    free(ds->labels);
    ds->labels = NULL;
  }
  return st;
}

/* ---- HDF5 `images` / `labels` ---- */

static bool is_hdf5(const char *path) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char b[8];
  FILE *f = fopen(path, "rb");
  bool ok = f && fread(b, 1, 8, f) == 8 && memcmp(b, sig, 8) == 0;
  if (f) fclose(f);
  return ok;
}

/* Checks the `images` array against the model's single input and sets ds's kind. */
static ct_status check_images(ct_dataset *ds, ct_diag *d) {
  const ct_tensor *im = ds->images;
  const ct_value *in = ds->input->out[0];
  char s1[128], s2[128];
  if (im->ndim < 2 || im->shape[0] < 1)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: images: expected N images, shape %s", ds->path, ct_shape_str(im->ndim, im->shape, s1, sizeof s1));
  ds->n = im->shape[0];
  if (im->dtype == CT_F32) {
    bool ok = in->ndim == im->ndim && in->shape[0] == 1;
    for (int i = 1; ok && i < im->ndim; i++) ok = in->shape[i] == im->shape[i];
    if (!ok)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: f32 images of shape %s do not match input \"%s\" %s (N x the input without its batch)",
                         ds->path, ct_shape_str(im->ndim, im->shape, s1, sizeof s1), in->name, ct_shape_str(in->ndim, in->shape, s2, sizeof s2));
    ds->kind = DS_H5_F32;
    return CT_OK;
  }
  if (im->dtype != CT_U8 || (im->ndim != 3 && im->ndim != 4))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: images must be u8 NxHxW or NxHxWxC, or f32 inputs; got %s %s", ds->path,
                       ct_dtype_name(im->dtype), ct_shape_str(im->ndim, im->shape, s1, sizeof s1));
  ds->ih = im->shape[1], ds->iw = im->shape[2], ds->ic = im->ndim == 4 ? im->shape[3] : 1;
  if (ds->ic != 1 && ds->ic != 3)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: images have %lld channels (NxHxWxC); expected 1 or 3", ds->path, (long long)ds->ic);
  if (ds->ih < 1 || ds->iw < 1) return ct_diag_set(d, CT_ERR_INPUT, "%s: images are empty (%s)", ds->path, ct_shape_str(im->ndim, im->shape, s1, sizeof s1));
  ct_image_prep p;
  ct_status st = ct_image_prep_from_op(ds->input, &p, d);
  if (st == CT_OK) ds->kind = DS_H5_U8;
  return st;
}

static ct_status read_labels(ct_dataset *ds, ct_diag *d) {
  ct_tensor *l = NULL;
  ct_diag ignore;
  if (ct_h5_read_one(ds->path, "labels", &l, &ignore) != CT_OK) return CT_OK; /* unlabeled */
  ct_status st = CT_OK;
  if (ct_dtype_is_float(l->dtype) || ct_tensor_numel(l) != ds->n)
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: labels must be %lld integers (one per image), got %lld %s", ds->path,
                     (long long)ds->n, (long long)ct_tensor_numel(l), ct_dtype_name(l->dtype));
  else if (!(ds->labels = malloc(sizeof *ds->labels * (size_t)ds->n)))
    st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", ds->path);
  for (int64_t i = 0; st == CT_OK && i < ds->n; i++) ds->labels[i] = ct_tensor_get_i64(l, i);
  ct_tensor_free(l);
  return st;
}

/* An HDF5 file: an `images` data set, or else one sample of model inputs. */
static ct_status open_h5(ct_dataset *ds, ct_diag *d) {
  ct_diag ignore;
  if (ct_h5_read_one(ds->path, "images", &ds->images, &ignore) != CT_OK) {
    char *name = (char *)ds->path;
    return add_sample(ds, "", &name, 1, -1, d);
  }
  ct_value *ins[2];
  int n_in = ct_graph_inputs(ds->g, ins, 2);
  if (n_in != 1)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: an HDF5 images data set needs a model with one input, this one has %d", ds->path, n_in);
  ds->input = ins[0]->def;
  ct_status st = check_images(ds, d);
  return st ? st : read_labels(ds, d);
}

ct_status ct_dataset_open(const char *path, const ct_graph *g, ct_dataset **out, ct_diag *d) {
  *out = NULL;
  ct_dataset *ds = calloc(1, sizeof *ds);
  if (!ds || !(ds->path = strdup(path))) {
    free(ds);
    return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  pthread_mutex_init(&ds->lock, NULL);
  ds->g = g;
  struct stat sb;
  ct_status st = CT_OK;
  char *text = NULL;
  if (stat(path, &sb) != 0) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
  } else if (S_ISDIR(sb.st_mode)) {
    char *tsv = join(path, "labels.tsv");
    if (!tsv) st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    else if (stat(tsv, &sb) == 0) st = ct_file_read(tsv, 0, &text, NULL, d), st = st ? st : parse_labels(ds, tsv, text, d);
    else st = scan_dir(ds, d);
    free(tsv);
  } else if (ends_with(path, ".tsv")) {
    st = ct_file_read(path, 0, &text, NULL, d);
    if (st == CT_OK) st = parse_labels(ds, path, text, d);
  } else if (is_hdf5(path)) {
    st = open_h5(ds, d);
  } else if (ends_with(path, ".pb") || ct_image_is_image_file(path)) {
    st = add_sample(ds, "", (char **)&path, 1, -1, d);
  } else {
    st = ct_file_read(path, 0, &text, NULL, d);
    if (st == CT_OK) st = parse_list(ds, text, d);
  }
  free(text);
  if (st == CT_OK && ds->n == 0) st = ct_diag_set(d, CT_ERR_INPUT, "%s: no sample (no image, .h5 or .pb file)", path);
  if (st == CT_OK && ds->kind == DS_FILES) {
    bool all = true; /* labels only when every sample has one */
    for (int64_t i = 0; ds->labels && i < ds->n; i++) all = all && ds->labels[i] >= 0;
    if (!all) free(ds->labels), ds->labels = NULL;
  }
  if (st) ct_dataset_free(ds);
  else *out = ds;
  return st;
}

/* ---- loading a sample ---- */

/* Gray u8 image of the input's own size into a gray input: x = (pixel − mean)·scale. */
static bool direct_gray(const ct_dataset *ds, const ct_image_prep *p, const ct_value *in) {
  int64_t h = in->shape[2], w = in->shape[3];
  return ds->ic == 1 && p->format == CT_PIX_GRAY && in->shape[1] == 1 && ds->ih == h && ds->iw == w &&
         (p->resize_h == 0 || p->resize_h == h) && (p->resize_w == 0 || p->resize_w == w);
}

static ct_status load_u8(const ct_dataset *ds, int64_t i, ct_tensor **t, ct_diag *d) {
  const ct_value *in = ds->input->out[0];
  ct_image_prep p;
  ct_status st = ct_image_prep_from_op(ds->input, &p, d);
  if (st) return st;
  int64_t px = ds->ih * ds->iw;
  const uint8_t *src = (const uint8_t *)ds->images->data + i * px * ds->ic;
  if (direct_gray(ds, &p, in)) {
    if (!(*t = ct_tensor_new(CT_F32, in->ndim, in->shape, in->name))) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    double mean = p.n_mean ? p.mean[0] : 0.0, scale = p.n_scale ? p.scale[0] : 1.0;
    float *x = (*t)->data;
    for (int64_t k = 0; k < px; k++) x[k] = (float)(((double)src[k] - mean) * scale);
    return CT_OK;
  }
  ct_image img = {ds->ih, ds->iw, malloc((size_t)px * 3)};
  if (!img.rgb) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  for (int64_t k = 0; k < px; k++)
    for (int c = 0; c < 3; c++) img.rgb[k * 3 + c] = src[k * ds->ic + (ds->ic == 3 ? c : 0)];
  st = ct_image_preprocess(&img, &p, in->shape[1], in->shape[2], in->shape[3], in->name, t, d);
  ct_image_free(&img);
  return st;
}

static ct_status load_f32(const ct_dataset *ds, int64_t i, ct_tensor **t, ct_diag *d) {
  const ct_value *in = ds->input->out[0];
  if (!(*t = ct_tensor_new(CT_F32, in->ndim, in->shape, in->name))) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  memcpy((*t)->data, (const char *)ds->images->data + (size_t)i * (*t)->nbytes, (*t)->nbytes);
  return CT_OK;
}

static bool needs_lock(const ds_sample *s) {
  for (int k = 0; k < s->nf; k++)
    if (!ct_image_is_image_file(s->files[k]) && !ends_with(s->files[k], ".pb")) return true;
  return false;
}

ct_status ct_dataset_load(const ct_dataset *ds, int64_t i, ct_tensor_list *out, ct_diag *d) {
  if (i < 0 || i >= ds->n) return ct_diag_set(d, CT_ERR_USAGE, "%s: sample %lld out of range", ds->path, (long long)i);
  if (ds->kind == DS_FILES) {
    const ds_sample *s = &ds->samples[i];
    bool lock = needs_lock(s);
    if (lock) pthread_mutex_lock((pthread_mutex_t *)&ds->lock);
    ct_status st = ct_inputs_load(ds->g, (const char *const *)s->files, s->nf, out, d);
    if (lock) pthread_mutex_unlock((pthread_mutex_t *)&ds->lock);
    return st;
  }
  ct_tensor *t = NULL;
  ct_status st = ds->kind == DS_H5_U8 ? load_u8(ds, i, &t, d) : load_f32(ds, i, &t, d);
  if (st == CT_OK && !ct_tensor_list_push(out, t)) {
    ct_tensor_free(t);
    st = ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  }
  return st;
}
