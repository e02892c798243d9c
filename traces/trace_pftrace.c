/* trace_pftrace.c: the Perfetto back end of traces/trace.h: a Trace message written as a
 * stream of length-delimited TracePackets (field 1), encoded by protobuf-c from
 * traces/perfetto_trace.proto (Perfetto's own field numbers). Layout after Perfetto's
 * "Writing TrackEvent Protos Synthetically" reference: a process track, a thread track per
 * engine, a counter track per counter, TYPE_SLICE_BEGIN/END pairs with interned names. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "traces/perfetto_trace.pb-c.h"
#include "traces/trace_backend.h"

#define PF_SEQ 1           /* trusted_packet_sequence_id of every packet */
#define PF_PROCESS_UUID 1  /* the "ctpu cmodel" process track */
#define PF_TRACK_UUID0 1   /* engine track tid has uuid PF_TRACK_UUID0 + tid (tid ≥ 1) */
#define PF_COUNTER_UUID0 100
#define PF_MAX_COUNTERS 16
#define PF_MAX_ARGS 16
#define PF_BATCH (1u << 20) /* bytes of packets deflated into one compressed_packets */

typedef Perfetto__Protos__TracePacket pf_packet;
typedef Perfetto__Protos__TrackEvent pf_event;
typedef Perfetto__Protos__DebugAnnotation pf_annotation;

/* Interning index of one InternedData field: string → iid (1, 2, ...), open addressing. */
typedef struct pf_intern {
  char **keys;
  uint64_t *iids;
  size_t cap, n;
} pf_intern;

typedef struct pf_state {
  pf_intern names, keys, strings; /* event_names, debug_annotation_names, ..._string_values */
  char *counters[PF_MAX_COUNTERS]; /* counter names; uuid PF_COUNTER_UUID0 + index */
  int n_counters;
  uint8_t *buf;
  size_t cap;
  uint8_t *raw, *z; /* t->deflate: the batch of packets not yet written, its deflated form */
  size_t raw_n, raw_cap, z_cap;
  bool first; /* no packet written yet: the next one clears the incremental state */
} pf_state;

static size_t hash(const char *s) {
  size_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static bool intern_grow(pf_intern *h) {
  size_t cap = h->cap ? 2 * h->cap : 64;
  char **keys = calloc(cap, sizeof *keys);
  uint64_t *iids = calloc(cap, sizeof *iids);
  if (!keys || !iids) return free(keys), free(iids), false;
  for (size_t i = 0; i < h->cap; i++) {
    if (!h->keys[i]) continue;
    size_t j = hash(h->keys[i]) & (cap - 1);
    while (keys[j]) j = (j + 1) & (cap - 1);
    keys[j] = h->keys[i], iids[j] = h->iids[i];
  }
  free(h->keys), free(h->iids);
  h->keys = keys, h->iids = iids, h->cap = cap;
  return true;
}

/* The iid of s; a new one (and *fresh = true) on first sight. 0 when out of memory. */
static uint64_t intern(pf_intern *h, const char *s, bool *fresh) {
  *fresh = false;
  if (2 * (h->n + 1) > h->cap && !intern_grow(h)) return 0;
  size_t j = hash(s) & (h->cap - 1);
  for (; h->keys[j]; j = (j + 1) & (h->cap - 1))
    if (!strcmp(h->keys[j], s)) return h->iids[j];
  if (!(h->keys[j] = strdup(s))) return 0;
  *fresh = true;
  return h->iids[j] = ++h->n;
}

static void intern_free(pf_intern *h) {
  for (size_t i = 0; i < h->cap; i++) free(h->keys[i]);
  free(h->keys), free(h->iids);
}

static void put_varint(uint8_t *b, size_t *k, uint64_t v) {
  for (; v >= 0x80; v >>= 7) b[(*k)++] = (uint8_t)(v | 0x80);
  b[(*k)++] = (uint8_t)v;
}

/* Writes the batch of packets as one TracePacket whose compressed_packets (field 50) is the
 * batch deflated by zlib (compress2, level 6): Perfetto's trace processor inflates it and
 * reads the packets inside as if they stood in the file. */
static void batch_flush(ct_trace *t) {
  pf_state *s = t->state;
  if (!s->raw_n || t->oom) return;
  uLongf zn = compressBound((uLong)s->raw_n);
  if (zn > s->z_cap) {
    uint8_t *z = realloc(s->z, zn);
    if (!z) {
      t->oom = true;
      return;
    }
    s->z = z, s->z_cap = zn;
  }
  if (compress2(s->z, &zn, s->raw, (uLong)s->raw_n, 6) != Z_OK) {
    t->oom = true;
    return;
  }
  uint8_t head[24];
  size_t k = 0, inner = 2, h = 0; /* field 50, wire type 2: tag varint 0x92 0x03 */
  uint8_t len[10];
  put_varint(len, &h, zn);
  inner += h + zn;
  head[k++] = 0x0a;
  put_varint(head, &k, inner);
  head[k++] = 0x92, head[k++] = 0x03;
  memcpy(head + k, len, h), k += h;
  fwrite(head, 1, k, t->f);
  fwrite(s->z, 1, zn, t->f);
  s->raw_n = 0;
}

/* Appends one length-delimited packet (k bytes) to the batch; a full batch is written. */
static void batch_add(ct_trace *t, const uint8_t *b, size_t k) {
  pf_state *s = t->state;
  if (s->raw_n + k > s->raw_cap) {
    size_t cap = s->raw_cap ? 2 * s->raw_cap : PF_BATCH + 4096;
    while (cap < s->raw_n + k) cap *= 2;
    uint8_t *r = realloc(s->raw, cap);
    if (!r) {
      t->oom = true;
      return;
    }
    s->raw = r, s->raw_cap = cap;
  }
  memcpy(s->raw + s->raw_n, b, k), s->raw_n += k;
  if (s->raw_n >= PF_BATCH) batch_flush(t);
}

/* Writes p as field 1 of the Trace message (tag 0x0a, varint length, bytes), on sequence
 * PF_SEQ: the first packet clears the incremental state, every later one needs it. */
static void put_packet(ct_trace *t, pf_packet *p) {
  pf_state *s = t->state;
  p->has_trusted_packet_sequence_id = 1, p->trusted_packet_sequence_id = PF_SEQ;
  p->has_sequence_flags = 1;
  p->sequence_flags = s->first ? PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED
                               : PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
  s->first = false;
  size_t n = perfetto__protos__trace_packet__get_packed_size(p);
  if (n + 11 > s->cap) {
    size_t cap = 2 * (n + 11);
    uint8_t *b = realloc(s->buf, cap);
    if (!b) {
      t->oom = true;
      return;
    }
    s->buf = b, s->cap = cap;
  }
  size_t k = 0;
  s->buf[k++] = 0x0a;
  put_varint(s->buf, &k, n);
  k += perfetto__protos__trace_packet__pack(p, s->buf + k);
  if (t->deflate) batch_add(t, s->buf, k);
  else fwrite(s->buf, 1, k, t->f);
}

/* A packet carrying track descriptor td. */
static void put_track(ct_trace *t, Perfetto__Protos__TrackDescriptor *td) {
  pf_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
  p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
  p.track_descriptor = td;
  put_packet(t, &p);
}

static ct_status pf_begin(ct_trace *t) {
  pf_state *s = calloc(1, sizeof *s);
  if (!s) return CT_ERR_LIMIT;
  s->first = true;
  t->state = s;
  Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
  pd.has_pid = 1, pd.pid = 1, pd.process_name = "ctpu cmodel";
  Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
  td.has_uuid = 1, td.uuid = PF_PROCESS_UUID, td.process = &pd;
  put_track(t, &td);
  return t->oom ? CT_ERR_LIMIT : CT_OK;
}

static void pf_track(ct_trace *t, int tid, const char *name) {
  Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
  th.has_pid = 1, th.pid = 1, th.has_tid = 1, th.tid = tid, th.thread_name = (char *)name;
  Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
  td.has_uuid = 1, td.uuid = PF_TRACK_UUID0 + (uint64_t)tid;
  td.has_parent_uuid = 1, td.parent_uuid = PF_PROCESS_UUID;
  td.name = (char *)name, td.thread = &th;
  put_track(t, &td);
}

/* New interned entries of one packet (at most one event name, PF_MAX_ARGS keys and values). */
typedef struct pf_news {
  Perfetto__Protos__EventName name, *pname[1];
  Perfetto__Protos__DebugAnnotationName key[PF_MAX_ARGS], *pkey[PF_MAX_ARGS];
  Perfetto__Protos__InternedString str[PF_MAX_ARGS], *pstr[PF_MAX_ARGS];
  Perfetto__Protos__InternedData data;
} pf_news;

static void news_init(pf_news *w) {
  perfetto__protos__interned_data__init(&w->data);
  w->data.event_names = w->pname, w->data.debug_annotation_names = w->pkey;
  w->data.debug_annotation_string_values = w->pstr;
}

static void news_name(pf_news *w, uint64_t iid, const char *s) {
  perfetto__protos__event_name__init(&w->name);
  w->name.has_iid = 1, w->name.iid = iid, w->name.name = (char *)s;
  w->pname[w->data.n_event_names++] = &w->name;
}

static void news_key(pf_news *w, uint64_t iid, const char *s) {
  Perfetto__Protos__DebugAnnotationName *e = &w->key[w->data.n_debug_annotation_names];
  perfetto__protos__debug_annotation_name__init(e);
  e->has_iid = 1, e->iid = iid, e->name = (char *)s;
  w->pkey[w->data.n_debug_annotation_names++] = e;
}

static void news_str(pf_news *w, uint64_t iid, const char *s) {
  Perfetto__Protos__InternedString *e = &w->str[w->data.n_debug_annotation_string_values];
  perfetto__protos__interned_string__init(e);
  e->has_iid = 1, e->iid = iid, e->has_str = 1, e->str.data = (uint8_t *)s, e->str.len = strlen(s);
  w->pstr[w->data.n_debug_annotation_string_values++] = e;
}

/* Fills a[] from args: interned names and string values, -1 and "" (no such information)
 * left out. Returns the number of annotations; sets t->oom when interning fails. */
static int annotations(ct_trace *t, const ct_trace_arg *args, int n_args, pf_news *w, pf_annotation *a,
                       pf_annotation **pa) {
  pf_state *s = t->state;
  int n = 0;
  bool fresh;
  for (int i = 0; i < n_args && i < PF_MAX_ARGS; i++) {
    if (args[i].s ? !*args[i].s : args[i].i == -1) continue;
    perfetto__protos__debug_annotation__init(&a[n]);
    uint64_t key = intern(&s->keys, args[i].key, &fresh);
    if (fresh) news_key(w, key, args[i].key);
    a[n].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID, a[n].name_iid = key;
    if (args[i].s) {
      uint64_t v = intern(&s->strings, args[i].s, &fresh);
      if (fresh) news_str(w, v, args[i].s);
      a[n].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID, a[n].string_value_iid = v;
      if (!v) t->oom = true;
    } else {
      a[n].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE, a[n].int_value = args[i].i;
    }
    if (!key) t->oom = true;
    pa[n] = &a[n];
    n++;
  }
  return n;
}

/* A TrackEvent packet of type type on track uuid at time ps (written in ns). */
static void event_init(pf_packet *p, pf_event *e, Perfetto__Protos__TrackEvent__Type type, uint64_t uuid,
                       uint64_t ps) {
  perfetto__protos__trace_packet__init(p);
  perfetto__protos__track_event__init(e);
  p->has_timestamp = 1, p->timestamp = (ps + 500) / 1000; /* nearest ns, halves up: monotone */
  p->data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT, p->track_event = e;
  e->has_type = 1, e->type = type;
  e->has_track_uuid = 1, e->track_uuid = uuid;
}

static void pf_slice(ct_trace *t, int tid, const char *name, uint64_t ps0, uint64_t ps1, const ct_trace_arg *args,
                     int n_args) {
  pf_state *s = t->state;
  uint64_t uuid = PF_TRACK_UUID0 + (uint64_t)tid;
  pf_packet p;
  pf_event e;
  pf_news w;
  pf_annotation a[PF_MAX_ARGS], *pa[PF_MAX_ARGS];
  event_init(&p, &e, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, uuid, ps0);
  news_init(&w);
  bool fresh;
  uint64_t iid = intern(&s->names, name, &fresh);
  if (!iid) t->oom = true;
  if (fresh) news_name(&w, iid, name);
  e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID, e.name_iid = iid;
  e.n_debug_annotations = (size_t)annotations(t, args, n_args, &w, a, pa);
  e.debug_annotations = pa;
  if (w.data.n_event_names + w.data.n_debug_annotation_names + w.data.n_debug_annotation_string_values)
    p.interned_data = &w.data;
  put_packet(t, &p);
  event_init(&p, &e, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, uuid, ps1);
  put_packet(t, &p);
}

/* The uuid of counter track name, its descriptor written on first use; 0 when full. */
static uint64_t counter_track(ct_trace *t, const char *name) {
  pf_state *s = t->state;
  for (int i = 0; i < s->n_counters; i++)
    if (!strcmp(s->counters[i], name)) return PF_COUNTER_UUID0 + (uint64_t)i;
  if (s->n_counters == PF_MAX_COUNTERS) return 0;
  if (!(s->counters[s->n_counters] = strdup(name))) return t->oom = true, 0;
  uint64_t uuid = PF_COUNTER_UUID0 + (uint64_t)s->n_counters++;
  Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
  Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
  td.has_uuid = 1, td.uuid = uuid, td.has_parent_uuid = 1, td.parent_uuid = PF_PROCESS_UUID;
  td.name = (char *)name, td.counter = &cd;
  put_track(t, &td);
  return uuid;
}

static void pf_counter(ct_trace *t, const char *name, uint64_t ps, double value) {
  uint64_t uuid = counter_track(t, name);
  if (!uuid) return;
  pf_packet p;
  pf_event e;
  event_init(&p, &e, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER, uuid, ps);
  if (value > -9e18 && value < 9e18 && value == (double)(int64_t)value) {
    e.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
    e.counter_value = (int64_t)value;
  } else {
    e.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
    e.double_counter_value = value;
  }
  put_packet(t, &p);
}

static void pf_end(ct_trace *t) {
  if (t->deflate) batch_flush(t);
}

static void pf_free(void *state) {
  pf_state *s = state;
  if (!s) return;
  intern_free(&s->names), intern_free(&s->keys), intern_free(&s->strings);
  for (int i = 0; i < s->n_counters; i++) free(s->counters[i]);
  free(s->buf), free(s->raw), free(s->z);
  free(s);
}

const ct_trace_backend ct_trace_perfetto_backend = {pf_begin, pf_track, pf_slice, pf_counter, pf_end, pf_free};
