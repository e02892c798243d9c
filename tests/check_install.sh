#!/usr/bin/env bash
# check_install.sh: `cmake --install BUILD --prefix P` gives a ctpu that runs from P/bin and
# the documentation in P/share/doc/ctpu (README.md and every page of docs/).
# usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
p=$(mktemp -d) && trap 'rm -rf "$p"' EXIT
cmake --install "$build" --prefix "$p" >/dev/null
bad=0
[ -x "$p/bin/ctpu" ] || { echo "check_install: $p/bin/ctpu missing"; bad=1; }
"$p/bin/ctpu" --help >/dev/null 2>&1 || { echo "check_install: the installed ctpu --help fails"; bad=1; }
for f in README.md $(cd "$src/docs" && find . -type f | sed 's|^\./||'); do
  [ -f "$p/share/doc/ctpu/$f" ] || { echo "check_install: share/doc/ctpu/$f missing"; bad=1; }
done
((bad == 0)) || exit 1
echo "check_install: bin/ctpu and $(find "$p/share/doc/ctpu" -type f | wc -l) documentation files"
