#!/usr/bin/env bash
# check_docs.sh ROOT: the references between the source tree and its docs resolve, and the
# docs stay reference pages (docs/dev.md "Docs"). Fails, naming file:line, when
#  1. a "docs/architecture.md §N" citation (every §N of a list "§3, §5") has no heading
#     "## §N ..." / "### §N ..." in docs/architecture.md;
#  2. a path to a Markdown file of this repository (docs/*.md, fuzz/README.md, README.md, ...)
#     or a relative link [..](X.md) inside docs/ names a file that does not exist;
#  3. docs/, README.md or fuzz/README.md narrate history: a date, an issue number, a
#     "session" or "sitting" of work.
# usage: check_docs.sh ROOT   (exit 0 all resolve, 1 a failure, 2 bad usage)
set -u
root=${1:?usage: check_docs.sh ROOT}
cd "$root" || exit 2
[ -f docs/architecture.md ] || { echo "docs/architecture.md: missing"; exit 1; }
fail=0
ex=(--exclude-dir='build*' --exclude-dir=.git --exclude-dir=node_modules --exclude-dir=docs_bad)

# 1. section citations: one grep over the tree, the sections checked in the shell
declare -A have
while read -r s; do have[$s]=1; done < <(sed -nE 's/^#{2,3} §([0-9]+(\.[0-9]+)?) .*/\1/p' docs/architecture.md)
re='docs/architecture\.md §[0-9]+(\.[0-9]+)?(,? (and )?§[0-9]+(\.[0-9]+)?)*'
n_refs=0
while IFS= read -r hit; do
  where=${hit%%:docs/architecture.md*} refs=${hit#"$where":}
  while [[ $refs =~ §([0-9]+(\.[0-9]+)?) ]]; do
    s=${BASH_REMATCH[1]} refs=${refs#*"${BASH_REMATCH[0]}"} n_refs=$((n_refs + 1))
    [ -n "${have[$s]:-}" ] || { echo "${where#./}: cites docs/architecture.md §$s, which has no heading \"## §$s\""; fail=1; }
  done
done < <(grep -rnoIE "${ex[@]}" "$re" .)
if grep -rnIH "${ex[@]}" 'ARCHITECTURE\.md' .; then
  echo "the lines above cite a file the tree does not have: the architecture is docs/architecture.md"
  fail=1
fi

# 2. Markdown files named by path, and relative links between the docs
while IFS= read -r hit; do
  path=${hit##*:}
  [ -f "$path" ] || { where=${hit%:*}; echo "${where#./}: names $path, which does not exist"; fail=1; }
done < <(grep -rnoIP "${ex[@]}" '(?<![A-Za-z0-9_./-])(?:(?:docs|fuzz|bench|scripts|tests|tools)/[A-Za-z0-9_-]+\.md|README\.md)' .)
while IFS= read -r hit; do
  target=${hit##*](} target=${target%)} target=${target%%#*}
  [ -f "docs/$target" ] || { echo "${hit%%](*}: link to $target, which does not exist"; fail=1; }
done < <(grep -noE '\]\([A-Za-z0-9_./-]+\.md(#[^)]*)?\)' docs/*.md)

# 3. no history in the reference pages
hist='20[0-9]{2}-[01][0-9]-[0-3][0-9]|\b[Ss]ession\b|\b[Ss]itting\b|\b[Ii]ssue [0-9]+|\b[Ii]ssues? #?[0-9]+'
if grep -nHE "$hist" docs/*.md README.md fuzz/README.md 2>/dev/null; then
  echo "the lines above narrate history (dates, sessions, issue numbers): docs/ is reference"
  fail=1
fi

[ "$fail" = 0 ] && echo "check_docs: $n_refs section citations of docs/architecture.md resolve; Markdown paths and links resolve; no history lines"
exit "$fail"
