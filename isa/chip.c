/* chip.c: chip configuration from isa/chip.def: defaults, JSON parsing with per-key errors
 * (cJSON), validation, JSON dump and the FNV-1a 64 signature (Fowler, Noll, Vo; the
 * offset basis 14695981039346656037 and prime 1099511628211 of the 64-bit variant). */
#include "isa/chip.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"

/* A chip file larger than this is not a chip description (the keys of chip.def fit in a few KiB). */
#define CT_CHIP_FILE_MAX_BYTES ((uint64_t)1 << 24)

typedef enum key_type { T_STR, T_INT, T_F64, T_DATAFLOW, T_COUNT } key_type;

typedef struct key_info {
  const char *key;
  key_type type;
  double lo, hi;
  int flags;
  const char *doc;
  size_t offset;
} key_info;

static const key_info keys[] = {
#define CT_CHIP_KEY(m, key, T, def, lo, hi, flags, doc) {key, T_##T, lo, hi, flags, doc, offsetof(ct_chip, m)},
#include "isa/chip.def"
#undef CT_CHIP_KEY
};
#define N_KEYS (sizeof keys / sizeof keys[0])

static const char *const dataflow_names[] = {"ws", "os"}; /* ct_dataflow order */
_Static_assert(sizeof dataflow_names / sizeof dataflow_names[0] == CT_DATAFLOW_OS + 1, "dataflow_names");

#define SET_STR(c, m, def) snprintf((c)->m, sizeof (c)->m, "%s", def);
#define SET_INT(c, m, def) (c)->m = (int64_t)(def);
#define SET_F64(c, m, def) (c)->m = (double)(def);
#define SET_DATAFLOW(c, m, def) (c)->m = def;

void ct_chip_default(ct_chip *c) {
  memset(c, 0, sizeof *c);
#define CT_CHIP_KEY(m, key, T, def, lo, hi, flags, doc) SET_##T(c, m, def)
#include "isa/chip.def"
#undef CT_CHIP_KEY
}

static const key_info *find_key(const char *key) {
  for (size_t i = 0; i < N_KEYS; i++)
    if (strcmp(keys[i].key, key) == 0) return &keys[i];
  return NULL;
}

/* Value of a numeric key as double (for range checks and the dump). */
static double key_number(const ct_chip *c, const key_info *k) {
  const char *p = (const char *)c + k->offset;
  if (k->type == T_INT) {
    int64_t v;
    memcpy(&v, p, sizeof v);
    return (double)v;
  }
  if (k->type == T_F64) {
    double v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  ct_dataflow v;
  memcpy(&v, p, sizeof v);
  return (double)v;
}

static ct_status check_key(const ct_chip *c, const key_info *k, const char *fname, ct_diag *d) {
  if (k->type == T_STR) {
    size_t n = strlen((const char *)c + k->offset);
    if (n < (size_t)k->lo || n > (size_t)k->hi)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: length %zu is outside %g..%g", fname, k->key, n, k->lo, k->hi);
    return CT_OK;
  }
  double v = key_number(c, k);
  if (k->type == T_DATAFLOW) return CT_OK;
  if (!(v >= k->lo && v <= k->hi))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: %.17g is outside %.17g..%.17g", fname, k->key, v, k->lo, k->hi);
  if ((k->flags & CT_CHIP_POW2) && k->type == T_INT) {
    int64_t iv = (int64_t)v;
    if (iv <= 0 || (iv & (iv - 1)) != 0)
      return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: %lld is not a power of two", fname, k->key, (long long)iv);
  }
  return CT_OK;
}

ct_status ct_chip_validate(const ct_chip *c, const char *fname, ct_diag *d) {
  if (!fname) fname = "chip";
  for (size_t i = 0; i < N_KEYS; i++) {
    ct_status st = check_key(c, &keys[i], fname, d);
    if (st) return st;
  }
  if (c->lmem_bytes % c->lmem_banks != 0)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: lmem.banks: %lld does not divide lmem.bytes %lld", fname,
                       (long long)c->lmem_banks, (long long)c->lmem_bytes);
  return CT_OK;
}

/* Stores one JSON value into key k of c, checking its JSON type. */
static ct_status set_key(ct_chip *c, const key_info *k, const cJSON *v, const char *fname, ct_diag *d) {
  char *p = (char *)c + k->offset;
  static const char *const type_names[] = {"a string", "an integer", "a number", "\"ws\" or \"os\""};
  _Static_assert(sizeof type_names / sizeof type_names[0] == T_COUNT, "type_names");
  if (k->type == T_STR || k->type == T_DATAFLOW) {
    if (!cJSON_IsString(v)) goto wrong;
    if (k->type == T_STR) {
      if (strlen(v->valuestring) >= CT_CHIP_NAME_MAX)
        return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: longer than %d bytes", fname, k->key, CT_CHIP_NAME_MAX - 1);
      snprintf(p, CT_CHIP_NAME_MAX, "%s", v->valuestring);
      return CT_OK;
    }
    for (int i = 0; i < 2; i++)
      if (strcmp(v->valuestring, dataflow_names[i]) == 0) {
        ct_dataflow df = (ct_dataflow)i;
        memcpy(p, &df, sizeof df);
        return CT_OK;
      }
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: \"%s\" is not \"ws\" or \"os\"", fname, k->key, v->valuestring);
  }
  if (!cJSON_IsNumber(v)) goto wrong;
  double x = v->valuedouble;
  if (k->type == T_F64) {
    memcpy(p, &x, sizeof x);
    return CT_OK;
  }
  if (!(x >= k->lo && x <= k->hi))
    return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: %.17g is outside %.17g..%.17g", fname, k->key, x, k->lo, k->hi);
  if (x != floor(x)) return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: %.17g is not an integer", fname, k->key, x);
  int64_t iv = (int64_t)x;
  memcpy(p, &iv, sizeof iv);
  return CT_OK;
wrong:
  return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: expected %s", fname, k->key, type_names[k->type]);
}

/* True if some key starts with "prefix." (prefix names a section such as "mxu"). */
static bool is_section(const char *prefix) {
  size_t n = strlen(prefix);
  for (size_t i = 0; i < N_KEYS; i++)
    if (!strncmp(keys[i].key, prefix, n) && keys[i].key[n] == '.') return true;
  return false;
}

/* Walks an object; nested objects extend the dotted key prefix. */
static ct_status walk(ct_chip *c, const cJSON *obj, const char *prefix, const char *fname, ct_diag *d) {
  for (const cJSON *it = obj->child; it; it = it->next) {
    char key[256];
    snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", it->string ? it->string : "");
    for (const cJSON *e = obj->child; e != it; e = e->next)
      if (e->string && it->string && !strcmp(e->string, it->string))
        return ct_diag_set(d, CT_ERR_INPUT, "%s: %s: duplicate key", fname, key);
    const key_info *k = find_key(key);
    ct_status st;
    if (!k && is_section(key))
      st = cJSON_IsObject(it) ? walk(c, it, key, fname, d)
                              : ct_diag_set(d, CT_ERR_INPUT, "%s: %s: expected an object (a section of keys)", fname, key);
    else if (!k) st = ct_diag_set(d, CT_ERR_INPUT, "%s: %s: unknown key", fname, key);
    else st = set_key(c, k, it, fname, d);
    if (st) return st;
  }
  return CT_OK;
}

/* Deepest nesting of [ and { outside strings; stops counting past limit. */
static int json_depth(const char *s, int limit) {
  int depth = 0, max = 0;
  bool in_str = false;
  for (; *s && max <= limit; s++) {
    if (in_str) {
      if (*s == '\\' && s[1]) s++;
      else if (*s == '"') in_str = false;
    } else if (*s == '"') {
      in_str = true;
    } else if (*s == '[' || *s == '{') {
      if (++depth > max) max = depth;
    } else if (*s == ']' || *s == '}') {
      depth--;
    }
  }
  return max;
}

#define CHIP_MAX_NESTING 16

ct_status ct_chip_parse(const char *json, const char *fname, ct_chip *c, ct_diag *d) {
  if (!fname) fname = "chip";
  if (json_depth(json, CHIP_MAX_NESTING) > CHIP_MAX_NESTING)
    return ct_diag_set(d, CT_ERR_INPUT, "%s: JSON nested deeper than %d levels (a chip file has 2)", fname, CHIP_MAX_NESTING);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
  if (!root) {
    size_t off = end && end >= json ? (size_t)(end - json) : 0;
    return ct_diag_set(d, CT_ERR_INPUT, "%s: byte %zu: invalid JSON", fname, off);
  }
  ct_chip tmp;
  ct_chip_default(&tmp);
  ct_status st = cJSON_IsObject(root) ? walk(&tmp, root, "", fname, d)
                                      : ct_diag_set(d, CT_ERR_INPUT, "%s: expected a JSON object", fname);
  cJSON_Delete(root);
  if (!st) st = ct_chip_validate(&tmp, fname, d);
  if (!st) *c = tmp;
  return st;
}

ct_status ct_chip_load(const char *path, ct_chip *c, ct_diag *d) {
  if (!path) {
    ct_chip_default(c);
    return CT_OK;
  }
  char *buf;
  ct_status st = ct_file_read(path, CT_CHIP_FILE_MAX_BYTES, &buf, NULL, d);
  if (st) return st;
  st = ct_chip_parse(buf, path, c, d);
  free(buf);
  return st;
}

/* Adds value of key k under its dotted path in root (creating sub-objects). */
static bool dump_key(cJSON *root, const ct_chip *c, const key_info *k) {
  cJSON *obj = root;
  char part[64];
  const char *s = k->key, *dot;
  while ((dot = strchr(s, '.')) != NULL) {
    snprintf(part, sizeof part, "%.*s", (int)(dot - s), s);
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(obj, part);
    if (!sub && !(sub = cJSON_AddObjectToObject(obj, part))) return false;
    obj = sub;
    s = dot + 1;
  }
  const char *p = (const char *)c + k->offset;
  if (k->type == T_STR) return cJSON_AddStringToObject(obj, s, p) != NULL;
  if (k->type == T_DATAFLOW) return cJSON_AddStringToObject(obj, s, dataflow_names[(int)key_number(c, k) & 1]) != NULL;
  return cJSON_AddNumberToObject(obj, s, key_number(c, k)) != NULL;
}

char *ct_chip_to_json(const ct_chip *c) {
  cJSON *root = cJSON_CreateObject();
  char *out = NULL;
  bool ok = root != NULL;
  for (size_t i = 0; ok && i < N_KEYS; i++) ok = dump_key(root, c, &keys[i]);
  if (ok) out = cJSON_Print(root);
  cJSON_Delete(root);
  return out;
}

uint64_t ct_chip_signature(const ct_chip *c) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (size_t i = 0; i < N_KEYS; i++) {
    if (!(keys[i].flags & CT_CHIP_SIG)) continue;
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s=%lld;", keys[i].key, (long long)key_number(c, &keys[i]));
    for (int j = 0; j < n; j++) {
      h ^= (unsigned char)buf[j];
      h *= UINT64_C(1099511628211);
    }
  }
  return h;
}

void ct_chip_doc_table(FILE *f) {
  static const char *const type_names[] = {"string", "integer", "number", "`ws` or `os`"};
  _Static_assert(sizeof type_names / sizeof type_names[0] == T_COUNT, "type_names");
  ct_chip c;
  ct_chip_default(&c);
  fprintf(f, "| key | type | default | range | meaning |\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < N_KEYS; i++) {
    const key_info *k = &keys[i];
    char def[80], range[96];
    if (k->type == T_STR) snprintf(def, sizeof def, "`%s`", (const char *)&c + k->offset);
    else if (k->type == T_DATAFLOW) snprintf(def, sizeof def, "`%s`", dataflow_names[(int)key_number(&c, k) & 1]);
    else snprintf(def, sizeof def, "%.17g", key_number(&c, k));
    if (k->type == T_DATAFLOW) range[0] = '\0';
    else snprintf(range, sizeof range, "%s%.17g .. %.17g%s", k->type == T_STR ? "length " : "", k->lo, k->hi,
                  k->flags & CT_CHIP_POW2 ? ", power of two" : "");
    fprintf(f, "| `%s` | %s | %s | %s | %s%s |\n", k->key, type_names[k->type], def, range, k->doc,
            k->flags & CT_CHIP_SIG ? " (in the signature)" : "");
  }
}
