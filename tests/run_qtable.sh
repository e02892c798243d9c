#!/usr/bin/env bash
# run_qtable.sh CTPU: `ctpu qtable` on fmnist-rescnn (docs/qtable.md). Calibrates by min/max
# on 50 Fashion-MNIST test images, asks for an output cosine between the plain INT8 one and 1,
# then checks independently (ctpu lower --quantize-table + infer + compare on other images)
# that the table reaches it, that a zero budget writes an empty table, and that bad options
# fail with the documented exit codes and leave no file. Exits 77 without ../shared.
set -uo pipefail
NAME=qtable
# shellcheck source=tests/fmnist_setup.sh
source "$(dirname "$0")/fmnist_setup.sh"
"$ctpu" calibrate "$t/fm.top" --dataset "$data" --input-num 50 --method minmax -o "$t/fm.cali" || fail calibrate
# plain INT8 cosine, then a target halfway between it and 1
"$ctpu" qtable "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --input-num 8 \
  --expected-cos 0.5 -o "$t/none.q" > "$t/none.txt" || fail "qtable 0.5"
c0=$(awk '/^int8 cosine/ {print $3}' "$t/none.txt")
[ -n "$c0" ] || fail "no int8 cosine line"
grep -qv '^#' "$t/none.q" && fail "a target below the INT8 cosine must give an empty table"
target=$(awk -v c="$c0" 'BEGIN {printf "%.6f", c + (1 - c) * 0.5}')
"$ctpu" qtable "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --input-num 8 \
  --expected-cos "$target" -o "$t/fm.q" > "$t/out.txt" || fail "qtable $target"
cat "$t/out.txt"
rows=$(grep -vc '^#' "$t/fm.q")
[ "$rows" -ge 1 ] || fail "no float layer chosen for target $target (int8 $c0)"
grep -q "target not reached" "$t/out.txt" && fail "target $target not reached"
grep -vq ' BF16$' <(grep -v '^#' "$t/fm.q") && fail "rows must all be BF16"
# independent check on the test input (not one of the search samples): the mixed model's
# output is at least as close to float as the plain INT8 one
in=$sh/models/fmnist-rescnn/test_data_set_0/input_0.pb
"$ctpu" lower "$t/fm.top" --quantize INT8 --calibration-table "$t/fm.cali" -o "$t/i8.tpu" || fail lower
"$ctpu" lower "$t/fm.top" --quantize INT8 --calibration-table "$t/fm.cali" --quantize-table "$t/fm.q" -o "$t/mix.tpu" || fail "lower mix"
"$ctpu" infer "$t/fm.top" --input "$in" -o "$t/f.h5" >/dev/null || fail infer
"$ctpu" infer "$t/i8.tpu" --input "$in" -o "$t/i8.h5" >/dev/null || fail "infer i8"
"$ctpu" infer "$t/mix.tpu" --input "$in" -o "$t/mix.h5" >/dev/null || fail "infer mix"
# the output row: name shape dtype verdict cosine euclid sqnr_db ...; SQNR is the finer measure
ci=$("$ctpu" compare "$t/f.h5" "$t/i8.h5" --tolerance 0,0 | awk '$1 == "output" {print $7}')
cm=$("$ctpu" compare "$t/f.h5" "$t/mix.h5" --tolerance 0,0 | awk '$1 == "output" {print $7}')
echo "test input: SQNR int8 $ci dB, mixed $cm dB"
[ -n "$ci" ] && [ -n "$cm" ] || fail "no output row in ctpu compare"
awk -v a="$ci" -v b="$cm" 'BEGIN {exit !(b + 0.5 >= a)}' || fail "mixed ($cm dB) worse than INT8 ($ci dB)"
# --probe: the worst layers re-ranked by their output cosine alone in float; target reached too
"$ctpu" qtable "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --input-num 4 --probe 3 \
  --expected-cos "$target" -o "$t/probe.q" > "$t/probe.txt" || fail "qtable --probe"
grep -q "^probed 3 layers" "$t/probe.txt" || fail "--probe 3 must probe 3 layers"
grep -v '^#' "$t/probe.q" | grep -q . || fail "--probe: no float layer chosen"
# zero budget: empty table, target not reached
"$ctpu" qtable "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --input-num 2 \
  --expected-cos 1 --max-float-layers 0 -o "$t/zero.q" > "$t/zero.txt" || fail "zero budget"
grep -q "target not reached" "$t/zero.txt" || fail "zero budget must report the target not reached"
grep -qv '^#' "$t/zero.q" && fail "zero budget must write no row"
# bad usage (2) and bad input (3): no output left
"$ctpu" qtable "$t/fm.top" --calibration-table "$t/fm.cali" --dataset "$data" --float-mode INT4 -o "$t/bad.q" 2>/dev/null
[ $? -eq 2 ] || fail "--float-mode INT4 must exit 2"
"$ctpu" qtable "$t/fm.top" --calibration-table "$t/nope.cali" --dataset "$data" -o "$t/bad.q" 2>"$t/err.txt"
[ $? -eq 3 ] || fail "a missing table must exit 3"
grep -q nope.cali "$t/err.txt" || fail "the error must name the table"
[ -e "$t/bad.q" ] && fail "no output on error"
echo "qtable: ok"
