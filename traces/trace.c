/* trace.c: the format-independent half of the trace writer (traces/trace.h): the back end
 * chosen by the file name, the --trace-window / --trace-layers filters, cycles → integer
 * picoseconds, the temporary file and its commit (common/outset.h). */
#include "traces/trace.h"

#include <stdlib.h>
#include <string.h>

#include "traces/trace_backend.h"

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && !strcmp(s + n - k, tail);
}

ct_trace_format ct_trace_format_of(const char *path) {
  if (path && ends_with(path, ".perfetto-trace")) return CT_TRACE_PERFETTO_DEFLATE;
  return path && ends_with(path, ".pftrace") ? CT_TRACE_PERFETTO : CT_TRACE_JSON;
}

/* Cycle → picoseconds, rounded to nearest; monotone in cycle. */
static uint64_t cyc_ps(const ct_trace *t, uint64_t cycle) {
  return (uint64_t)((double)cycle * 1e6 / t->freq_mhz + 0.5);
}

ct_status ct_trace_open(ct_trace **out, const char *path, ct_trace_format fmt, double freq_mhz,
                        const ct_trace_filter *filter, ct_diag *d) {
  *out = NULL;
  ct_trace *t = calloc(1, sizeof *t);
  if (!t) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  ct_status st = ct_outfile_begin(&t->out, path, true, d);
  if (st) {
    free(t);
    return st;
  }
  t->f = t->out.f;
  t->freq_mhz = freq_mhz > 0 ? freq_mhz : 1000;
  if (filter) t->filter = *filter;
  t->be = fmt == CT_TRACE_JSON ? &ct_trace_json_backend : &ct_trace_perfetto_backend;
  t->deflate = fmt == CT_TRACE_PERFETTO_DEFLATE;
  if (t->be->begin(t)) {
    ct_trace_abort(t);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
  }
  *out = t;
  return CT_OK;
}

void ct_trace_track(ct_trace *t, int tid, const char *name) {
  t->be->track(t, tid, name);
}

bool ct_trace_wants(const ct_trace *t, const char *layer, uint64_t start, uint64_t end) {
  const ct_trace_filter *f = &t->filter;
  if (f->end_cycle && (start >= f->end_cycle || end < f->start_cycle)) return false;
  if (!f->end_cycle && end < f->start_cycle) return false;
  if (f->n_layers == 0) return true;
  for (int i = 0; i < f->n_layers; i++)
    if (layer && !strcmp(layer, f->layers[i])) return true;
  return false;
}

void ct_trace_complete(ct_trace *t, int tid, const char *name, uint64_t start, uint64_t end,
                       const ct_trace_arg *args, int n_args) {
  t->be->slice(t, tid, name, cyc_ps(t, start), cyc_ps(t, end), args, n_args);
}

void ct_trace_counter(ct_trace *t, const char *name, uint64_t cycle, double value) {
  const ct_trace_filter *f = &t->filter;
  if (cycle < f->start_cycle || (f->end_cycle && cycle >= f->end_cycle)) return;
  t->be->counter(t, name, cyc_ps(t, cycle), value);
}

ct_status ct_trace_commit(ct_trace *t, ct_diag *d) {
  t->be->end(t);
  if (t->oom) {
    char *path = strdup(t->out.path);
    ct_trace_abort(t);
    ct_status st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path ? path : "trace");
    free(path);
    return st;
  }
  t->be->free(t->state);
  ct_status st = ct_outfile_commit(&t->out, d);
  free(t);
  return st;
}

void ct_trace_abort(ct_trace *t) {
  if (!t) return;
  if (t->be) t->be->free(t->state);
  ct_outfile_abort(&t->out);
  free(t);
}
