/* trace_json.c: the Chrome Trace Event JSON back end of traces/trace.h (the JSON Object
 * Format of Google's "Trace Event Format" document: ph M/X/C, ts/dur in µs). Streams one
 * event per line; times are integer picoseconds printed as µs with 6 decimals. */
#include <inttypes.h>
#include <stdio.h>

#include "traces/trace_backend.h"

static void put_us(FILE *f, uint64_t ps) {
  fprintf(f, "%" PRIu64 ".%06" PRIu64, ps / 1000000, ps % 1000000);
}

/* Writes s as a JSON string (quotes, backslashes and control characters escaped). */
static void put_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

/* Every event but the first follows a comma; state is non-NULL once one was written. */
static void sep(ct_trace *t) {
  fputs(t->state ? ",\n" : "\n", t->f);
  t->state = t;
}

static ct_status json_begin(ct_trace *t) {
  fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"ctpu sim\"},\"traceEvents\":[", t->f);
  sep(t);
  fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"ctpu cmodel\"}}", t->f);
  return CT_OK;
}

static void json_track(ct_trace *t, int tid, const char *name) {
  sep(t);
  fprintf(t->f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":", tid);
  put_str(t->f, name);
  fputs("}}", t->f);
  sep(t);
  fprintf(t->f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
          tid, tid);
}

static void json_slice(ct_trace *t, int tid, const char *name, uint64_t ps0, uint64_t ps1,
                       const ct_trace_arg *args, int n_args) {
  sep(t);
  fprintf(t->f, "{\"ph\":\"X\",\"cat\":\"insn\",\"pid\":1,\"tid\":%d,\"name\":", tid);
  put_str(t->f, name);
  fputs(",\"ts\":", t->f);
  put_us(t->f, ps0);
  fputs(",\"dur\":", t->f);
  put_us(t->f, ps1 - ps0);
  fputs(",\"args\":{", t->f);
  for (int i = 0; i < n_args; i++) {
    if (i) fputc(',', t->f);
    put_str(t->f, args[i].key);
    fputc(':', t->f);
    if (args[i].s)
      put_str(t->f, args[i].s);
    else
      fprintf(t->f, "%" PRId64, args[i].i);
  }
  fputs("}}", t->f);
}

static void json_counter(ct_trace *t, const char *name, uint64_t ps, double value) {
  sep(t);
  fputs("{\"ph\":\"C\",\"pid\":1,\"tid\":0,\"name\":", t->f);
  put_str(t->f, name);
  fputs(",\"ts\":", t->f);
  put_us(t->f, ps);
  if (value > -1e15 && value < 1e15 && value == (double)(int64_t)value)
    fprintf(t->f, ",\"args\":{\"value\":%" PRId64 "}}", (int64_t)value); /* exact */
  else
    fprintf(t->f, ",\"args\":{\"value\":%.17g}}", value);
}

static void json_end(ct_trace *t) {
  fputs("\n]}\n", t->f);
}

/* The state is a flag only (points at t itself): nothing to free. */
static void json_free(void *state) {
  (void)state;
}

const ct_trace_backend ct_trace_json_backend = {json_begin, json_track, json_slice, json_counter, json_end, json_free};
