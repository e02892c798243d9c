#!/usr/bin/env bash
# check_inline.sh: the static inline functions of ctpu's headers (the shared element formulas
# of quant/float_fn.h and quant/quant.h, the tensor accessors of ops/tpu_util.h, ...) inline
# into every caller of an optimized build. A call that GCC does not inline leaves an out-of-line
# copy in the object: a local text symbol NAME, or one of its parts NAME.part.0 / .isra.0 /
# .constprop.0; no module library may hold one. The usual cause, a `#pragma GCC optimize` or an
# optimize attribute around the callers (GCC does not inline a function into a caller compiled
# with other optimize options), is reported in the sources as well: compile flags belong in
# CMake, for a whole target or source file.
# usage: check_inline.sh SRC_ROOT ARCHIVE...   (headers and sources under SRC_ROOT, but build*/,
# .git/ and tests/data/, which holds this check's planted violation)
set -euo pipefail
root=$1
shift
bad=0
files() {
  find "$root" \( -path "$root/build*" -o -path "$root/.git" -o -path '*/tests/data' \) -prune -o \
    -type f -name "$1" -print | sort
}
while IFS= read -r hit; do
  echo "${hit#"$root"/}: per-function optimize options stop GCC from inlining the headers' static inline functions (set flags in CMake)"
  bad=$((bad + 1))
done < <(files '*.[ch]' | xargs grep -nE '#[[:space:]]*pragma[[:space:]]+GCC[[:space:]]+optimize|__attribute__[[:space:]]*\(\([[:space:]]*(__)?optimize' || true)

# NAME<TAB>header of every static inline function defined in a header
declare -A where=()
while IFS=$'\t' read -r name hdr; do where[$name]=$hdr; done < <(
  files '*.h' | while IFS= read -r h; do
    sed -nE 's/^[[:space:]]*static inline [^(]*[ *]([A-Za-z_][A-Za-z_0-9]*)\(.*/\1/p' "$h" |
      sed "s|\$|	${h#"$root"/}|"
  done)
((${#where[@]} > 0)) || { echo "check_inline: no static inline function found in the headers under $root"; exit 1; }

names=$(printf '%s\n' "${!where[@]}")
for a in "$@"; do
  while read -r member sym base; do
    echo "$(basename "$a")(${member}): out-of-line copy $sym of ${where[$base]}'s static inline $base: a caller does not inline it"
    bad=$((bad + 1))
  done < <(nm -A "$a" 2>/dev/null | awk -v names="$names" '
    BEGIN { n = split(names, l, "\n"); for (i = 1; i <= n; i++) want[l[i]] = 1 }
    $(NF - 1) ~ /^[tT]$/ { base = $NF; sub(/[.].*/, "", base); if (base in want) {
      split($1, f, ":"); print f[2], $NF, base } }')
done
((bad == 0)) || { echo "check_inline: $bad finding(s)"; exit 1; }
echo "check_inline: ${#where[@]} static inline functions of the headers, none out of line in $# libraries"
