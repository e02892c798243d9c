#!/usr/bin/env bash
# cost_agreement.sh: the planner's estimated cycles per group (lg_cost.c) against the cmodel's
# simulated cycles of the generated program (est_over_sim of OUT.groups.csv; views without
# instructions excluded), per model: the default chip with --layer-group none and dp, and
# the 32 sweep chips of tests/test_deploy.c with dp. Prints count, min, p10, median, p90,
# max, how many groups lie within 5 % and 15 %, and the same for the multi-tile groups.
# usage: cost_agreement.sh CTPU [SWEEP_CHIPS]   (default 32; 0 = default chip only)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 nsweep=${2:-32}
shared=$here/../../shared
[ -d "$shared/models" ] || { echo "cost_agreement: ../shared is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# shellcheck source=deploy_models.sh
. "$here/deploy_models.sh"
prepare_models

# ratios of one deploy run: "tiles ratio" lines (the CSV's 6th and 10th columns; quoted names hold no commas)
ratios() {
  local out=$tmp/r.ctpu
  "$ctpu" deploy "$(tpu_of "$1")" --layer-group "$2" ${3:+--chip "$3"} -o "$out" --test-input "$(input_of "$1")" \
    >"$tmp/log" 2>&1 || { echo "  ($1 $2 ${3:-default}: deploy failed: $(tail -c 300 "$tmp/log"))" >&2; return; }
  awk -F, 'NR > 1 && $10 != "" { print $6, $10 }' "$out.groups.csv"
}
# distribution of the ratios on stdin ("tiles ratio" lines), one table row
dist() {
  sort -g -k2 | awk -v name="$1" '{ t[NR] = $1; r[NR] = $2; a = $2 - 1; if (a < 0) a = -a
      if (a <= 0.05) w5++; if (a <= 0.15) w15++; if ($1 > 1) { m++; if (a <= 0.15) m15++ } }
    function q(p,  i) { i = int(p * (NR - 1) + 0.5) + 1; return r[i] }
    END { if (!NR) { printf "%-40s (no groups)\n", name; exit }
      printf "%-40s %6d %6.3f %6.3f %6.3f %6.3f %6.3f %6d %6d %7d %7d\n", name, NR, r[1], q(0.1), q(0.5), q(0.9), r[NR],
        w5, w15, m, m15 }'
}

printf "estimated / simulated cycles per group\n"
printf "%-40s %6s %6s %6s %6s %6s %6s %6s %6s %7s %7s\n" runs groups min p10 median p90 max "<=5%" "<=15%" multi "m<=15%"
for m in "${models[@]}"; do
  for s in none dp; do ratios "$m" "$s" | dist "$m, default chip, $s"; done
  if [ "$nsweep" -gt 0 ]; then
    for k in $(seq 0 $((nsweep - 1))); do
      sweep_json "$k" "$tmp/sweep$k.json"
      ratios "$m" dp "$tmp/sweep$k.json"
    done | dist "$m, $nsweep sweep chips, dp"
  fi
done
