#!/usr/bin/env bash
# allocfail.sh [--stride N] [--quiet] CTPU: allocation-failure sweep (SQLite's approach; docs/limits.md).
# CTPU must be built with -DCTPU_ALLOC_FAIL=ON (the sanitizer build is). For each command —
# transform, opt, lower, infer, compare, plan, asm, disasm, sim — on small real inputs from ../shared, it counts the
# allocations of a normal run (CTPU_ALLOC_STATS=1), then reruns it with CTPU_ALLOC_FAIL=N for
# N = 1, 1+stride, ... up to that count, and checks every run: exit code 4, a message saying
# "out of memory", no sanitizer report (leaks included), no output file left behind.
# Prints one line per command (allocations, call sites, runs, failures) and exits 1 on any failure.
# Exit 77 when ../shared is absent or CTPU was built without the hook.
set -uo pipefail
stride=1 quiet=0
while [ $# -gt 1 ]; do
  case "$1" in
    --stride) stride=$2; shift 2;;
    --quiet) quiet=1; shift;;
    *) echo "usage: allocfail.sh [--stride N] [--quiet] CTPU" >&2; exit 2;;
  esac
done
ctpu=$(readlink -f "${1:?usage: allocfail.sh [--stride N] CTPU}")
root=$(cd "$(dirname "$0")/.." && pwd)
shared=$root/../shared
[ -d "$shared/bad-inputs" ] && [ -d "$shared/onnx-node-tests" ] || { echo "allocfail: skipped: ../shared is absent"; exit 77; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
w=$(mktemp -d) && trap 'rm -rf "$w"' EXIT
cd "$w" || exit 2
cp "$shared/bad-inputs/conv.onnx" "$shared/bad-inputs/conv_relu.s" "$shared/bad-inputs/sim-input-ok.h5" .
t=$shared/onnx-node-tests/pytorch-converted/test_Conv2d
cp "$t/model.onnx" m.onnx && cp "$t/test_data_set_0/input_0.pb" x.pb
# the inputs each command reads, made once without the hook
"$ctpu" transform m.onnx -o m.top >/dev/null 2>&1 && "$ctpu" infer m.top --input x.pb -o ref.h5 >/dev/null 2>&1 &&
  "$ctpu" asm conv_relu.s -o p.ctpu >/dev/null 2>&1 || { echo "allocfail: preparing inputs failed"; exit 1; }
probe=$(CTPU_ALLOC_STATS=1 "$ctpu" compare ref.h5 ref.h5 2>&1 >/dev/null)
grep -q "ctpu alloc:" <<<"$probe" || { echo "allocfail: skipped: $ctpu has no CTPU_ALLOC_FAIL hook"; exit 77; }
cmds=(
  "transform|transform m.onnx -o o.top|o.top o.top.h5"
  "opt|opt m.top -o o.top|o.top o.top.h5"
  "lower|lower m.top --quantize BF16 -o o.tpu|o.tpu o.tpu.h5"
  "infer|infer m.top --input x.pb -o o.h5 --dump-all d.h5|o.h5 d.h5"
  "compare|compare ref.h5 ref.h5|"
  "plan|plan m.top --layer-group dp -o o.csv|o.csv"
  "asm|asm conv_relu.s -o o.ctpu|o.ctpu"
  "disasm|disasm p.ctpu -o o.s|o.s"
  "sim|sim p.ctpu --input sim-input-ok.h5 -o o.h5 --summary s.json --report r.csv --trace t.json|o.h5 s.json r.csv t.json"
  "sim-perfetto|sim p.ctpu --input sim-input-ok.h5 -o o.h5 --trace t.perfetto-trace|o.h5 t.perfetto-trace"
)
bad=0
for c in "${cmds[@]}"; do
  IFS='|' read -r name args outs <<<"$c"
  stats=$(CTPU_ALLOC_STATS=1 "$ctpu" $args 2>&1 >/dev/null | grep "ctpu alloc:" | tail -1)
  rm -f $outs
  total=$(sed -E 's/.* ([0-9]+) allocations.*/\1/' <<<"$stats")
  sites=$(sed -E 's/.* from ([0-9]+) sites.*/\1/' <<<"$stats")
  runs=0 fails=0
  for ((n = 1; n <= total; n += stride)); do
    CTPU_ALLOC_FAIL=$n "$ctpu" $args >out.txt 2>err.txt; rc=$?
    runs=$((runs + 1)) why=""
    [ $rc -eq 4 ] || why="exit $rc"
    grep -q "out of memory\|over the memory budget" err.txt || why="$why; no out-of-memory message"
    grep -qE 'Sanitizer|runtime error:' err.txt && why="$why; $(grep -m1 -E 'Sanitizer|runtime error:' err.txt | cut -c1-100)"
    for f in $outs; do [ -e "$f" ] && why="$why; $f left behind"; done
    rm -f $outs
    if [ -n "$why" ]; then
      fails=$((fails + 1))
      [ $quiet = 1 ] || echo "  FAIL $name N=$n: ${why#; }: $(grep -v '^==\|^ *#\|^$' err.txt | head -1 | cut -c1-120)"
    fi
  done
  printf "%-9s %6s allocations from %4s call sites: %5d runs (stride %d), %d failed\n" "$name" "$total" "$sites" $runs "$stride" $fails
  [ $fails -eq 0 ] || bad=1
done
exit $bad
