/* trace.h: Chrome Trace Event JSON writer ("JSON Object Format": {"traceEvents": [...]}),
 * opened by Perfetto and chrome://tracing: `M` thread_name events (one track per engine),
 * `X` complete events, `C` counters. ts/dur are µs = cycles / freq_mhz, printed as exact
 * rounded fixed-point so events on one track never overlap. Schema: docs/traces.md. */
#ifndef CT_TRACE_H
#define CT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

typedef struct ct_trace ct_trace;

/* Filters for long runs: X events are kept if they overlap [start, end) cycles (end 0 = no
 * limit) and, when n_layers > 0, their layer is one of `layers`; counters inside the window. */
typedef struct ct_trace_filter {
  uint64_t start_cycle, end_cycle;
  int n_layers;
  char **layers;  /* borrowed; must outlive the trace */
} ct_trace_filter;

/* One argument of an X event: string (s != NULL) or integer. */
typedef struct ct_trace_arg {
  const char *key;
  const char *s;
  int64_t i;
} ct_trace_arg;

/* Opens the temporary file of path (ct_outfile) and writes the header. freq_mhz > 0. filter
 * may be NULL (keep all). Errors: CT_ERR_INPUT (cannot create the file), CT_ERR_LIMIT (no
 * memory). */
ct_status ct_trace_open(ct_trace **t, const char *path, double freq_mhz,
                        const ct_trace_filter *filter, ct_diag *d);
/* Names track tid ("M" thread_name event, plus a thread_sort_index = tid). */
void ct_trace_track(ct_trace *t, int tid, const char *name);
/* True if an X event with this layer and cycle interval would be written. */
bool ct_trace_wants(const ct_trace *t, const char *layer, uint64_t start, uint64_t end);
/* An X event on track tid from start to end cycles (end ≥ start), category "insn". */
void ct_trace_complete(ct_trace *t, int tid, const char *name, uint64_t start, uint64_t end,
                       const ct_trace_arg *args, int n_args);
/* A C event: counter `name` takes `value` (series "value") from `cycle` on. */
void ct_trace_counter(ct_trace *t, const char *name, uint64_t cycle, double value);
/* Finishes the JSON, closes and renames into place; frees t. CT_ERR_INPUT on write error. */
ct_status ct_trace_commit(ct_trace *t, ct_diag *d);
/* Closes and deletes the temporary file; frees t. NULL is fine. */
void ct_trace_abort(ct_trace *t);

#endif
