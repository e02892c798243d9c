#!/usr/bin/env bash
# run_regressions.sh: the fuzz_regressions CTest: runs every reduced case kept under ROOT
# (tests/data/fuzz/NAME/, made by fuzz/add_regression.sh) with run_case.sh; a case passes when
# its class is one of the words of NAME/expect (default: PASS REFUSED).
# usage: run_regressions.sh CTPU ROOT
HERE=$(cd "$(dirname "$0")" && pwd)
CT=$1 ROOT=$2 n=0 bad=0
for d in "$ROOT"/*/; do
  [ -f "$d/case.sh" ] || continue
  n=$((n+1)); name=$(basename "$d")
  want=$(cat "$d/expect" 2>/dev/null || echo "PASS REFUSED")
  res=$("$HERE/run_case.sh" "$d" "$CT"); cls=${res%%$'\t'*}
  if [[ " $want " == *" $cls "* ]]; then echo "ok $name: $cls"
  else bad=$((bad+1)); echo "FAIL $name: $res (expected one of: $want)"; fi
done
echo "fuzz_regressions: $n cases, $bad failed"
[ $bad -eq 0 ]
