#!/usr/bin/env bash
# bench_calib.sh: calibration wall time of `ctpu calibrate` on MobileNetV2
# (mobilenetv2-fp32-dequant-from-qdq, the first N images of ../shared/images/imagenet-sample,
# default 100) for every method on THREADS threads (default 2), then the float Top inference
# time per image of ctpu (bench_infer) next to onnxruntime-node 1.30.0 (bench/ort, CPU) on
# the same input (test_data_set_0/input_0.pb), median of RUNS runs, 1 thread, as a ratio;
# then the Tpu reference (INT8 from the kld table, BF16) per image against the Top time.
# usage: bench_calib.sh CTPU BENCH_INFER [N] [THREADS] [RUNS]   (the bench_calib CMake target)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 bench=$2 n=${3:-100} threads=${4:-2} runs=${5:-10}
shared=$here/../../shared
model=$shared/models/mobilenetv2-fp32-dequant-from-qdq
[ -d "$model" ] || { echo "bench_calib: ../shared is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

top=$tmp/mnv2.top
"$ctpu" transform "$model/model.onnx" -o "$top" --pixel-format rgb --resize-dims 256,256 --keep-aspect-ratio \
  --mean 123.675,116.28,103.53 --scale 0.01712475,0.017507,0.01742919 >/dev/null || exit 1

printf "calibration of mobilenetv2 on %s imagenet-sample images, %s threads\n" "$n" "$threads"
printf "%-12s %8s %8s %10s\n" method wall_s cpu_s images/s
for m in minmax percentile kld mse tune; do
  if /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$ctpu" calibrate "$top" --dataset "$shared/images/imagenet-sample" \
       --input-num "$n" --threads "$threads" --method "$m" -o "$tmp/$m.txt" 2>"$tmp/err"; then
    awk -v m="$m" -v n="$n" '{ printf "%-12s %8.2f %8.2f %10.1f\n", m, $1, $2 + $3, n / $1 }' "$tmp/time"
  else
    printf "%-12s failed: %s\n" "$m" "$(head -c 300 "$tmp/err")"
  fi
done
echo "(cpu_s: user + system seconds of all threads; wall time depends on the machine's load)"

. "$here/ort/ort_env.sh"
in=$model/test_data_set_0/input_0.pb
c=$("$bench" "$top" "$runs" 1 "$in" 2>/dev/null | awk '$1 == 1 { print $2 }')
o=""
[ $ort_ok = 1 ] && o=$(node "$here/ort/ort_bench.js" "$model/model.onnx" "$runs" 1 "$in" 2>/dev/null | awk '$1 == 1 { print $2 }')
printf "\nTop inference per image, 1 thread, median of %s runs (ms): ctpu %s, onnxruntime %s, ratio ctpu/ort %s\n" \
  "$runs" "${c:--}" "${o:--}" "$(awk -v a="$c" -v b="$o" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }')"

# Tpu reference (integer kernels, bf16 rounding) vs the float interpreter on the same model
# and input, 1 thread, median of RUNS runs: INT8 from the kld table, BF16.
printf "\nTpu reference per image, 1 thread, median of %s runs (ms): Top %s" "$runs" "${c:--}"
for q in INT8 BF16; do
  extra=""
  [ $q = INT8 ] && extra="--calibration-table $tmp/kld.txt"
  t=""
  "$ctpu" lower "$top" --quantize $q $extra -o "$tmp/m_$q.tpu" >/dev/null 2>&1 &&
    t=$("$bench" "$tmp/m_$q.tpu" "$runs" 1 "$in" 2>/dev/null | awk '$1 == 1 { print $2 }')
  printf ", %s %s (x%s)" $q "${t:--}" "$(awk -v a="$t" -v b="$c" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }')"
done
echo
