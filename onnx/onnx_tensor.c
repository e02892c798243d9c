/* onnx_tensor.c: ONNX TensorProto → ct_tensor (raw_data, typed fields, external data) and
 * serialized TensorProto files. Storage rules from onnx.proto (TensorProto field comments)
 * and the ONNX IR spec "External Tensor Data" (onnx/docs/ExternalData.md). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "common/file.h"
#include "common/limits.h"
#include "onnx/onnx_internal.h"

/* Which repeated field holds the elements of a type when raw_data is absent. */
typedef enum { F_NONE, F_FLOAT, F_INT32, F_INT64, F_DOUBLE, F_UINT64 } typed_field;

static const struct {
  ct_dtype dt;
  typed_field field;
} typed_table[] = {
    {CT_F32, F_FLOAT},  {CT_U8, F_INT32},   {CT_I8, F_INT32},   {CT_U16, F_INT32},
    {CT_I16, F_INT32},  {CT_I32, F_INT32},  {CT_I64, F_INT64},  {CT_BOOL, F_INT32},
    {CT_F16, F_INT32},  {CT_F64, F_DOUBLE}, {CT_U32, F_UINT64}, {CT_U64, F_UINT64},
    {CT_BF16, F_INT32},
};

static typed_field field_of(ct_dtype dt) {
  for (size_t i = 0; i < sizeof typed_table / sizeof typed_table[0]; i++)
    if (typed_table[i].dt == dt) return typed_table[i].field;
  return F_NONE;
}

ct_status ct_onnx_read_message(const char *path, const ProtobufCMessageDescriptor *desc, const char *what,
                               ProtobufCMessage **out, ct_diag *d) {
  *out = NULL;
  char *buf;
  size_t n;
  ct_status st = ct_file_read(path, 0, &buf, &n, d);
  if (st) return st;
  *out = protobuf_c_message_unpack(desc, NULL, n, (const uint8_t *)buf);
  free(buf);
  if (!*out) return ct_diag_set(d, CT_ERR_INPUT, "%s: not a valid ONNX %s (protobuf parse failed, %zu bytes)", path, what, n);
  return CT_OK;
}

char *ct_onnx_path_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  char *s = malloc((size_t)(slash - path) + 1);
  if (s) {
    memcpy(s, path, (size_t)(slash - path));
    s[slash - path] = '\0';
  }
  return s;
}

static bool host_is_big_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 0;
}

/* Copies little-endian bytes into t->data, swapping each element on big-endian hosts. */
static void copy_le(ct_tensor *t, const uint8_t *src) {
  if (t->nbytes) memcpy(t->data, src, t->nbytes);
  size_t es = ct_dtype_size(t->dtype);
  if (es < 2 || !host_is_big_endian()) return;
  uint8_t *p = t->data;
  for (size_t i = 0; i < t->nbytes; i += es)
    for (size_t a = 0, b = es - 1; a < b; a++, b--) {
      uint8_t c = p[i + a];
      p[i + a] = p[i + b];
      p[i + b] = c;
    }
}

static const char *tname(const Onnx__TensorProto *tp) { return tp->name && tp->name[0] ? tp->name : "?"; }

/* Stores the elements of a typed field into t; count must equal numel. */
static ct_status copy_typed(const Onnx__TensorProto *tp, ct_tensor *t, const char *file, ct_diag *d) {
  typed_field f = field_of(t->dtype);
  size_t n = f == F_FLOAT ? tp->n_float_data : f == F_INT32 ? tp->n_int32_data
           : f == F_INT64 ? tp->n_int64_data : f == F_DOUBLE ? tp->n_double_data : tp->n_uint64_data;
  int64_t numel = ct_tensor_numel(t);
  if ((int64_t)n != numel)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": %zu elements stored, dims say %lld", file,
                       tname(tp), n, (long long)numel);
  for (size_t i = 0; i < n; i++) {
    switch (f) { /* one case per TensorProto storage field */
      case F_FLOAT: ((float *)t->data)[i] = tp->float_data[i]; break;
      case F_DOUBLE: ((double *)t->data)[i] = tp->double_data[i]; break;
      case F_INT64: ((int64_t *)t->data)[i] = tp->int64_data[i]; break;
      case F_UINT64:
        if (t->dtype == CT_U32) ((uint32_t *)t->data)[i] = (uint32_t)tp->uint64_data[i];
        else ((uint64_t *)t->data)[i] = tp->uint64_data[i];
        break;
      case F_INT32: {
        int32_t v = tp->int32_data[i];
        size_t es = ct_dtype_size(t->dtype);
        if (es == 1) ((uint8_t *)t->data)[i] = (uint8_t)v;
        else if (es == 2) ((uint16_t *)t->data)[i] = (uint16_t)v;
        else ((int32_t *)t->data)[i] = v;
        break;
      }
      case F_NONE: break;
    }
  }
  return CT_OK;
}

/* Parses a non-negative decimal integer; false on junk or overflow. */
static bool parse_u64(const char *s, uint64_t *v) {
  if (!s || !*s) return false;
  uint64_t x = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10) return false;
    x = x * 10 + (uint64_t)(*s - '0');
  }
  *v = x;
  return true;
}

static bool unsafe_location(const char *loc) {
  if (!loc[0] || loc[0] == '/') return true;
  for (const char *p = loc; *p;) {
    const char *e = strchr(p, '/');
    size_t k = e ? (size_t)(e - p) : strlen(p);
    if (k == 2 && p[0] == '.' && p[1] == '.') return true;
    p += k + (e ? 1 : 0);
  }
  return false;
}

char *ct_onnx_external_path(const Onnx__TensorProto *tp, const char *model_dir) {
  if (!tp->has_data_location || tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) return NULL;
  const char *loc = NULL;
  for (size_t i = 0; i < tp->n_external_data; i++)
    if (tp->external_data[i]->key && !strcmp(tp->external_data[i]->key, "location")) loc = tp->external_data[i]->value;
  if (!loc) return NULL;
  size_t n = (model_dir ? strlen(model_dir) : 1) + strlen(loc) + 2;
  char *path = malloc(n);
  if (path) snprintf(path, n, "%s/%s", model_dir ? model_dir : ".", loc);
  return path;
}

/* Reads external data: keys location, offset, length (onnx/docs/ExternalData.md). */
static ct_status copy_external(const Onnx__TensorProto *tp, const char *dir, ct_tensor *t, const char *file,
                               ct_diag *d) {
  const char *loc = NULL;
  uint64_t off = 0, len = t->nbytes;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const char *k = tp->external_data[i]->key ? tp->external_data[i]->key : "";
    const char *v = tp->external_data[i]->value;
    bool ok = true;
    if (!strcmp(k, "location")) loc = v;
    else if (!strcmp(k, "offset")) ok = parse_u64(v, &off);
    else if (!strcmp(k, "length")) ok = parse_u64(v, &len);
    if (!ok)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": external data %s \"%s\" is not a number", file,
                         tname(tp), k, v ? v : "");
  }
  if (!loc || unsafe_location(loc))
    return ct_diag_set(d, CT_ERR_INPUT,
                       "%s: tensor \"%s\": external data location \"%s\" is missing or outside the model folder", file,
                       tname(tp), loc ? loc : "");
  if (len != t->nbytes)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": external data length %llu, dims need %zu bytes", file,
                       tname(tp), (unsigned long long)len, t->nbytes);
  char *path = ct_onnx_external_path(tp, dir);
  if (!path) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", file);
  FILE *f = fopen(path, "rb");
  ct_status st = CT_OK;
  if (!f) {
    st = ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": external data file %s: %s", file, tname(tp), path,
                     strerror(errno));
  } else {
    uint8_t *buf = malloc(t->nbytes ? t->nbytes : 1);
    if (!buf) st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", file);
    else if (off > (uint64_t)LONG_MAX || fseek(f, (long)off, SEEK_SET) != 0 || fread(buf, 1, t->nbytes, f) != t->nbytes)
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": external data file %s is shorter than offset %llu + %zu bytes",
                       file, tname(tp), path, (unsigned long long)off, t->nbytes);
    else copy_le(t, buf);
    free(buf);
    fclose(f);
  }
  free(path);
  return st;
}

/* Validates the type and dims and allocates the (zeroed) tensor. */
static ct_status new_for_proto(const Onnx__TensorProto *tp, const char *file, ct_tensor **out, ct_diag *d) {
  ct_dtype dt;
  int ty = tp->has_data_type ? tp->data_type : 0;
  if (!ct_dtype_from_onnx(ty, &dt))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": unsupported tensor type %d", file, tname(tp), ty);
  if (tp->n_dims > CT_MAX_DIMS)
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: tensor \"%s\": %zu dims, at most %d supported", file, tname(tp),
                       tp->n_dims, CT_MAX_DIMS);
  for (size_t i = 0; i < tp->n_dims; i++)
    if (tp->dims[i] < 0)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": dim %zu is negative (%lld)", file, tname(tp), i,
                         (long long)tp->dims[i]);
  int64_t bytes;
  if (!ct_shape_bytes(dt, (int)tp->n_dims, tp->dims, &bytes))
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: tensor \"%s\": size overflows 64 bits", file, tname(tp));
  if (tp->segment)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": segmented tensors are unsupported", file, tname(tp));
  bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  uint64_t supplied = (tp->has_raw_data ? tp->raw_data.len : 0) + tp->n_float_data + tp->n_int32_data +
                      tp->n_int64_data + tp->n_double_data + tp->n_uint64_data;
  int64_t numel = ct_shape_numel((int)tp->n_dims, tp->dims);
  /* guard against corrupt dims before allocating; small mismatches get the exact message below */
  if (!external && (uint64_t)numel > supplied && numel > (1 << 20))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": dims need %lld elements, the data holds at most %llu",
                       file, tname(tp), (long long)numel, (unsigned long long)supplied);
  const char *nm = tp->name && tp->name[0] ? tp->name : NULL;
  char what[512];
  snprintf(what, sizeof what, "%.256s: tensor \"%.200s\"", file, tname(tp));
  return ct_tensor_alloc(out, dt, (int)tp->n_dims, tp->dims, nm, what, d);
}

ct_status ct_onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *model_dir, const char *file,
                                    ct_tensor **out, ct_diag *d) {
  *out = NULL;
  ct_tensor *t = NULL;
  ct_status st = new_for_proto(tp, file, &t, d);
  if (st) return st;
  if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    st = copy_external(tp, model_dir, t, file, d);
  } else if (tp->has_raw_data) {
    if (tp->raw_data.len != t->nbytes)
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: tensor \"%s\": raw_data has %zu bytes, dims need %zu", file, tname(tp),
                       tp->raw_data.len, t->nbytes);
    else copy_le(t, tp->raw_data.data);
  } else {
    st = copy_typed(tp, t, file, d);
  }
  if (st) {
    ct_tensor_free(t);
    return st;
  }
  *out = t;
  return CT_OK;
}

ct_status ct_onnx_read_tensor_pb(const char *path, ct_tensor **out, ct_diag *d) {
  *out = NULL;
  ProtobufCMessage *msg;
  ct_status st = ct_onnx_read_message(path, &onnx__tensor_proto__descriptor, "TensorProto", &msg, d);
  if (st) return st;
  char *dir = ct_onnx_path_dir(path);
  st = dir ? ct_onnx_tensor_from_proto((Onnx__TensorProto *)msg, dir, path, out, d)
           : ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  free(dir);
  protobuf_c_message_free_unpacked(msg, NULL);
  return st;
}

ct_status ct_onnx_read_tensor_pb_into(const char *path, ct_tensor_list *l, ct_diag *d) {
  ct_tensor *t = NULL;
  ct_status st = ct_onnx_read_tensor_pb(path, &t, d);
  if (st) return st;
  if (!ct_tensor_list_push(l, t)) {
    ct_tensor_free(t);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  }
  return CT_OK;
}
