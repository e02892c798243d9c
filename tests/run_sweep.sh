#!/usr/bin/env bash
# run_sweep.sh CTPU: `ctpu sweep` (docs/sweep.md) on fmnist-rescnn (BF16 and F16, deployed with
# --compare-all) over 2 strategies × 2 MXU shapes = 8 points, with GNU parallel on 2 jobs:
#  1. every point finishes and results.csv matches the point folders (tests/sweep_check.py);
#     a point's program run by ctpu sim gives its summary's cycles and its per-layer report;
#  2. a second run runs no point (every summary.json untouched) and rewrites results.csv
#     byte for byte;
#  3. a run interrupted (SIGINT to its process group) after its first finished point resumes: the
#     points finished before it are not run again, and its results.csv is identical to
#     the uninterrupted run's;
#  4. without GNU parallel in PATH the points run one after another, with a message; points
#     whose LMEM is too small for the model are rows of status limit (deploy exit 4), exit 0;
#  5. bad specs (unknown key, bad value, bad strategy, missing model, invalid JSON) exit 3 with a
#     message naming the spec file and the JSON path, and create no output folder; an output
#     folder holding another sweep exits 2.
# Exits 77 without ../shared or GNU parallel.
set -uo pipefail
NAME=sweep
# shellcheck source=tests/sweep_setup.sh
source "$(dirname "$0")/sweep_setup.sh"
pg=
trap '[ -n "$pg" ] && kill -INT -- "-$pg" 2>/dev/null && wait "$pg"; rm -rf "$t"' EXIT
fail() { echo "$NAME: FAIL: $*"; exit 1; }
spec "$t/spec.json" '["BF16", "F16"]'

# 1. a whole run
"$ctpu" sweep "$t/spec.json" -o "$t/a" --jobs 2 2> "$t/a.log" || { cat "$t/a.log"; fail "first run exit $?"; }
grep -q "8 points: 8 done, 0 over a chip limit, 0 failed, 0 pending" "$t/a.log" || { cat "$t/a.log"; fail "first run counts"; }
python3 "$root/tests/sweep_check.py" "$t/a" 8 || fail "results.csv vs point folders"
[ "$(grep -c ',point,' "$t/a/results.csv")" = 8 ] || fail "8 point rows"
grep -q '"compare_all":[[:space:]]*true' "$t/a/points/0000/summary.json" || fail "compare_all not passed to deploy"
# the point's program on ctpu sim gives the same cycles, DDR bytes and per-layer report
p0=$t/a/points/0000
"$ctpu" sim "$p0/prog.ctpu" --chip "$p0/chip.json" --input "$m/test_data_set_0/input_0.pb" -o "$t/o.h5" \
  --summary "$t/sim.json" --report "$t/sim.csv" 2>/dev/null || fail "ctpu sim of point 0"
cmp -s "$t/sim.csv" "$p0/layers.csv" || fail "deploy --report differs from ctpu sim --report"
python3 -c 'import json, sys
a, b = json.load(open(sys.argv[1]))["sim"], json.load(open(sys.argv[2]))
k = ["total_cycles", "macs", "ddr_bytes_read", "ddr_bytes_written", "instructions"]
sys.exit([a[x] for x in k] != [b[x] for x in k])' "$p0/summary.json" "$t/sim.json" || fail "deploy --summary differs from ctpu sim --summary"

# 2. a second run runs nothing
stat -c '%n %Y %i' "$t"/a/points/*/summary.json > "$t/before"
cp "$t/a/results.csv" "$t/a.csv"
"$ctpu" sweep "$t/spec.json" -o "$t/a" --jobs 2 2> "$t/a2.log" || fail "second run"
grep -q "to run" "$t/a2.log" && fail "second run started points: $(cat "$t/a2.log")"
stat -c '%n %Y %i' "$t"/a/points/*/summary.json | cmp -s - "$t/before" || fail "second run rewrote a summary"
cmp -s "$t/a.csv" "$t/a/results.csv" || fail "second run changed results.csv"

# 3. kill mid-run, resume
setsid "$ctpu" sweep "$t/spec.json" -o "$t/b" --jobs 1 2> "$t/b.log" &
pg=$!
for _ in $(seq 600); do
  ls "$t"/b/points/*/summary.json >/dev/null 2>&1 && break
  sleep 0.1
done
kill -INT -- "-$pg" 2>/dev/null # as ^C would: GNU parallel stops its running job and exits
wait "$pg"
rc=$? pg=
[ $rc = 1 ] || fail "interrupted run: exit $rc, not 1 (points pending)"
done_before=$(ls "$t"/b/points/*/summary.json 2>/dev/null | wc -l)
[ "$done_before" -ge 1 ] && [ "$done_before" -lt 8 ] || fail "killed run finished $done_before of 8 points (want 1..7)"
stat -c '%n %Y %i' "$t"/b/points/*/summary.json > "$t/b.before"
"$ctpu" sweep "$t/spec.json" -o "$t/b" --jobs 2 2> "$t/b2.log" || { cat "$t/b2.log"; fail "resume"; }
grep -q "$((8 - done_before)) point(s) to run" "$t/b2.log" || { cat "$t/b2.log"; fail "resume ran other than the $((8 - done_before)) pending points"; }
while read -r f s i; do
  [ "$(stat -c '%n %Y %i' "$f")" = "$f $s $i" ] || fail "resume ran finished point $f again"
done < "$t/b.before"
cmp "$t/a/results.csv" "$t/b/results.csv" || fail "resumed results.csv differs from the uninterrupted run's"
ls -d "$t"/b/points/*/.ctpu-* 2>/dev/null && fail "temporary folders left after resume"

# 4. without GNU parallel: the points run one after another
spec "$t/seq.json" '"BF16"'
sed -i 's/\["dp", "greedy"\]/"dp"/; s/"sweep":/"points": [{"lmem.bytes": 4096, "lmem.banks": 4}, {}], "sweep":/' "$t/seq.json"
mkdir "$t/bin"
for p in sh sed rm mv; do ln -s "$(command -v $p)" "$t/bin/$p"; done
PATH=$t/bin "$ctpu" sweep "$t/seq.json" -o "$t/seq" 2> "$t/seq.log" || { cat "$t/seq.log"; fail "sequential run"; }
grep -q "GNU parallel not found" "$t/seq.log" || fail "no message about the missing GNU parallel: $(cat "$t/seq.log")"
grep -q "4 points: 2 done, 2 over a chip limit, 0 failed" "$t/seq.log" || fail "sequential counts: $(cat "$t/seq.log")"
python3 "$root/tests/sweep_check.py" "$t/seq" 4 || fail "sequential results.csv vs point folders"

# 5. bad specs: exit 3, file and JSON path named, nothing created
bad() { # bad NAME EXPECTED-MESSAGE JSON
  printf '%s\n' "$3" > "$t/$1.json"
  "$ctpu" sweep "$t/$1.json" -o "$t/out_$1" 2> "$t/$1.err"
  local rc=$?
  [ $rc = 3 ] || fail "$1: exit $rc, not 3: $(cat "$t/$1.err")"
  grep -qF "$t/$1.json: $2" "$t/$1.err" || fail "$1: message \"$(cat "$t/$1.err")\" lacks \"$t/$1.json: $2\""
  [ -e "$t/out_$1" ] && fail "$1: created the output folder"
  return 0
}
mod="{\"path\": \"$m/model.onnx\", \"quantize\": \"BF16\"}"
bad topkey 'sweeps: unknown key' "{\"models\": [$mod], \"sweeps\": {}}"
bad modelkey 'models[0].quantise: unknown key' "{\"models\": [{\"path\": \"$m/model.onnx\", \"quantise\": \"BF16\"}]}"
bad chipkey 'sweep.mxu.rowz[0]: ' "{\"models\": [$mod], \"sweep\": {\"mxu.rowz\": [16]}}"
bad value 'sweep.mxu.rows[1]: mxu.rows' "{\"models\": [$mod], \"sweep\": {\"mxu.rows\": [16, 0]}}"
bad pow2 'sweep.vpu.lanes[0]: vpu.lanes' "{\"models\": [$mod], \"sweep\": {\"vpu.lanes\": [48]}}"
bad cross 'chip point 0 (lmem.bytes[0] lmem.banks[0]): lmem.banks: 1024 does not divide' "{\"models\": [$mod], \"sweep\": {\"lmem.bytes\": [1536], \"lmem.banks\": [1024]}}"
bad pointval 'points[0].lmem.banks: lmem.banks' "{\"models\": [$mod], \"points\": [{\"lmem.banks\": 3}]}"
bad strategy 'layer_group[1]: "fast" is not' "{\"models\": [$mod], \"layer_group\": [\"dp\", \"fast\"]}"
bad quantize 'models[0].quantize[0]: "INT4" is not' "{\"models\": [{\"path\": \"$m/model.onnx\", \"quantize\": \"INT4\"}]}"
bad missing 'models[0].path: "nope.onnx"' '{"models": [{"path": "nope.onnx", "quantize": "BF16"}]}'
bad input 'models[0].test_input[0]: "nope.pb"' "{\"models\": [{\"path\": \"$m/model.onnx\", \"quantize\": \"BF16\", \"test_input\": [\"nope.pb\"]}]}"
bad json 'byte ' '{"models": [}'
# another sweep's folder
printf '{"models": [%s], "layer_group": "greedy"}\n' "$mod" > "$t/other.json"
"$ctpu" sweep "$t/other.json" -o "$t/a" 2> "$t/other.err"
[ $? = 2 ] || fail "another sweep's folder: not exit 2: $(cat "$t/other.err")"
grep -q "holds another sweep" "$t/other.err" || fail "another sweep's folder: $(cat "$t/other.err")"
cmp -s "$t/a.csv" "$t/a/results.csv" || fail "refused run changed results.csv"
echo "$NAME: ok: 8 points, rerun skipped all, resume after an interrupt at $done_before/8 gave identical rows, 12 bad specs refused"
