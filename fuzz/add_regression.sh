#!/usr/bin/env bash
# add_regression.sh: keeps a (reduced) generated case as a regression test: copies its small
# files into tests/data/fuzz/NAME/ (refusing files over 64 KiB), with NAME/expect holding the
# classes the case may have (default "PASS REFUSED": fixed, or refused cleanly); the
# fuzz_regressions CTest runs every folder there.
# usage: add_regression.sh CASE_DIR NAME [CLASS...]
set -eu
[ $# -ge 2 ] || { echo "usage: add_regression.sh CASE_DIR NAME [CLASS...]" >&2; exit 2; }
SRC=$1 NAME=$2; shift 2
DST=$(cd "$(dirname "$0")/.." && pwd)/tests/data/fuzz/$NAME
[ -e "$DST" ] && { echo "add_regression: $DST exists" >&2; exit 2; }
big=$(find "$SRC" -type f -size +64k | head -1)
[ -z "$big" ] || { echo "add_regression: $big is over 64 KiB (reduce the case first)" >&2; exit 3; }
mkdir -p "$DST/cal"
cp "$SRC"/case.sh "$SRC"/m.onnx "$SRC"/chip.json "$SRC"/meta.tsv "$SRC"/*.pb "$DST/"
cp "$SRC"/cal/* "$DST/cal/"
[ -f "$SRC/qtable.txt" ] && cp "$SRC/qtable.txt" "$DST/"
echo "${*:-PASS REFUSED}" >"$DST/expect"
echo "added $DST ($(du -sh "$DST" | cut -f1))"
