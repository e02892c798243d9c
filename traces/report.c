/* report.c: summary JSON (cJSON) and per-layer CSV (RFC 4180) from the cmodel counters;
 * every number printed is a counter or a ratio of counters (VTA profiler / Gemmini style). */
#include "traces/report.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outset.h"

const char *ct_stall_name(ct_stall s) {
  static const char *names[] = {
#define X(E, json, doc) json,
#include "traces/stall.def"
#undef X
  };
  _Static_assert(sizeof names / sizeof names[0] == CT_STALL_COUNT, "stall.def drift");
  return (unsigned)s < CT_STALL_COUNT ? names[s] : "?";
}

static cJSON *engine_json(const ct_engine_counters *e) {
  cJSON *o = cJSON_CreateObject(), *st = cJSON_CreateObject();
  if (!o || !st) {
    cJSON_Delete(o);
    cJSON_Delete(st);
    return NULL;
  }
  cJSON_AddNumberToObject(o, "busy", (double)e->busy);
  cJSON_AddNumberToObject(o, "idle", (double)e->idle);
  uint64_t total = 0;
  for (int s = 0; s < CT_STALL_COUNT; s++) {
    cJSON_AddNumberToObject(st, ct_stall_name((ct_stall)s), (double)e->stall[s]);
    total += e->stall[s];
  }
  cJSON_AddItemToObject(o, "stall", st);
  cJSON_AddNumberToObject(o, "stall_total", (double)total);
  cJSON_AddNumberToObject(o, "instructions", (double)e->insns);
  return o;
}

/* Busy cycles of the engine named name (0 when there is none). */
static uint64_t engine_busy(const ct_sim_counters *c, const char *name) {
  for (int i = 0; i < c->n_engines; i++)
    if (!strcmp(c->engines[i].name, name)) return c->engines[i].busy;
  return 0;
}

const char *ct_report_limit(double mxu, double vpu, double ddr, double *bound) {
  double m = mxu > vpu ? mxu : vpu;
  *bound = ddr > m ? ddr : m;
  return *bound == 0 ? "none" : *bound == vpu ? "vpu" : *bound == mxu ? "mxu" : "ddr";
}

void ct_report_bound_of(const ct_sim_counters *c, ct_report_bound *b) {
  memset(b, 0, sizeof *b);
  b->mxu = c->mxu_ideal_cycles, b->vpu = (double)engine_busy(c, "vpu");
  b->ddr = c->ddr_bytes_per_cycle ? (double)c->ddr_compulsory_bytes / (double)c->ddr_bytes_per_cycle : 0;
  b->limit = ct_report_limit(b->mxu, b->vpu, b->ddr, &b->cycles);
  uint64_t busiest = 0;
  for (int i = 0; i < c->n_engines; i++)
    if (c->engines[i].busy > busiest) busiest = c->engines[i].busy, b->busiest = c->engines[i].name;
  b->total_over_bound = b->cycles > 0 ? (double)c->total_cycles / b->cycles : 0;
  b->efficiency = c->total_cycles ? (double)busiest / (double)c->total_cycles : 0;
}

static cJSON *bound_json(const ct_sim_counters *c) {
  ct_report_bound b;
  ct_report_bound_of(c, &b);
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "mxu_cycles", b.mxu);
  cJSON_AddNumberToObject(o, "vpu_cycles", b.vpu);
  cJSON_AddNumberToObject(o, "ddr_cycles", b.ddr);
  cJSON_AddNumberToObject(o, "ddr_compulsory_bytes", (double)c->ddr_compulsory_bytes);
  cJSON_AddNumberToObject(o, "cycles", b.cycles);
  cJSON_AddStringToObject(o, "limit", b.limit);
  cJSON_AddNumberToObject(o, "total_over_bound", b.total_over_bound);
  cJSON_AddNumberToObject(o, "schedule_efficiency", b.efficiency);
  cJSON_AddStringToObject(o, "busiest_engine", b.busiest ? b.busiest : "none");
  return o;
}

char *ct_report_summary_text(const ct_sim_counters *c) {
  cJSON *root = cJSON_CreateObject(), *engines = cJSON_CreateObject();
  if (!root || !engines) {
    cJSON_Delete(root);
    cJSON_Delete(engines);
    return NULL;
  }
  double cyc = (double)c->total_cycles, f = c->freq_mhz > 0 ? c->freq_mhz : 1000;
  double peak = (double)c->mxu_rows * (double)c->mxu_cols * cyc;
  cJSON_AddNumberToObject(root, "total_cycles", cyc);
  cJSON_AddNumberToObject(root, "freq_mhz", f);
  cJSON_AddNumberToObject(root, "time_us", cyc / f);
  cJSON_AddNumberToObject(root, "instructions", (double)c->instructions);
  cJSON_AddNumberToObject(root, "macs", (double)c->macs);
  cJSON_AddNumberToObject(root, "mxu_utilization", peak > 0 ? (double)c->macs / peak : 0);
  cJSON_AddNumberToObject(root, "ddr_bytes_read", (double)c->ddr_bytes_read);
  cJSON_AddNumberToObject(root, "ddr_bytes_written", (double)c->ddr_bytes_written);
  cJSON_AddNumberToObject(root, "bank_conflict_cycles", (double)c->bank_conflict_cycles);
  cJSON_AddNumberToObject(root, "mxu_vpu_overlap_cycles", (double)c->mxu_vpu_overlap);
  cJSON_AddNumberToObject(root, "wall_seconds", c->wall_seconds);
  cJSON_AddNumberToObject(root, "sim_cycles_per_second",
                          c->wall_seconds > 0 ? cyc / c->wall_seconds : 0);
  cJSON_AddBoolToObject(root, "functional", c->functional != 0);
  for (int i = 0; i < c->n_engines; i++) {
    cJSON *e = engine_json(&c->engines[i]);
    if (!e) {
      cJSON_Delete(root);
      cJSON_Delete(engines);
      return NULL;
    }
    cJSON_AddItemToObject(engines, c->engines[i].name, e);
  }
  cJSON_AddItemToObject(root, "engines", engines);
  cJSON *lb = bound_json(c);
  if (!lb) {
    cJSON_Delete(root);
    return NULL;
  }
  cJSON_AddItemToObject(root, "lower_bound", lb);
  char *s = cJSON_Print(root);
  cJSON_Delete(root);
  return s;
}

static ct_status put_text(FILE *f, const void *text, ct_diag *d) {
  (void)d;
  fputs(text, f); /* a failed write shows in ferror: ct_outfile_commit reports it */
  return CT_OK;
}

ct_status ct_report_summary(const char *path, const ct_sim_counters *c, ct_diag *d) {
  char *s = ct_report_summary_text(c);
  if (!s) return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory building the summary", path);
  ct_status st = ct_outfile_write(path, put_text, s, d);
  free(s);
  return st;
}

/* Appends to a growing buffer; false on out of memory. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf;

static bool sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool sb_printf(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) return false;
    if (b->p && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return true;
    }
    size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)k;
    char *q = realloc(b->p, cap);
    if (!q) return false;
    b->p = q;
    b->cap = cap;
  }
}

/* RFC 4180: quote a field that holds a comma, quote or line break; double inner quotes. */
static bool sb_csv_field(sbuf *b, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) return sb_printf(b, "%s", s);
  bool ok = sb_printf(b, "\"");
  for (const char *p = s; ok && *p; p++) ok = *p == '"' ? sb_printf(b, "\"\"") : sb_printf(b, "%c", *p);
  return ok && sb_printf(b, "\"");
}

static bool layer_row(sbuf *b, const ct_sim_counters *c, const ct_layer_counters *l) {
  bool ok = sb_csv_field(b, l->name ? l->name : "");
  ok = ok && sb_printf(b, ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, l->group,
                       l->start, l->end, l->end - l->start, l->insns);
  for (int e = 0; ok && e < c->n_engines; e++) ok = sb_printf(b, ",%" PRIu64, l->busy[e]);
  ok = ok && sb_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, l->macs, l->ddr_bytes_read, l->ddr_bytes_written);
  for (int s = 0; ok && s < CT_STALL_COUNT; s++)
    if (s != CT_STALL_QUEUE) ok = sb_printf(b, ",%" PRIu64, l->stall[s]);
  return ok && sb_printf(b, "\n");
}

ct_status ct_report_layers(const char *path, const ct_sim_counters *c,
                           const ct_layer_counters *layers, int n_layers, ct_diag *d) {
  sbuf b = {0};
  bool ok = sb_printf(&b, "layer,group,start,end,cycles,instructions");
  for (int e = 0; ok && e < c->n_engines; e++) ok = sb_printf(&b, ",busy_%s", c->engines[e].name);
  ok = ok && sb_printf(&b, ",macs,ddr_bytes_read,ddr_bytes_written");
  for (int s = 0; ok && s < CT_STALL_COUNT; s++)
    if (s != CT_STALL_QUEUE) ok = sb_printf(&b, ",stall_%s", ct_stall_name((ct_stall)s));
  ok = ok && sb_printf(&b, "\n");
  for (int i = 0; ok && i < n_layers; i++) ok = layer_row(&b, c, &layers[i]);
  ct_status st = ok ? ct_outfile_write(path, put_text, b.p, d)
                    : ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory building the report", path);
  free(b.p);
  return st;
}
