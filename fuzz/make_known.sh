#!/usr/bin/env bash
# make_known.sh: writes known_failures.txt rows (`seed class  # dtype families: reason`) for the
# failing seeds FIRST .. LAST of a campaign's results.tsv (fuzz/campaign.sh), the list the
# fuzz_graphs CTest accepts. The ORT and TIMEOUT classes are left out (the CTest runs without
# onnxruntime; a timeout depends on the machine's load).
# usage: make_known.sh results.tsv FIRST LAST > fuzz/known_failures.txt
echo "# seed class  # dtype families: reason (fuzz/make_known.sh; fuzz/ctest_graphs.sh reads it)"
awk -F'\t' -v a="$2" -v b="$3" 'NR > 1 && $1 >= a && $1 <= b && $6 !~ /^(PASS|REFUSED|ORT|TIMEOUT)$/ {
  r = $7; gsub(/[ \t]+/, " ", r); printf "%s %s  # %s %s: %s\n", $1, $6, $2, $4, substr(r, 1, 160) }' "$1"
