/* gen_case.c: the chip and the pipeline half of ctpu_gengraph: a random chip.json over the
 * keys and ranges of isa/chip.def, and case.sh, the ctpu commands (transform, calibrate,
 * lower with a random mode and flags, deploy --compare-all with a random layer-group
 * strategy). fuzz/README.md lists the draws. */
#include <stdio.h>
#include <string.h>

#include "fuzz/gen.h"

/* One chip key: JSON path (object.key), its draw table, the default (index 0 unused). */
typedef struct chip_key {
  const char *obj, *key;
  int n;
  const char *vals[10];
} chip_key;

/* ORDER CHIP_KEEP: bit k of --chip-keep is row k. Values are within isa/chip.def's ranges
 * (powers of two where the key needs one; every lmem.bytes is divisible by every bank count). */
static const chip_key keys[] = {
    {"mxu", "rows", 8, {"4", "8", "16", "64", "12", "24", "2", "128"}},
    {"mxu", "cols", 8, {"4", "8", "16", "64", "12", "24", "2", "128"}},
    {"mxu", "dataflow", 2, {"\"os\"", "\"ws\""}},
    {"mxu", "fp_rate", 4, {"0.5", "1", "0.125", "0.25"}},
    {"vpu", "lanes", 6, {"4", "8", "16", "64", "128", "256"}},
    {"lmem", "bytes", 8, {"16384", "32768", "65536", "131072", "262144", "524288", "2097152", "98304"}},
    {"lmem", "banks", 7, {"1", "2", "4", "8", "32", "64", "16"}},
    {"lmem", "bank_port_bytes", 5, {"8", "16", "32", "128", "256"}},
    {"gmem", "bytes_per_cycle", 5, {"8", "16", "64", "128", "4"}},
    {"gmem", "latency_cycles", 4, {"0", "10", "500", "2000"}},
    {"gmem", "burst_bytes", 5, {"16", "32", "128", "256", "4"}},
    {"dma", "load_engines", 3, {"2", "3", "4"}},
    {"dma", "store_engines", 3, {"2", "3", "4"}},
    {"queue", "depth", 5, {"1", "2", "4", "8", "64"}},
    {"sem", "count", 5, {"4", "5", "8", "16", "2"}},
    {"dma", "stripe_banks", 3, {"1", "2", "4"}},
};
#define N_KEYS ((int)(sizeof keys / sizeof keys[0]))

/* Draws the chip (value index per key, -1 = default) and writes chip.json + a summary. */
static bool write_chip(const gen_opts *o, char *summary, size_t cap) {
  gen_rng cr = {o->seed * 0x9e3779b97f4a7c15ULL + 3};
  int pick[N_KEYS];
  bool dflt = gen_chance(&cr, 35);
  for (int k = 0; k < N_KEYS; k++) {
    pick[k] = !dflt && gen_chance(&cr, 45) ? gen_int(&cr, 0, keys[k].n - 1) : -1;
    if (!(o->chip_keep >> k & 1)) pick[k] = -1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/chip.json", o->dir);
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fprintf(f, "{\n  \"name\": \"fuzz-%llu\"", (unsigned long long)o->seed);
  summary[0] = 0;
  size_t used = 0;
  for (int k = 0; k < N_KEYS; k++) {
    if (pick[k] < 0) continue;
    fprintf(f, ",\n  \"%s\": {", keys[k].obj);
    const char *sep = "";
    int j = k;
    for (; j < N_KEYS && !strcmp(keys[j].obj, keys[k].obj); j++) {
      if (pick[j] < 0) continue;
      fprintf(f, "%s\"%s\": %s", sep, keys[j].key, keys[j].vals[pick[j]]);
      used += (size_t)snprintf(summary + used, used < cap ? cap - used : 0, "%s%s.%s=%s", used ? "," : "",
                               keys[j].obj, keys[j].key, keys[j].vals[pick[j]]);
      sep = ", ";
    }
    fputs("}", f);
    k = j - 1;
  }
  fputs("\n}\n", f);
  if (!summary[0]) snprintf(summary, cap, "default");
  for (char *p = summary; *p; p++)
    if (*p == '"') *p = '\'';
  return fclose(f) == 0;
}

static const char *const dtypes[] = {"INT8", "BF16", "F16", "F32"};

/* The quantize table: 1-3 random node outputs forced to a float mode. */
static bool write_qtable(const gen_opts *o, const gen *g, gen_rng *pr, int dt) {
  char path[4096];
  snprintf(path, sizeof path, "%s/qtable.txt", o->dir);
  FILE *f = fopen(path, "w");
  if (!f) return false;
  int rows = gen_int(pr, 1, 3), used[3];
  for (int i = 0; i < rows; i++) {
    used[i] = gen_int(pr, 0, (int)g->b->g.n_node - 1);
    const char *mode = dtypes[gen_int(pr, 1, 3)];
    bool dup = false;
    for (int k = 0; k < i; k++) dup |= used[k] == used[i];
    if (dup) continue;
    if (!strcmp(mode, dtypes[dt])) mode = "F32";
    fprintf(f, "%s %s\n", g->b->nodes[used[i]]->output[0], mode);
  }
  return fclose(f) == 0;
}

/* Draws the pipeline and writes case.sh and meta.tsv. */
bool gen_write_case(const gen_opts *o, const gen *g, const gen_input *ins, int n_in) {
  char chip[512], path[4096], lower_x[512] = "", fams[512] = "";
  if (!write_chip(o, chip, sizeof chip)) return false;
  gen_rng pr = {o->seed * 0xd1342543de82ef95ULL + 5};
  int r = gen_int(&pr, 0, 99), dt = r < 40 ? 0 : r < 60 ? 1 : r < 80 ? 2 : 3;
  unsigned fl = 0;
  static const char *methods[] = {"minmax", "percentile", "mse", "kld"};
  static const char *lgs[] = {"greedy", "none", "max", "dp"};
  int method = gen_int(&pr, 0, 3), lg = gen_int(&pr, 0, 99);
  lg = lg < 25 ? 0 : lg < 40 ? 1 : lg < 55 ? 2 : 3;
  if (dt == 0 && gen_chance(&pr, 20)) fl |= GEN_FLAG_ASYM;
  if (dt == 0 && gen_chance(&pr, 15)) fl |= GEN_FLAG_NOUNSIGNED;
  if (dt == 0 && gen_chance(&pr, 10)) fl |= GEN_FLAG_FALLBACK;
  if (g->b->g.n_node && gen_chance(&pr, 12)) fl |= GEN_FLAG_QTABLE;
  if (gen_chance(&pr, 30)) fl |= GEN_FLAG_LOWER_CHIP;
  if (method != 3) fl |= GEN_FLAG_METHOD;
  if (lg != 3) fl |= GEN_FLAG_LG;
  fl &= o->flags_keep;
  if ((fl & GEN_FLAG_QTABLE) && !write_qtable(o, g, &pr, dt)) return false;
  size_t u = 0;
  if (fl & GEN_FLAG_ASYM) u += (size_t)snprintf(lower_x + u, sizeof lower_x - u, " --asymmetric");
  if (fl & GEN_FLAG_NOUNSIGNED) u += (size_t)snprintf(lower_x + u, sizeof lower_x - u, " --no-unsigned");
  if (fl & GEN_FLAG_FALLBACK) u += (size_t)snprintf(lower_x + u, sizeof lower_x - u, " --float-fallback-f32");
  if (fl & GEN_FLAG_QTABLE) u += (size_t)snprintf(lower_x + u, sizeof lower_x - u, " --quantize-table qtable.txt");
  if (fl & GEN_FLAG_LOWER_CHIP) snprintf(lower_x + u, sizeof lower_x - u, " --chip chip.json");
  snprintf(path, sizeof path, "%s/case.sh", o->dir);
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fprintf(f, "# ctpu_gengraph --seed %llu", (unsigned long long)o->seed);
  if (o->max_steps >= 0) fprintf(f, " --max-steps %d", o->max_steps);
  if (o->keep_output >= 0) fprintf(f, " --keep-output %d", o->keep_output);
  if (o->chip_keep != ~0u) fprintf(f, " --chip-keep %u", o->chip_keep);
  if (o->flags_keep != ~0u) fprintf(f, " --flags-keep %u", o->flags_keep);
  if (o->max_hw > 0) fprintf(f, " --max-hw %d", o->max_hw);
  if (o->avoid_known) fprintf(f, " --avoid-known 1");
  fprintf(f, "\n# chip: %s\nok \"$C\" transform m.onnx -o m.top\n", chip);
  if (dt == 0) {
    fprintf(f, "ok \"$C\" calibrate m.top --dataset cal/list.txt -o m.cali%s%s\n",
            fl & GEN_FLAG_METHOD ? " --method " : "", fl & GEN_FLAG_METHOD ? methods[method] : "");
    fprintf(f, "ok \"$C\" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali%s\n", lower_x);
  } else {
    fprintf(f, "ok \"$C\" lower m.top --quantize %s -o m.tpu%s\n", dtypes[dt], lower_x);
  }
  fprintf(f, "ok \"$C\" deploy m.tpu --chip chip.json%s%s -o p.ctpu --compare-all --test-input",
          fl & GEN_FLAG_LG ? " --layer-group " : "", fl & GEN_FLAG_LG ? lgs[lg] : "");
  for (int i = 0; i < n_in; i++)
    if (ins[i].live) fprintf(f, " %s.pb", ins[i].name);
  fputc('\n', f);
  if (fclose(f)) return false;
  for (int k = 0, used = 0; k < GEN_FAM_COUNT; k++)
    if (g->fams >> k & 1) used += snprintf(fams + used, sizeof fams - (size_t)used, "%s%s", used ? "," : "", gen_family_names[k]);
  snprintf(path, sizeof path, "%s/meta.tsv", o->dir);
  f = fopen(path, "w");
  if (!f) return false;
  fprintf(f, "%llu\t%s\t%s\t%s\t%zu\n", (unsigned long long)o->seed, dtypes[dt], chip, fams[0] ? fams : "-",
          g->b->g.n_node);
  return fclose(f) == 0;
}
