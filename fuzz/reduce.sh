#!/usr/bin/env bash
# reduce.sh: shrinks a failing generated case to a small one with the same failure class, by
# delta debugging over ctpu_gengraph's knobs (the same seed throughout): fewest operator steps
# (--max-steps), one output (--keep-output, dead nodes dropped), smallest inputs (--max-hw),
# chip keys back to their defaults one by one (--chip-keep), optional pipeline flags dropped
# one by one (--flags-keep). Prints each accepted step and the final command; leaves the
# reduced case in OUT.
# usage: reduce.sh CTPU GENGRAPH SEED OUT [CLASS]   (CLASS: the class to keep; default: the
#        seed's own class; env REASON=REGEX: the reason must match too, e.g. to reduce a
#        REFUSED case with a suspicious message; TAG=1: the op of the first differing tensor
#        (run_case.sh's "[Op <- input]") must stay too; GEN_ARGS: more ctpu_gengraph arguments)
set -u
[ $# -ge 4 ] || { echo "usage: reduce.sh CTPU GENGRAPH SEED OUT [CLASS]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
CT=$1 GG=$2 SEED=$3 OUT=$4 WANT=${5:-}
TRY=$(mktemp -d); trap 'rm -rf "$TRY"' EXIT
declare -A K=([max-steps]=-1 [keep-output]=-1 [max-hw]=-1 [chip-keep]=4294967295 [flags-keep]=4294967295)
args() { local a=(--seed "$SEED" ${GEN_ARGS:-}); for k in max-steps keep-output max-hw; do [ "${K[$k]}" -ge 0 ] && a+=(--$k "${K[$k]}"); done
         for k in chip-keep flags-keep; do [ "${K[$k]}" != 4294967295 ] && a+=(--$k "${K[$k]}"); done; echo "${a[@]}"; }
# class_of: generates the case of the current knobs into $1 and prints its class.
class_of() { rm -rf "$1"; "$GG" $(args) -o "$1" >/dev/null 2>&1 || { echo GENERATOR; return; }
             "$HERE/run_case.sh" "$1" "$CT" | awk -F'\t' -v re="${REASON:-}" -v tag="${TAG:-}" '{t = ""; if (tag != "" && match($2, /\[[^]]*\]$/)) t = substr($2, RSTART)
               print ((re == "" || $2 ~ re) ? $1 : $1 "-OTHER") t}'; }
# digest of a generated case (a knob that changes nothing is accepted without a run)
digest() { cat "$1"/m.onnx "$1"/chip.json "$1"/*.pb "$1"/qtable.txt 2>/dev/null | md5sum | cut -c1-32
           grep -v '^#' "$1/case.sh" | md5sum | cut -c1-32; }
CUR=""
# try KEY VALUE: keeps the value when the class stays WANT.
try() { local old=${K[$1]} d; K[$1]=$2; rm -rf "$TRY/c"
        if "$GG" $(args) -o "$TRY/c" >/dev/null 2>&1 && [ "$(digest "$TRY/c")" = "$CUR" ]; then return 0; fi
        if [ "$(class_of "$TRY/c")" = "$WANT" ]; then echo "  $1 $2: $WANT"; CUR=$(digest "$TRY/c"); return 0; fi
        K[$1]=$old; return 1; }
first=$(class_of "$TRY/c"); CUR=$(digest "$TRY/c")
WANT=${WANT:-$first}
[ "$first" = "$WANT" ] || { echo "seed $SEED: class $first, not $WANT" >&2; exit 1; }
case "$WANT${REASON:+ reason}" in PASS|REFUSED|PASS\ \[*|REFUSED\ \[*) echo "seed $SEED: $WANT, nothing to reduce" >&2; exit 1;; esac
echo "seed $SEED: $WANT"
for s in 1 2 3 4 5 6 7 8 9; do try max-steps $s && break; done
for o in 0 1 2 3 4 5 6 7 8; do try keep-output $o && break; done
for h in 1 2 3 4 6 8; do try max-hw $h && break; done
for b in $(seq 0 14); do try chip-keep $(( K[chip-keep] & ~(1 << b) )); done
for b in $(seq 0 6); do try flags-keep $(( K[flags-keep] & ~(1 << b) )); done
class_of "$OUT" >/dev/null
echo "reduced: ctpu_gengraph $(args) -o DIR  ($WANT, $(cut -f5 "$OUT/meta.tsv") nodes)"
