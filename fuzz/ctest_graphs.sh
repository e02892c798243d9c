#!/usr/bin/env bash
# ctest_graphs.sh: the fuzz_graphs CTest: runs the generated cases of seeds FIRST .. FIRST+COUNT-1
# (fuzz/campaign.sh, FUZZ_JOBS at a time, default nproc) and fails on any failure class (MISMATCH,
# RACE, PLAN_CODEGEN, CRASH, INTERNAL, TIMEOUT, USAGE, BAD_REFUSAL, COSINE, ORT, GENERATOR) that
# KNOWN (fuzz/known_failures.txt: `seed class  # note` rows) does not list for that seed with
# that class. A listed seed that now passes or is refused cleanly is reported, not failed, so
# the list only has to shrink as fixes land.
# usage: ctest_graphs.sh CTPU GENGRAPH FIRST COUNT KNOWN OUT
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CT=$1 GG=$2 FIRST=$3 COUNT=$4 KNOWN=$5 OUT=$6
rm -rf "$OUT"; mkdir -p "$OUT"
"$HERE/campaign.sh" "$CT" "$GG" "$FIRST" "$COUNT" "$OUT" "${FUZZ_JOBS:-$(nproc)}" >/dev/null || exit 1
declare -A known
while read -r s c _; do [ -n "${s:-}" ] && [ "${s:0:1}" != "#" ] && known[$s]=$c; done <"$KNOWN"
bad=0 nk=0 fixed=0
while IFS=$'\t' read -r seed dtype chip fams nodes cls why _; do
  [ "$seed" = seed ] && continue
  case "$cls" in
    PASS|REFUSED)
      if [ -n "${known[$seed]:-}" ]; then fixed=$((fixed+1)); echo "fixed: seed $seed is $cls now (listed as ${known[$seed]}): remove it from $(basename "$KNOWN")"; fi ;;
    *)
      if [ "${known[$seed]:-}" = "$cls" ]; then nk=$((nk+1))
      else bad=$((bad+1)); echo "FAIL seed $seed: $cls ($dtype; $fams): $why"
           echo "    reproduce: $GG --seed $seed -o /tmp/c$seed && $HERE/run_case.sh /tmp/c$seed $CT"; fi ;;
  esac
done <"$OUT/results.tsv"
n=$(($(wc -l <"$OUT/results.tsv") - 1))
echo "fuzz_graphs: $n cases: $(cut -f6 "$OUT/results.tsv" | tail -n +2 | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')$nk known failures, $fixed fixed, $bad new failures"
[ "$n" -eq "$COUNT" ] && [ $bad -eq 0 ]
