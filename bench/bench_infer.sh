#!/usr/bin/env bash
# bench_infer.sh: float inference time of ctpu (reference interpreter, `ctpu transform` then
# bench_infer) vs onnxruntime-node 1.30.0 (CPU, graphOptimizationLevel 'all', bench/ort) on each
# real model of ../shared/models with its test input, and a guard against slowdowns.
# Per model, ROUNDS rounds alternate ctpu and onnxruntime (each: warm-up until 300 ms after
# start-up, then RUNS timed runs, median; 1 and 2 threads); a figure is the median of its
# rounds, ratio = ctpu / ort. The ratios are compared with the committed ones of
# bench/infer_baseline.tsv: a ratio more than TOL (a fraction) above its baseline prints a
# "REGRESSION:" line and the script exits 1; --update rewrites the baseline from this run.
# Ratios, not milliseconds, are compared: both sides share the machine and its load.
# usage: bench_infer.sh [--update] CTPU BENCH_INFER [RUNS]   (the `bench` CMake target passes them)
# environment: BENCH_RUNS (10), BENCH_ROUNDS (3), BENCH_THREADS (1,2), BENCH_TOL (0.3),
#   BENCH_MODELS (an extended regex the model name must match), BENCH_BASELINE (the TSV).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
[ $# -ge 2 ] || { echo "usage: bench_infer.sh [--update] CTPU BENCH_INFER [RUNS]" >&2; exit 2; }
ctpu=$1 bench=$2 runs=${3:-${BENCH_RUNS:-10}}
rounds=${BENCH_ROUNDS:-3} threads=${BENCH_THREADS:-1,2} tol=${BENCH_TOL:-0.3}
filter=${BENCH_MODELS:-.} baseline=${BENCH_BASELINE:-$here/infer_baseline.tsv}
shared=$here/../../shared/models
[ -d "$shared" ] || { echo "bench_infer: ../shared/models is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
. "$here/ort/ort_env.sh"

med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

# Times one model: lines "SIDE THREADS MS" (one per round) into $tmp/t.
measure() {
  local onnx=$1 top=$2 inputs r
  inputs=$(ls "$(dirname "$onnx")"/test_data_set_0/input_*.pb | sort -V)
  : >"$tmp/t"
  for ((r = 0; r < rounds; r++)); do
    # shellcheck disable=SC2086
    "$bench" "$top" "$runs" "$threads" $inputs 2>"$tmp/err" | sed 's/^/ctpu /' >>"$tmp/t" ||
      echo "  ($(basename "$(dirname "$onnx")"): ctpu failed: $(head -c 300 "$tmp/err"))" >&2
    # shellcheck disable=SC2086
    [ "$ort_ok" = 1 ] && node "$here/ort/ort_bench.js" "$onnx" "$runs" "$threads" $inputs 2>/dev/null | sed 's/^/ort /' >>"$tmp/t"
  done
}

printf "inference, median of %s rounds of the median of %s runs (ms); ort: onnxruntime-node 1.30.0, graphOptimizationLevel all\n" \
  "$rounds" "$runs"
printf "%-36s %3s %10s %10s %7s %9s\n" model thr "ctpu ms" "ort ms" ratio baseline
: >"$tmp/now.tsv"
for onnx in "$shared"/*/model.onnx "$shared"/fmnist-rescnn/model_unfused_bn.onnx; do
  [ -f "$onnx" ] || continue
  name=$(basename "$(dirname "$onnx")")
  [ "$(basename "$onnx")" = model.onnx ] || name="$name/$(basename "$onnx" .onnx)"
  [[ $name =~ $filter ]] || continue
  top=$tmp/$(echo "$name" | tr / _).top
  if ! "$ctpu" transform "$onnx" -o "$top" 2>"$tmp/err" >/dev/null; then
    echo "  ($name: ctpu transform failed: $(head -c 300 "$tmp/err"))" >&2
    continue
  fi
  measure "$onnx" "$top"
  for t in ${threads//,/ }; do
    c=$(awk -v t="$t" '$1 == "ctpu" && $2 == t { print $3 }' "$tmp/t" | med)
    o=$(awk -v t="$t" '$1 == "ort" && $2 == t { print $3 }' "$tmp/t" | med)
    q=$(ratio "$c" "$o")
    b=$([ -f "$baseline" ] && awk -F'\t' -v m="$name" -v t="$t" '$1 == m && $2 == t { print $5 }' "$baseline")
    printf "%-36s %3s %10s %10s %7s %9s\n" "$name" "$t" "${c:--}" "${o:--}" "$q" "${b:--}"
    printf "%s\t%s\t%s\t%s\t%s\n" "$name" "$t" "${c:--}" "${o:--}" "$q" >>"$tmp/now.tsv"
  done
done

if [ $update = 1 ]; then
  { printf "# bench/infer_baseline.tsv: ctpu / onnxruntime-node inference time ratios that bench_infer.sh\n"
    printf "# compares against (rewritten by bench_infer.sh --update). Measured on %s, %s cores,\n" \
      "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)" "$(nproc)"
    printf "# median of %s rounds x %s runs; the machine's load average was %s.\n" "$rounds" "$runs" \
      "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)"
    printf "model\tthreads\tctpu_ms\tort_ms\tratio\n"
    cat "$tmp/now.tsv"; } >"$baseline"
  echo "bench_infer: baseline written to $baseline"
  exit 0
fi
[ -f "$baseline" ] || { echo "bench_infer: no baseline $baseline (bench_infer.sh --update writes one)"; exit 0; }
[ "$ort_ok" = 1 ] || { echo "bench_infer: no onnxruntime figures, no comparison with $baseline"; exit 0; }
rel=$baseline
[ "$(dirname "$baseline")" = "$here" ] && rel=bench/$(basename "$baseline")
awk -F'\t' -v tol="$tol" -v base="$rel" '
  FNR == NR { if ($1 !~ /^#/ && $5 + 0 > 0) was[$1 "\t" $2] = $5; next }
  ($1 "\t" $2) in was && $5 + 0 > 0 {
    w = was[$1 "\t" $2]
    if ($5 > w * (1 + tol)) {
      printf "REGRESSION: %s at %s thread%s is %.2fx slower than %s (ctpu / ort %.2f, was %.2f)\n",
        $1, $2, $2 == 1 ? "" : "s", $5 / w, base, $5, w
      bad++
    } else if ($5 < w / (1 + tol))
      printf "faster: %s at %s thread%s, ctpu / ort %.2f, was %.2f (bench_infer.sh --update records it)\n",
        $1, $2, $2 == 1 ? "" : "s", $5, w
  }
  END {
    if (bad) {
      printf "!!!!!!!! bench_infer: %d REGRESSION%s against %s (tolerance %d%%) !!!!!!!!\n", bad, bad == 1 ? "" : "S", base, tol * 100
      exit 1
    }
    printf "bench_infer: no ratio more than %d%% above %s\n", tol * 100, base
  }' "$baseline" "$tmp/now.tsv"
