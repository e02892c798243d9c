#!/usr/bin/env bash
# run_out_is_input.sh CTPU: every command that writes files refuses an output that is one of
# the files it reads (common/outset.h): for each writing command, -o (and its other output
# options) equal to each of its inputs — the model and its weights file (X.top.h5, or the file
# the module names), tables, chip, input files, data set samples — and an input that only the
# output's derived file (OUT.h5 next to OUT, OUT.groups.csv) would overwrite, spelled directly,
# through "dir/../" and through a symbolic link. Each case must exit 2 and leave every file of
# the folder byte for byte as it was, with no file added. Also: every command's --help, and
# ctpu --version / -V. Uses fmnist-rescnn from ../shared; exits 77 without it.
set -uo pipefail
NAME=cli_out_is_input
# shellcheck source=tests/fmnist_setup.sh
source "$(dirname "$0")/fmnist_setup.sh"
ctpu=$(readlink -f "$ctpu")
w=$t/w orig=$t/orig
mkdir -p "$w/data" "$w/sub"
cd "$w" || fail "cd"
# the inputs: ONNX model, Top and Tpu modules with their weights, a module naming its weights
# file otherwise, a calibration table, a quantize table, a chip, a data set folder and a list,
# an input tensor, a reference output, a program and its assembly
cp "$model" m.onnx
cp "$sh/models/fmnist-rescnn/test_data_set_0/input_0.pb" x.pb
cp x.pb data/a.pb && cp x.pb data/b.pb && printf 'data/a.pb\ndata/b.pb\n' > list.txt
"$ctpu" transform m.onnx -o m.top >/dev/null || fail transform
"$ctpu" calibrate m.top --dataset data --method minmax -o m.cali 2>/dev/null || fail calibrate
"$ctpu" lower m.top --quantize INT8 --calibration-table m.cali -o m.tpu || fail lower
"$ctpu" chip --dump > chip.json || fail chip
"$ctpu" deploy m.tpu -o m.ctpu 2>/dev/null || fail deploy
"$ctpu" disasm m.ctpu -o m.s || fail disasm
"$ctpu" infer m.top --input x.pb -o y.h5 >/dev/null || fail infer
grep -m1 'top.Conv' m.top | sed 's/.*loc("\([^"]*\)".*/\1 BF16/' > q.txt
sed 's/weights = "m.top.h5"/weights = "w.h5"/' m.top > n.top && cp m.top.h5 w.h5
grep -q 'weights = "w.h5"' n.top || fail "n.top names no w.h5"
mkdir run && "$ctpu" sim m.ctpu --input x.pb -o run/y.h5 --summary run/s.json --report run/l.csv || fail sim
cp m.cali cal.h5 && cp chip.json c.groups.csv && cp x.pb k.h5
ln -s m.top link.top
printf '{"models": [{"path": "m.tpu", "test_input": "x.pb"}], "chip": "chip.json"}\n' > s.json
rm -rf "$orig" && cp -a "$w" "$orig"

cases=0 bad=0
# refuse NAME ARGS...: ctpu ARGS must exit 2 and leave the folder as it was
refuse() {
  local name=$1
  shift
  "$ctpu" "$@" > "$t/out.txt" 2>&1
  local rc=$? why=""
  [ $rc -eq 2 ] || why="exit $rc, not 2"
  local changes
  changes=$(diff -rq --no-dereference "$orig" "$w" 2>&1 | head -3)
  [ -z "$changes" ] || why="$why; changed: $changes"
  cases=$((cases + 1))
  if [ -n "$why" ]; then
    bad=$((bad + 1))
    echo "FAIL  $name: ${why#; } ($(head -c 200 "$t/out.txt"))"
    cd "$t" && rm -rf "$w" && cp -a "$orig" "$w" && cd "$w" || exit 1
  fi
}

for f in m.onnx; do refuse "transform -o $f" transform m.onnx -o $f; done
refuse "transform -o a --const-input" transform m.onnx --const-input x.pb -o x.pb
refuse "transform OUT.h5 is an input" transform m.onnx --const-input k.h5 -o k
for f in m.top m.top.h5 sub/../m.top link.top; do refuse "opt -o $f" opt m.top -o $f; done
refuse "opt OUT.h5 is the weights file the module names" opt n.top -o w
low=(lower m.top --quantize INT8 --calibration-table m.cali --quantize-table q.txt --chip chip.json)
for f in m.top m.top.h5 m.cali q.txt chip.json ./sub/../m.top.h5 link.top; do refuse "lower -o $f" "${low[@]}" -o $f; done
refuse "lower OUT.h5 is an input" lower m.top --quantize INT8 --calibration-table cal.h5 -o cal
refuse "lower OUT.h5 is the weights file the module names" lower n.top --quantize BF16 -o w
refuse "lower -o the named weights file" lower n.top --quantize BF16 -o w.h5
for f in m.top m.top.h5 x.pb; do refuse "infer -o $f" infer m.top --input x.pb -o $f; done
refuse "infer --dump-all input" infer m.top --input x.pb -o o.h5 --dump-all x.pb
refuse "infer -o the named weights file" infer n.top --input x.pb -o w.h5
refuse "infer -o = --dump-all" infer m.top --input x.pb -o o.h5 --dump-all ./o.h5
for f in m.top m.top.h5 data/a.pb data/b.pb data; do
  refuse "calibrate -o $f" calibrate m.top --dataset data --method minmax -o $f
done
refuse "calibrate -o list" calibrate m.top --dataset list.txt --method minmax -o list.txt
refuse "calibrate -o a file of the list" calibrate m.top --dataset list.txt --method minmax -o data/b.pb
for f in m.top m.top.h5 m.cali data/a.pb; do
  refuse "qtable -o $f" qtable m.top --calibration-table m.cali --dataset data --input-num 1 -o $f
done
for f in m.top m.top.h5 m.cali q.txt data/b.pb; do
  refuse "refine -o $f" refine m.top --calibration-table m.cali --quantize-table q.txt --dataset data --input-num 1 -o $f
done
for f in m.s chip.json; do refuse "asm -o $f" asm m.s --chip chip.json -o $f; done
for f in m.ctpu chip.json; do refuse "disasm -o $f" disasm m.ctpu --chip chip.json -o $f; done
dep=(deploy m.tpu --chip chip.json --test-input x.pb --test-reference y.h5)
for f in m.tpu m.tpu.h5 chip.json x.pb y.h5; do refuse "deploy -o $f" "${dep[@]}" -o $f; done
refuse "deploy --mxu-report input" deploy m.tpu -o p.ctpu --mxu-report m.tpu.h5
refuse "deploy OUT.groups.csv is an input" deploy m.tpu --chip c.groups.csv -o c
refuse "deploy -o the table" deploy m.top --quantize INT8 --calibration-table m.cali -o m.cali
refuse "deploy --summary input" "${dep[@]}" -o p.ctpu --summary chip.json
refuse "deploy --report input" "${dep[@]}" -o p.ctpu --report x.pb
for f in s.json m.tpu data; do refuse "sweep -o $f" sweep s.json -o $f; done
for f in m.tpu m.tpu.h5 chip.json; do refuse "plan -o $f" plan m.tpu --chip chip.json -o $f; done
for f in m.ctpu x.pb chip.json m.tpu m.tpu.h5; do refuse "sim -o $f" sim m.ctpu --chip chip.json --model m.tpu --input x.pb -o $f; done
for o in --dump-all --trace --report --summary; do refuse "sim $o input" sim m.ctpu --input x.pb -o o.h5 $o x.pb; done
refuse "sim -o = --trace" sim m.ctpu --input x.pb -o o.h5 --trace o.h5
for f in run/s.json run/l.csv run/../run/s.json chip.json; do refuse "report -o $f" report run --chip chip.json -o $f; done

# every command's help, and the version
for c in $("$ctpu" --help | awk '/^commands:/ {on = 1; next} on && NF {print $1}'); do
  "$ctpu" "$c" --help > "$t/help.txt" 2>&1 && grep -q "^usage: ctpu $c" "$t/help.txt" || { bad=$((bad + 1)); echo "FAIL  $c --help"; }
done
v=$("$ctpu" version)
[ "$("$ctpu" --version)" = "$v" ] && [ "$("$ctpu" -V)" = "$v" ] || { bad=$((bad + 1)); echo "FAIL  --version / -V"; }
echo "$NAME: $((cases - bad)) of $cases refusals exit 2 and change nothing"
[ $bad -eq 0 ]
