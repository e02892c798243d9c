#!/usr/bin/env bash
# struct_renames.sh: rewrites include paths and path mentions of files moved by the module
# restructuring (the old → new pairs are in scripts/struct_renames.txt) in the given
# files, e.g. a branch's new tests after merging: scripts/struct_renames.sh tests/test_new.c
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
expr=$(grep -v "^#" "$here/struct_renames.txt" | awk '{print length($1), $1, $2}' | sort -rn |
  awk '{a=$2; gsub(/\./,"\\.",a); printf "s#\\b%s\\b#%s#g;", a, $3}')
sed -i "$expr" "$@"
