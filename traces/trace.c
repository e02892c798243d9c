/* trace.c: streaming Chrome Trace Event JSON writer (Trace Event Format, Google's
 * "Trace Event Format" document: ph M/X/C, ts/dur in µs). Written to a temp file, renamed
 * on commit. Timestamps are integers of picoseconds printed as µs with 6 decimals. */
#include "traces/trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"

struct ct_trace {
  FILE *f;   /* out.f */
  ct_outfile out;
  double freq_mhz;
  ct_trace_filter filter;
  bool first;
};

/* Cycle → picoseconds (1e-6 µs), rounded to nearest; monotone in cycle. */
static uint64_t cyc_ps(const ct_trace *t, uint64_t cycle) {
  return (uint64_t)((double)cycle * 1e6 / t->freq_mhz + 0.5);
}

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

static void sep(ct_trace *t) {
  fputs(t->first ? "\n" : ",\n", t->f);
  t->first = false;
}

ct_status ct_trace_open(ct_trace **out, const char *path, double freq_mhz,
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
  t->first = true;
  fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"ctpu sim\"},"
        "\"traceEvents\":[", t->f);
  sep(t);
  fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":"
        "\"ctpu cmodel\"}}", t->f);
  *out = t;
  return CT_OK;
}

void ct_trace_track(ct_trace *t, int tid, const char *name) {
  sep(t);
  fprintf(t->f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":"
          "{\"name\":", tid);
  put_str(t->f, name);
  fputs("}}", t->f);
  sep(t);
  fprintf(t->f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\","
          "\"args\":{\"sort_index\":%d}}", tid, tid);
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
  uint64_t ps0 = cyc_ps(t, start), ps1 = cyc_ps(t, end);
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

void ct_trace_counter(ct_trace *t, const char *name, uint64_t cycle, double value) {
  const ct_trace_filter *f = &t->filter;
  if (cycle < f->start_cycle || (f->end_cycle && cycle >= f->end_cycle)) return;
  sep(t);
  fputs("{\"ph\":\"C\",\"pid\":1,\"tid\":0,\"name\":", t->f);
  put_str(t->f, name);
  fputs(",\"ts\":", t->f);
  put_us(t->f, cyc_ps(t, cycle));
  fprintf(t->f, ",\"args\":{\"value\":%.6g}}", value);
}

ct_status ct_trace_commit(ct_trace *t, ct_diag *d) {
  fputs("\n]}\n", t->f);
  ct_status st = ct_outfile_commit(&t->out, d);
  free(t);
  return st;
}

void ct_trace_abort(ct_trace *t) {
  if (!t) return;
  ct_outfile_abort(&t->out);
  free(t);
}
