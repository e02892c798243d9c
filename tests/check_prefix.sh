#!/usr/bin/env bash
# check_prefix.sh: every symbol a ctpu module library exports carries the ct_ prefix
# (STYLE.md "Prefixes name the module"); a helper used in one file is static instead. Names
# with a dot are the compiler's own (clone and resolver symbols of target_clones) and count
# as their function's; __wrap_<fn> are the linker's --wrap hooks of the allocation-failure
# build (common/allocfail.c), named by the linker. main and Check's entry points do not occur
# in a library.
# usage: check_prefix.sh ARCHIVE...
set -euo pipefail
bad=0
for a in "$@"; do
  while IFS= read -r s; do
    echo "$(basename "$a"): exported symbol $s lacks the ct_ prefix (make it static or name it ct_<module>_...)"
    bad=$((bad + 1))
  done < <(nm -g --defined-only "$a" | awk 'NF == 3 && $2 ~ /[TDBRCVWGS]/ { print $3 }' |
           grep -v -E '^(ct_|__wrap_|main$|[^.]*\.)' | sort -u)
done
((bad == 0)) || { echo "check_prefix: $bad exported symbol(s) without the ct_ prefix"; exit 1; }
echo "check_prefix: $# libraries, every exported symbol starts with ct_"
