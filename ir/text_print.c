/* text_print.c: the text IR printer (see text.h; grammar in docs/formats.md). MLIR's
 * generic op form (`%r = dialect.Op(%a) {attrs} : type loc(...)`) adapted to ctpu's IR;
 * shortest round-trip float printing as in David Gay's / Python's repr (by search). */
#include "ir/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

char *ct_ir_format_float(double v, char *buf, size_t n) {
  if (isnan(v) || isinf(v)) {
    snprintf(buf, n, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    return buf;
  }
  /* fewest significant digits that read back to v, then Python repr's layout: positional
   * for decimal exponents -4..15, else d.ddde±XX */
  char e[40];
  int prec = 1;
  for (; prec < 17; prec++) {
    snprintf(e, sizeof e, "%.*e", prec - 1, v);
    if (strtod(e, NULL) == v) break;
  }
  snprintf(e, sizeof e, "%.*e", prec - 1, v);
  int exp10 = atoi(strchr(e, 'e') + 1);
  if (exp10 >= -4 && exp10 < 16) {
    int dec = prec - 1 - exp10;
    snprintf(buf, n, "%.*f", dec > 0 ? dec : 0, v);
  } else {
    snprintf(buf, n, "%s", e);
  }
  if (!strpbrk(buf, ".e")) {
    size_t k = strlen(buf);
    if (k + 2 < n) memcpy(buf + k, ".0", 3);
  }
  return buf;
}

bool ct_ir_print_quoted(FILE *f, const char *s) {
  putc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned c = *p;
    if (c == '"' || c == '\\') {
      putc('\\', f);
      putc((int)c, f);
    } else if (c == '\n') {
      fputs("\\n", f);
    } else if (c == '\t') {
      fputs("\\t", f);
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\x%02X", c);
    } else {
      putc((int)c, f);
    }
  }
  putc('"', f);
  return !ferror(f);
}

/* An attribute or module name prints bare when it is an identifier, else quoted. */
static void print_name(FILE *f, const char *s) {
  bool ident = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_';
  for (const char *p = s; *p && ident; p++)
    ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '_' || *p == '.' || *p == '$' || *p == '-';
  if (ident)
    fputs(s, f);
  else
    ct_ir_print_quoted(f, s);
}

static void print_float(FILE *f, double v) {
  char buf[40];
  fputs(ct_ir_format_float(v, buf, sizeof buf), f);
}

static void print_attr_value(FILE *f, const ct_attr *a) {
  switch (a->kind) {
    case CT_ATTR_INT: fprintf(f, "%lld", (long long)a->i); return;
    case CT_ATTR_FLOAT: print_float(f, a->f); return;
    case CT_ATTR_STRING: ct_ir_print_quoted(f, a->s ? a->s : ""); return;
    default: break;
  }
  static const char *const empty[] = {[CT_ATTR_INTS] = "[] : i64", [CT_ATTR_FLOATS] = "[] : f64",
                                      [CT_ATTR_STRINGS] = "[] : str"};
  if (a->n == 0) {
    fputs(empty[a->kind], f);
    return;
  }
  putc('[', f);
  for (int i = 0; i < a->n; i++) {
    if (i) fputs(", ", f);
    if (a->kind == CT_ATTR_INTS) fprintf(f, "%lld", (long long)a->ints[i]);
    else if (a->kind == CT_ATTR_FLOATS) print_float(f, a->floats[i]);
    else ct_ir_print_quoted(f, a->strs[i] ? a->strs[i] : "");
  }
  putc(']', f);
}

static void print_quant(FILE *f, const ct_value *v) {
  fputs(" !quant<", f);
  if (v->n_scale == 1) {
    print_float(f, v->scale[0]);
    fprintf(f, ", %d>", (int)v->zero_point[0]);
    return;
  }
  putc('[', f);
  for (int i = 0; i < v->n_scale; i++) {
    if (i) fputs(", ", f);
    print_float(f, v->scale[i]);
  }
  fputs("], [", f);
  for (int i = 0; i < v->n_scale; i++) fprintf(f, i ? ", %d" : "%d", (int)v->zero_point[i]);
  putc(']', f);
  if (v->quant_axis != 0) fprintf(f, ", axis = %d", v->quant_axis);
  putc('>', f);
}

/* tensor<1x3x8x8xf32>, tensor<f32> (scalar), tensor<*xf32> (unknown rank), ? = unknown dim. */
static void print_type(FILE *f, const ct_value *v) {
  fputs("tensor<", f);
  if (v->ndim < 0) fputs("*x", f);
  for (int i = 0; i < v->ndim && i < CT_MAX_DIMS; i++) {
    if (v->shape[i] < 0) fputs("?x", f);
    else fprintf(f, "%lldx", (long long)v->shape[i]);
  }
  fputs(ct_dtype_name(v->dtype), f);
  if (v->n_scale > 0 && v->scale && v->zero_point) print_quant(f, v);
  putc('>', f);
}

static void print_loc(FILE *f, const ct_op *op) {
  fputs(" loc(", f);
  ct_ir_print_quoted(f, op->loc ? op->loc : "");
  if (op->n_out == 1 && op->loc && strcmp(op->out[0]->name, op->loc) == 0) {
    putc(')', f);
    return;
  }
  fputs(" -> ", f);
  if (op->n_out == 1) {
    ct_ir_print_quoted(f, op->out[0]->name);
  } else {
    putc('[', f);
    for (int i = 0; i < op->n_out; i++) {
      if (i) fputs(", ", f);
      ct_ir_print_quoted(f, op->out[i]->name);
    }
    putc(']', f);
  }
  putc(')', f);
}

static void print_op(FILE *f, const ct_graph *g, const ct_op *op) {
  fputs("  ", f);
  for (int i = 0; i < op->n_out; i++) fprintf(f, i ? ", %%%d" : "%%%d", op->out[i]->id);
  fprintf(f, " = %s.%s(", g->dialect, ct_op_name(op->kind));
  for (int i = 0; i < op->n_in; i++) {
    if (i) fputs(", ", f);
    if (op->in[i]) fprintf(f, "%%%d", op->in[i]->id);
    else fputs("%none", f);
  }
  putc(')', f);
  if (op->n_attr > 0) {
    fputs(" {", f);
    for (int i = 0; i < op->n_attr; i++) {
      if (i) fputs(", ", f);
      print_name(f, op->attrs[i].name);
      fputs(" = ", f);
      print_attr_value(f, &op->attrs[i]);
    }
    putc('}', f);
  }
  fputs(" : ", f);
  for (int i = 0; i < op->n_out; i++) {
    if (i) fputs(", ", f);
    print_type(f, op->out[i]);
  }
  print_loc(f, op);
  putc('\n', f);
}

static ct_status check_printable(const ct_graph *g, ct_diag *d) {
  for (int i = 0; i < g->n_ops; i++) {
    const ct_op *op = g->ops[i];
    if (op->dead) continue;
    if (op->n_out < 1)
      return ct_diag_set(d, CT_ERR_INTERNAL, "print: node \"%s\" (op %s) has no result", op->loc,
                         ct_op_name(op->kind));
    for (int j = 0; j < op->n_out; j++)
      if (!op->out[j] || !op->out[j]->name)
        return ct_diag_set(d, CT_ERR_INTERNAL, "print: node \"%s\" (op %s): result %d is missing",
                           op->loc, ct_op_name(op->kind), j);
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (!g->outputs[i]) return ct_diag_set(d, CT_ERR_INTERNAL, "print: module output %d is missing", i);
  return CT_OK;
}

ct_status ct_ir_print(const ct_graph *g, FILE *f, ct_diag *d) {
  ct_status st = check_printable(g, d);
  if (st) return st;
  fputs("module @", f);
  print_name(f, g->name ? g->name : "main");
  fputs(" attributes {chip = ", f);
  ct_ir_print_quoted(f, g->chip ? g->chip : "");
  fputs(", weights = ", f);
  ct_ir_print_quoted(f, g->weights ? g->weights : "");
  fputs("} {\n", f);
  for (int i = 0; i < g->n_ops; i++)
    if (!g->ops[i]->dead) print_op(f, g, g->ops[i]);
  fputs("  return", f);
  for (int i = 0; i < g->n_outputs; i++) fprintf(f, i ? ", %%%d" : " %%%d", g->outputs[i]->id);
  if (g->n_outputs) fputs(" :", f);
  for (int i = 0; i < g->n_outputs; i++) {
    fputs(i ? ", " : " ", f);
    print_type(f, g->outputs[i]);
  }
  fputs("\n}\n", f);
  if (ferror(f)) return ct_diag_set(d, CT_ERR_INPUT, "print: write error");
  return CT_OK;
}

ct_status ct_ir_print_string(const ct_graph *g, char **out, size_t *len, ct_diag *d) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return ct_diag_set(d, CT_ERR_LIMIT, "print: out of memory");
  ct_status st = ct_ir_print(g, f, d);
  if (fclose(f) != 0 && !st) st = ct_diag_set(d, CT_ERR_LIMIT, "print: out of memory");
  if (st) {
    free(buf);
    return st;
  }
  *out = buf;
  if (len) *len = n;
  return CT_OK;
}
