#!/usr/bin/env bash
# deps.sh: installs ctpu's build and test dependencies on Debian 12 (apt). Idempotent.
#   --fuzz  also clang-14 and its libFuzzer runtime (libclang-rt-14-dev) for fuzz/ (scripts/fuzz.sh)
set -euo pipefail
# protobuf-compiler: protoc decodes Perfetto traces in tests/test_trace.c; parallel and slurm-wlm:
# ctpu sweep runs its points through GNU parallel, tests/run_sweep_slurm.sh on a private Slurm node
pkgs=(build-essential cmake pkg-config libopenblas-dev libhdf5-dev hdf5-tools check
      libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libonnx-dev libcjson-dev libjpeg-dev libpng-dev
      python3-h5py python3-numpy parallel slurm-wlm)
[ "${1:-}" = "--fuzz" ] && pkgs+=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
