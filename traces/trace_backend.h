/* trace_backend.h: the back-end side of traces/trace.h, private to traces/. trace.c owns the
 * file, the filters and the cycle → picosecond conversion; a back end only encodes events
 * already filtered, with times in integer picoseconds (monotone in cycles). */
#ifndef CT_TRACE_BACKEND_H
#define CT_TRACE_BACKEND_H

#include <stdio.h>

#include "common/outset.h"
#include "traces/trace.h"

/* The encoder of one format. begin writes the header and sets t->state (CT_ERR_LIMIT on no
 * memory); end writes the trailer; free releases t->state (NULL is fine). A back end that
 * runs out of memory mid-stream sets t->oom (the commit then fails). */
typedef struct ct_trace_backend {
  ct_status (*begin)(ct_trace *t);
  void (*track)(ct_trace *t, int tid, const char *name);
  void (*slice)(ct_trace *t, int tid, const char *name, uint64_t ps0, uint64_t ps1, const ct_trace_arg *args,
                int n_args);
  void (*counter)(ct_trace *t, const char *name, uint64_t ps, double value);
  void (*end)(ct_trace *t);
  void (*free)(void *state);
} ct_trace_backend;

struct ct_trace {
  FILE *f; /* out.f */
  ct_outfile out;
  double freq_mhz;
  ct_trace_filter filter;
  const ct_trace_backend *be;
  void *state;
  bool deflate; /* Perfetto: packets in zlib-deflated compressed_packets batches */
  bool oom;
};

extern const ct_trace_backend ct_trace_json_backend;
extern const ct_trace_backend ct_trace_perfetto_backend;

#endif
