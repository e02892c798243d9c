/* qtable.c: TPU-MLIR quantize table text layout (`op_name MODE` rows, '#' comments), read
 * and written with file:line diagnostics (see qtable.h). */
#include "quant/qtable.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/outset.h"
#include "quant/table_text.h"

static const char *const mode_names[CT_QMODE_COUNT] = {"INT8", "BF16", "F16", "F32"};

const char *ct_qmode_name(ct_qmode m) { return m >= 0 && m < CT_QMODE_COUNT ? mode_names[m] : NULL; }

ct_qmode ct_qmode_from_name(const char *s) {
  for (int m = 0; m < CT_QMODE_COUNT; m++) {
    const char *a = s, *b = mode_names[m];
    while (*a && *b && toupper((unsigned char)*a) == *b) a++, b++;
    if (!*a && !*b) return (ct_qmode)m;
  }
  return CT_QMODE_COUNT;
}

void ct_qtable_init(ct_qtable *t) { memset(t, 0, sizeof *t); }

void ct_qtable_free(ct_qtable *t) {
  for (int64_t i = 0; i < t->n; i++) free(t->rows[i].name);
  free(t->rows);
  ct_qtable_init(t);
}

const ct_qtable_row *ct_qtable_find(const ct_qtable *t, const char *name) {
  for (int64_t i = 0; i < t->n; i++)
    if (!strcmp(t->rows[i].name, name)) return &t->rows[i];
  return NULL;
}

ct_status ct_qtable_add(ct_qtable *t, const char *name, ct_qmode mode, int line, ct_diag *d) {
  if (!ct_table_name_ok(name))
    return ct_diag_set(d, CT_ERR_INPUT, "name \"%s\" is empty, has a blank or starts with '#'", name);
  const ct_qtable_row *old = ct_qtable_find(t, name);
  if (old && old->line) return ct_diag_set(d, CT_ERR_INPUT, "duplicate name \"%s\" (first on line %d)", name, old->line);
  if (old) return ct_diag_set(d, CT_ERR_INPUT, "duplicate name \"%s\"", name);
  if (mode < 0 || mode >= CT_QMODE_COUNT) return ct_diag_set(d, CT_ERR_INPUT, "unknown mode %d", (int)mode);
  if (t->n == t->cap) {
    int64_t nc = t->cap ? 2 * t->cap : 16;
    ct_qtable_row *nr = realloc(t->rows, (size_t)nc * sizeof *nr);
    if (!nr) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
    t->rows = nr;
    t->cap = nc;
  }
  char *copy = strdup(name);
  if (!copy) return ct_diag_set(d, CT_ERR_LIMIT, "out of memory");
  t->rows[t->n++] = (ct_qtable_row){copy, mode, line};
  return CT_OK;
}

static ct_status parse_line(ct_qtable *t, char *s, int line, ct_diag *d) {
  if (ct_table_is_comment(s, NULL) || ct_table_is_blank(s)) return CT_OK;
  char *f[2];
  int nf = ct_table_split(s, f, 2);
  if (nf != 2) return ct_diag_set(d, CT_ERR_INPUT, "expected 2 fields, got %d", nf);
  ct_qmode m = ct_qmode_from_name(f[1]);
  if (m == CT_QMODE_COUNT) return ct_diag_set(d, CT_ERR_INPUT, "unknown mode \"%s\" (INT8, BF16, F16 or F32)", f[1]);
  return ct_qtable_add(t, f[0], m, line, d);
}

ct_status ct_qtable_parse(char *text, const char *file, ct_qtable *t, ct_diag *d) {
  char *cur = text, *s;
  int line = 0;
  while ((s = ct_table_next_line(&cur))) {
    line++;
    if (parse_line(t, s, line, d)) return ct_diag_prefix(d, "%s:%d: ", file, line);
  }
  return CT_OK;
}

ct_status ct_qtable_read(const char *path, ct_qtable *t, ct_diag *d) {
  char *text;
  ct_status st = ct_file_read(path, 0, &text, NULL, d);
  if (st) return st;
  st = ct_qtable_parse(text, path, t, d);
  free(text);
  return st;
}

ct_status ct_qtable_write(const char *path, const ct_qtable *t, ct_diag *d) {
  ct_outfile o;
  ct_status st = ct_outfile_begin(&o, path, true, d);
  if (st) return st;
  fprintf(o.f, "# ctpu quantize table\n# op_name quantize_mode\n");
  for (int64_t i = 0; i < t->n; i++) fprintf(o.f, "%s %s\n", t->rows[i].name, mode_names[t->rows[i].mode]);
  return ct_outfile_commit(&o, d);
}
