#!/usr/bin/env bash
# run_miscompiles.sh CTPU: runs ../shared/miscompiles/run.sh (small graphs and Tpu IR files on
# which ctpu once computed the wrong thing or crashed: every case bit-exact, or a clean refusal)
# against CTPU. Exits 77 (CTest: skipped) with a message when ../shared is absent.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runner=$root/../shared/miscompiles/run.sh
if [ ! -f "$runner" ]; then
  echo "miscompiles: skipped: ../shared/miscompiles is absent"
  exit 77
fi
exec bash "$runner" "$1"
