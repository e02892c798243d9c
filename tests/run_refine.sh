#!/usr/bin/env bash
# run_refine.sh CTPU: `ctpu refine` on fmnist-rescnn (docs/calibration.md "ctpu refine").
# Calibrates by min/max on 50 Fashion-MNIST test images, refines on 16, then checks
# independently (ctpu qtable's INT8 cosine on the same 16 samples) that the start and final output
# cosines it reports are what the two tables give, that the final one is not lower, that the
# table keeps its tensors and changes thresholds only when the cosine rose, that 2 threads
# write the same table, and that bad input fails with the documented exit codes and leaves
# no file. Exits 77 without ../shared.
set -uo pipefail
NAME=refine
# shellcheck source=tests/fmnist_setup.sh
source "$(dirname "$0")/fmnist_setup.sh"
"$ctpu" calibrate "$t/fm.top" --dataset "$data" --input-num 50 --method minmax -o "$t/fm.cali" 2>/dev/null || fail calibrate
"$ctpu" refine "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --input-num 16 -o "$t/rf.cali" > "$t/out.txt" ||
  fail refine
cat "$t/out.txt"
c0=$(awk '/^start: output cosine/ {print $4}' "$t/out.txt")
c1=$(awk '/^pass 1: output cosine/ {sub(",", "", $5); print $5}' "$t/out.txt")
changed=$(awk '/^pass 1:/ {print $6}' "$t/out.txt")
[ -n "$c0" ] && [ -n "$c1" ] && [ -n "$changed" ] || fail "no start / pass line"
awk -v a="$c0" -v b="$c1" 'BEGIN {exit !(b >= a)}' || fail "final cosine $c1 below the start $c0"
# the reported cosines are what `ctpu qtable` measures for the two tables on the 16 samples
for x in fm rf; do
  "$ctpu" qtable "$t/fm.top" --calibration-table "$t/$x.cali" --dataset "$data" --input-num 16 --expected-cos 0.01 \
    -o "$t/$x.q" > "$t/$x.qt" || fail "qtable $x"
done
e0=$(awk '/^int8 cosine/ {print $3}' "$t/fm.qt")
e1=$(awk '/^int8 cosine/ {print $3}' "$t/rf.qt")
echo "qtable on the 16 samples: $e0 -> $e1"
[ "$e0" = "$c0" ] || fail "start cosine $c0, but the input table measures $e0"
[ "$e1" = "$c1" ] || fail "final cosine $c1, but the refined table measures $e1"
# same tensors in the same order; thresholds changed only if the cosine rose
names() { grep -v '^#' "$1" | awk 'NF == 4 {print $1}'; }
diff <(names "$t/fm.cali") <(names "$t/rf.cali") >/dev/null || fail "the refined table lost or reordered tensors"
ndiff=$(paste <(grep -v '^#' "$t/fm.cali" | awk 'NF == 4 {print $2}') <(grep -v '^#' "$t/rf.cali" | awk 'NF == 4 {print $2}') |
  awk '$1 != $2' | wc -l)
[ "$ndiff" -eq "$changed" ] || fail "$ndiff thresholds differ, refine reported $changed"
if [ "$c0" = "$c1" ]; then [ "$ndiff" -eq 0 ] || fail "thresholds changed without gain"; fi
grep -q "^# refined by ctpu refine" "$t/rf.cali" || fail "no comment line saying what was done"
# threads do not change the result
"$ctpu" refine "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --input-num 16 --threads 2 \
  -o "$t/rf2.cali" >/dev/null || fail "refine --threads 2"
cmp -s "$t/rf.cali" "$t/rf2.cali" || fail "--threads 2 wrote another table"
# bad usage (2) and bad input (3): no output left
"$ctpu" refine "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --passes 0 -o "$t/bad.cali" 2>/dev/null
[ $? -eq 2 ] || fail "--passes 0 must exit 2"
"$ctpu" refine "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --lut-input 4 -o "$t/bad.cali" 2>/dev/null
[ $? -eq 2 ] || fail "--lut-input 4 must exit 2"
"$ctpu" refine "$t/fm.top" --calibration-table "$t/nope.cali" --dataset "$data" -o "$t/bad.cali" 2>"$t/err.txt"
[ $? -eq 3 ] || fail "a missing table must exit 3"
grep -q nope.cali "$t/err.txt" || fail "the error must name the table"
awk '!/^#/ && NF == 4 && !gone {gone = 1; next} {print}' "$t/fm.cali" > "$t/short.cali"
"$ctpu" refine "$t/fm.top" --calibration-table "$t/short.cali" --dataset "$data" -o "$t/bad.cali" 2>"$t/err.txt"
[ $? -eq 3 ] || fail "a table missing a tensor must exit 3"
grep -q "not in the calibration table" "$t/err.txt" || fail "the error must name the missing tensor: $(cat "$t/err.txt")"
"$ctpu" lower "$t/fm.top" --quantize INT8 --calibration-table "$t/fm.cali" -o "$t/fm.tpu" || fail lower
"$ctpu" refine "$t/fm.tpu" --calibration-table "$t/fm.cali" --dataset "$data" -o "$t/bad.cali" 2>"$t/err.txt"
[ $? -eq 3 ] || fail "a Tpu module must exit 3"
grep -q "not a Top module" "$t/err.txt" || fail "the error must say the model is not Top"
[ -e "$t/bad.cali" ] && fail "no output on error"
echo "refine: ok"
