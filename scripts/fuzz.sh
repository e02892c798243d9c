#!/usr/bin/env bash
# fuzz.sh [--seconds N] [--jobs J] [HARNESS...]: builds the libFuzzer harnesses (fuzz/, clang,
# build-fuzz/) and runs each named harness (default: all) for N seconds (default 5) on its
# corpus build-fuzz/corpus/<harness>, seeded from ../shared and tests/data. Crashes, leaks and
# timeouts are written to build-fuzz/artifacts/<harness>-*; logs to build-fuzz/logs/. Prints one
# line per harness: executions, corpus size, artifacts. Exits 1 when a harness found a
# problem, 77 when clang or its libFuzzer runtime is missing (scripts/deps.sh --fuzz installs
# them). Long runs: nohup scripts/fuzz.sh --seconds 3600 onnx & (one at a time on 2 cores).
set -uo pipefail
cd "$(dirname "$0")/.."
secs=5 harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) secs=$2; shift 2;;
    -h|--help) sed -n '2,9p' "$0"; exit 0;;
    *) harnesses+=("$1"); shift;;
  esac
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(onnx top h5 pb image asm ctpu chip calib qtable)
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cc" ] || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: skipped: clang and libclang-rt-dev are needed (bash scripts/deps.sh --fuzz)"; exit 77
fi
b=build-fuzz
if [ ! -f $b/CMakeCache.txt ]; then
  CC=$cc cmake -S . -B $b -DCTPU_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 2
fi
cmake --build $b -j"$(nproc)" --target fuzz ctpu >/dev/null || { echo "fuzz: build failed"; exit 2; }
shared=../shared
seed() { # seed HARNESS FILE...: copies existing files into the corpus (once)
  local d=$b/corpus/$1; shift
  mkdir -p "$d"
  [ -n "$(ls -A "$d" 2>/dev/null)" ] && return
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$d/$(basename "$(dirname "$f")")_$(basename "$f")"; done
}
seed_text() { # seed_text HARNESS FILE LINE...: writes the lines as one seed file (once)
  local d=$b/corpus/$1 f=$2; shift 2
  mkdir -p "$d"
  [ -n "$(ls -A "$d" 2>/dev/null)" ] || printf '%s\n' "$@" > "$d/$f"
}
seed_all() {
  local nt=$shared/onnx-node-tests/node
  seed onnx $(ls -d $nt/*/model.onnx 2>/dev/null | head -300) $shared/bad-inputs/*.onnx
  seed pb $(ls $nt/*/test_data_set_0/input_0.pb 2>/dev/null | head -200) $shared/bad-inputs/*.pb
  seed h5 $shared/bad-inputs/*.h5 $(find tests/data -name '*.h5' | head -20)
  seed image $(ls $shared/images/misc/* 2>/dev/null | head -10) $(ls $shared/images/imagenet-sample/*.JPEG 2>/dev/null | head -5)
  seed top $(find tests/data -name '*.top') $shared/bad-inputs/*.top
  seed asm $(find tests/data -name '*.s') $shared/bad-inputs/*.s
  seed chip isa/../docs/*.json $(find tests/data -name '*.json')
  if [ -z "$(ls -A $b/corpus/chip)" ]; then $b/bin/ctpu chip --dump > $b/corpus/chip/default.json; fi
  seed_text calib table.calib "# ctpu calibration table" "# op_name threshold min max" "input 2.64 -2.1 2.64" \
    "conv1 6 0 6" "#weight_scale" "conv1_weight 2 0.01 0.02" "fc_weight 2 0.5 0.25 2 0 -3" "#int8_th" "x 1 -1 1"
  seed_text qtable table.qtable "# ctpu quantize table" "# op_name quantize_mode" "conv1 BF16" "fc f32" "head F16"
  if [ -z "$(ls -A $b/corpus/ctpu 2>/dev/null)" ]; then
    mkdir -p $b/corpus/ctpu
    for s in $b/corpus/asm/*; do $b/bin/ctpu asm "$s" -o "$b/corpus/ctpu/$(basename "$s").ctpu" >/dev/null 2>&1; done
  fi
}
seed_all
mkdir -p $b/artifacts $b/logs
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:allocator_may_return_null=1"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
bad=0
for h in "${harnesses[@]}"; do
  [ -x $b/bin/fuzz_$h ] || { echo "fuzz: no harness \"$h\""; bad=1; continue; }
  log=$b/logs/$h.log
  # run a copy: a rebuild during a long run (another fuzz.sh, a GLOB change) must not replace it
  bin=$(mktemp "${TMPDIR:-/tmp}/fuzz_$h.XXXXXX") && cp $b/bin/fuzz_$h "$bin" && chmod 700 "$bin" || { echo "fuzz: cannot copy fuzz_$h"; bad=1; continue; }
  "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=$b/artifacts/$h- $b/corpus/$h >"$log" 2>&1; rc=$?
  rm -f "$bin"
  execs=$(grep -a -m1 -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  found=$(grep -a -cE '^==[0-9]+==ERROR|^SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer|runtime error:|deadly signal|ERROR: libFuzzer' "$log")
  printf "fuzz_%-6s %10s executions in %ss, corpus %5d files, rc %d%s\n" "$h" "${execs:-?}" "$secs" \
    "$(ls $b/corpus/$h | wc -l)" $rc "$( [ "$found" -gt 0 ] && echo ", PROBLEM: see $log")"
  [ $rc -eq 0 ] && [ "$found" -eq 0 ] || bad=1
done
exit $bad
