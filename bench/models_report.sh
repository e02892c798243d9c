#!/usr/bin/env bash
# models_report.sh: accuracy and graph statistics of ctpu on every real model of
# ../shared/models (not a test: the figures of README "Results"). For each model:
# `ctpu transform --no-canonicalize`, `ctpu opt --stats` (ops before → after canonicalize),
# `ctpu infer` on test_data_set_0 (canonicalized graph) and `ctpu compare` of every output
# with onnxruntime's output_N.pb. usage: bench/models_report.sh [CTPU]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=${1:-$here/../build/bin/ctpu}
shared=$here/../../shared/models
[ -d "$shared" ] || { echo "models_report: ../shared/models is absent"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
printf "| model | ops before | ops after | output | cosine | max abs err | max abs ref |\n|---|---|---|---|---|---|---|\n"
for onnx in "$shared"/*/model.onnx "$shared"/fmnist-rescnn/model_unfused_bn.onnx; do
  dir=$(dirname "$onnx") name=$(basename "$dir")
  [ "$(basename "$onnx")" = model.onnx ] || name="$name/$(basename "$onnx" .onnx)"
  t=$tmp/m
  "$ctpu" transform "$onnx" --no-canonicalize -o "$t.raw.top" >/dev/null 2>"$tmp/err" || { echo "| $name | transform failed: $(head -c 200 "$tmp/err") |"; continue; }
  "$ctpu" opt "$t.raw.top" -o "$t.top" --stats > "$tmp/stats" 2>>"$tmp/err"
  before=$(awk '$1 == "op" && $2 != "Weight" && $2 != "Input" { s += $3 } END { print s }' "$tmp/stats")
  after=$(awk '$1 == "op" && $2 != "Weight" && $2 != "Input" { s += $4 } END { print s }' "$tmp/stats")
  ins=$(ls "$dir"/test_data_set_0/input_*.pb | sort -V)
  # shellcheck disable=SC2086
  "$ctpu" infer "$t.top" --input $ins -o "$t.out.h5" 2>>"$tmp/err" || { echo "| $name | infer failed |"; continue; }
  for ref in $(ls "$dir"/test_data_set_0/output_*.pb | sort -V); do
    line=$("$ctpu" compare "$ref" "$t.out.h5" | awk 'NR == 2')
    out=$(awk '{ print $1 }' <<<"$line") cos=$(awk '{ print $5 }' <<<"$line") mad=$(awk '{ print $8 }' <<<"$line")
    maxref=$(/usr/bin/python3 -c "import onnx.numpy_helper as n, onnx, sys; t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read()); print('%.3g' % abs(n.to_array(t)).max())" "$ref" 2>/dev/null || echo -)
    printf "| %s | %s | %s | %s | %s | %s | %s |\n" "$name" "$before" "$after" "$out" "$cos" "$mad" "$maxref"
  done
done
