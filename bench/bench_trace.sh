#!/usr/bin/env bash
# bench_trace.sh: `ctpu sim --trace` JSON vs Perfetto protobuf (plain .pftrace and deflated
# .perfetto-trace): file sizes and the CPU time a trace adds (user seconds, median of RUNS
# alternating runs of no trace / JSON / plain / deflated Perfetto) on
# MobileNetV2 INT8 (default chip), PP-OCRv4 det INT8 at 480x960 on a 4x4-MXU chip with 8 B/cycle
# DDR (1.7e8 cycles) and a synthetic chain of N LOAD -> MATMUL 64x64x32 -> STORE (1e8 cycles
# for N = 150000). The table of docs/traces.md ("Size and write time").
# usage: bench_trace.sh CTPU [RUNS] [N]        (the bench_trace CMake target passes CTPU)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ctpu=$1 runs=${2:-3} n=${3:-150000}
shared=$here/../../shared
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# bench NAME SIM-ARGS...: one table row
bench() {
  local name=$1 k i; shift
  for ((i = 0; i < runs; i++)); do
    for k in none json pftrace deflate; do
      local opt=()
      [ $k = json ] && opt=(--trace "$tmp/t.json")
      [ $k = pftrace ] && opt=(--trace "$tmp/t.pftrace")
      [ $k = deflate ] && opt=(--trace "$tmp/t.perfetto-trace")
      /usr/bin/time -f "%U" -o "$tmp/time" "$ctpu" sim "$@" -o "$tmp/y.h5" --no-race-check --summary "$tmp/s.json" \
        "${opt[@]}" >/dev/null 2>&1 || { echo "$name: ctpu sim failed"; return; }
      cat "$tmp/time" >>"$tmp/$k.times"
    done
  done
  local cyc js pf pz t0 tj tp tz
  cyc=$(sed -n 's/.*"total_cycles":[^0-9]*\([0-9]*\).*/\1/p' "$tmp/s.json")
  js=$(stat -c %s "$tmp/t.json") pf=$(stat -c %s "$tmp/t.pftrace") pz=$(stat -c %s "$tmp/t.perfetto-trace")
  t0=$(median <"$tmp/none.times") tj=$(median <"$tmp/json.times") tp=$(median <"$tmp/pftrace.times")
  tz=$(median <"$tmp/deflate.times")
  printf "%-12s %11s %8s %8s %12s %12s %12s %6.2f %6.2f %8.2f %8.2f %8.2f\n" "$name" "$cyc" \
    "$(grep -c '"ph":"X"' "$tmp/t.json")" "$(grep -c '"ph":"C"' "$tmp/t.json")" "$js" "$pf" "$pz" \
    "$(awk "BEGIN { print $js / $pf }")" "$(awk "BEGIN { print $js / $pz }")" \
    "$(awk "BEGIN { print $tj - $t0 }")" "$(awk "BEGIN { print $tp - $t0 }")" "$(awk "BEGIN { print $tz - $t0 }")"
  rm -f "$tmp"/*.times
}

printf "%-12s %11s %8s %8s %12s %12s %12s %6s %6s %8s %8s %8s\n" run cycles slices counters json_bytes pftrace_bytes \
  deflated_bytes ratio ratio_z "+cpu_js" "+cpu_pf" "+cpu_z"
mq=$shared/models/mobilenetv2-torchvision-qdq-int8
if [ -f "$mq/model.onnx" ]; then
  "$ctpu" transform "$mq/model.onnx" -o "$tmp/m.top" >/dev/null 2>&1 && "$ctpu" lower "$tmp/m.top" --quantize INT8 -o "$tmp/m.tpu" \
    >/dev/null 2>&1 && "$ctpu" deploy "$tmp/m.tpu" -o "$tmp/m.ctpu" >/dev/null 2>&1 &&
    bench mobilenetv2 "$tmp/m.ctpu" --input "$mq/test_data_set_0/input_0.pb"
fi
det=$shared/models/ppocrv4-det img=$shared/images/misc/skimage_coffee.jpg
if [ -f "$det/model.onnx" ] && [ -f "$img" ]; then
  echo '{"name": "mxu4", "mxu.rows": 4, "mxu.cols": 4, "gmem.bytes_per_cycle": 8}' >"$tmp/mxu4.json"
  "$ctpu" transform "$det/model.onnx" -o "$tmp/d.top" --input-shapes x:1x3x480x960 --mean 123.675,116.28,103.53 \
    --scale 0.01712,0.0175,0.01743 >/dev/null 2>&1 &&
    "$ctpu" calibrate "$tmp/d.top" --dataset "$img" --method minmax -o "$tmp/d.calib" >/dev/null 2>&1 &&
    "$ctpu" lower "$tmp/d.top" --quantize INT8 --calibration-table "$tmp/d.calib" -o "$tmp/d.tpu" >/dev/null 2>&1 &&
    "$ctpu" deploy "$tmp/d.tpu" --chip "$tmp/mxu4.json" -o "$tmp/d.ctpu" >/dev/null 2>&1 &&
    bench ppocrv4-det "$tmp/d.ctpu" --chip "$tmp/mxu4.json" --model "$tmp/d.tpu" --input "$img"
fi
# the synthetic program (ctpu asm syntax, docs/isa.md) and its int8 input as an ONNX TensorProto
python3 - "$tmp" "$n" <<'PY'
import sys
tmp, n = sys.argv[1], int(sys.argv[2])
dma = "dtype=i8 n=1 c=1 h=%d w=%d src_sn=%d src_sc=%d src_sh=%d src_sw=1 dst_sn=%d dst_sc=%d dst_sh=%d dst_sw=1"
lines = [".input a 64x64 i8 0x100000 0.02 0", ".output y 64x32 i8 0x200000 0.1 0",
         ".const wt i8 0x" + "".join("%02x" % (i * 7 & 0xff) for i in range(2048)) + " at=0x1000",
         ".const rq i32 [1073741824, 40] at=0x2000", '.debug "/setup" 0 -1 0',
         "LOAD dst=0x20000 src=@wt " + dma % (64, 32, 2048, 2048, 32, 2048, 2048, 32) + " signal=4",
         "LOAD dst=0x50000 src=@rq dtype=i32 n=1 c=1 h=1 w=2 src_sn=2 src_sc=2 src_sh=2 src_sw=1 dst_sn=2 dst_sc=2 "
         "dst_sh=2 dst_sw=1 signal=9"]
for i in range(n):
    b = i // 100
    lines.append('.debug "/backbone/stage%d/block.%d/conv%d/Conv" %d %d %d' % (b // 50, b % 50, b % 3, b, i % 100, i % 2))
    lines.append("LOAD dst=0x0 src=@a " + dma % (64, 64, 4096, 4096, 64, 4096, 4096, 64) + (" wait=2" if i else "") + " signal=0")
    lines.append("MATMUL a=0x0 b=0x20000 out=0x30000 rq=0x50000 batch=1 m=64 k=64 n=32 dt_a=i8 dt_b=i8 dt_out=i8 "
                 "rq_mode=tensor wait=%s signal=1" % ("0,4,9" if i == 0 else "0"))
    lines.append("STORE dst=@y src=0x30000 " + dma % (64, 32, 2048, 2048, 32, 2048, 2048, 32) + " wait=1 signal=2")
lines.append("END")
open(tmp + "/syn.s", "w").write("\n".join(lines) + "\n")
def varint(v):
    out = b""
    while v >= 0x80: out, v = out + bytes([v & 0x7f | 0x80]), v >> 7
    return out + bytes([v])
raw = bytes(i * 3 & 0xff for i in range(4096))  # TensorProto: dims 64 64, INT8, name "a", raw_data
pb = b"\x08" + varint(64) + b"\x08" + varint(64) + b"\x10\x03" + b"\x42\x01a" + b"\x4a" + varint(len(raw)) + raw
open(tmp + "/syn.pb", "wb").write(pb)
PY
"$ctpu" asm "$tmp/syn.s" -o "$tmp/syn.ctpu" >/dev/null && bench "synthetic" "$tmp/syn.ctpu" --input "$tmp/syn.pb"
