/* trace.h: the cmodel's timeline trace, one interface with two streaming back ends chosen by
 * the file name: Chrome Trace Event JSON (traces/trace_json.c) and Perfetto's protobuf trace
 * format (traces/trace_pftrace.c). One track per engine, one slice per instruction, counters;
 * the filters (--trace-window, --trace-layers) live here, once. Schema: docs/traces.md. */
#ifndef CT_TRACE_H
#define CT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

typedef struct ct_trace ct_trace;

typedef enum ct_trace_format {
  CT_TRACE_JSON,     /* Chrome Trace Event JSON Object Format */
  CT_TRACE_PERFETTO, /* Perfetto protobuf: a Trace message, a stream of TracePackets */
  CT_TRACE_PERFETTO_DEFLATE /* the same packets in TracePacket.compressed_packets: zlib-deflated
                             * batches, as Perfetto's tracing service writes with compression on */
} ct_trace_format;

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

/* The format a destination file name asks for: CT_TRACE_PERFETTO for names ending in
 * ".perfetto-trace" or ".pftrace", CT_TRACE_JSON for every other name. */
ct_trace_format ct_trace_format_of(const char *path);

/* Opens the temporary file of path (ct_outfile) and writes the header of format fmt. freq_mhz
 * > 0 converts cycles to time. filter may be NULL (keep all). Errors: CT_ERR_INPUT (cannot
 * create the file), CT_ERR_LIMIT (no memory). */
ct_status ct_trace_open(ct_trace **t, const char *path, ct_trace_format fmt, double freq_mhz,
                        const ct_trace_filter *filter, ct_diag *d);
/* Names track tid ≥ 1 (JSON: "M" thread_name + thread_sort_index = tid; Perfetto: a thread
 * TrackDescriptor under the "ctpu cmodel" process track). */
void ct_trace_track(ct_trace *t, int tid, const char *name);
/* True if an instruction slice with this layer and cycle interval passes the filter. */
bool ct_trace_wants(const ct_trace *t, const char *layer, uint64_t start, uint64_t end);
/* A slice on track tid from start to end cycles (end ≥ start), named name, with args
 * (JSON: an X event of category "insn"; Perfetto: TYPE_SLICE_BEGIN + TYPE_SLICE_END). */
void ct_trace_complete(ct_trace *t, int tid, const char *name, uint64_t start, uint64_t end,
                       const ct_trace_arg *args, int n_args);
/* Counter `name` takes `value` from `cycle` on; dropped outside the filter's window. */
void ct_trace_counter(ct_trace *t, const char *name, uint64_t cycle, double value);
/* Finishes the file, closes and renames it into place; frees t. Errors: CT_ERR_INPUT on a
 * write error, CT_ERR_LIMIT when a back end ran out of memory while writing (the file is
 * then removed). */
ct_status ct_trace_commit(ct_trace *t, ct_diag *d);
/* Closes and deletes the temporary file; frees t. NULL is fine. */
void ct_trace_abort(ct_trace *t);

#endif
