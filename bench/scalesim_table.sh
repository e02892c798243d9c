#!/usr/bin/env bash
# scalesim_table.sh: MXU cycles per Conv / Gemm layer of the QDQ MobileNetV2 deployed on a
# 32×32 weight-stationary chip (`ctpu deploy --mxu-report`), next to SCALE-Sim's closed
# form for the same whole-layer GEMM, folds · (2R + C + T − 2) (docs/cmodel.md "MXU"), for
# --layer-group dp (and the none total). ratio = simulated MXU cycles / closed form: tiling
# along H splits T over more folds, each paying the 2R + C − 2 fill and drain again.
# usage: scalesim_table.sh CTPU [STRATEGY]   (default dp)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 lg=${2:-dp}
shared=$here/../../shared
[ -d "$shared/models" ] || { echo "scalesim_table: ../shared is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# shellcheck source=deploy_models.sh
. "$here/deploy_models.sh"
prepare_models
printf '{"name": "ws32", "mxu.rows": 32, "mxu.cols": 32, "mxu.dataflow": "ws"}\n' >"$tmp/ws32.json"
m=mobilenetv2
case " ${models[*]} " in *" $m "*) ;; *) echo "scalesim_table: MobileNetV2 unavailable"; exit 0 ;; esac
for s in "$lg" none; do
  "$ctpu" deploy "$(tpu_of $m)" --chip "$tmp/ws32.json" --layer-group "$s" -o "$tmp/$s.ctpu" --test-input "$(input_of $m)" \
    --mxu-report "$tmp/$s.csv" >"$tmp/$s.log" 2>&1 || { echo "deploy ($s) failed: $(tail -c 300 "$tmp/$s.log")"; exit 1; }
done
printf "MobileNetV2 QDQ-INT8, 32x32 WS, --layer-group %s: MXU cycles per layer vs SCALE-Sim's closed form\n" "$lg"
printf "%-34s %6s %5s %5s %6s %9s %6s %6s %9s %6s\n" layer pixels red filt folds scalesim tiles folds sim_mxu ratio
awk -F, 'NR > 1 && $1 != "total" { n = $1; gsub(/"/, "", n); sub(/^\/features\//, "", n); sub(/^\/classifier\//, "", n)
    printf "%-34s %6s %5s %5s %6s %9s %6s %6s %9s %6.3f\n", substr(n, 1, 34), $3, $4, $5, $7, $8, $9, $10, $12, $13 }
  $1 == "total" { printf "%-34s %6s %5s %5s %6s %9s %6s %6s %9s %6.3f\n", "total", "", "", "", $7, $8, $9, $10, $12, $13 }' \
  "$tmp/$lg.csv"
awk -F, -v s=none '$1 == "total" { printf "%-34s %6s %5s %5s %6s %9s %6s %6s %9s %6.3f\n", "total, --layer-group " s, "", "", "", $7, $8, $9, $10, $12, $13 }' "$tmp/none.csv"
for s in "$lg" none; do
  sed -n "s/^deploy [^(]*([^,]*, \([a-z]*\)): .*simulated \([0-9]*\) cycles, MXU utilization \([0-9.]*\).*/whole program, \1: \2 cycles, MXU utilization \3/p" "$tmp/$s.log"
done
