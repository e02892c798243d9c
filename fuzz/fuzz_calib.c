/* fuzz_calib.c: the calibration table parser (quant/calib_table.c, TPU-MLIR's text layout with
 * the #weight_scale block). A table that parses must survive a round trip: written and read
 * back it holds the same rows, bit for bit (the writer's promise); a difference aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "quant/calib_table.h"

/* Aborts unless a and b hold the same rows and weight rows. */
static void same_tables(const ct_calib_table *a, const ct_calib_table *b) {
  if (a->n != b->n || a->nw != b->nw) abort();
  for (int64_t i = 0; i < a->n; i++) {
    const ct_calib_row *x = &a->rows[i], *y = &b->rows[i];
    if (strcmp(x->name, y->name) || x->threshold != y->threshold || x->min != y->min || x->max != y->max) abort();
  }
  for (int64_t i = 0; i < a->nw; i++) {
    const ct_calib_wrow *x = &a->w[i], *y = &b->w[i];
    if (strcmp(x->name, y->name) || x->n != y->n || !x->zp != !y->zp) abort();
    for (int64_t c = 0; c < x->n; c++)
      if (x->scale[c] != y->scale[c] || (x->zp && x->zp[c] != y->zp[c])) abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  ct_fuzz_init();
  char *s = ct_fuzz_str(data, n);
  if (!s) return 0;
  ct_calib_table t, back;
  ct_calib_table_init(&t);
  ct_calib_table_init(&back);
  ct_diag d;
  if (ct_calib_table_parse(s, "fuzz.calib", &t, &d) == CT_OK) {
    const char *p = ct_fuzz_file((const uint8_t *)"", 0, ".calib");
    if (p && ct_calib_table_write(p, &t, NULL, 0, &d) == CT_OK) {
      if (ct_calib_table_read(p, &back, &d) != CT_OK) abort();
      same_tables(&t, &back);
    }
  }
  ct_calib_table_free(&t);
  ct_calib_table_free(&back);
  free(s);
  return 0;
}
