#!/usr/bin/env bash
# bench_deploy.sh: `ctpu deploy` on the default chip per model and strategy (none, dp):
# compile time (plan + codegen, median of RUNS deploys without simulation; goal for
# MobileNetV2 < 1 s), simulation wall time with timing + functional execution (goal < 10 s)
# and simulated cycles per second, then the plan's estimate next to the simulated cycles,
# MXU utilization and DDR bytes. The figures are the ones deploy prints on its summary lines.
# usage: bench_deploy.sh CTPU [RUNS]        (the bench_deploy CMake target passes CTPU)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 runs=${2:-${BENCH_RUNS:-5}}
shared=$here/../../shared
[ -d "$shared/models" ] || { echo "bench_deploy: ../shared is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# shellcheck source=deploy_models.sh
. "$here/deploy_models.sh"
prepare_models

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

printf "ctpu deploy on the default chip; compile: median of %s runs (s); sim: timing + functional, race check on\n" "$runs"
printf "%-12s %-5s %6s %6s %9s %8s %10s %10s %10s %7s %10s\n" model lg groups insns compile_s sim_s "cycles/s" \
  est_cycles sim_cycles mxu_util ddr_bytes
for m in "${models[@]}"; do
  for s in none dp; do
    out=$tmp/$m.$s.ctpu
    c=$(for _ in $(seq "$runs"); do
          "$ctpu" deploy "$(tpu_of "$m")" --layer-group "$s" -o "$out" 2>&1 | sed -n 's/.*compiled (plan + codegen) in \([0-9.]*\) s.*/\1/p'
        done | median)
    if ! "$ctpu" deploy "$(tpu_of "$m")" --layer-group "$s" -o "$out" --test-input "$(input_of "$m")" >"$tmp/log" 2>&1; then
      printf "%-12s %-5s failed: %s\n" "$m" "$s" "$(head -c 300 "$tmp/log")"
      continue
    fi
    printf "%-12s %-5s %6s %6s %9s %8s %10s %10s %10s %7s %10s\n" "$m" "$s" "$(sed -n 's/.* layers in \([0-9]*\) groups.*/\1/p' "$tmp/log")" \
      "$(sed -n 's/.* groups, \([0-9]*\) instructions.*/\1/p' "$tmp/log")" "$c" \
      "$(sed -n 's/.*timing + functional) in \([0-9.]*\) s.*/\1/p' "$tmp/log")" \
      "$(sed -n 's/.*s, \([0-9.e+]*\) simulated cycles\/s.*/\1/p' "$tmp/log")" \
      "$(sed -n 's/.*est\. \([0-9]*\) cycles.*/\1/p' "$tmp/log")" "$(sed -n 's/.*simulated \([0-9]*\) cycles,.*/\1/p' "$tmp/log")" \
      "$(sed -n 's/.*MXU utilization \([0-9.]*\),.*/\1/p' "$tmp/log")" "$(sed -n 's/.*DDR \([0-9]*\) bytes.*/\1/p' "$tmp/log")"
  done
done
