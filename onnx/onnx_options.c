/* onnx_options.c: parsing of the front end's command-line values (--input-shapes
 * "name:1x3x224x224,...", comma-separated float lists for --mean/--scale); plain
 * strtoll/strtod based parsing of the syntax documented in onnx/onnx.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

/* Parses "1x3x224x224" (or "" / "scalar" for rank 0) of length len into o. */
static ct_status parse_dims(const char *s, size_t len, ct_onnx_shape_override *o, const char *entry, ct_diag *d) {
  o->ndim = 0;
  if (len == 0 || (len == 6 && !strncmp(s, "scalar", 6))) return CT_OK;
  const char *p = s, *end = s + len;
  while (p < end) {
    if (o->ndim == CT_MAX_DIMS)
      return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: \"%s\": more than %d dims", entry, CT_MAX_DIMS);
    if (*p < '0' || *p > '9')
      return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: \"%s\": bad dim at \"%.*s\"", entry, (int)(end - p), p);
    char *q;
    errno = 0;
    long long v = strtoll(p, &q, 10);
    if (errno || q > end || (q < end && *q != 'x'))
      return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: \"%s\": bad dim at \"%.*s\"", entry, (int)(end - p), p);
    o->dims[o->ndim++] = v;
    p = q < end ? q + 1 : q;
    if (q < end && p == end)
      return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: \"%s\": trailing 'x'", entry);
  }
  return CT_OK;
}

static ct_status parse_entry(const char *s, size_t len, ct_onnx_options *opt, ct_diag *d) {
  char entry[CT_ONNX_NAME_MAX + 128];
  snprintf(entry, sizeof entry, "%.*s", (int)len, s);
  const char *colon = NULL;
  for (size_t i = 0; i < len; i++)
    if (s[i] == ':') colon = s + i;
  if (!colon) return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: \"%s\": expected name:dims", entry);
  size_t nlen = (size_t)(colon - s);
  if (nlen == 0) return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: \"%s\": empty input name", entry);
  if (nlen >= CT_ONNX_NAME_MAX) return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: \"%s\": name too long", entry);
  if (opt->n_overrides == CT_ONNX_MAX_OVERRIDES)
    return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: more than %d entries", CT_ONNX_MAX_OVERRIDES);
  ct_onnx_shape_override *o = &opt->overrides[opt->n_overrides];
  memcpy(o->name, s, nlen);
  o->name[nlen] = '\0';
  for (int i = 0; i < opt->n_overrides; i++)
    if (!strcmp(opt->overrides[i].name, o->name))
      return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: input \"%s\" given twice", o->name);
  ct_status st = parse_dims(colon + 1, len - nlen - 1, o, entry, d);
  if (st) return st;
  opt->n_overrides++;
  return CT_OK;
}

ct_status ct_onnx_parse_input_shapes(const char *spec, ct_onnx_options *opt, ct_diag *d) {
  if (!spec || !*spec) return ct_diag_set(d, CT_ERR_USAGE, "--input-shapes: empty value");
  const char *p = spec;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    ct_status st = parse_entry(p, len, opt, d);
    if (st) return st;
    if (!comma) return CT_OK;
    p = comma + 1;
  }
}

ct_status ct_onnx_parse_floats(const char *what, const char *s, double *v, int cap, int *n, ct_diag *d) {
  *n = 0;
  if (!s || !*s) return ct_diag_set(d, CT_ERR_USAGE, "%s: empty value", what);
  const char *p = s;
  for (;;) {
    if (*n == cap) return ct_diag_set(d, CT_ERR_USAGE, "%s: \"%s\": more than %d values", what, s, cap);
    char *q;
    errno = 0;
    double x = strtod(p, &q);
    if (q == p || errno || !isfinite(x) || (*q != ',' && *q != '\0'))
      return ct_diag_set(d, CT_ERR_USAGE, "%s: \"%s\": bad number at \"%s\"", what, s, p);
    v[(*n)++] = x;
    if (*q == '\0') return CT_OK;
    p = q + 1;
  }
}
