#!/usr/bin/env bash
# deps.sh: installs ctpu's build and test dependencies on Debian 12 (apt). Idempotent.
#   Also npm: Vega, Vega-Lite and vega-embed into .cache/npm, which the build embeds into
#   `ctpu report` (re-run cmake after the first install).
#   --fuzz  also clang-14 and its libFuzzer runtime (libclang-rt-14-dev) for fuzz/ (scripts/fuzz.sh)
set -euo pipefail
# protobuf-compiler: protoc decodes Perfetto traces in tests/test_trace.c; chromium renders
# `ctpu report`'s page headless in tests/test_report.c; nodejs/npm fetch its plotting library;
# parallel and slurm-wlm: ctpu sweep runs its points through GNU parallel, tests/run_sweep_slurm.sh
# on a private Slurm node
pkgs=(build-essential cmake pkg-config libopenblas-dev libhdf5-dev hdf5-tools check
      libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libonnx-dev libcjson-dev libjpeg-dev libpng-dev zlib1g-dev
      python3-h5py python3-numpy chromium parallel slurm-wlm)
command -v npm >/dev/null || pkgs+=(nodejs npm)
[ "${1:-}" = "--fuzz" ] && pkgs+=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# `ctpu report`'s plotting library (CMakeLists.txt embeds these files; not committed)
npmdir=$(cd "$(dirname "$0")/.." && pwd)/.cache/npm
if [ ! -f "$npmdir/node_modules/vega-embed/build/vega-embed.min.js" ]; then
  mkdir -p "$npmdir" && (cd "$npmdir" && npm install --ignore-scripts --no-audit --no-fund --silent \
    vega@6.4.0 vega-lite@6.5.0 vega-embed@7.3.0 >/dev/null)
fi
