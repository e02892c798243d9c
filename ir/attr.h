/* attr.h: the attribute schemas of ir/ops.def and the typed accessors generated from them.
 * Code reads an attribute as ct_attr_<set>_<name>(op): a misspelled set or attribute name is
 * a compile error, and the default comes from the table (it is written nowhere else). */
#ifndef CT_IR_ATTR_H
#define CT_IR_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Attribute sets: groups of attributes that ops accept (an op names up to three). */
typedef enum ct_attr_set {
#define ASET(set) CT_ASET_##set,
#include "ir/ops.def"
  CT_ASET_COUNT
} ct_attr_set;

/* Schema type of an attribute; NUM accepts INT or FLOAT (ConstantOfShape's value). */
typedef enum ct_attr_type {
  CT_AT_INT, CT_AT_FLOAT, CT_AT_STRING, CT_AT_INTS, CT_AT_FLOATS, CT_AT_STRINGS, CT_AT_NUM
} ct_attr_type;

/* How many values an attribute holds (ops.def's LEN column): a scalar, any count, or a count
 * fixed by the rank r of the op's operand 0 (SPATIAL r − 2, PADS 2 (r − 2), RANK r) or TWO. */
typedef enum ct_attr_len {
  CT_ALEN_ONE, CT_ALEN_ANY, CT_ALEN_SPATIAL, CT_ALEN_PADS, CT_ALEN_RANK, CT_ALEN_TWO
} ct_attr_len;

/* The most values a fixed-length list attribute holds (PADS of a rank-CT_MAX_DIMS operand). */
#define CT_ATTR_LIST_MAX (2 * CT_MAX_DIMS)

/* One A(...) row of ir/ops.def. dflt is the default as written in the table (text). */
typedef struct ct_attr_schema {
  ct_attr_set set;
  const char *name;
  ct_attr_type type;
  const char *dflt;
  ct_attr_len len;
  const char *doc;
} ct_attr_schema;

/* Every attribute schema row, in table order; *n gets the count. */
const ct_attr_schema *ct_attr_schemas(int *n);
/* Name of a set ("window") and of a schema type ("int", "float", "string", "ints", "floats",
 * "strings", "int|float"). */
const char *ct_attr_set_name(ct_attr_set s);
const char *ct_attr_type_name(ct_attr_type t);

/* The attribute sets op kind k accepts (CT_ASET_none for unused slots). */
void ct_op_attr_sets(ct_op_kind k, ct_attr_set sets[3]);
/* The schema of attribute `name` on op kind k, or NULL when k accepts no such attribute. */
const ct_attr_schema *ct_op_attr_schema(ct_op_kind k, const char *name);
/* Checks attribute a against op kind k's schema. Returns NULL when it conforms, else a
 * static reason: "unknown attribute" or "expected an int attribute" (and so on per type). */
const char *ct_attr_check(ct_op_kind k, const ct_attr *a);
/* Checks every attribute of op; on the first that does not conform returns false with
 * *bad = that attribute and *why = ct_attr_check's reason. */
bool ct_op_check_attrs(const ct_op *op, const ct_attr **bad, const char **why);
/* The count length rule `len` asks of op (its operand 0's rank decides SPATIAL, PADS and
 * RANK); -1 for ANY, and when that rank is unknown (no operand 0, ndim < 0, or below 2 for
 * SPATIAL / PADS). */
int ct_attr_len_want(const ct_op *op, ct_attr_len len);
/* Words for a length rule, for messages: "one per spatial axis", "two per spatial axis",
 * "one per axis", "two", "one", "any". */
const char *ct_attr_len_name(ct_attr_len len);
/* Checks the count of every list attribute of op against its schema's length rule (only
 * where ct_attr_len_want knows it); on the first that differs returns false with *bad = that
 * attribute, *got its count and *want the rule's. Call after ct_op_check_attrs (types). */
bool ct_op_check_attr_lens(const ct_op *op, const ct_attr **bad, int *got, int *want);
/* The fixed-length int list attribute `name` of op (length rule len) as exactly
 * ct_attr_len_want(op, len) values in out[0 .. *n): the attribute's, or, when it is absent
 * and the table has a default (has_fill), `fill` each. false (*n = 0) when it is absent
 * without a default, when op's rank is unknown, or when it holds another count (which the
 * verifier refuses: ct_op_check_attr_lens). The generated ct_attr_<set>_<name>_n call it. */
bool ct_attr_ints_fixed(const ct_op *op, const char *name, ct_attr_len len, bool has_fill, int64_t fill,
                        int64_t out[CT_ATTR_LIST_MAX], int *n);

/* Accessor types, for helpers that read one of several list or string attributes. */
typedef const int64_t *(*ct_attr_ints_fn)(const ct_op *op, int *n);
typedef const char *(*ct_attr_string_fn)(const ct_op *op);

/* ---- typed accessors, one group per A(...) row ----
 * Scalars: ct_attr_<set>_<name>(op) gives the value or the table default when absent;
 * ct_attr_has_<set>_<name>(op) tells whether it is present (for defaults derived from
 * shapes, documented in the table). Lists: ct_attr_<set>_<name>(op, &n) gives the array and
 * its length, the table's default list when absent (NULL and n = 0 for the default ()).
 * Fixed-length lists (LEN SPATIAL, PADS, RANK, TWO): ct_attr_<set>_<name>(op, &n) gives the
 * attribute as stored (NULL when absent), ct_attr_<set>_<name>_n(op, out, &n) exactly the count
 * the rule asks, the default filled in (ct_attr_ints_fixed). ct_attr_raw_<set>_<name>(op)
 * gives the ct_attr (NULL when absent) and ct_attr_del_<set>_<name>(op) removes it. Setters
 * ct_attr_set_<set>_<name>(g, op, ...) add or replace (false when out of memory). STRINGS
 * attributes have only the raw form; NUM ones have the raw form and the setters
 * ct_attr_set_<set>_<name>_int / _float. Implemented over ct_op_get_* / ct_op_set_* of ir.h. */
#define CT_ATTR_HAS_(set, name)                                                                   \
  static inline const ct_attr *ct_attr_raw_##set##_##name(const ct_op *op) { return ct_op_attr(op, #name); } \
  static inline bool ct_attr_has_##set##_##name(const ct_op *op) { return ct_op_attr(op, #name) != NULL; } \
  static inline void ct_attr_del_##set##_##name(ct_op *op) { ct_op_del_attr(op, #name); }
#define CT_ATTR_INT_(set, name, dflt, len)                                                        \
  CT_ATTR_HAS_(set, name)                                                                         \
  static inline int64_t ct_attr_##set##_##name(const ct_op *op) { return ct_op_get_int(op, #name, dflt); } \
  static inline bool ct_attr_set_##set##_##name(ct_graph *g, ct_op *op, int64_t v) {              \
    return ct_op_set_int(g, op, #name, v);                                                        \
  }
#define CT_ATTR_FLOAT_(set, name, dflt, len)                                                      \
  CT_ATTR_HAS_(set, name)                                                                         \
  static inline double ct_attr_##set##_##name(const ct_op *op) { return ct_op_get_float(op, #name, (float)(dflt)); } \
  static inline bool ct_attr_set_##set##_##name(ct_graph *g, ct_op *op, double v) {               \
    return ct_op_set_float(g, op, #name, v);                                                      \
  }
#define CT_ATTR_STRING_(set, name, dflt, len)                                                     \
  CT_ATTR_HAS_(set, name)                                                                         \
  static inline const char *ct_attr_##set##_##name(const ct_op *op) {                             \
    return ct_op_get_string(op, #name, dflt);                                                     \
  }                                                                                               \
  static inline bool ct_attr_set_##set##_##name(ct_graph *g, ct_op *op, const char *v) {          \
    return ct_op_set_string(g, op, #name, v);                                                     \
  }
#define CT_ATTR_UNPAREN_(...) __VA_ARGS__
/* A list default (a, b, ...) as an array after a leading 0, so that () stays valid C. */
#define CT_ATTR_LIST_(T, dflt, n)                                                                 \
  static const T d_[] = {0, CT_ATTR_UNPAREN_ dflt};                                               \
  if (sizeof d_ / sizeof d_[0] == 1) return NULL;                                                 \
  *(n) = (int)(sizeof d_ / sizeof d_[0]) - 1;                                                     \
  return d_ + 1;
#define CT_ATTR_INTS_ANY_(set, name, dflt)                                                        \
  CT_ATTR_HAS_(set, name)                                                                         \
  static inline const int64_t *ct_attr_##set##_##name(const ct_op *op, int *n) {                  \
    const int64_t *v = ct_op_get_ints(op, #name, n);                                              \
    if (v || ct_attr_has_##set##_##name(op)) return v;                                            \
    CT_ATTR_LIST_(int64_t, dflt, n)                                                               \
  }                                                                                               \
  static inline bool ct_attr_set_##set##_##name(ct_graph *g, ct_op *op, int n, const int64_t *v) { \
    return ct_op_set_ints(g, op, #name, n, v);                                                    \
  }
/* A fixed-length int list: as stored (NULL when absent), and exactly the rule's count. */
#define CT_ATTR_INTS_FIXED_(set, name, dflt, len)                                                 \
  CT_ATTR_HAS_(set, name)                                                                         \
  static inline const int64_t *ct_attr_##set##_##name(const ct_op *op, int *n) {                  \
    return ct_op_get_ints(op, #name, n);                                                          \
  }                                                                                               \
  static inline bool ct_attr_##set##_##name##_n(const ct_op *op, int64_t out[CT_ATTR_LIST_MAX], int *n) { \
    static const int64_t d_[] = {0, CT_ATTR_UNPAREN_ dflt};                                       \
    enum { k_ = (int)(sizeof d_ / sizeof d_[0]) };                                                \
    return ct_attr_ints_fixed(op, #name, CT_ALEN_##len, k_ > 1, d_[k_ - 1], out, n);              \
  }                                                                                               \
  static inline bool ct_attr_set_##set##_##name(ct_graph *g, ct_op *op, int n, const int64_t *v) { \
    return ct_op_set_ints(g, op, #name, n, v);                                                    \
  }
#define CT_ATTR_INTS_(set, name, dflt, len) CT_ATTR_INTS_##len##_(set, name, dflt)
#define CT_ATTR_INTS_SPATIAL_(set, name, dflt) CT_ATTR_INTS_FIXED_(set, name, dflt, SPATIAL)
#define CT_ATTR_INTS_PADS_(set, name, dflt) CT_ATTR_INTS_FIXED_(set, name, dflt, PADS)
#define CT_ATTR_INTS_RANK_(set, name, dflt) CT_ATTR_INTS_FIXED_(set, name, dflt, RANK)
#define CT_ATTR_INTS_TWO_(set, name, dflt) CT_ATTR_INTS_FIXED_(set, name, dflt, TWO)
#define CT_ATTR_FLOATS_(set, name, dflt, len)                                                     \
  CT_ATTR_HAS_(set, name)                                                                         \
  static inline const double *ct_attr_##set##_##name(const ct_op *op, int *n) {                   \
    const double *v = ct_op_get_floats(op, #name, n);                                             \
    if (v || ct_attr_has_##set##_##name(op)) return v;                                            \
    CT_ATTR_LIST_(double, dflt, n)                                                                \
  }                                                                                               \
  static inline bool ct_attr_set_##set##_##name(ct_graph *g, ct_op *op, int n, const double *v) { \
    return ct_op_set_floats(g, op, #name, n, v);                                                  \
  }
#define CT_ATTR_STRINGS_(set, name, dflt, len) CT_ATTR_HAS_(set, name)
#define CT_ATTR_NUM_(set, name, dflt, len)                                                        \
  CT_ATTR_HAS_(set, name)                                                                         \
  static inline bool ct_attr_set_##set##_##name##_int(ct_graph *g, ct_op *op, int64_t v) {        \
    return ct_op_set_int(g, op, #name, v);                                                        \
  }                                                                                               \
  static inline bool ct_attr_set_##set##_##name##_float(ct_graph *g, ct_op *op, double v) {       \
    return ct_op_set_float(g, op, #name, v);                                                      \
  }

#define A(set, name, type, dflt, len, doc) CT_ATTR_##type##_(set, name, dflt, len)
#include "ir/ops.def"

#undef CT_ATTR_HAS_
#undef CT_ATTR_LIST_
#undef CT_ATTR_UNPAREN_
#undef CT_ATTR_INT_
#undef CT_ATTR_FLOAT_
#undef CT_ATTR_STRING_
#undef CT_ATTR_INTS_
#undef CT_ATTR_INTS_ANY_
#undef CT_ATTR_INTS_FIXED_
#undef CT_ATTR_INTS_SPATIAL_
#undef CT_ATTR_INTS_PADS_
#undef CT_ATTR_INTS_RANK_
#undef CT_ATTR_INTS_TWO_
#undef CT_ATTR_FLOATS_
#undef CT_ATTR_STRINGS_
#undef CT_ATTR_NUM_

#endif
