#!/usr/bin/env bash
# deploy_models.sh: shared helpers of the deploy benchmarks (sourced, not run). Prepares the
# INT8 Tpu modules of the models `ctpu deploy` covers into $tmp — fmnist-rescnn (calibrated
# with KLD on the first 8 Fashion-MNIST test images), the QDQ MobileNetV2 (its own scales),
# ultraface-rfb-320, yolox-nano and ppocrv4-rec (max-calibrated on their test input),
# ppocrv4-det at 320×320 (max-calibrated on images/misc/skimage_coffee.jpg, its test input) —
# and writes the 32 sweep chips of tests/test_deploy.c (sweep_json K FILE).
# Needs: $ctpu, $tmp, $shared (../shared). Defines: models (names), tpu_of, input_of.
prepare_models() {
  models=()
  local fm=$shared/models/fmnist-rescnn mq=$shared/models/mobilenetv2-torchvision-qdq-int8
  if [ -f "$fm/model.onnx" ] && [ -f "$shared/datasets/fashion-mnist-test.h5" ]; then
    "$ctpu" transform "$fm/model.onnx" -o "$tmp/fmnist.top" --mean 72.93 --scale 0.0111092595 >/dev/null 2>&1 &&
      "$ctpu" calibrate "$tmp/fmnist.top" --dataset "$shared/datasets/fashion-mnist-test.h5" --input-num 8 \
        -o "$tmp/fmnist.calib" >/dev/null 2>&1 &&
      "$ctpu" lower "$tmp/fmnist.top" --quantize INT8 --calibration-table "$tmp/fmnist.calib" -o "$tmp/fmnist.tpu" \
        >/dev/null 2>&1 && models+=(fmnist)
  fi
  if [ -f "$mq/model.onnx" ]; then
    "$ctpu" transform "$mq/model.onnx" -o "$tmp/mobilenetv2.top" >/dev/null 2>&1 &&
      "$ctpu" lower "$tmp/mobilenetv2.top" --quantize INT8 -o "$tmp/mobilenetv2.tpu" >/dev/null 2>&1 &&
      models+=(mobilenetv2)
  fi
  local m
  local det=$shared/models/ppocrv4-det img=$shared/images/misc/skimage_coffee.jpg
  if [ -f "$det/model.onnx" ] && [ -f "$img" ]; then
    "$ctpu" transform "$det/model.onnx" -o "$tmp/ppocrv4-det.top" --input-shapes x:1x3x320x320 \
      --mean 123.675,116.28,103.53 --scale 0.01712,0.0175,0.01743 >/dev/null 2>&1 &&
      "$ctpu" calibrate "$tmp/ppocrv4-det.top" --dataset "$img" --method minmax -o "$tmp/ppocrv4-det.calib" >/dev/null 2>&1 &&
      "$ctpu" lower "$tmp/ppocrv4-det.top" --quantize INT8 --calibration-table "$tmp/ppocrv4-det.calib" \
        -o "$tmp/ppocrv4-det.tpu" >/dev/null 2>&1 && models+=(ppocrv4-det)
  fi
  for m in ultraface-rfb-320 yolox-nano ppocrv4-rec; do
    local dir=$shared/models/$m
    [ -f "$dir/model.onnx" ] || continue
    "$ctpu" transform "$dir/model.onnx" -o "$tmp/$m.top" >/dev/null 2>&1 &&
      "$ctpu" calibrate "$tmp/$m.top" --dataset "$dir/test_data_set_0/input_0.pb" --method minmax -o "$tmp/$m.calib" \
        >/dev/null 2>&1 &&
      "$ctpu" lower "$tmp/$m.top" --quantize INT8 --calibration-table "$tmp/$m.calib" -o "$tmp/$m.tpu" >/dev/null 2>&1 &&
      models+=("$m")
  done
}
tpu_of() { echo "$tmp/$1.tpu"; }
input_of() {
  case $1 in
    fmnist) echo "$shared/models/fmnist-rescnn/test_data_set_0/input_0.pb" ;;
    mobilenetv2) echo "$shared/models/mobilenetv2-torchvision-qdq-int8/test_data_set_0/input_0.pb" ;;
    ppocrv4-det) echo "$shared/images/misc/skimage_coffee.jpg" ;;
    *) echo "$shared/models/$1/test_data_set_0/input_0.pb" ;;
  esac
}
# The sweep chip K (0..31) of tests/test_deploy.c as dotted-key JSON into FILE.
sweep_json() {
  local k=$1 rows=(8 16 32 64 16) cols=(8 16 32 64 64) lmem=(262144 524288 1048576 2097152 4194304)
  local banks=(4 8 16 32) ddr=(8 16 32 64 128) df=ws
  [ $((k % 2)) = 1 ] && df=os
  printf '{"name": "sweep%d", "mxu.rows": %d, "mxu.cols": %d, "lmem.bytes": %d, "lmem.banks": %d, "gmem.bytes_per_cycle": %d, "mxu.dataflow": "%s", "dma.load_engines": %d, "dma.store_engines": %d}\n' \
    "$k" "${rows[k % 5]}" "${cols[k % 5]}" "${lmem[(k / 2) % 5]}" "${banks[(k / 3) % 4]}" "${ddr[(k * 3 / 2) % 5]}" "$df" \
    $((1 + (k / 4) % 2)) $((1 + (k / 8) % 2)) >"$2"
}
