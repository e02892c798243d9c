#!/usr/bin/env bash
# deploy_models.sh: shared helpers of the deploy benchmarks (sourced, not run). Prepares the
# INT8 Tpu modules of the models `ctpu deploy` covers into $tmp — fmnist-rescnn (calibrated
# with KLD on the first 8 Fashion-MNIST test images) and the QDQ MobileNetV2 (its own scales)
# — and writes the 32 sweep chips of tests/test_deploy.c (sweep_json K FILE).
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
}
tpu_of() { echo "$tmp/$1.tpu"; }
input_of() {
  case $1 in
    fmnist) echo "$shared/models/fmnist-rescnn/test_data_set_0/input_0.pb" ;;
    mobilenetv2) echo "$shared/models/mobilenetv2-torchvision-qdq-int8/test_data_set_0/input_0.pb" ;;
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
