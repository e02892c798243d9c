/* op_types.c: checks the Top dialect's operand dtypes against ir/op_types.def (the ONNX
 * operator spec's type constraints). See ops/shape.h ct_op_check_types. */
#include <stdio.h>
#include <string.h>

#include "ops/ops_util.h"
#include "ops/shape.h"

#define BIT(t) (1u << CT_##t)
#define FLOAT (BIT(F32) | BIT(F16) | BIT(BF16) | BIT(F64))
#define SIGNED (BIT(I8) | BIT(I16) | BIT(I32) | BIT(I64))
#define UNSIGNED (BIT(U8) | BIT(U16) | BIT(U32) | BIT(U64))
#define INTEGER (SIGNED | UNSIGNED)
#define NUMERIC (FLOAT | INTEGER)
#define BOOLEAN BIT(BOOL)
#define IDX (BIT(I32) | BIT(I64))
#define Q8 (BIT(I8) | BIT(U8))
#define F32 BIT(F32)
#define I16 BIT(I16)
#define I32 BIT(I32)
#define I64 BIT(I64)
#define U32 BIT(U32)
#define U64 BIT(U64)

typedef struct tc_row {
  ct_op_kind kind;
  int first, last;
  unsigned mask;
} tc_row;

static const tc_row rows[] = {
#define TC(E, first, last, classes) {CT_OP_##E, first, last, classes},
#include "ir/op_types.def"
};

/* Writes the dtype names of mask, " or "-separated, into buf. */
static void mask_names(unsigned mask, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = '\0';
  for (int t = 0; t < CT_DTYPE_COUNT && at < cap; t++) {
    if (!(mask & (1u << t))) continue;
    at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? ", " : "", ct_dtype_name((ct_dtype)t));
  }
}

/* Checks operands first..last of op against row r. */
static ct_status check_row(const ct_op *op, const tc_row *r, ct_diag *d) {
  int last = r->last < 0 || r->last >= op->n_in ? op->n_in - 1 : r->last;
  for (int i = r->first; i <= last; i++) {
    const ct_value *v = op->in[i];
    if (!v || (r->mask & (1u << v->dtype))) continue;
    char names[128];
    mask_names(r->mask, names, sizeof names);
    return ct_ops_err(d, CT_ERR_INPUT, op, "input %d (\"%s\") has type %s; the op's type constraint allows %s", i,
                     v->name ? v->name : "?", ct_dtype_name(v->dtype), names);
  }
  return CT_OK;
}

ct_status ct_op_check_types(const ct_graph *g, const ct_op *op, ct_diag *d) {
  if (ct_graph_dialect(g) != CT_DIALECT_TOP) return CT_OK;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    if (rows[i].kind != op->kind) continue;
    ct_status st = check_row(op, &rows[i], d);
    if (st != CT_OK) return st;
  }
  return CT_OK;
}
