#!/usr/bin/env bash
# run_case.sh: runs one generated case (ctpu_gengraph's DIR/case.sh) against a ctpu binary in a
# scratch copy and prints one line: CLASS<TAB>reason<TAB>min cosine (Tpu vs Top)<TAB>ORT max
# error. Classes (fuzz/README.md): PASS, REFUSED, MISMATCH, RACE, PLAN_CODEGEN, CRASH, INTERNAL,
# TIMEOUT, USAGE, BAD_REFUSAL, COSINE, ORT.
# usage: run_case.sh DIR CTPU      (env: CTPU_ORT_DIR, CTPU_TIMEOUT, FUZZ_KEEP=1 keeps the copy)
DIR=$(cd "$1" && pwd) || exit 2
CT=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
TMO=${CTPU_TIMEOUT:-60}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Cosine floors of the Tpu reference against the Top (float) inference, per lowering mode.
declare -A FLOOR=([INT8]=${FLOOR_INT8:-0.90} [BF16]=${FLOOR_BF16:-0.998} [F16]=${FLOOR_F16:-0.999} [F32]=${FLOOR_F32:-0.99999})
# A deploy refusal with one of these messages is a plan that fits failing in codegen.
PLAN_RE='no LMEM left|insn [0-9]+: |has no LMEM buffer|does not fit in the group|overlaps .* in GMEM|GMEM 0x[0-9a-f]+ \+ [0-9]+ bytes exceeds|is defined twice'
W=$(mktemp -d); trap '[ -n "$FUZZ_KEEP" ] && echo "kept $W" >&2 || rm -rf "$W"' EXIT
cp -r "$DIR/." "$W/"; cd "$W" || exit 2
C=$CT; cls=PASS; why=""; mincos=-; ortmax=-

one_line() { grep -v '^\s*$' "$1" | grep -m1 -E "$2" || grep -v '^\s*$' "$1" | head -1; }
# triage: " [Op <- input]" for the Top op that produced the first differing tensor ("<- input"
# when it reads a graph input directly), to sort mismatches without reducing them.
triage() {
  local t op line src
  t=$(cat err.log out.log | grep -m1 -oE 'first: "[^"]+"' | cut -d'"' -f2)
  [ -z "$t" ] && t=$(cat err.log out.log | grep -m1 -oE 'output "[^"]+" differs' | cut -d'"' -f2)
  [ -n "$t" ] && [ -f m.top ] || return 0
  line=$(grep -m1 -E "(-> |loc\\()\"$t\"\\)" m.top) || return 0
  op=$(printf '%s' "$line" | grep -oE 'top\.[A-Za-z]+' | head -1 | cut -c5-)
  src=""
  for v in $(printf '%s' "$line" | sed 's/.*= top\.[A-Za-z]*(//; s/).*//' | grep -oE '%[0-9]+'); do
    grep -qE "^ *$v = top\.Input" m.top && src=" <- input"
  done
  printf ' [%s%s]' "$op" "$src"
}
# ok CMD...: runs one ctpu command; a failure sets cls/why and stops the case.
ok() {
  local step=$2 rc; timeout "$TMO" "$@" >out.log 2>err.log; rc=$?
  if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" err.log; then
    cls=CRASH; why="$step: $(one_line err.log 'runtime error|ERROR: AddressSanitizer|SUMMARY')"
  elif [ $rc -eq 124 ]; then cls=TIMEOUT; why="$step: over ${TMO}s"
  elif [ $rc -ge 128 ]; then cls=CRASH; why="$step: signal $((rc-128))"
  elif [ $rc -eq 5 ]; then cls=INTERNAL; why="$step: $(one_line err.log .)"
  elif [ $rc -eq 2 ]; then cls=USAGE; why="$step: $(one_line err.log .)"
  elif [ $rc -eq 3 ] || [ $rc -eq 4 ]; then
    why="$step: $(one_line err.log .)"
    if [ ! -s err.log ] || [ -n "$(find . -name '*.tmp' -o -name '.ctpu-*' | head -1)" ]; then cls=BAD_REFUSAL
    elif [ "$step" = deploy ] && grep -qE "$PLAN_RE" err.log; then cls=PLAN_CODEGEN
    else cls=REFUSED; fi
  elif [ $rc -eq 1 ]; then
    if grep -qiE "race|deadlock" err.log out.log; then cls=RACE; why="$step: $(one_line err.log 'race|deadlock')"
    else cls=MISMATCH; why="$step: $(cat err.log out.log | grep -m1 -E 'first:' || cat err.log out.log | grep -m1 -E 'differ' || one_line err.log .)$(triage)"; fi
  elif [ $rc -ne 0 ]; then cls=CRASH; why="$step: exit $rc"
  fi
  [ $rc -eq 0 ] && return 0
  why=$(printf '%s' "$why" | tr '\t\n' '  ' | cut -c1-300)
  printf '%s\t%s\t%s\t%s\n' "$cls" "$why" "$mincos" "$ortmax"; exit 0
}
. ./case.sh

# Oracle 1: the Tpu reference (dequantized) against the Top float inference, cosine per output.
mode=$(grep -oE -- '--quantize [A-Z0-9]+' case.sh | head -1 | cut -d' ' -f2)
ins=$(grep -oE -- '--test-input.*' case.sh | head -1 | cut -d' ' -f2-)
# A Top output that is all zeros (x - x, max(x, x) - x) has no cosine: its Tpu result is judged by
# max |Tpu| <= ZERO_REL * M instead, M the largest |value| of any Top tensor (the operands the
# cancelling op read) and ZERO_REL four unit roundoffs of the mode (INT8: two steps of 1/127).
declare -A ZERO_REL=([INT8]=0.0157 [BF16]=0.0157 [F16]=0.00196 [F32]=2.4e-7)
# max_abs_h5 FILE: the largest |value| of the datasets of FILE (not their attributes).
max_abs_h5() {
  h5dump -w 0 -y "$1" 2>/dev/null | awk '/^   DATASET /{ds=1} /^      ATTRIBUTE /{ds=0} /^      DATA \{/{d=ds; next}
    d && /^      \}/{d=0} d{n=split($0, v, /[ ,]+/); for (i = 1; i <= n; i++) if (v[i] != "") {x = v[i] + 0; if (x < 0) x = -x; if (x > m) m = x}}
    END{printf "%.9g\n", m + 0}'
}
if "$C" infer m.top --input $ins -o top.h5 --dump-all topall.h5 >/dev/null 2>err.log &&
   "$C" infer m.tpu --input $ins -o tpu.h5 --dequant >/dev/null 2>>err.log; then
  "$C" compare top.h5 tpu.h5 --tolerance 0,-1e30 >cmp.log 2>&1
  # rows: name shape dtype verdict cosine euclid sqnr max_abs result; the lowest cosine (nan first);
  # an all-zero Top output (cosine 0, SQNR -inf) within the bound counts as cosine 1
  zb=0
  if awk '($NF=="PASS"||$NF=="FAIL") && $5 == 0 && $7 == "-inf"{f=1} END{exit !f}' cmp.log; then
    zb=$(awk -v m="$(max_abs_h5 topall.h5)" -v r="${ZERO_REL[$mode]}" 'BEGIN{printf "%.9g", m * r}')
  fi
  worst=$(awk -v zb="$zb" '$NF=="PASS"||$NF=="FAIL"{c=$5; if (c ~ /nan/) c=-2;
    if (c == 0 && $7 == "-inf" && $8 + 0 <= zb + 0) c = 1; print c, $1}' cmp.log | sort -g | head -1)
  mincos=${worst%% *}; mincos=${mincos:--}
  if [ "$mincos" != - ] && awk -v c="$mincos" -v f="${FLOOR[$mode]}" 'BEGIN{exit !(c < f)}'; then
    cls=COSINE; why="cosine $mincos < ${FLOOR[$mode]} ($mode): ${worst#* }"
  fi
else
  cls=INTERNAL; why="infer: $(one_line err.log .)"
fi

# Oracle 2: the Top float inference against onnxruntime-node (rtol 1e-3, atol 1e-5 per tensor:
# max |a - b| <= atol + rtol * max |b|), when CTPU_ORT_DIR holds onnxruntime-node.
if [ "$cls" = PASS ] && [ -n "$CTPU_ORT_DIR" ] && [ -d "$CTPU_ORT_DIR/node_modules/onnxruntime-node" ] && command -v node >/dev/null; then
  if NODE_PATH="$CTPU_ORT_DIR/node_modules" timeout "$TMO" node "$HERE/ort_run.js" m.onnx ort $ins >ort.log 2>&1; then
    ortmax=0
    for f in ort/*.pb; do
      "$C" compare "$f" top.h5 --tolerance 0,-1e30 >cmp2.log 2>&1
      row=$(awk '$NF=="PASS"||$NF=="FAIL"' cmp2.log | head -1)
      [ -z "$row" ] && { cls=ORT; why="$(basename "$f" .pb): not compared: $(head -1 cmp2.log)"; break; }
      ref=$(head -1 "$f.max")
      bad=$(echo "$row" | awk -v r="$ref" '{d=$8; print (d ~ /nan/ || d > 1e-5 + 1e-3 * r) ? d : ""}')
      ortmax=$(echo "$row" | awk -v m="$ortmax" '{print ($8 > m) ? $8 : m}')
      [ -n "$bad" ] && { cls=ORT; why="$(basename "$f" .pb): max abs diff $bad > 1e-5 + 1e-3 * $ref"; break; }
    done
  else
    why="ort: $(grep -m1 -iE 'error' ort.log | cut -c1-200)"; ortmax=skip
  fi
fi
printf '%s\t%s\t%s\t%s\n' "$cls" "$why" "$mincos" "$ortmax"
