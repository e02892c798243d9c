#!/usr/bin/env bash
# run_badinput.sh CTPU: runs ../shared/bad-inputs/run.sh (the bad-input reproducers: corrupt HDF5,
# overflowing ONNX attributes, outputs that must not stay behind) against CTPU. Exits 77
# (CTest: skipped) with a message when ../shared is absent.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runner=$root/../shared/bad-inputs/run.sh
if [ ! -f "$runner" ]; then
  echo "badinput: skipped: ../shared/bad-inputs is absent"
  exit 77
fi
exec bash "$runner" "$1"
