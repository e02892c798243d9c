#!/usr/bin/env bash
# check_links.sh: the link side of test_layers. For every module library given as
# NAME=ARCHIVE, each symbol it uses but does not define must come from a module it may use
# (tests/layers.txt, transitively) or from outside ctpu (libc, OpenBLAS, ...); a symbol of any
# other module is an upward or sideways call and fails naming both modules and the symbol.
# usage: check_links.sh LAYERS.txt NAME=ARCHIVE...
set -euo pipefail
table=$1; shift
declare -A allow arch
while IFS= read -r line; do
  [[ $line =~ ^([a-z]+):(.*)$ ]] || continue
  allow[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]}"
done <"$table"
for a in "$@"; do arch[${a%%=*}]=${a#*=}; done
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
for m in "${!arch[@]}"; do # defined and undefined global symbols per module
  nm -g --defined-only "${arch[$m]}" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/$m.def"
  nm -g --undefined-only "${arch[$m]}" 2>/dev/null | awk '{ print $NF }' | sort -u | comm -23 - "$tmp/$m.def" >"$tmp/$m.und"
done
closure() { # modules m may use, transitively
  local todo=("$1") seen=" $1 " x y
  while ((${#todo[@]})); do
    x=${todo[0]} todo=("${todo[@]:1}")
    for y in ${allow[$x]:-}; do [[ $seen == *" $y "* ]] || { seen+="$y "; todo+=("$y"); }; done
  done
  echo "$seen"
}
bad=0
for m in "${!arch[@]}"; do
  ok=$(closure "$m")
  for x in "${!arch[@]}"; do
    [[ $ok == *" $x "* ]] && continue
    while IFS= read -r s; do
      echo "ct_$m uses $s of ct_$x: $m/ may not call $x/ (allowed: ${allow[$m]:-none})"
      bad=$((bad + 1))
    done < <(comm -12 "$tmp/$m.und" "$tmp/$x.def")
  done
done
((bad == 0)) || { echo "check_links: $bad symbol(s) break the layering"; exit 1; }
echo "check_links: ${#arch[@]} module libraries, every linked symbol follows the layers"
