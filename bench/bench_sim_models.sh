#!/usr/bin/env bash
# bench_sim_models.sh: cmodel speed on real programs (not a test): MobileNetV2 INT8 (the QDQ
# model's own scales) and PP-OCRv4 det INT8 at 960×960 (max-calibrated on its test image),
# compiled by `ctpu deploy` for the default chip; BENCH prints per mode (deploy --compare-all,
# without the dump, --no-race-check, --functional, timing only) the median CPU seconds of the
# simulation, simulated cycles/s and GMAC/s. CPU seconds, not wall: the machine may be loaded.
# usage: bench_sim_models.sh CTPU BENCH_SIM [RUNS]   (the bench_sim_models CMake target passes them)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 bench=$2 runs=${3:-${BENCH_RUNS:-5}}
shared=$here/../../shared
[ -d "$shared/models" ] || { echo "bench_sim_models: ../shared is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
mq=$shared/models/mobilenetv2-torchvision-qdq-int8 det=$shared/models/ppocrv4-det img=$shared/images/misc/skimage_coffee.jpg
if [ -f "$mq/model.onnx" ] && "$ctpu" transform "$mq/model.onnx" -o "$tmp/mnv2.top" >/dev/null 2>&1 &&
  "$ctpu" lower "$tmp/mnv2.top" --quantize INT8 -o "$tmp/mnv2.tpu" >/dev/null 2>&1 &&
  "$ctpu" deploy "$tmp/mnv2.tpu" -o "$tmp/mnv2.ctpu" >/dev/null 2>&1; then
  "$bench" "$tmp/mnv2.ctpu" "$tmp/mnv2.tpu" "$mq/test_data_set_0/input_0.pb" - "$runs"
fi
if [ -f "$det/model.onnx" ] && [ -f "$img" ] &&
  "$ctpu" transform "$det/model.onnx" -o "$tmp/det.top" --input-shapes x:1x3x960x960 \
    --mean 123.675,116.28,103.53 --scale 0.01712,0.0175,0.01743 >/dev/null 2>&1 &&
  "$ctpu" calibrate "$tmp/det.top" --dataset "$img" --method minmax -o "$tmp/det.calib" >/dev/null 2>&1 &&
  "$ctpu" lower "$tmp/det.top" --quantize INT8 --calibration-table "$tmp/det.calib" -o "$tmp/det.tpu" >/dev/null 2>&1 &&
  "$ctpu" deploy "$tmp/det.tpu" -o "$tmp/det.ctpu" >/dev/null 2>&1; then
  "$bench" "$tmp/det.ctpu" "$tmp/det.tpu" "$img" - "$runs"
fi
