#!/usr/bin/env bash
# deploy_modes.sh: the same network in INT8 and in BF16 / F16 on one chip — what the float
# types cost an architect. Per model of deploy_models.sh (its INT8 modules; the float ones
# lowered from the same Top module) `ctpu deploy --test-input` on the default chip (or CHIP):
# simulated cycles, MXU utilization, DDR bytes and the float / INT8 cycle ratio, every program
# checked bit for bit against the Tpu reference by deploy itself.
# usage: deploy_modes.sh CTPU [CHIP.json]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 chip=${2:-}
shared=$here/../../shared
[ -d "$shared/models" ] || { echo "deploy_modes: ../shared is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# shellcheck source=deploy_models.sh
. "$here/deploy_models.sh"
prepare_models
chipopt=()
[ -n "$chip" ] && chipopt=(--chip "$chip")
# MobileNetV2's INT8 module is the QDQ model's (its own scales); its float rows come from the
# fp32 model those weights were dequantized into (same network; a QDQ model lowered to BF16
# keeps its QuantizeLinear / DequantizeLinear pairs, which have no codegen).
mf=$shared/models/mobilenetv2-fp32-dequant-from-qdq/model.onnx
[ -f "$mf" ] && "$ctpu" transform "$mf" -o "$tmp/mobilenetv2.float.top" >/dev/null 2>&1
float_top_of() { if [ "$1" = mobilenetv2 ]; then echo "$tmp/mobilenetv2.float.top"; else echo "$tmp/$1.top"; fi; }

# Deploys module $1 for model $2; prints "cycles mxu_util ddr_bytes" or "failed".
run() {
  if ! "$ctpu" deploy "$1" "${chipopt[@]}" -o "$tmp/p.ctpu" --test-input "$(input_of "$2")" >"$tmp/log" 2>&1; then
    echo failed
    return
  fi
  echo "$(sed -n 's/.*simulated \([0-9]*\) cycles,.*/\1/p' "$tmp/log") $(sed -n 's/.*MXU utilization \([0-9.]*\),.*/\1/p' "$tmp/log")" \
    "$(sed -n 's/.*DDR \([0-9]*\) bytes.*/\1/p' "$tmp/log")"
}

printf "%-18s %-5s %12s %8s %12s %8s\n" model mode sim_cycles mxu_util ddr_bytes "/INT8"
for m in "${models[@]}"; do
  read -r c8 u8 b8 <<<"$(run "$(tpu_of "$m")" "$m")"
  printf "%-18s %-5s %12s %8s %12s %8s\n" "$m" INT8 "$c8" "$u8" "$b8" 1
  for mode in BF16 F16; do
    if ! "$ctpu" lower "$(float_top_of "$m")" --quantize "$mode" -o "$tmp/$m.$mode.tpu" >"$tmp/log" 2>&1; then
      printf "%-18s %-5s lower failed: %s\n" "$m" "$mode" "$(head -c 200 "$tmp/log")"
      continue
    fi
    read -r c u b <<<"$(run "$tmp/$m.$mode.tpu" "$m")"
    ratio=$(awk -v a="$c" -v b="$c8" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
    printf "%-18s %-5s %12s %8s %12s %8s\n" "$m" "$mode" "$c" "${u:-}" "${b:-}" "$ratio"
  done
done
