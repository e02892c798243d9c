#!/usr/bin/env bash
# bench_infer.sh: float inference time of ctpu (reference interpreter, `ctpu transform` then
# bench_infer) vs onnxruntime-node 1.30.0 (CPU, graphOptimizationLevel 'all') on each real
# model of ../shared/models with its test input: median of RUNS runs after a warm-up (both
# run until 300 ms after start-up), 1 and 2 threads, run back to back in this process tree.
# Prints a table; ratio = ctpu / ort.
# usage: bench_infer.sh CTPU BENCH_INFER [RUNS]     (the `bench` CMake target passes them)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 bench=$2 runs=${3:-${BENCH_RUNS:-10}}
shared=$here/../../shared/models
[ -d "$shared" ] || { echo "bench_infer: ../shared/models is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

ort_ok=0
if command -v node >/dev/null; then
  if [ ! -d "$here/ort/node_modules/onnxruntime-node" ]; then
    (cd "$here/ort" && npm install --ignore-scripts --no-audit --no-fund --silent >/dev/null 2>&1)
  fi
  [ -d "$here/ort/node_modules/onnxruntime-node" ] && ort_ok=1
fi
[ $ort_ok = 1 ] || echo "bench_infer: onnxruntime-node unavailable (needs node + npm); ort columns empty"

# times: "THREADS MS" lines → value for thread count $2
pick() { awk -v t="$2" '$1 == t { print $2 }' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

printf "inference, median of %s runs after warm-up (ms); ort: onnxruntime-node 1.30.0, graphOptimizationLevel all\n" "$runs"
printf "%-36s %10s %10s %7s %10s %10s %7s\n" model "ctpu 1t" "ort 1t" ratio "ctpu 2t" "ort 2t" ratio
for onnx in "$shared"/*/model.onnx "$shared"/fmnist-rescnn/model_unfused_bn.onnx; do
  [ -f "$onnx" ] || continue
  dir=$(dirname "$onnx") name=$(basename "$dir")
  [ "$(basename "$onnx")" = model.onnx ] || name="$name/$(basename "$onnx" .onnx)"
  inputs=$(ls "$dir"/test_data_set_0/input_*.pb | sort -V)
  top=$tmp/$(echo "$name" | tr / _).top
  c="" o=""
  if "$ctpu" transform "$onnx" -o "$top" 2>"$tmp/err"; then
    # shellcheck disable=SC2086
    c=$("$bench" "$top" "$runs" 1,2 $inputs 2>"$tmp/err") || c=""
  fi
  [ -n "$c" ] || echo "  ($name: ctpu failed: $(head -c 300 "$tmp/err"))" >&2
  # shellcheck disable=SC2086
  [ $ort_ok = 1 ] && o=$(node "$here/ort/ort_bench.js" "$onnx" "$runs" 1,2 $inputs 2>/dev/null)
  c1=$(pick "$c" 1) c2=$(pick "$c" 2) o1=$(pick "$o" 1) o2=$(pick "$o" 2)
  printf "%-36s %10s %10s %7s %10s %10s %7s\n" "$name" "${c1:--}" "${o1:--}" "$(ratio "$c1" "$o1")" \
    "${c2:--}" "${o2:--}" "$(ratio "$c2" "$o2")"
done
