#!/usr/bin/env bash
# bench_tpu_infer.sh: the Tpu INT8 reference's inference time against the float Top
# interpreter's on each real model of ../shared/models with its test input (bench_infer on
# the .tpu and on the .top it was lowered from; in-process time, model load excluded).
# The INT8 module: the QDQ models with their own scales, the others max-calibrated (minmax)
# on their test input. Per model, ROUNDS rounds alternate Top and Tpu (each: warm-up, then
# RUNS timed runs, median; 1 and 2 threads); a figure is the median of its rounds,
# ratio = Tpu / Top (the goal is ≤ 1.0). A ratio above 1.0 prints "SLOWER:".
# usage: bench_tpu_infer.sh CTPU BENCH_INFER [RUNS]   (the bench_tpu_infer CMake target)
# environment: BENCH_RUNS (10), BENCH_ROUNDS (3), BENCH_THREADS (1,2), BENCH_MODELS (an
#   extended regex the model name must match), BENCH_KEEP (a directory: keep the modules
#   there and reuse them on the next run).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: bench_tpu_infer.sh CTPU BENCH_INFER [RUNS]" >&2; exit 2; }
ctpu=$1 bench=$2 runs=${3:-${BENCH_RUNS:-10}}
rounds=${BENCH_ROUNDS:-3} threads=${BENCH_THREADS:-1,2} filter=${BENCH_MODELS:-.}
shared=$here/../../shared/models
[ -d "$shared" ] || { echo "bench_tpu_infer: ../shared/models is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
keep=${BENCH_KEEP:-$tmp}
mkdir -p "$keep"

med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

# The Top and INT8 Tpu modules of model dir $1 as $keep/NAME.top / .tpu (reused when present).
prepare() {
  local dir=$1 name=$2 in=$3
  [ -f "$keep/$name.tpu" ] && return 0
  "$ctpu" transform "$dir/model.onnx" -o "$keep/$name.top" >/dev/null 2>"$tmp/err" || return 1
  if [[ $name == *qdq-int8* ]]; then
    "$ctpu" lower "$keep/$name.top" --quantize INT8 -o "$keep/$name.tpu" >/dev/null 2>"$tmp/err"
  else
    "$ctpu" calibrate "$keep/$name.top" --dataset "$in" --method minmax -o "$keep/$name.calib" >/dev/null 2>"$tmp/err" &&
      "$ctpu" lower "$keep/$name.top" --quantize INT8 --calibration-table "$keep/$name.calib" \
        -o "$keep/$name.tpu" >/dev/null 2>"$tmp/err"
  fi
}

printf "Tpu INT8 reference vs Top float, median of %s rounds of the median of %s runs (ms)\n" "$rounds" "$runs"
printf "%-36s %3s %10s %10s %7s\n" model thr "top ms" "tpu ms" tpu/top
slower=0
for dir in "$shared"/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  [ -f "$dir/model.onnx" ] && [[ $name =~ $filter ]] || continue
  inputs=$(ls "$dir"/test_data_set_0/input_*.pb | sort -V)
  if ! prepare "$dir" "$name" "$(echo "$inputs" | head -1)"; then
    echo "  ($name: preparing the modules failed: $(head -c 300 "$tmp/err"))" >&2
    continue
  fi
  : >"$tmp/t"
  for ((r = 0; r < rounds; r++)); do
    for side in top tpu; do
      # shellcheck disable=SC2086
      "$bench" "$keep/$name.$side" "$runs" "$threads" $inputs 2>"$tmp/err" | sed "s/^/$side /" >>"$tmp/t" ||
        echo "  ($name: bench_infer on the $side module failed: $(head -c 300 "$tmp/err"))" >&2
    done
  done
  for t in ${threads//,/ }; do
    a=$(awk -v t="$t" '$1 == "top" && $2 == t { print $3 }' "$tmp/t" | med)
    b=$(awk -v t="$t" '$1 == "tpu" && $2 == t { print $3 }' "$tmp/t" | med)
    q=$(ratio "$b" "$a")
    printf "%-36s %3s %10s %10s %7s\n" "$name" "$t" "${a:--}" "${b:--}" "$q"
    awk -v q="$q" 'BEGIN { exit !(q != "-" && q > 1.0) }' && { echo "SLOWER: $name at $t thread(s), Tpu / Top $q"; slower=1; }
  done
done
exit $slower
