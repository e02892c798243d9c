/* test_trace.c: `ctpu sim --trace` in both formats on a real program (fmnist-rescnn, INT8,
 * deployed through the CLI): the Perfetto trace, decoded by protoc (--decode with
 * traces/perfetto_trace.proto, Google's own decoder) and by libprotobuf-c, holds per engine
 * track the slices of the JSON trace's X events (same names, args, begin/end times in ns) and
 * the same counter series; windows filter both alike; a bad path fails cleanly. And the
 * deploy groups CSV's mxu_util counts the MACs the summary counts (MobileNetV2). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tests/testutil.h"
#include "traces/perfetto_trace.pb-c.h"

#define MAXT 16   /* tracks (engines + ctrl) and counters */
#define MAXS 4096 /* slices or counter values per track */

typedef struct slice {
  int64_t b, e; /* ns */
  char name[32], layer[160];
  int64_t insn;
} slice;

typedef struct point {
  int64_t ns;
  double v;
} point;

/* A trace reduced to what both formats carry: named tracks of slices, named counters. */
typedef struct view {
  int nt, nc;
  char tname[MAXT][32], cname[MAXT][32];
  int ns[MAXT], ncv[MAXT];
  slice s[MAXT][MAXS];
  point c[MAXT][MAXS];
} view;

/* Copies s into d[n], truncated. */
static void scopy(char *d, const char *s, size_t n) {
  size_t k = 0;
  for (; s[k] && k + 1 < n; k++) d[k] = s[k];
  d[k] = '\0';
}

static int64_t ps_to_ns(int64_t ps) { return (ps + 500) / 1000; }

static int track_of(view *v, const char *name, bool counter) {
  char(*names)[32] = counter ? v->cname : v->tname;
  int *n = counter ? &v->nc : &v->nt;
  for (int i = 0; i < *n; i++)
    if (!strcmp(names[i], name)) return i;
  ck_assert_int_lt(*n, MAXT);
  scopy(names[*n], name, 32);
  return (*n)++;
}

/* ---- JSON: M thread_name, X, C events ---- */

static int64_t us_to_ps(const cJSON *x) { return llround(x->valuedouble * 1e6); }

static void json_view(const char *path, view *v) {
  memset(v, 0, sizeof *v);
  char *text = ct_test_read_file(path, NULL);
  ck_assert_ptr_nonnull(text);
  cJSON *root = cJSON_Parse(text), *e;
  ck_assert_ptr_nonnull(root);
  char tid_name[64][32] = {{0}};
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
    const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring, *name = cJSON_GetObjectItem(e, "name")->valuestring;
    int tid = cJSON_GetObjectItem(e, "tid")->valueint;
    cJSON *args = cJSON_GetObjectItem(e, "args");
    ck_assert(tid >= 0 && tid < 64);
    if (!strcmp(ph, "M") && !strcmp(name, "thread_name")) {
      scopy(tid_name[tid], cJSON_GetObjectItem(args, "name")->valuestring, 32);
      track_of(v, tid_name[tid], false);
    } else if (!strcmp(ph, "X")) {
      int t = track_of(v, tid_name[tid], false);
      ck_assert_int_lt(v->ns[t], MAXS);
      slice *s = &v->s[t][v->ns[t]++];
      int64_t ps = us_to_ps(cJSON_GetObjectItem(e, "ts"));
      s->b = ps_to_ns(ps), s->e = ps_to_ns(ps + us_to_ps(cJSON_GetObjectItem(e, "dur")));
      scopy(s->name, name, sizeof s->name);
      scopy(s->layer, cJSON_GetObjectItem(args, "layer")->valuestring, sizeof s->layer);
      s->insn = (int64_t)cJSON_GetObjectItem(args, "insn")->valuedouble;
    } else if (!strcmp(ph, "C")) {
      int c = track_of(v, name, true);
      ck_assert_int_lt(v->ncv[c], MAXS);
      v->c[c][v->ncv[c]++] = (point){ps_to_ns(us_to_ps(cJSON_GetObjectItem(e, "ts"))),
                                     cJSON_GetObjectItem(args, "value")->valuedouble};
    }
  }
  cJSON_Delete(root);
  free(text);
}

/* ---- Perfetto, as `protoc --decode=perfetto.protos.Trace` prints it ---- */

typedef struct pf_parse {
  char stack[8][48];
  int depth, packets, flags_bad;
  /* the packet being read */
  int64_t ts, uuid, tuuid, name_iid, type, flags, seq, tid, iid, ann_key;
  double value;
  bool is_counter, has_value;
  char name[160], str[160];
  struct {
    int64_t key, x; /* name iid; value (a string iid when str) */
    bool str;
    char val[32];
  } ann[8];
  int nann;
  /* interning tables and tracks, by iid / uuid (small numbers) */
  char ev[64][160], key[64][160], sval[1024][160];
  char uuid_name[256][32];
  bool uuid_counter[256];
  int open[256]; /* index + 1 of the open slice of a track, 0 if none */
} pf_parse;

static bool at(const pf_parse *p, const char *path) {
  char buf[256] = "";
  for (int i = 0; i < p->depth; i++) strcat(strcat(buf, i ? "/" : ""), p->stack[i]);
  return !strcmp(buf, path);
}

static void unquote(const char *s, char *out, size_t n) {
  size_t k = 0;
  for (s = strchr(s, '"') + 1; *s && *s != '"' && k + 1 < n; s++) out[k++] = *s == '\\' ? *++s : *s;
  out[k] = '\0';
}

/* One "key: value" line inside the packet. */
static void pf_field(pf_parse *p, const char *key, const char *val) {
  int64_t x = strtoll(val, NULL, 10);
  if (at(p, "packet")) {
    if (!strcmp(key, "timestamp")) p->ts = x;
    if (!strcmp(key, "sequence_flags")) p->flags = x;
    if (!strcmp(key, "trusted_packet_sequence_id")) p->seq = x;
  } else if (at(p, "packet/track_descriptor")) {
    if (!strcmp(key, "uuid")) p->uuid = x;
    if (!strcmp(key, "name")) unquote(val, p->name, sizeof p->name);
  } else if (at(p, "packet/track_event")) {
    if (!strcmp(key, "type")) p->type = !strcmp(val, "TYPE_SLICE_BEGIN") ? 1 : !strcmp(val, "TYPE_SLICE_END") ? 2 : 4;
    if (!strcmp(key, "track_uuid")) p->tuuid = x;
    if (!strcmp(key, "name_iid")) p->name_iid = x;
    if (!strcmp(key, "counter_value") || !strcmp(key, "double_counter_value")) p->value = strtod(val, NULL), p->has_value = true;
  } else if (at(p, "packet/track_event/debug_annotations")) {
    ck_assert_int_lt(p->nann, 8);
    if (!strcmp(key, "name_iid")) p->ann[p->nann].key = x;
    else {
      p->ann[p->nann].str = !strcmp(key, "string_value_iid");
      p->ann[p->nann].x = x;
      scopy(p->ann[p->nann].val, val, sizeof p->ann[p->nann].val);
      p->nann++;
    }
  } else if (!strncmp(p->stack[p->depth - 1], "event_names", 11) || !strncmp(p->stack[p->depth - 1], "debug_annotation", 16)) {
    if (!strcmp(key, "iid")) p->iid = x;
    else {
      unquote(val, p->str, sizeof p->str);
      const char *blk = p->stack[p->depth - 1];
      bool strings = !strcmp(blk, "debug_annotation_string_values");
      ck_assert(p->iid > 0 && p->iid < (strings ? 1024 : 64));
      char *dst = strings ? p->sval[p->iid] : !strcmp(blk, "event_names") ? p->ev[p->iid] : p->key[p->iid];
      ck_assert_msg(!dst[0], "iid %lld of %s defined twice", (long long)p->iid, blk);
      scopy(dst, p->str, 160);
    }
  }
}

/* The value of annotation key of the packet, its name and string interned (the packet's own
 * interned_data, printed after the event, is already in the tables). NULL if absent. */
static const char *ann(const pf_parse *p, const char *key) {
  for (int i = 0; i < p->nann; i++) {
    int64_t k = p->ann[i].key, x = p->ann[i].x;
    ck_assert_msg(k > 0 && k < 64 && p->key[k][0], "annotation name iid %lld not interned", (long long)k);
    if (strcmp(p->key[k], key)) continue;
    if (!p->ann[i].str) return p->ann[i].val;
    ck_assert_msg(x > 0 && x < 1024 && p->sval[x][0], "string iid %lld not interned", (long long)x);
    return p->sval[x];
  }
  return NULL;
}

/* The end of a packet: a track, a slice begin or end, a counter value. */
static void pf_packet_end(pf_parse *p, view *v) {
  p->flags_bad += p->seq != 1 || p->flags != (p->packets ? 2 : 1);
  p->packets++;
  if (p->uuid) {
    ck_assert(p->uuid < 256);
    scopy(p->uuid_name[p->uuid], p->name, 32);
    p->uuid_counter[p->uuid] = p->is_counter;
    if (p->tid) track_of(v, p->name, false);
  } else if (p->type) {
    ck_assert_msg(p->tuuid > 0 && p->tuuid < 256 && p->uuid_name[p->tuuid][0], "event on undeclared track %lld", (long long)p->tuuid);
    const char *tn = p->uuid_name[p->tuuid];
    if (p->type == 4) {
      int c = track_of(v, tn, true);
      ck_assert(p->uuid_counter[p->tuuid] && p->has_value && v->ncv[c] < MAXS);
      v->c[c][v->ncv[c]++] = (point){p->ts, p->value};
      return;
    }
    int t = track_of(v, tn, false);
    if (p->type == 1) {
      ck_assert_msg(!p->open[p->tuuid], "nested slice on %s", tn);
      ck_assert(v->ns[t] < MAXS && p->name_iid > 0 && p->name_iid < 64 && p->ev[p->name_iid][0]);
      slice *s = &v->s[t][v->ns[t]++];
      s->b = p->ts;
      scopy(s->name, p->ev[p->name_iid], sizeof s->name);
      const char *layer = ann(p, "layer"), *insn = ann(p, "insn");
      scopy(s->layer, layer ? layer : "", sizeof s->layer);
      s->insn = insn ? strtoll(insn, NULL, 10) : -1;
      p->open[p->tuuid] = v->ns[t];
    } else {
      ck_assert_msg(p->open[p->tuuid], "slice end without begin on %s", tn);
      v->s[t][p->open[p->tuuid] - 1].e = p->ts;
      p->open[p->tuuid] = 0;
    }
  }
}

/* Decodes path with protoc into a view; returns the number of packets. */
static int pf_view(const char *path, view *v) {
  memset(v, 0, sizeof *v);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "protoc --decode=perfetto.protos.Trace -I %s/traces %s/traces/perfetto_trace.proto < %s",
           CT_SOURCE_DIR, CT_SOURCE_DIR, path);
  FILE *f = popen(cmd, "r");
  ck_assert_ptr_nonnull(f);
  pf_parse *p = calloc(1, sizeof *p);
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char *s = line + strspn(line, " "), *colon = strchr(s, ':');
    s[strcspn(s, "\n")] = '\0';
    if (s[0] == '}') {
      ck_assert_int_gt(p->depth, 0);
      if (--p->depth == 0) pf_packet_end(p, v);
    } else if (strchr(s, '{') && (!colon || strchr(s, '{') < colon)) {
      ck_assert_int_lt(p->depth, 8);
      *strchr(s, ' ') = '\0';
      scopy(p->stack[p->depth++], s, 48);
      if (p->depth == 1) memset(&p->ts, 0, (size_t)((char *)p->ev - (char *)&p->ts)); /* the packet's fields */
      if (at(p, "packet/track_descriptor/counter")) p->is_counter = true;
    } else if (colon) {
      *colon = '\0';
      if (at(p, "packet/track_descriptor/thread") && !strcmp(s, "tid")) p->tid = strtoll(colon + 2, NULL, 10);
      else pf_field(p, s, colon + 2);
    }
  }
  ck_assert_int_eq(pclose(f), 0);
  ck_assert_int_eq(p->depth, 0);
  ck_assert_msg(p->flags_bad == 0, "%d packets with a wrong sequence id or flags", p->flags_bad);
  int n = p->packets;
  free(p);
  return n;
}

/* NULL if a and b hold the same tracks, slices and counters, else what differs (in why). */
static const char *compare(const view *a, const view *b, char *why, size_t n) {
  int slices = 0;
  for (int i = 0; i < a->nt; i++) {
    int j = 0;
    while (j < b->nt && strcmp(a->tname[i], b->tname[j])) j++;
    if (j == b->nt) return snprintf(why, n, "track %s missing", a->tname[i]), why;
    if (a->ns[i] != b->ns[j])
      return snprintf(why, n, "track %s: %d slices vs %d", a->tname[i], a->ns[i], b->ns[j]), why;
    for (int k = 0; k < a->ns[i]; k++) {
      const slice *x = &a->s[i][k], *y = &b->s[j][k];
      if (x->b != y->b || x->e != y->e || strcmp(x->name, y->name) || strcmp(x->layer, y->layer) || x->insn != y->insn)
        return snprintf(why, n, "track %s slice %d: %s %s insn %lld [%lld, %lld] vs %s %s insn %lld [%lld, %lld]",
                        a->tname[i], k, x->name, x->layer, (long long)x->insn, (long long)x->b, (long long)x->e,
                        y->name, y->layer, (long long)y->insn, (long long)y->b, (long long)y->e), why;
    }
    slices += a->ns[i];
  }
  int other = 0;
  for (int j = 0; j < b->nt; j++) other += b->ns[j];
  if (other != slices) return snprintf(why, n, "%d slices vs %d", slices, other), why;
  if (a->nc != b->nc) return snprintf(why, n, "%d counters vs %d", a->nc, b->nc), why;
  for (int i = 0; i < a->nc; i++) {
    int j = 0;
    while (j < b->nc && strcmp(a->cname[i], b->cname[j])) j++;
    if (j == b->nc) return snprintf(why, n, "counter %s missing", a->cname[i]), why;
    if (a->ncv[i] != b->ncv[j])
      return snprintf(why, n, "counter %s: %d values vs %d", a->cname[i], a->ncv[i], b->ncv[j]), why;
    for (int k = 0; k < a->ncv[i]; k++)
      if (a->c[i][k].ns != b->c[j][k].ns || a->c[i][k].v != b->c[j][k].v)
        return snprintf(why, n, "counter %s value %d: %g at %lld vs %g at %lld", a->cname[i], k, a->c[i][k].v,
                        (long long)a->c[i][k].ns, b->c[j][k].v, (long long)b->c[j][k].ns), why;
  }
  return NULL;
}

/* The trace decoded by libprotobuf-c: packets and TYPE_SLICE_BEGIN events. */
static void pbc_count(const char *path, int *packets, int *begins) {
  size_t n;
  char *buf = ct_test_read_file(path, &n);
  ck_assert_ptr_nonnull(buf);
  Perfetto__Protos__Trace *tr = perfetto__protos__trace__unpack(NULL, n, (const uint8_t *)buf);
  ck_assert_msg(tr != NULL, "%s: libprotobuf-c cannot decode it", path);
  *packets = (int)tr->n_packet, *begins = 0;
  for (size_t i = 0; i < tr->n_packet; i++) {
    const Perfetto__Protos__TracePacket *p = tr->packet[i];
    if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT &&
        p->track_event->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN)
      (*begins)++;
  }
  perfetto__protos__trace__free_unpacked(tr, NULL);
  free(buf);
}

/* fmnist-rescnn INT8 (minmax-calibrated on its test input) deployed for chip (NULL: the
 * default chip) into the temporary file name; returns its path (static storage). */
static const char *deploy_fmnist(const char *name, const char *chip) {
  static char prog[1024];
  char msg[4096], chip_opt[1024] = "";
  const char *m = ct_test_shared_path("models/fmnist-rescnn/model.onnx");
  const char *in = ct_test_shared_path("models/fmnist-rescnn/test_data_set_0/input_0.pb");
  char top[1024], calib[1024];
  scopy(top, ct_test_tmp_path("fm.top"), sizeof top);
  scopy(calib, ct_test_tmp_path("fm.calib"), sizeof calib);
  if (chip) snprintf(chip_opt, sizeof chip_opt, "--chip %s", chip);
  int rc = ct_test_run_ctpu(msg, sizeof msg, "transform %s -o %s", m, top);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "calibrate %s --dataset %s --method minmax -o %s", top, in, calib);
  if (!rc)
    rc = ct_test_run_ctpu(msg, sizeof msg, "deploy %s --quantize INT8 --calibration-table %s %s -o %s", top, calib,
                          chip_opt, ct_test_tmp_path(name));
  ck_assert_msg(rc == 0, "%s", msg);
  scopy(prog, ct_test_tmp_path(name), sizeof prog);
  return prog;
}

static uint64_t get_varint(const uint8_t *b, size_t n, size_t *k) {
  uint64_t v = 0;
  for (int sh = 0; *k < n && sh < 64; sh += 7) {
    uint8_t c = b[(*k)++];
    v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) break;
  }
  return v;
}

/* The packets of a deflated trace (every packet a compressed_packets, field 50), inflated and
 * concatenated; *n their bytes. Fails the test on any other layout. */
static uint8_t *inflate_trace(const char *path, size_t *n, int *batches) {
  size_t fn, k = 0;
  uint8_t *f = (uint8_t *)ct_test_read_file(path, &fn), *out = NULL;
  ck_assert_ptr_nonnull(f);
  *n = 0, *batches = 0;
  while (k < fn) {
    ck_assert_int_eq(f[k++], 0x0a); /* Trace.packet */
    size_t len = get_varint(f, fn, &k), end = k + len;
    ck_assert(end <= fn && f[k] == 0x92 && f[k + 1] == 0x03); /* TracePacket.compressed_packets */
    k += 2;
    size_t zn = get_varint(f, fn, &k);
    ck_assert_uint_eq(k + zn, end);
    uLongf rn = 8u << 20;
    out = realloc(out, *n + rn);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(uncompress(out + *n, &rn, f + k, (uLong)zn), Z_OK);
    *n += rn, k = end, (*batches)++;
  }
  free(f);
  return out;
}

/* Simulates prog (chip may be NULL) with a JSON, a plain Perfetto (.pftrace) and a deflated
 * Perfetto (.perfetto-trace) trace, extra options opts for all, and checks that they agree
 * (the deflated packets, inflated, are the plain trace byte for byte); returns the number of
 * slices. */
static int sim_both(const char *prog, const char *chip, const char *opts, view *j, view *p) {
  char msg[4096], chip_opt[1024] = "", json[1024], pft[1024], pfz[1024];
  if (chip) snprintf(chip_opt, sizeof chip_opt, "--chip %s", chip);
  scopy(json, ct_test_tmp_path("t.json"), sizeof json);
  scopy(pft, ct_test_tmp_path("t.pftrace"), sizeof pft);
  scopy(pfz, ct_test_tmp_path("t.perfetto-trace"), sizeof pfz);
  const char *in = ct_test_shared_path("models/fmnist-rescnn/test_data_set_0/input_0.pb");
  const char *outs[3] = {json, pft, pfz};
  for (int k = 0; k < 3; k++) {
    int rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s --input %s -o %s %s --trace %s %s", prog, in,
                              ct_test_tmp_path("y.h5"), chip_opt, outs[k], opts);
    ck_assert_msg(rc == 0, "%s", msg);
  }
  size_t pn, zn;
  int batches;
  char *plain = ct_test_read_file(pft, &pn);
  uint8_t *inflated = inflate_trace(pfz, &zn, &batches);
  ck_assert(plain && batches >= 1 && zn == pn && !memcmp(plain, inflated, pn));
  free(plain), free(inflated);
  json_view(json, j);
  int packets = pf_view(pft, p), pbc_packets, begins;
  char why[1024];
  const char *diff = compare(j, p, why, sizeof why);
  ck_assert_msg(diff == NULL, "JSON vs Perfetto (%s): %s", opts, diff);
  int slices = 0;
  for (int i = 0; i < j->nt; i++) slices += j->ns[i];
  pbc_count(pft, &pbc_packets, &begins);
  ck_assert_int_eq(pbc_packets, packets);
  ck_assert_int_eq(begins, slices);
  return slices;
}

static view *va, *vb;

START_TEST(test_perfetto_matches_json) {
  const char *prog = deploy_fmnist("fm.ctpu", NULL);
  int all = sim_both(prog, NULL, "", va, vb);
  ck_assert_int_ge(all, 40); /* fmnist: 47 instructions, 2 without debug info (ctrl) or more */
  ck_assert_int_ge(va->nt, 5);
  ck_assert_int_eq(va->nc, 2); /* ddr_bytes_per_cycle, lmem_bytes_in_use */
  /* the window keeps the instructions overlapping it and the counters inside it */
  int win = sim_both(prog, NULL, "--trace-window 10000:30000", va, vb);
  ck_assert(win > 0 && win < all);
  for (int i = 0; i < va->nc; i++)
    for (int k = 0; k < va->ncv[i]; k++) ck_assert(va->c[i][k].ns >= 10000 && va->c[i][k].ns < 30000);
  int one = sim_both(prog, NULL, "--trace-layers /b1/conv1/Conv", va, vb);
  ck_assert_int_eq(one, 3); /* that layer's LOAD, CONV, STORE */
}
END_TEST

START_TEST(test_perfetto_ns_at_700mhz) {
  /* 1 cycle = 1428.571 ps: the ns of a slice are its picoseconds rounded, as in the JSON */
  static char chip[1024];
  scopy(chip, ct_test_tmp_path("c700.json"), sizeof chip);
  const char *json = "{\"name\": \"c700\", \"freq_mhz\": 700}\n";
  ck_assert(ct_test_write_file(chip, json, strlen(json)));
  const char *prog = deploy_fmnist("fm700.ctpu", chip);
  ck_assert_int_ge(sim_both(prog, chip, "", va, vb), 40);
}
END_TEST

START_TEST(test_compare_detects_a_difference) {
  const char *prog = deploy_fmnist("fm.ctpu", NULL);
  sim_both(prog, NULL, "", va, vb);
  char why[1024];
  int t = 0;
  while (va->ns[t] < 2) t++;
  va->s[t][1].e += 1; /* one ns later */
  ck_assert_ptr_nonnull(strstr(compare(va, vb, why, sizeof why) ? why : "", "slice 1"));
  va->s[t][1].e -= 1;
  ck_assert_ptr_null(compare(va, vb, why, sizeof why));
  va->ns[t]--; /* one slice fewer */
  ck_assert_ptr_nonnull(compare(va, vb, why, sizeof why));
  va->ns[t]++;
  va->c[0][3].v += 1; /* one counter value off */
  ck_assert_ptr_nonnull(strstr(compare(va, vb, why, sizeof why) ? why : "", "value 3"));
}
END_TEST

START_TEST(test_unwritable_trace_path_and_stopped_run) {
  const char *prog = deploy_fmnist("fm.ctpu", NULL);
  const char *in = ct_test_shared_path("models/fmnist-rescnn/test_data_set_0/input_0.pb");
  char msg[4096], y[1024], bad[1024], missing[1024];
  scopy(y, ct_test_tmp_path("never.h5"), sizeof y);
  scopy(missing, ct_test_tmp_path("no/such/dir"), sizeof missing);
  /* a missing directory, and a "directory" that is a regular file */
  const char *parents[2] = {missing, prog};
  for (int k = 0; k < 2; k++) {
    snprintf(bad, sizeof bad, "%s/t.perfetto-trace", parents[k]);
    int rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s --input %s -o %s --trace %s", prog, in, y, bad);
    ck_assert_msg(rc == 3, "rc %d: %s", rc, msg);
    ck_assert_msg(strstr(msg, "t.perfetto-trace") && !strchr(strchr(msg, '\n') + 1, '\n'), "%s", msg);
    ck_assert(!ct_test_file_exists(y) && !ct_test_file_exists(bad));
  }
  /* a run stopped by --max-cycles (exit 4) leaves no trace behind, half-written or whole */
  scopy(bad, ct_test_tmp_path("cut.perfetto-trace"), sizeof bad);
  int rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s --input %s -o %s --trace %s --max-cycles 1000", prog, in, y, bad);
  ck_assert_msg(rc == 4, "rc %d: %s", rc, msg);
  ck_assert(!ct_test_file_exists(y) && !ct_test_file_exists(bad));
  DIR *dir = opendir(ct_test_tmpdir()); /* nor a temporary file or folder */
  ck_assert_ptr_nonnull(dir);
  for (struct dirent *e; (e = readdir(dir));) ck_assert_msg(!strstr(e->d_name, ".tmp"), "%s left behind", e->d_name);
  closedir(dir);
}
END_TEST

/* Field k (0-based) of CSV line row (RFC 4180 quotes), as a number; NAN when empty. */
static double csv_num(const char *row, int k) {
  bool q = false;
  for (; *row && k > 0; row++) {
    if (*row == '"') q = !q;
    else if (*row == ',' && !q) k--;
  }
  return *row && *row != ',' && *row != '\n' ? strtod(row, NULL) : NAN;
}

START_TEST(test_groups_mxu_util_counts_the_summary_macs) {
  /* MobileNetV2 has depthwise convolutions: DWCONV runs on the VPU, so the MXU MACs of the
   * groups CSV (mxu_util · sim_cycles · rows · cols) add up to the summary's macs */
  const char *mq = ct_test_shared_path("models/mobilenetv2-torchvision-qdq-int8");
  char msg[4096], top[1024], tpu[1024], prog[1024], in[1024], csv[1100];
  scopy(top, ct_test_tmp_path("mnv2.top"), sizeof top);
  scopy(tpu, ct_test_tmp_path("mnv2.tpu"), sizeof tpu);
  scopy(prog, ct_test_tmp_path("mnv2.ctpu"), sizeof prog);
  snprintf(in, sizeof in, "%s/test_data_set_0/input_0.pb", mq);
  snprintf(csv, sizeof csv, "%s.groups.csv", prog);
  int rc = ct_test_run_ctpu(msg, sizeof msg, "transform %s/model.onnx -o %s", mq, top);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "lower %s --quantize INT8 -o %s", top, tpu);
  if (!rc) rc = ct_test_run_ctpu(msg, sizeof msg, "deploy %s -o %s --test-input %s", tpu, prog, in);
  if (!rc)
    rc = ct_test_run_ctpu(msg, sizeof msg, "sim %s --input %s -o %s --summary %s", prog, in, ct_test_tmp_path("y.h5"),
                          ct_test_tmp_path("s.json"));
  ck_assert_msg(rc == 0, "%s", msg);
  char *sum = ct_test_read_file(ct_test_tmp_path("s.json"), NULL), *text = ct_test_read_file(csv, NULL);
  ck_assert(sum && text);
  cJSON *js = cJSON_Parse(sum);
  double macs = cJSON_GetObjectItem(js, "macs")->valuedouble, rc2 = 32.0 * 32.0; /* default chip: 32×32 MXU */
  double groups = 0, tol = 0;
  int dw_only = 0;
  for (char *row = strchr(text, '\n') + 1; *row; row = strchr(row, '\n') + 1) {
    double cyc = csv_num(row, 8), util = csv_num(row, 10);
    if (!isnan(cyc)) {
      groups += util * cyc * rc2;
      tol += 0.00005 * cyc * rc2; /* mxu_util has 4 decimals */
      dw_only += util == 0 && cyc > 0;
    }
    if (!strchr(row, '\n')) break;
  }
  ck_assert_msg(fabs(groups - macs) <= tol, "groups CSV: %.0f MXU MACs, summary: %.0f (tolerance %.0f)", groups, macs,
                tol);
  ck_assert_int_ge(dw_only, 1); /* a group of depthwise convolutions only: no MXU work */
  cJSON_Delete(js);
  free(sum), free(text);
}
END_TEST

int main(void) {
  ct_test_require_shared("test_trace");
  va = malloc(sizeof *va), vb = malloc(sizeof *vb);
  Suite *s = suite_create("trace");
  TCase *t = tcase_create("formats");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, test_perfetto_matches_json);
  tcase_add_test(t, test_perfetto_ns_at_700mhz);
  tcase_add_test(t, test_compare_detects_a_difference);
  tcase_add_test(t, test_unwritable_trace_path_and_stopped_run);
  tcase_add_test(t, test_groups_mxu_util_counts_the_summary_macs);
  suite_add_tcase(s, t);
  int rc = ct_test_run_suite(s);
  free(va), free(vb);
  return rc;
}
