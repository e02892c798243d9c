#!/usr/bin/env bash
# campaign.sh: a fuzz campaign: generates and runs the cases of seeds FIRST .. FIRST+COUNT-1 with
# ctpu_gengraph + run_case.sh, JOBS at a time (GNU parallel if present, else xargs -P), writes
# OUT/results.tsv (seed, dtype, chip, families, nodes, class, reason, min cosine, ORT max error)
# and OUT/summary.txt (by class, by family, refusals by reason); failing cases stay in OUT/cases/.
# usage: campaign.sh CTPU GENGRAPH FIRST COUNT OUT [JOBS]     (env as run_case.sh; GEN_ARGS:
#        more ctpu_gengraph arguments, e.g. "--avoid-known 1")
set -u
[ $# -ge 5 ] || { echo "usage: campaign.sh CTPU GENGRAPH FIRST COUNT OUT [JOBS]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
CT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
GG=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
FIRST=$3 COUNT=$4 OUT=$5 JOBS=${6:-2}
mkdir -p "$OUT/rows" "$OUT/cases"
OUT=$(cd "$OUT" && pwd)
export CT GG OUT HERE GEN_ARGS
one() {
  local s=$1 d=$OUT/cases/$1
  [ -s "$OUT/rows/$s.tsv" ] && return 0
  rm -rf "$d"
  if ! "$GG" --seed "$s" ${GEN_ARGS:-} -o "$d" 2>"$OUT/rows/$s.err"; then
    printf '%s\t-\t-\t-\t-\tGENERATOR\t%s\t-\t-\n' "$s" "$(head -1 "$OUT/rows/$s.err")" >"$OUT/rows/$s.tsv"; return 0
  fi
  local res meta
  res=$("$HERE/run_case.sh" "$d" "$CT")
  meta=$(cat "$d/meta.tsv")
  printf '%s\t%s\n' "$meta" "$res" | awk -F'\t' -v OFS='\t' '{print $1,$2,$3,$4,$5,$6,$7,$8,$9}' >"$OUT/rows/$s.tsv"
  case "$res" in PASS*|REFUSED*) rm -rf "$d";; esac
  rm -f "$OUT/rows/$s.err"
}
export -f one
if command -v parallel >/dev/null; then
  seq "$FIRST" $((FIRST + COUNT - 1)) | parallel -j "$JOBS" one
else
  seq "$FIRST" $((FIRST + COUNT - 1)) | xargs -P "$JOBS" -I{} bash -c 'one {}'
fi
{ printf 'seed\tdtype\tchip\tfamilies\tnodes\tclass\treason\tmin_cos\tort_max\n'
  for s in $(seq "$FIRST" $((FIRST + COUNT - 1))); do cat "$OUT/rows/$s.tsv" 2>/dev/null; done; } >"$OUT/results.tsv"
"$HERE/summary.sh" "$OUT/results.tsv" | tee "$OUT/summary.txt"
