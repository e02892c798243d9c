/* test_chip.c: isa/chip — defaults (docs/architecture.md §3), dump → parse round trip, nested and
 * dotted keys, one error per kind of bad key (message names file and key), the signature
 * against an FNV-1a 64 written here, and `ctpu chip --dump`. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmodel/sim.h"
#include "common/tensor.h"
#include "isa/chip.h"
#include "isa/program.h"
#include "tests/testutil.h"

START_TEST(test_defaults_are_the_architecture_table) {
  ct_chip c;
  ct_chip_default(&c);
  ck_assert_str_eq(c.name, "ctpu-default");
  ck_assert_double_eq(c.freq_mhz, 1000);
  ck_assert_int_eq(c.mxu_rows, 32);
  ck_assert_int_eq(c.mxu_cols, 32);
  ck_assert_int_eq(c.mxu_dataflow, CT_DATAFLOW_WS);
  ck_assert_double_eq(c.mxu_fp_rate, 0.25);
  ck_assert_int_eq(c.vpu_lanes, 32);
  ck_assert_int_eq(c.lmem_bytes, 1 << 20);
  ck_assert_int_eq(c.lmem_banks, 16);
  ck_assert_int_eq(c.lmem_bank_port_bytes, 64);
  ck_assert_int_eq(c.gmem_bytes, 1 << 30);
  ck_assert_int_eq(c.gmem_bytes_per_cycle, 32);
  ck_assert_int_eq(c.gmem_latency_cycles, 100);
  ck_assert_int_eq(c.gmem_burst_bytes, 64);
  ck_assert_int_eq(c.dma_load_engines, 1);
  ck_assert_int_eq(c.dma_store_engines, 1);
  ck_assert_int_eq(c.queue_depth, 16);
  ck_assert_int_eq(c.sem_count, 32);
  ct_diag d;
  ck_assert_int_eq(ct_chip_validate(&c, "x", &d), CT_OK);
}
END_TEST

START_TEST(test_dump_parses_back_and_keys_override) {
  ct_chip c, back;
  ct_diag d;
  ck_assert_int_eq(ct_chip_parse("{\"mxu\": {\"rows\": 64, \"dataflow\": \"os\"}, \"gmem.latency_cycles\": 7,"
                                 " \"name\": \"big\", \"freq_mhz\": 1.5}",
                                 "c.json", &c, &d),
                   CT_OK);
  ck_assert_int_eq(c.mxu_rows, 64);
  ck_assert_int_eq(c.mxu_cols, 32);
  ck_assert_int_eq(c.mxu_dataflow, CT_DATAFLOW_OS);
  ck_assert_int_eq(c.gmem_latency_cycles, 7);
  ck_assert_str_eq(c.name, "big");
  char *js = ct_chip_to_json(&c);
  ck_assert_ptr_nonnull(js);
  ck_assert_int_eq(ct_chip_parse(js, "dump", &back, &d), CT_OK);
  char *js2 = ct_chip_to_json(&back);
  ck_assert_str_eq(js, js2);
  ck_assert_double_eq(back.freq_mhz, 1.5);
  free(js);
  free(js2);
}
END_TEST

/* Each bad document gives CT_ERR_INPUT and a message containing `want`. */
START_TEST(test_errors_name_file_and_key) {
  static const struct {
    const char *json, *want;
  } cases[] = {
      {"{\"lmem\": {\"banks\": 12}}", "chip.json: lmem.banks: 12 does not divide lmem.bytes 1048576"},
      {"{\"mxu\": {\"foo\": 1}}", "chip.json: mxu.foo: unknown key"},
      {"{\"bogus\": 1}", "chip.json: bogus: unknown key"},
      {"{\"mxu\": {\"rows\": \"32\"}}", "chip.json: mxu.rows: expected an integer"},
      {"{\"mxu\": {\"rows\": 32.5}}", "chip.json: mxu.rows: 32.5 is not an integer"},
      {"{\"mxu\": {\"rows\": 0}}", "chip.json: mxu.rows: 0 is outside 1..4096"},
      {"{\"lmem\": {\"bytes\": 0}}", "chip.json: lmem.bytes: 0 is outside"},
      {"{\"gmem\": {\"burst_bytes\": 48}}", "chip.json: gmem.burst_bytes: 48 is not a power of two"},
      {"{\"lmem\": {\"bank_port_bytes\": 3}}", "chip.json: lmem.bank_port_bytes: 3 is not a power of two"},
      {"{\"vpu\": {\"lanes\": 24}}", "chip.json: vpu.lanes: 24 is not a power of two"},
      {"{\"sem\": {\"count\": 33}}", "chip.json: sem.count: 33 is outside 4..32"},
      {"{\"mxu\": {\"dataflow\": \"xs\"}}", "chip.json: mxu.dataflow: \"xs\" is not \"ws\" or \"os\""},
      {"{\"mxu\": {\"fp_rate\": 0}}", "chip.json: mxu.fp_rate: 0 is outside"},
      {"{\"freq_mhz\": true}", "chip.json: freq_mhz: expected a number"},
      {"{\"name\": \"\"}", "chip.json: name: length 0 is outside 1..63"},
      {"{\"mxu\": 3}", "chip.json: mxu: expected an object (a section of keys)"},
      {"{\"mxu\": {\"rows\": 32,}", "invalid JSON"},
      {"[1, 2]", "chip.json: expected a JSON object"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ct_chip c;
    ct_chip_default(&c);
    c.mxu_rows = 5; /* must stay untouched on error */
    ct_diag d;
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_chip_parse(cases[i].json, "chip.json", &c, &d), CT_ERR_INPUT);
    ck_assert_msg(strstr(d.msg, cases[i].want) != NULL, "case %zu: got \"%s\", want \"%s\"", i, d.msg, cases[i].want);
    ck_assert_int_eq(c.mxu_rows, 5);
  }
  ct_chip c;
  ct_diag d;
  /* the stray '}' is byte 20; cJSON stops at or just after it */
  ck_assert_int_eq(ct_chip_parse("{\"mxu\": {\"rows\": 32,}", "chip.json", &c, &d), CT_ERR_INPUT);
  int at = -1;
  ck_assert_int_eq(sscanf(d.msg, "chip.json: byte %d:", &at), 1);
  ck_assert(at >= 19 && at <= 21);
  ck_assert_int_eq(ct_chip_load("/nonexistent/chip.json", &c, &d), CT_ERR_INPUT);
  ck_assert(strstr(d.msg, "/nonexistent/chip.json") != NULL);
}
END_TEST

/* Every key of the dump, given a value of the wrong JSON type (and, for numbers, a value
 * below any minimum), is refused with a message naming the file and the dotted key. */
START_TEST(test_every_key_rejects_wrong_type_and_range) {
  ct_chip c;
  ct_chip_default(&c);
  char *js = ct_chip_to_json(&c);
  cJSON *root = cJSON_Parse(js);
  ck_assert_ptr_nonnull(root);
  int keys = 0;
  for (cJSON *a = root->child; a; a = a->next) {
    cJSON *list = cJSON_IsObject(a) ? a->child : a;
    for (cJSON *k = list; k; k = cJSON_IsObject(a) ? k->next : NULL) {
      char key[128], doc[256], want[256];
      snprintf(key, sizeof key, cJSON_IsObject(a) ? "%s.%s" : "%s", a->string, k->string);
      bool num = cJSON_IsNumber(k);
      snprintf(doc, sizeof doc, num ? "{\"%s\": \"7\"}" : "{\"%s\": 7}", key);
      snprintf(want, sizeof want, "chip.json: %s: expected", key);
      ct_diag d;
      ck_assert_int_eq(ct_chip_parse(doc, "chip.json", &c, &d), CT_ERR_INPUT);
      ck_assert_msg(strstr(d.msg, want) != NULL, "%s: %s", key, d.msg);
      if (num) {
        snprintf(doc, sizeof doc, "{\"%s\": -1}", key);
        snprintf(want, sizeof want, "chip.json: %s: -1 is outside", key);
        ck_assert_int_eq(ct_chip_parse(doc, "chip.json", &c, &d), CT_ERR_INPUT);
        ck_assert_msg(strstr(d.msg, want) != NULL, "%s: %s", key, d.msg);
      }
      keys++;
    }
  }
  ck_assert_int_eq(keys, 19); /* the keys of docs/architecture.md §3 */
  cJSON_Delete(root);
  free(js);
}
END_TEST

/* chip.def's numeric keys (the table every command validates with), for the bound test. */
typedef struct key_bound {
  const char *key;
  bool is_int, pow2;
  double lo, hi;
  size_t offset;
} key_bound;

#define KB_INT(m, key, lo, hi, fl) {key, true, ((fl) & CT_CHIP_POW2) != 0, lo, hi, offsetof(ct_chip, m)},
#define KB_F64(m, key, lo, hi, fl) {key, false, false, lo, hi, offsetof(ct_chip, m)},
#define KB_STR(m, key, lo, hi, fl)
#define KB_DATAFLOW(m, key, lo, hi, fl)
static const key_bound bounds[] = {
#define CT_CHIP_KEY(m, key, T, def, lo, hi, flags, doc) KB_##T(m, key, lo, hi, flags)
#include "isa/chip.def"
#undef CT_CHIP_KEY
};

/* Sets key k of c to v. */
static void set_bound(ct_chip *c, const key_bound *k, double v) {
  if (k->is_int) {
    int64_t iv = (int64_t)v;
    memcpy((char *)c + k->offset, &iv, sizeof iv);
  } else {
    memcpy((char *)c + k->offset, &v, sizeof v);
  }
}

/* Does the simulator run a one-END program on chip c (CT_ERR_INPUT: it refuses the chip)? */
static bool sim_accepts(const ct_chip *c) {
  ct_program p;
  ct_program_init(&p, ct_chip_signature(c));
  ct_insn end;
  memset(&end, 0, sizeof end);
  end.op = CT_ISA_END;
  ct_diag d;
  ck_assert_int_eq(ct_program_add_insn(&p, &end, &d), CT_OK);
  ct_tensor_list in;
  ct_tensor_list_init(&in);
  ct_sim_run_options opt;
  memset(&opt, 0, sizeof opt);
  ct_sim_run_output out;
  ct_status st = ct_sim_run(c, &p, &in, &opt, &out, &d);
  ck_assert_msg(st == CT_OK || st == CT_ERR_INPUT, "sim: %s", d.msg);
  ct_sim_run_output_free(&out);
  ct_program_free(&p);
  return st == CT_OK;
}

/* Every numeric key of chip.def at its minimum and maximum (and, for lmem.banks, 128: more
 * than a 64-bit bank mask holds) is accepted by the chip parser (what `ctpu chip`, plan and
 * deploy load with) and by the simulator; one step outside (integers ±1, floats ×2 or ÷2) is
 * refused by both. */
START_TEST(test_every_key_bound_same_in_chip_and_sim) {
  ck_assert_int_eq((int)(sizeof bounds / sizeof bounds[0]), 17);
  for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
    const key_bound *k = &bounds[i];
    double v[5] = {k->lo, k->hi, k->is_int ? k->lo - 1 : k->lo / 2, k->is_int ? k->hi + 1 : k->hi * 2, 128};
    int nv = strcmp(k->key, "lmem.banks") ? 4 : 5;
    for (int j = 0; j < nv; j++) {
      bool in = v[j] >= k->lo && v[j] <= k->hi;
      char doc[128];
      snprintf(doc, sizeof doc, k->is_int ? "{\"%s\": %.0f}" : "{\"%s\": %.17g}", k->key, v[j]);
      ct_chip c, s;
      ct_diag d;
      bool parsed = ct_chip_parse(doc, "chip.json", &c, &d) == CT_OK;
      ck_assert_msg(parsed == in, "%s: chip %s: %s", doc, parsed ? "accepts" : "refuses", d.msg);
      ct_chip_default(&s);
      set_bound(&s, k, v[j]);
      ck_assert_msg(sim_accepts(&s) == in, "%s: the simulator %s", doc, in ? "refuses" : "accepts");
    }
  }
}
END_TEST

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

START_TEST(test_signature_covers_program_relevant_keys) {
  ct_chip c;
  ct_chip_default(&c);
  ck_assert_uint_eq(ct_chip_signature(&c), fnv1a("lmem.bytes=1048576;gmem.bytes=1073741824;sem.count=32;"));
  uint64_t s0 = ct_chip_signature(&c);
  c.mxu_rows = 128; /* timing-only keys do not change it */
  c.gmem_latency_cycles = 3;
  ck_assert_uint_eq(ct_chip_signature(&c), s0);
  c.lmem_bytes = 1 << 19;
  ck_assert_uint_ne(ct_chip_signature(&c), s0);
}
END_TEST

START_TEST(test_cli_dump_and_bad_file) {
  char out[8192];
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "chip --dump"), 0);
  ck_assert(strstr(out, "\"bank_port_bytes\"") != NULL);
  const char *p = ct_test_tmp_path("bad_chip.json");
  ck_assert(ct_test_write_file(p, "{\"lmem\": {\"banks\": 12}}", 24));
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "chip --dump --chip %s", p), 3);
  ck_assert(strstr(out, "lmem.banks: 12 does not divide lmem.bytes 1048576") != NULL);
  ck_assert_int_eq(ct_test_run_ctpu(out, sizeof out, "chip --frobnicate"), 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("chip");
  TCase *tc = tcase_create("chip");
  tcase_add_test(tc, test_defaults_are_the_architecture_table);
  tcase_add_test(tc, test_dump_parses_back_and_keys_override);
  tcase_add_test(tc, test_errors_name_file_and_key);
  tcase_add_test(tc, test_every_key_rejects_wrong_type_and_range);
  tcase_add_test(tc, test_signature_covers_program_relevant_keys);
  tcase_add_test(tc, test_cli_dump_and_bad_file);
  tcase_add_test(tc, test_every_key_bound_same_in_chip_and_sim);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
